"""Helpers for the installer tests: the AIMOS_HOME tree as a comparable snapshot, the brain read
from outside (plain read-only apsw), the OS keychain read through Secret Service itself, live
housekeeper processes, event signatures checked by hand, and a real pseudo-terminal session.

Imported as a plain module (tests/ is not a package; conftest.py puts this folder on sys.path,
and tests/conftest.py puts tests/cli there for `support.cli`).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import pty
import re
import select
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw

from support.cli import BRAIN, PASSPHRASE_ENV, Result, run_aimos
from support.cli import keychain_problem as keychain_problem  # re-exported
from support.cli import require_keychain as require_keychain  # re-exported
from support.process import (  # re-exported for the suite's modules
    is_housekeeper as is_housekeeper,
)
from support.process import (
    kill_housekeeper as kill_housekeeper,
)
from support.process import (
    pid_alive as pid_alive,
)
from support.process import (
    read_pid_file as read_pid_file,
)
from support.process import (
    wait_for as wait_for,
)

__all__ = ["BRAIN", "PASSPHRASE_ENV", "Result", "run_aimos"]

REPO = Path(__file__).resolve().parents[2]
GUIDES = REPO / "aimos" / "installer" / "guides"
# What any aimos command may add to a home it refuses to touch: its one-line command log.
CLI_LOG = ("logs", "logs/aimos.log")


# --- the AIMOS_HOME tree -----------------------------------------------------------------------
def tree(home: Path, ignore: tuple[str, ...] = (), *, volatile: tuple[str, ...] = ()) -> dict[str, str]:
    """Every path under ``home`` (relative) -> 'dir', 'link -> target' or the file's sha256 and mode;
    ``volatile``: path prefixes left out unread (a running housekeeper's brain -shm comes and goes
    between the listing and the read)."""
    found: dict[str, str] = {}
    if not home.exists():
        return found
    for path in sorted(home.rglob("*")):
        rel = str(path.relative_to(home))
        if rel in ignore or (volatile and rel.startswith(volatile)):
            continue
        if path.is_symlink():
            found[rel] = f"link -> {os.readlink(path)}"
        elif path.is_dir():
            found[rel] = "dir"
        else:
            data = path.read_bytes()
            found[rel] = f"{hashlib.sha256(data).hexdigest()} {oct(path.stat().st_mode & 0o777)}"
    return found


def tree_diff(before: dict[str, str], after: dict[str, str]) -> str:
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    return f"added {added}, removed {removed}, changed {changed}"


def assert_tree_unchanged(home: Path, before: dict[str, str], ignore: tuple[str, ...] = ()) -> None:
    after = tree(home, ignore)
    before = {k: v for k, v in before.items() if k not in ignore}
    assert after == before, f"AIMOS_HOME changed: {tree_diff(before, after)}"


# --- the brain, read from outside ----------------------------------------------------------------
@contextlib.contextmanager
def read_only(path: Path) -> Iterator[apsw.Connection]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    conn.set_busy_timeout(10_000)  # a running housekeeper may be writing
    try:
        yield conn
    finally:
        conn.close()


def query(home: Path, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    with read_only(home / BRAIN) as conn:
        cursor = conn.execute(sql, params)
        try:
            names = [d[0] for d in cursor.getdescription()]
        except apsw.ExecutionCompleteError:
            return []
        return [dict(zip(names, row, strict=True)) for row in cursor]


def scalar(home: Path, sql: str, params: tuple[Any, ...] = ()) -> Any:
    rows = query(home, sql, params)
    assert rows, f"no row for {sql}"
    return next(iter(rows[0].values()))


def all_table_counts(home: Path) -> dict[str, int]:
    tables = [
        r["name"] for r in query(home, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    ]
    assert tables, "the brain has no tables"
    return {t: int(scalar(home, f'SELECT COUNT(*) FROM "{t}"')) for t in tables}


def brain_id_of(home: Path) -> str:
    return str(scalar(home, "SELECT value FROM brain_meta WHERE key = 'brain_id'"))


def b64u_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def event_signature_ok(home: Path, event: dict[str, Any]) -> bool:
    """An event checked by hand: its body's own fields, content hash, and the Ed25519 signature over
    `signed_body \\n nonce \\n ts_signed` with the signer epoch's public key (SPKI DER)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    epochs = query(
        home,
        "SELECT public_key_b64u FROM identity_epochs WHERE agent_id = ? AND valid_from = ?",
        (event["signer_agent_id"], event["signer_valid_from"]),
    )
    if len(epochs) != 1:
        return False
    body = json.loads(event["signed_body"])
    if (body["operation"], body["signer_agent_id"], body["event_id"], body["ts_signed"]) != (
        event["operation"],
        event["signer_agent_id"],
        event["event_id"],
        event["ts_signed"],
    ):
        return False
    if hashlib.sha256(event["signed_body"].encode("utf-8")).hexdigest() != event["content_hash"]:
        return False
    message = b"\n".join(
        [event["signed_body"].encode("utf-8"), event["nonce"].encode(), str(event["ts_signed"]).encode()]
    )
    key = serialization.load_der_public_key(b64u_decode(epochs[0]["public_key_b64u"]))
    if not isinstance(key, Ed25519PublicKey):
        return False
    try:
        key.verify(b64u_decode(event["signature_b64u"]), message)
    except Exception:
        return False
    return True


