"""`aimos eval mutation`: the mutation-integrity suite (MutMem section 9.2) in a scratch brain.

Every declared case runs against the real writer, triggers and both verifiers; each prints what
happened and whether that is what was declared. Then the cost of a signed transition (median,
p95, logical bytes) beside the bare cost of its parts measured in the same run.
"""

from __future__ import annotations

import functools
import json
import secrets
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aimos import vocabulary
from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json
from aimos.crypto.encoding import b64u_encode, be32, be64, uuid16
from aimos.crypto.messages import payload_message
from aimos.errors import AimosError
from aimos.eval.scratch import install_scratch, open_scratch, scratch_home
from aimos.eval.stats import sealing_report, summary_ms, time_calls
from aimos.store.cells import compact_provenance_body
from aimos.store.connection import Connection
from aimos.vocabulary import HOUSEKEEPER


@dataclass
class Case:
    name: str
    declared: str
    observed: str

    @property
    def as_declared(self) -> bool:
        return self.declared == self.observed


class _World:
    def __init__(self) -> None:
        install_scratch("mutation")
        self.conn, self.agent, self.housekeeper = open_scratch()

    def save(self, text: str) -> str:
        from aimos.actions.bodies import build_save_body
        from aimos.identity.requests import sign_request
        from aimos.memory.save import save
        from aimos.vocabulary import PATH_SAVE

        t = int(time.time())
        return save(
            self.conn,
            self.housekeeper,
            sign_request(self.agent, build_save_body(company_id="personal", value=text), PATH_SAVE, t),
            t,
        ).memory_id

    def recall(self, query: str) -> Any:
        from aimos.actions.bodies import build_recall_body
        from aimos.identity.requests import sign_request
        from aimos.recall.pipeline import recall
        from aimos.vocabulary import PATH_RECALL

        t = int(time.time())
        return recall(
            self.conn,
            self.housekeeper,
            sign_request(self.agent, build_recall_body(query=query), PATH_RECALL, t),
            t,
        )

    def outcome(self, memory_id: str, receipt_id: str, outcome: str) -> Any:
        from aimos.actions.bodies import build_outcome_body
        from aimos.identity.requests import sign_request
        from aimos.learning.outcomes import record_outcome
        from aimos.vocabulary import PATH_OUTCOME

        t = int(time.time())
        body = build_outcome_body(memory_id=memory_id, receipt_id=receipt_id, outcome=outcome)
        return record_outcome(self.conn, self.housekeeper, sign_request(self.agent, body, PATH_OUTCOME, t), t)

    def weight(self, memory_id: str) -> int:
        from aimos.store.queries.eval_mutation import live_weight

        return live_weight(self.conn, memory_id)

    def verify(self) -> tuple[bool, str, str | None, str | None, str | None]:
        from aimos.verify.brain.evidence import export_cognitive
        from aimos.verify.brain.verifier import verify_brain
        from aimos.verify.cognitive import verify_cognitive_bundle

        report = verify_brain(self.conn)
        portable = verify_cognitive_bundle(export_cognitive(self.conn))
        first = next((r.reason for r in report.records if not r.ok), None)
        return (
            report.ok and portable.verdict == "valid",
            report.corpus_proof_root,
            first,
            portable.corpus_proof_root,
            portable.primary_reason,
        )


def _attempt(fn: Callable[[], None], conn: Connection) -> str:
    from aimos.store.connection import write_transaction

    try:
        with write_transaction(conn):
            fn()
    except AimosError as exc:
        message = exc.message.removeprefix("refused by the brain: ")
        return "refused: " + message.split(":")[0] if ":" in message else "refused: " + message
    return "accepted"


