"""Candidate opening: retrieval channels over the brain's FTS5 indexes, fused by RRF (k = 60).

A channel ranks memory rowids for a query within the caller's scope (company, clearance and
data-class ceilings, version heads unless history, aimos's own guides only when asked for). The
default channel is `lexical`: BM25 on the memory's own text (precise) plus BM25 on the memory
with its neighbours from the same source (contextual), each normalised by its best score and
summed, then boosted by how many of the query's terms the memory itself contains. Measured on
the LoCoMo development split, that sum beat reciprocal rank fusion of the two as separate
channels (see `aimos eval locomo`); RRF is what fuses channels with each other, so more can be
added.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from aimos.recall.text import asks, says_when, stem_prefix, tokens, unstamped
from aimos.store.cells import memory_names
from aimos.store.connection import Connection
from aimos.store.engine import open_read_only
from aimos.store.queries import recall_candidates as q
from aimos.store.queries.memory_versions import GUIDE_PARAMS, GUIDE_SQL
from aimos.store.search import (
    POSTING_BUDGET,
    Probe,
    memories_in,
    newest_part,
    probe_within,
    ranked_scan,
    term_counts,
)
from aimos.store.words import index_text
from aimos.vocabulary import DATA_CLASSES

RRF_K = 60
CANDIDATES = 100
CONTEXT_WEIGHT = 1.0
COVERAGE_BOOST = 0.5
# A memory found through its context alone (a turn's neighbours hold the words) counts only among
# the contextual index's best CONTEXT_DEPTH hits: deeper ones are mostly the neighbours of a turn
# that matches, lifted above memories that match themselves (a memory that matches itself keeps its
# context score however deep). LEAD_BOOST: a memory whose first LEAD_WORDS words (its key, a
# turn's speaker) hold query terms is about them. WHEN_BOOST: a question asking when prefers a
# memory that says when. Chosen on the LoCoMo development split with the choice validated across
# conversations (tune on some, measure on the others: `aimos eval locomo --folds`).
CONTEXT_DEPTH = 20
LEAD_WORDS = 2
LEAD_BOOST = 1.5
WHEN_BOOST = 1.0
# A conversation turn that asks (recall.text.asks) is answered by the next turn of its conversation:
# that turn gains ANSWER_LIFT of the question's score, and the question keeps 1 - QUESTION_DAMPING
# of its own (a question answers no query). Chosen and validated as above.
ANSWER_LIFT = 0.5
QUESTION_DAMPING = 0.2
SCANNED_CHARS = 8000  # of a memory's text, for the boosts (a value may be 1 MiB)
CONVERSATION_TYPES = ("dialog_turn", "message")  # must match migration 0012's trigger


@dataclass(frozen=True)
class Scope:
    company_id: str
    clearance_ceiling: int
    data_class_ceiling: str
    include_history: bool = False
    # aimos's own guides are searched only when asked for: they answer questions about aimos, not
    # a person's (recall.pipeline decides from the request). What a guide is: memory.versions's
    # GUIDE_SQL; a row edited into scope system outside aimos stays a candidate, whose disclosure
    # check then fails closed.
    include_guides: bool = False

    def sql(self) -> tuple[str, list[object]]:
        allowed = DATA_CLASSES[: DATA_CLASSES.index(self.data_class_ceiling) + 1]
        return q.scope_filter(
            self.company_id,
            self.clearance_ceiling,
            allowed,
            leave_out=None if self.include_guides else (GUIDE_SQL, GUIDE_PARAMS),
            current_only=not self.include_history,
        )


class Channel(Protocol):
    name: str

    def search(
        self, conn: Connection, terms: Sequence[str], scope: Scope, limit: int, *, when: bool = False
    ) -> list[tuple[int, float]]:
        """(rowid, score) best first; higher scores are better. ``when``: the query asks when
        (recall.text.asks_when)."""
        ...


@dataclass(frozen=True)
class SearchPlan:
    """What the lexical channel asks the indexes for one query: the probes, whose hits are
    merged (a memory found by several keeps its best BM25), and the terms the coverage boost
    counts."""

    probes: list[Probe]
    counted: list[str]


def _in_scope(conn: Connection, rowids: Sequence[int], scope: Scope) -> dict[int, str]:
    """The rowids (of those given) that the scope may see, with their memory_type."""
    if not rowids:
        return {}
    where, params = scope.sql()
    return q.types_in_scope(conn, rowids, where, params)


def _bm25(
    conn: Connection, table: str, plan: SearchPlan, scope: Scope, limit: int
) -> tuple[list[tuple[int, float]], dict[int, str]]:
    """The best ``limit`` hits of an index within the scope, and the memory types of the hits.

    FTS5's ranked scan is asked for a page larger than ``limit`` per probe; out-of-scope hits
    are dropped and the page grows until ``limit`` remain or the index has no more hits (in the
    probes' newest parts first, then, if those hold too few, in the whole brain)."""
    page = max(limit * 2, 50)
    probes = plan.probes
    while True:
        best: dict[int, float] = {}
        more = False
        for probe in probes:
            hits = ranked_scan(conn, table, probe, page)
            more = more or len(hits) == page
            for rowid, score in hits:
                if score > best.get(rowid, float("-inf")):
                    best[rowid] = score
        ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))
        allowed = _in_scope(conn, [r for r, _ in ranked], scope)
        kept = [(r, s) for r, s in ranked if r in allowed]
        if len(kept) >= limit:
            return kept[:limit], allowed
        if more:
            page *= 4
        elif any(p.min_rowid for p in probes):  # the newest parts ran out: the whole brain
            probes = [Probe(p.terms, p.every) for p in probes]
        else:
            return kept, allowed


