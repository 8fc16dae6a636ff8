"""Fixtures for the key-management tests (`aimos passphrase change`, `aimos keystore move`, a
locked OS keychain); `aimos_home` and `passphrase` come from tests/conftest.py.

`keystore` is "os" (the real Secret Service, marked `keychain`; without one the test FAILS with the
command to run, it is never skipped) or "file". `brain` installs a brain on that keystore with the
real `aimos install` and, at teardown, removes the Secret Service items of every brain it made.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "installer"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from keys_support import Installed, install_brain

KEYSTORES = [pytest.param("os", marks=pytest.mark.keychain, id="os"), pytest.param("file", id="file")]


@pytest.fixture(params=KEYSTORES)
def keystore(request: pytest.FixtureRequest, aimos_home: Path) -> str:
    return str(request.param)


@pytest.fixture
def brain(aimos_home: Path, keystore: str, passphrase: str) -> Iterator[Installed]:
    installed = install_brain(aimos_home, keystore, passphrase)
    try:
        yield installed
    finally:
        installed.forget_keys()
