"""Reading memories: id resolution, version chains, listing and the full detail of one memory."""

from __future__ import annotations

from typing import Any

import apsw

from aimos.errors import MemoryNotFoundError, UsageError
from aimos.identity.epochs import latest_epoch
from aimos.identity.trusted import grant_covers, verified_grant
from aimos.memory.redaction import mark_redacted
from aimos.store.cells import text_of
from aimos.store.connection import one, resolve_uuid_prefix, rows


def resolve_memory_id(
    conn: apsw.Connection, ref: str, *, company_id: str | None = None, agent_id: str | None = None
) -> str:
    """A full memory id from a full id or a unique prefix of at least 4 characters.

    With ``agent_id``, a memory the agent's current grant does not cover (company, clearance, data
    class) is not found for it, and the refusal names only ``ref``: resolving a prefix must not
    tell an agent the full id of a memory above its grant."""
    mid = resolve_uuid_prefix(
        conn,
        ref,
        table="memories",
        column="memory_id",
        what="memory",
        not_found=MemoryNotFoundError,
        extra_where="" if company_id is None else " AND company_id = ?",
        extra_params=() if company_id is None else (company_id,),
    )
    if agent_id is not None and not _visible_to(conn, mid, agent_id):
        raise MemoryNotFoundError(f"no memory with id {ref.strip().lower()} that agent {agent_id} may see")
    return mid


def _visible_to(conn: apsw.Connection, memory_id: str, agent_id: str) -> bool:
    """Whether the verified grant of the agent's current epoch covers the memory."""
    grant = verified_grant(conn, agent_id, latest_epoch(conn, agent_id)["valid_from"])
    memory = one(
        conn, "SELECT company_id, clearance_level, data_class FROM memories WHERE memory_id = ?", (memory_id,)
    )
    return (
        grant is not None
        and memory is not None
        and memory["company_id"] == grant["company_id"]
        and grant_covers(grant, memory["clearance_level"], memory["data_class"])
    )


def head_of(conn: apsw.Connection, memory_id: str) -> str:
    current = memory_id
    for _ in range(100_000):
        nxt = one(conn, "SELECT new_memory_id FROM memory_supersessions WHERE old_memory_id = ?", (current,))
        if nxt is None:
            return current
        current = str(nxt["new_memory_id"])
    raise UsageError("version chain is too long or cyclic")


def version_chain(conn: apsw.Connection, memory_id: str) -> list[str]:
    """Every version from the first to the head, oldest first."""
    first = memory_id
    for _ in range(100_000):
        prev = one(conn, "SELECT old_memory_id FROM memory_supersessions WHERE new_memory_id = ?", (first,))
        if prev is None:
            break
        first = str(prev["old_memory_id"])
    chain = [first]
    while True:
        nxt = one(
            conn, "SELECT new_memory_id FROM memory_supersessions WHERE old_memory_id = ?", (chain[-1],)
        )
        if nxt is None:
            return chain
        chain.append(str(nxt["new_memory_id"]))


MEMORY_COLUMNS = (
    "memory_id, company_id, key, value, scope, memory_type, clearance_level, data_class, source,"
    " author_agent_id, author_valid_from, created_at, live_content_hash, save_mutation_hash,"
    " quarantine, retrieval_weight_milli, epistemic_label"
)


def get_memory(conn: apsw.Connection, ref: str, *, agent_id: str | None = None) -> dict[str, Any]:
    """The memory ``ref`` names (to ``agent_id``, when given: see resolve_memory_id)."""
    memory_id = resolve_memory_id(conn, ref, agent_id=agent_id)
    row = one(conn, f"SELECT {MEMORY_COLUMNS} FROM memories WHERE memory_id = ?", (memory_id,))
    assert row is not None
    return row


def memory_detail(conn: apsw.Connection, ref: str) -> dict[str, Any]:
    """One memory with its version chain, provenance, occurrences and events."""
    memory = get_memory(conn, ref)
    mid = memory["memory_id"]
    chain = version_chain(conn, mid)
    position = chain.index(mid)
    memory["weight"] = memory["retrieval_weight_milli"] / 1000
    memory["quarantine"] = bool(memory["quarantine"])
    memory["version"] = {
        "number": position + 1,
        "of": len(chain),
        "state": "current" if position == len(chain) - 1 else "superseded",
        "supersedes": chain[position - 1] if position > 0 else None,
        "superseded_by": chain[position + 1] if position < len(chain) - 1 else None,
        "chain": chain,
    }
    memory["provenance"] = rows(
        conn,
        "SELECT provenance_id, event_type, signer_agent_id, signer_valid_from, cert_fingerprint,"
        " signature_form, signed_path, mutation_hash, prev_mutation_hash, ts_signed"
        " FROM memory_provenance WHERE memory_id = ? ORDER BY ts_signed, rowid",
        (mid,),
    )
    memory["occurrences"] = rows(
        conn,
        "SELECT occurrence_id, agent_id, request_ts, commitment FROM memory_occurrences"
        " WHERE memory_id = ? ORDER BY created_at, rowid",
        (mid,),
    )
    mark_redacted(conn, [memory])
    memory["events"] = rows(
        conn,
        "SELECT event_id, operation, signer_agent_id, ledger_seq, ts_signed, mutation_hash"
        " FROM events WHERE subject_memory_id = ? ORDER BY ts_signed, rowid",
        (mid,),
    )
    return memory


