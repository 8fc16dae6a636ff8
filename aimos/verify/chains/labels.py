"""Label (classification) chains as the brain holds them, re-checked in SQL with the writer's
registered functions. Shared by disclosure verification and the in-database verifier.

Per memory: rows in write order must form one chain from a single genesis (prev NULL), each g_j
recomputed, each bound to the housekeeper's signed `memory_epistemic_classified` event (signature
re-verified) and to the memory's live content; a corrected version never more trusting than the
label it carries from the version it corrects (verify/kit/inheritance.py:
`correction_lifted_judgment`); the memory's live label must be the newest row's label, or
`unverified` when there is none.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from aimos.crypto.canonical import json_loads
from aimos.errors import AimosError
from aimos.store.connection import Connection
from aimos.store.queries import chains as q
from aimos.store.queries.ledger import body_sql
from aimos.verify.kit.inheritance import Floor, Order, Predecessor, predecessor_at, signed_classification
from aimos.verify.kit.judgment import judgment_reason
from aimos.vocabulary import (
    BASIS_EXPLICIT,
    EPISTEMIC_CLASSIFIED_OPERATION,
    HOUSEKEEPER,
    MEMORY_SAVED_OPERATION,
    UNVERIFIED,
)

BATCH = 500


def _signed_meta(signed_body: object) -> dict[str, Any] | None:
    """The metadata of an event's signed body (text, or its bytes: a body whose bytes are not
    UTF-8 holds none here, and the checks that read it whole name it), or None when it holds none."""
    try:
        text = signed_body.decode("utf-8") if isinstance(signed_body, bytes) else str(signed_body)
        body = json_loads(text)
    except (AimosError, ValueError):
        return None
    meta = body.get("metadata") if isinstance(body, dict) else None
    return meta if isinstance(meta, dict) else None


def _row_reason(
    r: dict[str, Any], memory: dict[str, Any], previous_label: str, master_public_key: str, floor: Floor
) -> str | None:
    if r["g_recomputed"] != r["classification_hash"]:
        return "epistemic_hash_invalid"
    if r["live_content_hash"] != memory["live_content_hash"]:
        return "epistemic_live_content_mismatch"
    if (
        r["e_mutation_hash"] != r["authority_mutation_hash"]
        or r["e_operation"] != EPISTEMIC_CLASSIFIED_OPERATION
        or r["e_subject"] != r["memory_id"]
        or r["e_role"] != HOUSEKEEPER
        or r["e_sig_ok"] != 1
    ):
        return "epistemic_authority_invalid"
    meta = _signed_meta(r["e_body"]) or {}
    if (
        meta.get("label") != r["label"]
        or meta.get("basis") != r["basis"]
        or meta.get("memory_id") != r["memory_id"]
        or meta.get("confidence_milli") != r["confidence_milli"]
        or meta.get("live_content_hash") != r["live_content_hash"]
        or meta.get("prev_classification_hash") != r["prev_classification_hash"]
    ):
        return "epistemic_authority_invalid"
    master_signed = False
    if r["basis"] == BASIS_EXPLICIT:
        reason = judgment_reason(meta, r["memory_id"], previous_label, master_public_key)
        if reason:
            return reason
        evidence = meta.get("evidence")
        master_signed = isinstance(evidence, dict) and evidence.get("master_signature_b64u") is not None
    # a classifier row's label is one the classifier gives, or the judgment a correction carries;
    # a corrected version is never more trusting than what it carries (verify/kit/inheritance.py)
    return floor.row(meta, master_signed=master_signed)


def predecessors(conn: Connection, ids: list[str]) -> dict[str, Predecessor]:
    """memory_id -> the version it corrects as that version stood at the moment of the correction,
    for the corrections among ``ids``: read from what the housekeeper signed (the new version's
    memory_saved event names the old one and orders the moment; the old one's classification
    events give its label and g then), as the portable verifier reads the exported events."""
    saved: dict[str, tuple[Order, str]] = {}
    for r in q.signed_saves(conn, ids, body_sql(conn), MEMORY_SAVED_OPERATION):
        meta = _signed_meta(r["signed_body"])
        if (
            r["signer_agent_id"] != HOUSEKEEPER
            or meta is None
            or meta.get("memory_id") != r["subject_memory_id"]
        ):
            continue
        old, order = meta.get("supersedes"), (r["signer_valid_from"], r["ledger_seq"])
        mid = r["subject_memory_id"]
        if isinstance(old, str) and (mid not in saved or order < saved[mid][0]):
            saved[mid] = (order, old)
    if not saved:
        return {}
    classified: dict[str, list[tuple[Order, str, str]]] = defaultdict(list)
    for c in q.signed_classifications(
        conn, sorted({old for _order, old in saved.values()}), EPISTEMIC_CLASSIFIED_OPERATION
    ):
        meta = _signed_meta(c["signed_body"])
        if c["signer_agent_id"] != HOUSEKEEPER or meta is None or meta.get("memory_id") != c["subject"]:
            continue
        found = signed_classification(meta, c["mutation_hash"])
        if found is not None:
            classified[c["subject"]].append(((c["signer_valid_from"], c["ledger_seq"]), *found))
    return {mid: predecessor_at(old, classified.get(old, []), moment) for mid, (moment, old) in saved.items()}


def label_chain_reasons(
    conn: Connection, memories: list[dict[str, Any]]
) -> dict[str, tuple[str | None, int, str]]:
    """memory_id -> (first failing reason or None, chain length, the label the chain ends in)."""
    out: dict[str, tuple[str | None, int, str]] = {}
    master_public_key = q.master_public_key(conn)
    for start in range(0, len(memories), BATCH):
        batch = memories[start : start + BATCH]
        ids = [m["memory_id"] for m in batch]
        by_memory: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in q.classification_rows(conn, ids):
            by_memory[r["memory_id"]].append(r)
        # every signed classification event must have its row: a chain cut short (rows deleted,
        # the projection rolled back to what is left) still leaves the signed events behind
        signed: dict[str, set[str]] = defaultdict(set)
        # found by the subject the housekeeper signed, not the subject column (which an edit could
        # point at another memory along with the rows): migration 6's expression index
        for e in q.classification_events(conn, ids):
            signed[e["subject"]].add(e["event_id"])
        corrected = predecessors(conn, ids)
        for m in batch:
            chain = by_memory.get(m["memory_id"], [])
            reason: str | None = None
            prev: str | None = None
            prev_label = UNVERIFIED
            floor = Floor(corrected.get(m["memory_id"]))
            for r in chain:
                if r["prev_classification_hash"] != prev:
                    reason = "fork_or_disconnected_history"
                    break
                reason = _row_reason(r, m, prev_label, master_public_key, floor)
                if reason:
                    break
                prev, prev_label = r["classification_hash"], r["label"]
            if reason is None:
                reason = floor.end(len(chain))
            ends_in = chain[-1]["label"] if chain else UNVERIFIED
            if reason is None and m["epistemic_label"] != ends_in:
                reason = "unbacked_projection"
            backed = {r["authority_event_id"] for r in chain}
            if reason is None and signed.get(m["memory_id"], set()) != backed:
                reason = "fork_or_disconnected_history"
            out[m["memory_id"]] = (reason, len(chain), ends_in)
    return out


def label_history(conn: Connection, memory_id: str) -> list[dict[str, Any]]:
    """Every classification of a memory, oldest first, with who signed it and why."""
    history = []
    for r in q.classification_history(conn, memory_id):
        meta = json_loads(r["signed_body"]).get("metadata") or {}
        history.append(
            {
                "label": r["label"],
                "confidence_milli": r["confidence_milli"],
                "basis": r["basis"],
                "created_at": r["created_at"],
                "classification_hash": r["classification_hash"],
                "authority_event_id": r["authority_event_id"],
                "reason": meta.get("reason"),
                "evidence": meta.get("evidence"),
                "signals": meta.get("signals"),
            }
        )
    return history
