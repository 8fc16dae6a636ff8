"""The SQL of aimos/eval (and of the TUI's benchmark, which builds its brain with eval's builder):
what the evaluations read of a scratch brain (its bytes as SQLite holds them, the rows a figure
counts), the file of cached embeddings, and the bare durable commit a signed write is set beside.
The mutation suite's edits of a brain are in store/queries/eval_mutation.py."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

from aimos.store.connection import Connection, rows


def checkpoint(conn: Connection, mode: Literal["PASSIVE", "TRUNCATE"] = "TRUNCATE") -> None:
    """Move the WAL into the brain file (TRUNCATE: and empty the WAL), so the file alone is the
    brain and its size on disk is the brain's."""
    conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchall()


def brain_bytes(conn: Connection) -> int:
    """The brain's size as SQLite holds it (its pages, the WAL's newest copies included)."""
    pages: Any = conn.execute("PRAGMA page_count").fetchall()[0][0]
    size: Any = conn.execute("PRAGMA page_size").fetchall()[0][0]
    return int(pages) * int(size)


class SchemaObject(NamedTuple):
    """A table, index or trigger of the brain's schema (sqlite_master)."""

    name: str
    table: str
    type: str
    sql: str | None


def schema_objects(conn: Connection) -> list[SchemaObject]:
    return [
        SchemaObject(str(name), str(table), str(kind), None if sql is None else str(sql))
        for name, table, kind, sql in conn.execute("SELECT name, tbl_name, type, sql FROM sqlite_master")
    ]


class PageUse(NamedTuple):
    """What one table or index takes (SQLite's dbstat): its pages and its records' payload, in bytes."""

    name: str
    pages: int
    payload: int


def page_use(conn: Connection) -> list[PageUse]:
    return [
        PageUse(str(name), int(pages or 0), int(payload or 0))
        for name, pages, payload in conn.execute(
            "SELECT name, SUM(pgsize), SUM(payload) FROM dbstat GROUP BY name"
        )
    ]


class VectorBytes(NamedTuple):
    """The memory vectors' rows, and the pages and payload of memory_vectors and its indexes."""

    rows: int
    pages: int
    payload: int


def vector_bytes(conn: Connection) -> VectorBytes:
    count = int(str(conn.execute("SELECT COUNT(*) FROM memory_vectors").fetchall()[0][0]))
    pages, payload = conn.execute(
        "SELECT SUM(pgsize), SUM(payload) FROM dbstat"
        " WHERE name = 'memory_vectors' OR name IN"
        " (SELECT name FROM sqlite_schema WHERE tbl_name = 'memory_vectors' AND type = 'index')"
    ).fetchall()[0]
    return VectorBytes(count, int(str(pages or 0)), int(str(payload or 0)))


def memory_ids_by_rowid(conn: Connection) -> dict[int, str]:
    """Every memory's id by its rowid (the search indexes rank rowids)."""
    return {int(r): str(m) for r, m in conn.execute("SELECT rowid, memory_id FROM memories")}


def memory_ids(conn: Connection) -> list[str]:
    return [str(r["memory_id"]) for r in rows(conn, "SELECT memory_id FROM memories")]


def memories_by_id(conn: Connection, ids: Sequence[str]) -> list[dict[str, Any]]:
    """The memories rows (``SELECT *``) of ``ids``, in the order the brain keeps them."""
    marks = ", ".join("?" * len(ids))
    return rows(conn, f"SELECT * FROM memories WHERE memory_id IN ({marks})", list(ids))


def labels_of(conn: Connection, ids: Sequence[str]) -> dict[str, str]:
    """The epistemic label of each of ``ids`` the brain holds."""
    marks = ",".join("?" * len(ids))
    found = conn.execute(f"SELECT memory_id, epistemic_label FROM memories WHERE memory_id IN ({marks})", ids)
    return {str(m): str(label) for m, label in found}


def adverse_by_memory(conn: Connection, adverse: Iterable[str]) -> list[tuple[str, bool]]:
    """Every memory's id and whether its label is one of ``adverse``."""
    labels = sorted(adverse)
    marks = ",".join("?" * len(labels))
    found = conn.execute(f"SELECT memory_id, epistemic_label IN ({marks}) FROM memories", labels).fetchall()
    return [(str(m), bool(flag)) for m, flag in found]


def classification_count(conn: Connection, memory_id: str) -> int:
    count: Any = conn.execute(
        "SELECT COUNT(*) FROM memory_classifications WHERE memory_id = ?", (memory_id,)
    ).fetchall()[0][0]
    return int(count)


# --- the evaluations' cache of embeddings (a file of its own, outside any brain) ----------------


def make_vector_table(conn: Connection) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, kind TEXT NOT NULL,"
        " sha256 TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (model, kind, sha256))"
    )


def cached_vectors(conn: Connection, model: str, kind: str, sha256: str) -> list[object]:
    """What the cache holds for one text (at most one value, unchecked: the caller checks its size)."""
    found = conn.execute(
        "SELECT vector FROM vectors WHERE model = ? AND kind = ? AND sha256 = ?", (model, kind, sha256)
    )
    return [blob for (blob,) in found]


def keep_vectors(conn: Connection, model: str, kind: str, made: Iterable[tuple[str, bytes]]) -> None:
    """Add (sha256, vector) of texts to the cache, in one transaction."""
    with conn:
        for sha256, vector in made:
            conn.execute("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", (model, kind, sha256, vector))


# --- the bare durable commit (no aimos: what SQLite alone pays for a synchronous commit) -----------


def open_bare_commit(path: Path, tables: Sequence[str]) -> Connection:
    """A scratch database at ``path`` (WAL, synchronous=FULL) with ``tables`` of one text column."""
    conn = Connection(str(path))
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    for table in tables:
        conn.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
    return conn


def bare_commit(conn: Connection, tables: Sequence[str], body: str) -> None:
    """One durable transaction adding ``body`` to each of ``tables``."""
    conn.execute("BEGIN IMMEDIATE")
    for table in tables:
        conn.execute(f"INSERT INTO {table} (body) VALUES (?)", (body,))
    conn.execute("COMMIT")
