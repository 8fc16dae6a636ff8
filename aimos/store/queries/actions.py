"""The SQL of the commands' actions: a memory's row and its supersession neighbours for a
redaction, the newest seal, the search indexes merged, and whether an import's memory is here."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from aimos.store.connection import Connection, one


def memory_record(conn: Connection, memory_id: str) -> dict[str, Any] | None:
    """The memory's row as stored, every column."""
    return one(conn, "SELECT * FROM memories WHERE memory_id = ?", (memory_id,))


def newest_seal_seq(conn: Connection) -> int | None:
    """The newest seal's number (None: the brain holds no seal)."""
    seal = conn.execute("SELECT MAX(seq) FROM brain_seals").fetchall()[0][0]
    return None if seal is None else int(str(seal))


def supersessions_of(conn: Connection, memory_id: str) -> list[tuple[str, str]]:
    """(old, new) of every supersession the memory is in, either side."""
    return [
        (str(old), str(new))
        for old, new in conn.execute(
            "SELECT old_memory_id, new_memory_id FROM memory_supersessions"
            " WHERE old_memory_id = ? OR new_memory_id = ?",
            (memory_id, memory_id),
        )
    ]


def optimize_indexes(conn: Connection, tables: Iterable[str]) -> None:
    """Merge each full-text index's segments (FTS5 'optimize'; the tables are the code's own)."""
    for table in tables:
        conn.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")


def live_hash_here(conn: Connection, company_id: str, live_content_hash: str) -> bool:
    """Whether a memory of the company with this live content hash is in the brain."""
    return bool(
        conn.execute(
            "SELECT 1 FROM memories WHERE company_id = ? AND live_content_hash = ?",
            (company_id, live_content_hash),
        ).fetchone()
    )
