"""`aimos doctor` through the real CLI: one line per check (brain, schema, keystore, anchors, verify,
agents, housekeeper, service, disk, permissions) with its fix, and an exit code that says whether a person
is needed. A healthy home passes (exit 0; here the service is a detached process, a warning that
says why); each broken home is named with its exact fix and a non-zero exit: no brain, a brain
readable by others, a key missing from the file keystore or an OS keychain that does not answer,
a brain behind its anchor, an agent whose epoch ended (the clock moved with libfaketime), a brain
at an older schema (reported as pending, and left byte for byte as it was). Doctor changes
nothing: the brain's bytes, mtime and side files, the keystore and the anchors stay as they were.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.cli import (
    BRAIN,
    Result,
    brain_id,
    clock_moved,
    keystore_dir,
    listing,
    require_keychain,
    run_aimos,
    sha256_file,
    sqlite_value,
    unpack_brain_fixture,
)

from aimos.actions.doctor import FAIL, NAMES, NEED_A_BRAIN, OK, WARN, disk_status

pytestmark = pytest.mark.timeout(180)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LINE = re.compile(r"^(ok|warn|fail|skip)\s+(\S+)\s+(.*)$")
FIX = re.compile(r"^\s+fix: (.*)$")


@dataclass
class Line:
    status: str
    found: str
    fix: str | None = None


def doctor(*args: str, **kwargs: Any) -> tuple[Result, dict[str, Line]]:
    """`aimos doctor` and its lines by check name (no traceback, one line per check, in order)."""
    result = run_aimos("doctor", *args, **kwargs)
    assert "Traceback" not in result.both, result.describe()
    lines: dict[str, Line] = {}
    last: Line | None = None
    for text in result.out.splitlines():
        if match := LINE.match(text):
            last = lines[match.group(2)] = Line(match.group(1), match.group(3))
        elif (fix := FIX.match(text)) and last is not None:
            last.fix = fix.group(1)
        else:
            raise AssertionError(f"a line that is no check: {text!r}\n{result.describe()}")
    assert list(lines) == list(NAMES), result.describe()
    return result, lines


def as_json(*args: str, **kwargs: Any) -> tuple[Result, dict[str, Any]]:
    """`aimos doctor --json`, parsed whatever its exit code (a failing doctor still prints JSON)."""
    result = run_aimos("doctor", "--json", *args, **kwargs)
    assert "Traceback" not in result.both, result.describe()
    return result, json.loads(result.out)


def statuses(lines: dict[str, Line]) -> dict[str, str]:
    return {name: line.status for name, line in lines.items()}


@dataclass
class State:
    """What doctor must leave alone: the brain's bytes and mtime, the files beside it, the
    keystore and config folders' listings with each file's bytes."""

    brain: tuple[str, int] | None
    beside: list[str]
    files: dict[str, str]


def state_of(home: Path) -> State:
    brain = home / BRAIN
    kept = {}
    for folder in ("state", "config"):
        for name in listing(home / folder):
            path = home / folder / name
            kept[f"{folder}/{name}"] = sha256_file(path) if path.is_file() else "folder"
    return State(
        (sha256_file(brain), brain.stat().st_mtime_ns) if brain.exists() else None,
        sorted(p.name for p in home.iterdir() if p.name != "logs"),  # logs: the one-line command log
        kept,
    )


def assert_fails_with(result: Result, lines: dict[str, Line], code: int, check: str, *words: str) -> Line:
    """Exit ``code``; the check failed, and its line or its fix says each of ``words``."""
    assert result.code == code, result.describe()
    line = lines[check]
    assert line.status == FAIL, result.describe()
    assert line.fix, f"{check} failed without a fix\n{result.describe()}"
    for word in words:
        assert word in f"{line.found} {line.fix}", f"{check}: {word!r} not said\n{result.describe()}"
    assert "failed: run the fixes above" in result.err, result.describe()
    return line


def run_fix(fix: str) -> None:
    """Run a fix doctor printed, as a person would paste it into a shell."""
    done = subprocess.run(["sh", "-c", fix], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, f"{fix}: {done.stderr}"


@pytest.fixture
def stops_housekeeper(aimos_home: Path) -> Iterator[None]:
    """At teardown: the housekeeper a test started is stopped (SIGKILLed if it will not stop)."""
    yield
    run_aimos("housekeeper", "stop", timeout=180)
    pid_file = aimos_home / "state" / "housekeeper.pid"
    with contextlib.suppress(OSError, ValueError):
        os.kill(int(pid_file.read_text().strip()), signal.SIGKILL)


# --- healthy -----------------------------------------------------------------------------------
def test_a_healthy_home_is_ok_and_the_detached_service_is_explained(
    aimos_home: Path, stops_housekeeper: None
) -> None:
    run_aimos("install", "--yes", "--no-guides", "--keystore", "file", "--service", "process").ok()
    result, lines = doctor()
    assert result.code == 0, result.describe()
    want = dict.fromkeys(NAMES, OK) | {"service": WARN}
    assert statuses(lines) == want, result.describe()
    # no service manager in this container: a detached process, which a reboot does not bring back
    service = lines["service"]
    assert "detached process" in service.found and "reboot" in service.found, result.describe()
    assert service.fix == "aimos housekeeper start after each boot", result.describe()
    assert "running (pid" in lines["housekeeper"].found, result.describe()
    assert "keys present for master, cli, housekeeper" in lines["keystore"].found, result.describe()
    assert "no check failed; 1 warning" in result.err and "aimos verify" in result.err, result.describe()

    shown, report = as_json()
    assert shown.code == 0, shown.describe()
    assert set(report) == {"home", "brain_path", "ok", "exit_code", "counts", "checks"}
    assert report["ok"] is True and report["exit_code"] == 0
    assert report["home"] == str(aimos_home) and report["brain_path"] == str(aimos_home / BRAIN)
    assert report["counts"] == {"ok": len(NAMES) - 1, "warn": 1, "fail": 0, "skip": 0}
    assert [c["name"] for c in report["checks"]] == list(NAMES)
    for check in report["checks"]:
        assert set(check) == {"name", "status", "found", "fix", "exit_code"}
        assert check["status"] == want[check["name"]] and check["exit_code"] is None
        assert (check["fix"] is None) == (check["status"] == OK)


def test_doctor_changes_nothing_and_says_how_to_start_the_housekeeper(installed: Path) -> None:
    before = state_of(installed)
    result, lines = doctor()
    assert result.code == 0, result.describe()  # warnings need no one now
    assert statuses(lines) == dict.fromkeys(NAMES, OK) | {"housekeeper": WARN, "service": WARN}
    assert lines["housekeeper"].fix == "aimos housekeeper start", result.describe()
    assert "not running" in lines["housekeeper"].found
    assert "--no-service" in lines["service"].found
    assert lines["schema"].found.startswith("version ") and "this aimos's" in lines["schema"].found
    as_json()
    assert state_of(installed) == before, "doctor changed the home"


def test_help_says_what_it_checks_and_what_the_exit_codes_mean() -> None:
    shown = " ".join(run_aimos("doctor", "--help", env={"COLUMNS": "200"}).ok().out.split())
    for word in (
        "keystore",
        "anchors",
        "permissions",
        "pending migration",
        "--json",
        "Exit codes: 0 when no check failed",
        "3 no brain",
        "else 1",
    ):
        assert word in shown, shown


# --- no brain --------------------------------------------------------------------------------
def test_a_home_with_no_brain_says_install(aimos_home: Path) -> None:
    result, lines = doctor()
    assert_fails_with(result, lines, 3, "brain", "no brain at", "aimos install")
    assert {n: s for n, s in statuses(lines).items() if s == "skip"} == dict.fromkeys(NEED_A_BRAIN, "skip")
    assert not (aimos_home / BRAIN).exists(), "doctor created a brain"
    _, report = as_json()
    assert report["exit_code"] == 3 and report["ok"] is False
    assert report["checks"][0] == {
        "name": "brain",
        "status": FAIL,
        "found": f"no brain at {aimos_home / BRAIN}",
        "fix": lines["brain"].fix,
        "exit_code": 3,
    }


def test_a_brain_file_gone_from_an_installed_home(installed: Path) -> None:
    (installed / BRAIN).unlink()
    before = state_of(installed)
    result, lines = doctor()
    assert_fails_with(result, lines, 3, "brain", "aimos install", "aimos restore --list")
    assert state_of(installed) == before


# --- permissions -------------------------------------------------------------------------------
def test_a_brain_readable_by_others_is_named_with_its_chmod(installed: Path) -> None:
    brain = installed / BRAIN
    brain.chmod(0o644)
    result, lines = doctor()
    line = assert_fails_with(result, lines, 1, "permissions", f"{brain} (0644)")
    assert line.fix == f"chmod 600 {brain}", result.describe()
    assert statuses(lines)["brain"] == OK
    run_fix(line.fix)
    again, lines = doctor()
    assert again.code == 0 and lines["permissions"].status == OK, again.describe()


def test_many_open_paths_are_fixed_folder_by_folder(installed: Path) -> None:
    keys = keystore_dir(installed)
    for path in [installed / "config", installed / "config" / "anchors.json", keys, *keys.iterdir()]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    result, lines = doctor()
    line = assert_fails_with(result, lines, 1, "permissions", "more", "chmod -R go-rwx")
    run_fix(str(line.fix))
    again, lines = doctor()
    assert again.code == 0 and lines["permissions"].status == OK, again.describe()


# --- the keystore ------------------------------------------------------------------------------
def test_a_key_missing_from_the_file_keystore(installed: Path) -> None:
    keys = keystore_dir(installed)
    (cli_key,) = keys.glob("cli@*.key")
    secrets = {p.read_text().strip() for p in keys.iterdir()}
    cli_key.unlink()
    before = state_of(installed)
    result, lines = doctor()
    line = assert_fails_with(result, lines, 6, "keystore", "missing cli's key")
    assert line.fix == "aimos agent rotate cli", result.describe()
    assert not any(secret in result.both for secret in secrets), "a key was printed"
    assert state_of(installed) == before

    run_fix(line.fix)  # the fix works: a new epoch with a key in the keystore
    again, lines = doctor()
    assert again.code == 0 and lines["keystore"].status == OK, again.describe()


def test_the_keystore_folder_gone_needs_the_keys_back(installed: Path) -> None:
    shutil.rmtree(keystore_dir(installed))
    result, lines = doctor()
    line = assert_fails_with(result, lines, 6, "keystore", "the folder is missing", "master key")
    assert "aimos agent rotate" not in str(line.fix), "no rotation is possible without the master key"


@pytest.mark.keychain
def test_an_os_keychain_that_does_not_answer_or_lost_a_key(aimos_home: Path) -> None:
    keyring = require_keychain()
    run_aimos("install", "--yes", "--no-guides", "--keystore", "os").ok()
    service = f"aimos:{brain_id(aimos_home)}"
    items = ["master", *sqlite_value(aimos_home / BRAIN, "SELECT key_ref FROM identity_epochs").split()]
    try:
        result, lines = doctor()
        assert lines["keystore"].status == OK and "os keychain" in lines["keystore"].found, result.describe()

        result, lines = doctor(env={"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"})
        assert_fails_with(result, lines, 6, "keystore", "not an OS keychain", "keychain")

        (cli_item,) = [i for i in items if i.startswith("cli@")]
        keyring.delete_password(service, cli_item)
        result, lines = doctor()
        line = assert_fails_with(result, lines, 6, "keystore", "missing cli's key")
        assert line.fix == "aimos agent rotate cli"
    finally:
        for item in items:
            with contextlib.suppress(Exception):
                keyring.delete_password(service, item)


# --- anchors -----------------------------------------------------------------------------------
def test_a_brain_behind_its_anchor(installed: Path, tmp_path: Path) -> None:
    older = tmp_path / "older.sqlite3"
    shutil.copyfile(installed / BRAIN, older)
    run_aimos("save", "a memory the older copy does not hold").ok()
    for side in ("-wal", "-shm"):
        Path(f"{installed / BRAIN}{side}").unlink(missing_ok=True)
    shutil.copyfile(older, installed / BRAIN)
    result, lines = doctor()
    assert_fails_with(result, lines, 5, "anchors", "not the newest", "aimos restore BACKUP")


# --- agents ------------------------------------------------------------------------------------
def test_an_agent_epoch_ending_soon_warns_and_an_ended_one_fails(installed: Path) -> None:
    soon, lines = doctor(env=clock_moved(85))  # the default epoch is 90 days
    assert soon.code == 0, soon.describe()
    assert lines["agents"].status == WARN and "agent cli's epoch expires in 5 days" in lines["agents"].found
    assert lines["agents"].fix == "aimos agent rotate --expiring"

    ended, lines = doctor(env=clock_moved(95))
    assert_fails_with(
        ended, lines, 6, "agents", "agent cli's epoch expired at", "aimos agent rotate --expiring"
    )
    assert lines["keystore"].status == OK  # an ended epoch's key is not asked for


# --- the housekeeper ---------------------------------------------------------------------------
def test_a_failed_last_run_warns_with_the_job_to_run_again(installed: Path) -> None:
    (installed / "backups").touch(mode=0o600)  # a file where the backups folder goes: no backup
    assert run_aimos("housekeeper", "run-job", "nightly-dream").code == 1
    result, lines = doctor()
    assert result.code == 0, result.describe()  # a warning: the brain itself is sound
    housekeeper = lines["housekeeper"]
    assert housekeeper.status == WARN and "the last nightly-dream run failed" in housekeeper.found
    assert "aimos housekeeper run-job nightly-dream" in str(housekeeper.fix), result.describe()


# --- an older schema ---------------------------------------------------------------------------
def test_a_brain_at_an_older_schema_is_reported_and_not_migrated(aimos_home: Path) -> None:
    brain = unpack_brain_fixture(FIXTURES / "brain-v10", aimos_home)
    before = state_of(aimos_home)
    result, lines = doctor()
    schema = lines["schema"]
    assert schema.status == WARN and schema.found.startswith("version 10;"), result.describe()
    assert "pending" in schema.found and "migrated nothing" in schema.found
    assert schema.fix and schema.fix.startswith("aimos verify")
    # the fixture keeps no keys (never shipped): that alone needs a person here
    assert_fails_with(result, lines, 6, "keystore", "the folder is missing")
    assert statuses(lines)["anchors"] == OK and statuses(lines)["brain"] == OK
    assert state_of(aimos_home) == before, "doctor changed the brain"
    assert sqlite_value(brain, "PRAGMA user_version") == "10"


# --- the disk, as a rule ----------------------------------------------------------------------
def test_disk_space_rules() -> None:
    mib, gib = 1024 * 1024, 1024 * 1024 * 1024
    assert disk_status(50 * gib, 10 * mib) == OK
    assert disk_status(900 * mib, 10 * mib) == WARN  # under 1 GiB
    assert disk_status(50 * mib, 10 * mib) == FAIL  # under 100 MiB
    assert disk_status(30 * gib, 20 * gib) == WARN  # less than twice the brain
    assert disk_status(15 * gib, 20 * gib) == FAIL  # not even one copy of the brain
