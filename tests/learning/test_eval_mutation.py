"""`aimos eval mutation` runs every declared case against the real writer and both verifiers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(300)

EXPECTED_CASES = {
    "direct update of the live weight",
    "cross-memory proof reuse",
    "cross-company proof reuse",
    "no-op transition",
    "stale predecessor",
    "out-of-bounds transition (3001)",
    "forked transition (a second genesis)",
    "tamper: projection field (new_weight_milli)",
    "tamper: transition signature",
    "tamper: live weight",
    "tamper: signer epoch of a REWEIGHT node",
    "post-mutation recall with a receipt",
}


def test_eval_mutation_all_cases_as_declared(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "aimos", "eval", "mutation", "--transitions", "20", "--json"],
        capture_output=True,
        text=True,
        check=False,
        env={"AIMOS_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    names = {c["case"] for c in report["cases"]}
    assert EXPECTED_CASES <= names
    assert any(name.startswith("outcome bad") for name in names)
    failed = [c for c in report["cases"] if not c["as_declared"]]
    assert not failed, failed
    assert report["all_as_declared"] is True
    assert report["transition"]["n"] == 20 and report["transition"]["median_ms"] > 0
    assert report["logical_bytes_per_transition"] > 0
    assert set(report["bare"]) == {"two_signatures", "two_verifications", "two_row_durable_commit"}
    # the scratch brain lives under a temporary home of its own: nothing left in AIMOS_HOME
    assert not (tmp_path / "home" / "brain.sqlite3").exists()
