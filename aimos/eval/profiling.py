"""Where a benchmark's time goes: a separate pass of the timed operation under cProfile (the
timings themselves are taken without it), the functions by their own time per operation."""

from __future__ import annotations

import cProfile
import pstats
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _where(file: str, line: int, name: str) -> str:
    """A function's place, short: aimos/... for ours, the package and module for a library's,
    {built-in} for C functions."""
    if file == "~":
        return name  # a built-in: cProfile names it "<built-in method ...>"
    parts = Path(file).parts
    for anchor in ("aimos", "site-packages", "dist-packages"):
        if anchor in parts:
            at = len(parts) - 1 - parts[::-1].index(anchor)
            kept = parts[at + 1 :] if anchor.endswith("-packages") else parts[at:]
            return f"{'/'.join(kept)}:{line}({name})"
    return f"{Path(file).name}:{line}({name})"


def profile_calls(fn: Callable[[], Any], n: int, top: int = 15) -> list[dict[str, Any]]:
    """``n`` calls of ``fn`` under cProfile: the ``top`` functions by their own time, each with
    its calls, own and cumulative milliseconds per call of ``fn``."""
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        for _ in range(n):
            fn()
    finally:
        profiler.disable()
    stats = pstats.Stats(profiler)
    rows = [
        {
            "function": _where(file, line, name),
            "calls_per_op": round(calls / n, 2),
            "self_ms_per_op": round(own * 1000 / n, 4),
            "cumulative_ms_per_op": round(cumulative * 1000 / n, 4),
        }
        for (file, line, name), (_primitive, calls, own, cumulative, _callers) in stats.stats.items()  # type: ignore[attr-defined]
    ]
    rows.sort(key=lambda r: -r["self_ms_per_op"])
    return rows[:top]
