"""Pure parts of recall: query terms, the FTS5 query and which questions are about aimos
(aimos.recall.text) and reciprocal rank fusion (aimos.recall.candidates.rrf, k = 60, ties by rowid). SPEC section 8.

The FTS5 queries are also run against a real in-memory FTS5 table (apsw's SQLite) to show that
whatever the user typed is searched as text and never parsed as FTS5 syntax.
"""

from __future__ import annotations

from collections.abc import Sequence

import apsw
import pytest

from aimos.recall.candidates import RRF_K, Scope, open_candidates, rrf
from aimos.recall.text import STOP_WORDS, asks_about_aimos, jaccard, query_terms, token_set, tokens
from aimos.store.search import fts_match

FTS_SYNTAX_QUERIES = [
    '"unbalanced',
    "*",
    "NEAR(a b)",
    "a AND OR b",
    "(x",
    "col:value",
    "^start",
    "-x",
    '"',
    "NOT",
    "x NOT",
    "text:x",
    "{text}: x",
    "a + b",
    "'x'",
]


# --- asks_about_aimos: which questions search aimos's own guides --------------------------------
@pytest.mark.parametrize(
    "query",
    [
        "how do I install aimos",
        "how do I recall a memory in aimos",
        "What does AIMOS sign?",
        "aimos's receipts",
        "use the aimos_recall tool",
        "aimos-doctrine",
        "ＡＩＭＯＳ verify",  # full-width letters fold to the name
    ],
)
def test_a_question_that_names_aimos_is_about_aimos(query: str) -> None:
    assert asks_about_aimos(query)


@pytest.mark.parametrize(
    "query",
    [
        "which dentist do I see",
        "what do I remember about Paris",  # the product's words are a person's words too
        "recall my sister's memory of the trip",
        "where is the receipt for the laptop",
        "how do I verify my passport renewal",
        "the aimosity between the two teams",  # the name inside another word
        "",
    ],
)
def test_a_personal_question_is_not_about_aimos(query: str) -> None:
    assert not asks_about_aimos(query)


# --- query_terms --------------------------------------------------------------------------------
def test_query_terms_drop_stop_words() -> None:
    assert query_terms("What is the coffee order of my sister?") == ["coffee", "order", "sister"]


def test_query_terms_keep_every_term_when_all_are_stop_words() -> None:
    assert query_terms("what is it") == ["what", "is", "it"]
    assert query_terms("The THE the") == ["the"]
    assert all(t in STOP_WORDS for t in query_terms("where was he"))


def test_query_terms_are_distinct_lowercased_and_in_order() -> None:
    assert query_terms("Coffee order COFFEE Order coffee") == ["coffee", "order"]
    # NFKC, then casefolded: the index holds "strasse" beside "Straße" (aimos.store.words), and
    # Greek accents fold as the index folds them
    assert query_terms("Ｃｏｆｆｅｅ Straße ΟΔΥΣΣΕΥΣ Αθήνα") == ["coffee", "strasse", "οδυσσευσ", "αθηνα"]


def test_query_terms_keep_only_word_characters() -> None:
    assert query_terms('"unbalanced') == ["unbalanced"]
    assert query_terms("NEAR(a b)") == ["near", "b"]
    assert query_terms("a AND OR b") == ["b"]
    assert query_terms("col:value") == ["col", "value"]
    assert query_terms("^start -x (x") == ["start", "x"]
    assert query_terms("snake_case") == ["snake", "case"]
    assert query_terms("*") == []
    assert query_terms("") == []


# --- fts_match ----------------------------------------------------------------------------------
def test_fts_match_quotes_every_term() -> None:
    assert fts_match(["coffee"]) == '"coffee"'
    assert fts_match(["near", "b"]) == '"near" OR "b"'
    assert fts_match(["and", "or", "not"]) == '"and" OR "or" OR "not"'


def test_fts_match_doubles_a_quote_inside_a_term() -> None:
    # a term is the phrase of its words (the quote is no word), or itself, quoted, when it has none
    assert fts_match(['say"hi']) == '"say hi"'
    assert fts_match(['"']) == '""""'
    assert fts_match(["東京タワー"]) == '"東京 京タ タワ ワー"'


