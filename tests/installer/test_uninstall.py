"""`aimos uninstall` in real subprocesses: the housekeeper's service stopped and removed with
aimos's state files; the brain, its keys (the real Secret Service, or the file keystore), backups
and anchors kept, and `aimos verify` still passing; `aimos install` afterwards reusing them (same
master, the saved memory, the guides once) and starting the housekeeper again. Also: a second run
has nothing to remove, --dry-run changes nothing, a terminal is asked (and without one --yes is
needed), a housekeeper that cannot be stopped is reported with nothing removed, a running install
is waited for, and --purge runs the purge ceremony (a wrong confirmation removes nothing).

The housekeeper runs as a detached process here (no systemd user session in a container).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from support.cli import assert_refused
from support.installer import (
    BRAIN,
    CLI_LOG,
    PASSPHRASE_ENV,
    PtySession,
    Reaper,
    brain_id_of,
    keychain_usernames,
    pid_alive,
    read_pid_file,
    require_keychain,
    run_aimos,
    scalar,
    tree,
    tree_diff,
    wait_for,
)

from aimos.identity.anchors import KEPT_ANCHOR_ITEM

pytestmark = pytest.mark.timeout(240)

CONFIRM = "PURGE AIMOS personal personal"
# what `aimos uninstall` removes (when present): the housekeeper's files, its log, the locks
STATE_FILES = (
    "state/housekeeper.pid",
    "state/housekeeper-status.json",
    "state/housekeeper.lock",
    "state/housekeeper-service.json",
    "logs/housekeeper.log",
    "state/install.lock",
)
JSON_KEYS = {
    "status",
    "dry_run",
    "brain_path",
    "brain_id",
    "service",
    "service_stopped",
    "remove",
    "removed",
    "keep",
    "warnings",
    "reinstall",
    "purge",
}


def quiet_tree(home: Path) -> dict[str, str]:
    """The home's tree without what a running housekeeper may write meanwhile (the brain and its
    WAL, the newest-seal anchor, its status and log) and the command log."""
    volatile = ("brain.sqlite3", "config/freshness-", "state/housekeeper-status.json", "logs/")
    return tree(home, volatile=volatile)


def install(keystore: str, reaper: Reaper, *extra: str) -> str:
    """`aimos install --yes --keystore K --service process EXTRA`; the master fingerprint."""
    done = run_aimos("install", "--yes", "--keystore", keystore, "--service", "process", *extra, timeout=120)
    done.ok()
    reaper.watch(read_pid_file(reaper.home))
    found = re.search(r"master fingerprint: ([0-9a-f]{64})\b", done.out)
    assert found, done.describe()
    return found.group(1)


def key_items(home: Path, keystore: str, bid: str) -> set[str]:
    if keystore == "os":
        return keychain_usernames(f"aimos:{bid}")
    folder = home / "state" / "keys" / bid
    return {p.stem for p in folder.iterdir()} if folder.is_dir() else set()


def guide_count(home: Path) -> int:
    return int(scalar(home, "SELECT COUNT(*) FROM memories WHERE memory_type = 'guide'"))


def kept(document: dict[str, Any]) -> dict[str, str]:
    return {k["what"]: k["where"] for k in document["keep"]}


def test_uninstall_keeps_the_brain_and_install_reuses_it(
    aimos_home: Path, keystore: str, reaper: Reaper
) -> None:
    if keystore == "os":
        require_keychain()
    home = aimos_home
    fingerprint = install(keystore, reaper)
    bid = brain_id_of(home)
    reaper.forget_keys_of(bid)
    pid = read_pid_file(home)
    assert pid and pid_alive(pid)
    memory = run_aimos("save", "The boiler is serviced every October by Dana from Northside Heating").ok()
    memory_id = memory.out.strip()
    run_aimos("backup").ok()
    backups = sorted(p.name for p in (home / "backups").iterdir())
    assert backups, "aimos backup made no backup"
    items = key_items(home, keystore, bid)
    assert "master" in items and KEPT_ANCHOR_ITEM in items and len(items) == 4, items
    epochs = int(scalar(home, "SELECT COUNT(*) FROM identity_epochs"))
    assert guide_count(home) == 8

    # --- a dry run says what would go and what stays, and changes nothing
    before = quiet_tree(home)
    dry = run_aimos("uninstall", "--dry-run", "--json").json()
    assert set(dry) == JSON_KEYS, sorted(dry)
    assert dry["status"] == "dry_run" and dry["dry_run"] is True and dry["removed"] == []
    assert dry["service"] == {
        "manager": "process",
        "name": "process",
        "path": None,
        "running": True,
        "pid": pid,
    }
    assert {str(Path(p).relative_to(home)) for p in dry["remove"]} == set(STATE_FILES), dry["remove"]
    assert dry["brain_id"] == bid and dry["reinstall"] == "aimos install" and dry["purge"] is None
    text = run_aimos("uninstall", "--dry-run").ok()
    assert f"would stop and remove the housekeeper service (process, running as pid {pid})" in text.out
    assert "dry run: nothing was changed" in text.err and "reusing this brain and its keys" in text.err
    assert pid_alive(pid), "a dry run stopped the housekeeper"
    after = quiet_tree(home)
    assert after == before, tree_diff(before, after)

    # --- uninstall: the housekeeper stopped, its service and state files gone
    done = run_aimos("uninstall", "--yes", "--json", timeout=200).json()
    assert set(done) == JSON_KEYS and done["status"] == "uninstalled", done
    assert done["service_stopped"] is True and done["warnings"] == [], done
    wait_for(lambda: not pid_alive(pid), "the housekeeper process to end")
    for name in STATE_FILES:
        assert not (home / name).exists(), f"{name} is still there"
    assert {str(Path(p).relative_to(home)) for p in done["removed"]} <= set(STATE_FILES), done["removed"]
    assert "state/housekeeper-service.json" in {str(Path(p).relative_to(home)) for p in done["removed"]}
    assert not run_aimos("housekeeper", "status", "--json").json()["running"]
    # ... and what stays, said with where it is
    stays = kept(done)
    assert stays["brain"] == str(home / BRAIN)
    assert stays["backups"] == str(home / "backups")
    assert stays["trust anchor"] == str(home / "config" / "anchors.json")
    if keystore == "os":
        assert stays["keys"] == f"OS keychain, service aimos:{bid}"
    else:
        assert stays["keys"] == str(home / "state" / "keys" / bid)
    assert (home / BRAIN).is_file() and (home / "config" / "anchors.json").is_file()
    assert sorted(p.name for p in (home / "backups").iterdir()) == backups
    assert key_items(home, keystore, bid) == items
    assert (home / "state" / "onboarding" / "first-launch-receipt.json").is_file()
    run_aimos("verify").ok()
    shown = run_aimos("show", memory_id, "--json").json()
    assert "Northside Heating" in json.dumps(shown)

    # --- a second run finds nothing to remove (exit 0) and changes nothing
    before = tree(home, ignore=CLI_LOG)
    again = run_aimos("uninstall", "--yes").ok()
    assert "nothing to remove" in again.out, again.describe()
    assert "reusing this brain and its keys: aimos install" in again.err, again.describe()
    again_json = run_aimos("uninstall", "--json").json()  # nothing to ask about: no --yes needed
    assert again_json["status"] == "nothing_to_remove" and again_json["removed"] == [], again_json
    assert again_json["service"] is None and again_json["remove"] == []
    assert tree(home, ignore=CLI_LOG) == before

    # --- install again: the same brain, master and keys, the guides once, the housekeeper back
    reinstalled = run_aimos(
        "install", "--yes", "--keystore", keystore, "--service", "process", "--json", timeout=120
    ).json()
    reaper.watch(read_pid_file(home))
    assert reinstalled["status"] == "reused", reinstalled
    assert reinstalled["brain_id"] == bid and reinstalled["master_fingerprint"] == fingerprint
    assert reinstalled["service"]["manager"] == "process", reinstalled
    new_pid = read_pid_file(home)
    assert new_pid and new_pid != pid and pid_alive(new_pid) and reinstalled["service"]["pid"] == new_pid
    status = run_aimos("housekeeper", "status", "--json").json()
    assert (status["running"], status["ready"], status["jobs_registered"]) == (True, True, 5), status
    assert brain_id_of(home) == bid and scalar(home, "SELECT fingerprint FROM master_identity") == fingerprint
    assert guide_count(home) == 8, "a reinstall saved the guides again"
    assert int(scalar(home, "SELECT COUNT(*) FROM identity_epochs")) == epochs
    assert key_items(home, keystore, bid) == items
    recalled = run_aimos("recall", "who services the boiler", "--json").json()
    assert memory_id in [r["memory_id"] for r in recalled["results"]], recalled["results"]
    run_aimos("verify").ok()
    # and a third install changes nothing: the service is registered now
    third = run_aimos("install", "--yes", "--keystore", keystore, "--service", "process", "--json").json()
    assert third["status"] == "already_installed" and third["service"] is None, third
    assert read_pid_file(home) == new_pid

    run_aimos("uninstall", "--yes", timeout=200).ok()  # leave no housekeeper behind
    wait_for(lambda: not pid_alive(new_pid), "the reinstalled housekeeper to end")


def test_install_with_no_service_after_uninstall_changes_nothing(installed: Path) -> None:
    """`--service none` (the suites' AIMOS_SERVICE) on an installed brain sets up no service."""
    home = installed
    run_aimos("uninstall", "--yes").ok()
    before = tree(home, ignore=CLI_LOG)
    again = run_aimos("install", "--yes", "--json").json()
    assert again["status"] == "already_installed" and again["service"] is None, again
    dry = run_aimos("install", "--yes", "--dry-run", "--service", "process", "--json").json()
    assert dry["would_register_service"] == "process" and dry["service"] is None, dry
    assert tree(home, ignore=CLI_LOG) == before


def test_uninstall_asks_first(installed: Path) -> None:
    """Without --yes: at a terminal it asks (no removes nothing, exit 8); without one it refuses
    (exit 2) and says to add --yes."""
    home = installed
    (home / "state" / "housekeeper-status.json").write_text("{}\n")  # something to remove
    before = tree(home, ignore=CLI_LOG)
    refused = run_aimos("uninstall")
    assert_refused(refused, 2, "--yes")
    assert "nothing was removed" in refused.err
    not_without_purge = run_aimos("uninstall", "--yes", "--passphrase-fd", "0")
    assert_refused(not_without_purge, 2, "--purge")
    assert tree(home, ignore=CLI_LOG) == before

    env = {k: v for k, v in os.environ.items() if k != PASSPHRASE_ENV}
    session = PtySession(["uninstall"], env)
    try:
        shown = session.expect(re.escape("Uninstall? [y/N]:"))
        assert "the brain, its keys and backups stay" in shown, shown
        session.send("n")
        assert session.wait() == 8, session.buffer
    finally:
        session.close()
    assert "nothing was removed" in session.buffer
    assert tree(home, ignore=CLI_LOG) == before

    session = PtySession(["uninstall"], env)
    try:
        session.expect(re.escape("Uninstall? [y/N]:"))
        session.send("y")
        assert session.wait() == 0, session.buffer
    finally:
        session.close()
    assert not (home / "state" / "housekeeper-status.json").exists()
    assert (home / BRAIN).is_file()


def test_uninstall_on_an_empty_home_has_nothing_to_remove(aimos_home: Path) -> None:
    done = run_aimos("uninstall", "--json").json()
    assert done["status"] == "nothing_to_remove" and done["keep"] == [] and done["brain_id"] is None, done
    text = run_aimos("uninstall", "--purge").ok()
    assert "nothing to purge" in text.err and "nothing to remove" in text.out, text.describe()
    assert "with a new brain: aimos install" in text.err, text.describe()
    assert tree(aimos_home, ignore=CLI_LOG) == {}


def test_a_housekeeper_that_cannot_be_stopped_is_reported_and_nothing_removed(
    aimos_home: Path, reaper: Reaper
) -> None:
    """Its manager refuses to stop it (here: a systemd unit in a user session that is not there):
    exit 1, what to do, nothing removed, and the housekeeper never killed."""
    home = aimos_home
    install("file", reaper, "--no-guides")
    pid = read_pid_file(home)
    record_file = home / "state" / "housekeeper-service.json"
    record = json.loads(record_file.read_text())
    gone = {**record, "manager": "systemd", "name": "aimos-housekeeper-0000dead.service", "path": None}
    record_file.write_text(json.dumps(gone))
    before = quiet_tree(home)
    refused = run_aimos("uninstall", "--yes")
    assert refused.code == 1, refused.describe()
    assert "Traceback" not in refused.both and refused.out == "", refused.describe()
    assert "could not be stopped" in refused.err and "nothing was removed" in refused.err, refused.describe()
    assert f"kill {pid}" in refused.err, refused.describe()
    assert pid_alive(pid), "the housekeeper was killed"
    after = quiet_tree(home)
    assert after == before, tree_diff(before, after)
    assert (home / "logs" / "housekeeper.log").is_file()

    record_file.write_text(json.dumps(record))  # its real manager again: now it goes
    run_aimos("uninstall", "--yes", timeout=200).ok()
    wait_for(lambda: not pid_alive(pid), "the housekeeper process to end")


@pytest.mark.parametrize(
    "forged",
    [
        {"manager": "systemd", "name": "aimos-housekeeper-0000dead.service", "path": "BRAIN"},
        {"manager": "systemd", "name": "dbus.service", "path": None},
        {"manager": "launchd", "name": "com.apple.Finder", "path": None},
        {"manager": "process", "name": "process", "path": "BRAIN"},
    ],
)
def test_a_forged_service_record_is_refused_and_nothing_removed(
    aimos_home: Path, reaper: Reaper, forged: dict[str, Any]
) -> None:
    """A record naming a unit, job or file aimos does not write (edited, or copied from another
    home) would have uninstall disable that unit and delete that file: refused, nothing removed."""
    home = aimos_home
    install("file", reaper, "--no-guides")
    record_file = home / "state" / "housekeeper-service.json"
    real = record_file.read_text()
    brain = str(home / "brain.sqlite3")
    record_file.write_text(json.dumps({k: brain if v == "BRAIN" else v for k, v in forged.items()}))
    before = quiet_tree(home)
    refused = run_aimos("uninstall", "--yes")
    assert refused.code == 1 and "aimos does not write" in refused.err, refused.describe()
    assert "Traceback" not in refused.both
    assert quiet_tree(home) == before and (home / "brain.sqlite3").is_file()
    record_file.write_text(real)
    run_aimos("uninstall", "--yes", timeout=200).ok()


def test_uninstall_waits_for_a_running_install(installed: Path) -> None:
    home = installed
    (home / "state" / "housekeeper-status.json").write_text("{}\n")
    fd = os.open(home / "state" / "install.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        before = tree(home, ignore=CLI_LOG)
        refused = run_aimos("uninstall", "--yes")
        assert_refused(refused, 7, "again")
        assert "`aimos install` is running" in refused.err, refused.describe()
        assert tree(home, ignore=CLI_LOG) == before
    finally:
        os.close(fd)
    run_aimos("uninstall", "--yes").ok()
    assert not (home / "state" / "install.lock").exists()


def test_uninstall_purge_runs_the_purge_ceremony(aimos_home: Path, reaper: Reaper) -> None:
    home = aimos_home
    fingerprint = install("file", reaper, "--no-guides")
    bid = brain_id_of(home)
    pid = read_pid_file(home)
    run_aimos("save", "The quartermaster edits ledgers in vim, never in nano").ok()
    memories = int(scalar(home, "SELECT COUNT(*) FROM memories"))
    items = key_items(home, "file", bid)

    # the dry run: the uninstall, then the ceremony's inventory and its confirmation text
    dry = run_aimos("uninstall", "--purge", "--dry-run", "--json").json()
    assert set(dry) == JSON_KEYS and dry["status"] == "dry_run", dry
    assert dry["purge"]["confirmation"] == CONFIRM and dry["purge"]["brain_id"] == bid, dry["purge"]
    assert set(kept(dry)) == {"purge receipts", "command log"}, dry["keep"]
    text = run_aimos("uninstall", "--purge", "--dry-run").ok()
    assert "the purge ceremony would destroy" in text.out and CONFIRM in text.out, text.describe()
    assert pid_alive(pid)

    # a wrong confirmation: the ceremony aborts (exit 8), nothing is removed, the housekeeper runs again
    wrong = run_aimos("uninstall", "--purge", input="PURGE AIMOS personal other\n", timeout=200)
    assert wrong.code == 8, wrong.describe()
    assert "Traceback" not in wrong.both and "confirmation did not match" in wrong.err, wrong.describe()
    assert "runs again" in wrong.err, wrong.describe()
    assert (home / BRAIN).is_file() and int(scalar(home, "SELECT COUNT(*) FROM memories")) == memories
    assert key_items(home, "file", bid) == items
    assert (home / "state" / "housekeeper-service.json").is_file()
    status = run_aimos("housekeeper", "status", "--json").json()
    assert status["running"] and status["service"]["manager"] == "process", status
    reaper.watch(status["pid"])
    assert not (home / "purge-receipts").exists() or not list(
        (home / "purge-receipts").glob("*.receipt.json")
    )

    # the typed text: the brain, its keys, backups and the service go; a signed receipt stays
    again_pid = status["pid"]
    done = run_aimos("uninstall", "--purge", "--json", input=CONFIRM + "\n", timeout=200).json()
    assert done["status"] == "purged" and done["service_stopped"] is True, done
    wait_for(lambda: not pid_alive(again_pid), "the housekeeper process to end")
    assert not (home / BRAIN).exists()
    assert key_items(home, "file", bid) == set()
    for name in STATE_FILES:
        assert not (home / name).exists(), f"{name} is still there"
    receipt = Path(done["purge"]["receipt"])
    assert receipt.is_file() and set(kept(done)) == {"purge receipts", "command log"}, done["keep"]
    verified = run_aimos("purge", "verify-receipt", str(receipt), "--master-fingerprint", fingerprint).ok()
    assert verified.out.startswith("valid"), verified.describe()
    # and once more: nothing to purge, nothing to remove
    last = run_aimos("uninstall", "--purge").ok()
    assert "nothing to purge" in last.err and "nothing to remove" in last.out, last.describe()