def _normalised(hits: list[tuple[int, float]]) -> dict[int, float]:
    if not hits:
        return {}
    top = hits[0][1] or 1.0
    return {rowid: score / top for rowid, score in hits}


COMMON_TERM_SHARE = 0.25  # BM25 gives such a term little weight; see plan_search
COMMON_TERM_MIN_DOCS = 2000  # ... and below this many matches scoring it costs little


def plan_search(conn: Connection, terms: Sequence[str], budget: int | None = None) -> SearchPlan:
    """Leave out terms found in over a quarter of the memories (and in more than 2,000 of them)
    while rarer terms remain: their BM25 weight is small, yet each would make a large part of
    the brain a match to score. Small brains keep every term (measured: pruning at 25% alone
    cost 2 points of hit@1 on LoCoMo, where speaker names are in half of the turns). When every
    term is that common, the memories holding all of them are searched (they are what BM25
    ranks first).

    With a ``budget`` (matches to score per probe), a brain whose matches fit searches as
    without one. Past it: the rarest terms that fit are OR-ed, and a second probe finds the
    memories holding every term (they rank first without a budget, with the same BM25: a
    memory's score is the sum over the query's terms it holds); the terms left out of the first
    probe still count in the coverage boost. A probe expected to match more than the budget
    (the rarest term alone, or the memories holding every term) scores the newest part of the
    brain sized to hold about the budget's worth; the channel widens to the whole brain when
    those parts hold too few results in the caller's scope. Measured at 100,000 synthetic
    memories by `aimos eval perf --recall 100000`, against the unbounded search."""
    everything = SearchPlan([Probe(list(terms))], list(terms))
    if not terms or (budget is None and len(terms) < 2):
        return everything
    total = memories_in(conn)
    if total <= COMMON_TERM_MIN_DOCS and (budget is None or total <= budget):
        return everything  # no term can be that common, and the whole brain fits the budget
    counts = term_counts(conn, terms)
    if not any(counts.stems.values()):
        return everything
    stems, docs, total = counts.stems, counts.docs, counts.total
    matches = {t: counts.matches(t) for t in terms}

    def holding_all(of: Sequence[str]) -> Probe:
        expected = float(total)
        for t in of:
            expected *= min(1.0, matches[t] / total)
        return Probe(list(of), len(of) > 1, newest_part(total, expected, budget))

    threshold = max(COMMON_TERM_SHARE * total, COMMON_TERM_MIN_DOCS)
    common = {t for t, v in stems.items() if v and all(docs.get(s, 0) > threshold for s in v)}
    kept = [t for t in terms if t not in common] if len(terms) > 1 else list(terms)
    if not kept:
        return SearchPlan([holding_all(terms)], list(terms))
    first = probe_within(kept, matches, total, budget)
    if first.terms == kept:
        return SearchPlan([first], kept)
    return SearchPlan([first, holding_all(kept)], kept)


