"""Small statistics helpers for benchmarks and evaluations (pure)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile, q in [0, 100]."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    pos = (len(ordered) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def median(values: Sequence[float]) -> float:
    return percentile(values, 50)


def summary_ms(values_s: Sequence[float]) -> dict[str, float]:
    return {
        "median_ms": round(median(values_s) * 1000, 4),
        "p95_ms": round(percentile(values_s, 95) * 1000, 4),
        "n": len(values_s),
    }
