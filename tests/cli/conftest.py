"""Fixtures for the CLI tests (the `aimos_home` and `brain` fixtures come from tests/conftest.py).

`installed` gives each test its own brain made by a real `aimos install --yes --keystore file`:
the install runs once per session into a template AIMOS_HOME, and each test gets a byte-for-byte
copy of that home (brain file, anchors, file keystore), which keeps the suite fast.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from aimos_cli_support import PASSPHRASE_ENV, run_aimos


@pytest.fixture
def passphrase(aimos_home: Path) -> str:
    """The master passphrase the `aimos_home` fixture wrote to its 0600 passphrase file."""
    return Path(os.environ[PASSPHRASE_ENV]).read_text("utf-8").rstrip("\r\n")


@pytest.fixture(scope="session")
def brain_template(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """A factory: the AIMOS_HOME of a brain installed with the file keystore and this passphrase."""
    made: dict[str, Path] = {}

    def template(passphrase: str) -> Path:
        if passphrase not in made:
            root = tmp_path_factory.mktemp("template")
            home = root / "home"
            home.mkdir(mode=0o700)
            pass_file = root / "passphrase"
            pass_file.write_text(passphrase + "\n")
            pass_file.chmod(0o600)
            run_aimos(
                "install",
                "--yes",
                "--keystore",
                "file",
                env={"AIMOS_HOME": str(home), PASSPHRASE_ENV: str(pass_file)},
                unset=("AIMOS_KEYSTORE",),
            ).ok()
            made[passphrase] = home
        return made[passphrase]

    return template


@pytest.fixture
def installed(aimos_home: Path, passphrase: str, brain_template: Callable[[str], Path]) -> Path:
    """AIMOS_HOME (already exported) holding an installed brain with the file keystore."""
    shutil.copytree(brain_template(passphrase), aimos_home, dirs_exist_ok=True)
    return aimos_home
