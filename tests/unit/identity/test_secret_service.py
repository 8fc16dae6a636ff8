"""The OS keychain reached without keyring's start-up (aimos/identity/secret_service.py): here it is
the backend keyring's own detection picks, it keeps items exactly as keyring's SecretService
backend does (each reads what the other wrote), and anything that could make keyring choose
otherwise (a backend named by the environment or a config file, a plugin, a KEYRING_PROPERTY_
setting, no Secret Service) leaves the choice to keyring, whose refusals stay the same."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Protocol

import pytest
from support.cli import require_keychain

from aimos.errors import KeychainError
from aimos.identity import secret_service
from aimos.identity.keystore import OsKeystore
from aimos.identity.secret_service import KEYRING_APPID, SecretServiceItems, direct_backend

pytestmark = pytest.mark.keychain


class PasswordBackend(Protocol):
    """The part of a keyring backend the test calls (keyring's backends are not annotated)."""

    def get_password(self, service: str, username: str) -> str | None: ...

    def set_password(self, service: str, username: str, password: str) -> None: ...


@pytest.fixture
def keyring_module() -> Iterator[object]:
    keyring = require_keychain()
    yield keyring
    keyring.core.init_backend()  # keyring detects afresh for the next test


def _brain_id() -> str:
    return f"secret-service-test-{os.getpid()}"


def test_keyring_itself_picks_the_secret_service_here(keyring_module: object) -> None:
    import keyring

    assert direct_backend() is not None, "this session should take the direct path"
    keyring.core.init_backend()  # keyring's own detection: env, config, every plugin, priorities
    picked = keyring.get_keyring()
    assert f"{type(picked).__module__}.{type(picked).__name__}" == SecretServiceItems.name
    assert OsKeystore(_brain_id()).describe() == (
        f"os keychain ({SecretServiceItems.name}), service aimos:{_brain_id()}"
    )


def test_items_are_keyrings_both_ways(keyring_module: object) -> None:
    import keyring.backends.SecretService
    import secretstorage

    backend: Callable[[], PasswordBackend] = keyring.backends.SecretService.Keyring
    theirs = backend()
    store = OsKeystore(_brain_id())
    try:
        store.put("ours", "written by aimos")
        assert theirs.get_password(store.service, "ours") == "written by aimos"
        theirs.set_password(store.service, "theirs", "written by keyring")
        assert store.get("theirs") == "written by keyring"
        with closing(secretstorage.dbus_init()) as connection:
            collection = secretstorage.get_default_collection(connection)
            found = {}
            for name in ("ours", "theirs"):
                query = {"service": store.service, "username": name}
                found[name] = [(i.get_label(), i.get_attributes()) for i in collection.search_items(query)]
        for name in ("ours", "theirs"):
            [(label, attributes)] = found[name]
            assert label == f"Password for '{name}' on '{store.service}'"
            wanted = {"username": name, "service": store.service, "application": KEYRING_APPID}
            assert attributes.items() >= wanted.items(), found
        # the same attributes either way; the Secret Service may add its own `xdg:schema` to an
        # item (gnome-keyring was once seen adding it to one of the two under a parallel run), so
        # what is compared is what the writers set
        ours, theirs_attributes = (
            {k: v for k, v in found[n][0][1].items() if k != "xdg:schema"} for n in found
        )
        assert {**ours, "username": "theirs"} == theirs_attributes
        store.replace("theirs", "replaced by aimos")
        assert theirs.get_password(store.service, "theirs") == "replaced by aimos"
        assert store.find("absent") is None
    finally:
        assert store.delete("ours") and store.delete("theirs")
    assert theirs.get_password(store.service, "theirs") is None
    assert store.delete("theirs") is False


@pytest.mark.parametrize("setting", ["PYTHON_KEYRING_BACKEND", "KEYRING_PROPERTY_SCHEME", "config"])
def test_a_backend_named_elsewhere_is_keyrings_choice(
    keyring_module: object, setting: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plaintext or null keychain named by the environment or keyring's config file is still
    found and refused: the direct path never stands in for a backend the user named."""
    import keyring

    null = "keyring.backends.null.Keyring"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    if setting == "config":
        (tmp_path / "python_keyring").mkdir()
        (tmp_path / "python_keyring" / "keyringrc.cfg").write_text(f"[backend]\ndefault-keyring={null}\n")
    elif setting == "PYTHON_KEYRING_BACKEND":
        monkeypatch.setenv(setting, null)
    else:
        monkeypatch.setenv(setting, "KeePassXC")
    try:
        assert direct_backend() is None
        keyring.core.init_backend()
        if setting != "KEYRING_PROPERTY_SCHEME":
            with pytest.raises(KeychainError) as refused:
                OsKeystore(_brain_id()).find("x")
            assert refused.value.message == f"keyring chose {null}, which is not an OS keychain"
    finally:
        monkeypatch.undo()  # then keyring detects afresh, without the setting
        keyring.core.init_backend()


def test_a_keyring_plugin_leaves_the_choice_to_keyring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugin = tmp_path / "keyrings_example-1.0.dist-info"
    plugin.mkdir()
    (plugin / "entry_points.txt").write_text("[keyring.backends]\nexample = keyrings_example.backend\n")
    other = tmp_path / "unrelated-2.0.dist-info"
    other.mkdir()
    (other / "entry_points.txt").write_text("[console_scripts]\nunrelated = unrelated:main\n")
    secret_service._only_keyrings_own_backends.cache_clear()
    try:
        assert secret_service._only_keyrings_own_backends()
        monkeypatch.syspath_prepend(str(tmp_path))
        secret_service._only_keyrings_own_backends.cache_clear()
        assert not secret_service._only_keyrings_own_backends()
        assert not secret_service.keyring_would_pick_secret_service({})
    finally:
        monkeypatch.undo()
        secret_service._only_keyrings_own_backends.cache_clear()


def test_no_secret_service_is_refused_as_keyring_refuses_it(tmp_path: Path) -> None:
    """No session bus: keyring's detection ends on its fail backend, refused as before."""
    env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=f"unix:path={tmp_path}/no-bus")
    probe = (
        "from aimos.identity.keystore import OsKeystore\n"
        "from aimos.identity.secret_service import direct_backend\n"
        "from aimos.errors import KeychainError\n"
        "assert direct_backend() is None\n"
        "try:\n    OsKeystore('b').find('x')\nexcept KeychainError as e:\n    print(e.message)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "keyring chose keyring.backends.fail.Keyring, which is not an OS keychain"
