"""Bad input to `aimos purge` and `aimos purge verify-receipt` (SPEC sections 13 and 15): each
refused with its exit code, an `error:` and a `hint:`, no traceback, and nothing changed."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.cli import BRAIN, Result, assert_refused, run_aimos
from support.purge import (
    CONFIRM,
    Cleanup,
    assert_state_unchanged,
    brain_id_of,
    home_state,
    keystore_items,
    mode_of,
    purge_files,
    purge_live,
    sha256_file,
    verify_receipt,
)

pytestmark = pytest.mark.timeout(60)


def fingerprint_of(home: Path) -> str:
    anchors = json.loads((home / "config" / "anchors.json").read_text())
    (entry,) = anchors["brains"].values()
    return str(entry["master_fingerprint"])


# --- the ceremony ------------------------------------------------------------------------------
def test_a_wrong_passphrase_changes_nothing(installed: Path, tmp_path: Path) -> None:
    bid = brain_id_of(installed)
    before = home_state(installed, "file", bid)
    wrong = tmp_path / "other-passphrase"
    wrong.write_text("another passphrase entirely\n")
    wrong.chmod(0o600)
    refused = purge_live(env={"AIMOS_PASSPHRASE_FILE": str(wrong)})
    assert_refused(refused, 6)
    assert purge_files(installed) == {"receipt": [], "intent": [], "journal": [], "other": []}
    assert_state_unchanged(installed, "file", bid, before)


WRONG_CONFIRMATIONS = {
    "lowercase": CONFIRM.lower(),
    "double-space": "PURGE AIMOS  personal personal",
    "trailing-text": CONFIRM + " now",
    "trailing-space": CONFIRM + " ",
    "leading-space": " " + CONFIRM,
    "other-brain": "PURGE AIMOS personal work",
    "empty-line": "",
    "no-input": None,
}


@pytest.mark.parametrize("typed", list(WRONG_CONFIRMATIONS.values()), ids=list(WRONG_CONFIRMATIONS))
def test_a_wrong_confirmation_aborts_with_nothing_changed(installed: Path, typed: str | None) -> None:
    bid = brain_id_of(installed)
    before = home_state(installed, "file", bid)
    refused = purge_live(confirmation=typed)
    assert_refused(refused, 8, f"Type exactly: {CONFIRM}")
    assert_state_unchanged(installed, "file", bid, before)
    assert not (installed / "purge-receipts").exists() or not any((installed / "purge-receipts").iterdir())


@pytest.mark.parametrize(
    "args",
    [(), ("--json",), ("--live",), ("--live", "--recreate")],
    ids=["dry", "dry-json", "live", "recreate"],
)
def test_no_brain_is_not_found(aimos_home: Path, args: tuple[str, ...]) -> None:
    refused = run_aimos("purge", *args, input=CONFIRM + "\n")
    assert_refused(refused, 3)
    assert not (aimos_home / BRAIN).exists(), "a purge of nothing created a brain"
    assert not (aimos_home / "purge-receipts").exists()


def test_a_process_holding_the_brain_blocks_the_ceremony(installed: Path, cleanup: Cleanup) -> None:
    bid = brain_id_of(installed)
    before = home_state(installed, "file", bid)
    script = (
        "import apsw, sys, time\n"
        "c = apsw.Connection(sys.argv[1])\n"
        "c.execute('SELECT COUNT(*) FROM memories').fetchall()\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", script, str(installed / BRAIN)], stdout=subprocess.PIPE, text=True
    )
    cleanup.process(holder.pid)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        refused = purge_live()
        assert_refused(refused, 7, "close")
        assert f"pid {holder.pid}" in refused.err, refused.describe()
        assert purge_files(installed) == {"receipt": [], "intent": [], "journal": [], "other": []}
        assert keystore_items(installed, "file", bid) == set(before["items"])
    finally:
        holder.kill()
        holder.wait()
    # the holder's WAL and SHM are its own (SQLite's read marks); everything else is as it was
    assert_state_unchanged(installed, "file", bid, before, ignore=(f"{BRAIN}-wal", f"{BRAIN}-shm"))


def test_a_housekeeper_that_cannot_be_stopped_refuses_the_ceremony(installed: Path, cleanup: Cleanup) -> None:
    """A pid file naming another process (stale, or written by someone who can write the state
    folder): nothing is signalled, the ceremony is refused (exit 7) once the confirmation was
    typed, and nothing is removed."""
    from support.process import pid_alive, read_pid_file

    started = run_aimos("housekeeper", "start", "--json").json()
    assert pid_alive(started["pid"]) and read_pid_file(installed) == started["pid"]
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    cleanup.process(bystander.pid)
    (installed / "state" / "housekeeper.pid").write_text(f"{bystander.pid}\n")
    try:
        refused = purge_live()
        assert_refused(refused, 7)
        assert "could not be stopped for the purge" in refused.err, refused.describe()
        assert "nothing was signalled" in refused.err and "nothing was changed" in refused.err
        assert bystander.poll() is None, "the purge signalled a process that is not the housekeeper"
        assert (installed / BRAIN).exists() and pid_alive(started["pid"])
        assert purge_files(installed) == {"receipt": [], "intent": [], "journal": [], "other": []}
        assert "master" in keystore_items(installed, "file", brain_id_of(installed))
    finally:
        (installed / "state" / "housekeeper.pid").write_text(f"{started['pid']}\n")


# --- verify-receipt ------------------------------------------------------------------------------
def test_verify_receipt_refuses_every_edit(installed: Path, passphrase: str, tmp_path: Path) -> None:
    from aimos.crypto.canonical import canonical_json
    from aimos.crypto.ed25519 import KeyPair
    from aimos.identity.passphrase import unseal
    from aimos.purge.artifacts import sign_artifact

    bid = brain_id_of(installed)
    fingerprint = fingerprint_of(installed)
    master = KeyPair(unseal((installed / "state" / "keys" / bid / "master.key").read_text(), passphrase))
    assert master.fingerprint == fingerprint
    done = json.loads(purge_live("--json").ok().out)
    receipt = json.loads(Path(done["receipt"]).read_text())
    intent = json.loads(Path(done["intent"]).read_text())

    def write(name: str, rec: object, inte: object | None) -> Path:
        path = tmp_path / f"{name}.receipt.json"
        path.write_text(rec if isinstance(rec, str) else json.dumps(rec))
        if inte is not None:
            (tmp_path / f"{name}.intent.json").write_text(json.dumps(inte))
        return path

    def edited(
        doc: dict[str, Any], change: Callable[[dict[str, Any]], None], *, recanonicalize: bool = False
    ) -> dict[str, Any]:
        copy: dict[str, Any] = json.loads(json.dumps(doc))
        change(copy["body"])
        if recanonicalize:
            copy["canonical_body"] = canonical_json(copy["body"]).decode()
        return copy

    def bump_rows(body: dict[str, Any]) -> None:
        body["affected_table_classes"][0]["row_count"] += 1

    def later(body: dict[str, Any]) -> None:
        body["completed_at"] = "2099" + body["completed_at"][4:]

    def earlier_authorized(body: dict[str, Any]) -> None:
        body["authorized_at"] = "2000-01-01T00:00:00.000Z"

    verify_receipt(write("control", receipt, intent), fingerprint).ok()
    forged_intent = sign_artifact(master, edited(intent, earlier_authorized)["body"], intent["ts_signed"])

    cases = {
        "row-count-in-body": (edited(receipt, bump_rows), intent),
        "row-count-re-canonicalized": (edited(receipt, bump_rows, recanonicalize=True), intent),
        "completed-at": (edited(receipt, later, recanonicalize=True), intent),
        "completed-at-in-body": (edited(receipt, later), intent),
        "intent-edited": (receipt, edited(intent, earlier_authorized, recanonicalize=True)),
        "intent-re-signed-by-the-master": (receipt, forged_intent),
        "receipt-as-intent": (receipt, receipt),
        "not-json": ("{ this is not json", intent),
    }
    for name, (rec, inte) in cases.items():
        result = verify_receipt(write(name, rec, inte), fingerprint, "--json")
        assert result.code == 4, f"{name}: {result.describe()}"
        assert "Traceback" not in result.both and "hint:" in result.err, f"{name}: {result.describe()}"
        assert json.loads(result.out)["valid"] is False, name
    swapped = verify_receipt(write("swapped", receipt, forged_intent), fingerprint, "--json")
    assert json.loads(swapped.out)["reason"] == "receipt:intent_hash_mismatch", swapped.describe()

    control = tmp_path / "control.receipt.json"
    mismatch = verify_receipt(control, "ab" * 32, "--json")
    assert mismatch.code == 4 and "hint:" in mismatch.err and "Traceback" not in mismatch.both, (
        mismatch.describe()
    )
    assert json.loads(mismatch.out)["reason"] == "receipt:master_fingerprint_mismatch", mismatch.describe()
    assert_refused(verify_receipt(control, fingerprint.upper()), 2)
    assert_refused(verify_receipt(control, fingerprint[:-1]), 2)
    assert_refused(verify_receipt(control, "not-a-fingerprint"), 2)
    assert_refused(verify_receipt(write("lonely", receipt, None), fingerprint), 3, "intent")
    assert_refused(verify_receipt(tmp_path / "absent.receipt.json", fingerprint), 3)


# --- where the receipt goes ----------------------------------------------------------------------
def test_a_receipt_file_that_already_exists_is_not_taken_for_the_receipt(
    installed: Path, tmp_path: Path
) -> None:
    """`--receipt-file F` where F already exists (an old receipt, any file): the ceremony must
    refuse before it removes anything, or else leave a receipt that verifies. It must never
    destroy the brain and its master key and then have no signed receipt."""
    bid = brain_id_of(installed)
    fingerprint = fingerprint_of(installed)
    existing = tmp_path / "receipts" / "purge.json"
    existing.parent.mkdir()
    existing.write_text('{"an": "older file"}\n')
    before = home_state(installed, "file", bid)
    result = purge_live("--receipt-file", str(existing), "--json")
    if result.code == 0:
        reported = Path(json.loads(result.out)["receipt"])
        verify_receipt(reported, fingerprint).ok()
    else:
        assert "Traceback" not in result.both, result.describe()
        assert_state_unchanged(installed, "file", bid, before)
        assert existing.read_text() == '{"an": "older file"}\n'


def test_a_receipt_file_in_the_users_folder_keeps_the_folders_mode(installed: Path, tmp_path: Path) -> None:
    """The receipt is 0600, but the folder the user chose for it is theirs: not chmod-ed to 0700
    (the installer likewise writes unit files without tightening the user's folder)."""
    folder = tmp_path / "shared-folder"
    folder.mkdir()
    folder.chmod(0o755)
    target = folder / "brain.receipt.json"
    done = json.loads(purge_live("--receipt-file", str(target), "--json").ok().out)
    assert Path(done["receipt"]) == target and target.exists()
    assert Path(done["intent"]) == folder / "brain.intent.json"
    assert mode_of(target) == 0o600 and mode_of(folder / "brain.intent.json") == 0o600
    verify_receipt(target, done["master_fingerprint"]).ok()
    assert oct(mode_of(folder)) == oct(0o755), "the ceremony changed the mode of the user's folder"


# --- what the dry run and the receipt claim ------------------------------------------------------
def test_the_dry_run_lists_only_owned_files_that_exist(installed: Path) -> None:
    """The inventory's owned files are files aimos keeps for the brain: after the dry run each
    one listed exists (the dry run must not list the WAL and SHM its own connection made)."""
    assert not (installed / f"{BRAIN}-wal").exists()
    inventory = run_aimos("purge", "--json").json()
    assert inventory["owned_files"], "the installed brain has owned files (state, onboarding receipt)"
    missing = [p for p in inventory["owned_files"] if not Path(p).exists()]
    assert not missing, f"the dry run lists files that do not exist: {missing}"


def test_the_receipt_counts_the_credential_items_it_deleted(installed: Path) -> None:
    """After `aimos agent rotate cli` the revoked epoch's key is already gone from the keystore;
    the receipt's credential_items_deleted must count the items that existed and were deleted,
    not one per epoch ever enrolled."""
    bid = brain_id_of(installed)
    run_aimos("agent", "rotate", "cli").ok()
    existing = keystore_items(installed, "file", bid)
    assert "master" in existing
    done = json.loads(purge_live("--json").ok().out)
    assert keystore_items(installed, "file", bid) == set()
    body = json.loads(Path(done["receipt"]).read_text())["body"]
    assert body["credential_items_deleted"] == len(existing), (
        f"the receipt claims {body['credential_items_deleted']} credential items deleted; "
        f"the keystore held {len(existing)}: {sorted(existing)}"
    )


def test_the_brain_hash_is_what_the_refusals_compare(installed: Path) -> None:
    """The 'nothing changed' checks above compare bytes: a real change is seen."""
    bid = brain_id_of(installed)
    before = home_state(installed, "file", bid)
    digest = sha256_file(installed / BRAIN)
    run_aimos("save", "a change the snapshot must notice 5521").ok()
    with pytest.raises(AssertionError):
        assert_state_unchanged(installed, "file", bid, before)
    assert sha256_file(installed / BRAIN) != digest


def test_the_passphrase_from_a_file_descriptor(installed: Path) -> None:
    """`--passphrase-fd N`: a wrong passphrase there is refused (exit 6), the right one works."""
    import os

    bid = brain_id_of(installed)
    before = home_state(installed, "file", bid)

    def with_fd(secret: str) -> Result:
        read, write = os.pipe()
        os.write(write, (secret + "\n").encode())
        os.close(write)
        try:
            return run_aimos(
                "purge",
                "--live",
                "--passphrase-fd",
                str(read),
                "--json",
                input=CONFIRM + "\n",
                pass_fds=(read,),
                unset=("AIMOS_PASSPHRASE_FILE",),
            )
        finally:
            os.close(read)

    wrong = with_fd("definitely not it")
    assert_refused(wrong, 6)
    assert_state_unchanged(installed, "file", bid, before)
    right = with_fd(Path(os.environ["AIMOS_PASSPHRASE_FILE"]).read_text().strip())
    done = json.loads(right.ok().out)
    verify_receipt(done["receipt"], done["master_fingerprint"]).ok()
    assert not (installed / BRAIN).exists()


def test_the_confirmation_typed_on_a_terminal(installed: Path) -> None:
    """On a TTY the ceremony prompts for the exact text; a wrong answer aborts (8), the exact one
    purges."""
    import os

    from support.installer import PtySession

    env = dict(os.environ)
    wrong = PtySession(["purge", "--live"], env)
    try:
        wrong.expect(r"Type exactly `PURGE AIMOS personal personal` to confirm")
        wrong.send("PURGE AIMOS Personal personal")
        assert wrong.wait() == 8, wrong.buffer
    finally:
        wrong.close()
    assert (installed / BRAIN).exists() and not purge_files(installed)["intent"]
    right = PtySession(["purge", "--live"], env)
    try:
        right.expect(r"Type exactly `PURGE AIMOS personal personal` to confirm")
        right.send(CONFIRM)
        assert right.wait() == 0, right.buffer
        right.expect(r"purged: ceremony")
    finally:
        right.close()
    assert not (installed / BRAIN).exists()
    assert len(purge_files(installed)["receipt"]) == 1
