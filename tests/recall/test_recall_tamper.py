"""Edits made to the brain file outside aimos (the sqlite3 shell, append-only triggers dropped) and
what the next recall does about them. SPEC 1.3 (an edit made outside the writer is detected),
SPEC 4 (live weight and label are tied to the newest row of their chains) and SPEC 8 (before
disclosure every result is verified: save signature and epoch, live content hash, chain
topology, version state; a failure fails the whole recall closed, exit 5, naming the memory).

Each test edits one thing the recall would rely on and expects the recall that would disclose
the edited memory to fail closed: exit 5, the memory id on stderr, nothing on stdout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import BRAIN, UUID_RE, Result, run_aimos, sqlite

from aimos.crypto.commitments import live_content_hash

pytestmark = pytest.mark.timeout(120)

INTEGRITY = 5
CANARY = "SECRET-0A1B2C3D"


def save(text: str, *options: str) -> str:
    result = run_aimos("save", text, *options).ok()
    memory_id = result.out.strip()
    assert UUID_RE.match(memory_id), result.describe()
    return memory_id


def row(home: Path, memory_id: str) -> dict[str, Any]:
    proc = sqlite(home / BRAIN, f"SELECT * FROM memories WHERE memory_id = '{memory_id}'", "-json")
    assert proc.returncode == 0, proc.stderr
    found: list[dict[str, Any]] = json.loads(proc.stdout)
    assert len(found) == 1
    return found[0]


def edit(home: Path, table: str, sql: str) -> None:
    """Drop the table's BEFORE UPDATE / DELETE triggers and run ``sql`` with the sqlite3 shell."""
    proc = sqlite(
        home / BRAIN,
        f"SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = '{table}'"
        " AND (sql LIKE '%BEFORE UPDATE%' OR sql LIKE '%BEFORE DELETE%')",
    )
    assert proc.returncode == 0, proc.stderr
    drops = " ".join(f"DROP TRIGGER {name};" for name in proc.stdout.split())
    done = sqlite(home / BRAIN, f"{drops} {sql}")
    assert done.returncode == 0, done.stderr


def assert_fails_closed(result: Result, memory_id: str, *never_shown: str) -> None:
    assert result.code == INTEGRITY, f"the edited memory was not caught\n{result.describe()}"
    assert "Traceback" not in result.both, result.describe()
    assert result.out == "", f"something was disclosed\n{result.describe()}"
    assert memory_id in result.err, result.describe()
    assert "error:" in result.err and "hint:" in result.err, result.describe()
    for text in never_shown:
        assert text not in result.both, result.describe()


def failure_events(home: Path, memory_id: str) -> int:
    proc = sqlite(
        home / BRAIN,
        "SELECT COUNT(*) FROM events WHERE operation = 'recall_disclosure_failed'"
        f" AND subject_memory_id = '{memory_id}'",
    )
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout.strip())


def test_value_edited_with_a_recomputed_live_hash_fails_closed(installed: Path) -> None:
    target = save("The heron colony nests by the east lake")
    save("herons eat fish and frogs")
    forged = dict(row(installed, target), value="The heron colony nests by the west quarry")
    new_hash = live_content_hash(forged).hex()
    edit(
        installed,
        "memories",
        f"UPDATE memories SET value = '{forged['value']}', live_content_hash = '{new_hash}'"
        f" WHERE memory_id = '{target}'",
    )
    result = run_aimos("recall", "heron colony nests")
    assert_fails_closed(result, target, "west quarry", "east lake")
    assert failure_events(installed, target) == 1


def test_clearance_lowered_in_the_file_fails_closed_for_a_low_agent(installed: Path) -> None:
    run_aimos("agent", "enroll", "low", "--clearance", "3").ok()
    secret = save("heron survey grid references for the reserve", "--clearance", "7")
    assert "grid references" not in run_aimos("recall", "heron survey grid", "--as", "low").ok().both
    forged = dict(row(installed, secret), clearance_level=2)
    new_hash = live_content_hash(forged).hex()
    edit(
        installed,
        "memories",
        f"UPDATE memories SET clearance_level = 2, live_content_hash = '{new_hash}' WHERE memory_id = '{secret}'",
    )
    result = run_aimos("recall", "heron survey grid", "--as", "low")
    assert_fails_closed(result, secret, "grid references")


def test_quarantine_lifted_in_the_file_fails_closed(installed: Path) -> None:
    """A canary kept in retained quarantine (weight 0.1, signed `retained_quarantine` in its
    memory_saved event) must not be disclosed because its row was edited to look clean."""
    canary = save(f"The badger sett key is {CANARY} under the badger stone")
    save("badgers dig setts in woodland")
    save("the ferry leaves at noon")
    before = run_aimos("recall", "badger", "--json").ok()
    assert CANARY not in before.out and canary not in [
        r["memory_id"] for r in json.loads(before.out)["results"]
    ]
    edit(
        installed,
        "memories",
        f"UPDATE memories SET quarantine = 0, retrieval_weight_milli = 1000 WHERE memory_id = '{canary}'",
    )
    result = run_aimos("recall", "badger")
    assert_fails_closed(result, canary, CANARY)


@pytest.mark.parametrize(
    ("column", "value"),
    [("retrieval_weight_milli", 3000), ("epistemic_label", "'supported'")],
    ids=["weight", "label"],
)
def test_live_weight_or_label_edited_in_the_file_fails_closed(
    installed: Path, column: str, value: Any
) -> None:
    """No signed projection or classification supports the edited value (the memory has none:
    its live weight must be 1.000 and its label `unverified`), yet a receipt would sign it."""
    target = save("The otter holt is under the old willow")
    save("otters eat fish")
    save("the ferry leaves at noon")
    edit(installed, "memories", f"UPDATE memories SET {column} = {value} WHERE memory_id = '{target}'")
    result = run_aimos("recall", "otter holt willow", "--json")
    assert_fails_closed(result, target, "old willow")


def test_deleted_supersession_link_fails_closed(installed: Path) -> None:
    """The new version's signed save names the version it supersedes; removing the link row
    must not make the old version a current head again."""
    old = save("The lynx enclosure is in zone four")
    new = run_aimos("correct", old, "The lynx enclosure is in zone five").ok().out.strip()
    assert [
        r["memory_id"]
        for r in json.loads(run_aimos("recall", "lynx enclosure", "--json").ok().out)["results"]
    ] == [new]
    edit(installed, "memory_supersessions", f"DELETE FROM memory_supersessions WHERE old_memory_id = '{old}'")
    result = run_aimos("recall", "lynx enclosure", "--json")
    # the link was the table's newest row: the write's seal check refuses the recall before any
    # memory is read, naming the table rather than the memory
    assert result.code == INTEGRITY and result.out == "", result.describe()
    assert "memory_supersessions" in result.err and "zone four" not in result.both, result.describe()
    verified = run_aimos("verify", "--json")
    assert verified.code == 4, verified.describe()
    reasons = {f["reason"] for f in json.loads(verified.out)["brain"]["failures"]}
    assert "row_missing" in reasons, verified.describe()
