"""Someone holding the brain file edits a recall's signed event body (stored deflated since migration
14), a save's or an outcome's (deflated against a dictionary since migrations 16 and 17), with the
sqlite3 shell, the guards dropped and put back: another body deflated in its place, a
deflate bomb, the deflated bytes gone, text put back beside them; or stores another operation's
event in the deflated form (the same bytes, so only the form differs). `aimos verify` names the
altered events row, `aimos receipt verify` refuses the receipt, and nothing reaches the user as a
traceback or hangs on the bomb."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest
from support.attacks import INTEGRITY, VERIFICATION_FAILED, run_sql, save
from support.cli import BRAIN, run_aimos, sqlite

from aimos.store.cells import (
    EVENT_DICTIONARY_V1,
    EVENT_DICTIONARY_V2,
    INFLATED_LIMIT,
    deflate_event_text,
    deflate_text,
    event_body,
)

pytestmark = pytest.mark.timeout(180)


def _recall(home: Path) -> tuple[str, str, str]:
    """A recall's receipt id, its native event's id and that event's signed body."""
    save("the boiler is serviced every october by dana from northside heating")
    got = run_aimos("recall", "boiler service", "--json").ok().json()
    receipt_id = got["receipt"]["receipt_id"]
    found = sqlite(
        home / BRAIN,
        "SELECT e.event_id, e.operation, e.signed_body, hex(e.signed_body_deflated) AS deflated"
        f" FROM events e JOIN recall_receipts r ON r.event_id = e.event_id WHERE r.receipt_id = '{receipt_id}'",
        "-json",
    )
    (row,) = json.loads(found.stdout)
    body = event_body(row["operation"], row["signed_body"], bytes.fromhex(row["deflated"]))
    assert isinstance(body, str) and row["signed_body"] == "", row
    return receipt_id, row["event_id"], body


def _edit(home: Path, where: str, assignment: str) -> None:
    """UPDATE events rows with the guard dropped, then put the guard back as it was."""
    guard = sqlite(home / BRAIN, "SELECT sql FROM sqlite_master WHERE name = 'events_no_update'").stdout
    assert "BEFORE UPDATE" in guard
    run_sql(
        home, f"DROP TRIGGER events_no_update; UPDATE events SET {assignment} WHERE {where}; {guard.strip()};"
    )


def _verify_names_events(home: Path) -> None:
    verified = run_aimos("verify", timeout=120)
    assert verified.code == VERIFICATION_FAILED, verified.describe()
    assert "row_altered" in verified.both and "events" in verified.both, verified.describe()
    assert "Traceback" not in verified.both and "internal error" not in verified.both, verified.describe()


def _refused(home: Path, receipt_id: str) -> None:
    _verify_names_events(home)
    checked = run_aimos("receipt", "verify", receipt_id, timeout=120)
    assert checked.code in (VERIFICATION_FAILED, INTEGRITY), checked.describe()
    assert "Traceback" not in checked.both and "internal error" not in checked.both, checked.describe()


def test_another_body_in_the_deflated_bytes_is_found(installed: Path) -> None:
    receipt_id, event_id, body = _recall(installed)
    forged = json.loads(body)
    forged["metadata"]["abstained"] = True  # still canonical JSON, no longer the signed body
    packed = deflate_text(json.dumps(forged, separators=(",", ":"), sort_keys=True, ensure_ascii=False))
    _edit(installed, f"event_id = '{event_id}'", f"signed_body_deflated = X'{packed.hex()}'")
    _refused(installed, receipt_id)


def test_a_deflate_bomb_is_refused(installed: Path) -> None:
    receipt_id, event_id, _ = _recall(installed)
    bomb = zlib.compress(b"\0" * (INFLATED_LIMIT + 1), 9)
    _edit(installed, f"event_id = '{event_id}'", f"signed_body_deflated = X'{bomb.hex()}'")
    _refused(installed, receipt_id)


def test_the_deflated_bytes_gone_is_found(installed: Path) -> None:
    receipt_id, event_id, _ = _recall(installed)
    _edit(installed, f"event_id = '{event_id}'", "signed_body_deflated = NULL")
    _refused(installed, receipt_id)


