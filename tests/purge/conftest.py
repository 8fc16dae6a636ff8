"""Fixtures for the purge ceremony tests (`aimos_home`, `passphrase`, `installed` come from
tests/conftest.py; `installed` is a copy of a file-keystore brain installed with --no-guides and
no service).

`keystore` is "os" (the real Secret Service, marked `keychain`; without one the test FAILS with
the command to run, it is never skipped) or "file". `cleanup` SIGKILLs at teardown every
housekeeper and helper process a test started, and removes the Secret Service items of every
brain it was told of.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.purge import Cleanup


@pytest.fixture
def cleanup(aimos_home: Path) -> Iterator[Cleanup]:
    found = Cleanup()
    found.home(aimos_home)
    try:
        yield found
    finally:
        found.finish()