class LexicalChannel:
    """Precise + contextual BM25 (a memory found through context alone only among the contextual
    index's best CONTEXT_DEPTH hits), score-summed,
    boosted by the share of the query's terms the memory holds, by those in its lead, and for a
    question asking when by its saying when; a conversation turn that asks lifts the next turn
    of its conversation (its answer) and is itself damped.

    Only conversation turns have a context entry; for any other memory its own text is its
    context, so its precise score counts for both."""

    name = "lexical"

    def __init__(
        self,
        context_weight: float = CONTEXT_WEIGHT,
        coverage_boost: float = COVERAGE_BOOST,
        posting_budget: int | None = POSTING_BUDGET,
        context_depth: int = CONTEXT_DEPTH,
        lead_boost: float = LEAD_BOOST,
        when_boost: float = WHEN_BOOST,
        answer_lift: float = ANSWER_LIFT,
        question_damping: float = QUESTION_DAMPING,
    ):
        self.context_weight = context_weight
        self.coverage_boost = coverage_boost
        self.posting_budget = posting_budget  # None: every term searched (the benchmark's baseline)
        self.context_depth = context_depth
        self.lead_boost = lead_boost
        self.when_boost = when_boost
        self.answer_lift = answer_lift
        self.question_damping = question_damping

    def search(
        self, conn: Connection, terms: Sequence[str], scope: Scope, limit: int, *, when: bool = False
    ) -> list[tuple[int, float]]:
        if not terms:
            return []
        plan = plan_search(conn, terms, self.posting_budget)
        precise_hits, types = _bm25(conn, "memory_fts", plan, scope, limit)
        precise = _normalised(precise_hits)
        context: dict[int, float] = {}
        admitted: set[int] = set()  # found through their context alone, among its best hits
        if self.context_weight:
            context_hits, context_types = _bm25(conn, "memory_context_fts", plan, scope, limit)
            context = _normalised(context_hits)
            admitted = {rowid for rowid, _ in context_hits[: self.context_depth]}
            types.update(context_types)
        scores: dict[int, float] = {}
        for rowid in set(precise) | admitted:
            own = precise.get(rowid, 0.0)
            around = context.get(rowid, 0.0) if types.get(rowid) in CONVERSATION_TYPES else own
            scores[rowid] = own + self.context_weight * around
        if not scores:
            return []
        ids = list(scores)
        texts: dict[int, str] = {}  # each memory's text, its middle left out past SCANNED_CHARS
        for rowid, head, tail in q.scanned_texts(conn, ids, SCANNED_CHARS):
            texts[rowid] = head if tail is None else f"{head} ... {tail}"
        wanted = {stem_prefix(t) for t in plan.counted}
        for rowid in ids:
            words = [stem_prefix(t) for t in tokens(unstamped(texts.get(rowid, "")))]
            covered = len(wanted.intersection(words)) / len(wanted)
            lead = len(wanted.intersection(words[:LEAD_WORDS])) / len(wanted)
            scores[rowid] *= (1 + self.coverage_boost * covered) * (1 + self.lead_boost * lead)
            if when and self.when_boost and says_when(texts.get(rowid, "")):
                scores[rowid] *= 1 + self.when_boost
        if self.answer_lift or self.question_damping:
            asking = [r for r in ids if types.get(r) in CONVERSATION_TYPES and asks(texts.get(r, ""))]
            self._answer(conn, scores, asking, scope)
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
        return ranked[:limit]

    def _answer(self, conn: Connection, scores: dict[int, float], asking: list[int], scope: Scope) -> None:
        """Each turn in ``asking`` keeps 1 - question_damping of its score, and the next turn of its
        conversation (same company, source and type), when the scope may see it, gains
        answer_lift of the question's score."""
        if not asking:
            return
        asked = {r: scores[r] for r in asking}
        for rowid in asking:
            scores[rowid] *= 1 - self.question_damping
        nexts = q.next_turns(conn, asking)
        allowed = _in_scope(conn, list(set(nexts.values())), scope)
        for question, answer in nexts.items():
            if answer in allowed:
                scores[answer] = scores.get(answer, 0.0) + self.answer_lift * asked[question]


