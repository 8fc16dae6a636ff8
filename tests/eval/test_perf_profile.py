"""`aimos eval perf --profile N`: beside the timings, the N functions with the most own time per
operation from a separate profiled pass, for saves and for recalls; bad input refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import run_aimos

pytestmark = pytest.mark.timeout(300)


def test_saves_and_recalls_are_profiled_when_asked(aimos_home: Path) -> None:
    saves = run_aimos("eval", "perf", "--saves", "8", "--profile", "5", "--json", timeout=200).ok().json()
    rows = saves["profile"]
    assert len(rows) == 5
    assert [r["self_ms_per_op"] for r in rows] == sorted((r["self_ms_per_op"] for r in rows), reverse=True)
    assert all(r["cumulative_ms_per_op"] >= r["self_ms_per_op"] > 0 and r["calls_per_op"] > 0 for r in rows)
    plain = run_aimos("eval", "perf", "--saves", "5", "--json", timeout=200).ok().json()
    assert "profile" not in plain  # only when asked
    recalls = run_aimos("eval", "perf", "--recall", "30", "--profile", "3", timeout=280).ok().out
    assert "profile (a separate pass under cProfile), ms per recall" in recalls


def test_a_profile_of_more_than_100_functions_is_refused(aimos_home: Path) -> None:
    result = run_aimos("eval", "perf", "--saves", "5", "--profile", "101")
    assert result.code == 2 and "--profile must be between 0 and 100" in result.err, result.describe()
