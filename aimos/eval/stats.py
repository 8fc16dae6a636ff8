"""Small statistics helpers for benchmarks and evaluations (pure)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any


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


def wilson(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score 95% interval for a proportion (0..1 bounds; (0, 1) when n is 0)."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def time_calls(fn: Callable[[], Any], n: int) -> list[float]:
    """Seconds each of ``n`` calls of ``fn`` took (perf_counter)."""
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out
