"""The in-database verifier: SQL with the writer's registered functions, over the live brain.

Walks every weight chain from its single genesis (h_i and t_i recomputed in SQL, transition
signatures checked, continuity, forks, unreachable rows, signer epochs, terminal fidelity), every
memory's signed save record (through disclosure verification), and every event chain (sequence,
links, signatures). Classifies each memory as certified_chain, default_empty_chain,
signed_initial_weight or unattested_initial_weight, with reasons from a closed vocabulary, and
computes the corpus proof root over the per-memory records.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import apsw

from aimos.crypto import commitments
from aimos.errors import AimosError
from aimos.recall.disclosure import DisclosureError, verify_many
from aimos.store.connection import rows

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
        "save_record_invalid",
        "event_chain_break",
        "event_hash_mismatch",
        "event_signature_invalid",
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
        return {
            "memory_id": self.memory_id,
            "certification_status": self.certification_status,
            "ok": self.ok,
            "chain_length": self.chain_length,
            "sigs_verified": self.sigs_verified,
            "reason": self.reason,
        }


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


_PROJECTIONS_SQL = """
SELECT w.*, m.company_id AS memory_company, m.retrieval_weight_milli AS live_weight, m.quarantine,
       p.body_json, p.content_hash AS p_content_hash, p.event_type AS p_event_type,
       p.memory_id AS p_memory_id, p.signer_agent_id AS p_signer, p.signer_valid_from AS p_signer_vf,
       p.ts_signed AS p_ts, p.nonce AS p_nonce, p.prev_mutation_hash AS p_prev,
       p.signature_b64u AS p_sig, p.backfilled AS p_backfilled, p.cert_fingerprint AS p_cert_fp,
       p.company_id AS p_company, e.cert_fingerprint AS e_cert_fp,
       e.valid_from AS e_valid_from, e.valid_until AS e_valid_until, e.role AS e_role,
       (SELECT r.revoked_at FROM agent_revocations r
         WHERE r.agent_id = 'housekeeper' AND r.agent_valid_from = w.signer_valid_from) AS e_revoked_at,
       aimos_projection_hash(w.memory_id, w.old_weight_milli, w.new_weight_milli,
                             w.provenance_mutation_hash, w.prev_projection_hash) AS h_recomputed,
       aimos_transition_hash(w.company_id, w.memory_id, w.old_weight_milli, w.new_weight_milli,
                             w.provenance_mutation_hash) AS t_recomputed,
       aimos_ed25519_verify(e.public_key_b64u, unhex(w.transition_hash),
                            w.transition_signature_b64u) AS t_sig_ok,
       aimos_sha256_hex(p.body_json) AS p_content_recomputed,
       aimos_provenance_mutation(p.content_hash, p.prev_mutation_hash, p.nonce,
                                 p.ts_signed) AS p_mutation_recomputed,
       aimos_ed25519_verify(e.public_key_b64u, aimos_payload_message(p.body_json, p.nonce, p.ts_signed),
                            p.signature_b64u) AS p_sig_ok
FROM weight_projections w
JOIN memories m ON m.memory_id = w.memory_id
LEFT JOIN memory_provenance p ON p.mutation_hash = w.provenance_mutation_hash
LEFT JOIN identity_epochs e ON e.agent_id = 'housekeeper' AND e.valid_from = w.signer_valid_from
ORDER BY w.memory_id, w.rowid
"""


_BASELINES_SQL = """
SELECT b.*,
       (b.baseline_hash = aimos_baseline_hash(b.company_id, b.memory_id, b.event_id, b.event_mutation_hash,
            b.live_content_hash, b.observed_weight_float4, b.observed_weight_milli, b.observed_at,
            b.signer_valid_from, b.certificate_fingerprint)) AS hash_ok,
       aimos_ed25519_verify(e.public_key_b64u, unhex(b.baseline_hash), b.signature_b64u) AS sig_ok,
       EXISTS (SELECT 1 FROM events v WHERE v.event_id = b.event_id
               AND v.mutation_hash = b.event_mutation_hash
               AND v.operation = 'cognitive_initial_weight_attested') AS event_ok
