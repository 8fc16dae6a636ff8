"""The purge ceremony end to end, in real subprocesses, with each keystore (SPEC section 13):
install with a running housekeeper -> save -> recall -> nightly dream (a backup) -> dry run (its
counts checked by hand) -> --live with a wrong confirmation leaves the housekeeper running -> stop
it (so the counts stay still) -> --live ->
everything of the brain is gone, a signed receipt verifies, and a second brain is untouched.

The "os" case runs against the real Secret Service (gnome-keyring in a private D-Bus session:
`dbus-run-session -- bash scripts/test-in-keyring-session.sh tests/purge`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import BRAIN, assert_refused, run_aimos
from support.installer import require_keychain
from support.process import pid_alive, read_pid_file, wait_for
from support.purge import (
    CONFIRM,
    FINGERPRINT_RE,
    Cleanup,
    assert_no_leak,
    brain_id_of,
    checkpoint,
    class_counts_by_hand,
    column,
    epoch_count,
    forbidden_strings,
    keystore_items,
    mode_of,
    purge_files,
    purge_live,
    sha256_file,
    verify_receipt,
)

from aimos.identity.anchors import KEPT_ANCHOR_ITEM

pytestmark = pytest.mark.timeout(120)

MEMORIES = (
    ("purge-e2e:editor", "The quartermaster edits ledgers in vim, never in nano (note 7731)"),
    ("purge-e2e:coffee", "Harbour office coffee order: two flat whites, oat milk, at 10:40"),
    ("purge-e2e:route", "The night ferry to Ostrava leaves from pier 19 on Thursdays"),
)


def install(keystore: str, *extra: str, env: dict[str, str] | None = None) -> str:
    """`aimos install --yes --keystore K EXTRA`; the master fingerprint it printed."""
    result = run_aimos("install", "--yes", "--keystore", keystore, *extra, env=env, timeout=120).ok()
    found = FINGERPRINT_RE.search(result.out)
    assert found, result.describe()
    return found.group(1)


def test_purge_end_to_end(
    aimos_home: Path, tmp_path: Path, keystore: str, passphrase: str, cleanup: Cleanup
) -> None:
    if keystore == "os":
        require_keychain()

    # a second brain in another home, installed first: the ceremony must not touch it
    other = tmp_path / "other-home"
    other.mkdir(mode=0o700)
    other_env = {"AIMOS_HOME": str(other)}
    cleanup.home(other)
    install(keystore, "--no-guides", "--service", "none", env=other_env)
    other_id = brain_id_of(other)
    cleanup.brain(other_id)
    checkpoint(other / BRAIN)
    other_hash = sha256_file(other / BRAIN)
    other_items = keystore_items(other, keystore, other_id)
    assert {"master", KEPT_ANCHOR_ITEM} <= other_items and len(other_items) == 2 + epoch_count(other)
    other_anchors = (other / "config" / "anchors.json").read_bytes()

    # the brain to purge: installed with guides and a housekeeper run as a detached process
    fingerprint = install(keystore, "--service", "process")
    bid = brain_id_of(aimos_home)
    assert bid != other_id
    cleanup.brain(bid)
    hk_pid = read_pid_file(aimos_home)
    assert pid_alive(hk_pid), "install --service process did not leave a housekeeper running"

    ids = [run_aimos("save", "--key", key, text).ok().out.strip() for key, text in MEMORIES]
    recalled = run_aimos("recall", "quartermaster ledgers vim").ok()
    assert MEMORIES[0][1] in recalled.out, recalled.describe()
    run_aimos("housekeeper", "run-job", "nightly-dream", "--json", timeout=120).ok()
    backups = sorted((aimos_home / "backups").glob("*.sqlite3"))
    assert backups, "the nightly dream made no backup"

    # dry run (text): the exact confirmation, nothing changed
    dry = run_aimos("purge").ok()
    assert f"type exactly: {CONFIRM}" in dry.out, dry.describe()
    assert "dry run" in dry.err, dry.describe()

    # dry run (JSON) while the housekeeper runs: the files it lists exist, the service with them
    inventory = json.loads(run_aimos("purge", "--json").ok().out)
    assert inventory["brain_id"] == bid
    assert inventory["master_fingerprint"] == fingerprint
    assert inventory["keystore"] == keystore
    assert inventory["confirmation"] == CONFIRM
    listed = {Path(p) for p in inventory["owned_files"]}
    # (the WAL and SHM the dry run's own connection made are the subject of another test)
    for path in listed:
        if not path.name.endswith(("-wal", "-shm")):
            assert path.exists(), f"the dry run lists {path}, which does not exist"
    state = aimos_home / "state"
    for expected in [
        *backups,
        state / "housekeeper-service.json",
        state / "housekeeper.pid",
        state / "housekeeper-status.json",
        state / "onboarding" / "first-launch-receipt.json",
    ]:
        assert expected in listed, f"the dry run does not list {expected}: {sorted(map(str, listed))}"

    # --live while the housekeeper runs, with a wrong confirmation: refused before the
    # housekeeper is stopped (it is stopped only once the confirmation is typed); nothing changed
    items_before = keystore_items(aimos_home, keystore, bid)
    memories_before = column(aimos_home / BRAIN, "SELECT memory_id FROM memories ORDER BY memory_id")
    declined = purge_live(confirmation="PURGE AIMOS personal")
    assert_refused(declined, 8, f"Type exactly: {CONFIRM}")
    assert "stopping the housekeeper" not in declined.err, declined.describe()
    assert purge_files(aimos_home) == {"receipt": [], "intent": [], "journal": [], "other": []}
    assert (aimos_home / BRAIN).exists()
    assert keystore_items(aimos_home, keystore, bid) == items_before
    assert column(aimos_home / BRAIN, "SELECT memory_id FROM memories ORDER BY memory_id") == memories_before
    assert (state / "housekeeper-service.json").exists()
    assert pid_alive(hk_pid) and read_pid_file(aimos_home) == hk_pid, (
        "a refused purge stopped the housekeeper"
    )

    run_aimos("housekeeper", "stop", timeout=180).ok()
    wait_for(lambda: not pid_alive(hk_pid), "the housekeeper to exit")

    # the inventory, checked by hand: class counts over every table, one item per epoch + master
    inventory = json.loads(run_aimos("purge", "--json").ok().out)
    by_hand = class_counts_by_hand(aimos_home / BRAIN)
    assert {c["class"]: c["row_count"] for c in inventory["affected_table_classes"]} == by_hand
    assert [c["class"] for c in inventory["affected_table_classes"]] == sorted(by_hand)
    assert by_hand["memory_and_index"] > 0 and by_hand["cryptographic_proof"] > 0
    epochs = epoch_count(aimos_home)
    assert inventory["credential_items"] == 2 + epochs  # the master, each epoch, the kept anchor
    epoch_items = {
        f"{a}@{v}"
        for a, v in zip(
            column(aimos_home / BRAIN, "SELECT agent_id FROM identity_epochs ORDER BY rowid"),
            column(aimos_home / BRAIN, "SELECT valid_from FROM identity_epochs ORDER BY rowid"),
            strict=True,
        )
    }
    assert keystore_items(aimos_home, keystore, bid) == {"master", KEPT_ANCHOR_ITEM} | epoch_items
    assert set(ids) <= set(column(aimos_home / BRAIN, "SELECT memory_id FROM memories"))

    forbidden = forbidden_strings(aimos_home, keystore, bid, passphrase)
    gone_candidates = {
        p
        for p in aimos_home.rglob("*")
        if p.is_file()
        and p.name not in (BRAIN, "anchors.json", "aimos.log")
        and (aimos_home / "state" / "keys") not in p.parents
    }
    assert gone_candidates, "no owned files to remove"

    # the ceremony
    result = json.loads(purge_live("--json").ok().out)
    receipt_path, intent_path = Path(result["receipt"]), Path(result["intent"])
    assert result["master_fingerprint"] == fingerprint

    for suffix in ("", "-wal", "-shm", "-journal"):
        assert not (aimos_home / (BRAIN + suffix)).exists(), f"{BRAIN}{suffix} is still there"
    backups_dir = aimos_home / "backups"
    assert not (list(backups_dir.iterdir()) if backups_dir.exists() else []), "backups are left"
    for gone in (
        "state/housekeeper-service.json",
        "state/housekeeper.pid",
        "state/housekeeper-status.json",
        "state/housekeeper.lock",
        "state/install.lock",
        "state/onboarding/first-launch-receipt.json",
        "logs/housekeeper.log",
    ):
        assert not (aimos_home / gone).exists(), f"{gone} is still there"
    left = sorted(str(p) for p in gone_candidates if p.exists())
    assert not left, f"owned files left behind: {left}"
    if keystore == "os":
        assert require_keychain().get_password(f"aimos:{bid}", "master") is None
    else:
        assert not (aimos_home / "state" / "keys" / bid).exists(), "the brain's key folder is still there"
    assert keystore_items(aimos_home, keystore, bid) == set()
    anchors = aimos_home / "config" / "anchors.json"
    if anchors.exists():
        assert bid not in json.loads(anchors.read_text())["brains"], "the anchors entry is still there"

    # the artifacts: one receipt, one intent, no journal, both 0600, in a 0700 folder
    found = purge_files(aimos_home)
    assert found == {"receipt": [receipt_path], "intent": [intent_path], "journal": [], "other": []}
    assert mode_of(receipt_path) == 0o600 and mode_of(intent_path) == 0o600
    assert mode_of(receipt_path.parent) == 0o700
    verified = verify_receipt(receipt_path, fingerprint, "--json")
    verdict = json.loads(verified.ok().out)
    assert verdict["valid"] is True and verdict["ceremony_id"] == result["ceremony_id"]

    receipt = json.loads(receipt_path.read_text())
    intent = json.loads(intent_path.read_text())
    body = receipt["body"]
    assert body["schema"] == "aimos-whole-brain-purge-receipt/v1"
    assert intent["body"]["schema"] == "aimos-whole-brain-purge-intent/v1"
    assert body["ceremony_id"] == intent["body"]["ceremony_id"] == result["ceremony_id"]
    assert body["target"]["brain_id"] == bid
    assert (body["target"]["company"], body["target"]["brain"]) == ("personal", "personal")
    assert body["actor"]["fingerprint"] == fingerprint
    assert body["software_release"].startswith("aimos ")
    assert body["started_at"] <= body["completed_at"]
    assert body["affected_table_classes"] == inventory["affected_table_classes"]
    assert intent["body"]["affected_table_classes"] == inventory["affected_table_classes"]
    assert body["credential_items_deleted"] == 2 + epochs
    assert len(backups) + 1 <= body["derived_files_deleted"] <= len(gone_candidates)
    assert body["postcondition"] == {
        "mode": "destroyed",
        "database_present": False,
        "empty_verified": False,
        "migration_count": 0,
    }
    assert body["completion_status"] == "complete"

    # counts and classes only: no content, no key, no content hash, no secret
    assert_no_leak([p for ps in found.values() for p in ps], forbidden)

    # the other brain: byte for byte the same, its keys and anchor kept, and it still verifies
    assert sha256_file(other / BRAIN) == other_hash, "the other home's brain changed"
    assert keystore_items(other, keystore, other_id) == other_items
    assert (other / "config" / "anchors.json").read_bytes() == other_anchors
    assert not (other / "purge-receipts").exists()
    run_aimos("verify", env=other_env, timeout=120).ok()
