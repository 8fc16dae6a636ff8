"""The SQL of recall's candidates (aimos/recall/candidates.py): the caller's scope over memory
rowids, the texts the lexical channel's boosts read, a question's next turn, and the search
indexes' rebuild and their check against a scratch rebuild.

The recall path's statements run on the connection as they always have (a cursor of tuples, no
per-row dict): recall is latency-measured."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

from aimos.store.connection import Connection
from aimos.store.words import TOKENIZE

# the scratch copy of an index the verifier fills is made with the options migration 12 gave it
FTS_OPTIONS = f"text, content = '', contentless_delete = 1, tokenize = \"{TOKENIZE}\""

# a current version: no supersession names it as the old one
_CURRENT = " AND NOT EXISTS (SELECT 1 FROM memory_supersessions s WHERE s.old_memory_id = m.memory_id)"


def scope_filter(
    company_id: str,
    clearance_ceiling: int,
    data_classes: Sequence[str],
    *,
    leave_out: tuple[str, Sequence[object]] | None = None,
    current_only: bool = True,
) -> tuple[str, list[object]]:
    """The condition on ``memories m`` of a recall's scope and its parameters: the company, the
    clearance ceiling, one of ``data_classes``, not ``leave_out`` (a condition and its parameters:
    aimos's guides), and only current versions when ``current_only``."""
    # The unary + keeps SQLite from scanning a company index: callers look rowids up.
    where = (
        "+m.company_id = ? AND +m.clearance_level <= ? AND +m.data_class IN ("
        + ", ".join("?" * len(data_classes))
        + ")"
    )
    params: list[object] = [company_id, clearance_ceiling, *data_classes]
    if leave_out is not None:
        where += f" AND NOT {leave_out[0]}"
        params += leave_out[1]
    if current_only:
        where += _CURRENT
    return where, params


def types_in_scope(
    conn: Connection, rowids: Sequence[int], where: str, params: Sequence[object]
) -> dict[int, str]:
    """rowid -> memory_type of the rowids (of those given) that the scope (``scope_filter``) admits."""
    placeholders = ", ".join("?" * len(rowids))
    sql = f"SELECT m.rowid, m.memory_type FROM memories m WHERE m.rowid IN ({placeholders}) AND {where}"
    return {int(r): str(t) for r, t in conn.execute(sql, [*rowids, *params])}


def scanned_texts(conn: Connection, rowids: Sequence[int], chars: int) -> list[tuple[int, str, str | None]]:
    """(rowid, the first ``chars`` of its key and value, the value's last 500 characters when the
    text is longer, else None) of each memory."""
    whole = "COALESCE(key || ' ', '') || value"
    return [
        (int(rowid), str(head), None if tail is None else str(tail))
        for rowid, head, tail in conn.execute(
            f"SELECT rowid, substr({whole}, 1, {chars}),"
            f" CASE WHEN length({whole}) > {chars} THEN substr(value, -500) END"
            f" FROM memories WHERE rowid IN ({', '.join('?' * len(rowids))})",
            rowids,
        )
    ]


def next_turns(conn: Connection, rowids: Sequence[int]) -> dict[int, int]:
    """rowid -> the rowid of the next memory of the same company, source and type, for those of
    ``rowids`` that have one."""
    return {
        int(q): int(n)
        for q, n in conn.execute(
            "SELECT q.rowid, (SELECT n.rowid FROM memories n WHERE n.company_id = q.company_id"
            " AND n.source = q.source AND n.memory_type = q.memory_type AND n.rowid > q.rowid"
            " ORDER BY n.rowid LIMIT 1)"
            f" FROM memories q WHERE q.rowid IN ({', '.join('?' * len(rowids))})",
            rowids,
        )
        if n is not None
    }


# --- the search indexes: rebuild and check -----------------------------------------------------------
def clear_index(conn: Connection, table: str) -> None:
    """Empty an FTS5 index (``table``, optionally schema-qualified)."""
    conn.execute(f"INSERT INTO {table} ({table.split('.')[-1]}) VALUES ('delete-all')")


def memories_to_index(conn: Connection) -> Iterator[tuple[int, str, str | None, str, str]]:
    """(rowid, company_id, source, memory_type, key and value as one text) of every memory, in
    rowid order, read as they are needed."""
    yield from conn.execute(
        "SELECT rowid, company_id, source, memory_type, COALESCE(key, '') || ' ' || value"
        " FROM main.memories ORDER BY rowid"
    )


def index_text_row(conn: Connection, table: str, rowid: int, text: str) -> None:
    """One row of an FTS5 index: a memory's rowid and its index text."""
    conn.execute(f"INSERT INTO {table} (rowid, text) VALUES (?, ?)", (rowid, text))


@contextlib.contextmanager
def snapshot(conn: Connection) -> Iterator[None]:
    """One read transaction over the block, rolled back at its end (what it made in temp goes)."""
    conn.execute("BEGIN")
    yield
    conn.execute("ROLLBACK")


def scratch_indexes(conn: Connection, tables: Sequence[str]) -> tuple[str, ...]:
    """Empty scratch copies (in temp) of the FTS5 ``tables``, and for each pair an fts5vocab
    instance view of the live index (``temp.NAME_live``) and of its copy (``temp.NAME_want``);
    returns the copies' names."""
    scratch = tuple(f"temp.check_{name}" for name in tables)
    for name, copy in zip(tables, scratch, strict=True):
        conn.execute(f"CREATE VIRTUAL TABLE {copy} USING fts5({FTS_OPTIONS})")
        conn.execute(f"CREATE VIRTUAL TABLE temp.{name}_live USING fts5vocab(main, {name}, instance)")
        conn.execute(
            f"CREATE VIRTUAL TABLE temp.{name}_want USING fts5vocab({copy.replace('.', ', ')}, instance)"
        )
    return scratch


def index_differences(conn: Connection, name: str, limit: int = 6) -> list[int]:
    """The rowids (up to ``limit``, in order) whose indexed tokens differ between the live index
    ``name`` and its scratch rebuild (``scratch_indexes``)."""
    live, want = f"temp.{name}_live", f"temp.{name}_want"
    differ = conn.execute(
        f"SELECT doc FROM (SELECT * FROM {live} EXCEPT SELECT * FROM {want})"
        f" UNION SELECT doc FROM (SELECT * FROM {want} EXCEPT SELECT * FROM {live})"
        " ORDER BY doc LIMIT ?",
        (limit,),
    ).fetchall()
    return [int(str(r[0])) for r in differ]
