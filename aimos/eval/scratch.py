"""Scratch brains for the evaluations: a temporary AIMOS_HOME each, a brain named `eval-<kind>`
installed with a random passphrase, and at the end the purge ceremony with a signed receipt
(when the CLI has set a purger; the evaluations cannot import the ceremony themselves) before the
temporary home is removed. The user's brain is never touched.
"""

from __future__ import annotations

import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SCRATCH_PREFIX = "eval-"

# home -> the passphrase of the scratch brain installed there
_PASSPHRASES: dict[str, str] = {}
_PURGER: Callable[[Path, str], str] | None = None
_RECEIPTS: list[str] = []


def set_purger(purger: Callable[[Path, str], str] | None) -> None:
    """The CLI's purge hook: (scratch home, passphrase) -> receipt path. None: just remove."""
    global _PURGER
    _PURGER = purger
    _RECEIPTS.clear()


def receipts() -> list[str]:
    return list(_RECEIPTS)


def register(home: Path, passphrase: str) -> None:
    """A scratch brain made some other way (a copy of one) is purged the same way."""
    _PASSPHRASES[str(home)] = passphrase


def install_scratch(kind: str, keystore: str = "file", passphrase: str | None = None) -> Any:
    """Install a scratch brain in the current AIMOS_HOME (no guides, no service)."""
    from aimos import paths
    from aimos.installer.setup import InstallOptions, install

    passphrase = passphrase or secrets.token_urlsafe(24)
    result = install(
        InstallOptions(brain_name=f"{SCRATCH_PREFIX}{kind}", keystore=keystore, guides=False),
        passphrase,
        int(time.time()),
    )
    register(paths.data_dir(), passphrase)
    return result


def open_scratch() -> tuple[Any, Any, Any]:
    """The brain in the current AIMOS_HOME opened in-process for an evaluation: the writer (its
    writes sealed by the housekeeper), the CLI agent's signer and the housekeeper's."""
    from aimos.identity.epochs import load_signer
    from aimos.identity.keystore import open_keystore
    from aimos.store.connection import open_writer, seal_with
    from aimos.store.meta import brain_meta
    from aimos.vocabulary import HOUSEKEEPER

    conn = open_writer()
    meta = brain_meta(conn)
    store = open_keystore(meta["keystore"], meta["brain_id"])
    now = int(time.time())
    agent = load_signer(conn, store, "cli", now)
    housekeeper = load_signer(conn, store, HOUSEKEEPER, now)
    seal_with(conn, housekeeper)
    return conn, agent, housekeeper


def finish(home: Path) -> None:
    """Purge the scratch brain at ``home`` with a receipt (when a purger is set), then remove it."""
    passphrase = _PASSPHRASES.pop(str(home), None)
    try:
        if _PURGER is not None and passphrase is not None and (home / "brain.sqlite3").exists():
            _RECEIPTS.append(_PURGER(home, passphrase))
    finally:
        shutil.rmtree(home, ignore_errors=True)


@contextmanager
def scratch_home(prefix: str = "aimos-eval-") -> Iterator[Path]:
    """A temporary AIMOS_HOME for a scratch brain; purged and removed afterwards."""
    from aimos.paths import using_home

    home = Path(tempfile.mkdtemp(prefix=prefix))
    with using_home(home):
        try:
            yield home
        finally:
            finish(home)
