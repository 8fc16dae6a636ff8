"""Fixtures for the end-to-end tests (`aimos_home` comes from tests/conftest.py).

Tests parametrized over the keystore take `keystore`; its "os" case is marked `keychain` and needs a
real Secret Service. Without one the test FAILS (in its body, via `require_keychain`) with the command
to run; it is never skipped.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.e2e import PASSPHRASE_ENV


@pytest.fixture
def passphrase(aimos_home: Path) -> str:
    """The master passphrase the `aimos_home` fixture wrote to its 0600 passphrase file."""
    return Path(os.environ[PASSPHRASE_ENV]).read_text("utf-8").rstrip("\r\n")
