"""The memories' vectors (migration 19): derived rows, one per memory, read and written here.

A vector is made after its memory's save committed, in rowid order, so the memories still waiting
for one are those past the newest vector (``pending``): one lookup, not a scan. A model change
makes every vector stale; they are remade from the oldest on (``stale_from``), and replaced in
place. What a vector holds is meaning/vectors' stored form; this module sees bytes only.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import apsw

from aimos.store.seals import REDACTIONS
from aimos.vocabulary import SYSTEM_SCOPE

# the text a memory's vector is made of: its key and value, as the search index reads them; aimos's
# own guides get none (they answer questions about aimos, found by their words), and neither does a
# redacted memory (what is left of it is a notice: its vector is empty, never one of the removed text)
MEMORY_TEXT = "COALESCE(m.key || ' ', '') || m.value"
REDACTED = f"EXISTS (SELECT 1 FROM {REDACTIONS} r WHERE r.memory_id = m.memory_id)"
EMBEDDED_TEXT = f"CASE WHEN m.scope = '{SYSTEM_SCOPE}' OR {REDACTED} THEN '' ELSE {MEMORY_TEXT} END"
CHECKED_LIMIT = 20  # memories a failed check names at most


@dataclass(frozen=True)
class VectorState:
    """How far the vectors of a brain are: the newest memory, the newest vector, the model of the
    oldest and the newest vector (None: no vector yet), and the generation (replacements)."""

    newest_memory: int
    newest_vector: int
    oldest_model: str | None
    newest_model: str | None
    generation: int

    def current(self, model: str) -> bool:
        """Every memory has a vector by ``model`` (as far as the ends show: `aimos verify` checks all)."""
        return (
            self.newest_vector >= self.newest_memory
            and self.oldest_model in (None, model)
            and (self.newest_model in (None, model))
        )


def state(conn: apsw.Connection) -> VectorState:
    row = conn.execute(
        "SELECT (SELECT COALESCE(MAX(rowid), 0) FROM memories),"
        " (SELECT COALESCE(MAX(memory_rowid), 0) FROM memory_vectors),"
        " (SELECT model FROM memory_vectors ORDER BY memory_rowid LIMIT 1),"
        " (SELECT model FROM memory_vectors ORDER BY memory_rowid DESC LIMIT 1),"
        " (SELECT generation FROM memory_vectors_generation WHERE id = 1)"
    ).fetchall()[0]
    models = [None if m is None else str(m) for m in (row[2], row[3])]
    return VectorState(int(str(row[0])), int(str(row[1])), models[0], models[1], int(str(row[4] or 0)))


def pending(conn: apsw.Connection, model: str, limit: int) -> list[tuple[int, str]]:
    """Up to ``limit`` (rowid, text) of memories whose vector by ``model`` is missing, oldest first:
    those made by another model (after a model change), then those past the newest vector."""
    stale = stale_from(conn, model)
    if stale is not None:
        sql = (
            f"SELECT m.rowid, {EMBEDDED_TEXT} FROM memories m LEFT JOIN memory_vectors v"
            " ON v.memory_rowid = m.rowid WHERE m.rowid >= ? AND (v.model IS NULL OR v.model IS NOT ?)"
            " ORDER BY m.rowid LIMIT ?"
        )
        return [(int(r), str(t)) for r, t in conn.execute(sql, (stale, model, limit))]
    sql = (
        f"SELECT m.rowid, {EMBEDDED_TEXT} FROM memories m WHERE m.rowid >"
        " (SELECT COALESCE(MAX(memory_rowid), 0) FROM memory_vectors) ORDER BY m.rowid LIMIT ?"
    )
    return [(int(r), str(t)) for r, t in conn.execute(sql, (limit,))]


def pending_count(conn: apsw.Connection, model: str) -> int:
    """How many memories ``pending`` would give, in all (a progress line's total)."""
    stale = stale_from(conn, model)
    if stale is not None:
        sql = (
            "SELECT COUNT(*) FROM memories m LEFT JOIN memory_vectors v ON v.memory_rowid = m.rowid"
            " WHERE m.rowid >= ? AND (v.model IS NULL OR v.model IS NOT ?)"
        )
        return int(str(conn.execute(sql, (stale, model)).fetchall()[0][0]))
    sql = (
        "SELECT COUNT(*) FROM memories m WHERE m.rowid >"
        " (SELECT COALESCE(MAX(memory_rowid), 0) FROM memory_vectors)"
    )
    return int(str(conn.execute(sql).fetchall()[0][0]))


def stale_from(conn: apsw.Connection, model: str) -> int | None:
    """The first memory whose vector another model made; else None. Vectors are made and remade in
    rowid order (``pending``), so the current ones come first and a stale one is never followed by
    a current one: when the newest vector is ``model``'s, none is stale, and that one lookup spares
    every recall a scan of the whole table (about 150 ms at 100,000 vectors)."""
    newest = conn.execute("SELECT model FROM memory_vectors ORDER BY memory_rowid DESC LIMIT 1").fetchall()
    if not newest or newest[0][0] == model:
        return None
    found = conn.execute(
        "SELECT memory_rowid, model FROM memory_vectors WHERE model IS NOT ? ORDER BY memory_rowid LIMIT 1",
        (model,),
    ).fetchall()
    return int(str(found[0][0])) if found else None


def write(conn: apsw.Connection, model: str, vectors: Sequence[tuple[int, bytes]]) -> None:
    """Store (memory rowid, stored form) rows by ``model``, replacing a memory's older vector.
    Call inside a write transaction."""
    for rowid, blob in vectors:
        conn.execute("DELETE FROM memory_vectors WHERE memory_rowid = ? AND model IS NOT ?", (rowid, model))
        conn.execute(
            "INSERT INTO memory_vectors (memory_rowid, model, vector) VALUES (?, ?, ?)"
            " ON CONFLICT (memory_rowid) DO NOTHING",
            (rowid, model, blob),
        )


def remove(conn: apsw.Connection, rowid: int) -> None:
    """Remove a memory's vector (a redaction removed its text). Inside a write transaction."""
    conn.execute("DELETE FROM memory_vectors WHERE memory_rowid = ?", (rowid,))


def remove_all(conn: apsw.Connection) -> None:
    """Every vector removed (`aimos index rebuild` makes them again). Inside a write transaction."""
    conn.execute("DELETE FROM memory_vectors")


def after(conn: apsw.Connection, model: str, rowid: int) -> Iterator[tuple[int, bytes]]:
    """(memory rowid, stored form) of the vectors by ``model`` past ``rowid``, in rowid order."""
    for r, blob in conn.execute(
        "SELECT memory_rowid, vector FROM memory_vectors WHERE memory_rowid > ? AND model = ?"
        " ORDER BY memory_rowid",
        (rowid, model),
    ):
        yield int(r), bytes(blob)


def of_memories(conn: apsw.Connection, rowids: Sequence[int]) -> dict[int, tuple[str, bytes, str]]:
    """rowid -> (model, stored form, the memory's text) for the given memories that have a vector."""
    if not rowids:
        return {}
    sql = (
        f"SELECT v.memory_rowid, v.model, v.vector, {EMBEDDED_TEXT} FROM memory_vectors v"
        " JOIN memories m ON m.rowid = v.memory_rowid"
        f" WHERE v.memory_rowid IN ({', '.join('?' * len(rowids))})"
    )
    return {
        int(r): (str(model), bytes(blob), str(text)) for r, model, blob, text in conn.execute(sql, rowids)
    }


def rowids(conn: apsw.Connection) -> list[int]:
    """Every memory rowid that has a vector, in order."""
    return [int(r) for (r,) in conn.execute("SELECT memory_rowid FROM memory_vectors ORDER BY memory_rowid")]


def _rowids(conn: apsw.Connection, sql: str, params: tuple[object, ...]) -> list[int]:
    return [int(r) for (r,) in conn.execute(sql, params)]


def made_by(conn: apsw.Connection, model: str) -> list[int]:
    """The rowids of the non-empty vectors by ``model``, in order (those `aimos verify` recomputes)."""
    sql = (
        "SELECT memory_rowid FROM memory_vectors WHERE model = ? AND length(vector) > 0 ORDER BY memory_rowid"
    )
    return _rowids(conn, sql, (model,))


def orphans(conn: apsw.Connection) -> list[int]:
    """Vectors whose memory does not exist (the insert trigger refuses them; an edited file may not)."""
    sql = (
        "SELECT v.memory_rowid FROM memory_vectors v LEFT JOIN memories m ON m.rowid = v.memory_rowid"
        " WHERE m.rowid IS NULL ORDER BY v.memory_rowid LIMIT ?"
    )
    return _rowids(conn, sql, (CHECKED_LIMIT,))


@dataclass(frozen=True)
class Stored:
    """A vector as stored, with what it must be made of (`aimos verify` checks each one's form)."""

    rowid: int
    model: str
    blob: object  # bytes, unless the file was edited
    text: str  # the text it is made of ('' for a guide or a redacted memory)
    redacted: bool


def with_text(conn: apsw.Connection) -> Iterator[Stored]:
    """Every vector of a memory, in rowid order."""
    for r, model, blob, text, redacted in conn.execute(
        f"SELECT v.memory_rowid, v.model, v.vector, {EMBEDDED_TEXT}, {REDACTED} FROM memory_vectors v"
        " JOIN memories m ON m.rowid = v.memory_rowid ORDER BY v.memory_rowid"
    ):
        yield Stored(int(r), str(model), blob, str(text), bool(redacted))


def missing(conn: apsw.Connection) -> list[int]:
    """Memories with no vector below the newest vector (vectors are made in rowid order, so none is
    skipped), but for redacted ones (a redaction removes the vector): a vector deleted by hand."""
    sql = (
        "SELECT m.rowid FROM memories m LEFT JOIN memory_vectors v ON v.memory_rowid = m.rowid"
        " WHERE v.memory_rowid IS NULL AND m.rowid < (SELECT COALESCE(MAX(memory_rowid), 0)"
        f" FROM memory_vectors) AND NOT {REDACTED} ORDER BY m.rowid LIMIT ?"
    )
    return _rowids(conn, sql, (CHECKED_LIMIT,))


def generations(conn: apsw.Connection) -> list[tuple[object, object]]:
    """The rows of memory_vectors_generation (at most one is right: id 1, a count from 0 up)."""
    return [(i, g) for i, g in conn.execute("SELECT id, generation FROM memory_vectors_generation")]


def memory_count(conn: apsw.Connection) -> int:
    return int(str(conn.execute("SELECT COUNT(*) FROM memories").fetchall()[0][0]))


def table_exists(conn: apsw.Connection) -> bool:
    """Has this brain the vectors' table (a brain not yet migrated to 19 has none)?"""
    found = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'memory_vectors'"
    return bool(conn.execute(found).fetchall())


def counts(conn: apsw.Connection) -> dict[str, int]:
    """How many vectors each model made (for `aimos status` and doctor)."""
    return {
        str(m): int(n) for m, n in conn.execute("SELECT model, COUNT(*) FROM memory_vectors GROUP BY model")
    }
