"""Candidate opening: retrieval channels over the brain's FTS5 indexes, fused by RRF (k = 60).

A channel ranks memory rowids for a query within the caller's scope (company, clearance and
data-class ceilings, version heads unless history). The default channel is `lexical`: BM25 on
the memory's own text (precise) plus BM25 on the memory with its neighbours from the same
source (contextual), each normalised by its best score and summed, then boosted by how many of
the query's terms the memory itself contains. Measured on the LoCoMo development split, that
sum beat reciprocal rank fusion of the two as separate channels (see `aimos eval locomo`); RRF
is what fuses channels with each other, so more can be added.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import apsw

from aimos.identity.epochs import DATA_CLASSES
from aimos.recall.text import fts_match, stem_prefix, tokens

RRF_K = 60
CANDIDATES = 100
CONTEXT_WEIGHT = 1.0
COVERAGE_BOOST = 0.5
CONVERSATION_TYPES = ("dialog_turn", "message")  # must match migration 0002's trigger


@dataclass(frozen=True)
class Scope:
    company_id: str
    clearance_ceiling: int
    data_class_ceiling: str
    include_history: bool = False

    def sql(self) -> tuple[str, list[object]]:
        allowed = DATA_CLASSES[: DATA_CLASSES.index(self.data_class_ceiling) + 1]
        where = (
            "m.company_id = ? AND m.clearance_level <= ? AND m.data_class IN ("
            + ", ".join("?" * len(allowed))
            + ")"
        )
        params: list[object] = [self.company_id, self.clearance_ceiling, *allowed]
        if not self.include_history:
            where += (
                " AND NOT EXISTS (SELECT 1 FROM memory_supersessions s WHERE s.old_memory_id = m.memory_id)"
            )
        return where, params


class Channel(Protocol):
    name: str

    def search(
        self, conn: apsw.Connection, terms: Sequence[str], scope: Scope, limit: int
    ) -> list[tuple[int, float]]:
        """(rowid, score) best first; higher scores are better."""
        ...


def _bm25(
    conn: apsw.Connection, table: str, terms: Sequence[str], scope: Scope, limit: int
) -> list[tuple[int, float]]:
    where, params = scope.sql()
    sql = (
        f"SELECT f.rowid, -bm25({table}) AS score FROM {table} f JOIN memories m ON m.rowid = f.rowid"
        f" WHERE {table} MATCH ? AND {where} ORDER BY score DESC LIMIT ?"
    )
    return [(int(r), float(s)) for r, s in conn.execute(sql, [fts_match(list(terms)), *params, limit])]


def _normalised(hits: list[tuple[int, float]]) -> dict[int, float]:
    if not hits:
        return {}
    top = hits[0][1] or 1.0
    return {rowid: score / top for rowid, score in hits}


class LexicalChannel:
    """Precise + contextual BM25, score-summed, with a term-coverage boost."""

    name = "lexical"

    def __init__(self, context_weight: float = CONTEXT_WEIGHT, coverage_boost: float = COVERAGE_BOOST):
        self.context_weight = context_weight
        self.coverage_boost = coverage_boost

    def search(
        self, conn: apsw.Connection, terms: Sequence[str], scope: Scope, limit: int
    ) -> list[tuple[int, float]]:
        if not terms:
            return []
        scores: dict[int, float] = defaultdict(float)
        for rowid, s in _normalised(_bm25(conn, "memory_fts", terms, scope, limit)).items():
            scores[rowid] += s
        if self.context_weight:
            for rowid, s in _normalised(_bm25(conn, "memory_context_fts", terms, scope, limit)).items():
                scores[rowid] += self.context_weight * s
        if self.coverage_boost and scores:
            wanted = {stem_prefix(t) for t in terms}
            ids = list(scores)
            texts = dict(
                conn.execute(
                    f"SELECT rowid, COALESCE(key, '') || ' ' || value FROM memories"
                    f" WHERE rowid IN ({', '.join('?' * len(ids))})",
                    ids,
                )
            )
            for rowid in ids:
                have = {stem_prefix(t) for t in tokens(texts.get(rowid, ""))}
                scores[rowid] *= 1 + self.coverage_boost * len(wanted & have) / len(wanted)
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
        return ranked[:limit]


class PreciseChannel:
    """BM25 on the memory's own text only (also the plain baseline of the evaluation)."""

    name = "precise"

    def search(
        self, conn: apsw.Connection, terms: Sequence[str], scope: Scope, limit: int
    ) -> list[tuple[int, float]]:
        return _bm25(conn, "memory_fts", terms, scope, limit) if terms else []


def rrf(rankings: Sequence[Sequence[int]], k: int = RRF_K) -> list[tuple[int, float]]:
    """Reciprocal rank fusion: sum of 1 / (k + rank); ties by rowid. Pure."""
    fused: dict[int, float] = defaultdict(float)
    for ranking in rankings:
        for rank, rowid in enumerate(ranking, start=1):
            fused[rowid] += 1.0 / (k + rank)
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))


def open_candidates(
    conn: apsw.Connection,
    terms: Sequence[str],
    scope: Scope,
    channels: Sequence[Channel],
    limit: int = CANDIDATES,
) -> list[tuple[int, float]]:
    """The top ``limit`` rowids with a relevance in (0, 1]: one channel's own scores
    normalised, or several channels fused by RRF and normalised."""
    results = [ch.search(conn, terms, scope, limit) for ch in channels]
    if len(results) == 1:
        fused = results[0]
    else:
        fused = rrf([[rowid for rowid, _ in r] for r in results])
    fused = fused[:limit]
    if not fused:
        return []
    top = fused[0][1] or 1.0
    return [(rowid, max(0.0, min(1.0, score / top))) for rowid, score in fused]


def rebuild_indexes(conn: apsw.Connection) -> int:
    """Rebuild both FTS5 indexes from the memories table; returns the number of memories.

    The same texts as the insert trigger of migration 2 writes: a memory's own key and value,
    and for conversation turns a context of two turns before and one after from the same
    company, source and type (any other memory is its own context).
    Call inside a write transaction."""
    conn.execute("INSERT INTO memory_fts (memory_fts) VALUES ('delete-all')")
    conn.execute("INSERT INTO memory_context_fts (memory_context_fts) VALUES ('delete-all')")
    by_source: dict[tuple[str, str, str], list[tuple[int, str]]] = defaultdict(list)
    count = 0
    for rowid, company, source, memory_type, text in conn.execute(
        "SELECT rowid, company_id, source, memory_type, COALESCE(key, '') || ' ' || value"
        " FROM memories ORDER BY rowid"
    ):
        conn.execute("INSERT INTO memory_fts (rowid, text) VALUES (?, ?)", (rowid, text))
        count += 1
        if memory_type in CONVERSATION_TYPES:
            by_source[(company, source, memory_type)].append((rowid, text))
        else:
            conn.execute("INSERT INTO memory_context_fts (rowid, text) VALUES (?, ?)", (rowid, text))
    for items in by_source.values():
        for i, (rowid, _text) in enumerate(items):
            window = items[max(0, i - 2) : i + 2]
            conn.execute(
                "INSERT INTO memory_context_fts (rowid, text) VALUES (?, ?)",
                (rowid, " ".join(t for _, t in reversed(window))),
            )
    return count
