"""aimos.store.words: what the search index holds for a text, and what a query asks it for.

Vectors pin the index's text (a change to them changes what existing indexes hold: it needs a
migration that refills them, as migration 12 did); properties check, through a real FTS5 index
with the brain's tokenizer, that any part of a run written without spaces finds the text holding
it, and that ASCII text indexes exactly as it did before migration 12."""

from __future__ import annotations

import unicodedata

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aimos.store.search import fts_match
from aimos.store.words import TOKENIZE, TOKENIZER_ARGS, index_text, query_words, text_words, words

INDEX_TEXT = [
    ("Meet Zoë at the café", "meet zoe at the cafe"),
    ("東京タワー", "東京 京タ タワ ワー 東 京 タ ワ ー"),
    ("猫", "猫"),
    ("iPhone東京・大阪", "iphone 東京 大阪 東 京 大 阪"),
    ("東京iphone", "東京 iphone 東 京"),
    ("กัน", "กัน กั น"),  # a vowel sign stays on its letter: the units are กั and น
    ("서울에서", "서울 울에 에서 서 울 에 서"),
    ("Hauptstraße", "hauptstrasse"),
    ("ΑΘΉΝΑ Αθήνα", "αθηνα αθηνα"),
    ("ᲗᲑᲘᲚᲘᲡᲘ", "თბილისი"),  # Georgian capitals: casefolded here, the tokenizer has no case pair for them
    ("كَتَبَ", "كتب"),
    ("ﾀﾜｰ ＡＢＣ", "タワ ワー abc タ ワ ー"),
    ("हिन्दी", "हिन्दी"),
]

QUERY_WORDS = [
    ("Where is the spare KEY?", ["where", "is", "the", "spare", "key"]),
    ("東京タワー", ["東京", "京タ", "タワ", "ワー"]),
    ("猫", ["猫"]),
    ("HAUPTSTRASSE Hauptstraße", ["hauptstrasse", "hauptstrasse"]),
    ("ΑΘΗΝΑ", ["αθηνα"]),
    ("Ｃａｆé", ["cafe"]),
    ("東京・大阪", ["東京", "大阪"]),
]


def _normalized(indexed: str) -> str:
    return " ".join(indexed.split())


@pytest.mark.parametrize(("text", "indexed"), INDEX_TEXT)
def test_index_text_vectors(text: str, indexed: str) -> None:
    assert _normalized(index_text(text)) == indexed


@pytest.mark.parametrize(("query", "expected"), QUERY_WORDS)
def test_query_words_vectors(query: str, expected: list[str]) -> None:
    assert query_words(query) == expected


def test_words_keep_marks_inside_a_word_as_the_tokenizer_does() -> None:
    assert words("मेरी बहन, กัน!") == ["मेरी", "बहन", "กัน"]
    assert words("snake_case x-y") == ["snake", "case", "x", "y"]


def _words_by_category(text: str) -> list[str]:
    """The reference: a word is a run of characters of category L*, N*, M* or Co."""
    out: list[str] = []
    current = ""
    for ch in text:
        if unicodedata.category(ch)[0] in "LNM" or unicodedata.category(ch) == "Co":
            current += ch
        elif current:
            out, current = [*out, current], ""
    return [*out, current] if current else out


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=40))
def test_words_are_runs_of_letters_numbers_marks_and_private_use(text: str) -> None:
    assert words(text) == _words_by_category(text)


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=60))
def test_ascii_text_is_indexed_as_it_was(text: str) -> None:
    assert index_text(text) == text


def _index(texts: list[str]) -> apsw.Connection:
    conn = apsw.Connection(":memory:")
    conn.execute(f'CREATE VIRTUAL TABLE f USING fts5(text, tokenize = "{TOKENIZE}")')
    for i, text in enumerate(texts, start=1):
        conn.execute("INSERT INTO f (rowid, text) VALUES (?, ?)", (i, index_text(text)))
    return conn


def test_the_python_words_are_the_tokenizers() -> None:
    """text_words (what recall counts in a memory) are the tokens FTS5 makes of index_text before
    stemming (casefolded, as a query is), for every script here."""
    conn = apsw.Connection(":memory:")
    stemmer, (name, *args) = TOKENIZER_ARGS
    assert stemmer == "porter"
    tokenizer = conn.fts5_tokenizer(name, args)
    for text, _ in INDEX_TEXT:
        made = [str(t[-1]) for t in tokenizer(index_text(text).encode(), apsw.FTS5_TOKENIZE_DOCUMENT, None)]
        assert [t.casefold() for t in made] == text_words(text), text


CJK = st.sampled_from(
    list(
        "東京大阪北京天安門的一是不了人我在有他这为之来以个们到说和地也子时道出而要于就下得可你年生自会那后能对着事其里所去行过家十用发天如然作方成者多日都三小军二无同么经法当起与好看学进种将还分此心前面又定见只从现因开些长ノタワーにを"
    )
)


@settings(max_examples=200, deadline=None)
@given(st.lists(CJK, min_size=1, max_size=12), st.data())
def test_any_part_of_a_run_finds_the_text_holding_it(run: list[str], data: st.DataObject) -> None:
    text = "".join(run)
    start = data.draw(st.integers(0, len(run) - 1))
    end = data.draw(st.integers(start + 1, len(run)))
    part = "".join(run[start:end])
    conn = _index([text, "無関係な文章です"])
    found = {r[0] for r in conn.execute("SELECT rowid FROM f WHERE f MATCH ?", (fts_match([part]),))}
    assert 1 in found
    # and every pair of the part is among the text's words (what recall's coverage counts)
    assert set(query_words(part)) <= set(text_words(text))


LATIN_WORDS = ["iphone", "tokyo", "x", "café", "2023"]
LATIN = st.sampled_from(LATIN_WORDS)
PIECE = st.one_of(st.lists(CJK, min_size=2, max_size=4).map("".join), LATIN)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(PIECE, st.sampled_from(["", " "])), min_size=1, max_size=8), st.data())
def test_a_phrase_of_runs_and_words_finds_the_text_holding_it(
    pieces: list[tuple[str, str]], data: st.DataObject
) -> None:
    """Runs of two or more letters beside words, with or without a space: any stretch of whole
    pieces, quoted, finds the text (a run's single letters follow the whole text in the index, so
    they never break a phrase)."""
    # two words side by side are one word: a word is followed by a space
    pieces = [(piece, " " if piece in LATIN_WORDS else gap) for piece, gap in pieces]
    text = "".join(piece + gap for piece, gap in pieces)
    start = data.draw(st.integers(0, len(pieces) - 1))
    end = data.draw(st.integers(start + 1, len(pieces)))
    part = "".join(piece + gap for piece, gap in pieces[start:end]).strip()
    conn = _index([text])
    assert conn.execute("SELECT rowid FROM f WHERE f MATCH ?", (fts_match([part]),)).fetchall() == [(1,)]


@settings(max_examples=200, deadline=None)
@given(st.lists(CJK, min_size=2, max_size=10), st.lists(CJK, min_size=2, max_size=4))
def test_a_run_is_found_only_where_it_is_written(run: list[str], other: list[str]) -> None:
    """A quoted run is the phrase of its pairs: it matches a text exactly when the text holds it."""
    text, part = "".join(run), "".join(other)
    conn = _index([text])
    found = bool(conn.execute("SELECT rowid FROM f WHERE f MATCH ?", (fts_match([part]),)).fetchall())
    assert found == (part in text)