@pytest.fixture
def fts() -> apsw.Connection:
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize = 'porter unicode61 remove_diacritics 2')")
    rows = [
        (1, "unbalanced start near value col x and or b a text"),
        (2, "nothing in common here"),
        (3, "not what you think"),
    ]
    conn.executemany("INSERT INTO t (rowid, text) VALUES (?, ?)", rows)
    return conn


@pytest.mark.parametrize("query", FTS_SYNTAX_QUERIES)
def test_fts_syntax_in_a_query_is_searched_as_text(fts: apsw.Connection, query: str) -> None:
    terms = query_terms(query)
    if not terms:
        return  # nothing to search for: recall abstains without asking the index
    found = [
        r for (r,) in fts.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank", (fts_match(terms),))
    ]
    words = set(tokens("unbalanced start near value col x and or b a text not what you think"))
    assert found, f"{query!r} -> {fts_match(terms)!r} found nothing"
    assert set(terms) <= words


def test_every_syntax_query_makes_a_valid_fts5_expression(fts: apsw.Connection) -> None:
    for query in [*FTS_SYNTAX_QUERIES, "AND", "OR", "NEAR", "a OR", "(((", ")", "x*", "x:y:z"]:
        terms = query_terms(query)
        if terms:
            fts.execute("SELECT rowid FROM t WHERE t MATCH ?", (fts_match(terms),)).fetchall()


def test_token_jaccard() -> None:
    assert jaccard(token_set("a b c"), token_set("C B A")) == 1.0
    assert jaccard(token_set("a b"), token_set("b c")) == pytest.approx(1 / 3)
    assert jaccard(frozenset(), frozenset()) == 0.0


# --- reciprocal rank fusion -----------------------------------------------------------------------
def test_rrf_sums_one_over_k_plus_rank() -> None:
    assert RRF_K == 60
    fused = rrf([[1, 2, 3], [3, 1]])
    assert [rowid for rowid, _ in fused] == [1, 3, 2]
    scores = dict(fused)
    assert scores[1] == pytest.approx(1 / 61 + 1 / 62)
    assert scores[3] == pytest.approx(1 / 63 + 1 / 61)
    assert scores[2] == pytest.approx(1 / 62)


def test_rrf_ties_go_to_the_lower_rowid() -> None:
    assert [r for r, _ in rrf([[7, 5], [5, 7]])] == [5, 7]
    assert [r for r, _ in rrf([[9], [4]])] == [4, 9]
    assert [r for r, _ in rrf([[30, 20, 10]])] == [30, 20, 10]  # no tie: rank decides


def test_rrf_with_another_k() -> None:
    fused = rrf([[1, 2]], k=0)
    assert fused == [(1, 1.0), (2, 0.5)]
    assert rrf([]) == []


class FixedChannel:
    """A retrieval channel with a fixed ranking (no index needed for the fusion itself)."""

    def __init__(self, name: str, ranking: list[tuple[int, float]]):
        self.name = name
        self.ranking = ranking

    def search(
        self, conn: apsw.Connection, terms: Sequence[str], scope: Scope, limit: int, *, when: bool = False
    ) -> list[tuple[int, float]]:
        return self.ranking[:limit]


def test_several_channels_are_fused_by_rrf_and_normalised() -> None:
    conn = apsw.Connection(":memory:")
    scope = Scope("personal", 10, "confidential")
    a = FixedChannel("a", [(1, 9.0), (2, 5.0), (3, 1.0)])
    b = FixedChannel("b", [(3, 7.0), (1, 6.0)])
    got = open_candidates(conn, ["x"], scope, [a, b])
    assert [r for r, _ in got] == [1, 3, 2]
    top = 1 / 61 + 1 / 62
    assert [s for _, s in got] == pytest.approx([1.0, (1 / 63 + 1 / 61) / top, (1 / 62) / top])
    # one channel: its own scores, normalised by the best
    single = open_candidates(conn, ["x"], scope, [a])
    assert single == [(1, 1.0), (2, pytest.approx(5 / 9)), (3, pytest.approx(1 / 9))]
    # a limit applies to each channel before the fusion: a gives [1, 2], b gives [3, 1]
    assert open_candidates(conn, ["x"], scope, [a, b], limit=2) == [
        (1, 1.0),
        (3, pytest.approx((1 / 61) / top)),
    ]
