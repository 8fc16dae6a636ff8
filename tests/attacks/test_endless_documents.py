"""A document handed to a verifier is read only up to a cap (issue 35, item 9's class).

`aimos receipt verify FILE`, `aimos purge verify-receipt FILE` and `aimos verify-bundle FILE` read
the file whole; a path to a device or pipe that never ends (/dev/zero) filled memory until the
process died. Now each reads at most a fixed number of bytes and refuses the rest at once, saying
the file is not a document aimos wrote. The test's timeout is what would catch a hang.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import run_aimos

pytestmark = pytest.mark.timeout(60)

ENDLESS = "/dev/zero"
FINGERPRINT = "ab" * 32


def test_receipt_verify_refuses_an_endless_file(installed: Path) -> None:
    refused = run_aimos("receipt", "verify", ENDLESS, "--master-fingerprint", FINGERPRINT)
    assert refused.code == 2, refused.describe()
    assert "not a JSON receipt" in refused.err and "Traceback" not in refused.both


def test_purge_verify_receipt_refuses_an_endless_file(aimos_home: Path) -> None:
    refused = run_aimos("purge", "verify-receipt", ENDLESS, "--master-fingerprint", FINGERPRINT)
    assert refused.code != 0, refused.describe()
    assert "Traceback" not in refused.both


def test_verify_bundle_refuses_an_endless_file(aimos_home: Path) -> None:
    refused = run_aimos("verify-bundle", ENDLESS, "--master-fingerprint", FINGERPRINT)
    assert refused.code != 0, refused.describe()
    assert "Traceback" not in refused.both
