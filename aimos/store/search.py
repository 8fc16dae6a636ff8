"""Budgeted FTS5 scans, for every reader of the memory indexes (recall's candidates, the
agreement detector's neighbours at save).

FTS5 scores every memory a scan matches before it can rank them (2-4 us each on a two-core
machine, more with more terms), so a query of common words costs in proportion to the brain. A
scan here has a budget: the rarest terms whose matches fit in it, and when even those match more,
only the newest part of the brain expected to hold the budget's worth (rowids grow with time and
memories are never deleted, so the largest rowid is their number).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import apsw

from aimos.store.words import TOKENIZER_ARGS, query_words

# matches one scan may score; `aimos eval perf --recall N` and `--saves N` measure the cost
POSTING_BUDGET = 1000


def fts_match(terms: list[str], *, conjunctive: bool = False) -> str:
    """An FTS5 MATCH expression: each term a quoted phrase of its index words (store.words: a
    run of Chinese or Thai is the phrase of its bigrams, found wherever it is written), OR-ed
    (or AND-ed) together."""
    phrases = (" ".join(query_words(t)) or t for t in terms)
    return (" AND " if conjunctive else " OR ").join('"' + p.replace('"', '""') + '"' for p in phrases)


@dataclass(frozen=True)
class Probe:
    """One ranked scan of an index: the terms OR-ed (AND-ed when ``every``), scoring only the
    memories from ``min_rowid`` on (the newest part of the brain) when it is > 0, and only those
    up to ``max_rowid`` when it is > 0."""

    terms: list[str]
    every: bool = False
    min_rowid: int = 0
    max_rowid: int = 0  # > 0: only the memories up to it (the brain as it was when it was saved)


def where_clause(table: str, probe: Probe) -> tuple[str, tuple[object, ...]]:
    """The WHERE condition of a probe's scan of ``table`` and its parameters: the MATCH, and from
    the probe's ``min_rowid`` on when it has one (FTS5 skips the others without scoring them)."""
    match = fts_match(list(probe.terms), conjunctive=probe.every)
    where, params = f"{table} MATCH ?", list[object]([match])
    if probe.min_rowid:
        where, params = f"{where} AND rowid >= ?", [*params, probe.min_rowid]
    if probe.max_rowid:
        where, params = f"{where} AND rowid <= ?", [*params, probe.max_rowid]
    return where, tuple(params)


def ranked_scan(conn: apsw.Connection, table: str, probe: Probe, limit: int) -> list[tuple[int, float]]:
    """(rowid, -bm25) best first, straight from FTS5's ranked scan of the probe."""
    where, params = where_clause(table, probe)
    sql = f"SELECT rowid, -bm25({table}) FROM {table} WHERE {where} ORDER BY rank LIMIT ?"
    return [(int(r), float(s)) for r, s in conn.execute(sql, (*params, limit))]


def index_terms(conn: apsw.Connection, terms: Sequence[str]) -> list[str]:
    """The terms as the index sees them (porter stems through FTS5's own tokenizer)."""
    tokenizer = conn.fts5_tokenizer(*TOKENIZER_ARGS)
    out: list[str] = []
    for term in terms:
        for tok in tokenizer(term.encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None):
            out.append(str(tok[-1]))
    return out


@dataclass(frozen=True)
class TermCounts:
    """How many memories each term's stems match (memory_fts_vocab), and the memories in all."""

    stems: dict[str, list[str]]
    docs: dict[str, int]  # per stem
    total: int

    def matches(self, term: str) -> int:
        return sum(self.docs.get(s, 0) for s in self.stems.get(term, []))


def term_counts(conn: apsw.Connection, terms: Sequence[str]) -> TermCounts:
    stems = {t: index_terms(conn, [t]) for t in terms}
    wanted = sorted({s for v in stems.values() for s in v})
    docs: dict[str, int] = {}
    if wanted:
        sql = f"SELECT term, doc FROM memory_fts_vocab WHERE term IN ({', '.join('?' * len(wanted))})"
        docs = {str(t): int(d) for t, d in conn.execute(sql, wanted)}
    return TermCounts(stems, docs, memories_in(conn))


def memories_in(conn: apsw.Connection) -> int:
    """How many memories the brain holds: never deleted, so the largest rowid is their number
    (one lookup, not a count)."""
    return _integer(conn, "SELECT MAX(rowid) FROM memories", ()) or 1


def within_budget(terms: Sequence[str], matches: dict[str, int], budget: int | None) -> list[str]:
    """The rarest of ``terms`` whose matches add up to at most ``budget`` (the rarest one
    always), in the query's order; all of them when they fit or there is no budget. Pure."""
    if budget is None or sum(matches.get(t, 0) for t in terms) <= budget:
        return list(terms)
    chosen: set[str] = set()
    spent = 0
    for _, term in sorted(enumerate(terms), key=lambda it: (matches.get(it[1], 0), it[0])):
        cost = matches.get(term, 0)
        if chosen and spent + cost > budget:
            break
        chosen.add(term)
        spent += cost
    return [t for t in terms if t in chosen]


def newest_part(total: int, matches: float, budget: int | None) -> int:
    """The first rowid of the newest part of the brain expected to hold ``budget`` of a scan's
    ``matches`` (spread evenly over the rowids, roughly); 0 (everything) when they fit. Pure."""
    if budget is None or matches <= budget:
        return 0
    return max(0, total - int(total * budget / matches))


def probe_within(terms: Sequence[str], matches: dict[str, int], total: int, budget: int | None) -> Probe:
    """An OR scan of the rarest ``terms`` that fit the budget, over the newest part of the brain
    when even they match more. Pure."""
    searched = within_budget(terms, matches, budget)
    return Probe(searched, False, newest_part(total, sum(matches.get(t, 0) for t in searched), budget))


def budgeted_probe(
    conn: apsw.Connection, terms: Sequence[str], budget: int | None = POSTING_BUDGET, upto: int = 0
) -> Probe:
    """An OR scan of the rarest ``terms`` that fit the budget, over the newest part of the brain
    holding the newest ``budget`` matches when even they match more. Each term's matches are
    counted only up to one past the budget (FTS5 stops there: no full doclist is read, as
    fts5vocab's counts would), and the newest part is found by walking the matches newest first
    (no scoring), so finding the scan costs about what the scan may. ``upto`` > 0: the brain as
    it was when the memory with that rowid was saved (the memories up to it)."""
    if budget is None or not terms or (upto or memories_in(conn)) <= budget:
        return Probe(list(terms), max_rowid=upto)  # nothing to leave out: the whole brain fits
    cap = budget + 1
    bound, bounds = (" AND rowid <= ?", (upto,)) if upto else ("", ())
    matches = {
        t: _integer(
            conn,
            f"SELECT COUNT(*) FROM (SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?{bound} LIMIT ?)",
            (fts_match([t]), *bounds, cap),
        )
        for t in dict.fromkeys(terms)
    }
    searched = within_budget(terms, matches, budget)
    if sum(matches[t] for t in searched) <= budget:
        return Probe(searched, max_rowid=upto)
    newest = _integer(
        conn,
        f"SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?{bound} ORDER BY rowid DESC LIMIT 1 OFFSET ?",
        (fts_match(searched), *bounds, budget - 1),
    )
    return Probe(searched, False, newest, upto)


def _integer(conn: apsw.Connection, sql: str, params: tuple[object, ...]) -> int:
    """The one integer a query gives (0 when it gives no row)."""
    found = conn.execute(sql, params).fetchall()
    value = found[0][0] if found else 0
    return value if isinstance(value, int) else 0
