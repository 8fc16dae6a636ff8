"""Where secrets live: the OS keychain through ``keyring``, or aimos's own file keystore.

One item per identity epoch, service ``aimos:<brain_id>``. keyring's plaintext and null
backends are refused. Secrets never appear in an error message. A locked OS keychain (one whose
unlock prompt could not be shown or was dismissed) is its own error, saying how to unlock it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from aimos import paths
from aimos.errors import KeychainError, KeychainLockedError, NoKeychainError, UsageError
from aimos.identity.secret_service import KeyringLocked as SecretServiceLocked
from aimos.identity.secret_service import SecretServiceItems
from aimos.plural import plural

KEYSTORE_CHOICES = ("os", "file", "auto")
_REFUSED_BACKEND_MODULES = ("keyring.backends.fail", "keyring.backends.null", "keyrings.alt")


class Keystore(Protocol):
    @property
    def kind(self) -> str: ...

    def put(self, name: str, secret: str) -> None: ...

    def replace(self, name: str, secret: str) -> None: ...

    def get(self, name: str) -> str: ...

    def find(self, name: str) -> str | None: ...

    def delete(self, name: str) -> bool: ...

    def describe(self) -> str: ...


def service_name(brain_id: str) -> str:
    return f"aimos:{brain_id}"


def _check_item_name(name: str) -> None:
    if not name or "/" in name or name.startswith(".") or len(name) > 200:
        raise UsageError(f"invalid keystore item name {name!r}")


class OsKeystore:
    """The OS keychain (Secret Service, macOS Keychain, Windows Credential Locker)."""

    kind = "os"

    def __init__(self, brain_id: str):
        self.service = service_name(brain_id)

    def _backend(self) -> Any:
        """keyring's choice of keychain: the Secret Service straight away where that is its choice
        whatever else (identity/secret_service.py), else keyring's own detection."""
        from aimos.identity.secret_service import direct_backend

        direct = direct_backend()
        if direct is not None:
            return direct
        import keyring

        backend = keyring.get_keyring()
        module = type(backend).__module__
        if (
            any(module.startswith(m) for m in _REFUSED_BACKEND_MODULES)
            or "Plaintext" in type(backend).__name__
        ):
            raise NoKeychainError(f"keyring chose {_backend_name(backend)}, which is not an OS keychain")
        return backend

    def _call(self, what: str, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except KeychainError:
            raise
        except Exception as exc:  # keyring raises many backend-specific types
            raise _failure(what, exc) from None

    def put(self, name: str, secret: str) -> None:
        """Store a new item (the keychain replaces one of the same name in one call)."""
        _check_item_name(name)
        backend = self._backend()
        self._call("store a secret", backend.set_password, self.service, name, secret)

    def replace(self, name: str, secret: str) -> None:
        """Overwrite an item in one keychain call (Secret Service: CreateItem with replace)."""
        self.put(name, secret)

    def find(self, name: str) -> str | None:
        _check_item_name(name)
        backend = self._backend()
        value = self._call("read a secret", backend.get_password, self.service, name)
        return None if value is None else str(value)

    def get(self, name: str) -> str:
        value = self.find(name)
        if value is None:
            raise KeychainError(
                f"the OS keychain has no item {name!r} for {self.service}",
                "The brain's keys are missing from this keychain: restore them or reinstall.",
            )
        return value

    def delete(self, name: str) -> bool:
        _check_item_name(name)
        backend = self._backend()
        if isinstance(backend, SecretServiceItems):
            return bool(self._call("delete an item", backend.delete, self.service, name))
        import keyring.errors

        try:
            backend.delete_password(self.service, name)
            return True
        except keyring.errors.PasswordDeleteError:
            return False
        except Exception as exc:
            raise _failure("delete an item", exc) from None

    def describe(self) -> str:
        try:
            return f"os keychain ({_backend_name(self._backend())}), service {self.service}"
        except KeychainError:
            return f"os keychain (unavailable), service {self.service}"


def _backend_name(backend: Any) -> str:
    if isinstance(backend, SecretServiceItems):
        return backend.name
    return f"{type(backend).__module__}.{type(backend).__name__}"


def _is_locked(exc: BaseException) -> bool:
    """keyring's KeyringLocked, or secret_service's (the Secret Service collection stayed locked:
    its unlock prompt could not be shown or was dismissed; macOS: access denied), or
    secretstorage's LockedException when the collection locks between the check and the call."""
    if isinstance(exc, SecretServiceLocked):
        return True
    kind = type(exc)
    if kind.__name__ == "LockedException" and kind.__module__.startswith("secretstorage"):
        return True
    if "keyring" not in sys.modules:  # keyring's error can come only from keyring
        return False
    import keyring.errors

    return isinstance(exc, keyring.errors.KeyringLocked)


def _failure(what: str, exc: BaseException) -> KeychainError:
    if _is_locked(exc):
        return KeychainLockedError(f"the OS keychain is locked (it could not {what})")
    return KeychainError(f"the OS keychain failed to {what} ({type(exc).__name__})")


class FileKeystore:
    """aimos's own keystore: one 0600 file per secret in a 0700 directory of the state dir."""

    kind = "file"

    def __init__(self, brain_id: str, directory: Path | None = None):
        self.directory = directory or paths.keystore_dir(brain_id)

    def _path(self, name: str) -> Path:
        _check_item_name(name)
        return self.directory / f"{name}.key"

    def put(self, name: str, secret: str) -> None:
        path = self._path(name)
        paths.ensure_private_dir(self.directory)
        if path.exists():
            raise KeychainError(f"keystore item {name!r} already exists", "Nothing was overwritten.")
        paths.write_private_file(path, secret.encode("utf-8"))

    def replace(self, name: str, secret: str) -> None:
        """Overwrite an item atomically: a 0600 temporary file, fsync, rename over the item, fsync
        of the folder. A kill leaves the old bytes or the new, never a part."""
        path = self._path(name)
        paths.ensure_private_dir(self.directory)
        paths.write_private_file(path, secret.encode("utf-8"))

    def find(self, name: str) -> str | None:
        path = self._path(name)
        try:
            st = path.stat()
        except FileNotFoundError:
            return None
        if st.st_mode & 0o077:
            raise KeychainError(
                f"keystore file {path} is readable by other users",
                f"Run `chmod 600 {path}` (and check who could have read it).",
            )
        return path.read_text("utf-8")

    def get(self, name: str) -> str:
        value = self.find(name)
        if value is None:
            raise KeychainError(
                f"the file keystore has no item {name!r}",
                f"Expected {self._path(name)}: restore the keystore folder or reinstall.",
            )
        return value

    def delete(self, name: str) -> bool:
        path = self._path(name)
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise KeychainError(
                f"could not remove keystore file {path} ({exc.strerror})",
                f"Remove it by hand: rm {path}",
            ) from None
        return True

    def describe(self) -> str:
        return f"file keystore at {self.directory}"


def os_keychain_problem() -> KeychainError | None:
    """None when the OS keychain stores, reads and deletes a probe item; else the error saying why
    not (a KeychainLockedError when it is locked)."""
    import secrets  # (and random with it: only the probe needs them)

    probe = OsKeystore("probe")
    name = f"probe-{secrets.token_hex(8)}"
    value = secrets.token_urlsafe(16)
    try:
        probe.put(name, value)
        ok = probe.get(name) == value
        probe.delete(name)
    except KeychainError as exc:
        return exc
    return None if ok else KeychainError("the OS keychain returned a different value than it stored")


def probe_os_keychain() -> str | None:
    """None when the OS keychain stores, reads and deletes a probe item; else why not."""
    problem = os_keychain_problem()
    return None if problem is None else problem.message


def require_os_keychain() -> None:
    """Refuse (KeychainLockedError, or KeychainError with the file keystore as the way out) when the
    OS keychain does not store, read and delete a probe item."""
    problem = os_keychain_problem()
    if isinstance(problem, KeychainLockedError):
        raise problem
    if problem is not None:
        raise KeychainError(
            f"no OS keychain is reachable: {problem.message}",
            "Check that the desktop session's keyring (Secret Service, macOS Keychain) runs; "
            "on a headless machine keep aimos's own file keystore.",
        )


class CachedKeystore:
    """A keystore whose reads are kept for the life of this object: an MCP server's process reads
    each epoch's key from the keychain once, not at every call. Safe because an item is named by
    its epoch (agent and valid_from) and never changes while it exists; revocation still bites at
    once, since every request is checked against the brain's epochs before a key is used, and a
    rotation makes a new item. A write or delete through it forgets what it kept of that item."""

    def __init__(self, inner: Keystore):
        self.inner = inner
        self._read: dict[str, str] = {}

    @property
    def kind(self) -> str:
        return self.inner.kind

    def put(self, name: str, secret: str) -> None:
        self._read.pop(name, None)
        self.inner.put(name, secret)

    def replace(self, name: str, secret: str) -> None:
        self._read.pop(name, None)
        self.inner.replace(name, secret)

    def get(self, name: str) -> str:
        if name not in self._read:
            self._read[name] = self.inner.get(name)
        return self._read[name]

    def find(self, name: str) -> str | None:
        if name in self._read:
            return self._read[name]
        found = self.inner.find(name)
        if found is not None:
            self._read[name] = found
        return found

    def delete(self, name: str) -> bool:
        self._read.pop(name, None)
        return self.inner.delete(name)

    def describe(self) -> str:
        return f"{self.inner.describe()} (reads kept for this process)"

    def __repr__(self) -> str:  # never the secrets it holds
        return f"CachedKeystore({self.inner.kind}, {plural(len(self._read), 'item')} kept)"


class KeystoreCache:
    """One CachedKeystore per keystore (kind and brain) for the life of this object (an MCP
    server's ``--no-key-cache`` leaves it out)."""

    def __init__(self) -> None:
        self._stores: dict[tuple[str, str], CachedKeystore] = {}

    def open(self, kind: str, brain_id: str) -> Keystore:
        key = (kind, brain_id)
        if key not in self._stores:
            self._stores[key] = CachedKeystore(open_keystore(kind, brain_id))
        return self._stores[key]


def holds(keystore: Keystore, name: str) -> bool:
    """Whether the keystore has the item, reading as little of it as it can: a file keystore's item
    is looked at (its file is there), never opened; the OS keychain can only be asked for the
    secret, whose value is dropped at once. Raises KeychainError when the keystore does not answer
    (KeychainLockedError when it is locked)."""
    inner = keystore.inner if isinstance(keystore, CachedKeystore) else keystore
    if isinstance(inner, FileKeystore):
        return inner._path(name).is_file()
    return inner.find(name) is not None


def open_keystore(kind: str, brain_id: str) -> Keystore:
    if kind == "os":
        return OsKeystore(brain_id)
    if kind == "file":
        return FileKeystore(brain_id)
    raise UsageError(f"unknown keystore kind {kind!r}", "Use --keystore os, file or auto.")


@dataclass(frozen=True)
class KeystoreChoice:
    """Where a new brain's keys will live, settled before anything is asked or created."""

    kind: str  # os | file
    note: str  # what `aimos install` prints after "keystore: "
    stands_in: str | None = None  # why no OS keychain can be used, when the file keystore stands in for it


def settle_keystore(choice: str | None) -> KeystoreChoice:
    """Settle the keystore for a new brain: ``file`` as chosen; ``os`` only when the OS keychain
    stores, reads and deletes a probe item (else refused, saying the fix); no choice (the default)
    and ``auto`` take the OS keychain when it answers and the file keystore when there is none. A
    locked keychain is one the person has: the default refuses then (unlock it, or choose file)."""
    if choice not in (None, *KEYSTORE_CHOICES):
        raise UsageError(f"unknown keystore {choice!r}", "Use --keystore os, file or auto.")
    if choice == "file":
        return KeystoreChoice("file", "file keystore (chosen with --keystore file)")
    problem = os_keychain_problem()
    if problem is None:
        return KeystoreChoice("os", "OS keychain")
    locked = isinstance(problem, KeychainLockedError)
    # the default stands the file keystore in only where there is no keychain at all: one that is
    # there but fails (locked, no default collection, its prompt dismissed) is the person's to fix,
    # and keys quietly kept in files instead would be weaker than they think
    if choice == "auto" or (choice is None and isinstance(problem, NoKeychainError)):
        why = problem.message if locked else f"no OS keychain answered: {problem.message}"
        return KeystoreChoice("file", f"file keystore ({why})", stands_in=problem.message)
    if choice is None and not locked:
        raise KeychainError(
            f"the OS keychain is here but did not work: {problem.message}",
            "Fix it (log in to the desktop session so its keyring can create and unlock its default "
            "collection) and run `aimos install` again, or choose aimos's own file keystore with "
            "`--keystore file`.",
        )
    if locked:
        raise KeychainLockedError(
            problem.message,
            f"{problem.hint} Or install with `--keystore file` (aimos's own 0600 file keystore).",
        )
    raise KeychainError(
        f"no OS keychain is reachable: {problem.message}",
        "On a headless machine leave --keystore out (aimos then uses its own 0600 file keystore) or "
        "give `--keystore file`; on a desktop, unlock the login keychain and try again.",
    )


def file_keystore_means() -> str:
    """What keeping a brain's keys in the file keystore means for them, in plain words (said when
    it stands in for an OS keychain that is not there)."""
    return (
        f"aimos keeps this brain's keys in its own file keystore: one file per key under "
        f"{paths.state_dir() / 'keys'}, readable by your user account only (files 0600, folders 0700).\n"
        "- The master key is sealed with your master passphrase, as it would be in an OS keychain: "
        "a copy of its file is of no use without the passphrase.\n"
        "- The keys of your agents and of the housekeeper are protected by those file permissions "
        "alone: whoever can read your files (root, a program running as you, a copy in a backup) "
        "can sign as your agents. An OS keychain would also keep them encrypted on disk.\n"
        "Once an OS keychain is there, move the keys into it with `aimos keystore move --to os`."
    )


def choose_keystore(choice: str | None, brain_id: str) -> tuple[Keystore, str]:
    """Pick the keystore for a new brain (see settle_keystore); returns it and a sentence saying why."""
    settled = settle_keystore(choice)
    return open_keystore(settled.kind, brain_id), settled.note


def keystore_env_override() -> str | None:
    value = os.environ.get("AIMOS_KEYSTORE")
    return value or None
