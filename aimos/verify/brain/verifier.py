"""The in-database verifier: SQL with the writer's registered functions, over the live brain.

Walks every weight chain from its single genesis (h_i and t_i recomputed in SQL, transition
signatures checked, continuity, forks, unreachable rows, signer epochs, terminal fidelity), every
memory's signed save record (through disclosure verification), and every event chain (sequence,
links, signatures, a master-certified housekeeper epoch not revoked at or before each signature).
Classifies each memory as certified_chain, default_empty_chain, signed_initial_weight or
unattested_initial_weight, with reasons from a closed vocabulary, and computes the corpus proof
root over the per-memory records.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from aimos.crypto import commitments
from aimos.crypto.ed25519 import WHOLE_BRAIN_SIGNATURES, remembering, start_in_parallel
from aimos.crypto.encoding import b64u_decode
from aimos.errors import AimosError, DisclosureError
from aimos.learning.outcomes import principal_outcomes
from aimos.recall.disclosure import KnownChains, verify_many
from aimos.store.connection import Connection
from aimos.store.queries import verification as q
from aimos.store.queries.learning import PrincipalOutcome
from aimos.store.queries.ledger import body_sql
from aimos.verify.chains.labels import label_chain_reasons
from aimos.verify.chains.weights import BATCH, chain_reasons
from aimos.verify.cognitive.results import PROOF_FIELDS
from aimos.verify.kit.valence import WeightLedger
from aimos.vocabulary import HOUSEKEEPER, TERMINAL_AUTHORIZED_TRANSITION

# The closed vocabulary (the reference's names where it has one).
REASONS = frozenset(
    {
        "continuity_break",
        "hash_mismatch",
        "transition_hash_invalid",
        "transition_signature_invalid",
        "signature_invalid",
        "terminal_weight_mismatch",
        "unreachable_rows",
        "cognitive_projection_genesis_invalid",
        "cognitive_projection_fork",
        "cognitive_projection_disconnected",
        "projection_display_invalid",
        "provenance_binding_invalid",
        "provenance_hash_invalid",
        "provenance_signed_body_content_hash_mismatch",
        "provenance_event_type_invalid",
        "provenance_signer_revoked_before_evidence",
        "provenance_cert_expired",
        "provenance_signer_certificate_row_mismatch",
        "unattested_initial_weight",
        "baseline_binding_invalid",
        "valence_replay_mismatch",
        "save_record_invalid",
        "event_chain_break",
        "event_hash_mismatch",
        "event_signature_invalid",
        "event_signer_uncertified",
        "event_signer_revoked",
        "unbacked_projection",
        "fork_or_disconnected_history",
        "epistemic_hash_invalid",
        "epistemic_live_content_mismatch",
        "epistemic_authority_invalid",
        "epistemic_evidence_invalid",
        "correction_lifted_judgment",
        "classifier_overruled_judgment",
    }
)


@dataclass
class MemoryRecord:
    memory_id: str
    certification_status: str
    ok: bool
    chain_length: int
    sigs_verified: int
    reason: str | None
    detail: str | None = None

    def proof_record(self) -> dict[str, Any]:
        """The same six fields the portable verifier records (parity compares the two)."""
        return {name: getattr(self, name) for name in PROOF_FIELDS}


@dataclass
class Report:
    records: list[MemoryRecord]
    event_chains: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.records) and all(c["ok"] for c in self.event_chains)

    @property
    def corpus_proof_root(self) -> str:
        return commitments.corpus_proof_root(r.proof_record() for r in self.records).hex()


def check_signatures_ahead(conn: Connection) -> Callable[[], int]:
    """Start checking the brain's event and save-request signatures on every core (remembered as
    valid, see ed25519.start_in_parallel), so the walks below, which check each one where it
    belongs and name any failure, mostly look them up. Returns the wait for them (how many
    were valid)."""
    triples = []
    for key, message, signature in q.signatures_ahead(conn, body_sql(conn, "e")):
        if isinstance(key, str) and isinstance(message, bytes) and isinstance(signature, str):
            try:
                triples.append((key, message, b64u_decode(signature)))
            except AimosError:
                continue  # malformed: its own check says so
    return start_in_parallel(triples)


WALK_BATCH = BATCH  # memories read, and checked, together

# told (memories walked, memories in all) after each batch of the in-database verifier's walk
Count = Callable[[int, int], None]


def verify_brain(
    conn: Connection,
    memory_id: str | None = None,
    *,
    count: Count | None = None,
    meanwhile: Callable[[], None] | None = None,
) -> Report:
    """Run the in-database verifier over every memory (or one) and every event chain. The whole
    brain's signatures are checked ahead on every core and remembered for the run (whoever calls
    it: `aimos verify`, the nightly job, an export); ``meanwhile`` is the caller's own work on the
    same snapshot, run while they are checked (none of it may rest on the verdicts). ``count(done,
    total)`` is told as the walk over the memories goes (a batch at a time)."""
    if memory_id is not None:
        if meanwhile is not None:
            meanwhile()
        return _verify_brain(conn, memory_id, count)
    with remembering(WHOLE_BRAIN_SIGNATURES):
        wait = check_signatures_ahead(conn)
        try:
            if meanwhile is not None:
                meanwhile()
        finally:
            wait()
        return _verify_brain(conn, None, count)


def verify_memories(conn: Connection, memory_ids: Collection[str]) -> list[MemoryRecord]:
    """The per-memory checks of ``verify_brain`` (weight and label chains, the signed save record,
    the weight rules replayed) over these memories only: a hub pull checks what it applied before
    it commits (the rows' own guards checked the event chains as each was inserted)."""
    wanted = sorted(set(memory_ids))
    records: list[MemoryRecord] = []
    if not wanted:
        return records
    replays = _replay_reasons(conn)
    dangling, baselined = _dangling(conn, None), _baselined(conn, None)
    for start in range(0, len(wanted), WALK_BATCH):
        memories = q.memories_with_ids(conn, wanted[start : start + WALK_BATCH])
        records += _batch_records(conn, memories, replays, dangling, baselined)
    return records


def _dangling(conn: Connection, memory_id: str | None) -> set[str]:
    """Memories with a signed REWEIGHT node or an authorized outcome whose projection is gone."""
    return set(q.unprojected_memory_ids(conn, memory_id))


def _baselined(conn: Connection, memory_id: str | None) -> set[str]:
    return set(q.baselined_memory_ids(conn, memory_id))


def _verify_brain(conn: Connection, memory_id: str | None, count: Count | None) -> Report:
    """The memories a batch at a time (read as the walk goes, never the whole table at once), each
    batch's weight chains, label chains and signed save records checked together."""
    total = q.memory_count(conn, memory_id) if count else 0
    replays = _replay_reasons(conn, memory_id)
    # one memory: by its id (indexed), not a scan of every provenance node
    dangling, baselined = _dangling(conn, memory_id), _baselined(conn, memory_id)
    records: list[MemoryRecord] = []
    for memories in q.memory_batches(conn, memory_id, WALK_BATCH):
        records += _batch_records(conn, memories, replays, dangling, baselined)
        if count is not None:
            count(len(records), max(total, len(records)))
    return Report(records, [] if memory_id else verify_event_chains(conn))


def _batch_records(
    conn: Connection,
    memories: list[dict[str, Any]],
    replays: dict[str, str],
    dangling: set[str],
    baselined: set[str],
) -> list[MemoryRecord]:
    chains = chain_reasons(conn, memories)
    label_chains = label_chain_reasons(conn, memories)
    records = []
    for m in memories:
        mid = m["memory_id"]
        reason, sigs, length = chains[mid]
        detail: str | None = None
        if length:
            status = "certified_chain"
        elif mid in baselined:
            status = "signed_initial_weight"
        elif m["retrieval_weight_milli"] == 1000:
            status = "default_empty_chain"
        else:
            status = "unattested_initial_weight"
        if reason is None and mid in dangling:
            reason = (
                "unreachable_rows"  # a signed REWEIGHT node or authorized outcome whose projection is gone
            )
        if reason is None:
            reason = label_chains[mid][0]  # the label chain counts in the record (and the root)
        if reason is None and mid in replays:
            reason, detail = "valence_replay_mismatch", replays[mid]
        records.append(MemoryRecord(mid, status, reason is None, length, sigs, reason, detail))
    unfailed = [m for m, r in zip(memories, records, strict=True) if r.reason is None]
    failures = _save_failures(conn, unfailed, (chains, label_chains))
    for record in records:
        failure = failures.get(record.memory_id)
        if failure is not None:
            record.reason, record.detail, record.ok = "save_record_invalid", failure, False
    return records


def _save_failures(conn: Connection, memories: list[dict[str, Any]], known: KnownChains) -> dict[str, str]:
    """Disclosure verification of every memory's signed save record, a batch at a time; a batch
    that fails is re-checked one memory at a time to name each failure. ``known``: the memories'
    chain reasons, already computed."""
    failures: dict[str, str] = {}
    for start in range(0, len(memories), BATCH):
        batch = memories[start : start + BATCH]
        try:
            verify_many(conn, batch, allow_superseded=True, known=known)
            continue
        except AimosError:
            pass
        for m in batch:
            try:
                verify_many(conn, [m], allow_superseded=True, known=known)
            except DisclosureError as exc:
                failures[m["memory_id"]] = exc.reason or exc.message
            except AimosError as exc:
                failures[m["memory_id"]] = exc.message
    return failures


def _replay_reasons(conn: Connection, memory_id: str | None = None) -> dict[str, str]:
    """Replay the weight rules over each memory's retained principal outcomes in write order
    (aimos/verify/kit/valence.py: MutMem's rule for outcomes recorded under it, rule 2 for the
    rest): each outcome's terminal and each transition's weights must be what the rule gives, and a
    further outcome about a disclosure that already moved the weight has no authority. Catches
    outcome rows that did not come through the writer (forged or replayed evidence)."""
    by_memory: dict[str, list[PrincipalOutcome]] = defaultdict(list)
    for r in principal_outcomes(conn, memory_id):
        by_memory[r["memory_id"]].append(r)
    out: dict[str, str] = {}
    for mid, outcomes in by_memory.items():
        ledger = WeightLedger(int(outcomes[0]["baseline"] or 1000))
        for o in outcomes:
            try:
                step = ledger.step(o["agent_id"], o["receipt_id"], int(o["reward_sign"]), o["valence_rule"])
            except ValueError:
                out[mid] = f"outcome {o['outcome_id']} names no weight rule aimos knows"
                break
            moved = (
                (o["old_weight_milli"], o["new_weight_milli"]) if o["old_weight_milli"] is not None else None
            )
            if o["terminal"] != step.terminal or (
                step.terminal == TERMINAL_AUTHORIZED_TRANSITION and moved != (step.old_milli, step.new_milli)
            ):
                out[mid] = f"outcome {o['outcome_id']} is not what the rule gives"
                break
    return out


def verify_event_chains(conn: Connection) -> list[dict[str, Any]]:
    """Every signer epoch's event chain: ledger_seq from 1, links and signatures (in SQL)."""
    # read in order, one stream at a time: only the stream being walked is kept, as its position
    walks: dict[tuple[str, int], _StreamWalk] = {}
    for batch in q.event_link_batches(conn, body_sql(conn, "e"), HOUSEKEEPER):
        for e in batch:
            stream = (e["signer_agent_id"], e["signer_valid_from"])
            walk = walks.get(stream)
            if walk is None:
                walk = walks[stream] = _StreamWalk(e["genesis"])
            walk.step(e)
    return [
        {
            "signer_agent_id": agent,
            "signer_valid_from": valid_from,
            "events": walk.events,
            "ok": walk.reason is None,
            "reason": walk.reason,
        }
        for (agent, valid_from), walk in walks.items()
    ]


class _StreamWalk:
    """One signer epoch's event chain as its events come, in ledger order: the first failure stops
    the checks (the events after it are only counted)."""

    def __init__(self, genesis: str) -> None:
        self.prev = genesis
        self.events = 0
        self.reason: str | None = None

    def step(self, e: q.EventLink) -> None:
        self.events += 1
        if self.reason is not None:
            return
        if e["ledger_seq"] != self.events or e["prev_mutation_hash"] != self.prev:
            self.reason = "event_chain_break"
        elif e["content_recomputed"] != e["content_hash"] or e["link_recomputed"] != e["mutation_hash"]:
            self.reason = "event_hash_mismatch"
        elif e["sig_ok"] != 1:
            self.reason = "event_signature_invalid"
        elif e["certified"] != 1:  # a housekeeper epoch the master certified, within it
            self.reason = "event_signer_uncertified"
        elif e["revoked"]:  # signed at or after the epoch's revocation
            self.reason = "event_signer_revoked"
        self.prev = e["mutation_hash"]


def verify_brain_state(
    conn: Connection, anchor: dict[str, Any] | None, kept: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The checks of the brain as a whole, beside the per-memory records: every row of every
    retained table against the seal chain (existence, every column), the schema against the
    migrations (guard triggers), the search indexes against the memories, the vectors' form
    (meaning/index.form_failures: recomputing them is verify/brain/parity's step, outside the snapshot),
    and the newest seal against the anchor outside the brain and the copy kept in the keystore
    (freshness: a rollback, a lost WAL, a lost anchor)."""
    from aimos.meaning.index import form_failures
    from aimos.recall.candidates import index_failures
    from aimos.store.freshness import freshness_failure
    from aimos.store.schema import schema_failures
    from aimos.store.seals import verify_seals

    t0 = time.perf_counter()
    sealed = verify_seals(conn)
    t1 = time.perf_counter()
    failures = schema_failures(conn) + sealed.failures
    stale = freshness_failure(conn, sealed.head, anchor, kept)
    if stale is not None:
        failures.append(stale)
    t2 = time.perf_counter()
    failures += index_failures(conn.db_filename("main"))
    t3 = time.perf_counter()
    vector_failures, vectors = form_failures(conn)
    failures += vector_failures
    t4 = time.perf_counter()
    return {
        "seconds": {
            "seals": round(t1 - t0, 3),
            "schema": round(t2 - t1, 3),
            "indexes": round(t3 - t2, 3),
            "vectors": round(t4 - t3, 3),
        },
        "vectors": vectors,
        "ok": not failures,
        "failures": failures,
        "seals": sealed.seals,
        "head_seal": sealed.head.seq if sealed.head else None,
        "rows": sealed.rows,
        "anchored_seal": anchor["seq"] if anchor else None,
    }
