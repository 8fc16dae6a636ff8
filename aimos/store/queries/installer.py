"""The installer's SQL: whether a brain is installed (or an install never finished) and the
brain's metadata an install writes."""

from __future__ import annotations

from aimos.store.connection import Connection, one


def installed_ids(conn: Connection) -> tuple[str | None, bool]:
    """(the brain id in brain_meta, whether a master identity is there)."""
    row = one(conn, "SELECT value FROM brain_meta WHERE key = 'brain_id'")
    master = one(conn, "SELECT fingerprint FROM master_identity")
    return (None if row is None else str(row["value"])), master is not None


def table_names(conn: Connection) -> set[str]:
    """The names of the file's tables (engine errors as they are: the caller tolerates them)."""
    return {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def master_count(conn: Connection) -> int:
    """The rows of master_identity (engine errors as they are)."""
    return int(str(conn.execute("SELECT COUNT(*) FROM master_identity").fetchall()[0][0]))


def insert_brain_meta(conn: Connection, meta: dict[str, str]) -> None:
    """brain_meta's rows, key -> value, in the given order."""
    conn.executemany("INSERT INTO brain_meta (key, value) VALUES (?, ?)", list(meta.items()))
