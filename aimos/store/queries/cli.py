"""The SQL the CLI asks itself (reads with no domain package of their own)."""

from __future__ import annotations

from typing import TypedDict

from aimos.store.connection import Connection, rows


class ReceiptListRow(TypedDict):
    receipt_id: str
    agent_id: str
    result_count: int
    merkle_root: str
    created_at: int
    query: str | None


def recent_receipts(conn: Connection, limit: int) -> list[ReceiptListRow]:
    """The newest ``limit`` recall receipts, newest first, each with the query it answered."""
    return rows(
        conn,
        "SELECT receipt_id, agent_id, result_count, merkle_root, created_at,"
        " json_extract(command, '$.query') AS query"
        " FROM recall_receipts ORDER BY created_at DESC, rowid DESC LIMIT ?",
        (limit,),
        row=ReceiptListRow,
    )
