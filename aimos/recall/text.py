"""Query and memory text handling for recall (pure): tokens, stop words, the FTS5 query.

The FTS5 query is built only from word tokens, each one quoted, so whatever the user typed
(quotes, `*`, `NEAR`, parentheses, column filters) is searched as text and never parsed as
FTS5 syntax.
"""

from __future__ import annotations

import unicodedata

from aimos.store.words import query_words, text_words
from aimos.textfold import fold

# Function words that carry no topic in a question; removed from queries (not from the index).
STOP_WORDS = frozenset(
    """a an the and or but if of to in on at by for with about as is are was were be been being
    do does did doing have has had having i you he she it we they me him her them my your his its
    our their mine yours this that these those what which who whom whose when where why how would
    could should will can may might must shall not no so than too very just also into from up down
    out over under again further then once here there all any both each few more most other some
    such only own same s t don now ever likely much many""".split()
)


def normalize(text: str) -> str:
    """NFKC, then casefolded: "Hauptstraße" and "HAUPTSTRASSE" are one word, as the index holds
    a casefold beside each word that needs one (aimos.store.words)."""
    return unicodedata.normalize("NFKC", text).casefold()


def tokens(text: str) -> list[str]:
    """The words of ``text`` as the index holds them and a query asks for them: casefolded,
    accents folded, a run of Chinese, Japanese, Thai or Korean as its bigrams and single
    characters (aimos.store.words.text_words)."""
    return text_words(text)


def query_terms(query: str) -> list[str]:
    """Distinct content terms of a query in order (a no-space run as its bigrams); all terms
    when every one is a stop word."""
    words = query_words(query)
    content = [w for w in words if w not in STOP_WORDS]
    chosen = content or words
    return list(dict.fromkeys(chosen))


def token_set(text: str) -> frozenset[str]:
    return frozenset(tokens(text))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 0.0
    shared = len(a & b)  # the union's size without building it
    return shared / (len(a) + len(b) - shared)


def plain(text: str) -> str:
    """The query-lure normalization (PROTOCOL-NOTES 10): lowercase, NFKD, every run of characters
    other than letters and numbers one space, trimmed (aimos.textfold)."""
    return fold(text)


def stem_prefix(token: str, size: int = 5) -> str:
    """A crude stem for term coverage: the first ``size`` characters."""
    return token[:size]
