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


def sealing_report(parts: dict[str, list[float]], write_median_ms: float) -> dict[str, Any]:
    """The sealing parts of each write (begin check, seal, anchor, identity check) as figures, their
    medians' sum and its share of the write's median."""
    out: dict[str, Any] = {name: summary_ms(v) for name, v in parts.items() if v}
    total = sum(out[name]["median_ms"] for name in out)
    out["sum_of_medians_ms"] = round(total, 4)
    out["share_of_write_median"] = round(total / write_median_ms, 3) if write_median_ms else None
    return out
