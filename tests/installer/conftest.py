"""Fixtures for the installer tests (`aimos_home`, `passphrase`, `installed` come from
tests/conftest.py; this folder is put on sys.path for `support.installer`).

`keystore` is "os" (the real Secret Service, marked `keychain`; without one the test FAILS with
the command to run, it is never skipped) or "file". `reaper` SIGKILLs, at teardown, every
housekeeper a test started or saw, and removes the keychain items of every brain it was told of
(the gnome-keyring of the test session keeps its items on disk).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.installer import Reaper


@pytest.fixture
def reaper(aimos_home: Path) -> Iterator[Reaper]:
    found = Reaper(aimos_home)
    try:
        yield found
    finally:
        found.finish()