def list_memories(
    conn: apsw.Connection, *, limit: int = 20, include_history: bool = False
) -> list[dict[str, Any]]:
    if limit < 1:
        raise UsageError("--limit must be at least 1")
    where = (
        ""
        if include_history
        else (" WHERE memory_id NOT IN (SELECT old_memory_id FROM memory_supersessions)")
    )
    return mark_redacted(
        conn,
        rows(
            conn,
            f"SELECT {MEMORY_COLUMNS} FROM memories{where} ORDER BY created_at DESC, rowid DESC LIMIT ?",
            (limit,),
        ),
    )


def current_memories(conn: apsw.Connection) -> list[dict[str, Any]]:
    """Every current version (none superseded), oldest first, each with its ``redacted`` notice."""
    return mark_redacted(
        conn,
        rows(
            conn,
            f"SELECT {MEMORY_COLUMNS} FROM memories"
            " WHERE memory_id NOT IN (SELECT old_memory_id FROM memory_supersessions)"
            " ORDER BY created_at, rowid",
        ),
    )


def memory_ids(conn: apsw.Connection) -> set[str]:
    """The id of every memory (every version) in the brain."""
    return {text_of(mid) for (mid,) in conn.execute("SELECT CAST(memory_id AS BLOB) FROM memories")}


def memories_not_in(conn: apsw.Connection, kept: set[str]) -> list[dict[str, Any]]:
    """Every memory (every version) whose id is not in ``kept``, oldest first, each with its
    ``redacted`` notice: what a brain holds beyond a copy of it."""
    ids = sorted(memory_ids(conn) - kept)
    found = []
    for at in range(0, len(ids), 500):
        chunk = ids[at : at + 500]
        marks = ", ".join("?" * len(chunk))
        found += rows(
            conn, f"SELECT rowid, {MEMORY_COLUMNS} FROM memories WHERE memory_id IN ({marks})", tuple(chunk)
        )
    found.sort(key=lambda m: (m["created_at"], m["rowid"]))
    return mark_redacted(conn, found)


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


def _fts_prefix_query(text: str) -> str | None:
    """Every word of the filter, as the index holds words (aimos.store.words), as a quoted FTS5
    prefix term (so no FTS syntax leaks through)."""
    from aimos.store.words import query_words

    words = query_words(text)
    return " ".join('"' + w.replace('"', '""') + '"*' for w in words) if words else None


def browse_rowids(
    conn: apsw.Connection,
    *,
    text: str = "",
    memory_type: str | None = None,
    label: str | None = None,
    scope: str | None = None,
    include_history: bool = False,
    sort: str = "created",
    descending: bool = True,
) -> list[int]:
    """The rowids of the memories that match, in display order (ties broken by newest rowid)."""
    if sort not in SORTS:
        raise UsageError(f"unknown sort {sort!r}", f"Sort by one of: {', '.join(SORTS)}.")
    where: list[str] = []
    params: list[object] = []
    wanted = text.strip()
    if wanted:
        # any part of the key or text ("oiler" finds "boiler", "東京" finds "東京タワー"; ASCII case
        # ignored), or every word of the filter as the start of a word (the index folds accents
        # and case in every script: "cafe" finds "Café")
        part = "instr(lower(COALESCE(m.key, '') || ' ' || COALESCE(m.value, '')), lower(?)) > 0"
        match = _fts_prefix_query(wanted)
        if match is None:
            where.append(part)
            params.append(wanted)
        else:
            where.append(f"(m.rowid IN (SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?) OR {part})")
            params += [match, wanted]
    for column, value in (("memory_type", memory_type), ("epistemic_label", label), ("scope", scope)):
        if value is not None:
            where.append(f"m.{column} = ?")
            params.append(value)
    if not include_history:
        where.append("NOT EXISTS (SELECT 1 FROM memory_supersessions s WHERE s.old_memory_id = m.memory_id)")
    direction = "DESC" if descending else "ASC"
    sql = (
        "SELECT m.rowid FROM memories m"
        + (" WHERE " + " AND ".join(where) if where else "")
        + f" ORDER BY {SORTS[sort]} {direction}, m.rowid {direction}"
    )
    return [int(r[0]) for r in conn.execute(sql, params)]


def rows_by_rowid(conn: apsw.Connection, rowids: list[int]) -> dict[int, dict[str, Any]]:
    """The listed memories (one page) keyed by rowid."""
    if not rowids:
        return {}
    marks = ",".join("?" * len(rowids))
    found = rows(
        conn,
        f"SELECT {BROWSE_COLUMNS}, EXISTS (SELECT 1 FROM memory_supersessions s"
        f" WHERE s.old_memory_id = memories.memory_id) AS superseded FROM memories WHERE rowid IN ({marks})",
        rowids,
    )
    return {int(r["rowid"]): r for r in mark_redacted(conn, found)}


def distinct_values(conn: apsw.Connection, column: str) -> list[str]:
    """The values a filter can take (memory types, labels, scopes) as found in the brain."""
    if column not in ("memory_type", "epistemic_label", "scope"):
        raise UsageError(f"cannot filter by {column!r}")
    return [str(r[0]) for r in conn.execute(f"SELECT DISTINCT {column} FROM memories ORDER BY 1")]
