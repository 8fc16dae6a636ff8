"""Weight chains as the brain holds them, re-checked with the writer's registered SQL functions.

Shared by disclosure verification (before a weight is shown or signed into a receipt) and by the
in-database verifier: h_i and t_i recomputed, transition and REWEIGHT signatures, single genesis
(1000 or a signed baseline), forks, disconnected rows, continuity, bounds, company, signer epoch,
revocation, window and terminal fidelity. Reasons use the reference's names.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from aimos.crypto.canonical import json_loads
from aimos.ledger.events import provenance_body_sql
from aimos.store.connection import Connection, rows
from aimos.store.seals import sealed_tables
from aimos.vocabulary import HOUSEKEEPER, sql_word

_HK = sql_word(HOUSEKEEPER)

_PROJECTIONS_SQL = f"""
SELECT w.*, m.company_id AS memory_company, m.retrieval_weight_milli AS live_weight, m.quarantine,
       {{body}} AS body_json, p.content_hash AS p_content_hash, p.event_type AS p_event_type,
       p.memory_id AS p_memory_id, p.signer_agent_id AS p_signer, p.signer_valid_from AS p_signer_vf,
       p.ts_signed AS p_ts, p.nonce AS p_nonce, p.prev_mutation_hash AS p_prev,
       p.signature_b64u AS p_sig, p.backfilled AS p_backfilled, p.cert_fingerprint AS p_cert_fp,
       p.company_id AS p_company, e.cert_fingerprint AS e_cert_fp,
       e.valid_from AS e_valid_from, e.valid_until AS e_valid_until, e.role AS e_role,
       (SELECT r.revoked_at FROM agent_revocations r
         WHERE r.agent_id = {_HK} AND r.agent_valid_from = w.signer_valid_from) AS e_revoked_at,
       aimos_projection_hash(w.memory_id, w.old_weight_milli, w.new_weight_milli,
                             w.provenance_mutation_hash, w.prev_projection_hash) AS h_recomputed,
       aimos_transition_hash(w.company_id, w.memory_id, w.old_weight_milli, w.new_weight_milli,
                             w.provenance_mutation_hash) AS t_recomputed,
       aimos_ed25519_verify(e.public_key_b64u, unhex(w.transition_hash),
                            w.transition_signature_b64u) AS t_sig_ok,
       aimos_sha256_hex({{body}}) AS p_content_recomputed,
       aimos_provenance_mutation(p.content_hash, p.prev_mutation_hash, p.nonce,
                                 p.ts_signed) AS p_mutation_recomputed,
       aimos_ed25519_verify(e.public_key_b64u, aimos_payload_message({{body}}, p.nonce, p.ts_signed),
                            p.signature_b64u) AS p_sig_ok
FROM weight_projections w
JOIN memories m ON m.memory_id = w.memory_id
LEFT JOIN memory_provenance p ON p.mutation_hash = w.provenance_mutation_hash
LEFT JOIN identity_epochs e ON e.agent_id = {_HK} AND e.valid_from = w.signer_valid_from
ORDER BY w.memory_id, w.rowid
"""


_BASELINES_SQL = f"""
SELECT b.*,
       (b.baseline_hash = aimos_baseline_hash(b.company_id, b.memory_id, b.event_id, b.event_mutation_hash,
            b.live_content_hash, b.observed_weight_float4, b.observed_weight_milli, b.observed_at,
            b.signer_valid_from, b.certificate_fingerprint)) AS hash_ok,
       aimos_ed25519_verify(e.public_key_b64u, unhex(b.baseline_hash), b.signature_b64u) AS sig_ok,
       EXISTS (SELECT 1 FROM events v WHERE v.event_id = b.event_id
               AND v.mutation_hash = b.event_mutation_hash
               AND v.operation = 'cognitive_initial_weight_attested') AS event_ok
