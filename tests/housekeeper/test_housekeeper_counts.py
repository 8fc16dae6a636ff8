"""`aimos doctor` counts the housekeeper's jobs in agreement with their number (issue 38 item 12):
"1 of 5 jobs has run", "2 of 5 jobs have run", through the real CLI and a real housekeeper.

A housekeeper that starts catches up a job whose time passed since the brain was installed (the
heartbeat, every half hour, when the test's brain was made before a :00 or :30): so the count the
doctor must say is read from the signed ledger (`aimos housekeeper status --json`), not assumed."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from support.cli import run_aimos

pytestmark = pytest.mark.timeout(180)


def _housekeeper_line() -> str:
    said = run_aimos("doctor")
    assert "Traceback" not in said.both, said.describe()
    (line,) = [text for text in said.out.splitlines() if text.split()[1:2] == ["housekeeper"]]
    return line


def _jobs_run() -> set[str]:
    status = run_aimos("housekeeper", "status", "--json").json()
    return {str(job["name"]) for job in status["jobs"] if job.get("last_run")}


def _words(ran: int) -> str:
    if ran == 0:
        return "no job has run yet"
    return f"5 jobs registered; {ran} of 5 jobs {'has' if ran == 1 else 'have'} run, none failed"


def _doctor_agrees(least: int) -> tuple[set[str], str]:
    """The doctor's line once it and the ledger agree (a catch-up run may finish meanwhile), with at
    least ``least`` jobs run."""
    deadline = time.monotonic() + 30
    while True:
        ran = _jobs_run()
        line = _housekeeper_line()
        if len(ran) >= least and _words(len(ran)) in line and _jobs_run() == ran:
            return ran, line
        assert time.monotonic() < deadline, (sorted(ran), line)
        time.sleep(0.5)


def test_doctor_says_how_many_jobs_have_run(installed: Path, reaper: Any) -> None:
    started = run_aimos("housekeeper", "start", "--json").json()
    reaper.watch(started["pid"])
    before, line = _doctor_agrees(0)
    # only a caught-up heartbeat (half-hourly) or bottleneck scan (hourly) can have run yet
    assert before <= {"heartbeat", "bottleneck-scan"}, before
    run_aimos("housekeeper", "run-job", "heartbeat").ok()
    ran, line = _doctor_agrees(len(before | {"heartbeat"}))
    # a caught-up bottleneck scan may have finished since `before` was read
    assert before | {"heartbeat"} <= ran <= {"heartbeat", "bottleneck-scan"}, ran
    assert _words(len(ran)) in line, line  # "1 of 5 jobs has run" when nothing was caught up
    run_aimos("housekeeper", "run-job", "bottleneck-scan").ok()
    ran, line = _doctor_agrees(2)
    assert ran == {"heartbeat", "bottleneck-scan"}, ran
    assert "5 jobs registered; 2 of 5 jobs have run, none failed" in line, line
    run_aimos("housekeeper", "stop").ok()
