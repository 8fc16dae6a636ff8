"""Trust, effective score, MMR diversity, withholding and abstention (pure, no I/O).

Trust multipliers follow the reference's epistemic selection (PROTOCOL-NOTES section 10):
retained quarantine (or a weight at the 0.1 floor) 0.1 untrusted; labels poison_confirmed /
poison_likely 0.1 untrusted, poison_suspect 0.25 untrusted, disputed 0.4, supported 1,
poison_refuted 1; then, for a memory no label speaks for (unverified), the query-lure rules 4-5:
a memory whose text echoes the query as its prefix (the normalized query, at least 12 characters,
is the whole normalized text or its start followed by a space) with query-token coverage >= 0.8
(stop words removed) is a lure: 0.1 untrusted when one source has 3 or more such echoes among the
candidates, 0.25 untrusted for a single one; then aimos's recall-time agreement check (not the
reference's): a memory the check contests (epistemic.agreement.contested_at_recall: one origin's
passages on the query's subject that another origin's contradicts and none supports) is 0.1
untrusted, reason agreement_contested; otherwise 0.72.

A candidate that matches the query less than RELEVANCE_FLOOR as well as the best one (relevance is
normalised to the best match, 1.0) is not a result (policy v3): it is recorded in the decision as
not_relevant and never selected, so a recall returns fewer than its limit, or abstains, rather than
pad with memories that share only a common word with the query.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from aimos.crypto.canonical import canonical_json
from aimos.recall.text import jaccard, plain, token_set
from aimos.vocabulary import (
    DISPUTED,
    POISON_CONFIRMED,
    POISON_LIKELY,
    POISON_REFUTED,
    POISON_SUSPECT,
    SUPPORTED,
    UNVERIFIED,
)
from aimos.vocabulary import RECALL_POLICY_VERSION as POLICY_VERSION

MMR_LAMBDA = 0.72
DEFAULT_TRUST = 0.72
# Below this share of the best match's relevance a candidate is not a result. FTS5's BM25 gives a
# word found in over half of the memories an IDF of 1e-6, so a memory sharing only such words
# with the query scores about a millionth of one that holds its rare words.
RELEVANCE_FLOOR = 0.01
NOT_RELEVANT = "not_relevant"
FLOOR_WEIGHT_MILLI = 100
# why a candidate gets the trust it gets (its Trust.reason): its label (LABEL_REASON and the label),
# or a withholding that no label decides
LABEL_REASON = "label:"
RETAINED_QUARANTINE = "retained_quarantine"
WEIGHT_AT_FLOOR = "weight_at_floor"

# the query-lure rules (PROTOCOL-NOTES 10, trust rules 4-5), with the reference's numbers and its
# stop-word list for query coverage (a protocol constant: the coverage must count as it counts)
LURE_MIN_QUERY_CHARS = 12
LURE_COVERAGE = 0.8
LURE_CLUSTER = 3
LURE_CLUSTER_TRUST = 0.1
LURE_SINGLE_TRUST = 0.25
QUERY_LURE = "query_lure"
# the recall-time agreement check (epistemic.agreement.contested_at_recall): an origin's passages
# that another origin on the query's subject contradicts and none supports
AGREEMENT_CONTESTED = "agreement_contested"
AGREEMENT_TRUST = 0.1
LURE_STOP_WORDS = frozenset(
    """a an and are as at be been but by can did do does for from had has have how in is it of on
    or that the their then there they this to was were what when where which who why will with
    would you your""".split()
)

LABEL_TRUST: dict[str, tuple[float, bool]] = {
    POISON_CONFIRMED: (0.1, True),
    POISON_LIKELY: (0.1, True),
    POISON_SUSPECT: (0.25, True),
    DISPUTED: (0.4, False),
    SUPPORTED: (1.0, False),
    POISON_REFUTED: (1.0, False),
    UNVERIFIED: (DEFAULT_TRUST, False),
}


@dataclass
class Candidate:
    memory_id: str
    value: str
    key: str | None
    weight_milli: int
    label: str
    quarantine: bool
    relevance: float  # 0..1, from retrieval
    scope: str = ""
    memory_type: str = ""
    tokens: frozenset[str] = field(default_factory=frozenset)
    source: str = ""

    def __post_init__(self) -> None:
        if not self.tokens:
            self.tokens = token_set(f"{self.key or ''} {self.value}")


@dataclass(frozen=True)
class Trust:
    multiplier: float
    untrusted: bool
    reason: str


@dataclass(frozen=True)
class Echo:
    """A candidate's query-lure signals: its text echoes the query as its prefix, the share of
    the query's content tokens it holds, and how many such echoes its source has among the
    candidates."""

    prefix: bool
    coverage: float
    cluster: int = 0

    @property
    def lure(self) -> bool:
        return self.prefix and self.coverage >= LURE_COVERAGE


NO_ECHO = Echo(False, 0.0, 0)


_FIRST_WORD_CHAR = re.compile(r"[^\W_]")
SENTENCE_ENDS = frozenset(".?!")


def _prefix_echo(query: str, value: str) -> bool:
    """``value`` echoes ``query``: its plain form is the query, or starts with the query followed
    by a sentence end (. ? or !) in the text itself. The reference's rule takes any following
    word; aimos asks for the question-then-passage shape of a planted answer, because a person's
    note that merely starts with the words searched for ("pangolin scale export permit" for
    "pangolin scale") is how notes are written, not a lure."""
    first = _FIRST_WORD_CHAR.search(value)
    if first is None:
        return False
    head = value[first.start() : first.start() + 8]
    if head.isascii() and not plain(head).startswith(query[: len(plain(head))]):
        return False  # the common case, decided without normalizing the whole prefix
    # the shortest raw prefix whose plain form is as long as the query (plain forms of prefixes
    # are prefixes of the plain form, and grow with the raw prefix)
    produced = 0
    gap = False
    for index, ch in enumerate(value):
        for part in unicodedata.normalize("NFKD", ch.lower()):
            if unicodedata.category(part)[0] in ("L", "N"):
                if gap and produced:
                    if produced >= len(query) or query[produced] != " ":
                        return False
                    produced += 1
                if produced >= len(query) or query[produced] != part:
                    return False
                produced += 1
                gap = False
            else:
                gap = True
        if produced == len(query):
            rest = value[index + 1 :]
            tail = plain(rest)
            if not tail:
                return True  # the whole text is the query (the reference's equality)
            rest = rest.lstrip("".join(ch for ch in rest[:8] if unicodedata.category(ch)[0] == "M"))
            if rest[:1].isalnum():
                return False  # the last query word runs on in the text
            return rest.lstrip(" \t\"'”’)]")[:1] in SENTENCE_ENDS
    return False


def echoes(query: str, candidates: Sequence[Candidate]) -> list[Echo]:
    """Each candidate's query-lure signals (rules 4-5 of the reference's epistemic selection)."""
    wanted = plain(query)
    if len(wanted) < LURE_MIN_QUERY_CHARS:
        return [NO_ECHO] * len(candidates)
    query_tokens = {t for t in wanted.split(" ") if t not in LURE_STOP_WORDS}
    found: list[Echo] = []
    for c in candidates:
        if not _prefix_echo(wanted, c.value):
            found.append(NO_ECHO)
            continue
        held = {t for t in plain(c.value).split(" ") if t not in LURE_STOP_WORDS}
        coverage = len(query_tokens & held) / len(query_tokens) if query_tokens else 0.0
        found.append(Echo(True, coverage))
    by_source: dict[str, int] = {}
    for c, e in zip(candidates, found, strict=True):
        if e.lure:
            by_source[c.source] = by_source.get(c.source, 0) + 1
    return [
        Echo(e.prefix, e.coverage, by_source.get(c.source, 0)) if e.prefix else e
        for c, e in zip(candidates, found, strict=True)
    ]


def trust_of(c: Candidate, echo: Echo = NO_ECHO, contested: bool = False) -> Trust:
    if c.quarantine or c.scope == "quarantine" or c.memory_type == "quarantine":
        return Trust(0.1, True, RETAINED_QUARANTINE)
    if c.weight_milli <= FLOOR_WEIGHT_MILLI:
        return Trust(0.1, True, WEIGHT_AT_FLOOR)
    if c.label != UNVERIFIED and c.label in LABEL_TRUST:
        multiplier, untrusted = LABEL_TRUST[c.label]
        return Trust(multiplier, untrusted, LABEL_REASON + c.label)
    if echo.lure:
        if echo.cluster >= LURE_CLUSTER:
            return Trust(LURE_CLUSTER_TRUST, True, QUERY_LURE)
        return Trust(LURE_SINGLE_TRUST, True, QUERY_LURE)
    if contested:
        return Trust(AGREEMENT_TRUST, True, AGREEMENT_CONTESTED)
    return Trust(DEFAULT_TRUST, False, LABEL_REASON + c.label)


@dataclass(frozen=True)
class Scored:
    candidate: Candidate
    index: int  # position in the retrieval order
    trust: Trust
    effective: float

    @property
    def memory_id(self) -> str:
        return self.candidate.memory_id


@dataclass
class Decision:
    selected: list[Scored]
    withheld: list[Scored]
    considered: list[Scored]
    abstained: bool
    body: dict[str, Any]
    sha256: str
    canonical: str  # the body's canonical JSON, computed once (hashed here, stored in the receipt)


def _r(x: float) -> float:
    return round(x, 6)


def decide(
    candidates: Sequence[Candidate],
    *,
    limit: int,
    query_sha256: str,
    query: str = "",
    bypass_trust: bool = False,
    lure_rules: bool = True,
    contested: Collection[str] | None = None,
) -> Decision:
    """Score, diversify (MMR, lambda 0.72), withhold the untrusted, cut to ``limit``.

    ``query`` is what the query-lure rules compare each candidate with; ``contested``: the ids
    the recall-time agreement check contests (None: the check did not run). ``bypass_trust``
    (evaluation arm A0 only) treats every candidate as trusted; ``lure_rules=False`` (evaluation
    arm A1) leaves the recall-time rules out (query-lure and agreement).
    """
    rules = lure_rules and not bypass_trust
    lures = echoes(query, candidates) if rules else [NO_ECHO] * len(candidates)
    against = set(contested or ()) if rules else set()
    scored = []
    for i, (c, echo) in enumerate(zip(candidates, lures, strict=True)):
        t = Trust(1.0, False, "bypassed") if bypass_trust else trust_of(c, echo, c.memory_id in against)
        scored.append(Scored(c, i, t, c.relevance * t.multiplier * (c.weight_milli / 1000)))
    # judged on the relevance the signed decision records (6 places), so the two never disagree
    relevant = [s for s in scored if _r(s.candidate.relevance) >= RELEVANCE_FLOOR]
    n_untrusted = sum(1 for s in relevant if s.trust.untrusted)
    budget = min(len(relevant), limit + n_untrusted)
    picked: list[Scored] = []
    remaining = list(relevant)
    penalty = [0.0] * len(scored)  # max Jaccard to anything picked, updated as picks happen
    while remaining and len(picked) < budget:
        best = max(
            remaining,
            key=lambda s: (MMR_LAMBDA * s.effective - (1 - MMR_LAMBDA) * penalty[s.index], -s.index),
        )
        picked.append(best)
        remaining.remove(best)
        for s in remaining:
            overlap = jaccard(s.candidate.tokens, best.candidate.tokens)
            if overlap > penalty[s.index]:
                penalty[s.index] = overlap
    withheld = [s for s in picked if s.trust.untrusted]
    selected = [s for s in picked if not s.trust.untrusted][:limit]
    abstained = not selected
    outcome = (
        {id(s): NOT_RELEVANT for s in scored if _r(s.candidate.relevance) < RELEVANCE_FLOOR}
        | {id(s): "withheld" for s in withheld}
        | {id(s): "selected" for s in selected}
    )
    body = {
        "version": POLICY_VERSION,
        "query_sha256": query_sha256,
        "mmr_lambda": MMR_LAMBDA,
        "relevance_floor": RELEVANCE_FLOOR,
        "limit": limit,
        "trust_bypassed": bypass_trust,
        "query_lure_rules": rules,
        "agreement_check": rules and contested is not None,
        "selected_memory_ids": [s.memory_id for s in selected],
        "withheld": [{"memory_id": s.memory_id, "reason": s.trust.reason} for s in withheld],
        "abstained": abstained,
        "candidates": [
            {
                "memory_id": s.memory_id,
                "relevance": _r(s.candidate.relevance),
                "trust": _r(s.trust.multiplier),
                "weight_milli": s.candidate.weight_milli,
                "effective": _r(s.effective),
                "label": s.candidate.label,
                **({"query_echo_cluster": lures[s.index].cluster} if lures[s.index].prefix else {}),
                "decision": outcome.get(id(s), "not_selected"),
            }
            for s in scored
        ],
    }
    canonical = canonical_json(body)
    return Decision(
        selected, withheld, scored, abstained, body, hashlib.sha256(canonical).hexdigest(), canonical.decode()
    )
