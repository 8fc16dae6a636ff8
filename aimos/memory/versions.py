"""Reading memories: id resolution, version chains, listing and the full detail of one memory."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

from aimos.errors import MemoryNotFoundError, UsageError
from aimos.identity.epochs import latest_epoch
from aimos.identity.trusted import grant_covers, verified_grant
from aimos.memory.redaction import mark_redacted, redaction_notices
from aimos.store.connection import Connection
from aimos.store.queries import memory_versions as queries
from aimos.store.queries.memory import MemoryCells

# what a guide is (recall leaves guides out) and the browse's sorts (the TUI's), named here too
from aimos.store.queries.memory_versions import GUIDE_PARAMS as GUIDE_PARAMS
from aimos.store.queries.memory_versions import GUIDE_SQL as GUIDE_SQL
from aimos.store.queries.memory_versions import SORTS as SORTS
from aimos.vocabulary import ORIGINATED_AT


def resolve_memory_id(
    conn: Connection, ref: str, *, company_id: str | None = None, agent_id: str | None = None
) -> str:
    """A full memory id from a full id or a unique prefix of at least 4 characters.

    With ``agent_id``, a memory the agent's current grant does not cover (company, clearance, data
    class) is not found for it, and the refusal names only ``ref``: resolving a prefix must not
    tell an agent the full id of a memory above its grant."""
    mid = queries.memory_id_from_prefix(conn, ref, company_id)
    if agent_id is not None and not _visible_to(conn, mid, agent_id):
        raise MemoryNotFoundError(f"no memory with id {ref.strip().lower()} that agent {agent_id} may see")
    return mid


def _visible_to(conn: Connection, memory_id: str, agent_id: str) -> bool:
    """Whether the verified grant of the agent's current epoch covers the memory."""
    grant = verified_grant(conn, agent_id, latest_epoch(conn, agent_id)["valid_from"])
    memory = queries.grant_cells(conn, memory_id)
    return (
        grant is not None
        and memory is not None
        and memory["company_id"] == grant["company_id"]
        and grant_covers(grant, memory["clearance_level"], memory["data_class"])
    )


def head_of(conn: Connection, memory_id: str) -> str:
    current = memory_id
    for _ in range(100_000):
        nxt = queries.next_version(conn, current)
        if nxt is None:
            return current
        current = nxt
    raise UsageError("version chain is too long or cyclic")


def version_chain(conn: Connection, memory_id: str) -> list[str]:
    """Every version from the first to the head, oldest first."""
    first = memory_id
    for _ in range(100_000):
        prev = queries.previous_version(conn, first)
        if prev is None:
            break
        first = prev
    chain = [first]
    while True:
        nxt = queries.next_version(conn, chain[-1])
        if nxt is None:
            return chain
        chain.append(nxt)