def test_text_beside_the_deflated_bytes_is_found(installed: Path) -> None:
    receipt_id, event_id, body = _recall(installed)
    quoted = body.replace("'", "''")
    _edit(installed, f"event_id = '{event_id}'", f"signed_body = '{quoted}'")
    _refused(installed, receipt_id)


def _newest_event(home: Path, where: str) -> tuple[str, str]:
    """The newest event matching ``where`` after a save: its id and the body it stands for."""
    save("the spare key is under the blue flowerpot")
    found = sqlite(
        home / BRAIN,
        "SELECT event_id, operation, signed_body, hex(signed_body_deflated) AS deflated FROM events"
        f" WHERE {where} ORDER BY rowid DESC LIMIT 1",
        "-json",
    )
    (row,) = json.loads(found.stdout)
    deflated = bytes.fromhex(row["deflated"]) if row["deflated"] else None
    body = event_body(row["operation"], row["signed_body"], deflated)
    assert isinstance(body, str), row
    return row["event_id"], body


def test_another_operation_stored_deflated_is_found(installed: Path) -> None:
    """The same bytes, deflated: the body an event of another operation stands for is its text, so
    an event of another operation moved into the recall's form reads as nothing and its row is named."""
    event_id, body = _newest_event(installed, "operation NOT IN ('recall_receipt', 'memory_saved')")
    packed = deflate_text(body)
    _edit(
        installed, f"event_id = '{event_id}'", f"signed_body = '', signed_body_deflated = X'{packed.hex()}'"
    )
    _verify_names_events(installed)


@pytest.mark.parametrize("edit", ["another body", "plain deflate", "text put back", "bytes gone"])
def test_an_edited_save_event_is_found(installed: Path, edit: str) -> None:
    """A save's event body rewritten in its dictionary form (the quarantine flag flipped), moved to
    plain deflate or back to text beside the bytes, or its bytes removed: the row is named."""
    # a save's event: stored against the dictionary, beside an empty text
    event_id, body = _newest_event(installed, "operation = 'memory_saved' AND signed_body = ''")
    if edit == "another body":
        forged = body.replace('"retained_quarantine":false', '"retained_quarantine":true')
        assert forged != body
        assignment = f"signed_body_deflated = X'{deflate_event_text(forged).hex()}'"
    elif edit == "plain deflate":
        assignment = f"signed_body_deflated = X'{deflate_text(body).hex()}'"
    elif edit == "text put back":
        quoted = body.replace("'", "''")
        assignment = f"signed_body = '{quoted}'"
    else:
        assignment = "signed_body_deflated = NULL"
    _edit(installed, f"event_id = '{event_id}'", assignment)
    _verify_names_events(installed)


@pytest.mark.parametrize(
    "edit", ["another body", "the save's dictionary", "plain deflate", "text put back", "bytes gone"]
)
@pytest.mark.parametrize("operation", ["mutation_outcome_evidence_v2", "cognitive_weight_adjusted"])
def test_an_edited_outcome_event_is_found(installed: Path, operation: str, edit: str) -> None:
    """An outcome's event (its evidence or its transition, stored against the second dictionary
    since migration 17) rewritten in that form with its reward or weight changed, moved to the save's
    dictionary or plain deflate (the same body, another form), back to text, or its bytes removed:
    `aimos verify` names the events row."""
    save("the boiler is serviced every october by dana from northside heating")
    got = run_aimos("recall", "boiler service", "--json").ok().json()
    run_aimos("feedback", got["results"][0]["memory_id"], "--good").ok()
    event_id, body = _newest_event(installed, f"operation = '{operation}' AND signed_body = ''")
    if edit == "another body":
        forged = body.replace('"reward_sign":1', '"reward_sign":-1').replace(
            '"new_weight_milli":', '"new_weight_milli":1'
        )
        assert forged != body
        packed = deflate_event_text(forged, EVENT_DICTIONARY_V2)
    elif edit == "the save's dictionary":
        packed = deflate_event_text(body, EVENT_DICTIONARY_V1)
    elif edit == "plain deflate":
        packed = deflate_text(body)
    assignment = {
        "text put back": "signed_body = '" + body.replace("'", "''") + "'",
        "bytes gone": "signed_body_deflated = NULL",
    }.get(edit) or f"signed_body_deflated = X'{packed.hex()}'"
    _edit(installed, f"event_id = '{event_id}'", assignment)
    _verify_names_events(installed)