def _crafted(
    w: _World,
    memory_id: str,
    company: str,
    old: int,
    new: int,
    *,
    prev_h: str | None,
    prev_node: str | None,
    outcome_id: str,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A REWEIGHT node and projection row for ``memory_id``, correctly signed for what they say."""
    now = int(time.time())
    body = {
        "event_type": vocabulary.REWEIGHT_EVENT,
        "company_id": company,
        "memory_id": memory_id,
        "old_weight": old / 1000,
        "new_weight": new / 1000,
        "old_weight_milli": old,
        "new_weight_milli": new,
        "judge_valence": 0.5,
        "governor_flag": "SIGNED_VALENCE_REFERENCE_POINT",
        "reason": "outcome_evidence",
        "outcome_id": outcome_id,
        "ts_signed": now,
    }
    nonce = secrets.token_urlsafe(16)
    content = commitments.sha256(canonical_json(body))
    sigma = commitments.provenance_mutation_hash(
        content, bytes.fromhex(prev_node) if prev_node else None, nonce, now
    )
    hk = w.housekeeper
    node = {
        "provenance_id": str(uuid.uuid4()),
        "memory_id": memory_id,
        "company_id": company,
        "event_type": vocabulary.REWEIGHT_EVENT,
        "body_json": "",
        "body_deflated": compact_provenance_body(canonical_json(body).decode(), memory_id),
        "content_hash": content.hex(),
        "prev_mutation_hash": prev_node,
        "mutation_hash": sigma.hex(),
        "nonce": nonce,
        "ts_signed": now,
        "signature_b64u": b64u_encode(hk.key.sign(payload_message(body, nonce, now))),
        "signature_form": 1,
        "signed_method": None,
        "signed_path": None,
        "signer_agent_id": HOUSEKEEPER,
        "signer_valid_from": hk.valid_from,
        "cert_fingerprint": hk.cert_fingerprint,
        "identity_tier": "T1",
        "is_genesis": 0 if prev_node else 1,
        "backfilled": 0,
        "binding_schema_version": 2,
        "created_at": now,
    }
    # t_i computed without the kernel's own bounds check: the trigger is what is under test
    company_bytes = company.encode()
    t_i = commitments.sha256(
        vocabulary.TRANSITION_COMMITMENT
        + be32(len(company_bytes))
        + company_bytes
        + uuid16(memory_id)
        + be64(old)
        + be64(new)
        + sigma
    )
    h_i = commitments.projection_hash(memory_id, old, new, sigma, bytes.fromhex(prev_h) if prev_h else None)
    projection = {
        "projection_id": str(uuid.uuid4()),
        "company_id": company,
        "memory_id": memory_id,
        "outcome_id": outcome_id,
        "old_weight_milli": old,
        "new_weight_milli": new,
        "provenance_mutation_hash": sigma.hex(),
        "prev_projection_hash": prev_h,
        "projection_hash": h_i.hex(),
        "transition_hash": t_i.hex(),
        "transition_signature_b64u": b64u_encode(hk.key.sign(t_i)),
        "signer_valid_from": hk.valid_from,
        "created_at": now,
    }
    return node, projection


def _outcome_cases(w: _World, a: str, b: str, query: str, receipt: str) -> list[Case]:
    """Outcomes through the writer: upward, downward and upward again, each about its own recall
    (one weight-bearing outcome per agent, receipt and memory), each declared by the pure rule and
    observed from the writer; repeats that carry no weight authority; a neutral step that makes no
    projection; and a direct update of the live weight."""
    from aimos.store.queries.eval_mutation import projection_count, set_live_weight
    from aimos.verify.kit.valence import WeightLedger
    from aimos.vocabulary import VALENCE_RULE_V2

    cases: list[Case] = []
    ledger = WeightLedger(1000)
    for n, outcome in enumerate(("good", "bad", "bad", "good", "good")):
        here = receipt if n == 0 else w.recall(query).receipt["receipt_id"]
        step = ledger.step("eval", here, 1 if outcome == "good" else -1, VALENCE_RULE_V2)
        got = w.outcome(a, here, outcome)
        cases.append(
            Case(
                f"outcome {outcome} (the agent's evidence {step.balance:+d})",
                f"{step.terminal} to {step.new_milli}",
                f"{got.terminal} to {got.new_weight_milli}",
            )
        )
    before = w.weight(a)
    again = [w.outcome(a, receipt, "bad") for _ in range(11)]
    cases.append(
        Case(
            "11 more bad outcomes about the first recall: kept, no weight authority",
            f"11 signed_noop, not weight-bearing; weight stays {before}",
            f"{sum(1 for r in again if r.terminal == 'signed_noop' and not r.weight_bearing)}"
            f" signed_noop, not weight-bearing; weight stays {w.weight(a)}",
        )
    )
    r1 = w.outcome(b, w.recall(query).receipt["receipt_id"], "bad")
    r2 = w.outcome(b, w.recall(query).receipt["receipt_id"], "good")
    r3 = w.outcome(b, w.recall(query).receipt["receipt_id"], "good")
    projections_b = projection_count(w.conn, b)
    cases.append(
        Case(
            "negative-neutral-positive evidence: no fictitious projection",
            "authorized_transition, signed_noop, authorized_transition; 2 projections",
            f"{r1.terminal}, {r2.terminal}, {r3.terminal}; {projections_b} projections",
        )
    )
    cases.append(
        Case(
            "direct update of the live weight",
            "refused: the live weight may only follow a signed, authorized transition",
            _attempt(lambda: set_live_weight(w.conn, a), w.conn),
        )
    )
    return cases


def _outcome_row(w: _World, memory_id: str, receipt_id: str) -> str:
    """Real signed evidence (request, nonce, event, outcome row) for a crafted transition."""
    from aimos.actions.bodies import build_outcome_body
    from aimos.identity.requests import sign_request, verify_request
    from aimos.learning.outcomes import _record_evidence
    from aimos.store.queries.recall import memory_row
    from aimos.vocabulary import PATH_OUTCOME

    t = int(time.time())
    request = sign_request(
        w.agent,
        build_outcome_body(memory_id=memory_id, receipt_id=receipt_id, outcome="good"),
        PATH_OUTCOME,
        t,
    )
    verified = verify_request(w.conn, request, path=PATH_OUTCOME, now=t)
    memory = memory_row(w.conn, memory_id)
    oid = str(uuid.uuid4())
    _record_evidence(
        w.conn,
        w.housekeeper,
        verified,
        request,
        memory or {},
        oid,
        "principal_state",
        1,
        "authorized_transition",
        t,
    )
    return oid


@dataclass
class _Craft:
    """A crafted transition of ``memory_id`` (its node claiming ``node_for`` when given), on the
    real signed evidence of an outcome about ``receipt_id``."""

    w: _World
    receipt_id: str
    memory_id: str
    company: str
    old_w: int
    new_w: int
    prev: str | None
    node_prev: str | None
    node_for: str | None = None

    def __call__(self) -> None:
        from aimos.store.connection import insert

        oid = _outcome_row(self.w, self.memory_id, self.receipt_id)
        node, projection = _crafted(
            self.w,
            self.node_for or self.memory_id,
            self.company,
            self.old_w,
            self.new_w,
            prev_h=self.prev,
            prev_node=self.node_prev,
            outcome_id=oid,
        )
        insert(self.w.conn, "memory_provenance", node)
        projection["memory_id"] = self.memory_id
        insert(self.w.conn, "weight_projections", projection)


def _crafted_cases(w: _World, a: str, b: str, query: str) -> list[Case]:
    """Transitions crafted and correctly signed for what they say, each one the writer's triggers
    must refuse: a proof reused across memories or companies, a no-op, a stale predecessor, a
    weight out of bounds, a second genesis."""
    from aimos.store.queries.eval_mutation import chain_heads

    prev_h, prev_node = chain_heads(w.conn, a)
    old = w.weight(a)
    craft_receipt = w.recall(query).receipt["receipt_id"]  # a disclosure no outcome has moved yet

    craft = functools.partial(_Craft, w, craft_receipt)

    b_prev_h, _ = chain_heads(w.conn, b)
    stale = None if prev_h is None else commitments.sha256(b"stale").hex()
    table = [
        (
            "cross-memory proof reuse",
            "refused: transition_provenance",
            craft(b, "personal", w.weight(b), 1500, b_prev_h, prev_node, node_for=a),
        ),
        (
            "cross-company proof reuse",
            "refused: REWEIGHT body is not canonical or does not bind this memory",
            craft(a, "other-company", old, 1500, prev_h, prev_node),
        ),
        ("no-op transition", "refused: transition_bounds", craft(a, "personal", old, old, prev_h, prev_node)),
        (
            "stale predecessor",
            "refused: transition_predecessor",
            craft(a, "personal", old, 1500, stale, prev_node),
        ),
        (
            "out-of-bounds transition (3001)",
            "refused: transition_bounds",
            craft(a, "personal", old, 3001, prev_h, prev_node),
        ),
        (
            "forked transition (a second genesis)",
            "refused: transition_predecessor",
            craft(a, "personal", 1000, 1500, None, prev_node),
        ),
    ]
    return [Case(case_name, declared, _attempt(build, w.conn)) for case_name, declared, build in table]


TAMPER_DETECTED = "detected by both; restored: pass, equal roots, same root"


def _tamper_cases(w: _World, a: str) -> list[Case]:
    """Both verifiers pass with equal roots; then each edit made with the file in hand is seen by
    both, and once it is undone both pass again on the same root."""
    from aimos.store.queries.eval_mutation import tampered, tampers

    ok0, root0, _, proot0, _ = w.verify()
    cases = [
        Case(
            "both verifiers pass before tampering, equal roots",
            "pass, equal",
            f"{'pass' if ok0 else 'fail'}, {'equal' if root0 == proot0 else 'different'}",
        )
    ]
    for tamper in tampers(a, w.weight(a)):
        with tampered(w.conn, tamper):
            ok1, _, reason1, _, preason1 = w.verify()
        ok2, root2, _, proot2, _ = w.verify()
        observed = (
            f"{'detected by both' if not ok1 and reason1 and preason1 else 'MISSED'}"
            f" ({reason1} / {preason1}); restored: {'pass' if ok2 else 'fail'},"
            f" {'equal roots' if root2 == proot2 else 'roots differ'},"
            f" {'same root' if root2 == root0 else 'root changed'}"
        )
        if not ok1 and ok2 and root2 == proot2 == root0:
            observed = TAMPER_DETECTED
        cases.append(Case(f"tamper: {tamper.name}", TAMPER_DETECTED, observed))
    return cases


def _recall_case(w: _World, a: str) -> Case:
    after = w.recall("heron pond")
    return Case(
        "post-mutation recall with a receipt",
        f"heron first at weight {w.weight(a) / 1000:.3f}",
        f"{'heron' if after.results and after.results[0]['memory_id'] == a else 'other'} first"
        f" at weight {after.results[0]['weight']:.3f}"
        if after.results
        else "no result",
    )


def _transition_costs(w: _World, transitions: int) -> tuple[list[float], list[int], dict[str, list[float]]]:
    """The cost of a signed transition on a fresh memory (its time, logical bytes and sealing
    parts): the evidence sum cycles 1, 2, 1, 0, -1, -2, -1, 0, so the weight rises and falls
    within bounds; only authorized transitions are timed."""
    from aimos.store import seals

    c = w.save("the egret wades in the shallows")
    cycle = ("good", "good", "bad", "bad", "bad", "bad", "good", "good")
    times: list[float] = []
    sizes: list[int] = []
    sealing: dict[str, list[float]] = {}
    i = 0
    seals.COSTS = seals.SealCosts()  # what sealing and anchoring cost inside each transition
    try:
        while len(times) < transitions:
            receipt_c = w.recall("egret shallows").receipt["receipt_id"]  # each outcome its own recall
            seals.COSTS.reset()
            t0 = time.perf_counter()
            result = w.outcome(c, receipt_c, cycle[i % len(cycle)])
            elapsed = time.perf_counter() - t0
            i += 1
            if result.terminal == "authorized_transition":
                times.append(elapsed)
                sizes.append(_logical_bytes(w.conn, result.projection_hash))
                for part, values in seals.COSTS.parts.items():
                    sealing.setdefault(part, []).extend(values)
    finally:
        seals.COSTS = None
    return times, sizes, sealing


def run_mutation(transitions: int = 200) -> dict[str, Any]:
    cases: list[Case] = []
    with scratch_home("aimos-eval-mutation-"):
        w = _World()
        a = w.save("the heron nests by the north pond")
        b = w.save("the kingfisher fishes at the weir")
        query = "heron kingfisher pond weir"
        receipt = w.recall(query).receipt["receipt_id"]
        cases += _outcome_cases(w, a, b, query, receipt)
        cases += _crafted_cases(w, a, b, query)
        cases += _tamper_cases(w, a)
        cases.append(_recall_case(w, a))
        times, sizes, sealing = _transition_costs(w, transitions)
        bare = _bare_cost(w, transitions)
        w.conn.close()
    median_transition = summary_ms(times)
    bare_median = sum(bare[k]["median_ms"] for k in bare)
    return {
        "cases": [
            {"case": x.name, "declared": x.declared, "observed": x.observed, "as_declared": x.as_declared}
            for x in cases
        ],
        "all_as_declared": all(x.as_declared for x in cases),
        "transition": median_transition,
        "logical_bytes_per_transition": round(sum(sizes) / len(sizes), 1) if sizes else None,
        "sealing": sealing_report(sealing, median_transition["median_ms"]),
        "bare": bare,
        "bare_median_ms": round(bare_median, 4),
        "ratio_to_bare": round(median_transition["median_ms"] / bare_median, 3),
        "targets": {"median_ms": 1.0, "p95_ms": 2.0, "ratio": 1.5, "bytes": 600},
    }


def _logical_bytes(conn: Connection, projection_hash: str | None) -> int:
    """Sum of the stored sizes of a transition's provenance node and projection rows: a text or a
    BLOB by its length, any other value as 8 bytes."""
    from aimos.store.queries.eval_mutation import transition_values

    return sum(
        len(v.encode()) if isinstance(v, str) else len(v) if isinstance(v, bytes) else 8
        for v in transition_values(conn, projection_hash)
        if v is not None
    )


def _bare_cost(w: _World, n: int) -> dict[str, Any]:
    """2 signatures + 2 verifications + a durable two-row commit, with PyNaCl and SQLite directly."""
    from nacl.signing import SigningKey

    from aimos.store.queries.eval import bare_commit, open_bare_commit

    key = SigningKey(w.housekeeper.key.seed)
    verify_key = key.verify_key
    message = secrets.token_bytes(200)
    signature = key.sign(message).signature

    sign = time_calls(lambda: (key.sign(message), key.sign(message[:32])), n)
    verify = time_calls(
        lambda: (verify_key.verify(message, signature), verify_key.verify(message, signature)), n
    )
    from aimos import paths

    scratch = open_bare_commit(paths.data_dir() / "bare-commit.sqlite3", ["a", "b"])
    payload = json.dumps({"x": secrets.token_hex(150)})
    commits = time_calls(lambda: bare_commit(scratch, ["a", "b"], payload), n)
    scratch.close()
    return {
        "two_signatures": summary_ms(sign),
        "two_verifications": summary_ms(verify),
        "two_row_durable_commit": summary_ms(commits),
    }
