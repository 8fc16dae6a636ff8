"""`aimos doctor` counts the housekeeper's jobs in agreement with their number (issue 38 item 12):
"1 of 5 jobs has run", "2 of 5 jobs have run", through the real CLI and a real housekeeper."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aimos_cli_support import run_aimos

pytestmark = pytest.mark.timeout(180)


def _housekeeper_line() -> str:
    said = run_aimos("doctor")
    assert "Traceback" not in said.both, said.describe()
    (line,) = [text for text in said.out.splitlines() if text.split()[1:2] == ["housekeeper"]]
    return line


def test_doctor_says_how_many_jobs_have_run(installed: Path, reaper: Any) -> None:
    started = run_aimos("housekeeper", "start", "--json").json()
    reaper.watch(started["pid"])
    assert "no job has run yet" in _housekeeper_line()
    run_aimos("housekeeper", "run-job", "heartbeat").ok()
    line = _housekeeper_line()
    assert "5 jobs registered; 1 of 5 jobs has run, none failed" in line, line
    run_aimos("housekeeper", "run-job", "bottleneck-scan").ok()
    line = _housekeeper_line()
    assert "2 of 5 jobs have run, none failed" in line, line
    run_aimos("housekeeper", "stop").ok()
