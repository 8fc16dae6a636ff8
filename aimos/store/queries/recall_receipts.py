"""The SQL of recall receipts and their V2 envelopes (aimos/recall/receipts.py,
aimos/recall/envelope.py): the stored receipt, and the signed rows its documents carry."""

from __future__ import annotations

from typing import Any, TypedDict

from aimos.store.connection import Connection, insert, one
from aimos.store.queries.recall import EventRow, GrantRow, ReceiptRow


class EpochKey(TypedDict):
    """An identity epoch's public key and certificate."""

    agent_id: str
    valid_from: int
    public_key_b64u: str
    certificate: str


class Revocation(TypedDict):
    revoked_at: int


def insert_receipt(conn: Connection, row: dict[str, Any]) -> None:
    """Store a recall receipt (column -> value)."""
    insert(conn, "recall_receipts", row)


def receipt_row(conn: Connection, receipt_id: str) -> ReceiptRow | None:
    return one(conn, "SELECT * FROM recall_receipts WHERE receipt_id = ?", (receipt_id,))


def grant_row(conn: Connection, mutation_hash: str) -> GrantRow | None:
    """The recall grant with this mutation hash, or None."""
    return one(conn, "SELECT * FROM recall_grants WHERE mutation_hash = ?", (mutation_hash,))


def event_row(conn: Connection, event_id: str) -> EventRow | None:
    """The events row as stored (read_event reads its body), or None."""
    return one(conn, "SELECT * FROM events WHERE event_id = ?", (event_id,))


def epoch_key(conn: Connection, agent_id: str, valid_from: int) -> EpochKey | None:
    return one(
        conn,
        "SELECT agent_id, valid_from, public_key_b64u, certificate FROM identity_epochs"
        " WHERE agent_id = ? AND valid_from = ?",
        (agent_id, valid_from),
        row=EpochKey,
    )


def revocation(conn: Connection, agent_id: str, valid_from: int) -> Revocation | None:
    """When the identity epoch was revoked, or None when it was not."""
    return one(
        conn,
        "SELECT revoked_at FROM agent_revocations WHERE agent_id = ? AND agent_valid_from = ?",
        (agent_id, valid_from),
        row=Revocation,
    )


def bound_event_row(
    conn: Connection, native_event_id: str, body: str, operation: str, profile: str
) -> EventRow | None:
    """The events row (as stored) that the same signer appended within four ledger positions after
    the native event, of ``operation``, whose signed body (``body``: the SQL that reads an events
    row ``v``'s body, ledger.events.body_sql) names the native event as its parent and ``profile``
    as its metadata's."""
    return one(
        conn,
        "SELECT v.* FROM events n JOIN events v"
        " ON v.signer_agent_id = n.signer_agent_id AND v.signer_valid_from = n.signer_valid_from"
        " AND v.ledger_seq BETWEEN n.ledger_seq + 1 AND n.ledger_seq + 4"
        " WHERE n.event_id = ? AND v.operation = ?"
        f" AND json_extract({body}, '$.parent_event_id') = n.event_id"
        f" AND json_extract({body}, '$.metadata.profile') = ? ORDER BY v.ledger_seq LIMIT 1",
        (native_event_id, operation, profile),
    )
