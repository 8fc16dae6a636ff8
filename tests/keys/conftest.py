"""Fixtures for the key-management tests (`aimos passphrase change`, `aimos keystore move`, a
locked OS keychain); `aimos_home` and `passphrase` come from tests/conftest.py.

`keystore` is "os" (the real Secret Service, marked `keychain`; without one the test FAILS with the
command to run, it is never skipped) or "file". `brain` installs a brain on that keystore with the
real `aimos install` and, at teardown, removes the Secret Service items of every brain it made.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.keys import Installed, install_brain


@pytest.fixture
def brain(aimos_home: Path, keystore: str, passphrase: str) -> Iterator[Installed]:
    installed = install_brain(aimos_home, keystore, passphrase)
    try:
        yield installed
    finally:
        installed.forget_keys()