FROM weight_baselines b
LEFT JOIN identity_epochs e ON e.agent_id = 'housekeeper' AND e.valid_from = b.signer_valid_from
"""


def _chain_reason(
    memory: dict[str, Any], chain: list[dict[str, Any]], initial: int
) -> tuple[str | None, int]:
    """First failing reason of one memory's weight chain (None when it holds), and sigs verified."""
    geneses = [r for r in chain if r["prev_projection_hash"] is None]
    if len(geneses) != 1:
        return "cognitive_projection_genesis_invalid", 0
    by_prev: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in chain:
        if r["prev_projection_hash"] is not None:
            by_prev[r["prev_projection_hash"]].append(r)
    if any(len(v) > 1 for v in by_prev.values()):
        return "cognitive_projection_fork", 0
    ordered = [geneses[0]]
    while ordered[-1]["projection_hash"] in by_prev:
        ordered.append(by_prev[ordered[-1]["projection_hash"]][0])
        if len(ordered) > len(chain):
            return "cognitive_projection_fork", 0
    if len(ordered) != len(chain):
        return "cognitive_projection_disconnected", 0
    if ordered[0]["old_weight_milli"] != initial:
        return "cognitive_projection_genesis_invalid", 0
    sigs = 0
    previous_new = None
    for r in ordered:
        for w in (r["old_weight_milli"], r["new_weight_milli"]):
            if not 100 <= w <= 3000:
                return "projection_display_invalid", sigs
        if r["old_weight_milli"] == r["new_weight_milli"]:
            return "projection_display_invalid", sigs
        if previous_new is not None and r["old_weight_milli"] != previous_new:
            return "continuity_break", sigs
        previous_new = r["new_weight_milli"]
        if r["h_recomputed"] != r["projection_hash"]:
            return "hash_mismatch", sigs
        if r["t_recomputed"] != r["transition_hash"]:
            return "transition_hash_invalid", sigs
        if r["t_sig_ok"] != 1:
            return "transition_signature_invalid", sigs
        sigs += 1
        if r["body_json"] is None:
            return "provenance_binding_invalid", sigs
        if r["p_content_recomputed"] != r["p_content_hash"]:
            return "provenance_signed_body_content_hash_mismatch", sigs
        if r["p_mutation_recomputed"] != r["provenance_mutation_hash"]:
            return "provenance_hash_invalid", sigs
        body = json.loads(r["body_json"])
        if (
            r["p_event_type"] != "REWEIGHT"
            or body.get("event_type") != "REWEIGHT"
            or r["p_memory_id"] != r["memory_id"]
            or body.get("memory_id") != r["memory_id"]
            or body.get("company_id") != r["company_id"]
            or body.get("old_weight_milli") != r["old_weight_milli"]
            or body.get("new_weight_milli") != r["new_weight_milli"]
        ):
            return "provenance_event_type_invalid", sigs
        if r["company_id"] != r["memory_company"] or r["p_company"] != r["memory_company"]:
            return "provenance_event_type_invalid", sigs  # cross-tenant replay, as the reference names it
        if r["e_role"] != "housekeeper" or r["p_signer"] != "housekeeper":
            return "provenance_binding_invalid", sigs
        if r["p_signer_vf"] != r["signer_valid_from"] or r["p_cert_fp"] != r["e_cert_fp"]:
            return "provenance_signer_certificate_row_mismatch", sigs
        if r["e_revoked_at"] is not None and r["e_revoked_at"] <= r["p_ts"]:
            return "provenance_signer_revoked_before_evidence", sigs
        if not r["e_valid_from"] <= r["p_ts"] <= r["e_valid_until"]:
            return "provenance_cert_expired", sigs
        if r["p_sig_ok"] != 1:
            return "signature_invalid", sigs
    if memory["retrieval_weight_milli"] != ordered[-1]["new_weight_milli"]:
        return "terminal_weight_mismatch", sigs
    return None, sigs