def keychain_usernames(service: str) -> set[str]:
    """The user names of every Secret Service item whose `service` attribute is ``service``
    (asked of Secret Service directly, the way keyring's backend files its items)."""
    import secretstorage

    conn = secretstorage.dbus_init()
    try:
        return {
            item.get_attributes().get("username", "?")
            for item in secretstorage.search_items(conn, {"service": service})
        }
    finally:
        conn.close()


def delete_keychain_service(service: str) -> None:
    """Remove every Secret Service item of ``service`` (test hygiene; the keyring is on disk)."""
    import secretstorage

    conn = secretstorage.dbus_init()
    try:
        for item in list(secretstorage.search_items(conn, {"service": service})):
            with contextlib.suppress(Exception):
                item.delete()
    finally:
        conn.close()


# --- processes -----------------------------------------------------------------------------------


class Reaper:
    """Housekeeper pids a test started or saw, and brain ids whose keychain items it made: at
    teardown (the `reaper` fixture) the pids are SIGKILLed and the items removed."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.pids: set[int] = set()
        self.brain_ids: set[str] = set()

    def watch(self, pid: int | None) -> None:
        if pid:
            self.pids.add(int(pid))

    def forget_keys_of(self, brain_id: str | None) -> None:
        if brain_id:
            self.brain_ids.add(brain_id)

    def finish(self) -> None:
        self.watch(read_pid_file(self.home))
        for pid in sorted(self.pids):
            kill_housekeeper(pid)
        for brain_id in sorted(self.brain_ids):
            # without a Secret Service in this session nothing was stored there
            with contextlib.suppress(Exception):
                delete_keychain_service(f"aimos:{brain_id}")


# --- a real pseudo-terminal ----------------------------------------------------------------------
class PtySession:
    """`python -m aimos ARGS` with a pseudo-terminal as its controlling terminal, stdin, stdout
    and stderr (so `isatty()` is true and getpass reads /dev/tty), driven prompt by prompt."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.args = args
        pid, fd = pty.fork()
        if pid == 0:  # the child: nothing but exec
            try:
                os.execve(sys.executable, [sys.executable, "-m", "aimos", *args], env)  # noqa: S606
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.buffer = ""
        self.position = 0
        self.code: int | None = None

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            return False
        if not data:
            return False
        self.buffer += data.decode("utf-8", "replace")
        return True

    def expect(self, pattern: str, timeout: float = 20.0) -> str:
        """Wait for ``pattern`` (a regex) after what was already matched; return the text up to it."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        open_ = True
        while True:
            found = regex.search(self.buffer, self.position)
            if found:
                before = self.buffer[self.position : found.start()]
                self.position = found.end()
                return before
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not open_:
                raise AssertionError(
                    f"aimos {' '.join(self.args)}: no {pattern!r} on the terminal "
                    f"({'it closed' if not open_ else 'timed out'}); after the last answer it showed:\n"
                    f"{self.buffer[self.position :]}\n--- full transcript ---\n{self.buffer}"
                )
            open_ = self._read(min(0.2, remaining))

    def send(self, line: str) -> None:
        os.write(self.fd, (line + "\r").encode("utf-8"))

    def choose_passphrase(self, passphrase: str, then: str = r"master fingerprint: [0-9a-f]{64}") -> int:
        """At the prompt of a new master passphrase (already shown): type ``passphrase``, again at
        the repeat prompt, wait for ``then`` and for the exit; the exit code."""
        self.send(passphrase)
        self.expect(re.escape("Repeat the master passphrase:"))
        self.send(passphrase)
        self.expect(then, timeout=60)
        return self.wait()

    def wait(self, timeout: float = 60.0) -> int:
        """Drain the terminal until the child exits; its exit code."""
        deadline = time.monotonic() + timeout
        while self.code is None:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.code = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() > deadline:
                self.close()
                raise AssertionError(f"aimos {' '.join(self.args)} did not exit:\n{self.buffer}")
            self._read(0.1)
        while self._read(0.05) and select.select([self.fd], [], [], 0)[0]:
            pass
        return self.code

    def close(self) -> None:
        if self.code is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                _, status = os.waitpid(self.pid, 0)
                self.code = os.waitstatus_to_exitcode(status)
        with contextlib.suppress(OSError):
            os.close(self.fd)
