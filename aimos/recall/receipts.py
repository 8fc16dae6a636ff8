"""Recall receipts: evidence entries, their RFC 6962 root, the housekeeper-signed
`recall_receipt` event, storage, export and in-brain verification."""

from __future__ import annotations

import uuid
from typing import Any

from aimos.crypto.canonical import canonical_sha256_hex, canonical_text, json_loads
from aimos.crypto.merkle import merkle_root
from aimos.errors import AimosError, DamagedBrainError, JSONDepthError, ReceiptNotFoundError
from aimos.identity.master import master_row
from aimos.identity.signer import Signer
from aimos.ledger.events import append_event, read_event
from aimos.recall.disclosure import Disclosed, verify_for_disclosure
from aimos.recall.policy import Scored
from aimos.store.cells import deflate_text, stored_text
from aimos.store.connection import Connection, resolve_uuid_prefix
from aimos.store.queries.recall import memory_row
from aimos.store.queries.recall_receipts import epoch_key, event_row, grant_row, insert_receipt, receipt_row
from aimos.vocabulary import HOUSEKEEPER, PATH_RECALL, RECALL_RECEIPT_OPERATION, REQUEST_METHOD
from aimos.vocabulary import RECALL_RECEIPT_SCHEMA as RECEIPT_SCHEMA

# the columns of a signed, chained row (a grant, an event) that a receipt document carries
SIGNED_ROW_FIELDS = (
    "signed_body",
    "content_hash",
    "nonce",
    "ts_signed",
    "signature_b64u",
    "prev_mutation_hash",
    "mutation_hash",
)


def evidence_entry(ordinal: int, s: Scored, d: Disclosed) -> dict[str, Any]:
    c = s.candidate
    return {
        "ordinal": ordinal,
        "memory_id": d.memory_id,
        "live_content_hash": d.live_content_hash,
        "save_mutation_hash": d.save_mutation_hash,
        "binding_mutation_hash": d.binding_mutation_hash,
        "version_state": d.version_state,
        "weight_milli": c.weight_milli,
        "label": c.label,
        "relevance": round(c.relevance, 6),
        "trust": round(s.trust.multiplier, 6),
        "score": round(s.effective, 6),
    }


def record_receipt(
    conn: Connection,
    housekeeper: Signer,
    *,
    company_id: str,
    agent_id: str,
    agent_valid_from: int,
    request: dict[str, Any],
    request_hash: str,
    command: dict[str, Any],
    grant_mutation_hash: str,
    evidence: list[dict[str, Any]],
    decision: dict[str, Any],
    decision_canonical: str,
    decision_sha256: str,
    now: int,
) -> dict[str, Any]:
    """Sign the `recall_receipt` event and store the receipt (inside the recall's transaction).
    ``decision_canonical`` is ``decision``'s canonical JSON, as policy.decide hashed it."""
    receipt_id = str(uuid.uuid4())
    root = merkle_root(evidence).hex()
    command_hash = canonical_sha256_hex(command)
    metadata = {
        "receipt_id": receipt_id,
        "request_hash": request_hash,
        "command_hash": command_hash,
        "grant_mutation_hash": grant_mutation_hash,
        "merkle_root": root,
        "result_count": len(evidence),
        "evidence": evidence,
        "decision_sha256": decision_sha256,
        "withheld_memory_ids": [w["memory_id"] for w in decision["withheld"]],
        "abstained": decision["abstained"],
    }
    event = append_event(
        conn,
        housekeeper,
        operation=RECALL_RECEIPT_OPERATION,
        company_id=company_id,
        metadata=metadata,
        now=now,
        actor_agent_id=agent_id,
        actor_valid_from=agent_valid_from,
    )
    row = {
        "receipt_id": receipt_id,
        "company_id": company_id,
        "agent_id": agent_id,
        "agent_valid_from": agent_valid_from,
        "request_body": canonical_text(request["body"]),
        "request_hash": request_hash,
        "request_nonce": request["nonce"],
        "request_ts": request["ts_signed"],
        "request_signature_b64u": request["signature_b64u"],
        "command": canonical_text(command),
        "command_hash": command_hash,
        "grant_mutation_hash": grant_mutation_hash,
        "merkle_root": root,
        "result_count": len(evidence),
        "evidence": canonical_text(evidence),
        "decision": "",  # stored once, deflated (migration 11); hashed and sealed as the text
        "decision_sha256": decision_sha256,
        "event_id": event["event_id"],
        "created_at": now,
        "decision_deflated": deflate_text(decision_canonical),
    }
    insert_receipt(conn, row)
    return row


