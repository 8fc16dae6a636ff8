"""Fixtures for the end-to-end tests (`aimos_home` comes from tests/conftest.py).

Tests parametrized over the keystore take `keystore`; its "os" case is marked `keychain` and needs a
real Secret Service. Without one the test FAILS (in its body, via `require_keychain`) with the command
to run; it is never skipped.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from aimos_e2e_support import PASSPHRASE_ENV

KEYSTORES = [pytest.param("os", marks=pytest.mark.keychain, id="os"), pytest.param("file", id="file")]


@pytest.fixture
def passphrase(aimos_home: Path) -> str:
    """The master passphrase the `aimos_home` fixture wrote to its 0600 passphrase file."""
    return Path(os.environ[PASSPHRASE_ENV]).read_text("utf-8").rstrip("\r\n")


@pytest.fixture(params=KEYSTORES)
def keystore(request: pytest.FixtureRequest, aimos_home: Path) -> str:
    """ "os" (the real Secret Service; keychain-marked) or "file" (aimos's own file keystore)."""
    return str(request.param)
