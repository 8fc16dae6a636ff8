"""What the installer refuses (a concurrent install, install-only flags with --add-agent, an
unreadable anchors file) it refuses without changing anything; a dry run changes nothing."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from support.installer import BRAIN, run_aimos, tree

from aimos.vocabulary import DEFAULT_VALIDITY_DAYS


def test_a_second_install_while_one_runs_is_busy_and_touches_nothing(aimos_home: Path) -> None:
    """Install holds a lock for its whole run, so a concurrent install can never take the first
    one's half-made brain for an abandoned file and delete it."""
    state = aimos_home / "state"
    state.mkdir(mode=0o700)
    fd = os.open(state / "install.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        result = run_aimos("install", "--yes", "--no-guides", "--keystore", "file")
        assert result.code == 7, result.describe()
        assert "another `aimos install` is running" in result.err and "Traceback" not in result.both
        assert not (aimos_home / BRAIN).exists()
    finally:
        os.close(fd)
    run_aimos("install", "--yes", "--no-guides", "--keystore", "file").ok()  # free again


def test_add_agent_dry_run_changes_nothing_and_install_only_flags_are_refused(installed: Path) -> None:
    before = tree(installed, ignore=("logs/aimos.log",))
    dry = run_aimos("install", "--add-agent", "bob", "--clearance", "3", "--dry-run", "--json").ok()
    assert dry.json() == {
        "add_agent": "bob",
        "clearance": 3,
        "data_class": "confidential",
        "validity_days": DEFAULT_VALIDITY_DAYS,
        "write_allowed": True,
    }
    refused = run_aimos("install", "--add-agent", "bob", "--model", "gpt", "--company", "acme")
    assert refused.code == 2 and "--company, --model do not apply with --add-agent" in refused.err, (
        refused.describe()
    )
    assert tree(installed, ignore=("logs/aimos.log",)) == before
    agents = {a["agent_id"] for a in run_aimos("agent", "list", "--json").json()}
    assert "bob" not in agents


def test_an_unreadable_anchors_file_is_not_replaced(aimos_home: Path) -> None:
    config = aimos_home / "config"
    config.mkdir(mode=0o700)
    anchors = config / "anchors.json"
    anchors.write_text("{not json")
    result = run_aimos("install", "--yes", "--no-guides", "--keystore", "file")
    assert result.code == 5, result.describe()
    assert "not a readable anchors file" in result.err and "Move it aside" in result.err
    assert anchors.read_text() == "{not json"
    assert not (aimos_home / BRAIN).exists()
