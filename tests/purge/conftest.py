"""Fixtures for the purge ceremony tests (`aimos_home`, `passphrase`, `installed` come from
tests/conftest.py; `installed` is a copy of a file-keystore brain installed with --no-guides and
no service).

`keystore` is "os" (the real Secret Service, marked `keychain`; without one the test FAILS with
the command to run, it is never skipped) or "file". `cleanup` SIGKILLs at teardown every
housekeeper and helper process a test started, and removes the Secret Service items of every
brain it was told of.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "installer"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from purge_support import Cleanup

KEYSTORES = [pytest.param("os", marks=pytest.mark.keychain, id="os"), pytest.param("file", id="file")]


@pytest.fixture(params=KEYSTORES)
def keystore(request: pytest.FixtureRequest, aimos_home: Path) -> str:
    return str(request.param)


@pytest.fixture
def cleanup(aimos_home: Path) -> Iterator[Cleanup]:
    found = Cleanup()
    found.home(aimos_home)
    try:
        yield found
    finally:
        found.finish()
