"""Refusals of `aimos housekeeper ...` (SPEC 15): exit code, `error:` and a `hint:` naming the fix,
nothing on stdout, no traceback, and nothing created or changed."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import assert_refused, assert_unchanged, snapshot
from support.housekeeper import JOB_NAMES, hk

pytestmark = pytest.mark.timeout(120)

NO_BRAIN_COMMANDS = [
    ("status",),
    ("status", "--json"),
    ("start",),
    ("stop",),
    ("run",),
    ("run-job", "heartbeat"),
    ("run-job", "nightly-dream", "--json"),
]


@pytest.mark.parametrize("args", NO_BRAIN_COMMANDS, ids=[" ".join(a) for a in NO_BRAIN_COMMANDS])
def test_no_brain_exits_3_with_a_hint(aimos_home: Path, args: tuple[str, ...]) -> None:
    result = hk(*args, timeout=30)
    assert_refused(result, 3, "aimos install")
    assert "no aimos brain" in result.err
    assert not (aimos_home / "brain.sqlite3").exists()
    assert not (aimos_home / "backups").exists()
    assert not (aimos_home / "state" / "housekeeper.pid").exists()


def test_unknown_job_exits_2_naming_every_job(installed: Path) -> None:
    before = snapshot(installed)
    result = hk("run-job", "nosuch")
    assert_refused(result, 2, *JOB_NAMES)
    assert "'nosuch'" in result.err
    assert_unchanged(installed, before)


def test_unknown_job_is_a_usage_error_even_without_a_brain(aimos_home: Path) -> None:
    assert_refused(hk("run-job", "nosuch"), 2, *JOB_NAMES)


@pytest.mark.parametrize(
    "args", [("run-job",), ("nosuch-command",), ("status", "--bogus")], ids=lambda a: " ".join(a)
)
def test_usage_errors_exit_2_without_traceback(installed: Path, args: tuple[str, ...]) -> None:
    result = hk(*args)
    assert result.code == 2, result.describe()
    assert "Traceback" not in result.both
    assert result.out == ""
