"""Helpers for the end-to-end tests: the real `aimos` in a subprocess, the real sqlite3 shell, and
the secrets as the keystores hold them (file keystore files, or the OS keychain through keyring).

Imported by the test modules of this folder as a plain module (tests/ is not a package; pytest puts
this folder on sys.path, and tests/conftest.py puts tests/cli there for `support.cli`, whose
subprocess runner and `Result` this module re-exports).
"""

from __future__ import annotations

import base64
import json
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

from support.cli import (
    BRAIN,
    PASSPHRASE_ENV,
    SQLITE3,
    UUID_RE,
    Result,
    keychain_problem,
    require_keychain,
    run_aimos,
)

__all__ = [
    "BRAIN",
    "PASSPHRASE_ENV",
    "SQLITE3",
    "UUID_RE",
    "Result",
    "keychain_problem",
    "require_keychain",
    "run_aimos",
]


def sqlite_rows(brain: Path, sql: str) -> list[dict[str, Any]]:
    proc = subprocess.run(
        [SQLITE3, "-json", str(brain), sql], capture_output=True, text=True, timeout=30, check=False
    )
    assert proc.returncode == 0, f"sqlite3 {sql!r} failed: {proc.stderr}"
    return json.loads(proc.stdout) if proc.stdout.strip() else []


def brain_id(home: Path) -> str:
    return str(sqlite_rows(home / BRAIN, "SELECT value FROM brain_meta WHERE key = 'brain_id'")[0]["value"])


def key_refs(home: Path) -> list[str]:
    """The keystore item name of every identity epoch the brain records (agent@valid_from)."""
    found = sqlite_rows(home / BRAIN, "SELECT agent_id, valid_from, key_ref FROM identity_epochs")
    for row in found:
        assert row["key_ref"] == f"{row['agent_id']}@{row['valid_from']}", row
    return [str(row["key_ref"]) for row in found]


def iso_seconds(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())


def b64u_seed(text: str) -> bytes:
    text = text.strip()
    seed = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    assert len(seed) == 32, f"a keystore item is not a 32-byte seed ({len(seed)} bytes)"
    return seed


def secret_forms(secret: bytes) -> dict[str, bytes]:
    """The ways a 32-byte secret could leak: raw, hex, base64url and standard base64."""
    std = base64.b64encode(secret)
    url = base64.urlsafe_b64encode(secret)
    return {
        "raw": secret,
        "hex": secret.hex().encode(),
        "HEX": secret.hex().upper().encode(),
        "base64url": url.rstrip(b"="),
        "base64": std.rstrip(b"="),
    }
