"""Shared by the tests (moved from tests/cli/test_guides_view.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from support.cli import (
    BRAIN,
    PASSPHRASE_ENV,
    run_aimos,
    sqlite_value,
)


@pytest.fixture(scope="module")
def guides_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with a fresh install and its guides (file keystore, no service), made once."""
    root = tmp_path_factory.mktemp("guides-template")
    home = root / "home"
    home.mkdir(mode=0o700)
    secret = root / "passphrase"
    secret.write_text("guides view test passphrase\n")
    secret.chmod(0o600)
    env = {"AIMOS_HOME": str(home), PASSPHRASE_ENV: str(secret)}
    run_aimos(
        "install", "--yes", "--keystore", "file", "--no-service", env=env, unset=("AIMOS_KEYSTORE",)
    ).ok()
    return root


@pytest.fixture
def fresh(guides_template: Path, aimos_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """AIMOS_HOME holding a copy of the guides template, with one personal memory."""
    shutil.copytree(guides_template / "home", aimos_home, dirs_exist_ok=True)
    monkeypatch.setenv(PASSPHRASE_ENV, str(guides_template / "passphrase"))
    run_aimos("save", PERSONAL).ok()
    return aimos_home


def guide_ids(home: Path) -> set[str]:
    found = set(sqlite_value(home / BRAIN, "SELECT memory_id FROM memories WHERE scope = 'system'").split())
    assert len(found) == 8, found
    return found


PERSONAL = "Dr. Okafor fills my cavities every spring"
