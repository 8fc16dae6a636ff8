"""Reading memories (aimos/memory/versions.py): ids, version links, a memory's rows and its
history, the listings, and browsing (the ordered rowids of every match, then a page's rows).

The memory rows a reader gets (``MEMORY_COLUMNS``) are plain dicts: aimos adds to them what it
reads beside them (``redacted``, ``originated_at``, a detail's version and history)."""

from __future__ import annotations

from typing import Any, TypedDict

from aimos.errors import MemoryNotFoundError
from aimos.store.cells import text_of
from aimos.store.connection import Connection, one, resolve_uuid_prefix, rows
from aimos.vocabulary import HOUSEKEEPER, ORIGINATED_AT, SYSTEM_SCOPE

MEMORY_COLUMNS = (
    "memory_id, company_id, key, value, scope, memory_type, clearance_level, data_class, source,"
    " author_agent_id, author_valid_from, created_at, live_content_hash, save_mutation_hash,"
    " quarantine, retrieval_weight_milli, epistemic_label"
)
ORIGINATED_BATCH = 500  # memory ids per query

# aimos's own guides: the memories in scope system whose signed save the housekeeper signed (only
# the housekeeper may save there, migration 4). An agent's memory never passes for one however it is
# keyed, typed or sourced, and a row edited into scope system outside aimos is no guide either (its
# save is an agent's). Recall leaves guides out unless asked; a person may hide them from the lists.
GUIDE_SQL = (
    "(+m.scope = ? AND EXISTS (SELECT 1 FROM memory_provenance p"
    " WHERE p.memory_id = m.memory_id AND p.is_genesis = 1 AND p.signer_agent_id = ?))"
)
GUIDE_PARAMS: tuple[str, str] = (SYSTEM_SCOPE, HOUSEKEEPER)


class GrantCells(TypedDict):
    """What a grant must cover to see a memory."""

    company_id: str
    clearance_level: int
    data_class: str


class ProvenanceNode(TypedDict):
    provenance_id: str
    event_type: str
    signer_agent_id: str
    signer_valid_from: int
    cert_fingerprint: str
    signature_form: int
    signed_path: str
    mutation_hash: str
    prev_mutation_hash: str | None
    ts_signed: int


class Occurrence(TypedDict):
    occurrence_id: str
    agent_id: str
    request_ts: int
    commitment: str


class MemoryEvent(TypedDict):
    event_id: str
    operation: str
    signer_agent_id: str
    ledger_seq: int
    ts_signed: int
    mutation_hash: str


def memory_id_from_prefix(conn: Connection, ref: str, company_id: str | None = None) -> str:
    """The full memory id a full id or unique prefix names (of ``company_id``'s memories, when
    given): store.connection.resolve_uuid_prefix."""
    return resolve_uuid_prefix(
        conn,
        ref,
        table="memories",
        column="memory_id",
        what="memory",
        not_found=MemoryNotFoundError,
        extra_where="" if company_id is None else " AND company_id = ?",
        extra_params=() if company_id is None else (company_id,),
    )


def grant_cells(conn: Connection, memory_id: str) -> GrantCells | None:
    return one(
        conn,
        "SELECT company_id, clearance_level, data_class FROM memories WHERE memory_id = ?",
        (memory_id,),
        row=GrantCells,
    )


def next_version(conn: Connection, memory_id: str) -> str | None:
    """The version that corrects the memory, or None (it is current)."""
    found = one(conn, "SELECT new_memory_id FROM memory_supersessions WHERE old_memory_id = ?", (memory_id,))
    return None if found is None else str(found["new_memory_id"])


def previous_version(conn: Connection, memory_id: str) -> str | None:
    """The version the memory corrects, or None (it is a first version)."""
    found = one(conn, "SELECT old_memory_id FROM memory_supersessions WHERE new_memory_id = ?", (memory_id,))
    return None if found is None else str(found["old_memory_id"])


def originated_times(conn: Connection, memory_ids: list[str]) -> dict[str, object]:
    """memory id -> the ``originated_at`` its signed save body holds (None without one)."""
    found: dict[str, object] = {}
    for start in range(0, len(memory_ids), ORIGINATED_BATCH):
        batch = memory_ids[start : start + ORIGINATED_BATCH]
        for memory_id, originated_at in conn.execute(
            f"SELECT m.memory_id, json_extract(p.body_json, '$.{ORIGINATED_AT}') FROM memories m"
            " JOIN memory_provenance p ON p.provenance_id = m.save_provenance_id"
            f" WHERE m.memory_id IN ({', '.join('?' * len(batch))})",
            batch,
        ):
            found[str(memory_id)] = originated_at
    return found


