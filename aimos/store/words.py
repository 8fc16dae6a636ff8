"""How text becomes the words of the search index, and a query's words the index's (pure, no I/O).

FTS5's unicode61 tokenizer splits text at every character that is not a letter, number or mark,
lowercases it and folds Latin diacritics. Left to itself it fails three kinds of writing:

- **Scripts written without spaces** (Chinese, Japanese, Thai, Lao, Khmer, Myanmar) and Korean,
  whose particles attach to the word: a whole clause is one token, so `東京` never finds
  `東京タワーに行った`. Here each run of such characters becomes its overlapping bigrams in place,
  and the single characters of every run follow the whole text (`東京 京タ タワ ワー ーに ...
  東 京 タ ワ ー に ...`). A query's run becomes its bigrams alone (a lone character stays
  itself), so a quoted run, with the words around it, is a phrase of consecutive words: it
  matches exactly the memories holding it, anywhere.
- **Accents unicode61 does not fold**: Greek tonos and dialytika (`Αθήνα`, `ΑΘΗΝΑ`), Arabic
  harakat and Hebrew points. They are removed here (Latin ones too, which unicode61 also folds:
  a query's words and a memory's then compare as the index does); an abugida's vowel signs
  (Devanagari, Thai) are parts of the letter and stay (the index keeps marks inside words: its
  tokenizer counts category M as word characters since migration 12).
- **Case folding beyond lowercase**: `ß` lowercases to itself, so `HAUPTSTRASSE` missed
  `Hauptstraße`, and the tokenizer's case table misses newer case pairs (Georgian Mtavruli,
  Adlam). Non-ASCII text is indexed casefolded, and a query is casefolded.

Text is NFKC-normalized first (full-width `ＡＢＣ` is `ABC`, half-width `ﾀﾜｰ` is `タワー`), as queries
always were. ASCII text is returned as it is, so an English brain's index is unchanged; other text
comes back as its words joined by spaces (the punctuation the tokenizer would drop is dropped).

``index_text`` is registered as the SQL function ``aimos_index_text``: the insert trigger of
migration 12, the index rebuild and its check all index exactly its output.
"""

from __future__ import annotations

import functools
import re
import unicodedata

# Scripts whose words are not separated by spaces (or, for Hangul, carry attached particles):
# Thai, Lao, Myanmar, Hangul Jamo, Khmer, kana, CJK ideographs (with extension A and the
# compatibility block), Hangul syllables, and the supplementary ideographic planes.
_NO_SPACE = (
    "[\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u3040-\u30ff\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003ffff]+"
)
# Scripts whose combining marks are accents to fold: Latin (as unicode61 folds it too), Greek,
# Hebrew, Arabic (and its supplement).
_FOLDED_MARKS = (
    "[\u00c0-\u024f\u1e00-\u1eff\u0370-\u03ff\u1f00-\u1fff\u0590-\u05ff\u0600-\u06ff\u0750-\u077f]+"
)
_NO_SPACE_PIECES = f"({_NO_SPACE})"


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """The non-ASCII patterns, compiled when non-ASCII text first comes (their wide classes take
    milliseconds to compile; an ASCII text, the common case, never needs them)."""
    return re.compile(pattern)


_ASCII_WORD = re.compile(r"[A-Za-z0-9]+")
# the tokenizer's options: unicode61 with category M (marks) as word characters
TOKENIZER_ARGS = ("porter", ["unicode61", "remove_diacritics", "2", "categories", "L* N* Co M*"])
TOKENIZE = "porter unicode61 remove_diacritics 2 categories 'L* N* Co M*'"


def _fold_marks(run: re.Match[str]) -> str:
    decomposed = unicodedata.normalize("NFD", run.group())
    kept = "".join(ch for ch in decomposed if not unicodedata.category(ch).startswith("M"))
    return unicodedata.normalize("NFC", kept)


def _units(run: str) -> list[list[str]]:
    """A no-space run's segments, each a list of units: a letter or number with the marks after
    it. A character of another category inside the run (a middle dot, Thai punctuation) ends a
    segment."""
    segments: list[list[str]] = [[]]
    for ch in run:
        kind = unicodedata.category(ch)[0]
        if kind == "M" and segments[-1]:
            segments[-1][-1] += ch
        elif kind in "LNM":
            segments[-1].append(ch)
        elif segments[-1]:
            segments.append([])
    return [s for s in segments if s]


def _bigrams(units: list[str]) -> list[str]:
    if len(units) == 1:
        return list(units)
    return [units[i] + units[i + 1] for i in range(len(units) - 1)]


def words(text: str) -> list[str]:
    """The words unicode61 (categories L*, N*, Co and M*) makes of ``text``, as written: runs of
    letters, numbers, private-use characters and marks."""
    if text.isascii():
        return _ASCII_WORD.findall(text)
    return _word_pattern().findall(text)


@functools.cache
def _word_pattern() -> re.Pattern[str]:
    """Letters and numbers (``[^\\W_]``), marks and private-use characters, as one class (marks
    listed once per process: every character of category M below U+20000 and the variation
    selectors supplement; no other plane holds one)."""
    codes = (*range(0x300, 0x20000), *range(0xE0100, 0xE01F0))
    marks = "".join(chr(c) for c in codes if unicodedata.category(chr(c))[0] == "M")
    private = "\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd"
    return re.compile(f"(?:[^\\W_]|[{re.escape(marks)}{private}])+")


def _normal(text: str) -> str:
    return _compiled(_FOLDED_MARKS).sub(_fold_marks, unicodedata.normalize("NFKC", text))


def _pieces(text: str) -> tuple[list[str], list[str]]:
    """The words of non-ASCII ``text`` in order (NFKC, accents folded, casefolded; a no-space
    run as its bigrams, a lone character as itself), and after them the single characters of
    every run of two or more."""
    inline: list[str] = []
    letters: list[str] = []
    for word in words(_normal(text).casefold()):
        for i, piece in enumerate(_compiled(_NO_SPACE_PIECES).split(word)):
            if i % 2 == 0:  # between runs
                if piece:
                    inline.append(piece)
                continue
            for units in _units(piece):
                inline += _bigrams(units)
                if len(units) > 1:
                    letters += units
    return inline, letters


def index_text(text: str) -> str:
    """The text the index tokenizes for ``text``: ASCII text unchanged; any other its words in
    order (NFKC, accents folded, casefolded, each no-space run as its bigrams), then the single
    characters of those runs. The single characters come last so that a phrase of a run's
    bigrams and the words around it stays a phrase in the index."""
    if text.isascii():
        return text
    inline, letters = _pieces(text)
    return " ".join(inline + letters)


def query_words(text: str) -> list[str]:
    """The index words a query asks for, in order: NFKC, accents folded and casefolded as
    ``index_text`` does, each no-space run as its bigrams (a lone character as itself)."""
    if text.isascii():
        return [w.lower() for w in _ASCII_WORD.findall(text)]
    return _pieces(text)[0]


def text_words(text: str) -> list[str]:
    """Every index word of ``text`` as a query would ask for it (casefolded; a no-space run's
    bigrams and single characters): what a memory holds, for counting a query's words in it."""
    if text.isascii():
        return query_words(text)
    inline, letters = _pieces(text)
    return inline + letters
