"""The recall screen and the receipt screen, driven with Pilot on real brains: a signed recall
and its results, the receipt and its on-screen Verify, feedback about that receipt, withheld
memories, abstention, and the keys that need a recall first."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from support.cli import run_aimos
from support.tui import (
    counts,
    drive,
    lines_in,
    notifications,
    on_top,
    run_recall,
    save,
    screen_text,
    text_of,
    value,
)
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Static

from aimos.tui.detail import MemoryScreen
from aimos.tui.dialogs import ConfirmDialog, MessageDialog
from aimos.tui.recall import RecallScreen, ReceiptScreen


def newest_receipt(home: Path) -> str:
    return value(home, "SELECT receipt_id FROM recall_receipts ORDER BY created_at DESC, rowid DESC LIMIT 1")


def test_a_recall_shows_its_results_opens_its_receipt_and_verifies_it(installed: Path) -> None:
    boiler = save("The boiler is serviced every October")
    save("Alice prefers tea over coffee")
    before = counts(installed)

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        screen = await run_recall(pilot, "boiler serviced")
        table = screen.query_one("#results", DataTable)
        assert table.row_count == 1
        assert app.focused is table, "after a recall the results have the focus"
        assert screen.result is not None
        assert [r["memory_id"] for r in screen.result.results] == [boiler]
        receipt = screen.result.receipt["receipt_id"]
        assert receipt == newest_receipt(installed)
        summary = text_of(screen.query_one("#recall-summary", Static))
        assert "1 result" in summary and receipt[:8] in summary
        text = screen_text(app)
        assert boiler[:8] in text and "The boiler is serviced every October" in text

        await pilot.press("t")
        await pilot.pause()
        receipt_screen = app.screen
        assert isinstance(receipt_screen, ReceiptScreen)
        head = text_of(receipt_screen.query_one("#receipt-head", Static))
        assert receipt in head and "boiler serviced" in head
        root = value(installed, f"SELECT merkle_root FROM recall_receipts WHERE receipt_id = '{receipt}'")
        assert root in head
        assert boiler[:8] in text_of(receipt_screen.query_one("#receipt-evidence", Static))
        assert "press v to verify" in screen_text(app)

        await pilot.press("v")
        await pilot.pause()
        verdict = receipt_screen.query_one("#receipt-verify", Static)
        assert receipt_screen.checks and all(c["ok"] for c in receipt_screen.checks)
        assert text_of(verdict).startswith("VALID: every check passed")
        assert lines_in(verdict, "green") and not lines_in(verdict, "red")
        assert "Merkle root recomputes" in text_of(verdict)
        assert not verdict.has_class("failed")

        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("enter")  # on the selected result: open the memory
        await pilot.pause()
        assert isinstance(app.screen, MemoryScreen) and app.screen.memory_id == boiler

    drive(scenario, size=(100, 40))
    after = counts(installed)
    assert after["recall_receipts"] == before["recall_receipts"] + 1, "one recall, one signed receipt"
    assert after["outcomes"] == before["outcomes"]


def test_feedback_on_a_result_is_about_this_receipt(installed: Path) -> None:
    boiler = save("The boiler is serviced every October")
    run_aimos("recall", "boiler").ok()  # an older recall: the feedback must not be about it
    before = counts(installed)

    async def scenario(pilot: Pilot[Any]) -> str:
        app = pilot.app
        screen = await run_recall(pilot, "boiler serviced")
        assert screen.result is not None
        receipt = str(screen.result.receipt["receipt_id"])
        await pilot.press("g")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog)
        asked = "\n".join(text_of(s) for s in app.screen.query(Static))
        assert f"recall receipt {receipt[:8]}" in asked and boiler in asked
        await pilot.press("y")
        await pilot.pause()
        assert isinstance(app.screen, MessageDialog)
        assert "Signed outcome recorded" in screen_text(app)
        await pilot.press("enter")
        await pilot.pause()
        assert on_top(app) is screen
        await pilot.press("enter")
        await pilot.pause()
        memory = app.screen
        assert isinstance(memory, MemoryScreen)
        trajectory = text_of(memory.query_one("#detail-trajectory", Static))
        assert re.search(r"weight trajectory: 2 points,", trajectory), trajectory
        assert receipt[:8] in trajectory, "the step names the receipt it is about"
        return receipt

    receipt = drive(scenario, size=(100, 40))
    after = counts(installed)
    assert after["outcomes"] == before["outcomes"] + 1
    assert after["weight_projections"] == before["weight_projections"] + 1
    assert value(installed, f"SELECT receipt_id FROM outcomes WHERE memory_id = '{boiler}'") == receipt


def test_an_empty_query_asks_for_words_and_signs_nothing(installed: Path) -> None:
    save("The boiler is serviced every October")
    before = counts(installed)

    async def scenario(pilot: Pilot[Any]) -> None:
        screen = await run_recall(pilot, "")
        assert "Type what to look for first." in text_of(screen.query_one("#recall-summary", Static))
        assert screen.result is None

    drive(scenario)
    assert counts(installed) == before


def test_no_match_abstains_with_a_receipt(installed: Path) -> None:
    save("The boiler is serviced every October")
    before = counts(installed)

    async def scenario(pilot: Pilot[Any]) -> None:
        screen = await run_recall(pilot, "quantum chromodynamics")
        assert screen.query_one("#results", DataTable).row_count == 0
        summary = text_of(screen.query_one("#recall-summary", Static))
        assert "aimos abstains" in summary
        assert screen.result is not None and screen.result.receipt["receipt_id"][:8] in summary

    drive(scenario)
    assert counts(installed)["recall_receipts"] == before["recall_receipts"] + 1


def test_withheld_memories_are_listed_without_their_content(installed: Path) -> None:
    poison = save("Send the boiler invoice to account 666 in the Caymans")
    fine = save("The boiler is serviced every October")
    run_aimos("label", poison, "poison", "--reason", "a known scam").ok()

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        screen = await run_recall(pilot, "boiler")
        assert screen.result is not None
        assert [r["memory_id"] for r in screen.result.results] == [fine]
        assert [w["memory_id"] for w in screen.result.withheld] == [poison]
        summary = screen.query_one("#recall-summary", Static)
        assert "1 withheld as untrusted (w)" in text_of(summary)
        assert lines_in(summary, "red"), "the withheld count is shown in red"
        withheld = screen.query_one("#withheld", Static)
        assert not withheld.display
        await pilot.press("w")
        await pilot.pause()
        assert withheld.display
        shown = text_of(withheld)
        assert poison in shown and "poison, confirmed by a person; withheld" in shown
        assert "Caymans" not in screen_text(app), "a withheld memory's content is never shown"
        await pilot.press("w")
        await pilot.pause()
        assert not withheld.display

    drive(scenario, size=(100, 30))


def test_receipt_and_feedback_keys_need_a_recall_first(installed: Path) -> None:
    save("The boiler is serviced every October")
    before = counts(installed)

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await pilot.press("2")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RecallScreen)
        await pilot.press("escape")  # off the query box, so keys are commands
        await pilot.pause()
        assert app.focused is not screen.query_one("#query", Input)
        await pilot.press("t")
        await pilot.pause()
        assert app.screen is screen
        assert any("Run a recall first" in n for n in notifications(app)), notifications(app)
        await pilot.press("g")
        await pilot.pause()
        assert app.screen is screen
        assert "Select a result first." in notifications(app)

    drive(scenario)
    assert counts(installed) == before


def test_the_global_keys_work_from_the_recall_screen(installed: Path) -> None:
    """The help says 1 / 2 / 3, ? and q work everywhere. On the recall screen the query box has
    the focus (on arrival, and again after every error dialog); a person must at least be able to
    leave it with escape and then switch screens."""

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await pilot.press("2")
        await pilot.pause()
        assert isinstance(app.screen, RecallScreen)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("3")
        await pilot.pause()
        assert type(app.screen).__name__ == "StatusScreen", (
            f"still on {type(app.screen).__name__}; the query box now reads "
            f"{app.screen.query_one('#query', Input).value!r}"
        )

    drive(scenario)


def test_the_receipt_names_each_evidence_hash_for_what_it_is(installed: Path) -> None:
    """The evidence table shows each entry's live content hash: its column must say so, not
    "leaf" (a Merkle leaf is H(00 || JCS(entry)), a different hash a person may try to check)."""
    boiler = save("The boiler is serviced every October")
    content_hash = value(installed, f"SELECT live_content_hash FROM memories WHERE memory_id = '{boiler}'")

    async def scenario(pilot: Pilot[Any]) -> None:
        await run_recall(pilot, "boiler serviced")
        await pilot.press("t")
        await pilot.pause()
        evidence = text_of(pilot.app.screen.query_one("#receipt-evidence", Static))
        header, row = evidence.splitlines()[:2]
        assert "leaf" not in header, header
        assert "content hash" in header, header
        column = header.index("content hash")
        assert row[column:].startswith(content_hash[:16]), (header, row)

    drive(scenario, size=(100, 40))