FROM weight_baselines b
LEFT JOIN identity_epochs e ON e.agent_id = {_HK} AND e.valid_from = b.signer_valid_from
"""


def _chain_reason(  # noqa: C901, PLR0912 (one fail-closed check per chain link field, in order)
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
        body = json_loads(r["body_json"])
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
        if r["e_role"] != HOUSEKEEPER or r["p_signer"] != HOUSEKEEPER:
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


BATCH = 500  # memory ids per query, well under SQLite's bound on variables


def chain_reasons(conn: Connection, memories: list[dict[str, Any]]) -> dict[str, tuple[str | None, int, int]]:
    """For each memory (rows of the memories table): (first failing reason or None, signatures
    verified, chain length), counting its signed baseline as the genesis weight when present."""
    out: dict[str, tuple[str | None, int, int]] = {}
    for start in range(0, len(memories), BATCH):
        out.update(_chain_reasons_batch(conn, memories[start : start + BATCH]))
    return out


def _chain_reasons_batch(
    conn: Connection, memories: list[dict[str, Any]]
) -> dict[str, tuple[str | None, int, int]]:
    if not memories:
        return {}
    ids = [m["memory_id"] for m in memories]
    marks = ", ".join("?" * len(ids))
    chains: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows(
        conn,
        _PROJECTIONS_SQL.replace("{body}", provenance_body_sql(conn, "p")).replace(
            "ORDER BY w.memory_id", f"WHERE w.memory_id IN ({marks}) ORDER BY w.memory_id"
        ),
        ids,
    ):
        chains[r["memory_id"]].append(r)
    baselines = {
        r["memory_id"]: r for r in rows(conn, _BASELINES_SQL + f" WHERE b.memory_id IN ({marks})", ids)
    }
    # every REWEIGHT node signed for the memory (found by its signed body, migration 6's expression
    # index, for a body kept as text; a compact body names its row's memory_id, migration 18) must
    # be in its chain: a chain moved to another memory leaves its signed nodes behind
    compact = "body_json" in dict(sealed_tables(conn)["memory_provenance"].stored)
    signed_nodes = {
        r["mid"]: int(r["n"])
        for r in rows(
            conn,
            "SELECT mid, SUM(n) AS n FROM ("
            "SELECT ids.value AS mid, COUNT(*) AS n FROM json_each(?1) ids CROSS JOIN memory_provenance p"
            " WHERE p.event_type = 'REWEIGHT'"
            + (" AND json_valid(p.body_json)" if compact else "")
            + " AND json_extract(p.body_json, '$.memory_id') = ids.value"
            + " GROUP BY ids.value"
            + (
                " UNION ALL SELECT ids.value, COUNT(*) FROM json_each(?1) ids CROSS JOIN memory_provenance p"
                " WHERE p.memory_id = ids.value AND p.event_type = 'REWEIGHT' AND p.body_deflated IS NOT NULL"
                " GROUP BY ids.value"
                if compact
                else ""
            )
            + ") GROUP BY mid",
            (json.dumps(ids),),
        )
    }
    out: dict[str, tuple[str | None, int, int]] = {}
    for m in memories:
        chain = chains.get(m["memory_id"], [])
        baseline = baselines.get(m["memory_id"])
        reason: str | None = None
        initial = 1000
        if baseline is not None:
            if baseline["hash_ok"] != 1 or baseline["sig_ok"] != 1 or baseline["event_ok"] != 1:
                reason = "baseline_binding_invalid"
            initial = int(baseline["observed_weight_milli"])
        sigs = 0
        if chain:
            chain_reason, sigs = _chain_reason(m, chain, initial)
            reason = reason or chain_reason
        elif m["retrieval_weight_milli"] != initial:
            reason = reason or (
                "terminal_weight_mismatch" if baseline is not None else "unattested_initial_weight"
            )
        if reason is None and signed_nodes.get(m["memory_id"], 0) != len(chain):
            reason = "unreachable_rows"  # signed REWEIGHT nodes of this memory outside its chain
        out[m["memory_id"]] = (reason, sigs, len(chain))
    return out


def weight_trajectory(conn: Connection, memory_id: str) -> dict[str, Any]:
    """How a memory's weight moved, oldest first: where it started (1.000, or a signed baseline)
    and every outcome about it with the weight before and after. An outcome that moved nothing
    (a signed no-op, an occurrence observation) is listed as evidence with no step."""
    baseline = rows(
        conn,
        "SELECT observed_weight_milli, observed_at FROM weight_baselines WHERE memory_id = ?",
        (memory_id,),
    )
    created = rows(conn, "SELECT created_at FROM memories WHERE memory_id = ?", (memory_id,))
    start = {
        "at": baseline[0]["observed_at"] if baseline else (created[0]["created_at"] if created else None),
        "weight_milli": baseline[0]["observed_weight_milli"] if baseline else 1000,
        "basis": "signed baseline" if baseline else "default",
    }
    steps = rows(
        conn,
        "SELECT o.outcome_id, o.created_at AS at, o.reward_sign, o.agent_id, o.receipt_id, o.terminal,"
        " o.target_scope, w.old_weight_milli, w.new_weight_milli, w.transition_hash"
        " FROM outcomes o LEFT JOIN weight_projections w ON w.outcome_id = o.outcome_id"
        " WHERE o.memory_id = ? ORDER BY o.created_at, o.rowid",
        (memory_id,),
    )
    for s in steps:
        s["outcome"] = "good" if s.pop("reward_sign") > 0 else "bad"
    return {"start": start, "steps": steps}
