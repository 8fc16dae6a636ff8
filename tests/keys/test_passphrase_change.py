"""`aimos passphrase change` (issue 18, item 3): the master re-sealed under a new passphrase, on
both keystores, from --passphrase-fd, AIMOS_PASSPHRASE_FILE and a terminal; a wrong current
passphrase changes nothing; and an `aimos` killed after any step leaves exactly one working
passphrase, with the next change and the next master operation working."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.cli import BRAIN, assert_refused, run_aimos, sha256_file, snapshot
from support.installer import PtySession
from support.keys import KILLED, Installed, StepHook, change, passphrase_file, with_fd

from aimos.vocabulary import MASTER_PASSPHRASE_CHANGED_OPERATION

pytestmark = pytest.mark.timeout(300)

NEW = "a brand new passphrase"
THIRD = "and a third passphrase"


def enrol_works(home: Path, passphrase: str, agent: str) -> bool:
    """A real master operation (`aimos agent enroll`) with ``passphrase``; True when it signed."""
    result = run_aimos("agent", "enroll", agent, env=passphrase_file(home, passphrase))
    if result.code == 0:
        return True
    assert_refused(result, 6)
    assert "wrong master passphrase" in result.err, result.describe()
    return False


def test_change_then_only_the_new_passphrase_opens_the_master(brain: Installed, passphrase: str) -> None:
    result = change(passphrase, NEW).ok()
    assert "master passphrase changed" in result.out and brain.brain_id not in result.err
    assert brain.opens(NEW) and not brain.opens(passphrase)
    assert brain.items(brain.kind) >= {"master"} and "master.next" not in brain.items(brain.kind)
    assert not enrol_works(brain.home, passphrase, "bob")
    assert enrol_works(brain.home, NEW, "bob")
    assert brain.events(MASTER_PASSPHRASE_CHANGED_OPERATION) == 1
    body = run_aimos("status", "--json").json()
    assert brain.kind in body["keystore"]["kind"]
    for text in (passphrase, NEW):  # the record holds no passphrase
        assert text.encode() not in (brain.home / BRAIN).read_bytes()


def test_current_from_aimos_passphrase_file_new_from_fd(brain: Installed, passphrase: str) -> None:
    import os

    read_end, write_end = os.pipe()
    os.write(write_end, (NEW + "\n").encode())
    os.close(write_end)
    try:
        result = run_aimos(
            "passphrase", "change", "--new-passphrase-fd", str(read_end), pass_fds=(read_end,)
        ).ok()
    finally:
        os.close(read_end)
    assert "holds the old passphrase" in result.err, result.describe()
    assert brain.opens(NEW) and not brain.opens(passphrase)


@pytest.mark.parametrize("keystore", ["file"], indirect=True)
def test_a_wrong_current_passphrase_changes_nothing(brain: Installed, passphrase: str) -> None:
    before = snapshot(brain.home)
    master = sha256_file(brain.key_dir / "master.key")
    assert_refused(change("not the passphrase", NEW), 6, "passphrase")
    after = snapshot(brain.home)
    assert after.counts == before.counts and after.keys == before.keys
    assert sha256_file(brain.key_dir / "master.key") == master
    assert brain.opens(passphrase) and not brain.opens(NEW)


@pytest.mark.parametrize("keystore", ["file"], indirect=True)
def test_the_new_passphrase_is_checked_before_anything_changes(brain: Installed, passphrase: str) -> None:
    master = sha256_file(brain.key_dir / "master.key")
    assert_refused(change(passphrase, "short"), 6, "at least 8")
    assert_refused(change(passphrase, passphrase), 2, "different")
    one_line = with_fd(
        passphrase + "\n", "passphrase", "change", fd_flags=("--passphrase-fd", "--new-passphrase-fd")
    )
    assert_refused(one_line, 2, "two lines")
    no_terminal = with_fd(passphrase + "\n", "passphrase", "change", fd_flags=("--passphrase-fd",))
    assert_refused(no_terminal, 2, "--new-passphrase-fd")
    assert sha256_file(brain.key_dir / "master.key") == master
    assert brain.opens(passphrase)
    assert brain.events(MASTER_PASSPHRASE_CHANGED_OPERATION) == 0


@pytest.mark.parametrize("keystore", ["file"], indirect=True)
def test_change_on_a_terminal(brain: Installed, passphrase: str) -> None:
    import os

    env = {k: v for k, v in os.environ.items() if k != "AIMOS_PASSPHRASE_FILE"}
    session = PtySession(["passphrase", "change"], env)
    try:
        session.expect(re.escape("Master passphrase (current):"))
        session.send(passphrase)
        session.expect(re.escape("New master passphrase:"))
        # a slip is asked again in place (issue 38, as at install): too short, then a mismatch
        session.send("short")
        said = session.expect(re.escape("New master passphrase:"))
        assert "shorter than 8 characters" in said and "(2 tries left)" in said, said
        session.send(NEW)
        session.expect(re.escape("Repeat the new master passphrase:"))
        session.send(THIRD)
        said = session.expect(re.escape("New master passphrase:"))
        assert "The two passphrases differ" in said and "(1 try left)" in said, said
        session.send(NEW)
        session.expect(re.escape("Repeat the new master passphrase:"))
        session.send(NEW)
        session.expect("master passphrase changed")
        assert session.wait() == 0, session.buffer
    finally:
        session.close()
    assert brain.opens(NEW) and not brain.opens(passphrase) and not brain.opens(THIRD)


@pytest.mark.parametrize(("step", "works"), [("staged", "old"), ("switched", "new"), ("cleaned", "new")])
def test_a_kill_after_any_step_leaves_exactly_one_working_passphrase(
    brain: Installed, passphrase: str, tmp_path: Path, step: str, works: str
) -> None:
    hook = StepHook(tmp_path)
    killed = change(passphrase, NEW, env=hook.env(kill_at=step))
    assert killed.code == KILLED, killed.describe()
    working, other = (passphrase, NEW) if works == "old" else (NEW, passphrase)
    assert brain.opens(working) and not brain.opens(other)
    assert ("master.next" in brain.items(brain.kind)) == (step in ("staged", "switched"))
    assert enrol_works(brain.home, working, "bob") and not enrol_works(brain.home, other, "carol")
    again = change(working, THIRD).ok()
    if step != "cleaned":
        assert "cut off" in again.err and "discarded" in again.err  # the staged item beside the master
    assert brain.opens(THIRD) and not brain.opens(working) and not brain.opens(other)
    assert "master.next" not in brain.items(brain.kind)
    assert enrol_works(brain.home, THIRD, "dave")
    run_aimos("verify").ok()


def test_a_torn_staged_item_is_discarded(brain: Installed, passphrase: str) -> None:
    brain.keystore().put("master.next", '{"v": 1, "box": "tor')  # as a kill inside a write could leave
    assert brain.opens(passphrase)
    result = change(passphrase, NEW).ok()
    assert "discarded" in result.err
    assert brain.opens(NEW) and "master.next" not in brain.items(brain.kind)


def test_a_master_replaced_by_delete_then_add_and_cut_off_in_between(
    brain: Installed, passphrase: str, tmp_path: Path
) -> None:
    """macOS replaces an item by deleting it and adding it again: cut off in between, the staged
    item (written and checked before) is the master, and the next change completes the switch."""
    hook = StepHook(tmp_path)
    assert change(passphrase, NEW, env=hook.env(kill_at="switched")).code == KILLED
    store = brain.keystore()
    assert store.delete("master")
    assert brain.opens(NEW) and not brain.opens(passphrase)
    assert enrol_works(brain.home, NEW, "bob")
    result = change(NEW, THIRD).ok()
    assert "completed" in result.err
    assert brain.opens(THIRD) and brain.items(brain.kind) >= {"master"}
    assert "master.next" not in brain.items(brain.kind)


def test_a_purge_after_a_cut_off_change_leaves_no_key_behind(
    brain: Installed, passphrase: str, tmp_path: Path
) -> None:
    hook = StepHook(tmp_path)
    assert change(passphrase, NEW, env=hook.env(kill_at="staged")).code == KILLED
    assert "master.next" in brain.items(brain.kind)
    lock = brain.home / "state" / f"keys-{brain.brain_id}.lock"
    assert lock.exists()
    run_aimos("purge", "--live", input="PURGE AIMOS personal personal\n").ok()
    assert brain.items(brain.kind) == set()
    assert not lock.exists()