def mark_originated(conn: Connection, memories: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give each memory read its ``originated_at``: when it was first made, as its signed save
    body says (memory.save ORIGINATED_AT: an import of another brain's export), else None; returns
    them. Read for the rows already chosen (a column of the listing query would be read for every
    row its sort passes over). A SAVE node's body is stored as signed, never compacted
    (store/cells.py), and a redaction keeps the field."""
    found = queries.originated_times(conn, [m["memory_id"] for m in memories])
    for m in memories:
        m[ORIGINATED_AT] = found.get(m["memory_id"])
    return memories


def originated(memory: Mapping[str, Any]) -> int | None:
    """The creation time a memory's signed save carries (one imported from another brain's
    export), or None (a memory first made in this brain)."""
    value = memory.get(ORIGINATED_AT)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def created_time(memory: Mapping[str, Any]) -> int:
    """When the memory was first made: ``originated``, else when this brain saved it."""
    first = originated(memory)
    return int(memory["created_at"]) if first is None else first


# beside a memory's "created" time from another brain, in a memory's detail (its "saved by" time
# stays this brain's save)
CREATED_ELSEWHERE = "before it came here, as its signed save says"


def get_memory(conn: Connection, ref: str, *, agent_id: str | None = None) -> dict[str, Any]:
    """The memory ``ref`` names (to ``agent_id``, when given: see resolve_memory_id)."""
    memory_id = resolve_memory_id(conn, ref, agent_id=agent_id)
    row = queries.memory_row(conn, memory_id)
    assert row is not None
    return mark_originated(conn, [row])[0]


class VersionPlace(TypedDict):
    """Where a memory stands in its version chain (``MemoryDetail.version``)."""

    number: int
    of: int
    state: str  # "current" or "superseded"
    supersedes: str | None
    superseded_by: str | None
    chain: list[str]


class MemoryDetail(MemoryCells):
    """One memory in full (``memory_detail``), keys in the order it is printed as JSON: its row
    (MEMORY_COLUMNS, ``quarantine`` as a bool), ``originated_at``, then what is read beside it.
    The keys after ``events`` are added by the readers that show it: ``withheld`` by
    recall.pipeline.show (why its text is withheld from an agent, or None), ``label_history``
    and ``verification`` by `aimos show` and the TUI's detail screen, ``trajectory`` by the TUI."""

    live_content_hash: str
    save_mutation_hash: str
    quarantine: bool
    retrieval_weight_milli: int
    epistemic_label: str
    originated_at: int | None
    weight: float
    version: VersionPlace
    provenance: list[queries.ProvenanceNode]
    occurrences: list[queries.Occurrence]
    redacted: str | None
    events: list[queries.MemoryEvent]
    withheld: NotRequired[str | None]
    label_history: NotRequired[list[dict[str, Any]]]
    verification: NotRequired[dict[str, Any]]
    trajectory: NotRequired[dict[str, Any]]


def memory_detail(conn: Connection, ref: str) -> MemoryDetail:
    """One memory with its version chain, provenance, occurrences and events."""
    memory = get_memory(conn, ref)
    mid = memory["memory_id"]
    chain = version_chain(conn, mid)
    position = chain.index(mid)
    return {  # the row's keys in MEMORY_COLUMNS order, as get_memory read them
        "memory_id": mid,
        "company_id": memory["company_id"],
        "key": memory["key"],
        "value": memory["value"],
        "scope": memory["scope"],
        "memory_type": memory["memory_type"],
        "clearance_level": memory["clearance_level"],
        "data_class": memory["data_class"],
        "source": memory["source"],
        "author_agent_id": memory["author_agent_id"],
        "author_valid_from": memory["author_valid_from"],
        "created_at": memory["created_at"],
        "live_content_hash": memory["live_content_hash"],
        "save_mutation_hash": memory["save_mutation_hash"],
        "quarantine": bool(memory["quarantine"]),
        "retrieval_weight_milli": memory["retrieval_weight_milli"],
        "epistemic_label": memory["epistemic_label"],
        "originated_at": memory[ORIGINATED_AT],
        "weight": memory["retrieval_weight_milli"] / 1000,
        "version": {
            "number": position + 1,
            "of": len(chain),
            "state": "current" if position == len(chain) - 1 else "superseded",
            "supersedes": chain[position - 1] if position > 0 else None,
            "superseded_by": chain[position + 1] if position < len(chain) - 1 else None,
            "chain": chain,
        },
        "provenance": queries.provenance_of(conn, mid),
        "occurrences": queries.occurrences_of(conn, mid),
        "redacted": redaction_notices(conn, [mid]).get(mid),
        "events": queries.events_about(conn, mid),
    }


# `--since`: a day or a moment (UTC, as aimos shows times), or a span back from now
_SPANS = {"m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_SPAN = re.compile(r"(\d{1,7})\s*(min|m|h|d|w)")
_MOMENT = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[t ](\d{2}):(\d{2})(?::(\d{2}))?z?)?")  # lower case
SINCE_FORMS = (
    "a date (2025-03-01, or 2025-03-01T14:30; UTC, as aimos shows times), today, yesterday, "
    "or a span back from now (30m, 12h, 7d, 2w)"
)


def since_of(text: str, now: int) -> int:
    """The Unix time a person's ``--since`` names (see SINCE_FORMS); a usage error otherwise."""
    from datetime import UTC, datetime

    spoken = text.strip().lower()
    day = now - now % 86400
    if spoken in ("today", "yesterday"):
        return day - (86400 if spoken == "yesterday" else 0)
    span = _SPAN.fullmatch(spoken)
    if span:
        return now - int(span[1]) * _SPANS[span[2]]
    moment = _MOMENT.fullmatch(spoken)
    at: int | None = None
    if moment:
        try:
            parsed = datetime.strptime(moment[1], "%Y-%m-%d").replace(
                hour=int(moment[2] or 0), minute=int(moment[3] or 0), second=int(moment[4] or 0), tzinfo=UTC
            )
            at = int(parsed.timestamp())
        except ValueError:
            at = None
    if at is None:
        raise UsageError(f"--since {text!r} is not a date or a span of time", f"Give {SINCE_FORMS}.")
    if at > now:
        raise UsageError(f"--since {text!r} is in the future", "Give a time before now, e.g. --since 7d.")
    return at


@dataclass(frozen=True)
class Listed:
    """One page of a listing: the memories (newest first), how many match in all, and how many of
    aimos's guides matched but were left out (a person's view setting: actions/guides.py)."""

    memories: list[dict[str, Any]]
    total: int
    guides_hidden: int


def list_memories(
    conn: Connection,
    *,
    limit: int | None = 20,
    include_history: bool = False,
    hide_guides: bool = False,
    **filters: Any,
) -> Listed:
    """The newest ``limit`` memories (every one with None) that match ``filters`` (browse's), with
    their total. One indexed query gives the ordered rowids of every match (the TUI's browse),
    then only the page's rows are read."""
    if limit is not None and limit < 1:
        raise UsageError("--limit must be at least 1", "Give --limit 1 or more, or --all for every memory.")
    found = browse(conn, include_history=include_history, hide_guides=hide_guides, **filters)
    page = found.rowids if limit is None else found.rowids[:limit]
    return Listed(memories_at(conn, page), len(found.rowids), found.guides_hidden)


def memories_at(conn: Connection, rowids: list[int]) -> list[dict[str, Any]]:
    """The memories at these rowids, in their order, each with its ``redacted`` notice."""
    by_rowid: dict[int, dict[str, Any]] = {}
    for start in range(0, len(rowids), _PAGE):
        part = rowids[start : start + _PAGE]
        for r in mark_originated(conn, mark_redacted(conn, queries.memory_rows_at(conn, part))):
            by_rowid[int(r.pop("_rowid"))] = r
    return [by_rowid[r] for r in rowids if r in by_rowid]


_PAGE = 500  # rowids per IN (...) lookup: well under SQLite's bound on a statement's parameters


def current_memories(conn: Connection) -> list[dict[str, Any]]:
    """Every current version (none superseded), oldest first, each with its ``redacted`` notice
    and ``originated_at``."""
    return mark_originated(conn, mark_redacted(conn, queries.current_memory_rows(conn)))


def guide_memories(conn: Connection) -> list[dict[str, Any]]:
    """aimos's guides (current versions), by key."""
    return memories_at(conn, queries.guide_rowids(conn))


def memory_ids(conn: Connection) -> set[str]:
    """The id of every memory (every version) in the brain."""
    return queries.all_memory_ids(conn)


def memories_not_in(conn: Connection, kept: set[str]) -> list[dict[str, Any]]:
    """Every memory (every version) whose id is not in ``kept``, oldest first, each with its
    ``redacted`` notice: what a brain holds beyond a copy of it."""
    ids = sorted(memory_ids(conn) - kept)
    found = []
    for at in range(0, len(ids), 500):
        chunk = ids[at : at + 500]
        found += queries.memory_rows_with_ids(conn, tuple(chunk))
    found.sort(key=lambda m: (m["created_at"], m["rowid"]))
    return mark_redacted(conn, found)


@dataclass(frozen=True)
class Browsed:
    """The rowids of the memories that match, in display order, and how many of aimos's guides
    matched but were left out (``hide_guides``)."""

    rowids: list[int]
    guides_hidden: int = 0


def browse(
    conn: Connection,
    *,
    text: str = "",
    memory_type: str | None = None,
    label: str | None = None,
    scope: str | None = None,
    key: str | None = None,
    source: str | None = None,
    since: int | None = None,
    include_history: bool = False,
    hide_guides: bool = False,
    sort: str = "created",
    descending: bool = True,
) -> Browsed:
    """The memories that match every filter given, in display order (ties broken by newest rowid):
    ``key`` and ``source`` match the start of the memory's (a redacted memory has neither),
    ``since`` its save time (Unix seconds, at or after), ``label`` the protocol's label. With
    ``hide_guides`` aimos's guides are left out, and counted, in the same scan."""
    if sort not in SORTS:
        raise UsageError(f"unknown sort {sort!r}", f"Sort by one of: {', '.join(SORTS)}.")
    rowids, guides = queries.browse_rowids(
        conn,
        text=text.strip(),
        memory_type=memory_type,
        label=label,
        scope=scope,
        key=key,
        source=source,
        since=since,
        include_history=include_history,
        hide_guides=hide_guides,
        sort=sort,
        descending=descending,
    )
    return Browsed(rowids, guides)


def rows_by_rowid(conn: Connection, rowids: list[int]) -> dict[int, dict[str, Any]]:
    """The listed memories (one page) keyed by rowid."""
    if not rowids:
        return {}
    found = queries.browse_rows(conn, rowids)
    return {int(r["rowid"]): r for r in mark_originated(conn, mark_redacted(conn, found))}


def distinct_values(conn: Connection, column: str, *, hide_guides: bool = False) -> list[str]:
    """The values a filter can take (memory types, labels, scopes) as found in the brain (less
    aimos's guides' own, when they are hidden)."""
    if column not in queries.FILTERED_COLUMNS:
        raise UsageError(f"cannot filter by {column!r}")
    return queries.distinct_values(conn, column, hide_guides=hide_guides)
