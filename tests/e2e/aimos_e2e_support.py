"""Helpers for the end-to-end tests: the real `aimos` in a subprocess, the real sqlite3 shell, and
the secrets as the keystores hold them (file keystore files, or the OS keychain through keyring).

Imported by the test modules of this folder as a plain module (tests/ is not a package; pytest puts
this folder on sys.path, and tests/conftest.py puts tests/cli there for `aimos_cli_support`, whose
subprocess runner and `Result` this module re-exports).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

from aimos_cli_support import BRAIN, PASSPHRASE_ENV, SQLITE3, UUID_RE, Result, run_aimos

__all__ = ["BRAIN", "PASSPHRASE_ENV", "SQLITE3", "UUID_RE", "Result", "run_aimos"]

KEYCHAIN_HELP = (
    "the keychain tests need a real Secret Service: run them with "
    "`dbus-run-session -- bash scripts/test-in-keyring-session.sh tests/e2e`"
)


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


def keychain_problem() -> str | None:
    """None when a real OS keychain stores, reads and deletes an item from this process."""
    try:
        import keyring

        backend = keyring.get_keyring()
        module = type(backend).__module__
        if module.startswith(("keyring.backends.fail", "keyring.backends.null", "keyrings.alt")):
            return f"keyring has no OS backend here ({module}.{type(backend).__name__})"
        service, name = "aimos:e2e-probe", f"probe-{os.getpid()}"
        keyring.set_password(service, name, "ok")
        value = keyring.get_password(service, name)
        keyring.delete_password(service, name)
    except Exception as exc:  # any backend failure means: no keychain
        return f"{type(exc).__name__}: {exc}"
    return None if value == "ok" else "the keychain returned another value than it stored"


def require_keychain() -> Any:
    """The `keyring` module once a real OS keychain answered; otherwise FAIL (never skip) saying how
    to run the keychain tests."""
    import pytest

    problem = keychain_problem()
    if problem is not None:
        pytest.fail(f"no OS keychain reachable ({problem}); {KEYCHAIN_HELP}", pytrace=False)
    import keyring

    return keyring