def resolve_receipt_id(conn: Connection, ref: str) -> str:
    return resolve_uuid_prefix(
        conn,
        ref,
        table="recall_receipts",
        column="receipt_id",
        what="recall receipt",
        not_found=ReceiptNotFoundError,
    )


def _stored_json(receipt_id: str, column: str, text: str | None) -> Any:
    """A receipt's stored JSON column, parsed; a damaged one (not JSON, or a stored decision that
    does not read back) is named as damage, never shown as an internal error."""
    what = f"receipt {receipt_id}'s {column.replace('_', ' ')}"
    damaged = DamagedBrainError(
        f"{what} is not readable: the brain was changed outside aimos",
        where=(f"recall_receipts.{column} (receipt {receipt_id})",),
    )
    if text is None:
        raise damaged
    try:
        return json_loads(text, what=what)
    except JSONDepthError:
        raise  # its own refusal: nested past the canonical limit (exit 4)
    except ValueError as exc:
        raise damaged from exc


def receipt_document(conn: Connection, ref: str) -> dict[str, Any]:
    """Everything needed to re-check a receipt offline (public material only)."""
    receipt_id = resolve_receipt_id(conn, ref)
    r = receipt_row(conn, receipt_id)
    assert r is not None
    found = event_row(conn, r["event_id"])
    assert found is not None
    event = read_event(found)
    hk = epoch_key(conn, event["signer_agent_id"], event["signer_valid_from"])
    agent = epoch_key(conn, r["agent_id"], r["agent_valid_from"])
    grant = grant_row(conn, r["grant_mutation_hash"])
    master = master_row(conn)
    return {
        "schema": RECEIPT_SCHEMA,
        "receipt_id": receipt_id,
        "company_id": r["company_id"],
        "created_at": r["created_at"],
        "merkle_root": r["merkle_root"],
        "result_count": r["result_count"],
        "evidence": _stored_json(receipt_id, "evidence", r["evidence"]),
        "decision": _stored_json(
            receipt_id, "decision", stored_text(r["decision"], r.get("decision_deflated"))
        ),
        "decision_sha256": r["decision_sha256"],
        "command": _stored_json(receipt_id, "command", r["command"]),
        "command_hash": r["command_hash"],
        "request": {
            "agent_id": r["agent_id"],
            "agent_valid_from": r["agent_valid_from"],
            "body": _stored_json(receipt_id, "request_body", r["request_body"]),
            "request_hash": r["request_hash"],
            "method": REQUEST_METHOD,
            "path": PATH_RECALL,
            "nonce": r["request_nonce"],
            "ts_signed": r["request_ts"],
            "signature_b64u": r["request_signature_b64u"],
            "certificate": agent["certificate"] if agent else None,
        },
        "grant": None if grant is None else {k: grant[k] for k in SIGNED_ROW_FIELDS},
        "event": {k: event[k] for k in ("event_id", *SIGNED_ROW_FIELDS)},
        HOUSEKEEPER: None
        if hk is None
        else {
            "valid_from": hk["valid_from"],
            "public_key_b64u": hk["public_key_b64u"],
            "certificate": hk["certificate"],
        },
        "master": {"fingerprint": master["fingerprint"], "public_key_b64u": master["public_key_b64u"]},
    }


def verify_receipt_in_brain(
    conn: Connection, ref: str, *, expected_master_fingerprint: str
) -> list[dict[str, Any]]:
    """Every check of the exported document against the fingerprint the caller trusts (never the
    brain's own), plus: the memories still verify and still hold the content it disclosed."""
    from aimos.verify.receipt import verify_receipt_document

    doc = receipt_document(conn, ref)
    checks = verify_receipt_document(doc, expected_master_fingerprint=expected_master_fingerprint)
    evidence = doc["evidence"]
    if not isinstance(evidence, list) or not all(
        isinstance(e, dict) and isinstance(e.get("memory_id"), str) for e in evidence
    ):  # altered outside aimos: a failed check, not a crash
        checks.append({"check": "evidence entries name their memories", "ok": False, "detail": "malformed"})
        return checks
    for entry in evidence:
        name = f"memory {entry['memory_id']} still verifies with the disclosed content"
        memory = memory_row(conn, entry["memory_id"])
        if memory is None:
            checks.append({"check": name, "ok": False, "detail": "memory missing"})
            continue
        try:
            d = verify_for_disclosure(conn, memory, allow_superseded=True)
        except AimosError as exc:
            checks.append({"check": name, "ok": False, "detail": exc.reason or exc.message})
            continue
        same = (
            d.live_content_hash == entry["live_content_hash"]
            and d.save_mutation_hash == entry["save_mutation_hash"]
        )
        checks.append(
            {"check": name, "ok": same, "detail": None if same else "content differs from the receipt"}
        )
    return checks
