"""A memory's redaction (aimos/memory/redaction.py): the master's stored records, the two rows that
hold a memory's text, and the two row changes migrations 8 and 13 allow once a record is in."""

from __future__ import annotations

from typing import Any, TypedDict, cast

from aimos.store.connection import Connection, one, rows
from aimos.store.seals import REDACTIONS, TableShape


class StoredRecord(TypedDict):
    """A stored redaction record: its id, its text and the master's signature."""

    redaction_id: str
    record_json: str
    signature_b64u: str


class RecordText(TypedDict):
    memory_id: str
    record_json: str


class HeldMemory(TypedDict):
    """The memory row that holds a memory's text."""

    rowid: int
    memory_id: str
    company_id: str
    live_content_hash: str
    save_provenance_id: str
    save_mutation_hash: str


class SaveNode(TypedDict):
    """The save provenance node that holds a memory's signed save body."""

    rowid: int
    body_json: str
    content_hash: str
    mutation_hash: str


class MasterKey(TypedDict):
    public_key_b64u: str
    fingerprint: str


class RedactionRow(TypedDict):
    redaction_id: str
    memory_id: str
    company_id: str
    record_json: str
    signature_b64u: str
    created_at: int


def record_of(conn: Connection, memory_id: str) -> StoredRecord | None:
    """The memory's stored redaction record, or None (its text is there)."""
    return one(
        conn,
        f"SELECT redaction_id, record_json, signature_b64u FROM {REDACTIONS} WHERE memory_id = ?",
        (memory_id,),
        row=StoredRecord,
    )


def stored_records(conn: Connection) -> list[dict[str, Any]]:
    """Every stored record (redaction_id, memory_id, record_json, signature_b64u), oldest first."""
    return rows(
        conn,
        f"SELECT redaction_id, memory_id, record_json, signature_b64u FROM {REDACTIONS} ORDER BY rowid",
    )


def records_of(conn: Connection, memory_ids: list[str]) -> list[RecordText]:
    """The record texts of those of these memories that are redacted."""
    marks = ", ".join("?" * len(memory_ids))
    return rows(
        conn,
        f"SELECT memory_id, record_json FROM {REDACTIONS} WHERE memory_id IN ({marks})",
        tuple(memory_ids),
        row=RecordText,
    )


def held_memory(conn: Connection, memory_id: str) -> HeldMemory | None:
    return one(conn, _HELD, (memory_id,), row=HeldMemory)


def save_node(conn: Connection, provenance_id: str) -> SaveNode | None:
    return one(conn, _SAVE_NODE, (provenance_id,), row=SaveNode)


_HELD = (
    "SELECT rowid, memory_id, company_id, live_content_hash, save_provenance_id, save_mutation_hash"
    " FROM memories WHERE memory_id = ?"
)
_SAVE_NODE = (
    "SELECT rowid, body_json, content_hash, mutation_hash FROM memory_provenance WHERE provenance_id = ?"
)


def sealed_row(conn: Connection, shape: TableShape, rowid: int) -> tuple[Any, ...] | None:
    """The row as the seal reads it (``shape.select``), or None."""
    found = conn.execute(shape.select() + " WHERE rowid = ?", (rowid,)).fetchall()
    return tuple(found[0]) if found else None


def master_key(conn: Connection) -> MasterKey | None:
    return one(conn, "SELECT public_key_b64u, fingerprint FROM master_identity", row=MasterKey)


def brain_id(conn: Connection) -> str | None:
    found = one(conn, "SELECT value FROM brain_meta WHERE key = 'brain_id'")
    return None if found is None else cast(str, found["value"])


def insert_record(conn: Connection, row: RedactionRow) -> None:
    conn.execute(
        f"INSERT INTO {REDACTIONS} (redaction_id, memory_id, company_id, record_json, signature_b64u,"
        " created_at) VALUES (:redaction_id, :memory_id, :company_id, :record_json, :signature_b64u,"
        " :created_at)",
        row,
    )


def save_body(conn: Connection, provenance_id: str) -> str | None:
    """The signed save body a provenance node holds, or None (no such node)."""
    found = one(conn, "SELECT body_json FROM memory_provenance WHERE provenance_id = ?", (provenance_id,))
    return None if found is None else cast(str, found["body_json"])


def remove_text(
    conn: Connection, memory_id: str, cells: dict[str, str | None], body_text: str, provenance_id: str
) -> None:
    """The two changes a stored record allows: the memory row's ``cells`` (column -> what stands
    in the removed text's place) and its save node's body."""
    conn.execute(
        f"UPDATE memories SET {', '.join(f'{column} = ?' for column in cells)} WHERE memory_id = ?",
        (*cells.values(), memory_id),
    )
    conn.execute(
        "UPDATE memory_provenance SET body_json = ? WHERE provenance_id = ?", (body_text, provenance_id)
    )


def rowids_of(conn: Connection, memory_id: str) -> list[int]:
    found = conn.execute("SELECT rowid FROM memories WHERE memory_id = ?", (memory_id,)).fetchall()
    return [int(str(rowid)) for (rowid,) in found]
