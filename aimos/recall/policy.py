"""Trust, effective score, MMR diversity, withholding and abstention (pure, no I/O).

Trust multipliers follow the reference's epistemic selection (PROTOCOL-NOTES section 10):
retained quarantine (or a weight at the 0.1 floor) 0.1 untrusted; labels poison_confirmed /
poison_likely 0.1 untrusted, poison_suspect 0.25 untrusted, disputed 0.4, supported 1,
poison_refuted 1; otherwise (unverified) 0.72.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from aimos.crypto.canonical import canonical_sha256_hex
from aimos.recall.text import jaccard, token_set
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
FLOOR_WEIGHT_MILLI = 100

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

    def __post_init__(self) -> None:
        if not self.tokens:
            self.tokens = token_set(f"{self.key or ''} {self.value}")


@dataclass(frozen=True)
class Trust:
    multiplier: float
    untrusted: bool
    reason: str


def trust_of(c: Candidate) -> Trust:
    if c.quarantine or c.scope == "quarantine" or c.memory_type == "quarantine":
        return Trust(0.1, True, "retained_quarantine")
    if c.weight_milli <= FLOOR_WEIGHT_MILLI:
        return Trust(0.1, True, "weight_at_floor")
    multiplier, untrusted = LABEL_TRUST.get(c.label, (DEFAULT_TRUST, False))
    return Trust(multiplier, untrusted, f"label:{c.label}")


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


def _r(x: float) -> float:
    return round(x, 6)


def decide(
    candidates: Sequence[Candidate],
    *,
    limit: int,
    query_sha256: str,
    bypass_trust: bool = False,
) -> Decision:
    """Score, diversify (MMR, lambda 0.72), withhold the untrusted, cut to ``limit``.

    ``bypass_trust`` (evaluation arm A0 only) treats every candidate as trusted.
    """
    scored = []
    for i, c in enumerate(candidates):
        t = Trust(1.0, False, "bypassed") if bypass_trust else trust_of(c)
        scored.append(Scored(c, i, t, c.relevance * t.multiplier * (c.weight_milli / 1000)))
    n_untrusted = sum(1 for s in scored if s.trust.untrusted)
    budget = min(len(scored), limit + n_untrusted)
    picked: list[Scored] = []
    remaining = list(scored)
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
    body = {
        "version": POLICY_VERSION,
        "query_sha256": query_sha256,
        "mmr_lambda": MMR_LAMBDA,
        "limit": limit,
        "trust_bypassed": bypass_trust,
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
                "decision": "selected"
                if s in selected
                else ("withheld" if s in withheld else "not_selected"),
            }
            for s in scored
        ],
    }
    return Decision(selected, withheld, scored, abstained, body, canonical_sha256_hex(body))
