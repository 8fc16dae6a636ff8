"""Someone holding the brain file edits a REWEIGHT provenance node's signed body (stored since
migration 18 deflated against a dictionary, without its memory id, which the reader takes from the
row) with the sqlite3 shell, the guard dropped and put back: another body in the same form, the
same body against another dictionary, text put back beside the bytes, the bytes gone, or the node
moved to another memory. `aimos verify` names the altered memory_provenance row, and nothing
reaches the user as a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.attacks import VERIFICATION_FAILED, run_sql, save
from support.cli import BRAIN, run_aimos, sqlite

from aimos.store.cells import (
    EVENT_DICTIONARY_V2,
    compact_provenance_body,
    deflate_event_text,
    provenance_body,
)

pytestmark = pytest.mark.timeout(180)


def _transition(home: Path) -> tuple[str, str, str]:
    """After a good outcome that moved a memory's weight: its REWEIGHT node's id, its memory and
    the body it stands for."""
    save("the boiler is serviced every october by dana from northside heating")
    got = run_aimos("recall", "boiler service", "--json").ok().json()
    run_aimos("feedback", got["results"][0]["memory_id"], "--good").ok()
    found = sqlite(
        home / BRAIN,
        "SELECT provenance_id, memory_id, body_json, hex(body_deflated) AS deflated FROM memory_provenance"
        " WHERE event_type = 'REWEIGHT'",
        "-json",
    )
    (row,) = json.loads(found.stdout)
    body = provenance_body("REWEIGHT", row["memory_id"], row["body_json"], bytes.fromhex(row["deflated"]))
    assert isinstance(body, str) and row["body_json"] == "", row
    return row["provenance_id"], row["memory_id"], body


@pytest.mark.parametrize(
    "edit", ["another body", "another dictionary", "text put back", "bytes gone", "another memory"]
)
def test_an_edited_reweight_body_is_found(installed: Path, edit: str) -> None:
    provenance_id, memory_id, body = _transition(installed)
    if edit == "another body":
        forged = body.replace('"new_weight_milli":', '"new_weight_milli":1')
        assert forged != body
        assignment = f"body_deflated = X'{compact_provenance_body(forged, memory_id).hex()}'"
    elif edit == "another dictionary":
        assignment = f"body_deflated = X'{deflate_event_text(body, EVENT_DICTIONARY_V2).hex()}'"
    elif edit == "text put back":
        assignment = "body_json = '" + body.replace("'", "''") + "'"
    elif edit == "bytes gone":  # (NULL beside the empty text would break the shell's own update)
        assignment = "body_deflated = X''"
    else:
        save("the gutters are cleared every november")
        other = sqlite(
            installed / BRAIN, f"SELECT memory_id FROM memories WHERE memory_id <> '{memory_id}' LIMIT 1"
        ).stdout.strip()
        assignment = f"memory_id = '{other}'"
    guard = sqlite(
        installed / BRAIN, "SELECT sql FROM sqlite_master WHERE name = 'memory_provenance_no_update'"
    ).stdout
    assert "BEFORE UPDATE" in guard
    run_sql(
        installed,
        "DROP TRIGGER memory_provenance_no_update;"
        f" UPDATE memory_provenance SET {assignment} WHERE provenance_id = '{provenance_id}'; {guard.strip()};",
    )
    verified = run_aimos("verify", timeout=120)
    assert verified.code == VERIFICATION_FAILED, verified.describe()
    assert "row_altered" in verified.both and "memory_provenance" in verified.both, verified.describe()
    assert "Traceback" not in verified.both and "internal error" not in verified.both, verified.describe()
