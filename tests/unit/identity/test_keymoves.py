"""The pieces under `aimos passphrase change` and `aimos keystore move` (the end-to-end tests are in
tests/keys): a locked keychain mapped to its own error, the file keystore's atomic replace, the
brain's keystore read newest-wins from brain_meta, and a cut-off passphrase change settled."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import keyring.errors
import pytest

from aimos.errors import KeychainError, KeychainLockedError, PassphraseSourceError
from aimos.identity import keymoves
from aimos.identity.keystore import FileKeystore, OsKeystore, choose_keystore
from aimos.identity.master import MASTER_ITEM, MASTER_PENDING_ITEM, sealed_master
from aimos.identity.passphrase import read_old_and_new_from_fd, unseal
from aimos.store.connection import write_transaction
from aimos.store.meta import brain_meta, record_keystore_kind


class _Backend:
    """A keyring backend whose every call raises ``error`` (not a refused backend module)."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def set_password(self, *args: Any) -> None:
        raise self.error

    def get_password(self, *args: Any) -> None:
        raise self.error

    def delete_password(self, *args: Any) -> None:
        raise self.error


def _keyring_backend(monkeypatch: pytest.MonkeyPatch, backend: _Backend) -> None:
    """keyring's choice is ``backend``: named by the environment, so the keychain is keyring's to
    choose (identity/secret_service.py), and keyring answers with this one."""
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    monkeypatch.setattr(keyring, "get_keyring", lambda: backend)


def _locked_exception() -> BaseException:
    """An exception of the class secretstorage raises for a locked collection."""
    kind: type[Exception] = type("LockedException", (Exception,), {"__module__": "secretstorage.exceptions"})
    return kind("collection is locked")


@pytest.mark.parametrize(
    "error", [keyring.errors.KeyringLocked("Failed to unlock the collection!"), _locked_exception()]
)
def test_a_locked_keychain_is_reported_as_locked(
    monkeypatch: pytest.MonkeyPatch, error: BaseException
) -> None:
    _keyring_backend(monkeypatch, _Backend(error))
    store = OsKeystore("brain-x")
    for call in (lambda: store.get("master"), lambda: store.put("x", "y"), lambda: store.delete("x")):
        with pytest.raises(KeychainLockedError) as raised:
            call()
        assert raised.value.message.startswith("the OS keychain is locked")
        assert "Seahorse" in raised.value.hint and "--unlock" in raised.value.hint
    with pytest.raises(KeychainLockedError, match="locked") as refused:
        choose_keystore("os", "brain-x")
    assert "--keystore file" in refused.value.hint
    chosen, note = choose_keystore("auto", "brain-x")
    assert chosen.kind == "file" and "locked" in note and "no OS keychain answered" not in note


def test_another_keychain_failure_is_not_called_locked(monkeypatch: pytest.MonkeyPatch) -> None:
    _keyring_backend(monkeypatch, _Backend(RuntimeError("dbus gone")))
    with pytest.raises(KeychainError) as raised:
        OsKeystore("brain-x").get("master")
    assert not isinstance(raised.value, KeychainLockedError)
    assert "failed to read a secret (RuntimeError)" in raised.value.message


def test_file_keystore_replace_is_a_rename_and_find_says_absent(tmp_path: Path) -> None:
    store = FileKeystore("b", tmp_path / "keys")
    assert store.find("x") is None
    store.put("x", "one")
    with pytest.raises(KeychainError, match="already exists"):
        store.put("x", "two")
    store.replace("x", "two")
    assert store.get("x") == "two"
    assert (tmp_path / "keys" / "x.key").stat().st_mode & 0o777 == 0o600
    assert [p.name for p in (tmp_path / "keys").iterdir()] == ["x.key"]  # no temporary file left


def test_the_keystore_kind_is_the_newest_move(brain: Any) -> None:
    assert brain_meta(brain.conn)["keystore"] == "file"
    with write_transaction(brain.conn):
        assert record_keystore_kind(brain.conn, "os") == "keystore.2"
    assert brain_meta(brain.conn)["keystore"] == "os"
    with write_transaction(brain.conn):
        assert record_keystore_kind(brain.conn, "file") == "keystore.3"
    meta = brain_meta(brain.conn)
    assert meta["keystore"] == "file" and meta["keystore.2"] == "os"


def test_settle_a_cut_off_change(tmp_path: Path) -> None:
    store = FileKeystore("b", tmp_path / "keys")
    assert keymoves.settle_master(store) is None
    store.put(MASTER_ITEM, "old")
    store.put(MASTER_PENDING_ITEM, "new")
    assert sealed_master(store) == "old"  # the master item decides while it exists
    assert keymoves.settle_master(store) == "discarded"
    assert store.find(MASTER_PENDING_ITEM) is None and store.get(MASTER_ITEM) == "old"
    store.delete(MASTER_ITEM)
    store.put(MASTER_PENDING_ITEM, "new")
    assert sealed_master(store) == "new"  # cut off inside a delete-then-add replace
    assert keymoves.settle_master(store) == "completed"
    assert store.get(MASTER_ITEM) == "new" and store.find(MASTER_PENDING_ITEM) is None


def test_stage_and_switch(brain: Any) -> None:
    sealed = keymoves.stage_master(brain.keystore, brain.master, "a new passphrase")
    assert brain.keystore.get(MASTER_PENDING_ITEM) == sealed
    keymoves.switch_master(brain.keystore, sealed)
    keymoves.drop_staged(brain.keystore)
    assert unseal(brain.keystore.get(MASTER_ITEM), "a new passphrase") == brain.master.seed


def test_old_and_new_on_one_descriptor(tmp_path: Path) -> None:
    import os

    def fd_with(text: str) -> int:
        read_end, write_end = os.pipe()
        os.write(write_end, text.encode())
        os.close(write_end)
        return read_end

    assert read_old_and_new_from_fd(fd_with("old one\r\nnew passphrase\n")) == ("old one", "new passphrase")
    for bad in ("only one line\n", "a\nb\nc\n", "\nnew passphrase\n"):
        with pytest.raises(PassphraseSourceError, match="two lines"):
            read_old_and_new_from_fd(fd_with(bad))
