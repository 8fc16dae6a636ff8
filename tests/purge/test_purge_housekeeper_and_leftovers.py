"""`aimos purge` with a real running housekeeper, and what a purge leaves behind (issue 38, items
5 and 9), through the real CLI: the housekeeper is stopped once the confirmation is typed (said
so) and not started again for a destroyed brain; every file aimos wrote for the brain is listed
by the dry run and removed (the redaction records with their reasons, backups written elsewhere,
a socket a killed housekeeper left), and everything it leaves is named in the dry run with why.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from support.cli import BRAIN, assert_refused, run_aimos
from support.process import is_housekeeper, pid_alive, read_pid_file, wait_for
from support.purge import CONFIRM, Cleanup, brain_id_of, purge_files, purge_live, verify_receipt

pytestmark = pytest.mark.timeout(120)

REASON = "the harbour gate code was written here by mistake 5521"
TEXT = "Gate code for the north harbour: ask the keeper for the new one 7730"


def fingerprint_of(home: Path) -> str:
    (entry,) = json.loads((home / "config" / "anchors.json").read_text())["brains"].values()
    return str(entry["master_fingerprint"])


def start_housekeeper() -> int:
    started = run_aimos("housekeeper", "start", "--json").json()
    assert pid_alive(started["pid"]) and is_housekeeper(started["pid"]), started
    return int(started["pid"])


def passphrase_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("master passphrase read from ")]


def redacted_memory() -> str:
    """A memory saved, then redacted by the master with REASON (kept beside anchors.json)."""
    mid = run_aimos("save", "--key", "purge-left:gate", TEXT).ok().out.strip()
    run_aimos("redact", mid[:8], "--reason", REASON, input=f"redact {mid[:8]}\n").ok()
    return mid


def dry_run() -> dict[str, Any]:
    return dict(json.loads(run_aimos("purge", "--json").ok().out))


def test_purge_live_stops_the_running_housekeeper_and_does_not_start_it_again(
    installed: Path, cleanup: Cleanup
) -> None:
    from aimos.paths import embedding_socket_path

    pid = start_housekeeper()
    fingerprint = fingerprint_of(installed)
    done = purge_live()
    assert done.code == 0, done.describe()
    assert f"stopping the housekeeper (pid {pid}) for the purge" in done.err, done.describe()
    assert "started the housekeeper again" not in done.err, "a destroyed brain's housekeeper was started"
    wait_for(lambda: not pid_alive(pid), "the housekeeper to exit")
    assert not (installed / BRAIN).exists()
    assert not (installed / "state" / "housekeeper.pid").exists()
    assert not embedding_socket_path().exists() and not embedding_socket_path().parent.exists()
    (receipt,) = purge_files(installed)["receipt"]
    verify_receipt(receipt, fingerprint).ok()
    status = run_aimos("housekeeper", "status")
    assert status.code == 3, "no brain, no housekeeper: " + status.describe()
    # the passphrase came from the file: said once, by its path, never its content
    assert passphrase_lines(done.err) == [
        f"master passphrase read from {os.environ['AIMOS_PASSPHRASE_FILE']} (AIMOS_PASSPHRASE_FILE)"
    ]


def test_a_refused_purge_never_stops_the_housekeeper(
    installed: Path, cleanup: Cleanup, tmp_path: Path
) -> None:
    pid = start_housekeeper()
    wrong = tmp_path / "wrong-passphrase"
    wrong.write_text("not the master passphrase\n")
    wrong.chmod(0o600)
    refused = purge_live(env={"AIMOS_PASSPHRASE_FILE": str(wrong)})
    assert_refused(refused, 6, str(wrong))
    declined = purge_live(confirmation="purge aimos personal personal")
    assert_refused(declined, 8, CONFIRM)
    for result in (refused, declined):
        assert "stopping the housekeeper" not in result.err, result.describe()
    assert read_pid_file(installed) == pid and pid_alive(pid) and (installed / BRAIN).exists()
    assert purge_files(installed) == {"receipt": [], "intent": [], "journal": [], "other": []}


def test_the_redaction_records_are_listed_and_removed(installed: Path) -> None:
    bid = brain_id_of(installed)
    mid = redacted_memory()
    records = installed / "config" / f"redactions-{bid}.json"
    assert REASON in records.read_text(), "the records file holds the reason"

    text = run_aimos("purge").ok().out
    assert str(records) in text.split("kept")[0], "the dry run does not list the redaction records"
    inventory = dry_run()
    assert str(records) in inventory["owned_files"]

    purge_live().ok()
    assert not records.exists(), "the redaction records (with their reasons) survived the purge"
    left = [p for p in installed.rglob("*") if p.is_file()]
    for path in left:
        data = path.read_bytes()
        for trace in (REASON, mid, TEXT, "purge-left:gate"):
            assert trace.encode() not in data, f"{path} still holds {trace!r}"


def test_everything_a_purge_leaves_is_named_in_the_dry_run(installed: Path, cleanup: Cleanup) -> None:
    """The class: after `purge --live`, every file left in the home is one the dry run named as
    kept (with why), and every file it listed as owned is gone; a socket a killed housekeeper left
    is listed and removed."""
    from aimos.paths import embedding_socket_path

    redacted_memory()
    run_aimos("backup").ok()
    pid = start_housekeeper()
    os.kill(pid, signal.SIGKILL)  # killed: its socket (when the model is there) is left behind
    wait_for(lambda: not pid_alive(pid), "the killed housekeeper to exit")
    socket = embedding_socket_path()
    inventory = dry_run()
    owned = [Path(p) for p in inventory["owned_files"]]
    assert (str(socket) in inventory["owned_files"]) == socket.exists()
    kept = inventory["kept"]
    assert all(k["what"] and k["where"] and k["why"] for k in kept), kept
    text = run_aimos("purge").ok().out
    for k in kept:
        assert f"{k['what']}: {k['where']}: {k['why']}" in text, f"the text dry run does not name {k}"

    purge_live().ok()
    assert [p for p in owned if p.exists()] == [], "files the dry run listed are left"
    assert not socket.exists() and not socket.parent.exists()
    named = [Path(k["where"]) for k in kept if k["where"].startswith("/")]
    unnamed = [
        p
        for p in installed.rglob("*")
        if p.is_file() and not any(p == where or where in p.parents for where in named)
    ]
    assert unnamed == [], f"the purge left files its dry run did not name: {unnamed}"


def test_a_backup_elsewhere_is_removed_and_a_file_put_in_its_place_is_kept(
    installed: Path, tmp_path: Path
) -> None:
    """A backup `aimos backup --to` wrote is a copy of the brain: listed and removed. A file now
    at the path of another recorded backup (the person's own document, or a path an attacker
    wrote into the record) is not that copy: named as kept, its bytes untouched."""
    redacted_memory()
    copy = Path(run_aimos("backup", "--to", str(tmp_path / "usb"), "--json").json()["path"])
    other = Path(run_aimos("backup", "--to", str(tmp_path / "docs"), "--json").json()["path"])
    other.write_bytes(b"the person's own notes, not a brain\n")
    inventory = dry_run()
    assert str(copy) in inventory["owned_files"]
    assert str(other) not in inventory["owned_files"]
    (why,) = [k["why"] for k in inventory["kept"] if k["where"] == str(other)]
    assert "unreadable" in why, why

    purge_live().ok()
    assert not copy.exists(), "the backup written elsewhere survived the purge"
    assert other.read_bytes() == b"the person's own notes, not a brain\n"
