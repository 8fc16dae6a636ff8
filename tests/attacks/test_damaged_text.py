"""Attack: write bytes that are not UTF-8 into a TEXT column of the brain (the sqlite3 shell,
guards dropped: ``CAST(x'c3ff' AS TEXT)``), then use the brain.

Before: `aimos verify`, `recall`, `show`, `list`, `export` and `receipt list` died with
``internal error (UnicodeDecodeError)`` (or ``(SQLError)`` when SQL's JSON functions met it),
exit 1. Now every read that meets such text says the brain is damaged: exit 5, reason
``text_not_utf8``, naming the damaged cell (table.column and its memory or key) and the fix
(restore from the backups folder). Nothing of the damaged record is shown; nothing is changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.attacks import (
    INTEGRITY,
    VERIFICATION_FAILED,
    assert_refused_closed,
    drop_guards,
    run_sql,
    save,
)
from support.cli import assert_unchanged, run_aimos, snapshot

pytestmark = pytest.mark.timeout(180)

NOT_UTF8 = "CAST(x'c3ff' AS TEXT)"
TEXT = "The heron colony nests by the east lake"


def damage(home: Path, table: str, column: str, where: str) -> None:
    drop_guards(home, table)
    run_sql(home, f"UPDATE {table} SET {column} = {NOT_UTF8} WHERE {where}")


@pytest.fixture
def damaged_value(installed: Path) -> dict[str, Any]:
    """A memory whose value is not UTF-8, beside an intact one and a recall receipt."""
    target = save(TEXT)
    other = save("herons eat fish and frogs")
    receipt = run_aimos("recall", "herons", "--json").json()["receipt"]["receipt_id"]
    damage(installed, "memories", "value", f"memory_id = '{target}'")
    return {"home": installed, "target": target, "other": other, "receipt": receipt}


@pytest.mark.parametrize("json_out", [False, True], ids=["text", "json"])
def test_verify_reports_the_damaged_cell_with_exit_4(damaged_value: dict[str, Any], json_out: bool) -> None:
    """`aimos verify` cannot walk the damaged memory: it says so as a finding (exit 4) naming the
    cell, instead of dying with an internal error."""
    home, target = damaged_value["home"], damaged_value["target"]
    before = snapshot(home)
    result = run_aimos("verify", *(["--json"] if json_out else []))
    assert result.code == VERIFICATION_FAILED, result.describe()
    assert "internal error" not in result.both and "Traceback" not in result.both, result.describe()
    assert TEXT not in result.both
    named = f"not valid UTF-8 in memories.value (memory {target})"
    if json_out:
        report = json.loads(result.out)
        details = [c.get("detail") for c in report["in_database"]["event_chains"] if not c["ok"]]
        assert any(named in str(d) for d in details), report
        assert report["ok"] is False
    else:
        assert named in result.out, result.describe()
        assert "error: the brain does not verify" in result.err
    assert_unchanged(home, before)


@pytest.mark.parametrize(
    "command",
    [
        ("recall", "heron colony"),
        ("recall", "heron colony", "--json"),
        ("show", "{target}"),
        ("show", "{target}", "--json"),
        ("list",),
        ("list", "--json"),
        ("export", "--cognitive", "{home}/out.json"),
    ],
    ids=lambda c: " ".join(c),
)
def test_a_value_that_is_not_utf8_is_named_with_exit_5(
    damaged_value: dict[str, Any], command: tuple[str, ...]
) -> None:
    home, target = damaged_value["home"], damaged_value["target"]
    before = snapshot(home)
    args = [a.format(target=target, home=home) for a in command]
    result = run_aimos(*args)
    assert_refused_closed(
        result, INTEGRITY, "not valid UTF-8", f"memories.value (memory {target})", never=(TEXT,)
    )
    assert "aimos restore" in result.err and "backups" in result.err
    assert_unchanged(home, before)  # no failure event, no receipt: nothing was written
    assert not (home / "out.json").exists()


def test_the_intact_memory_is_still_shown(damaged_value: dict[str, Any]) -> None:
    shown = run_aimos("show", damaged_value["other"]).ok()
    assert shown.out.startswith("herons eat fish and frogs\n")


@pytest.mark.parametrize(
    ("column", "command"),
    [
        ("command", ("receipt", "list")),
        ("command", ("receipt", "show", "{receipt}")),
        ("evidence", ("receipt", "show", "{receipt}", "--json")),
        ("evidence", ("receipt", "verify", "{receipt}")),
        ("request_body", ("export-recall", "{receipt}", "-o", "{home}/recall.json")),
    ],
    ids=lambda c: c if isinstance(c, str) else " ".join(c),
)
def test_a_receipt_record_that_is_not_utf8_is_named_with_exit_5(
    damaged_value: dict[str, Any], column: str, command: tuple[str, ...]
) -> None:
    home, receipt = damaged_value["home"], damaged_value["receipt"]
    damage(home, "recall_receipts", column, f"receipt_id = '{receipt}'")
    args = [a.format(receipt=receipt, home=home) for a in command]
    assert_refused_closed(
        run_aimos(*args), INTEGRITY, "not valid UTF-8", f"recall_receipts.{column} (receipt_id {receipt})"
    )


def test_a_signed_event_that_is_not_utf8_is_named_with_exit_5(installed: Path) -> None:
    target = save(TEXT)
    event = run_aimos("show", target, "--json").json()["events"][0]["event_id"]
    damage(installed, "events", "signed_body", f"event_id = '{event}'")
    # a save's event body is stored deflated beside an empty text (migration 16): bytes where that
    # empty text belongs are damage the read itself names, before any verification (5)
    for args, code in (
        (("show", target), INTEGRITY),
        (("recall", "heron colony"), INTEGRITY),
    ):
        assert_refused_closed(run_aimos(*args), code, f"events.signed_body (event_id {event})", never=(TEXT,))
    verify = run_aimos("verify")
    assert verify.code == VERIFICATION_FAILED, verify.describe()
    assert f"events.signed_body (event_id {event})" in verify.out, verify.describe()


def test_brain_metadata_that_is_not_utf8_is_named_by_status(installed: Path) -> None:
    damage(installed, "brain_meta", "value", "key = 'company_id'")
    for args in (("status",), ("list",), ("save", "a new note")):
        assert_refused_closed(run_aimos(*args), INTEGRITY, "brain_meta.value (key company_id)")


def test_the_tui_memory_list_says_what_is_damaged(damaged_value: dict[str, Any]) -> None:
    """The TUI's memory list loads a page of rows: the damage is said on screen, no crash."""
    from support.tui import drive, notifications, settle

    async def scenario(pilot: Any) -> list[str]:
        await settle(pilot)
        return notifications(pilot.app)

    said = "\n".join(drive(scenario, size=(120, 30)))
    assert f"memories.value (memory {damaged_value['target']})" in said, said
    assert "aimos restore" in said, said
    assert "internal error" not in said


def test_json_out_of_list_is_valid_json_when_nothing_is_damaged(installed: Path) -> None:
    """The refusal above is about damage only: the same commands work on an intact brain."""
    target = save(TEXT)
    assert [m["memory_id"] for m in json.loads(run_aimos("list", "--json").ok().out)["memories"]] == [target]
    assert run_aimos("verify").ok()
