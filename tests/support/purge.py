"""Helpers for the purge ceremony tests: the real `aimos purge` in a subprocess, the brain read
from outside with plain apsw, what a home holds (files, keystore items, keychain items), and the
secrets and content hashes a purge artifact must never contain.

Imported as a plain module (tests/ is not a package; conftest.py puts this folder and
tests/installer on sys.path, and tests/conftest.py puts tests/cli there).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
import signal
import stat
from pathlib import Path
from typing import Any

import apsw

from aimos.identity.anchors import KEPT_ANCHOR_ITEM
from support.cli import BRAIN, Result, run_aimos
from support.installer import delete_keychain_service, keychain_usernames, tree
from support.process import kill_housekeeper, read_pid_file

REPO = Path(__file__).resolve().parents[2]
MIGRATIONS = REPO / "aimos" / "store" / "migrations"
CONFIRM = "PURGE AIMOS personal personal"
FINGERPRINT_RE = re.compile(r"master fingerprint: ([0-9a-f]{64})\b")
# what any aimos command may add to a home it refuses to change: its one-line command log
CLI_LOG = ("logs", "logs/aimos.log")


# --- the CLI -------------------------------------------------------------------------------------
def purge_live(*args: str, confirmation: str | None = CONFIRM, env: dict[str, str] | None = None) -> Result:
    """`aimos purge --live ARGS` with ``confirmation`` as the one line on stdin (None: empty stdin)."""
    line = "" if confirmation is None else confirmation + "\n"
    return run_aimos("purge", "--live", *args, input=line, env=env)


def verify_receipt(path: Path | str, fingerprint: str, *extra: str) -> Result:
    return run_aimos("purge", "verify-receipt", str(path), "--master-fingerprint", fingerprint, *extra)


# --- the brain, read from outside ---------------------------------------------------------------
@contextlib.contextmanager
def read_only(path: Path) -> Any:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    conn.set_busy_timeout(10_000)
    try:
        yield conn
    finally:
        conn.close()


def tables(path: Path) -> list[tuple[str, bool]]:
    """(name, is_virtual) of every table in the brain's schema, as sqlite_master says."""
    with read_only(path) as conn:
        return [
            (str(name), str(sql or "").upper().startswith("CREATE VIRTUAL TABLE"))
            for name, sql in conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]


def row_counts(path: Path) -> dict[str, int]:
    """Rows of every real (not virtual) table."""
    names = [name for name, virtual in tables(path) if not virtual]
    with read_only(path) as conn:
        return {n: int(conn.execute(f'SELECT COUNT(*) FROM "{n}"').fetchall()[0][0]) for n in names}


def scalar(path: Path, sql: str, params: tuple[Any, ...] = ()) -> Any:
    with read_only(path) as conn:
        rows = conn.execute(sql, params).fetchall()
    assert rows, f"no row for {sql}"
    return rows[0][0]


def column(path: Path, sql: str) -> list[Any]:
    with read_only(path) as conn:
        return [row[0] for row in conn.execute(sql)]


def class_counts_by_hand(path: Path) -> dict[str, int]:
    """Row counts per class, summed here over every real table with `aimos.purge.inventory.class_of`."""
    from aimos.purge.inventory import CLASSES, TABLE_CLASSES, class_of

    counts = dict.fromkeys(CLASSES, 0)
    for name, n in row_counts(path).items():
        assert name in TABLE_CLASSES, f"table {name} has no explicit purge class"
        counts[class_of(name)] += n
    return counts


def brain_id_of(home: Path) -> str:
    return str(scalar(home / BRAIN, "SELECT value FROM brain_meta WHERE key = 'brain_id'"))


def epoch_count(home: Path) -> int:
    return int(scalar(home / BRAIN, "SELECT COUNT(*) FROM identity_epochs"))


def checkpoint(path: Path) -> None:
    """Fold the WAL into the brain file, so its bytes say everything (nothing else holds it)."""
    conn = apsw.Connection(str(path))
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    finally:
        conn.close()


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# --- what a home holds ---------------------------------------------------------------------------
def purge_files(home: Path) -> dict[str, list[Path]]:
    folder = home / "purge-receipts"
    found: dict[str, list[Path]] = {"receipt": [], "intent": [], "journal": [], "other": []}
    if folder.is_dir():
        for path in sorted(folder.iterdir()):
            for kind in ("receipt", "intent", "journal"):
                if path.name.endswith(f".{kind}.json"):
                    found[kind].append(path)
                    break
            else:
                found["other"].append(path)
    return found


def keystore_items(home: Path, kind: str, brain_id: str) -> set[str]:
    """The item names the brain's keystore holds now (files, or Secret Service items)."""
    if kind == "file":
        folder = home / "state" / "keys" / brain_id
        return {p.stem for p in folder.glob("*.key")} if folder.is_dir() else set()
    return keychain_usernames(f"aimos:{brain_id}")


def home_state(home: Path, kind: str, brain_id: str, ignore: tuple[str, ...] = ()) -> dict[str, Any]:
    """Everything a refused ceremony must leave as it was: every file of the home (bytes and mode;
    the brain's WAL folded in first), the row counts and the keystore items."""
    brain = home / BRAIN
    if brain.exists():
        checkpoint(brain)
    return {
        "tree": tree(home, ignore=CLI_LOG + ignore),
        "rows": row_counts(brain) if brain.exists() else None,
        "items": sorted(keystore_items(home, kind, brain_id)),
    }


