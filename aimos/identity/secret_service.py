"""The Secret Service (the freedesktop.org keychain on Linux) reached without keyring's start-up:
when keyring would choose its SecretService backend, aimos keeps its items exactly as that backend
does, through secretstorage alone.

How keyring (25) chooses a backend, when asked first in a process: the one PYTHON_KEYRING_BACKEND
names; else the one keyringrc.cfg in its config folder names; else, of every backend it knows
(its own and those plugins add through the ``keyring.backends`` entry points, found by scanning
the metadata of every installed package), the viable one of highest priority, where its chainer
outranks all (10) once two others are viable. On Linux its own are SecretService (5, viable when
the Secret Service runs or can be started on the session bus), libsecret (4.8, needs PyGObject),
KWallet (needs dbus-python), macOS and Windows (never viable here) and fail (0, the "no keychain"
backend aimos refuses). Importing and scanning all that costs a cold command about a tenth of a
second (keyring's own imports, every installed package's entry points, the macOS backend's
library search, a D-Bus connection per priority asked).

So, on Linux, with no backend named by the environment or a config file, no keyring plugin
installed, neither PyGObject nor dbus-python importable and no KEYRING_PROPERTY_* setting (which
would change how items are named or where they go), keyring's choice is SecretService when the
Secret Service answers, and :func:`direct_backend` returns :class:`SecretServiceItems` then;
in every other case it returns None and keyring decides, as it always did.
tests/unit/identity/test_secret_service.py holds this to keyring's own detection and to its
SecretService backend's items, both ways.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

# what keyring's SecretService backend names itself and writes into every item it stores
KEYRING_BACKEND_NAME = "keyring.backends.SecretService.Keyring"
KEYRING_APPID = "Python keyring library"
_PLUGIN_GROUP = "keyring.backends"


class InitError(Exception):
    """The keychain's default collection could not be opened (keyring's error of that name)."""


class KeyringLocked(Exception):
    """The collection or the item stayed locked: its unlock prompt was dismissed or could not be
    shown (keyring's error of that name)."""


def _keyring_config(environ: os._Environ[str] | dict[str, str]) -> Path:
    """keyringrc.cfg where keyring looks for it on Linux (its config root: XDG_CONFIG_HOME or
    ~/.config, then python_keyring)."""
    root = environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(root, "python_keyring", "keyringrc.cfg")


@functools.cache
def _only_keyrings_own_backends() -> bool:
    """No installed package but keyring itself declares ``keyring.backends`` entry points, and
    neither PyGObject (keyring's libsecret backend) nor dbus-python (its KWallet backends) can be
    imported: keyring's candidates here are then its own SecretService and fail backends. Read
    from the metadata folders on sys.path (a zip on it, which may hold packages: not known, False)."""
    if importlib.util.find_spec("gi") is not None or importlib.util.find_spec("dbus") is not None:
        return False
    for entry in sys.path:
        folder = Path(entry or ".")
        if folder.is_file():
            return False
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")) or name.split("-")[0].lower() == "keyring":
                continue
            try:
                declared = (folder / name / "entry_points.txt").read_text("utf-8", errors="replace")
            except OSError:
                continue
            if _PLUGIN_GROUP in declared:
                return False
    return True


def keyring_would_pick_secret_service(environ: os._Environ[str] | dict[str, str] | None = None) -> bool:
    """Whether keyring's choice here depends on nothing but the Secret Service answering: then it
    is its SecretService backend if the service answers, its fail backend if not."""
    environ = os.environ if environ is None else environ
    return (
        sys.platform.startswith("linux")
        and "PYTHON_KEYRING_BACKEND" not in environ
        and not any(name.startswith("KEYRING_PROPERTY_") for name in environ)
        and not _keyring_config(environ).exists()
        and _only_keyrings_own_backends()
    )


@functools.cache
def _service_answers() -> bool:
    """Whether the Secret Service runs or can be started on the session bus (keyring's test of its
    SecretService backend's viability), asked once per process as keyring asks it once."""
    try:
        import secretstorage
    except ImportError:
        return False
    if secretstorage.__version_tuple__ < (3, 2):
        return False
    try:
        with closing(secretstorage.dbus_init()) as connection:
            return bool(secretstorage.check_service_availability(connection))
    except Exception:  # no bus, or the bus answered with an error: as keyring, not viable
        return False


def direct_backend() -> SecretServiceItems | None:
    """The Secret Service, when it is keyring's choice here and answers; None when keyring must
    choose (see the module's doc)."""
    if keyring_would_pick_secret_service() and _service_answers():
        return SecretServiceItems()
    return None


class SecretServiceItems:
    """Items kept as keyring's SecretService backend keeps them, so either reads what the other
    wrote: in the default collection, found by the attributes ``username`` (aimos's item name) and
    ``service`` (``aimos:<brain_id>``), stored with ``application`` set to keyring's and labelled
    ``Password for '<username>' on '<service>'``; a locked collection or item is unlocked first
    (the desktop's prompt), and stays locked only when the prompt is dismissed (KeyringLocked).
    Each call opens its own connection to the session bus and closes it, as keyring's does."""

    name = KEYRING_BACKEND_NAME

    def _collection(self, connection: Any) -> Any:
        import secretstorage

        try:
            collection = secretstorage.get_default_collection(connection)
        except secretstorage.exceptions.SecretStorageException as exc:
            raise InitError(f"Failed to create the collection: {exc}.") from exc
        if collection.is_locked():
            collection.unlock()
            if collection.is_locked():
                raise KeyringLocked("Failed to unlock the collection!")
        return collection

    def _first_item(self, collection: Any, service: str, username: str) -> Any | None:
        return next(iter(collection.search_items({"username": username, "service": service})), None)

    def get_password(self, service: str, username: str) -> str | None:
        import secretstorage

        with closing(secretstorage.dbus_init()) as connection:
            item = self._first_item(self._collection(connection), service, username)
            if item is None:
                return None
            item.unlock()
            if item.is_locked():
                raise KeyringLocked("Failed to unlock the item!")
            return str(item.get_secret().decode("utf-8"))

    def set_password(self, service: str, username: str, password: str) -> None:
        import secretstorage

        attributes = {"username": username, "service": service, "application": KEYRING_APPID}
        label = f"Password for '{username}' on '{service}'"
        with closing(secretstorage.dbus_init()) as connection:
            self._collection(connection).create_item(label, attributes, password, replace=True)

    def delete(self, service: str, username: str) -> bool:
        """Delete the item (the first one found); False when there is none."""
        import secretstorage

        with closing(secretstorage.dbus_init()) as connection:
            item = self._first_item(self._collection(connection), service, username)
            if item is None:
                return False
            item.delete()
            return True