class PreciseChannel:
    """BM25 on the memory's own text only (also the plain baseline of the evaluation)."""

    name = "precise"

    def search(
        self, conn: Connection, terms: Sequence[str], scope: Scope, limit: int, *, when: bool = False
    ) -> list[tuple[int, float]]:
        return (
            _bm25(conn, "memory_fts", SearchPlan([Probe(list(terms))], list(terms)), scope, limit)[0]
            if terms
            else []
        )


# The meaning channel (migration 19's vectors, aimos/meaning): a memory's cosine with the question
# counts from MEANING_FLOOR (the multilingual-e5 model puts unrelated texts at 0.70-0.80) and is
# full at MEANING_FULL, and only within MEANING_MARGIN of the best cosine in the caller's scope
# (same-topic memories sit close to each other: meaning lifts the ones the model puts first, it does
# not pad a recall with a topic's neighbours). Fused with the lexical channel's score (normalised by
# its best) as lexical + MEANING_WEIGHT x meaning: meaning reorders and adds, it never removes what
# the words found. When no memory shares a word with the question, a memory found by meaning alone
# must reach MEANING_ALONE and stand MEANING_LIFT above the brain's mean cosine with the question:
# a question nothing answers returns nothing rather than the nearest vector.
# WEIGHT, FLOOR, FULL and MARGIN: chosen on the LoCoMo development split, validated across
# conversations (`aimos eval locomo --folds`: each fold chose weight 0.1-0.2 on its training
# conversations; a weight of 1 cost 6 points of hit@1). The model separates little there (the
# evidence is the nearest turn for 26% of the questions, BM25's first hit for 50%), so meaning is a
# light tie-breaker. ALONE and LIFT: on the meaning probe (`aimos eval meaning`) the nearest memory
# of a question nothing answers sits at a cosine of 0.81 +- 0.02, 0.057 +- 0.013 above the mean: the
# thresholds are about two standard deviations past that (a rule, not a fit to the cases).
MEANING_FLOOR = 0.77
MEANING_FULL = 0.90
MEANING_MARGIN = 0.08
MEANING_WEIGHT = 0.1
MEANING_ALONE = 0.84
MEANING_LIFT = 0.09  # ... and a cosine this far above the mean cosine of the brain's other memories,
MEANING_WORDS = 2  # ... in a question of at least this many words (one word is found by its word)
MEANING_DEPTH = 200  # nearest vectors read before the scope is applied (grows like the BM25 page)


class Nearest(Protocol):
    def nearest(self, conn: Connection, limit: int) -> tuple[list[tuple[int, float]], float, int]: ...


class MeaningChannel:
    """The memories whose vectors are nearest the question's, within the scope: (rowid, cosine).
    ``mean``: after a search, the mean cosine of the brain's memories with the question."""

    name = "meaning"

    def __init__(self, query: Nearest):
        self.query = query
        self.mean = 0.0
        self.count = 0  # vectors the mean is over

    def search(
        self, conn: Connection, terms: Sequence[str], scope: Scope, limit: int, *, when: bool = False
    ) -> list[tuple[int, float]]:
        depth = max(MEANING_DEPTH, limit * 2)
        while True:
            near, self.mean, self.count = self.query.nearest(conn, depth)
            allowed = _in_scope(conn, [r for r, _ in near], scope)
            kept = [(r, c) for r, c in near if r in allowed]
            if len(kept) >= limit or len(near) < depth:
                return kept[:limit]
            depth *= 4


