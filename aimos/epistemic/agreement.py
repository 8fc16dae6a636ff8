"""The second detector (``aimos-memory-epistemic-v2``): agreement clusters. Pure, no I/O.

The reference kernel (classifier.py, v1) fingerprints a question a passage opens with, when the
question opens with an interrogative word or a lowercase letter. This detector looks at what a
corpus-poisoning attack cannot avoid, whatever its casing or wording:

- **several passages from one origin** (the same declared source; or the same agent epoch within
  a burst of ``BURST_SECONDS``; or near-duplicate text, whatever the declared source), so that
  spreading passages over declared sources does not make them independent;
- **on one subject** (they share a leading question in any casing and any opening, or enough of
  their content words);
- **agreeing on one answer** (the units most of them assert: numbers, in digits or in words;
  names, as capitalized runs or quoted; yes/no; words rare in the brain; beyond what the question
  itself names; "not X but Y" asserts Y only);
- **contradicting what another origin says about the same subject**: another origin's passage on
  the subject lacks a unit nearly as many of the cluster's passages assert as its strongest claim
  (one no other origin asserts), and answers with a name or number of its own, one fewer of the
  cluster's passages assert (an attacker who also names the honest answer in some passages, "not
  X, as older sources claim, but Y", still says Y more often).

A cluster of 3 or more that is contradicted and never supported: poison_likely. A cluster of 3 or
more passages opening with the same question from one origin, unsupported: poison_suspect (the
reference's lure shape, in any casing). A cluster whose strongest claim, an answer among it,
another origin states too (independent support) and that nothing contradicts is cleared: an
adverse label a detector gave its members goes back to unverified (a person's judgment and an
inherited judgment are never touched; the writer checks that).

With an NLI judge a person enabled (epistemic/nli.py: ``judge``, a plain callable here), whether
another origin's passage contradicts or supports the cluster is the judge's call where it is sure
(contradiction or entailment), and the words' where it is neutral; without one, the words' alone.

The person's own agent (``cli``) is the person's word: what it saved counts as evidence (an origin
that agrees, another that dissents) but this detector never labels it (the reference kernel still
looks at it).

At recall (contested_at_recall) the same comparison runs over the recall's candidates with the
query as the subject: truth worded too differently from the poison to share its words with it is
on the query's subject still, and every member of an origin among the candidates is judged. It
labels nothing; the recall withholds (reason agreement_contested in its signed decision).

Limits, measured by `aimos eval poisonedrag` and said in docs/detector.md: a yes/no question whose
poison argues without saying yes or no gives the detector no answer to compare; in a brain of
fewer than ``RARE_BRAIN`` memories a word's rarity tells nothing, so only names, numbers and yes/no
are answers there; conversation turns are not looked at (detect.UNCHECKED_TYPES).

Meaning (issue 37): where the memories have vectors of the pinned embedding model, two passages
whose cosine is at least ``SUBJECT_COSINE`` are on one subject (paraphrases of one question, so a
campaign reworded passage by passage is still one cluster, and the truth worded otherwise is on its
subject), and at recall a candidate whose cosine with the query is at least ``QUERY_COSINE`` is on
the query's subject. Meaning only groups: it never ties passages into one origin (a hostile agent's
paraphrases of honest memories do not make them its own) and never judges which answer a passage
gives (an embedding cannot tell "in Paris" from "not in Paris"): the answers are still words. Without
vectors (the model turned off, or a memory not embedded yet) the detector reads words alone.

Every verdict is the writer's to record as a signed classification transition (epistemic.chain);
nothing is deleted. The signals hold counts and hashes, never the memory's text.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aimos.epistemic.classifier import normalize, words
from aimos.epistemic.wording import (
    _BOUNDARY,
    _NO,
    _YES,
    AUXILIARY_OPENINGS,
    CONTRASTS,
    COPULAS,
    DENIALS,
    DENYING,
    IMPERATIVE_OPENINGS,
    INTERROGATIVES,
    NEGATED_COPULAS,
    NEGATIONS,
    POLAR,
    PREFACE_REACH,
    PREFACES,
    REFUTATIONS,
    STOP,
    _names,
    _number_words,
)
from aimos.vocabulary import AGREEMENT_DETECTOR_VERSION, CLI_AGENT, POISON_LIKELY, POISON_SUSPECT, UNVERIFIED

BURST_SECONDS = 600
NEAR_DUPLICATE = 0.7  # Jaccard of word 3-shingles
CONSENSUS = 0.6  # share of the cluster that must carry a span for it to be agreed
SUBJECT_SHARED = 4  # content words two passages share, at least ...
SUBJECT_RATIO = 0.34  # ... and this share of the smaller one's content words
# cosines of multilingual-e5-small (measured on the PoisonedRAG targets: a target's passages
# 0.88-0.99 with each other, 0.82-0.95 with the reference stating its truth; passages of different
# targets 0.81 at the 95th percentile, 0.89 at most; a question against its own passages 0.82-0.97,
# against other targets' passages 0.79 at the 95th percentile, 0.85 at most)
SUBJECT_COSINE = 0.88  # two passages at least this close are on one subject
QUERY_COSINE = 0.86  # at recall, a candidate at least this close to the query is on its subject
RARE_SHARED = 2  # or one fewer shared content words, this many of them rare in the brain
QUESTION_MIN_CONTENT = 2
RARE_FLOOR = 10  # an agreed span held by more memories than the cluster and this many ...
RARE_SHARE = 0.002
RARE_BRAIN = 1000  # below this many memories, a word's rarity tells nothing (every word is rare)
SIGNATURE_SAVES = 2  # saves of the burst on other subjects: a unit in half of them is the origin's mark
LIKELY = 800
OTHER_ORIGINS = 3  # the other origins on a new memory's subject judged again at its save
SUSPECT = 600
# an NLI judge (a plug-in a person enables, epistemic/nli.py): for each (premise, hypothesis) pair,
# the probabilities of entailment, neutral and contradiction
Judge = Callable[[Sequence[tuple[str, str]]], Sequence[tuple[float, float, float]]]
HYPOTHESES = 3  # the origin's passages a judge reads another origin's passage against


@dataclass(frozen=True)
class Passage:
    """What the detector reads of a memory (the writer's view of a row)."""

    memory_id: str
    value: str
    source: str
    author: tuple[str, int]  # the saving agent's epoch (agent id, valid_from)
    created_at: int
    rowid: int = 0  # the memory's row (its vector's key), 0 when unknown


@dataclass(frozen=True, eq=False)
class Features:
    """(Compared by identity: one object per memory (detect caches them), and a comparison of
    every field was most of a save's time.)"""

    passage: Passage
    normalized: str
    content: frozenset[str]
    spans: frozenset[str]
    question: str | None  # the normalized leading question, when it qualifies
    question_spans: frozenset[str]
    shingles: frozenset[tuple[str, ...]] = field(default_factory=frozenset)
    # the spans and content words the passage asserts: some mention of it is not negated ("not
    # X but Y" asserts Y and denies X)
    asserted: frozenset[str] = field(default_factory=frozenset)
    # the shingles of the leading question: a question two passages both ask is their subject, not
    # a copy (a short answer after a long question is not a near-duplicate of another answer)
    question_shingles: frozenset[tuple[str, ...]] = field(default_factory=frozenset)
    numbers: frozenset[str] = field(default_factory=frozenset)
    # the passage's stance on a yes/no question: "no" when it denies (a negation after its
    # question) or answers no; "yes" otherwise; ``answers``: the yes or no it says outright
    stance: str = "yes"
    answers: str | None = None


# the cosine of two passages' vectors, None when either has none (the detector reads words then)
Similarity = Callable[["Features", "Features"], "float | None"]


def by_vectors(vectors: Mapping[str, Any]) -> Similarity:
    """The similarity of passages by their vectors (memory id -> a vector, any sequence of floats):
    their cosine; None for a passage without one (or vectors of different sizes)."""
    import numpy as np

    from aimos.meaning.vectors import cosine

    arrays = {mid: np.asarray(v, dtype=np.float32) for mid, v in vectors.items()}

    def similar(a: Features, b: Features) -> float | None:
        va, vb = arrays.get(a.passage.memory_id), arrays.get(b.passage.memory_id)
        if va is None or vb is None or va.shape != vb.shape:
            return None
        return cosine(va, vb)

    return similar


def _near(similar: Similarity | None, a: Features, b: Features, least: float) -> bool:
    found = similar(a, b) if similar is not None else None
    return found is not None and found >= least


def leading_question(text: str) -> str | None:
    """The passage's first sentence when it is a question in any casing and any opening: it ends
    with '?', or has an interrogative word among its first three ("In which year ..."), or opens
    with an imperative (Name, Tell, List...) or an auxiliary (a yes/no question: "Is X a Y.");
    3..48 words, 2 or more content words, and a continuation after it."""
    match = _BOUNDARY.search(text)
    if match is None or not 8 <= match.start() <= 320:
        return None
    sentence = text[: match.start()]
    rest = text[match.start() + 1 :].strip()
    tokens = words(sentence)
    if not 3 <= len(tokens) <= 48 or len(rest) < 12:
        return None
    content = [t for t in tokens if t not in STOP and not t.isdigit()]
    if len(content) < QUESTION_MIN_CONTENT:
        return None
    if (
        text[match.start()] == "?"
        or INTERROGATIVES & set(tokens[:3])  # "Which ...", "In which year ...", "For how long ..."
        or tokens[0] in IMPERATIVE_OPENINGS
        or tokens[0] in AUXILIARY_OPENINGS
    ):
        return " ".join(tokens)
    return None


# the header aimos's conversation import writes before a turn: "[date] Speaker: " (metadata of
# the turn, not a claim in it)
_TURN_HEADER = re.compile(r"^\[[^\]\n]{1,80}\]\s*[^:\n\[\]]{1,60}:\s+")


def features(p: Passage) -> Features:
    text = _TURN_HEADER.sub("", p.value, count=1)
    normalized = normalize(text)
    tokens = normalized.split(" ") if normalized else []
    numbers = {t for t in tokens if any(ch.isdigit() for ch in t)} | set(_number_words(tokens))
    spans = frozenset(numbers | _names(text))
    question = leading_question(text)
    question_spans: frozenset[str] = frozenset()
    question_shingles: frozenset[tuple[str, ...]] = frozenset()
    if question is not None:
        qtokens = question.split(" ")
        question_spans = frozenset(
            {s for s in spans if f" {s} " in f" {question} "} | set(_number_words(qtokens))
        )
        question_shingles = frozenset(zip(qtokens, qtokens[1:], qtokens[2:], strict=False))
    content = frozenset(t for t in tokens if t not in STOP and not any(ch.isdigit() for ch in t))
    shingles = frozenset(zip(tokens, tokens[1:], tokens[2:], strict=False))
    units = spans | content | (POLAR & set(tokens))  # a yes/no is an answer, not a function word
    if DENYING.isdisjoint(tokens):
        asserted = units  # nothing is denied (most texts): every unit is asserted
    else:
        at: dict[str, list[int]] = {}
        for i, t in enumerate(tokens):
            at.setdefault(t, []).append(i)
        asserted = frozenset(u for u in units if _asserted(tokens, u, at))
    return Features(
        p,
        normalized,
        content,
        spans,
        question,
        question_spans,
        shingles,
        asserted,
        question_shingles,
        frozenset(numbers),
        *_stance(text, tokens, question),
    )


def _stance(text: str, tokens: list[str], question: str | None) -> tuple[str, str | None]:
    """A passage's stance on a yes/no question and the answer it says outright: a yes/no (or
    true/false) after the word "answer", after a '?', or after a yes/no question it opens with;
    never one of two offered ("true or false"). Without one, "no" when it denies something after
    its question, else "yes"."""
    asked = len(question.split(" ")) if question is not None else 0
    after: list[str] = []
    if "answer" in tokens:
        after += tokens[tokens.index("answer") + 1 :]
    if "?" in text:
        after += normalize(text.split("?", 1)[1]).split(" ")
    if question is not None and question.split(" ")[0] in AUXILIARY_OPENINGS:
        after += tokens[asked:]
    said = {
        "yes" if t in _YES else "no"
        for i, t in enumerate(after)
        if t in _YES | _NO and "or" not in after[max(0, i - 1) : i] + after[i + 1 : i + 2]
    }
    answers = said.pop() if len(said) == 1 else None
    if answers is not None:
        return answers, answers
    return ("no" if DENIALS & set(tokens[asked:]) else "yes"), None


def _asserted(tokens: list[str], unit: str, at: dict[str, list[int]]) -> bool:
    """Some mention of ``unit`` in ``tokens`` (``at``: each token's positions) is not denied:
    not within three words after a negation, nor within PREFACE_REACH after a preface, nor
    followed by a refutation (a unit not found as words, a number written in words, counts as
    asserted)."""
    parts = unit.split(" ")
    size = len(parts)
    found = False
    for i in at.get(parts[0], ()):
        if tokens[i : i + size] == parts:
            found = True
            if not (
                _negated(tokens[max(0, i - 3) : i])
                or _prefaced(tokens[max(0, i - PREFACE_REACH) : i])
                or _refuted(tokens[i + size : i + size + 3])
            ):
                return True
    return not found


def _negated(before: list[str]) -> bool:
    """Whether the words before a mention deny it: a negation among them that no "but" (or
    "rather", "instead") follows ("not one but 2" asserts 2)."""
    last = max((i for i, t in enumerate(before) if t in NEGATIONS), default=-1)
    return last >= 0 and not CONTRASTS & set(before[last + 1 :])


def _prefaced(before: list[str]) -> bool:
    """Whether a preface ("contrary to claims of", "unlike") denies the mention after it, with no
    contrast between them."""
    last = max((i for i, t in enumerate(before) if t in PREFACES), default=-1)
    return last >= 0 and not CONTRASTS & set(before[last + 1 :])


def _refuted(after: list[str]) -> bool:
    """Whether the words after a mention deny it: "is wrong", "was a myth", "is not", "isn't"."""
    if not after:
        return False
    if after[0] in NEGATED_COPULAS:
        return True
    return after[0] in COPULAS and bool(REFUTATIONS & set(after[1:]))


def _denied(f: Features, unit: str) -> bool:
    """A unit ``f`` names (a span or a content word) but does not assert: it denies it."""
    return (unit in f.spans or unit in f.content) and unit not in f.asserted


def _jaccard(a: frozenset[Any], b: frozenset[Any]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def same_subject(
    a: Features,
    b: Features,
    rare: Callable[[str], bool] = lambda _: False,
    similar: Similarity | None = None,
) -> bool:
    """The same leading question; or 4+ shared content words that are a third of the smaller
    passage's; or 3+ shared content words of which 2+ are rare in the brain (a number both hold
    counts as the third beside two rare words); or, by meaning, their vectors' cosine is at least
    SUBJECT_COSINE (paraphrases of one question)."""
    if a.question is not None and a.question == b.question:
        return True
    # one quotes the question the other opens with
    if any(f.question is not None and f" {f.question} " in f" {g.normalized} " for f, g in ((a, b), (b, a))):
        return True
    # a name of several words, rare in the brain, that both hold ("isle of dogs", "jungle book")
    for f, g in ((a, b), (b, a)):
        if any(" " in s and f" {s} " in f" {g.normalized} " and rare(s) for s in f.spans):
            return True
    shared = a.content & b.content
    smaller = min(len(a.content), len(b.content))
    if len(shared) == SUBJECT_SHARED - 2 and all(rare(t) for t in shared):
        shared |= a.numbers & b.numbers  # two rare words and the same number (a year, say)
    if len(shared) >= SUBJECT_SHARED and smaller > 0 and len(shared) / smaller >= SUBJECT_RATIO:
        return True
    if len(shared) >= SUBJECT_SHARED - 1 and sum(1 for t in shared if rare(t)) >= RARE_SHARED:
        return True
    return _near(similar, a, b, SUBJECT_COSINE)


def same_origin(a: Features, b: Features) -> str | None:
    """Why two passages are not independent (None when they are)."""
    pa, pb = a.passage, b.passage
    if pa.source == pb.source:
        return "source"
    # one agent within a burst, whatever epoch it signs with (a key rotated mid-campaign)
    if pa.author[0] == pb.author[0] and abs(pa.created_at - pb.created_at) <= BURST_SECONDS:
        return "burst"
    asked = a.question_shingles | b.question_shingles
    if _jaccard(a.shingles - asked, b.shingles - asked) >= NEAR_DUPLICATE:
        return "near_duplicate"
    return None


def _contains(f: Features, span: str) -> bool:
    return span in f.spans or f" {span} " in f" {f.normalized} "


@dataclass(frozen=True)
class Verdict:
    label: str
    confidence_milli: int
    members: tuple[str, ...]  # the memory ids of the cluster the verdict is about
    signals: dict[str, Any]


def _digest(items: Iterable[str]) -> list[str]:
    return sorted(hashlib.sha256(i.encode("utf-8")).hexdigest()[:16] for i in items)


def _independent(a: Features, b: Features) -> bool:
    return same_origin(a, b) is None


def _question_units(origin: Sequence[Features]) -> set[str]:
    """What the cluster's questions name (the subject, never the answer), except the choices a
    question offers ("was texas confederate or union": either is the answer)."""
    units: set[str] = set()
    for f in origin:
        if f.question is not None:
            tokens = f.question.split(" ")
            offered = {
                t for i, t in enumerate(tokens) if "or" in tokens[max(0, i - 1) : i] + tokens[i + 1 : i + 2]
            }
            units |= {u for u in f.question_spans | set(tokens) if not offered & set(u.split(" "))}
    return units


def _marks(recent: Sequence[Features]) -> set[str]:
    """Units most of the origin's saves on other subjects carry: the origin's marks."""
    if len(recent) < SIGNATURE_SAVES:
        return set()
    seen: dict[str, int] = {}
    for f in recent:
        for u in f.spans | f.content:
            seen[u] = seen.get(u, 0) + 1
    return {u for u, c in seen.items() if c * 2 >= len(recent)}


@dataclass
class _Relations:
    supports: int = 0
    dissent: int = 0
    contested: set[str] = field(default_factory=set)
    stance: str | None = None  # the origin's yes/no stance another passage answers against
    dissenters: list[str] = field(default_factory=list)  # the memory ids of the dissenting passages
    judged: int = 0  # the relations an NLI judge decided


def _judged(
    judge: Judge, origin: Sequence[Features], others: Sequence[Features], strongest: set[str]
) -> dict[int, str]:
    """What an NLI judge says of each other passage (by id) against the origin's claim: each is
    the premise, and up to HYPOTHESES of the origin's passages that assert its strongest claim
    the hypotheses; the mean of the label probabilities decides ("entails" or "contradicts"; a
    neutral verdict is left out: the words decide then)."""
    claims = [f for f in origin if strongest <= f.asserted][:HYPOTHESES] or list(origin[:HYPOTHESES])
    pairs = [(o.passage.value, c.passage.value) for o in others for c in claims]
    if not pairs:
        return {}
    said = list(judge(pairs))
    out: dict[int, str] = {}
    for i, other in enumerate(others):
        rows = said[i * len(claims) : (i + 1) * len(claims)]
        mean = [sum(r[k] for r in rows) / len(rows) for k in range(3)]
        verdict = max(range(3), key=mean.__getitem__)
        if verdict != 1:
            out[id(other)] = "entails" if verdict == 0 else "contradicts"
    return out


def _relations(
    origin: Sequence[Features],
    subject: Sequence[Features],
    agreed: dict[str, int],
    excluded: set[str],
    rare: Callable[[str], bool],
    outside: Sequence[Features] = (),
    telling: bool = True,
    judge: Judge | None = None,
) -> _Relations:
    """How the independent passages on the subject (``subject``, of other origins) relate to the
    origin's claim (``agreed``: unit -> how many of the origin's passages assert it).

    - dissent: another passage lacks an answer the origin nearly always asserts (a strong unit:
      at least 3/4 as often as its strongest; one no other origin asserts) and answers with a
      name or number of its own (see _own); or with a rare word of its own, in a brain big enough
      (``telling``) for rarity to mean something;
    - support: another passage carries every strongest unit, one of them an answer (a name, a
      number, a yes/no, or a rare word when the origin asks a question); what else it says is
      detail. ``outside``: the other memories near the subject.

    With an NLI ``judge``, its verdict on a passage decides instead of the words: contradiction
    is a dissent (against the strong units no origin it does not contradict asserts), entailment
    a support; where it is neutral the words decide."""
    found = _Relations()
    if not agreed or len(origin) < 2:
        return found
    top = max(agreed.values())
    strongest = {u for u, c in agreed.items() if c == top}
    # what a dissent must lack: a unit nearly as often asserted (an answer in 4 of 5 passages,
    # when a word of the subject is in all 5)
    strong = {u for u, c in agreed.items() if 4 * c >= 3 * top}
    asked = any(f.question is not None for f in origin)
    agreed_spans = {u for u in agreed if any(u in f.spans for f in origin)}

    def answer(u: str) -> bool:
        """What a passage may answer with: a name, number or yes/no, or a word rare in the brain
        when the origin asks a question (its words left out); without one, a rare word only when
        no other memory near the subject holds it (else it is as likely the subject, or the words
        of a conversation, as the answer)."""
        if u in agreed_spans or u in POLAR:
            return True
        return telling and rare(u) and (asked or not any(_contains(f, u) for f in outside))

    # the origin's stance on a yes/no question, when most of its passages take it
    stances = [f.stance for f in origin]
    stance = next((x for x in ("yes", "no") if stances.count(x) >= max(2, CONSENSUS * len(origin))), None)
    sources = {f.passage.source for f in origin}
    others = [
        o for o in subject if o.passage.source not in sources and all(_independent(o, f) for f in origin)
    ]
    verdicts = _judged(judge, origin, others, strongest) if judge is not None else {}
    # a unit another origin asserts too is no claim of this origin alone: not contested (unless a
    # judge found that origin contradicts it: naming it, it says it is wrong)
    asserting = [o for o in others if verdicts.get(id(o)) != "contradicts"]
    elsewhere = {u for u in strong if any(u in o.asserted for o in asserting)}
    for other in others:
        verdict = verdicts.get(id(other))
        if verdict is not None:
            found.judged += 1
            if verdict == "contradicts":
                found.dissent += 1
                found.dissenters.append(other.passage.memory_id)
                found.contested |= {u for u in strong - elsewhere if answer(u)}
            else:
                found.supports += 1
            continue
        # what it carries: what it asserts, or holds in words it does not deny ("not Zarkov but
        # Fredville" names Zarkov and carries only Fredville)
        carried = {
            u for u in strong if u in other.asserted or (_contains(other, u) and not _denied(other, u))
        }
        lacks = {u for u in strong - carried - elsewhere if answer(u)}
        said = other.asserted - excluded
        own = [u for u in said if u in other.spans and _own(u, origin, top, agreed, excluded)]
        if lacks and own:
            found.dissent += 1  # another name or number than the origin's strongest
            found.dissenters.append(other.passage.memory_id)
            found.contested |= lacks
        elif strongest <= carried and any(
            u in other.spans or u in POLAR or (asked and rare(u)) for u in strongest
        ):
            found.supports += 1  # the origin's strongest claim, an answer among it
        elif (
            lacks
            and telling
            and any(rare(u) and _own(u, origin, top, agreed, excluded) for u in said - other.spans)
        ):
            found.dissent += 1  # a rare word of its own (an answer that is no name or number)
            found.dissenters.append(other.passage.memory_id)
            found.contested |= lacks
        elif stance is not None and other.answers is not None and other.answers != stance:
            found.dissent += 1  # says yes where the origin says no, or no where it says yes
            found.dissenters.append(other.passage.memory_id)
            found.stance = stance
    return found


def _own(unit: str, origin: Sequence[Features], top: int, agreed: dict[str, int], excluded: set[str]) -> bool:
    """A name or number of another passage is its own answer when fewer of the origin's passages
    assert it than assert the strongest claim, and some word of it is neither in the strongest nor
    named by the origin's question."""
    asserted = sum(1 for f in origin if unit in f.asserted)
    if asserted >= top:
        return False
    return any(agreed.get(w, 0) < top for w in unit.split(" ") if w not in STOP and w not in excluded)


def _rarity(frequency: Callable[[str], int], neighbours: int, brain_size: int) -> Callable[[str], bool]:
    """Whether a unit is rare in the brain (held by at most rare_limit memories)."""
    common = rare_limit(neighbours, brain_size)
    return lambda unit: frequency(unit) <= common


def rare_limit(neighbours: int, brain_size: int) -> int:
    """The most memories a unit may be held by and still be rare (an answer, not a common word)."""
    return max(RARE_FLOOR + (neighbours + 1) // 4, int(RARE_SHARE * brain_size))


def _on_subject(
    new: Features,
    neighbours: Sequence[Features],
    origin: Sequence[Features],
    subject: Sequence[Features],
    need: int,
    rare: Callable[[str], bool],
    similar: Similarity | None = None,
) -> list[Features]:
    """The passages on the cluster's subject: those on the new one's (``subject``) or on another
    of the origin's, and those sharing two or more rare words with what most of the origin says,
    a third of it at least."""
    shared_words = {
        t for t in set().union(*(f.content for f in origin)) if sum(t in f.content for f in origin) >= need
    }
    on_subject = list(subject)
    for f in neighbours:
        if f in origin or f in on_subject or f.passage.memory_id == new.passage.memory_id:
            continue
        if any(same_subject(o, f, rare, similar) for o in origin[1:]):
            on_subject.append(f)  # on the subject of another passage of the origin
            continue
        common_words = f.content & shared_words
        if sum(1 for t in common_words if rare(t)) >= RARE_SHARED and len(common_words) * 3 >= len(
            shared_words
        ):
            on_subject.append(f)
    return on_subject


def other_origins(
    new: Features,
    neighbours: Sequence[Features],
    frequency: Callable[[str], int],
    brain_size: int,
    most: int = OTHER_ORIGINS,
    similar: Similarity | None = None,
) -> list[Features]:
    """One passage of each other origin on ``new``'s subject (at most ``most``, the newest first),
    whose cluster ``new`` may now contradict: the writer judges each again with ``new`` among its
    neighbours. The person's own agent's saves are never judged (see analyse)."""
    rare = _rarity(frequency, len(neighbours), brain_size)
    chosen: list[Features] = []
    for f in sorted(neighbours, key=lambda f: -f.passage.created_at):
        if (
            f.passage.author[0] != CLI_AGENT
            and same_origin(new, f) is None
            and all(same_origin(c, f) is None for c in chosen)
            and same_subject(new, f, rare, similar)
        ):
            chosen.append(f)
            if len(chosen) >= most:
                break
    return chosen


def analyse(
    new: Features,
    neighbours: Sequence[Features],
    frequency: Callable[[str], int],
    brain_size: int,
    recent: Sequence[Features] = (),
    judge: Judge | None = None,
    similar: Similarity | None = None,
) -> Verdict | None:
    """The verdict on the cluster ``new`` belongs to, among ``neighbours`` (other memories, any
    order), or None when the detector has nothing to say. ``frequency(unit)`` is how many
    memories of the brain hold the unit (it may stop counting early): a unit as common as a
    speaker's name is not an answer. ``recent`` are the same agent epoch's saves of the last
    burst: a unit most of those on other subjects carry (a signature) is the origin's mark.
    ``judge``: an NLI judge that decides the relations it is sure of (see _relations).
    ``similar``: the passages' cosines where they have vectors (by_vectors), None for words alone."""
    rare = _rarity(frequency, len(neighbours), brain_size)
    subject = [
        f
        for f in neighbours
        if f.passage.memory_id != new.passage.memory_id and same_subject(new, f, rare, similar)
    ]
    origin = [new] + [f for f in subject if same_origin(new, f) is not None]
    excluded = _question_units(origin) | _marks(
        [f for f in recent if not same_subject(new, f, rare, similar)]
    )

    if len(origin) < 2:
        return None  # one passage alone agrees with nothing
    counts: dict[str, int] = {}
    for f in origin:
        for u in f.asserted - excluded:
            counts[u] = counts.get(u, 0) + 1
    need = max(2, math.ceil(CONSENSUS * len(origin)))
    named = set().union(*(f.spans for f in origin)) | POLAR
    # (rarity is asked only of the units most of the origin asserts: each asking is a count)
    agreed = {u: c for u, c in counts.items() if c >= need and (u in named or rare(u))}
    questions = [f for f in origin if f.question is not None and f.question == new.question]
    on_subject = _on_subject(new, neighbours, origin, subject, need, rare, similar)
    outside = [f for f in neighbours if f not in origin]
    rel = _relations(origin, on_subject, agreed, excluded, rare, outside, brain_size >= RARE_BRAIN, judge)
    if rel.contested or rel.stance is not None:
        # (against a yes/no stance: the members that take it, or that say no yes or no outright)
        cluster = [
            f
            for f in origin
            if f.asserted & rel.contested
            or (rel.stance is not None and (f.stance == rel.stance or f.answers is None))
        ]
    else:
        cluster = list(origin)
    label: str | None = None
    score = 0
    if len(cluster) >= 3 and rel.dissent and not rel.supports:
        label, score = POISON_LIKELY, min(1000, LIKELY + 50 * min(4, len(cluster) - 3))
    elif len(questions) >= 3 and not rel.supports:
        label, score, cluster = POISON_SUSPECT, SUSPECT, questions
    elif rel.supports and not rel.dissent:
        label, score = UNVERIFIED, 0
    if label is None:
        return None
    if label != UNVERIFIED:
        # the person's own agent is the person's word: what it saved is evidence, never labelled
        cluster = [f for f in cluster if f.passage.author[0] != CLI_AGENT]
        if not cluster:
            return None
    ties: dict[str, int] = {}
    for f in cluster:
        if f is not new:
            why = same_origin(new, f) or "cluster"
            ties[why] = ties.get(why, 0) + 1
    signals = {
        "detector_version": AGREEMENT_DETECTOR_VERSION,
        "cluster_size": len(cluster),
        "same_origin_by": ties,
        "same_question": len(questions),
        "agreed_units": len(agreed),
        "agreed_unit_digests": _digest(agreed)[:8],
        "on_subject": len(subject) + 1,
        "dissenting": rel.dissent,
        "independent_supports": rel.supports,
        "score": score,
    }
    if judge is not None:
        signals["nli_judged"] = rel.judged
    return Verdict(label, score, tuple(f.passage.memory_id for f in cluster), signals)


def _form_of(a: str, b: str) -> bool:
    """One word is a form of the other ("gate" and "gates", "heaven" and "heavenly", "jump" and
    "jumped"): the same, or one is the other and at most 3 more letters, the shorter of 4 or more."""
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    return short == long or (len(short) >= 4 and len(long) - len(short) <= 3 and long.startswith(short))


def _holds(f: Features, word: str) -> bool:
    """``f`` holds ``word`` or a form of it."""
    return word in f.content or any(_form_of(word, other) for other in f.content)


def subject_of(query: str) -> frozenset[str]:
    """The words a query names its subject with (its content words)."""
    return features(Passage("", query, "", ("", 0), 0)).content


def may_hold_subject(subject: frozenset[str], text: str) -> bool:
    """A cheap first test, before a candidate's features are computed: some form of two of the
    subject's words (one, for a subject of one word) starts a word of ``text``. Every passage the
    check counts on the subject (_holds, or quoting the query) passes it."""
    # (ASCII text lowercased is enough: a stem found anywhere is more than a word start; other
    # text is normalized first, as the features are: accents folded)
    folded = text.lower() if text.isascii() else normalize(text)
    found = sum(1 for w in subject if w[: max(4, len(w) - 3)] in folded)
    return found >= min(2, len(subject))


def _origins(passages: Sequence[Features]) -> list[list[Features]]:
    """``passages`` grouped by origin (same source, burst or near-duplicate, transitively)."""
    parent = list(range(len(passages)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(passages):
        for j in range(i):
            if root(i) != root(j) and same_origin(a, passages[j]) is not None:
                parent[root(i)] = root(j)
    groups: dict[int, list[Features]] = {}
    for i, f in enumerate(passages):
        groups.setdefault(root(i), []).append(f)
    return list(groups.values())


def _quoting(
    asked: Features, candidates: Sequence[Features], near_query: Callable[[Features], float | None] | None
) -> set[int]:
    """The candidates (by id()) that quote the query, or are as near it in meaning as a quote."""
    quotes = {id(f) for f in candidates if f" {asked.normalized} " in f" {f.normalized} "}
    if near_query is not None:
        quotes |= {id(f) for f in candidates if (c := near_query(f)) is not None and c >= QUERY_COSINE}
    return quotes


def contested_at_recall(
    query: str,
    candidates: Sequence[Features],
    frequency: Callable[[str], int],
    brain_size: int,
    judged: Collection[str] | None = None,
    seen: int = 0,
    judge: Judge | None = None,
    near_query: Callable[[Features], float | None] | None = None,
) -> dict[str, str]:
    """The recall-time check: the query names the subject. The candidates on it are those that
    hold most of the query's content words (two thirds, two at least; a form of a word counts:
    _holds) or quote it; they are grouped by origin (same_origin, transitively). An origin with 3
    or more members on the subject that may be judged (``judged``: the ids the caller lets be
    withheld, None for all; never the person's own agent), whose strongest claim 3 or more of them
    make, is contested when a passage of another origin on the whole subject (every word of the
    query, or the query quoted) contradicts it and no passage of another origin on the subject
    supports it (_relations, as at save). Returns the ids of its members that assert the
    contested answer (or take the contradicted yes/no stance) -> "contradicted" or "stance", and
    of the passages that contradict it -> "contradicts", unless they are the person's own (one
    agent's word against another's: neither is shown as trusted; a lone passage does not outvote
    a cluster and stay shown); nothing for almost every recall.

    What this adds to the labels given at save: the subject is the query's, so a reference that
    shares few words with the poison's wording but answers the same question is seen; and the
    whole origin among the candidates is judged, so a member a save-time cluster left out is not.
    Nothing is recorded: the caller withholds, with the reason in its signed decision.
    ``seen``: how many candidates the recall had, when the caller passes only those that may be
    on the subject (may_hold_subject); a word's rarity is judged against that many. ``judge``: an
    NLI judge that decides the relations it is sure of (see _relations).
    ``near_query``: a candidate's cosine with the query (None without vectors): one at least
    QUERY_COSINE is on the whole subject, whatever its words (meaning groups; the answers compared
    are still words)."""
    asked = features(Passage("", query, "", ("", 0), 0))
    words_asked = asked.content
    rare = _rarity(frequency, max(seen, len(candidates)), brain_size)
    # a subject of one word only when the word is rare ("what is ahl"), else two words at least
    if not words_asked or (len(words_asked) == 1 and not all(rare(w) for w in words_asked)):
        return {}
    need_words = max(2 if len(words_asked) > 1 else 1, math.ceil(2 * len(words_asked) / 3))
    held = {id(f): sum(1 for w in words_asked if _holds(f, w)) for f in candidates}
    quotes = _quoting(asked, candidates, near_query)
    on = [f for f in candidates if held[id(f)] >= need_words or id(f) in quotes]
    # what may contradict: a passage on the whole subject (every word of the query, or the query
    # quoted); what may support: any passage on it
    close = [f for f in on if held[id(f)] == len(words_asked) or id(f) in quotes]
    out: dict[str, str] = {}

    def may_judge(f: Features) -> bool:
        return f.passage.author[0] != CLI_AGENT and (judged is None or f.passage.memory_id in judged)

    for origin in _origins(on):
        if len(origin) < 3 or sum(1 for f in origin if may_judge(f)) < 3:
            continue
        excluded = _question_units(origin) | asked.spans | words_asked
        counts: dict[str, int] = {}
        for f in origin:
            for u in f.asserted - excluded:
                counts[u] = counts.get(u, 0) + 1
        # the query's words in another form are the subject too ("heavenly" for "heaven")
        excluded |= {u for u in counts if any(_form_of(u, w) for w in words_asked)}
        need = max(2, math.ceil(CONSENSUS * len(origin)))
        named = set().union(*(f.spans for f in origin)) | POLAR
        agreed = {
            u: c for u, c in counts.items() if u not in excluded and c >= need and (u in named or rare(u))
        }
        if max(agreed.values(), default=0) < 3:
            continue  # a claim three of its passages make, at least
        others = [f for f in on if f not in origin]
        telling = brain_size >= RARE_BRAIN
        against = [f for f in close if f not in origin]
        rel = _relations(origin, against, agreed, excluded, rare, others, telling, judge)
        if (
            not rel.dissent
            or _relations(origin, others, agreed, excluded, rare, others, telling, judge).supports
        ):
            continue
        # one agent's word against another's: the dissent is contested too (a single passage of a
        # hostile agent does not outvote a cluster and stay shown); the person's own word is not
        by_id = {f.passage.memory_id: f for f in against}
        for mid in rel.dissenters:
            if may_judge(by_id[mid]):
                out.setdefault(mid, "contradicts")
        for f in origin:
            if not may_judge(f):
                continue
            if f.asserted & rel.contested:
                out[f.passage.memory_id] = "contradicted"
            elif rel.stance is not None and (f.stance == rel.stance or f.answers is None):
                out[f.passage.memory_id] = "stance"
    return out