def assert_state_unchanged(
    home: Path, kind: str, brain_id: str, before: dict[str, Any], ignore: tuple[str, ...] = ()
) -> None:
    from support.installer import tree_diff

    after = home_state(home, kind, brain_id, ignore)
    assert after["rows"] == before["rows"], f"row counts changed: {before['rows']} -> {after['rows']}"
    assert after["items"] == before["items"], f"keystore items: {before['items']} -> {after['items']}"
    assert after["tree"] == before["tree"], f"the home changed: {tree_diff(before['tree'], after['tree'])}"


# --- secrets and content ------------------------------------------------------------------------
def b64_forms(raw: bytes) -> list[str]:
    return [
        base64.b64encode(raw).decode().rstrip("="),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
    ]


def hash_forms(hex_hash: str) -> list[str]:
    """A hex content hash as it could leak: hex (both cases), base64 and base64url of its bytes."""
    raw = bytes.fromhex(hex_hash)
    return [hex_hash.lower(), hex_hash.upper(), *b64_forms(raw)]


def seed_forms(seed: bytes) -> list[str]:
    return [seed.hex(), seed.hex().upper(), *b64_forms(seed)]


def b64u_decode(text: str) -> bytes:
    text = text.strip()
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def read_keystore_secrets(home: Path, kind: str, brain_id: str, passphrase: str) -> dict[str, str]:
    """Every keystore item's stored text, by name (file keystore: the .key files' contents)."""
    if kind == "file":
        folder = home / "state" / "keys" / brain_id
        items = {p.stem: p.read_text("utf-8") for p in sorted(folder.glob("*.key"))}
    else:
        import keyring

        items = {}
        for name in keychain_usernames(f"aimos:{brain_id}"):
            value = keyring.get_password(f"aimos:{brain_id}", name)
            assert value is not None, f"keychain item {name} vanished"
            items[name] = value
    assert "master" in items and len(items) >= 2, f"the keystore holds too little: {sorted(items)}"
    return items


def forbidden_strings(home: Path, kind: str, brain_id: str, passphrase: str) -> dict[str, str]:
    """label -> a string no purge artifact may contain: every memory value and key, every content
    and mutation hash (hex, base64, base64url), the passphrase, every keystore secret (as stored,
    its sealed parts, and every seed in hex/base64 forms)."""
    from aimos.identity.passphrase import unseal

    brain = home / BRAIN
    found: dict[str, str] = {"passphrase": passphrase}
    with read_only(brain) as conn:
        for memory_id, value, key, live, save in conn.execute(
            "SELECT memory_id, value, key, live_content_hash, save_mutation_hash FROM memories"
        ):
            found[f"value of {memory_id}"] = str(value)
            if key:
                found[f"key of {memory_id}"] = str(key)
            for label, h in (("live_content_hash", live), ("save_mutation_hash", save)):
                for i, form in enumerate(hash_forms(str(h))):
                    found[f"{label} of {memory_id} form {i}"] = form
        for table in ("events", "memory_provenance"):
            for row_id, content, mutation in conn.execute(
                f"SELECT rowid, content_hash, mutation_hash FROM {table}"
            ):
                for label, h in (("content_hash", content), ("mutation_hash", mutation)):
                    for i, form in enumerate(hash_forms(str(h))):
                        found[f"{table} {row_id} {label} form {i}"] = form
    for name, text in read_keystore_secrets(home, kind, brain_id, passphrase).items():
        if name == KEPT_ANCHOR_ITEM:  # a seal number, a link and revoked epochs: public, not a seed
            continue
        found[f"keystore item {name}"] = text.strip()
        if name == "master":
            sealed = json.loads(text)
            found["sealed master salt"] = sealed["salt"]
            found["sealed master box"] = sealed["box"]
            seed = unseal(text, passphrase)
        else:
            seed = b64u_decode(text)
        assert len(seed) == 32, f"keystore item {name} is not a 32-byte seed"
        for i, form in enumerate(seed_forms(seed)):
            found[f"seed of {name} form {i}"] = form
    return found


def assert_no_leak(files: list[Path], forbidden: dict[str, str]) -> None:
    assert files, "nothing to scan"
    for path in files:
        text = path.read_bytes().decode("utf-8", "replace")
        leaked = sorted(label for label, value in forbidden.items() if value and value in text)
        assert not leaked, f"{path.name} contains {leaked[:10]}"


# --- processes and keychain items a test made ---------------------------------------------------
class Cleanup:
    """At teardown: SIGKILL the housekeepers of every home it was told of and every other process
    it started, and remove the Secret Service items of every brain id it was told of."""

    def __init__(self) -> None:
        self.homes: list[Path] = []
        self.pids: set[int] = set()
        self.brain_ids: set[str] = set()

    def home(self, home: Path) -> None:
        self.homes.append(home)

    def brain(self, brain_id: str) -> None:
        self.brain_ids.add(brain_id)

    def process(self, pid: int) -> None:
        self.pids.add(pid)

    def finish(self) -> None:
        for home in self.homes:
            kill_housekeeper(read_pid_file(home))
        for pid in sorted(self.pids):
            with contextlib.suppress(ProcessLookupError, ChildProcessError):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
        for brain_id in sorted(self.brain_ids):
            with contextlib.suppress(Exception):  # no Secret Service: nothing was stored there
                delete_keychain_service(f"aimos:{brain_id}")
