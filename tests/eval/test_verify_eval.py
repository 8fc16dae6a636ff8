"""`aimos eval verify`: the whole-brain verify timed over a scratch brain, each run with its wall
time, the CPU time it took (every thread and the forked verifier) and the phases, and the
machine's cores and load average, since a busy machine leaves no core to spare."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import run_aimos

pytestmark = pytest.mark.timeout(300)


def test_each_run_says_its_time_its_cpu_and_the_machine_s_load(aimos_home: Path) -> None:
    report = run_aimos("eval", "verify", "--memories", "12", "--runs", "2", "--json", timeout=250).ok().json()
    assert report["memories"] == 12 and report["cores"] >= 1
    assert len(report["load_average"]) == 3 and all(x >= 0 for x in report["load_average"])
    assert len(report["runs"]) == 2
    for run in report["runs"]:
        assert run["ok"] is True
        assert run["seconds"] > 0 and run["cpu_seconds"] > 0
        assert set(run["phases"]) == {
            "in-database verifier",
            "cognitive export",
            "portable verifier",
            "vectors",
            "parity",
        }
    shown = run_aimos("eval", "verify", "--memories", "10", "--runs", "1", timeout=250).ok().out
    assert "cores, load average" in shown and "s of CPU (ok)" in shown, shown
