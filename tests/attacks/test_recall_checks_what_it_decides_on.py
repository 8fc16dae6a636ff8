"""Recall checks every value it decides on, not only what it discloses (issue 35, item 2).

The attacker edits one column of a memory row with plain sqlite3 (the guard triggers dropped and
put back, so the schema looks untouched). Before, setting `epistemic_label = 'poison_confirmed'`
made recall withhold the memory and the housekeeper *sign* "label:poison_confirmed" as the reason,
and `receipt verify`, `status` and `doctor` all said fine. Now each row the decision reads is checked
against what binds it (the label chain, the weight chain, the signed save and its event) before
anything is decided: the recall fails closed (exit 5) naming the memory and the column, signs no
receipt, and records a signed `recall_disclosure_failed` event.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import BRAIN, assert_refused, run_aimos, sqlite, table_counts

pytestmark = pytest.mark.timeout(120)

INTEGRITY = 5

# (column, the attacker's value, what the refusal names)
EDITS = [
    ("epistemic_label", "'poison_confirmed'", "epistemic_label"),  # withholds it, with a signed reason
    ("quarantine", "1", "quarantine"),  # withholds it as quarantined
    ("retrieval_weight_milli", "100", "retrieval_weight_milli"),  # ranks it last
    ("retrieval_weight_milli", "2000", "retrieval_weight_milli"),  # ranks it first
    ("clearance_level", "0", "clearance_level"),  # shows it to agents below its clearance
]


def _edit_and_restore_triggers(home: Path, sql: str) -> None:
    """Run ``sql`` on the memories table as someone with the file would: the guard triggers dropped
    and recreated exactly as they were."""
    db = home / BRAIN
    found = sqlite(
        db, "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'memories'", "-json"
    ).stdout
    triggers = json.loads(found or "[]")
    assert triggers, "no guard triggers on memories?"
    script = " ".join(f"DROP TRIGGER {t['name']};" for t in triggers) + f" {sql}; "
    script += " ".join(f"{t['sql']};" for t in triggers)
    done = sqlite(db, script)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(("column", "value", "named"), EDITS, ids=[f"{c}={v}" for c, v, _ in EDITS])
def test_a_recall_fails_closed_on_a_column_it_decides_on(
    installed: Path, column: str, value: str, named: str
) -> None:
    target = run_aimos("save", "kestrel nest on the north tower").ok().out.strip()
    run_aimos("save", "kestrel sightings logged in spring").ok()
    assert len(json.loads(run_aimos("recall", "kestrel", "--json").ok().out)["results"]) == 2
    before = table_counts(installed / BRAIN, ("recall_receipts",))

    _edit_and_restore_triggers(
        installed, f"UPDATE memories SET {column} = {value} WHERE memory_id = '{target}'"
    )
    refused = run_aimos("recall", "kestrel", "--json")
    assert_refused(refused, INTEGRITY)
    assert target in refused.err and named in refused.err, refused.describe()
    assert "nest on the north tower" not in refused.out
    assert table_counts(installed / BRAIN, ("recall_receipts",)) == before, "a receipt was signed"
    failed = sqlite(
        installed / BRAIN,
        "SELECT COUNT(*) FROM events WHERE operation = 'recall_disclosure_failed'"
        f" AND subject_memory_id = '{target}'",
    ).stdout.strip()
    assert failed == "1", "the failure was not recorded as a signed event"
    assert run_aimos("verify").code != 0  # the full verify names it too
