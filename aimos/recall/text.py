"""Query and memory text handling for recall (pure): tokens, stop words, the FTS5 query.

The FTS5 query is built only from word tokens, each one quoted, so whatever the user typed
(quotes, `*`, `NEAR`, parentheses, column filters) is searched as text and never parsed as
FTS5 syntax.
"""

from __future__ import annotations

import re
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
    non-ASCII text casefolded (aimos.store.words)."""
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


# A question that asks when: its answer is a memory that says when something happened.
_ASKS_WHEN = re.compile(
    r"^\W*(?:when|since when|how long ago"
    r"|(?:in |on |at |by )?(?:what|which) (?:year|month|day|date|time|week))\b",
    re.IGNORECASE,
)
# Words that place an event in time: a relative time, a weekday, a month (not "may", mostly the
# verb), a year.
_SAYS_WHEN = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|ago|last|next|recently|lately|earlier|later|since|until"
    r"|weekend|(?:mon|tues|wednes|thurs|fri|satur|sun)days?|january|february|march|april|june"
    r"|july|august|september|october|november|december|(?:19|20)\d\d)\b",
    re.IGNORECASE,
)
# A stamp at the head of a memory ("[1:56 pm on 8 May, 2023] ..."): when it was said, not what.
_STAMP = re.compile(r"^\s*\[[^\]]{0,80}\]\s*")


def asks_when(query: str) -> bool:
    """Does the query ask when (English: "When did ...", "What year ...")? Pure."""
    return _ASKS_WHEN.search(query) is not None


# A question that names aimos is about aimos: it searches aimos's own guide memories too (scope
# system, saved at install). Only the name counts: "memory", "recall" or "receipt" are a person's
# words as well ("what do I remember about Paris", "where is the laptop's receipt").
PRODUCT_NAME = "aimos"


def asks_about_aimos(query: str) -> bool:
    """Does the query name aimos ("how do I install aimos", "aimos_recall", "AIMOS's receipts"),
    as a word of its own ("aimosity" is not)? Pure."""
    return PRODUCT_NAME in tokens(query)


def says_when(text: str) -> bool:
    """Does the text place something in time (a relative time, a weekday, a month, a year), past
    a stamp at its head? Pure."""
    return _SAYS_WHEN.search(unstamped(text)) is not None


NOTES_PEELED = 4  # bracketed notes at a text's tail that asks() looks past, each of at most 400 chars


def asks(text: str) -> bool:
    """Does the text ask (its last sentence a question), past a stamp at its head and up to four
    bracketed notes at its tail ("[image: ...]")? Pure; linear in the text (no backtracking)."""
    body = unstamped(text).rstrip()
    for _ in range(NOTES_PEELED):
        start = body.rfind("[", max(0, len(body) - 402))
        if not body.endswith("]") or start < 0 or "]" in body[start:-1]:
            break
        body = body[:start].rstrip()
    return body.endswith("?")


def unstamped(text: str) -> str:
    """The text without a bracketed stamp at its head. Pure."""
    return _STAMP.sub("", text, count=1)


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
