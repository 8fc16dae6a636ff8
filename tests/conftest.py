"""Shared fixtures: every test gets its own AIMOS_HOME, so nothing touches a real brain."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PASSPHRASE = "correct horse battery staple"
REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture
def aimos_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    pass_file = tmp_path / "passphrase"
    pass_file.write_text(PASSPHRASE + "\n")
    pass_file.chmod(0o600)
    monkeypatch.setenv("AIMOS_HOME", str(home))
    monkeypatch.setenv("AIMOS_PASSPHRASE_FILE", str(pass_file))
    monkeypatch.delenv("AIMOS_KEYSTORE", raising=False)
    return home


@dataclass
class Run:
    code: int
    out: str
    err: str


def run_cli(
    *args: str, input: str | None = None, env: dict[str, str] | None = None, timeout: float = 120
) -> Run:
    """Run the real `aimos` command in a subprocess (python -m aimos)."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    proc = subprocess.run(
        [sys.executable, "-m", "aimos", *args],
        input=input,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        check=False,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def cli() -> type[Run]:
    return Run


@dataclass
class InProcessBrain:
    """An installed brain opened in-process: writer connection, keystore, signers."""

    home: Path
    conn: object
    keystore: object
    brain_id: str
    master: object
    agent: object
    housekeeper: object


@pytest.fixture
def brain(aimos_home: Path) -> Iterator[InProcessBrain]:
    """A brain installed with the file keystore, opened with the writer's connection."""
    from aimos.identity.epochs import HOUSEKEEPER, load_signer, unlock_master
    from aimos.identity.keystore import open_keystore
    from aimos.store.connection import open_writer
    from installer.setup import InstallOptions, install

    now = int(time.time())
    result = install(InstallOptions(keystore="file"), PASSPHRASE, now)
    conn = open_writer()
    keystore = open_keystore("file", result.brain_id)
    master = unlock_master(conn, keystore, PASSPHRASE)
    agent = load_signer(conn, keystore, "cli", now)
    housekeeper = load_signer(conn, keystore, HOUSEKEEPER, now)
    try:
        yield InProcessBrain(
            aimos_home, conn, keystore, result.brain_id, master, agent, housekeeper
        )
    finally:
        conn.close()
