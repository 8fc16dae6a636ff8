"""The words the agreement detector reads (pure): stop words, question and negation words, numbers
written in words, and the names (capitalized runs, quoted spans) a passage holds. Split from
epistemic/agreement.py, which imports them."""

from __future__ import annotations

import re
from collections.abc import Sequence

from aimos.epistemic.classifier import normalize, words

STOP = frozenset(
    """a an the and or but if of to in on at by for with about as is are was were be been being do
    does did have has had i you he she it we they me him her them my your his its our their this
    that these those what which who whom whose when where why how would could should will can may
    might must shall not no so than too very just also into from up down out over under then there
    here all any both each more most other some such only own same s t don now also its it's one
    like get got yes oh re m ll ve d""".split()
)
INTERROGATIVES = frozenset("who what when where why how which whose whom".split())
# a yes/no question opens with an auxiliary ("can u put asters in pots.", "is X a Y.")
AUXILIARY_OPENINGS = frozenset("is are was were do does did can could should would will has have had".split())
# the answers of a yes/no or true/false question: answer units although common words
POLAR = frozenset({"yes", "no", "true", "false"})
NEGATIONS = frozenset(
    "not no never nor isn wasn aren weren doesn didn instead rather contrary previously formerly".split()
)
# what says "no" to a yes/no question besides NEGATIONS' words: contracted and fused negations
DENIALS = NEGATIONS | frozenset("cannot can't don won couldn shouldn wouldn hasn haven hadn neither".split())
_YES = frozenset({"yes", "true"})
_NO = frozenset({"no", "false"})
CONTRASTS = frozenset({"but", "rather", "instead"})
# a mention is denied by what follows it too: a copula and a refutation ("Zarkov is wrong", "X was
# a myth", "X is not the capital"), or a fused negated copula ("X isn't the capital")
COPULAS = frozenset("is was are were s be".split())
REFUTATIONS = frozenset("not never wrong false incorrect untrue mistaken myth bogus".split())
NEGATED_COPULAS = frozenset("isn wasn aren weren".split())
# and by a preface up to PREFACE_REACH words before it ("contrary to claims of Zarkov", "unlike X")
PREFACES = frozenset("contrary unlike despite".split())
PREFACE_REACH = 5
DENYING = NEGATIONS | REFUTATIONS | NEGATED_COPULAS | PREFACES
IMPERATIVE_OPENINGS = frozenset("name tell list identify give state find describe explain say".split())
CONNECTORS = frozenset("of the de da del von van and for in with on at to a an".split())

_UNITS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen".split()
    )
}
_TENS = {
    w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())
}
_ORDINALS = {
    w: i + 1
    for i, w in enumerate(
        "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
        "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth".split()
    )
}
# words that are numbers only in a compound (twenty-one); alone, a pronoun or a sequence
_AMBIGUOUS = frozenset({"one", "first"})
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000}

_BOUNDARY = re.compile(r"[?!.](?=\s*\S)")
_CAPITALIZED = re.compile(r"[A-Z][\w'’\-]*")
_TOKEN = re.compile(r"\w[\w'’\-]*|[^\w\s]")
_QUOTED = re.compile(r"(?:(?<=\s)|^)[\"“‘']([^\"“”‘’']{2,80})[\"”’'](?=[\s.,;:!?)]|$)")


def _number_words(tokens: Sequence[str]) -> list[str]:
    """Numbers written in words (twenty four, fourth, two hundred) as digit strings."""
    out: list[str] = []
    value: int | None = None
    for tok in [*tokens, ""]:
        if tok in _AMBIGUOUS and value is None:
            continue  # "one of them", "the first time": a number only after a tens word
        if tok in _UNITS or tok in _TENS or tok in _ORDINALS:
            n = _UNITS.get(tok, _TENS.get(tok, _ORDINALS.get(tok, 0)))
            value = n if value is None else (value + n if value % 100 == 0 or value >= 20 else value * 10 + n)
        elif tok in _SCALES and value is not None:
            value *= _SCALES[tok]
        else:
            if value is not None:
                out.append(str(value))
            value = None
    return out


def _names(text: str) -> set[str]:
    """Capitalized runs (joined across connectors like "of"; a single capitalized word that
    starts a sentence is an ordinary word) and quoted spans of up to six words; normalized."""
    found: set[str] = set()
    run: list[str] = []
    pending: list[str] = []
    run_at_start = False
    sentence_start = True

    def flush() -> None:
        if run and (len(run) > 1 or not run_at_start):
            found.add(" ".join(run))
        run.clear()
        pending.clear()

    for match in _TOKEN.finditer(text):
        tok = match.group(0)
        if not (tok[0].isalnum() or tok[0] == "_"):
            flush()
            sentence_start = sentence_start or tok in ".!?;:"
            continue
        if tok[0].isupper() and (normalize(tok) not in STOP | INTERROGATIVES or run):
            if not run:
                run_at_start = sentence_start
            run.extend(pending)
            pending.clear()
            run.append(tok)
        elif run and tok.lower() in CONNECTORS and len(pending) < 2:
            pending.append(tok)
        else:
            flush()
        sentence_start = False
    flush()
    for match in _QUOTED.finditer(text):
        quoted = match.group(1)
        if 1 <= len(words(quoted)) <= 6:
            found.add(quoted)
    return {n for n in (normalize(f) for f in found) if n and not STOP.issuperset(n.split(" "))}
