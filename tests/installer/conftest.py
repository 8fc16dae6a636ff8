"""Fixtures for the installer tests (`aimos_home`, `passphrase`, `installed` come from
tests/conftest.py; this folder is put on sys.path for `installer_support`).

`keystore` is "os" (the real Secret Service, marked `keychain`; without one the test FAILS with
the command to run, it is never skipped) or "file". `reaper` SIGKILLs, at teardown, every
housekeeper a test started or saw, and removes the keychain items of every brain it was told of
(the gnome-keyring of the test session keeps its items on disk).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from installer_support import Reaper

KEYSTORES = [pytest.param("os", marks=pytest.mark.keychain, id="os"), pytest.param("file", id="file")]


@pytest.fixture(params=KEYSTORES)
def keystore(request: pytest.FixtureRequest, aimos_home: Path) -> str:
    return str(request.param)


@pytest.fixture
def reaper(aimos_home: Path) -> Iterator[Reaper]:
    found = Reaper(aimos_home)
    try:
        yield found
    finally:
        found.finish()
