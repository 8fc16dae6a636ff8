"""Someone holding the brain file edits a recall's stored decision (deflated since migration 11) with
the sqlite3 shell, the guards dropped and put back: another decision under the same hash, a deflate
bomb, the deflated bytes gone. `aimos verify` names the altered receipt row, `aimos receipt verify`
refuses the receipt, and nothing reaches the user as a traceback or hangs on the bomb."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest
from support.attacks import INTEGRITY, VERIFICATION_FAILED, run_sql, save
from support.cli import BRAIN, run_aimos, sqlite

from aimos.store.cells import INFLATED_LIMIT, deflate_text, stored_text

pytestmark = pytest.mark.timeout(180)


def _receipt(home: Path) -> tuple[str, str]:
    save("the boiler is serviced every october by dana from northside heating")
    got = run_aimos("recall", "boiler service", "--json").ok().json()
    receipt_id = got["receipt"]["receipt_id"]
    found = sqlite(
        home / BRAIN,
        f"SELECT decision, hex(decision_deflated) FROM recall_receipts WHERE receipt_id = '{receipt_id}'",
        "-json",
    )
    (row,) = json.loads(found.stdout)
    text = stored_text(row["decision"], bytes.fromhex(row["hex(decision_deflated)"]))
    assert text is not None
    return receipt_id, text


def _edit(home: Path, receipt_id: str, assignment: str) -> None:
    """UPDATE the receipt row with its guard dropped, then put the guard back as it was."""
    guard = sqlite(
        home / BRAIN, "SELECT sql FROM sqlite_master WHERE name = 'recall_receipts_no_update'"
    ).stdout
    assert "BEFORE UPDATE" in guard
    run_sql(
        home,
        f"DROP TRIGGER recall_receipts_no_update; UPDATE recall_receipts SET {assignment}"
        f" WHERE receipt_id = '{receipt_id}'; {guard.strip()};",
    )


def _refused(home: Path, receipt_id: str) -> None:
    verified = run_aimos("verify", timeout=120)
    assert verified.code == VERIFICATION_FAILED, verified.describe()
    assert "row_altered" in verified.both and "recall_receipts" in verified.both, verified.describe()
    checked = run_aimos("receipt", "verify", receipt_id, timeout=120)
    assert checked.code in (VERIFICATION_FAILED, INTEGRITY), checked.describe()
    for result in (verified, checked):
        assert "Traceback" not in result.both and "internal error" not in result.both, result.describe()


def test_another_decision_under_the_same_hash_is_found(installed: Path) -> None:
    receipt_id, text = _receipt(installed)
    decision = json.loads(text)
    decision["withheld"] = [{"memory_id": "00000000-0000-4000-8000-000000000000", "reason": "forged"}]
    forged = deflate_text(json.dumps(decision, separators=(",", ":"), sort_keys=True))
    _edit(installed, receipt_id, f"decision_deflated = X'{forged.hex()}'")
    _refused(installed, receipt_id)


def test_a_deflate_bomb_is_refused(installed: Path) -> None:
    receipt_id, _ = _receipt(installed)
    bomb = zlib.compress(b"\0" * (INFLATED_LIMIT + 1), 9)
    _edit(installed, receipt_id, f"decision_deflated = X'{bomb.hex()}'")
    _refused(installed, receipt_id)
    shown = run_aimos("receipt", "show", receipt_id)
    assert shown.code == INTEGRITY, shown.describe()
    assert "decision is not readable" in shown.err and "hint:" in shown.err, shown.describe()
    assert "Traceback" not in shown.both and "internal error" not in shown.both, shown.describe()


def test_the_deflated_bytes_gone_is_found(installed: Path) -> None:
    receipt_id, _ = _receipt(installed)
    _edit(installed, receipt_id, "decision_deflated = NULL")
    _refused(installed, receipt_id)
