"""The agreement detector's SQL (aimos/epistemic/detect.py): its queue and runs, a saved memory's
neighbours as the brain stood at its save, the counts of its words, and the label chains' heads
it reads before it records a verdict."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypedDict

from aimos.store.connection import Connection, one, rows
from aimos.store.search import budgeted_probe, fts_match, where_clause
from aimos.vocabulary import SYSTEM_SCOPE


class PassageRow(TypedDict):
    """What the detector reads of a memory it compares."""

    memory_id: str
    value: str
    source: str
    author_agent_id: str
    author_valid_from: int
    created_at: int
    epistemic_label: str
    rowid: int


class SavedRow(PassageRow):
    """A memory the detector judges: its passage, and where and when (``upto``: its rowid) it
    was saved."""

    company_id: str
    memory_type: str
    scope: str
    upto: int


class LabelHead(TypedDict):
    """One classification of a memory as its signed event says: its label, its basis, and the
    version it carries a judgment of (``inherited``)."""

    memory_id: str
    label: str
    basis: str | None
    inherited: str | None


class QueueEntry(TypedDict):
    seq: int
    memory_id: str


_PASSAGE = (
    "m.memory_id, m.value, m.source, m.author_agent_id, m.author_valid_from, m.created_at,"
    " m.epistemic_label, m.rowid AS rowid"
)
# how far the queue is judged: the newest run's mark (runs only move forward, migration 15's
# trigger; the newest is one lookup by its key where a MAX over every run would grow with them)
_JUDGED_THROUGH = "COALESCE((SELECT through_seq FROM detection_runs ORDER BY seq DESC LIMIT 1), 0)"


def saved_row(conn: Connection, memory_id: str) -> SavedRow | None:
    return one(
        conn,
        f"SELECT {_PASSAGE}, m.company_id, m.memory_type, m.scope, m.rowid AS upto FROM memories m"
        " WHERE m.memory_id = ?",
        (memory_id,),
        row=SavedRow,
    )


def burst_rows(
    conn: Connection, company_id: str, since: int, author: tuple[str, int], upto: int, limit: int
) -> list[PassageRow]:
    """The newest ``limit`` of the company's memories the agent epoch ``author`` saved at or after
    ``since``, up to rowid ``upto``, aimos's guides left out; newest first."""
    return rows(
        conn,
        f"SELECT {_PASSAGE} FROM memories m WHERE m.company_id = ? AND m.created_at >= ?"
        " AND m.author_agent_id = ? AND m.author_valid_from = ? AND m.scope != ? AND m.rowid <= ?"
        # (the (company, created_at) index read backwards: no sort of a busy burst's rows)
        " ORDER BY m.created_at DESC, m.rowid DESC LIMIT ?",
        (company_id, since, author[0], author[1], SYSTEM_SCOPE, upto, limit),
        row=PassageRow,
    )


def word_neighbours(
    conn: Connection, company_id: str, words: list[str], budget: int, upto: int, limit: int
) -> list[PassageRow]:
    """The ``limit`` memories of the company that ``words`` find best (FTS5, any word) within the
    scan budget (store.search.budgeted_probe), among those up to rowid ``upto``; aimos's guides
    are no agent's claims: never judged, never a peer."""
    where, params = where_clause("memory_fts", budgeted_probe(conn, words, budget, upto))
    return rows(
        conn,
        f"SELECT {_PASSAGE} FROM (SELECT rowid FROM memory_fts WHERE {where}"
        " ORDER BY rank LIMIT ?) f JOIN memories m ON m.rowid = f.rowid WHERE m.company_id = ?"
        " AND m.scope != ?",
        (*params, limit, company_id, SYSTEM_SCOPE),
        row=PassageRow,
    )


def memories_holding(conn: Connection, span: str, cap: int, upto: int = 0) -> int:
    """How many memories hold ``span`` (a word or a span, as an FTS5 phrase), counted up to
    ``cap``; ``upto`` > 0: among the memories up to that rowid."""
    bound, bounds = (" AND rowid <= ?", (upto,)) if upto else ("", ())
    sql = f"SELECT COUNT(*) FROM (SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?{bound} LIMIT ?)"
    return int(next(conn.execute(sql, (fts_match([span]), *bounds, cap)))[0])


def label_heads(conn: Connection, memory_ids: list[str]) -> list[LabelHead]:
    """Every classification of these memories, oldest first."""
    marks = ",".join("?" * len(memory_ids))
    return rows(
        conn,
        "SELECT c.memory_id, c.label, json_extract(e.signed_body, '$.metadata.basis') AS basis,"
        " json_extract(e.signed_body, '$.metadata.signals.inherited_from') AS inherited"
        " FROM memory_classifications c JOIN events e ON e.event_id = c.authority_event_id"
        f" WHERE c.memory_id IN ({marks}) ORDER BY c.rowid",
        memory_ids,
        row=LabelHead,
    )


def detection_backlog(conn: Connection) -> int:
    """How many queued memories the detector has yet to judge (two index lookups)."""
    found = rows(conn, f"SELECT COALESCE((SELECT MAX(seq) FROM detection_queue), 0) - {_JUDGED_THROUGH} AS n")
    return int(found[0]["n"])


def queued_unjudged(conn: Connection) -> list[QueueEntry]:
    """The queue past the detector's last run, in save order."""
    return rows(
        conn,
        f"SELECT seq, memory_id FROM detection_queue WHERE seq > {_JUDGED_THROUGH} ORDER BY seq",
        row=QueueEntry,
    )


def insert_detection_run(conn: Connection, through_seq: int, now: int) -> None:
    conn.execute("INSERT INTO detection_runs (through_seq, ran_at) VALUES (?, ?)", (through_seq, now))


def last_judged_rowid(conn: Connection) -> int:
    """The rowid of the last queued memory the detector has judged (0: none)."""
    found = rows(
        conn,
        "SELECT COALESCE((SELECT m.rowid FROM detection_queue q JOIN memories m ON m.memory_id = q.memory_id"
        f" WHERE q.seq = {_JUDGED_THROUGH}), 0) AS upto",
    )
    return int(found[0]["upto"])


def memory_ids_at(conn: Connection, rowids: Iterable[int]) -> list[str]:
    """The ids of the memories at these rowids, in rowid order."""
    wanted = list(rowids)
    marks = ",".join("?" * len(wanted))
    found = rows(conn, f"SELECT memory_id FROM memories WHERE rowid IN ({marks}) ORDER BY rowid", wanted)
    return [str(r["memory_id"]) for r in found]


def newest_rowid(conn: Connection) -> int:
    """The largest memory rowid (0 in an empty brain): the brain's size, as nothing is deleted."""
    return int(rows(conn, "SELECT COALESCE(MAX(rowid), 0) AS n FROM memories")[0]["n"])
