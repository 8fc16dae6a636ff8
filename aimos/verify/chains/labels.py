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

import json
from collections import defaultdict
from typing import Any

from aimos.crypto.canonical import json_loads
from aimos.errors import AimosError
from aimos.ledger.events import body_sql
from aimos.store.connection import Connection, rows
from aimos.verify.kit.inheritance import Floor, Order, Predecessor, predecessor_at, signed_classification
from aimos.verify.kit.judgment import judgment_reason
from aimos.vocabulary import (
    BASIS_EXPLICIT,
    HOUSEKEEPER,
    OPERATION_EPISTEMIC_CLASSIFIED,
    OPERATION_MEMORY_SAVED,
    UNVERIFIED,
)

BATCH = 500

_SQL = """
SELECT c.*, aimos_epistemic_hash(c.memory_id, c.label, c.confidence_milli, c.live_content_hash,
                                 c.authority_mutation_hash, c.prev_classification_hash) AS g_recomputed,
       e.mutation_hash AS e_mutation_hash, e.operation AS e_operation, e.subject_memory_id AS e_subject,
       e.signed_body AS e_body, i.role AS e_role,
       aimos_ed25519_verify(i.public_key_b64u, aimos_payload_message(e.signed_body, e.nonce, e.ts_signed),
                            e.signature_b64u) AS e_sig_ok
FROM memory_classifications c
LEFT JOIN events e ON e.event_id = c.authority_event_id
LEFT JOIN identity_epochs i ON i.agent_id = e.signer_agent_id AND i.valid_from = e.signer_valid_from
WHERE c.memory_id IN ({ids})
ORDER BY c.memory_id, c.rowid
"""


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
        or r["e_operation"] != OPERATION_EPISTEMIC_CLASSIFIED
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
    for r in rows(
        conn,
        f"SELECT subject_memory_id, CAST({body_sql(conn)} AS BLOB) AS signed_body, signer_agent_id,"
        " signer_valid_from, ledger_seq FROM events"
        f" WHERE subject_memory_id IN ({','.join('?' * len(ids))}) AND +operation = ?",
        (*ids, OPERATION_MEMORY_SAVED),
    ):
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
    for r in rows(
        conn,
        "SELECT ids.value AS subject, CAST(e.signed_body AS BLOB) AS signed_body, e.mutation_hash,"
        " e.signer_agent_id, e.signer_valid_from, e.ledger_seq FROM json_each(?) ids CROSS JOIN events e"
        " WHERE e.operation = ? AND json_extract(e.signed_body, '$.subject_memory_id') = ids.value",
        (json.dumps(sorted({old for _order, old in saved.values()})), OPERATION_EPISTEMIC_CLASSIFIED),
    ):
        meta = _signed_meta(r["signed_body"])
        if r["signer_agent_id"] != HOUSEKEEPER or meta is None or meta.get("memory_id") != r["subject"]:
            continue
        found = signed_classification(meta, r["mutation_hash"])
        if found is not None:
            classified[r["subject"]].append(((r["signer_valid_from"], r["ledger_seq"]), *found))
    return {mid: predecessor_at(old, classified.get(old, []), moment) for mid, (moment, old) in saved.items()}


def label_chain_reasons(
    conn: Connection, memories: list[dict[str, Any]]
) -> dict[str, tuple[str | None, int, str]]:
    """memory_id -> (first failing reason or None, chain length, the label the chain ends in)."""
    out: dict[str, tuple[str | None, int, str]] = {}
    master = rows(conn, "SELECT public_key_b64u FROM master_identity")
    master_public_key = str(master[0]["public_key_b64u"]) if master else ""
    for start in range(0, len(memories), BATCH):
        batch = memories[start : start + BATCH]
        ids = [m["memory_id"] for m in batch]
        marks = ",".join("?" * len(ids))
        by_memory: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in rows(conn, _SQL.format(ids=marks), ids):
            by_memory[r["memory_id"]].append(r)
        # every signed classification event must have its row: a chain cut short (rows deleted,
        # the projection rolled back to what is left) still leaves the signed events behind
        signed: dict[str, set[str]] = defaultdict(set)
        # found by the subject the housekeeper signed, not the subject column (which an edit could
        # point at another memory along with the rows): migration 6's expression index
        for r in rows(
            conn,
            "SELECT ids.value AS subject, e.event_id FROM json_each(?) ids CROSS JOIN events e"
            " WHERE e.operation = 'memory_epistemic_classified'"
            " AND json_extract(e.signed_body, '$.subject_memory_id') = ids.value",
            (json.dumps(ids),),
        ):
            signed[r["subject"]].add(r["event_id"])
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
    for r in rows(
        conn,
        "SELECT c.*, e.signed_body FROM memory_classifications c JOIN events e"
        " ON e.event_id = c.authority_event_id WHERE c.memory_id = ? ORDER BY c.rowid",
        (memory_id,),
    ):
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