def verify_brain(conn: apsw.Connection, memory_id: str | None = None) -> Report:
    """Run the in-database verifier over every memory (or one) and every event chain."""
    where, params = ("WHERE memory_id = ?", (memory_id,)) if memory_id else ("", ())
    memories = rows(conn, f"SELECT * FROM memories {where} ORDER BY memory_id", params)
    chains: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows(conn, _PROJECTIONS_SQL):
        chains[r["memory_id"]].append(r)
    baselines = {r["memory_id"]: r for r in rows(conn, _BASELINES_SQL)}
    dangling = {
        r["memory_id"]
        for r in rows(
            conn,
            "SELECT p.memory_id FROM memory_provenance p WHERE p.event_type = 'REWEIGHT' AND NOT EXISTS"
            " (SELECT 1 FROM weight_projections w WHERE w.provenance_mutation_hash = p.mutation_hash)"
            " UNION SELECT o.memory_id FROM outcomes o WHERE o.terminal = 'authorized_transition'"
            " AND NOT EXISTS"
            " (SELECT 1 FROM weight_projections w WHERE w.outcome_id = o.outcome_id)",
        )
    }
    records = []
    for m in memories:
        chain = chains.get(m["memory_id"], [])
        reason: str | None = None
        detail: str | None = None
        sigs = 0
        save_reason: str | None = None
        try:
            verify_many(conn, [m], allow_superseded=True)
        except DisclosureError as exc:
            save_reason, detail = "save_record_invalid", exc.reason
        except AimosError as exc:
            save_reason, detail = "save_record_invalid", exc.message
        baseline = baselines.get(m["memory_id"])
        initial = 1000
        if baseline is not None:
            if baseline["hash_ok"] != 1 or baseline["sig_ok"] != 1 or baseline["event_ok"] != 1:
                reason = reason or "baseline_binding_invalid"
            initial = int(baseline["observed_weight_milli"])
        if chain:
            status = "certified_chain"
            chain_reason, sigs = _chain_reason(m, chain, initial)
            reason = reason or chain_reason
        elif baseline is not None:
            status = "signed_initial_weight"
            sigs = 0  # as the reference counts: the baseline is not a transition signature
        elif m["retrieval_weight_milli"] == 1000:
            status = "default_empty_chain"
        else:
            status = "unattested_initial_weight"
            reason = reason or "unattested_initial_weight"
        if reason is None and not chain and m["retrieval_weight_milli"] != initial:
            reason = "terminal_weight_mismatch"
        if reason is None and m["memory_id"] in dangling:
            # a signed REWEIGHT node or an authorized outcome whose projection is gone
            reason = "unreachable_rows"
        # the weight chain's own reason first; a broken save record otherwise
        reason = reason or save_reason
        records.append(MemoryRecord(m["memory_id"], status, reason is None, len(chain), sigs, reason, detail))
    return Report(records, [] if memory_id else verify_event_chains(conn))


def verify_event_chains(conn: apsw.Connection) -> list[dict[str, Any]]:
    """Every signer epoch's event chain: ledger_seq from 1, links and signatures (in SQL)."""
    out = []
    sql = """
    SELECT e.signer_agent_id, e.signer_valid_from, e.ledger_seq, e.prev_mutation_hash, e.mutation_hash,
           e.content_hash, aimos_sha256_hex(e.signed_body) AS content_recomputed,
           aimos_event_link(e.prev_mutation_hash, e.content_hash, e.nonce, e.ts_signed) AS link_recomputed,
           aimos_ed25519_verify(i.public_key_b64u, aimos_payload_message(e.signed_body, e.nonce, e.ts_signed),
                                e.signature_b64u) AS sig_ok,
           aimos_event_genesis((SELECT value FROM brain_meta WHERE key = 'company_id'),
                               e.signer_agent_id, e.signer_valid_from) AS genesis
    FROM events e LEFT JOIN identity_epochs i
      ON i.agent_id = e.signer_agent_id AND i.valid_from = e.signer_valid_from
    ORDER BY e.signer_agent_id, e.signer_valid_from, e.ledger_seq
    """
    streams: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for r in rows(conn, sql):
        streams[(r["signer_agent_id"], r["signer_valid_from"])].append(r)
    for (agent, valid_from), events in streams.items():
        reason = None
        prev = events[0]["genesis"]
        for i, e in enumerate(events, start=1):
            if e["ledger_seq"] != i or e["prev_mutation_hash"] != prev:
                reason = "event_chain_break"
            elif e["content_recomputed"] != e["content_hash"] or e["link_recomputed"] != e["mutation_hash"]:
                reason = "event_hash_mismatch"
            elif e["sig_ok"] != 1:
                reason = "event_signature_invalid"
            if reason:
                break
            prev = e["mutation_hash"]
        out.append(
            {
                "signer_agent_id": agent,
                "signer_valid_from": valid_from,
                "events": len(events),
                "ok": reason is None,
                "reason": reason,
            }
        )
    return out