def meaning_share(
    cosine: float,
    best: float,
    floor: float = MEANING_FLOOR,
    full: float = MEANING_FULL,
    margin: float = MEANING_MARGIN,
) -> float:
    """How much a cosine counts, from 0 to 1: its height between ``floor`` and ``full``, times its
    nearness to the ``best`` cosine (0 at ``margin`` below it). Pure."""
    height = (cosine - floor) / (full - floor)
    nearness = 1.0 - (best - cosine) / margin if margin > 0 else float(cosine >= best)
    return max(0.0, min(1.0, height)) * max(0.0, min(1.0, nearness))


@dataclass(frozen=True)
class Fusion:
    """The settings of ``fuse`` (recall's constants by default; the evaluation tries others)."""

    weight: float = MEANING_WEIGHT
    floor: float = MEANING_FLOOR
    full: float = MEANING_FULL
    margin: float = MEANING_MARGIN
    alone: float = MEANING_ALONE
    lift: float = MEANING_LIFT
    words: int = MEANING_WORDS


def fuse(
    lexical: Sequence[tuple[int, float]],
    meaning: Sequence[tuple[int, float]],
    mean: float = 0.0,
    settings: Fusion = Fusion(),
    *,
    count: int = 0,
    words: int = MEANING_WORDS,
) -> list[tuple[int, float]]:
    """The lexical channel's scores (normalised by its best) plus the weight times each memory's
    meaning share (``meaning``: (rowid, cosine) best first). When the lexical channel found
    nothing, a memory counts only from the ``alone`` cosine and ``lift`` above the mean cosine of
    the brain's other memories with the question (``mean`` over ``count`` vectors, itself among
    them; ``mean`` itself when ``count`` is not given), in a question of ``settings.words`` words or
    more (``words``: the question's): the abstention threshold. Best first, ties in the words'
    order, then by rowid. Pure."""
    top = lexical[0][1] if lexical and lexical[0][1] > 0 else 1.0
    scores = {rowid: score / top for rowid, score in lexical}
    best = max((cosine for _, cosine in meaning), default=0.0)
    for rowid, cosine in meaning:
        others = (mean * count - cosine) / (count - 1) if count > 1 else mean
        alone = words >= settings.words and cosine >= settings.alone and cosine - others >= settings.lift
        if not lexical and not alone:
            continue
        share = settings.weight * meaning_share(cosine, best, settings.floor, settings.full, settings.margin)
        if share > 0:
            scores[rowid] = scores.get(rowid, 0.0) + share
    # ties (two word scores equal once divided by the best, say) keep the words' order, then rowid
    order = {rowid: at for at, (rowid, _) in enumerate(lexical)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order.get(kv[0], len(order)), kv[0]))


def rrf(rankings: Sequence[Sequence[int]], k: int = RRF_K) -> list[tuple[int, float]]:
    """Reciprocal rank fusion: sum of 1 / (k + rank); ties by rowid. Pure."""
    fused: dict[int, float] = defaultdict(float)
    for ranking in rankings:
        for rank, rowid in enumerate(ranking, start=1):
            fused[rowid] += 1.0 / (k + rank)
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))


def open_candidates(
    conn: Connection,
    terms: Sequence[str],
    scope: Scope,
    channels: Sequence[Channel],
    limit: int = CANDIDATES,
    *,
    when: bool = False,
    words: int | None = None,
    fusion: Fusion | None = None,
) -> list[tuple[int, float]]:
    """The top ``limit`` rowids with a relevance in (0, 1] (``combine`` of the channels' results).
    ``when``: the query asks when; ``words``: how many words it has, separated by spaces (default:
    its terms); ``fusion``: the lexical and meaning fusion's settings (recall's constants unless an
    evaluation tries others)."""
    results = [ch.search(conn, terms, scope, limit, when=when) for ch in channels]
    return combine(results, channels, limit, fusion, len(terms) if words is None else words)


