"""Weight chains as the brain holds them, re-checked with the writer's registered SQL functions.

Shared by disclosure verification (before a weight is shown or signed into a receipt) and by the
in-database verifier: h_i and t_i recomputed, transition and REWEIGHT signatures, single genesis
(1000 or a signed baseline), forks, disconnected rows, continuity, bounds, company, signer epoch,
revocation, window and terminal fidelity. Reasons use the reference's names.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from aimos.crypto.canonical import json_loads
from aimos.store.connection import Connection
from aimos.store.queries import chains as q
from aimos.store.queries.ledger import provenance_body_sql
from aimos.store.seals import sealed_tables
from aimos.vocabulary import HOUSEKEEPER, REWEIGHT_EVENT


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
            r["p_event_type"] != REWEIGHT_EVENT
            or body.get("event_type") != REWEIGHT_EVENT
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
    chains: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in q.projection_rows(conn, ids, provenance_body_sql(conn, "p")):
        chains[r["memory_id"]].append(r)
    baselines = {r["memory_id"]: r for r in q.baseline_rows(conn, ids)}
    # every REWEIGHT node signed for the memory (found by its signed body, migration 6's expression
    # index, for a body kept as text; a compact body names its row's memory_id, migration 18) must
    # be in its chain: a chain moved to another memory leaves its signed nodes behind
    compact = "body_json" in dict(sealed_tables(conn)["memory_provenance"].stored)
    signed_nodes = q.signed_reweights(conn, ids, compact)
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
    baseline = q.baseline_start(conn, memory_id)
    created = q.created_at(conn, memory_id)
    start = {
        "at": baseline[0]["observed_at"] if baseline else (created[0]["created_at"] if created else None),
        "weight_milli": baseline[0]["observed_weight_milli"] if baseline else 1000,
        "basis": "signed baseline" if baseline else "default",
    }
    steps = q.weight_steps(conn, memory_id)
    for s in steps:
        s["outcome"] = "good" if s.pop("reward_sign") > 0 else "bad"
    return {"start": start, "steps": steps}
