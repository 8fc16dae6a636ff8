"""Fixtures for the housekeeper tests. `aimos_home`, `passphrase`, `installed`, `brain` and
`brain_template` come from tests/conftest.py; this folder is put on sys.path for `support.housekeeper`.

Every test that may start a housekeeper uses `reaper`, whose finalizer SIGKILLs any housekeeper
still alive (from the pid file, and every pid the test registered), so no process outlives a test.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import PASSPHRASE_ENV, run_aimos
from support.housekeeper import DAY, is_housekeeper, pid_alive, read_pid_file


@pytest.fixture(scope="session")
def stocked_template(brain_template: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A factory: a home copied from the session's installed template, with three memories of
    three types, a recall and a good feedback (an outcome and a moved weight), made once."""
    made: dict[str, Path] = {}

    def template(passphrase: str) -> Path:
        if passphrase not in made:
            root = tmp_path_factory.mktemp("hk-stocked")
            home = root / "home"
            shutil.copytree(brain_template(passphrase), home)
            pass_file = root / "passphrase"
            pass_file.write_text(passphrase + "\n")
            pass_file.chmod(0o600)
            env = {"AIMOS_HOME": str(home), PASSPHRASE_ENV: str(pass_file)}
            first = ""
            for text, kind in (
                ("the otter sleeps under the boathouse", "note"),
                ("the boathouse roof leaks when the wind is from the east", "fact"),
                ("to feed the otter, open the boathouse at dawn", "procedure"),
            ):
                saved = run_aimos("save", "--type", kind, text, env=env, unset=("AIMOS_KEYSTORE",)).ok()
                first = first or saved.out.strip()
            run_aimos("recall", "otter boathouse", env=env, unset=("AIMOS_KEYSTORE",)).ok()
            run_aimos("feedback", first, "--good", env=env, unset=("AIMOS_KEYSTORE",)).ok()
            made[passphrase] = home
        return made[passphrase]

    return template


@pytest.fixture
def stocked(aimos_home: Path, passphrase: str, stocked_template: Any) -> Path:
    """AIMOS_HOME (exported) holding an installed brain with a few memories, a receipt and an
    outcome; no housekeeper runs."""
    shutil.copytree(stocked_template(passphrase), aimos_home, dirs_exist_ok=True)
    return aimos_home


@pytest.fixture
def install_at(aimos_home: Path, passphrase: str) -> Callable[..., int]:
    """A factory: install a brain in-process into AIMOS_HOME as if it happened ``days_ago``
    (its created_at and install events carry that time); returns the install time."""

    def install_brain(days_ago: float, validity_days: int = 30) -> int:
        from aimos.installer.setup import InstallOptions, install

        when = int(time.time() - days_ago * DAY)
        install(InstallOptions(keystore="file", validity_days=validity_days), passphrase, when)
        return when

    return install_brain


class Reaper:
    """Pids (and Popen objects) of housekeepers a test started; all are killed at teardown."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.pids: set[int] = set()
        self.procs: list[subprocess.Popen[Any]] = []

    def watch(self, pid: int | None) -> None:
        if pid:
            self.pids.add(int(pid))

    def popen(self, *args: str, **kwargs: Any) -> subprocess.Popen[Any]:
        proc = subprocess.Popen([sys.executable, "-m", "aimos", *args], env=dict(os.environ), **kwargs)
        self.procs.append(proc)
        self.pids.add(proc.pid)
        return proc

    def kill_all(self) -> None:
        self.watch(read_pid_file(self.home))
        for pid in sorted(self.pids):
            if pid_alive(pid) and is_housekeeper(pid):
                os.kill(pid, signal.SIGKILL)
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=30)


@pytest.fixture
def reaper(aimos_home: Path) -> Iterator[Reaper]:
    found = Reaper(aimos_home)
    try:
        yield found
    finally:
        found.kill_all()