def memory_row(conn: Connection, memory_id: str) -> dict[str, Any] | None:
    """The memory's row (``MEMORY_COLUMNS``)."""
    return one(conn, f"SELECT {MEMORY_COLUMNS} FROM memories WHERE memory_id = ?", (memory_id,))


def provenance_of(conn: Connection, memory_id: str) -> list[ProvenanceNode]:
    """The memory's provenance nodes, oldest first."""
    return rows(conn, _PROVENANCE, (memory_id,), row=ProvenanceNode)


def occurrences_of(conn: Connection, memory_id: str) -> list[Occurrence]:
    """The memory's signed occurrences (saves of the same content again), oldest first."""
    return rows(conn, _OCCURRENCES, (memory_id,), row=Occurrence)


def events_about(conn: Connection, memory_id: str) -> list[MemoryEvent]:
    """The ledger's events whose subject is the memory, oldest first."""
    return rows(conn, _EVENTS, (memory_id,), row=MemoryEvent)


_PROVENANCE = (
    "SELECT provenance_id, event_type, signer_agent_id, signer_valid_from, cert_fingerprint,"
    " signature_form, signed_path, mutation_hash, prev_mutation_hash, ts_signed"
    " FROM memory_provenance WHERE memory_id = ? ORDER BY ts_signed, rowid"
)
_OCCURRENCES = (
    "SELECT occurrence_id, agent_id, request_ts, commitment FROM memory_occurrences"
    " WHERE memory_id = ? ORDER BY created_at, rowid"
)
_EVENTS = (
    "SELECT event_id, operation, signer_agent_id, ledger_seq, ts_signed, mutation_hash"
    " FROM events WHERE subject_memory_id = ? ORDER BY ts_signed, rowid"
)


def memory_rows_at(conn: Connection, rowids: list[int]) -> list[dict[str, Any]]:
    """The memories at these rowids (one page: well under SQLite's bound on a statement's
    parameters), each row with its ``_rowid``, in no order."""
    marks = ",".join("?" * len(rowids))
    return rows(
        conn, f"SELECT rowid AS _rowid, {MEMORY_COLUMNS} FROM memories WHERE rowid IN ({marks})", rowids
    )


def current_memory_rows(conn: Connection) -> list[dict[str, Any]]:
    """Every current version (none superseded), oldest first."""
    return rows(
        conn,
        f"SELECT {MEMORY_COLUMNS} FROM memories"
        " WHERE memory_id NOT IN (SELECT old_memory_id FROM memory_supersessions)"
        " ORDER BY created_at, rowid",
    )


def guide_rowids(conn: Connection) -> list[int]:
    """The rowids of aimos's guides (current versions), by key."""
    found = conn.execute(
        f"SELECT m.rowid FROM memories m WHERE {GUIDE_SQL} AND NOT EXISTS"
        " (SELECT 1 FROM memory_supersessions s WHERE s.old_memory_id = m.memory_id) ORDER BY m.key, m.rowid",
        GUIDE_PARAMS,
    )
    return [int(r[0]) for r in found]


def all_memory_ids(conn: Connection) -> set[str]:
    """The id of every memory (every version) in the brain."""
    return {text_of(mid) for (mid,) in conn.execute("SELECT CAST(memory_id AS BLOB) FROM memories")}


def memory_rows_with_ids(conn: Connection, memory_ids: tuple[str, ...]) -> list[dict[str, Any]]:
    """The memories with these ids (one chunk), each row with its ``rowid``, in no order."""
    marks = ", ".join("?" * len(memory_ids))
    return rows(
        conn, f"SELECT rowid, {MEMORY_COLUMNS} FROM memories WHERE memory_id IN ({marks})", memory_ids
    )


# Browsing (the TUI's memory list): a filter and sort give the ordered rowids of every matching
# memory in one indexed query, then rows are fetched a page at a time by rowid. Holding only the
# rowids keeps a 100,000-memory brain cheap to scroll: any page is one primary-key lookup away.

SORTS: dict[str, str] = {
    "created": "m.created_at",
    "weight": "m.retrieval_weight_milli",
    "key": "COALESCE(m.key, '')",
    "type": "m.memory_type",
    "label": "m.epistemic_label",
    "clearance": "m.clearance_level",
}
BROWSE_COLUMNS = (
    "rowid, memory_id, key, value, scope, memory_type, clearance_level, data_class, created_at,"
    " retrieval_weight_milli, epistemic_label, quarantine"
)
FILTERED_COLUMNS = ("memory_type", "epistemic_label", "scope")


