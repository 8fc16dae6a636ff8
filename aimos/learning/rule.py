"""The valence update rule (pure): j = tanh(sum r), w' = clip_[0.1, 3.0](w exp(eta j)).

No age term: every retained outcome counts, forever. Weights leave this module as integers
q = round(1000 w) (half up, as JavaScript's Math.round), the only form on any hash path.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

ETA = 0.2
MIN_MILLI = 100
MAX_MILLI = 3000


def quantize(weight: float) -> int:
    return math.floor(weight * 1000 + 0.5)


def judge(rewards: Iterable[int]) -> float:
    """j = tanh(sum of retained rewards), each in {-1, +1}; 0 with no evidence."""
    total = 0
    for r in rewards:
        if r not in (-1, 1):
            raise ValueError("a reward is -1 or +1")
        total += r
    return math.tanh(total)


def next_weight_milli(current_milli: int, rewards: Iterable[int], eta: float = ETA) -> tuple[int, float]:
    """(new q, j) for a memory at ``current_milli`` given all its retained rewards."""
    j = judge(rewards)
    weight = (current_milli / 1000) * math.exp(eta * j)
    return max(MIN_MILLI, min(MAX_MILLI, quantize(weight))), j


def replay(initial_milli: int, rewards_in_order: Iterable[int], eta: float = ETA) -> int:
    """The live weight after applying the rule once per outcome, in order (for verification)."""
    weight = initial_milli
    seen: list[int] = []
    for r in rewards_in_order:
        seen.append(r)
        weight, _ = next_weight_milli(weight, seen, eta)
    return weight
