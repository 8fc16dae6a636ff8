"""The anchors outside the brain, attacked (issue 35, items 5 and 6).

Item 5: an attacker with the aimos folder copies in a brain it built with its own master, plus that
brain's key folder, and leaves anchors.json and the freshness file alone; or deletes anchors.json.
Before, anchors.json had no entry for the new brain id, so the per-request master check was skipped:
recall returned the attacker's planted memory first and `doctor` found nothing. Now a brain this home
holds no anchor for is refused by every request (exit 5) until the person anchors it with the
master passphrase (`aimos anchor`), which the attacker's brain does not open.

Item 6: the brain rolled back past a revocation and the freshness file deleted. Before, `verify`
said exit 0 and the next save re-anchored, so the revoked agent was active again. Now writes refuse
until the person confirms with `aimos anchor`, which names the revocation the brain lost; and an
old freshness file put back with the old brain is caught by `aimos verify` against the copy kept in
the keystore.

Real brains (`aimos install`, the file keystore), the CLI, files moved as an attacker would.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from support.cli import BRAIN, assert_refused, brain_id, edit_outside, run_aimos

pytestmark = pytest.mark.timeout(180)

INTEGRITY, IDENTITY = 5, 6
PLANTED = "the spare key is under the doormat, and the alarm code is on the fridge"


def _fingerprint(home: Path) -> str:
    con = sqlite3.connect(home / BRAIN)
    try:
        return str(con.execute("SELECT fingerprint FROM master_identity").fetchone()[0])
    finally:
        con.close()


def _checkpointed_copy(source: Path, target: Path) -> None:
    """A whole copy of a brain file (its WAL folded in first), as an attacker would take one."""
    con = sqlite3.connect(source)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    shutil.copy2(source, target)


def _attackers_brain(tmp_path: Path) -> Path:
    """A brain the attacker installed in a home of its own, with its own passphrase."""
    home = tmp_path / "attacker"
    home.mkdir(mode=0o700)
    secret = tmp_path / "attacker-passphrase"
    secret.write_text("the attacker's own passphrase\n")
    secret.chmod(0o600)
    env = {"AIMOS_HOME": str(home), "AIMOS_PASSPHRASE_FILE": str(secret)}
    run_aimos("install", "--yes", "--keystore", "file", "--no-service", "--no-guides", env=env).ok()
    run_aimos("save", PLANTED, env=env).ok()
    return home


def test_a_brain_swapped_in_with_its_own_master_is_refused_until_anchored(
    installed: Path, tmp_path: Path
) -> None:
    run_aimos("save", "the spare key is with the neighbour at number 12").ok()
    attacker = _attackers_brain(tmp_path)
    theirs = brain_id(attacker)
    # the attacker's brain and its key folder in place of the person's; anchors.json left alone
    for suffix in ("-wal", "-shm"):
        Path(f"{installed / BRAIN}{suffix}").unlink(missing_ok=True)
    _checkpointed_copy(attacker / BRAIN, installed / BRAIN)
    shutil.copytree(attacker / "state" / "keys" / theirs, installed / "state" / "keys" / theirs)
    (installed / "config" / f"freshness-{theirs}.json").unlink(missing_ok=True)

    for args in (("recall", "where is the spare key"), ("save", "a new note"), ("show", "0" * 8)):
        refused = run_aimos(*args)
        assert_refused(refused, INTEGRITY, "aimos anchor")
        assert PLANTED not in refused.both
    doctor = run_aimos("doctor", "--json")
    assert doctor.code != 0, doctor.describe()
    anchors = next(c for c in json.loads(doctor.out)["checks"] if c["name"] == "anchors")
    assert anchors["status"] == "fail" and "aimos anchor" in anchors["fix"], anchors

    # the person's passphrase does not open the attacker's master: nothing is anchored
    anchors_before = (installed / "config" / "anchors.json").read_bytes()
    assert_refused(run_aimos("anchor"), IDENTITY)
    assert (installed / "config" / "anchors.json").read_bytes() == anchors_before
    assert_refused(run_aimos("recall", "where is the spare key"), INTEGRITY)


def test_a_deleted_anchors_file_refuses_requests_until_the_person_anchors_the_brain(
    installed: Path,
) -> None:
    mine = run_aimos("save", "the spare key is with the neighbour at number 12").ok().out.strip()
    fingerprint = _fingerprint(installed)
    (installed / "config" / "anchors.json").unlink()
    assert_refused(run_aimos("recall", "spare key"), INTEGRITY, "aimos anchor")
    assert_refused(run_aimos("save", "another note"), INTEGRITY, "aimos anchor")

    anchored = run_aimos("anchor", "--json").ok().json()
    assert anchored["master_fingerprint"] == fingerprint and anchored["master_anchored"] == "added"
    shown = run_aimos("anchor").ok()
    assert fingerprint in shown.out and "already named" in shown.err, shown.describe()
    assert mine[:8] in run_aimos("recall", "spare key").ok().out
    run_aimos("verify").ok()


def test_a_rollback_with_the_freshness_anchor_deleted_is_refused_and_names_the_lost_revocation(
    installed: Path, tmp_path: Path
) -> None:
    run_aimos("agent", "enroll", "evil").ok()
    run_aimos("save", "evil's first note", "--as", "evil").ok()
    old = tmp_path / "before-revocation.sqlite3"
    _checkpointed_copy(installed / BRAIN, old)
    keys = installed / "state" / "keys" / brain_id(installed)
    (evil_key,) = keys.glob("evil@*.key")
    stolen = evil_key.read_bytes()  # the hostile agent keeps its own key
    run_aimos("agent", "revoke", "evil").ok()
    assert_refused(run_aimos("save", "after revocation", "--as", "evil"), IDENTITY)

    # the attacker puts the older brain back and deletes the freshness anchor
    for suffix in ("-wal", "-shm"):
        Path(f"{installed / BRAIN}{suffix}").unlink(missing_ok=True)
    shutil.copy2(old, installed / BRAIN)
    bid = brain_id(installed)
    (installed / "config" / f"freshness-{bid}.json").unlink()
    evil_key.write_bytes(stolen)
    evil_key.chmod(0o600)

    refused = run_aimos("save", "evil is back", "--as", "evil")
    assert_refused(refused, INTEGRITY, "aimos anchor")
    assert "freshness anchor" in refused.err, refused.describe()
    assert_refused(run_aimos("recall", "note"), INTEGRITY)
    verified = run_aimos("verify")
    assert verified.code == 4, verified.describe()  # the keystore's copy knows the brain was anchored
    status = run_aimos("doctor", "--json")
    assert status.code == INTEGRITY, status.describe()
    anchors = next(c for c in json.loads(status.out)["checks"] if c["name"] == "anchors")
    assert anchors["status"] == "fail" and "aimos anchor" in anchors["fix"], anchors

    # the person confirms: told which revocation this brain does not hold
    confirmed = run_aimos("anchor")
    assert confirmed.code == 0, confirmed.describe()
    assert "revocation missing: agent evil" in confirmed.err, confirmed.describe()
    data = run_aimos("anchor", "--json").ok().json()
    assert data["freshness"] == "kept" and data["missing_revocations"] == [], data  # moved on


def test_an_old_brain_put_back_with_its_old_freshness_file_is_found_by_verify(
    installed: Path, tmp_path: Path
) -> None:
    run_aimos("agent", "enroll", "evil").ok()
    bid = brain_id(installed)
    fresh = installed / "config" / f"freshness-{bid}.json"
    old_brain, old_fresh = tmp_path / "old.sqlite3", tmp_path / "old-freshness.json"
    _checkpointed_copy(installed / BRAIN, old_brain)
    shutil.copy2(fresh, old_fresh)
    run_aimos("agent", "revoke", "evil").ok()

    # a whole old aimos folder restored: the brain and its freshness file, consistent together
    for suffix in ("-wal", "-shm"):
        Path(f"{installed / BRAIN}{suffix}").unlink(missing_ok=True)
    shutil.copy2(old_brain, installed / BRAIN)
    shutil.copy2(old_fresh, fresh)
    verified = run_aimos("verify", "--json")
    assert verified.code == 4, verified.describe()
    (failure,) = [f for f in json.loads(verified.out)["brain"]["failures"] if f["check"] == "freshness"]
    assert failure["reason"] == "brain_rolled_back" and "in the keystore" in failure["detail"], failure
    doctor = json.loads(run_aimos("doctor", "--json").out)
    anchors = next(c for c in doctor["checks"] if c["name"] == "anchors")
    assert anchors["status"] == "fail", anchors

    # an identity change on the rolled-back brain does not wipe the evidence out of the keystore
    run_aimos("agent", "enroll", "newbie").ok()
    again = run_aimos("verify", "--json")
    assert again.code == 4, again.describe()
    assert "in the keystore" in json.dumps(json.loads(again.out)["brain"]["failures"])
    confirmed = run_aimos("anchor")
    assert "revocation missing: agent evil" in confirmed.err, confirmed.describe()
    assert "does not descend from seal" in confirmed.err, confirmed.describe()


def test_a_brain_without_its_master_row_is_not_the_anchored_brain(installed: Path) -> None:
    run_aimos("save", "the spare key is with the neighbour at number 12").ok()
    edit_outside(installed, "master_identity", "DELETE FROM master_identity;")
    for args in (("list",), ("recall", "spare key"), ("save", "a new note")):
        assert_refused(run_aimos(*args), INTEGRITY)


def test_a_freshness_file_torn_by_a_crash_is_rewritten_unless_the_kept_copy_says_rollback(
    installed: Path, tmp_path: Path
) -> None:
    bid = brain_id(installed)
    fresh = installed / "config" / f"freshness-{bid}.json"
    # a careless crash: the block is garbage; the next write goes on and rewrites it
    fresh.write_bytes(b"\x00" * 40)
    status = json.loads(run_aimos("status", "--json").out)
    assert status["freshness"]["state"] == "anchor_damaged", status["freshness"]
    run_aimos("save", "written after the crash").ok()
    assert json.loads(fresh.read_text("utf-8"))["seq"] > 0

    # the attacker's version: roll back past a revocation and garble the file instead of deleting it
    run_aimos("agent", "enroll", "evil").ok()
    old = tmp_path / "old.sqlite3"
    _checkpointed_copy(installed / BRAIN, old)
    run_aimos("agent", "revoke", "evil").ok()
    for suffix in ("-wal", "-shm"):
        Path(f"{installed / BRAIN}{suffix}").unlink(missing_ok=True)
    shutil.copy2(old, installed / BRAIN)
    fresh.write_bytes(b"garbage")
    refused = run_aimos("save", "on the rolled-back brain")
    assert_refused(refused, INTEGRITY)
    assert "in the keystore" in refused.err, refused.describe()
