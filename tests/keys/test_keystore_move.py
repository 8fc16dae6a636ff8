"""`aimos keystore move --to os|file` (issue 18, item 4): every key of the brain moved both ways
between the real Secret Service and the file keystore, with save, recall and verify working after
each move; refusals that change nothing; and a failure or a kill mid-move leaving the brain working
on one complete keystore."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import assert_refused, require_keychain, run_aimos, snapshot
from support.keys import KILLED, Installed, StepHook, install_brain

from aimos.identity.anchors import KEPT_ANCHOR_ITEM
from aimos.vocabulary import KEYSTORE_MOVED_OPERATION

pytestmark = pytest.mark.timeout(300)

OTHER = {"os": "file", "file": "os"}


def epochs_held(brain: Installed) -> set[str]:
    """The item names the brain's keys must be under: the master, every epoch not revoked, and the
    kept freshness anchor (it moves with the keys)."""
    from support.cli import sqlite_value

    refs = sqlite_value(
        brain.home / "brain.sqlite3",
        "SELECT key_ref FROM identity_epochs e WHERE NOT EXISTS (SELECT 1 FROM agent_revocations r"
        " WHERE r.agent_id = e.agent_id AND r.agent_valid_from = e.valid_from)",
    ).split()
    return {"master", KEPT_ANCHOR_ITEM, *refs}


def works(brain: Installed, text: str) -> None:
    """Save, recall and verify through the real CLI: the brain signs with the keys where they are."""
    memory = run_aimos("save", text).ok().out.strip()
    found = run_aimos("recall", text.split()[-1], "--json").json()
    assert memory in str(found), found
    run_aimos("verify").ok()


def move(to: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return run_aimos("keystore", "move", "--to", to, "--json", env=env, timeout=120)


@pytest.mark.keychain
@pytest.mark.parametrize("keystore", ["os", "file"], indirect=True)
def test_move_there_and_back(brain: Installed, keystore: str) -> None:
    require_keychain()
    there = OTHER[keystore]
    works(brain, "the boiler is serviced in October")
    run_aimos("agent", "rotate", "cli").ok()  # a revoked epoch: its key left the keystore
    held = epochs_held(brain)
    assert brain.items(keystore) == held

    moved = move(there).json()
    assert set(moved["items"]) == held and moved["source"] == keystore and moved["target"] == there
    assert len(moved["not_kept"]) == 1 and moved["not_kept"][0].startswith("cli@")
    assert brain.recorded_kind() == there
    assert brain.items(there) == held and brain.items(keystore) == set()
    if keystore == "file":
        assert not brain.key_dir.exists()
    status = run_aimos("status", "--json").json()
    assert status["keystore"]["kind"] == there
    works(brain, "saved after the move to the other keystore")
    assert brain.events(KEYSTORE_MOVED_OPERATION) == 1

    back = move(keystore).json()
    assert back["recorded_as"] == "keystore.3"
    assert brain.recorded_kind() == keystore
    assert brain.items(keystore) == held and brain.items(there) == set()
    works(brain, "saved after the move back")
    assert run_aimos("status", "--json").json()["keystore"]["kind"] == keystore
    assert brain.events(KEYSTORE_MOVED_OPERATION) == 2
    assert brain.opens(brain.home.parent.joinpath("passphrase").read_text().strip())


@pytest.mark.parametrize("keystore", ["file"], indirect=True)
def test_refusals_change_nothing(brain: Installed, passphrase: str) -> None:
    before = snapshot(brain.home)
    assert_refused(move("file"), 2, "nothing to move")
    assert_refused(move("cloud"), 2, "--to os")
    no_keychain = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    refused = move("os", env=no_keychain)
    assert_refused(refused, 6, "file keystore")
    assert "no OS keychain is reachable" in refused.err
    after = snapshot(brain.home)
    assert (after.counts, after.keys, after.brain_sha256) == (before.counts, before.keys, before.brain_sha256)
    assert brain.recorded_kind() == "file"


@pytest.mark.keychain
@pytest.mark.parametrize("keystore", ["os", "file"], indirect=True)
def test_a_wrong_passphrase_moves_nothing(brain: Installed, keystore: str, tmp_path: Path) -> None:
    from support.keys import passphrase_file

    held = brain.items(keystore)
    assert_refused(move(OTHER[keystore], env=passphrase_file(tmp_path, "not the passphrase")), 6)
    assert brain.items(keystore) == held and brain.items(OTHER[keystore]) == set()
    assert brain.recorded_kind() == keystore


@pytest.mark.keychain
@pytest.mark.parametrize("keystore", ["os", "file"], indirect=True)
def test_a_failure_before_the_switch_removes_the_copies(
    brain: Installed, keystore: str, tmp_path: Path
) -> None:
    require_keychain()
    hook = StepHook(tmp_path)
    held = brain.items(keystore)
    failed = move(OTHER[keystore], env=hook.env(fail_at="copied"))
    assert_refused(failed, 6)
    assert "nothing was moved" in failed.err, failed.describe()
    assert brain.recorded_kind() == keystore
    assert brain.items(keystore) == held and brain.items(OTHER[keystore]) == set()
    works(brain, "saved after a failed move")
    assert brain.events(KEYSTORE_MOVED_OPERATION) == 0


@pytest.mark.keychain
@pytest.mark.parametrize("keystore", ["os", "file"], indirect=True)
@pytest.mark.parametrize("step", ["copied", "switched"])
def test_a_kill_mid_move_leaves_a_working_brain(
    brain: Installed, keystore: str, tmp_path: Path, step: str
) -> None:
    require_keychain()
    there = OTHER[keystore]
    hook = StepHook(tmp_path)
    held = brain.items(keystore)
    killed = move(there, env=hook.env(kill_at=step))
    assert killed.code == KILLED, killed.describe()
    # both keystores hold complete copies; the brain records exactly one of them
    assert brain.items(keystore) == held and brain.items(there) == held
    assert brain.recorded_kind() == (keystore if step == "copied" else there)
    works(brain, f"saved after a kill at {step}")
    # the next move in either direction works and tidies the leftovers
    target = there if step == "copied" else keystore
    done = move(target).json()
    assert done["target"] == target and brain.recorded_kind() == target
    assert brain.items(target) == held and brain.items(OTHER[target]) == set()
    works(brain, "saved after the move that followed")


@pytest.mark.keychain
def test_a_locked_keychain_says_locked_and_how_to_unlock(
    aimos_home: Path, passphrase: str, tmp_path: Path
) -> None:
    brain = install_brain(aimos_home, "os", passphrase)
    try:
        import secretstorage

        conn = secretstorage.dbus_init()
        collection = secretstorage.get_default_collection(conn)
        collection.lock()
        try:
            assert collection.is_locked()
            for result in (
                run_aimos("save", "saved while the keychain is locked"),
                move("file"),
                run_aimos(
                    "install",
                    "--yes",
                    "--no-guides",
                    "--keystore",
                    "os",
                    "--service",
                    "none",
                    env={"AIMOS_HOME": str(tmp_path / "second-home")},
                ),
            ):
                assert_refused(result, 6, "unlock", "Seahorse")
                assert "the OS keychain is locked" in result.err, result.describe()
                assert "No OS keychain answered" not in result.err
            assert brain.recorded_kind() == "os" and not brain.key_dir.exists()
        finally:
            unlock(conn, collection)
            conn.close()
        works(brain, "saved once the keychain is unlocked")
    finally:
        brain.forget_keys()


def unlock(conn, collection) -> None:  # type: ignore[no-untyped-def]
    """Unlock the test session's login collection without a prompt (gnome-keyring's internal
    interface, with the password scripts/test-in-keyring-session.sh unlocked it with)."""
    from secretstorage.util import DBusAddressWrapper, format_secret, open_session

    internal = DBusAddressWrapper(
        "/org/freedesktop/secrets", "org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface", conn
    )
    secret = format_secret(open_session(conn), b"pass", "text/plain")
    internal.call("UnlockWithMasterPassword", "o(oayays)", collection.collection_path, secret)
    assert not collection.is_locked()


@pytest.mark.keychain
@pytest.mark.parametrize("keystore", ["file"], indirect=True)
def test_a_backup_from_before_a_move_is_restored_onto_the_keystore_the_keys_are_in(brain: Installed) -> None:
    require_keychain()
    works(brain, "saved before the backup")
    night = run_aimos("housekeeper", "run-job", "nightly-dream", "--json", timeout=180).json()
    backup = night["result"]["backup"]["file"]
    held = brain.items("file")
    move("os").json()
    works(brain, "saved after the move, before the restore")
    run_aimos("restore", backup, "--yes", "--json", timeout=180).json()
    # the backup recorded the file keystore; the restored brain records where the keys are now
    assert brain.recorded_kind() == "os"
    assert brain.items("os") == held and brain.items("file") == set()
    works(brain, "saved after the restore")


@pytest.mark.keychain
@pytest.mark.parametrize("keystore", ["file"], indirect=True)
def test_a_session_opened_before_a_move_follows_it(brain: Installed, passphrase: str) -> None:
    """A TUI or an MCP server keeps its session open: after a move in another process (the old
    items gone), its next signature loads the key from the keystore the brain records now."""
    require_keychain()
    from aimos.actions import memory
    from aimos.actions.session import open_brain

    with open_brain(write=True) as session:
        assert session.keystore.kind == "file"
        move("os").json()
        assert not brain.key_dir.exists()
        saved = memory.save(session, "cli", memory.NewMemory("saved by a session opened before the move"))
        assert saved.memory_id
        assert session.keystore.kind == "os" and session.meta["keystore"] == "os"
        assert session.master_with(passphrase).fingerprint
    run_aimos("verify").ok()