def _fts_prefix_query(text: str) -> str | None:
    """Every word of the filter, as the index holds words (aimos.store.words), as a quoted FTS5
    prefix term (so no FTS syntax leaks through)."""
    from aimos.store.words import query_words

    words = query_words(text)
    return " ".join('"' + w.replace('"', '""') + '"*' for w in words) if words else None


def _browse_where(
    *,
    text: str,
    equal: dict[str, str | None],
    starts: dict[str, str | None],
    since: int | None,
    include_history: bool,
) -> tuple[list[str], list[object]]:
    """The browse's conditions and their parameters (see ``browse_rowids``)."""
    where: list[str] = []
    params: list[object] = []
    if text:
        # any part of the key or text ("oiler" finds "boiler", "東京" finds "東京タワー"; ASCII case
        # ignored), or every word of the filter as the start of a word (the index folds accents
        # and case in every script: "cafe" finds "Café")
        part = "instr(lower(COALESCE(m.key, '') || ' ' || COALESCE(m.value, '')), lower(?)) > 0"
        match = _fts_prefix_query(text)
        if match is None:
            where.append(part)
            params.append(text)
        else:
            where.append(f"(m.rowid IN (SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?) OR {part})")
            params += [match, text]
    for column, value in equal.items():
        if value is not None:
            where.append(f"m.{column} = ?")
            params.append(value)
    for column, start in starts.items():
        if start is not None:  # the start of the text, as stored: no LIKE, so % and _ are themselves
            where.append(f"substr(m.{column}, 1, ?) = ?")
            params += [len(start), start]
    if since is not None:
        where.append("m.created_at >= ?")
        params.append(since)
    if not include_history:
        where.append("NOT EXISTS (SELECT 1 FROM memory_supersessions s WHERE s.old_memory_id = m.memory_id)")
    return where, params


def browse_rowids(
    conn: Connection,
    *,
    text: str,
    memory_type: str | None,
    label: str | None,
    scope: str | None,
    key: str | None,
    source: str | None,
    since: int | None,
    include_history: bool,
    hide_guides: bool,
    sort: str,
    descending: bool,
) -> tuple[list[int], int]:
    """The rowids of the memories that match every filter given, in display order (``sort``, one
    of SORTS; ties broken by rowid the same way), and how many of aimos's guides matched but were
    left out (``hide_guides``), in one scan: ``text`` (stripped) is any part of the key or text or
    the start of every word; ``key`` and ``source`` match the start of the memory's, ``since`` its
    save time (at or after), ``label`` its epistemic label."""
    where, params = _browse_where(
        text=text,
        equal={"memory_type": memory_type, "epistemic_label": label, "scope": scope},
        starts={"key": key, "source": source},
        since=since,
        include_history=include_history,
    )
    direction = "DESC" if descending else "ASC"
    sql = (
        f"SELECT m.rowid, {GUIDE_SQL if hide_guides else '0'} FROM memories m"
        + (" WHERE " + " AND ".join(where) if where else "")
        + f" ORDER BY {SORTS[sort]} {direction}, m.rowid {direction}"
    )
    rowids: list[int] = []
    guides = 0
    for rowid, guide in conn.execute(sql, [*(GUIDE_PARAMS if hide_guides else ()), *params]):
        if guide:
            guides += 1
        else:
            rowids.append(int(rowid))
    return rowids, guides


def browse_rows(conn: Connection, rowids: list[int]) -> list[dict[str, Any]]:
    """The listed memories at these rowids (one page; ``BROWSE_COLUMNS`` and ``superseded``)."""
    marks = ",".join("?" * len(rowids))
    return rows(
        conn,
        f"SELECT {BROWSE_COLUMNS}, EXISTS (SELECT 1 FROM memory_supersessions s"
        f" WHERE s.old_memory_id = memories.memory_id) AS superseded FROM memories WHERE rowid IN ({marks})",
        rowids,
    )


def distinct_values(conn: Connection, column: str, *, hide_guides: bool = False) -> list[str]:
    """The values one of FILTERED_COLUMNS takes in the brain (less aimos's guides' own, when
    ``hide_guides``)."""
    assert column in FILTERED_COLUMNS, column
    where, params = (f" WHERE NOT {GUIDE_SQL}", GUIDE_PARAMS) if hide_guides else ("", ())
    sql = f"SELECT DISTINCT {column} FROM memories m{where} ORDER BY 1"
    return [str(r[0]) for r in conn.execute(sql, params)]
