"""Bad input the TUI must meet with a clear screen, never a crash: a brain that fails
verification (edited outside aimos), a keychain that cannot give the agent's key when an action
needs a signature. Each case is a real brain, broken from outside the way a person's could be."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from support.cli import BRAIN, edit_outside, run_aimos, sqlite
from support.tui import (
    break_initial_weight,
    choose,
    counts,
    drive,
    lines_in,
    lock_keystore,
    memory_id_at,
    notifications,
    on_top,
    paste,
    recall,
    run_recall,
    save,
    screen_text,
    settle,
    text_of,
    value,
)
from textual.pilot import Pilot
from textual.widgets import Select, Static, TextArea

from aimos.tui.detail import MemoryScreen
from aimos.tui.dialogs import ConfirmDialog, MessageDialog
from aimos.tui.memories import MemoriesScreen
from aimos.tui.memory_table import MemoryTable
from aimos.tui.recall import ReceiptScreen
from aimos.tui.status import StatusScreen


async def open_by_id(pilot: Pilot[Any], memory_id: str) -> MemoryScreen:
    table = pilot.app.screen.query_one(MemoryTable)
    ids = [memory_id_at(table, i) for i in range(len(table.rowids))]
    await pilot.press("home", *["down"] * ids.index(memory_id), "enter")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, MemoryScreen) and screen.memory_id == memory_id
    return screen


# --- a brain that fails verification -------------------------------------------------------------
def test_an_edited_memory_says_it_does_not_verify_and_why_in_red(installed: Path) -> None:
    edited = save("The heron colony nests by the east lake")
    intact = save("Herons eat fish and frogs")
    break_initial_weight(installed, edited)

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app.screen, MemoriesScreen)
        assert len(app.screen.query_one(MemoryTable).rowids) == 2, "the list still shows every memory"
        screen = await open_by_id(pilot, edited)
        verification = screen.query_one("#detail-verification", Static)
        text = text_of(verification)
        assert text.startswith("✗ DOES NOT VERIFY"), text
        assert "unattested_initial_weight" in text, "it says why"
        assert lines_in(verification, "red") == [text], "the whole verdict is red"
        assert verification.has_class("failed")
        assert "DOES NOT VERIFY" in screen_text(app), "visible without scrolling"
        await pilot.press("escape")
        await pilot.pause()
        other = await open_by_id(pilot, intact)
        assert text_of(other.query_one("#detail-verification", Static)).startswith("✓ verifies")

    drive(scenario, size=(100, 40))


def test_verify_all_names_the_memory_that_fails_in_red(installed: Path) -> None:
    edited = save("The heron colony nests by the east lake")
    save("Herons eat fish and frogs")
    break_initial_weight(installed, edited)

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await pilot.press("3")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, StatusScreen)
        await pilot.press("v")
        await settle(pilot)
        assert on_top(app) is screen, "no error dialog: the verdict is the answer"
        assert screen.verdict is not None and not screen.verdict["ok"]
        verdict = screen.query_one("#status-verify", Static)
        text = text_of(verdict)
        assert text.startswith("✗ THE BRAIN DOES NOT VERIFY"), text
        red = lines_in(verdict, "red")
        assert any(edited in line and "unattested_initial_weight" in line for line in red), red
        assert verdict.has_class("failed")
        assert edited in screen_text(app)
        assert not screen.verifying
        await pilot.press("v")  # it can be run again
        await settle(pilot)
        assert edited in text_of(verdict)

    drive(scenario, size=(100, 40))


def test_a_recall_that_meets_the_edited_memory_fails_closed_on_screen(installed: Path) -> None:
    edited = save("The heron colony nests by the east lake")
    break_initial_weight(installed, edited)
    before = counts(installed, ("recall_receipts",))

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        screen = await run_recall(pilot, "heron colony")
        assert isinstance(app.screen, MessageDialog)
        text = screen_text(app)
        assert "Could not recall" in text
        assert edited in text, "it names the memory"
        assert "east lake" not in text, "nothing of it is disclosed"
        await pilot.press("escape")
        await pilot.pause()
        assert on_top(app) is screen and screen.result is None

    drive(scenario, size=(100, 30))
    assert counts(installed, ("recall_receipts",)) == before


def test_a_receipt_edited_after_the_recall_verifies_invalid_in_red(installed: Path) -> None:
    save("The boiler is serviced every October")

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        screen = await run_recall(pilot, "boiler")
        assert screen.result is not None
        receipt = str(screen.result.receipt["receipt_id"])
        root = str(screen.result.receipt["merkle_root"])
        forged = ("0" if root[0] != "0" else "1") + root[1:]
        edit_outside(
            installed,
            "recall_receipts",
            f"UPDATE recall_receipts SET merkle_root = '{forged}' WHERE receipt_id = '{receipt}';",
        )
        await pilot.press("t")
        await pilot.pause()
        receipt_screen = app.screen
        assert isinstance(receipt_screen, ReceiptScreen)
        await pilot.press("v")
        await pilot.pause()
        verdict = receipt_screen.query_one("#receipt-verify", Static)
        text = text_of(verdict)
        assert text.startswith("INVALID: a check failed"), text
        red = lines_in(verdict, "red")
        assert any(line.startswith("✗ Merkle root") for line in red), red
        assert verdict.has_class("failed")
        assert "INVALID" in screen_text(app)

    drive(scenario, size=(100, 40))


# --- the keychain cannot give the key --------------------------------------------------------------
def test_locked_keychain_feedback_says_nothing_was_signed(installed: Path) -> None:
    memory = save("The boiler is serviced every October")
    recall("boiler serviced")
    lock_keystore(installed)
    before = counts(installed)

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        screen = await open_by_id(pilot, memory)
        await pilot.press("g")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("y")
        await pilot.pause()
        assert isinstance(app.screen, MessageDialog)
        text = screen_text(app)
        assert "Could not give feedback" in text
        assert "keystore" in text, "it says what is wrong"
        assert "Nothing was signed or changed." in text
        assert "Traceback" not in text
        await pilot.press("enter")
        await pilot.pause()
        assert on_top(app) is screen
        assert "1 point," in text_of(screen.query_one("#detail-trajectory", Static))

    drive(scenario, size=(100, 40))
    assert counts(installed) == before


def test_locked_keychain_label_correct_and_recall_sign_nothing(installed: Path) -> None:
    memory = save("The boiler is serviced every October")
    lock_keystore(installed)
    before = counts(installed)

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        screen = await open_by_id(pilot, memory)
        await pilot.press("l")
        await pilot.pause()
        await choose(pilot, app.screen.query_one("#judgment", Select), "dispute")
        await pilot.press("tab")
        await paste(pilot, "doubtful")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, MessageDialog)
        assert "Could not record your judgment (dispute)" in screen_text(app)
        assert "Nothing was signed or changed." in screen_text(app)
        await pilot.press("enter")
        await pilot.pause()
        assert on_top(app) is screen

        await pilot.press("c")
        await pilot.pause()
        area = app.screen.query_one("#correction", TextArea)
        area.focus()
        await pilot.press("end", "ctrl+u")
        await paste(pilot, "The boiler is serviced every November")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, MessageDialog)
        text = screen_text(app)
        assert "Could not save the correction" in text and "Nothing was signed or changed." in text
        await pilot.press("enter")
        await pilot.pause()
        assert on_top(app) is screen, "no new version is opened"
        await pilot.press("escape")
        await pilot.pause()

        await run_recall(pilot, "boiler")
        assert isinstance(app.screen, MessageDialog)
        text = screen_text(app)
        assert "Could not recall" in text and "Nothing was signed or changed." in text

    drive(scenario, size=(100, 30))
    assert counts(installed) == before


def test_unlocking_the_keychain_again_lets_the_same_session_sign(installed: Path) -> None:
    memory = save("The boiler is serviced every October")
    recall("boiler serviced")
    aside = lock_keystore(installed)
    before = counts(installed)

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        screen = await open_by_id(pilot, memory)
        await pilot.press("g", "y")
        await pilot.pause()
        assert isinstance(app.screen, MessageDialog) and "Nothing was signed" in screen_text(app)
        await pilot.press("enter")
        await pilot.pause()
        from support.cli import keystore_dir

        shutil.move(str(aside), str(keystore_dir(installed)))  # unlocked again
        await pilot.press("g", "y")
        await pilot.pause()
        assert "Signed outcome recorded" in screen_text(app)
        await pilot.press("enter")
        await pilot.pause()
        assert "2 points," in text_of(screen.query_one("#detail-trajectory", Static))

    drive(scenario, size=(100, 40))
    assert counts(installed)["outcomes"] == before["outcomes"] + 1


# --- a damaged search index ------------------------------------------------------------------------
def damage_search_index(home: Path) -> None:
    """Damage the word index outside aimos (its segments gone, as a bad disk or a crash could)."""
    done = sqlite(home / BRAIN, "DELETE FROM memory_fts_data WHERE id > 1;")
    assert done.returncode == 0, done.stderr


def test_a_damaged_search_index_says_so_when_filtering_and_the_list_stays(installed: Path) -> None:
    """The word filter reads the search index: damaged, it must name the problem and the fix
    (aimos index rebuild) in a dialog, not end the app with a traceback; closing the dialog must
    not bring it back in a loop (the list refreshes itself when it comes to the front again)."""
    first = save("The boiler is serviced every October")
    second = save("Herons eat fish and frogs")
    damage_search_index(installed)

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        screen = app.screen
        assert isinstance(screen, MemoriesScreen)
        table = screen.query_one(MemoryTable)
        assert len(table.rowids) == 2, "listing does not need the word index"
        await pilot.press("slash")
        await paste(pilot, "boiler")
        await pilot.press("enter")
        await settle(pilot)
        assert app.is_running
        assert isinstance(app.screen, MessageDialog), type(app.screen).__name__
        text = screen_text(app)
        assert "Could not list the memories" in text
        assert "damaged" in text and "aimos index rebuild" in text, text
        assert "Traceback" not in text
        await pilot.press("escape")
        await settle(pilot)
        assert on_top(app) is screen, f"closing the error opened another: {type(app.screen).__name__}"
        assert any("damaged" in n for n in notifications(app)), "the refresh on return says so quietly"
        ids = {memory_id_at(table, i) for i in range(len(table.rowids))}
        assert ids == {first, second}, "the list is left as it was"
        await pilot.press("escape")  # clears the filter: the whole list, no index needed
        await settle(pilot)
        assert on_top(app) is screen and len(table.rowids) == 2

    drive(scenario, size=(100, 30))


def test_a_receipt_whose_evidence_was_rewritten_opens_and_verifies_invalid(installed: Path) -> None:
    """A receipt edited outside aimos may hold anything where its numbers were: the receipt
    screen shows what it holds (or says it cannot), never a traceback, and v says INVALID."""
    save("The boiler is serviced every October")
    first = recall("boiler")["receipt"]["receipt_id"]
    second = recall("boiler serviced")["receipt"]["receipt_id"]
    edit_outside(
        installed,
        "recall_receipts",
        "UPDATE recall_receipts SET evidence = json_set(evidence, '$[0].trust', 'high')"
        f" WHERE receipt_id = '{first}';"
        f" UPDATE recall_receipts SET evidence = '\"not a list\"' WHERE receipt_id = '{second}';",
    )

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        for receipt, shown in ((first, "high"), (second, "cannot be shown")):
            screen = ReceiptScreen(receipt)
            await app.push_screen(screen)
            await pilot.pause()
            assert app.is_running and app.screen is screen
            text = screen_text(app)
            assert shown in text, text
            assert "Traceback" not in text
            await pilot.press("v")
            await pilot.pause()
            assert app.is_running and app.screen is screen
            assert screen.checks is not None and not all(c["ok"] for c in screen.checks)
            assert text_of(screen.query_one("#receipt-verify", Static)).startswith("INVALID")
            await pilot.press("escape")
            await pilot.pause()

    drive(scenario, size=(100, 40))


def test_a_label_event_rewritten_outside_shows_the_memory_failing_not_a_traceback(installed: Path) -> None:
    """The label history is read from the signed events: one edited outside aimos (its reason
    no longer text) must still open, say DOES NOT VERIFY in red, and show what it now records."""
    memory = save("The heron colony nests by the east lake")
    run_aimos("label", memory, "dispute", "--reason", "not sure about it").ok()
    event = value(
        installed,
        f"SELECT authority_event_id FROM memory_classifications WHERE memory_id = '{memory}'"
        " ORDER BY rowid DESC LIMIT 1",
    )
    edit_outside(
        installed,
        "events",
        f"UPDATE events SET signed_body = json_set(signed_body, '$.metadata.reason', 42)"
        f" WHERE event_id = '{event}';",
    )

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        screen = await open_by_id(pilot, memory)
        assert app.is_running and app.screen is screen
        verification = screen.query_one("#detail-verification", Static)
        assert text_of(verification).startswith("✗ DOES NOT VERIFY"), text_of(verification)
        assert lines_in(verification, "red")
        labels = text_of(screen.query_one("#detail-labels", Static))
        assert "disputed" in labels and "42" in labels, labels
        assert "Traceback" not in screen_text(app)

    drive(scenario, size=(100, 50))
