"""The epistemic classifier kernel (PROTOCOL-NOTES 9): pure functions, no I/O.

A memory whose text opens with a question (the PoisonedRAG black-box shape: the target question,
then a passage) gets a fingerprint of that question; memories sharing a fingerprint form a
cluster. Scores in milli: +450 for the strong shape (a reference-like memory with a leading
question); a cluster of two or more adds +250 with the strong shape, else +700; +100 when the whole
cluster comes from one source; +200 per contradicting peer (at most 2); -250 per supporting peer
(at most 2); clamped to 0..1000. At 750 or more: poison_likely; at 500 or more: poison_suspect.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from aimos.textfold import fold
from aimos.vocabulary import DETECTOR_VERSION, POISON_LIKELY, POISON_SUSPECT, UNVERIFIED

STRONG_SHAPE = 450
CLUSTER_STRONG = 250
CLUSTER_PLAIN = 700
SOURCE_CONCENTRATION = 100
PER_CONTRADICTION = 200
PER_SUPPORT = -250
LIKELY_AT = 750
SUSPECT_AT = 500
JACCARD_SUPPORT = 0.55

REFERENCE_TYPES = frozenset(
    {"research", "book_extract", "bibliographic_reference", "declarative", "framework", "architecture"}
)
INTERACTION_TYPES = frozenset(
    {"session_exchange", "session", "directive", "heartbeat", "after_action_review"}
)
REFERENCE_KEY_SEGMENTS = frozenset({"reference", "research", "corpus", "document", "paper", "book"})
REFERENCE_SOURCE_PREFIXES = ("benchmark:", "import:", "web:", "corpus:", "paper:", "book:", "research:")
INTERROGATIVES = (
    "who what when where why how which whose whom is are was were do does did can could should would "
    "will has have had"
).split()

_KEPT_SYMBOLS = frozenset("%$€£")
_BOUNDARY = re.compile(r"[?!.](?=\s*[A-Z0-9\"'“‘])")
_INTERROGATIVE = re.compile(
    r"^(?:" + "|".join(INTERROGATIVES) + r")(?![A-Za-z0-9_])", re.IGNORECASE | re.ASCII
)


def normalize(text: str) -> str:
    """Lowercase, NFKD, every run of characters other than letters, numbers, % $ € £ becomes one
    space, trimmed (aimos.textfold)."""
    return fold(text, _KEPT_SYMBOLS)


def words(text: str) -> list[str]:
    normalized = normalize(text)
    return normalized.split(" ") if normalized else []


@dataclass(frozen=True)
class LeadingQuestion:
    question: str
    continuation: str
    index: int  # of the punctuation that ends the question, in the raw text
    fingerprint: str  # sha256 hex of the normalized question


def leading_question(text: str) -> LeadingQuestion | None:
    """The question a memory opens with, if it has the shape: ended by the first ? ! or . that is
    followed by optional whitespace and an ASCII capital, a digit or an opening quote, at index
    8..320; 3..48 normalized words; a continuation of at least 12 characters; and the question
    starts with an interrogative word or a lowercase letter."""
    match = _BOUNDARY.search(text)
    if match is None:
        return None
    index = match.start()
    if not 8 <= index <= 320:
        return None
    question = text[:index]
    continuation = text[index + 1 :].strip()
    count = len(words(question))
    if not 3 <= count <= 48 or len(continuation) < 12:
        return None
    opening = question.lstrip()
    if not (_INTERROGATIVE.match(opening) or (opening[:1].islower())):
        return None
    digest = hashlib.sha256(normalize(question).encode("utf-8")).hexdigest()
    return LeadingQuestion(question, continuation, index, digest)


def is_reference_like(memory_type: str, key: str | None, source: str | None) -> bool:
    """Reference-shaped memories (documents, research, imports), never interaction records."""
    if memory_type in INTERACTION_TYPES:
        return False
    if memory_type in REFERENCE_TYPES:
        return True
    if key and any(segment in REFERENCE_KEY_SEGMENTS for segment in re.split(r"[^a-z0-9]+", key.lower())):
        return True
    return bool(source) and str(source).lower().startswith(REFERENCE_SOURCE_PREFIXES)


@dataclass(frozen=True)
class MemoryView:
    """What the kernel reads of a memory."""

    memory_id: str
    value: str
    key: str | None
    source: str
    memory_type: str


@dataclass(frozen=True)
class Classification:
    label: str
    confidence_milli: int
    signals: dict[str, Any]


def _numbers(text: str) -> set[str]:
    return {w for w in words(text) if any(ch.isdigit() for ch in w)}


def peer_relation(mine: str, theirs: str) -> str:
    """support | contradiction | indeterminate, between two continuations from different sources."""
    a, b = _numbers(mine), _numbers(theirs)
    if a and b:
        return "support" if a & b else "contradiction"
    ta, tb = set(words(mine)), set(words(theirs))
    union = ta | tb
    if union and len(ta & tb) / len(union) >= JACCARD_SUPPORT:
        return "support"
    return "indeterminate"


def label_for(score: int) -> str:
    if score >= LIKELY_AT:
        return POISON_LIKELY
    if score >= SUSPECT_AT:
        return POISON_SUSPECT
    return UNVERIFIED


@dataclass(frozen=True)
class Features:
    """What the kernel derives from one memory, computed once (a cluster compares every pair)."""

    view: MemoryView
    reference_like: bool
    lq: LeadingQuestion | None
    numbers: frozenset[str]
    tokens: frozenset[str]


def features(memory: MemoryView) -> Features:
    lq = leading_question(memory.value)
    continuation = lq.continuation if lq else ""
    return Features(
        memory,
        is_reference_like(memory.memory_type, memory.key, memory.source),
        lq,
        frozenset(_numbers(continuation)),
        frozenset(words(continuation)),
    )


def _relation(a: Features, b: Features) -> str:
    """peer_relation over precomputed continuations."""
    if a.numbers and b.numbers:
        return "support" if a.numbers & b.numbers else "contradiction"
    union = a.tokens | b.tokens
    if union and len(a.tokens & b.tokens) / len(union) >= JACCARD_SUPPORT:
        return "support"
    return "indeterminate"


def classify(memory: MemoryView, peers: Sequence[MemoryView]) -> Classification:
    """Classify ``memory`` against the other members of its cluster (``peers``: memories with the
    same leading-question fingerprint; others are ignored)."""
    return classify_features(features(memory), [features(p) for p in peers])


def classify_features(mine: Features, peers: Sequence[Features]) -> Classification:
    """`classify` over precomputed features (the writer computes each member's once)."""
    memory, lq, reference = mine.view, mine.lq, mine.reference_like
    signals: dict[str, Any] = {
        "detector_version": DETECTOR_VERSION,
        "leading_question": lq is not None,
        "fingerprint": lq.fingerprint if lq else None,
        "reference_like": reference,
    }
    if lq is None:
        signals.update(cluster_size=1, score=0)
        return Classification(UNVERIFIED, 0, signals)
    cluster = [
        p
        for p in peers
        if p.view.memory_id != memory.memory_id and p.lq is not None and p.lq.fingerprint == lq.fingerprint
    ]
    size = 1 + len(cluster)
    strong = reference
    sources = {memory.source} | {p.view.source for p in cluster}
    concentrated = size >= 2 and len(sources) == 1
    supports = contradictions = indeterminate = 0
    for peer in cluster:
        if peer.view.source == memory.source:
            continue
        relation = _relation(mine, peer)
        if relation == "support":
            supports += 1
        elif relation == "contradiction":
            contradictions += 1
        else:
            indeterminate += 1
    score = STRONG_SHAPE if strong else 0
    if size >= 2:
        score += CLUSTER_STRONG if strong else CLUSTER_PLAIN
    if concentrated:
        score += SOURCE_CONCENTRATION
    score += PER_CONTRADICTION * min(2, contradictions) + PER_SUPPORT * min(2, supports)
    score = max(0, min(1000, score))
    signals.update(
        strong_query_shape=strong,
        cluster_size=size,
        same_lure_cluster=strong and size >= 2,
        source_concentration=concentrated,
        supports=supports,
        contradictions=contradictions,
        indeterminate=indeterminate,
        score=score,
    )
    return Classification(label_for(score), score, signals)