def combine(
    results: Sequence[Sequence[tuple[int, float]]],
    channels: Sequence[Channel],
    limit: int = CANDIDATES,
    fusion: Fusion | None = None,
    words: int = MEANING_WORDS,
) -> list[tuple[int, float]]:
    """The channels' results as one ranking, normalised to (0, 1]: one channel's own scores, the
    lexical and the meaning channel fused (``fuse``, with ``fusion``'s settings; ``words``: the
    question's), or other channels fused by RRF. Pure (a meaning channel's ``mean`` and ``count``
    are read from it)."""
    names = [ch.name for ch in channels]
    if len(results) == 1:
        fused = list(results[0])
    elif names == ["lexical", "meaning"] and isinstance(channels[1], MeaningChannel):
        fused = fuse(
            results[0], results[1], channels[1].mean, fusion or Fusion(), count=channels[1].count, words=words
        )
    else:
        fused = rrf([[rowid for rowid, _ in r] for r in results])
    fused = fused[:limit]
    if not fused:
        return []
    top = fused[0][1] or 1.0
    return [(rowid, max(0.0, min(1.0, score / top))) for rowid, score in fused]


FTS_TABLES = ("memory_fts", "memory_context_fts")


def rebuild_indexes(conn: Connection, tables: Sequence[str] = FTS_TABLES) -> int:
    """Rebuild both FTS5 indexes from the memories table; returns the number of memories.

    The same texts as the insert trigger of migration 12 writes (``index_text`` of them): a
    memory's own key and value, and for conversation turns a context of two turns before and
    one after from the same company, source and type. A redacted memory holds no words of its
    own (its key too, unless kept) and no source (migration 13): it has no row in the first index
    when it has no words, and none in the context index (it is no longer part of a
    conversation). ``tables`` names the two indexes to fill (the verifier fills scratch copies to
    compare). Call inside a write transaction."""
    own, context = tables
    q.clear_index(conn, own)
    q.clear_index(conn, context)
    by_source: dict[tuple[str, str, str], list[tuple[int, str]]] = defaultdict(list)
    count = 0
    for rowid, company, source, memory_type, text in q.memories_to_index(conn):
        count += 1
        if str(text).strip():
            q.index_text_row(conn, own, rowid, index_text(text))
        if memory_type in CONVERSATION_TYPES and source:
            by_source[(company, source, memory_type)].append((rowid, text))
    for items in by_source.values():
        for i, (rowid, _text) in enumerate(items):
            window = items[max(0, i - 2) : i + 2]
            q.index_text_row(conn, context, rowid, index_text(" ".join(t for _, t in reversed(window))))
    return count


def index_failures(path: str) -> list[dict[str, object]]:
    """Do the search indexes agree with the memories? Each index is rebuilt from the memories
    table into a scratch copy (on a read-only connection of its own, in one snapshot) and every
    indexed token (term, memory, column, position) is compared: a deleted, injected or altered
    index row is named with the memory it belongs to. `aimos index rebuild` repairs either."""
    conn = open_read_only(Path(path), as_uri=True)
    failures: list[dict[str, object]] = []
    try:
        with q.snapshot(conn):
            scratch = q.scratch_indexes(conn, FTS_TABLES)
            rebuild_indexes(conn, scratch)
            for name in FTS_TABLES:
                rowids = q.index_differences(conn, name)
                if not rowids:
                    continue
                failures.append(
                    {
                        "check": "indexes",
                        "reason": "search_index_mismatch",
                        "detail": f"{name} disagrees with the memories for {memory_names(conn, rowids)}"
                        "; run `aimos index rebuild`",
                        "table": name,
                    }
                )
    finally:
        conn.close()
    return failures
