"""How text becomes the words of the search index, and a query's words the index's (pure, no I/O).

FTS5's unicode61 tokenizer splits text at every character that is not a letter, number or mark,
lowercases it and folds Latin diacritics. Left to itself it fails three kinds of writing:

- **Scripts written without spaces** (Chinese, Japanese, Thai, Lao, Khmer, Myanmar) and Korean,
  whose particles attach to the word: a whole clause is one token, so `東京` never finds
  `東京タワーに行った`. Here each run of such characters becomes its overlapping bigrams, then its
  single characters (`東京 京タ タワ ワー ーに ... 東 京 タ ワ ー に ...`). A query's run becomes its
  bigrams alone (a lone character stays itself), in order, so a quoted run is a phrase of
  consecutive bigrams: it matches exactly the memories holding that run, anywhere.
- **Accents unicode61 does not fold**: Greek tonos and dialytika (`Αθήνα`, `ΑΘΗΝΑ`), Arabic
  harakat and Hebrew points. They are removed here (Latin ones too, which unicode61 also folds:
  a query's words and a memory's then compare as the index does); an abugida's vowel signs (Devanagari, Thai)
  are parts of the letter and stay (the index keeps marks inside words: its tokenizer counts
  category M as word characters since migration 12).
- **Case folding beyond lowercase**: `ß` lowercases to itself, so `HAUPTSTRASSE` missed
  `Hauptstraße`. A word whose casefold differs from its lowercase is indexed in both forms, and a
  query is casefolded.

Text is NFKC-normalized first (full-width `ＡＢＣ` is `ABC`, half-width `ﾀﾜｰ` is `タワー`), as queries
always were. ASCII text is returned as it is, so an English brain's index is unchanged.

``index_text`` is registered as the SQL function ``aimos_index_text``: the insert trigger of
migration 12, the index rebuild and its check all index exactly its output.
"""

from __future__ import annotations

import re
import unicodedata

# Scripts whose words are not separated by spaces (or, for Hangul, carry attached particles):
# Thai, Lao, Myanmar, Hangul Jamo, Khmer, kana, CJK ideographs (with extension A and the
# compatibility block), Hangul syllables, and the supplementary ideographic planes.
_NO_SPACE = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u3040-\u30ff\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003ffff]+"
)
# Scripts whose combining marks are accents to fold: Latin (as unicode61 folds it too), Greek,
# Hebrew, Arabic (and its supplement).
_FOLDED_MARKS = re.compile(
    "[\u00c0-\u024f\u1e00-\u1eff\u0370-\u03ff\u1f00-\u1fff\u0590-\u05ff\u0600-\u06ff\u0750-\u077f]+"
)
_NO_SPACE_PIECES = re.compile("(" + _NO_SPACE.pattern + ")")
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
    out: list[str] = []
    current: list[str] = []
    for ch in text:
        kind = unicodedata.category(ch)
        if kind[0] in "LNM" or kind == "Co":
            current.append(ch)
        elif current:
            out.append("".join(current))
            current = []
    if current:
        out.append("".join(current))
    return out


def _normal(text: str) -> str:
    return _FOLDED_MARKS.sub(_fold_marks, unicodedata.normalize("NFKC", text))


def index_text(text: str) -> str:
    """The text the index tokenizes for ``text``: NFKC; Greek, Arabic and Hebrew accents removed;
    each word whose casefold is not its lowercase followed by its casefold; each no-space run as
    its bigrams then its single characters. ASCII text comes back unchanged."""
    if text.isascii():
        return text
    text = _normal(text)
    out: list[str] = []
    for word in words(text):
        lowered, folded = word.lower(), word.casefold()
        if folded != lowered:
            out.append(word)
            word = folded
        out.append(_NO_SPACE.sub(_run_indexed, word))
    return " ".join(out)


def _run_indexed(run: re.Match[str]) -> str:
    parts: list[str] = []
    for units in _units(run.group()):
        parts += _bigrams(units) if len(units) > 1 else []
        parts += units
    return " " + " ".join(parts) + " "


def query_words(text: str) -> list[str]:
    """The index words a query asks for, in order: NFKC, accents folded as ``index_text``
    folds them, casefolded, each no-space run as its bigrams (a lone character as itself)."""
    if text.isascii():
        return [w.lower() for w in _ASCII_WORD.findall(text)]
    out: list[str] = []
    for word in words(_normal(text).casefold()):
        for i, piece in enumerate(_NO_SPACE_PIECES.split(word)):
            if i % 2 == 0:  # between runs
                out += words(piece)
            else:
                for units in _units(piece):
                    out += _bigrams(units)
    return out


def text_words(text: str) -> list[str]:
    """Every index word of ``text`` as a query would ask for it (casefolded; a no-space run's
    bigrams and single characters): what a memory holds, for counting a query's words in it."""
    return query_words(text) if text.isascii() else query_words(index_text(text))
