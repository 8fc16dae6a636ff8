"""Helpers for the key-management tests: an installed brain, what its keystores hold, which
passphrase opens its master, and an `aimos` subprocess killed (or failed) at a named step.

The step hook is a `sitecustomize.py` put first on the subprocess's PYTHONPATH: it replaces
`aimos.actions.keys.after_step` (the seam the passphrase change and the keystore move call after
each step) with one that SIGKILLs the process, or raises a KeychainError, at the step named by
AIMOS_TEST_KILL_AT / AIMOS_TEST_FAIL_AT. aimos itself reads neither variable.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from support.cli import (
    BRAIN,
    PASSPHRASE_ENV,
    Result,
    require_keychain,
    run_aimos,
    sqlite_value,
)

HOOK = '''
"""Test hook (tests/keys): kill or fail `aimos` after a named key-management step."""
import os

_KILL = os.environ.get("AIMOS_TEST_KILL_AT")
_FAIL = os.environ.get("AIMOS_TEST_FAIL_AT")

if _KILL or _FAIL:
    import signal

    from aimos.actions import keys

    def after_step(name):
        if name == _KILL:
            os.kill(os.getpid(), signal.SIGKILL)
        if name == _FAIL:
            from aimos.errors import KeychainError

            raise KeychainError(f"injected failure after step {name}")

    keys.after_step = after_step
'''

KILLED = -9


@dataclass
class Installed:
    home: Path
    kind: str
    brain_id: str

    def forget_keys(self) -> None:
        """Remove every Secret Service item of this brain (the test keyring is kept on disk)."""
        with contextlib.suppress(Exception):  # no Secret Service in this session: nothing stored
            from support.installer import delete_keychain_service

            delete_keychain_service(f"aimos:{self.brain_id}")

    @property
    def key_dir(self) -> Path:
        return self.home / "state" / "keys" / self.brain_id

    def recorded_kind(self) -> str:
        """The keystore the brain records now: the newest keystore.N row of brain_meta, else keystore."""
        rows = sqlite_value(
            self.home / BRAIN, "SELECT key || '=' || value FROM brain_meta WHERE key LIKE 'keystore%'"
        ).splitlines()
        kinds = {key: value for key, _, value in (row.partition("=") for row in rows)}
        moves = sorted((int(k.split(".")[1]), v) for k, v in kinds.items() if "." in k)
        return moves[-1][1] if moves else kinds["keystore"]

    def items(self, kind: str) -> set[str]:
        """The item names this brain has in the ``kind`` keystore."""
        if kind == "file":
            if not self.key_dir.exists():
                return set()
            return {p.name.removesuffix(".key") for p in self.key_dir.iterdir() if p.name.endswith(".key")}
        import secretstorage

        conn = secretstorage.dbus_init()
        try:
            found = secretstorage.search_items(conn, {"service": f"aimos:{self.brain_id}"})
            return {item.get_attributes()["username"] for item in found}
        finally:
            conn.close()

    def keystore(self, kind: str | None = None):  # type: ignore[no-untyped-def]
        from aimos.identity.keystore import FileKeystore, OsKeystore

        kind = kind or self.recorded_kind()
        return FileKeystore(self.brain_id, self.key_dir) if kind == "file" else OsKeystore(self.brain_id)

    def opens(self, passphrase: str) -> bool:
        """Whether ``passphrase`` opens the master, read as aimos reads it (in this process)."""
        from aimos.errors import PassphraseError
        from aimos.identity.master import unlock_master
        from aimos.store.connection import open_reader

        conn = open_reader(self.home / BRAIN)
        try:
            unlock_master(conn, self.keystore(), passphrase)
            return True
        except PassphraseError as exc:
            assert exc.message == "wrong master passphrase", exc.message
            return False
        finally:
            conn.close()

    def events(self, operation: str) -> int:
        return int(
            sqlite_value(self.home / BRAIN, f"SELECT COUNT(*) FROM events WHERE operation = '{operation}'")
        )


def install_brain(home: Path, kind: str, passphrase: str) -> Installed:
    if kind == "os":
        require_keychain()
    run_aimos(
        "install", "--yes", "--no-guides", "--keystore", kind, "--service", "none", unset=("AIMOS_KEYSTORE",)
    ).ok()
    brain_id = sqlite_value(home / BRAIN, "SELECT value FROM brain_meta WHERE key = 'brain_id'")
    return Installed(home, kind, brain_id)


def passphrase_file(home: Path, passphrase: str) -> dict[str, str]:
    """The environment that gives ``passphrase`` through AIMOS_PASSPHRASE_FILE (a 0600 file)."""
    path = home.parent / f"passphrase-{abs(hash(passphrase))}"
    path.write_text(passphrase + "\n")
    path.chmod(0o600)
    return {PASSPHRASE_ENV: str(path)}


def with_fd(
    text: str, *args: str, env: dict[str, str] | None = None, fd_flags: tuple[str, ...] = ()
) -> Result:
    """`aimos ARGS FD_FLAGS N` with ``text`` on a pipe N (each flag in ``fd_flags`` gets N), and no
    AIMOS_PASSPHRASE_FILE."""
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, text.encode())
        os.close(write_end)
        write_end = -1
        flags = [part for flag in fd_flags for part in (flag, str(read_end))]
        return run_aimos(*args, *flags, env=env, pass_fds=(read_end,), unset=(PASSPHRASE_ENV,), timeout=120)
    finally:
        os.close(read_end)
        if write_end != -1:
            os.close(write_end)


def change(old: str, new: str, env: dict[str, str] | None = None) -> Result:
    """`aimos passphrase change` with both passphrases as two lines on one descriptor."""
    return with_fd(
        f"{old}\n{new}\n",
        "passphrase",
        "change",
        env=env,
        fd_flags=("--passphrase-fd", "--new-passphrase-fd"),
    )


class StepHook:
    """The sitecustomize hook in a folder of its own; ``env`` kills or fails an `aimos` at a step."""

    def __init__(self, root: Path) -> None:
        self.dir = root / "stephook"
        self.dir.mkdir()
        (self.dir / "sitecustomize.py").write_text(HOOK, encoding="utf-8")

    def env(self, *, kill_at: str | None = None, fail_at: str | None = None) -> dict[str, str]:
        path = [str(self.dir), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
        env = {"PYTHONPATH": os.pathsep.join(path)}
        if kill_at:
            env["AIMOS_TEST_KILL_AT"] = kill_at
        if fail_at:
            env["AIMOS_TEST_FAIL_AT"] = fail_at
        return env
