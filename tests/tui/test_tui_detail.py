"""A memory's screen, driven with Pilot on real brains: what it shows, and the signed actions it
offers (feedback, label, correct), each asked first, each checked against the brain's tables and
against what the screen shows afterwards; refused and cancelled actions change nothing."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from support.tui import (
    choose,
    counts,
    drive,
    fill_label,
    memory_field,
    on_top,
    open_memory,
    paste,
    recall,
    save,
    screen_text,
    section,
    table_rows,
    text_of,
    type_text,
    value,
)
from textual.pilot import Pilot
from textual.widgets import Input, Select, Static, TextArea

from aimos.tui.detail import MemoryScreen
from aimos.tui.dialogs import ConfirmDialog, CorrectDialog, LabelDialog, MessageDialog
from aimos.tui.memory_table import MemoryTable


def points(screen: MemoryScreen) -> int:
    found = re.search(r"weight trajectory: (\d+) points?,", section(screen, "trajectory"))
    assert found, section(screen, "trajectory")
    return int(found.group(1))


def dialog_text(pilot: Pilot[Any]) -> str:
    return "\n".join(text_of(s) for s in pilot.app.screen.query(Static))


def test_the_detail_screen_shows_the_memory_and_escape_goes_back(installed: Path) -> None:
    memory = save("The boiler is serviced every October", "--key", "home:boiler", "--type", "fact")

    async def scenario(pilot: Pilot[Any]) -> None:
        screen = await open_memory(pilot, memory)
        assert "The boiler is serviced every October" in section(screen, "value")
        fields = section(screen, "fields")
        for expected in (memory, "home:boiler", "fact / personal", "not judged", "1 of 1 (current)"):
            assert expected in fields
        verification = section(screen, "verification")
        assert verification.startswith("✓ verifies"), verification
        assert not screen.query_one("#detail-verification").has_class("failed")
        assert memory in section(screen, "versions")
        assert points(screen) == 1
        assert "no outcomes yet" in section(screen, "trajectory")
        assert "label history: none" in section(screen, "labels")
        assert " saved " in section(screen, "provenance") and "SAVE" not in section(screen, "provenance")
        assert "saved" in section(screen, "events") and "memory_saved" not in section(screen, "events")
        assert "✓ verifies" in screen_text(pilot.app)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(pilot.app.screen, MemoryScreen)
        assert pilot.app.screen.query_one(MemoryTable)

    drive(scenario, size=(100, 40))


def test_good_feedback_is_signed_and_the_trajectory_gains_a_point(installed: Path) -> None:
    memory = save("The boiler is serviced every October")
    got = recall("boiler serviced")
    assert [r["memory_id"] for r in got["results"]] == [memory]
    before = counts(installed)

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        screen = await open_memory(pilot, memory)
        assert points(screen) == 1
        steps_before = table_rows(screen.query_one("#detail-trajectory", Static))
        await pilot.press("g")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog)
        asked = dialog_text(pilot)
        assert "GOOD" in asked and memory in asked and "agent cli" in asked
        assert counts(installed) == before, "nothing is signed before the answer"
        await pilot.press("y")
        await pilot.pause()
        assert isinstance(app.screen, MessageDialog)
        told = dialog_text(pilot)
        assert "Signed outcome recorded" in screen_text(app)
        outcome_id = value(installed, f"SELECT outcome_id FROM outcomes WHERE memory_id = '{memory}'")
        assert outcome_id and outcome_id in told
        assert "good recorded; the weight rises" in " ".join(told.split()), told  # and why
        await pilot.press("enter")
        await pilot.pause()
        assert on_top(app) is screen
        assert points(screen) == 2, section(screen, "trajectory")
        assert table_rows(screen.query_one("#detail-trajectory", Static)) == steps_before + 1
        assert "no outcomes yet" not in section(screen, "trajectory")
        weight = int(memory_field(installed, memory, "retrieval_weight_milli"))
        assert weight > 1000, "good feedback raises the weight"
        assert f"{weight / 1000:.3f}" in section(screen, "fields")
        assert section(screen, "verification").startswith("✓ verifies")

    drive(scenario, size=(100, 40))
    after = counts(installed)
    assert after["outcomes"] == before["outcomes"] + 1
    assert after["weight_projections"] == before["weight_projections"] + 1
    receipt = value(installed, f"SELECT receipt_id FROM outcomes WHERE memory_id = '{memory}'")
    assert receipt == got["receipt"]["receipt_id"], "feedback is about the agent's latest recall of it"


def test_bad_feedback_lowers_the_weight(installed: Path) -> None:
    memory = save("The boiler is serviced every October")
    recall("boiler serviced")

    async def scenario(pilot: Pilot[Any]) -> None:
        screen = await open_memory(pilot, memory)
        await pilot.press("b")
        await pilot.pause()
        assert "BAD" in dialog_text(pilot)
        await pilot.press("y")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert points(screen) == 2

    drive(scenario, size=(100, 40))
    assert int(memory_field(installed, memory, "retrieval_weight_milli")) < 1000


def test_cancelled_feedback_signs_nothing(installed: Path) -> None:
    memory = save("The boiler is serviced every October")
    recall("boiler serviced")
    before = counts(installed)

    async def scenario(pilot: Pilot[Any]) -> None:
        screen = await open_memory(pilot, memory)
        for cancel in ("n", "escape"):
            await pilot.press("g")
            await pilot.pause()
            assert isinstance(pilot.app.screen, ConfirmDialog)
            await pilot.press(cancel)
            await pilot.pause()
            assert on_top(pilot.app) is screen
        assert points(screen) == 1

    drive(scenario, size=(100, 40))
    assert counts(installed) == before


def test_feedback_with_no_recall_to_be_about_says_so_and_signs_nothing(installed: Path) -> None:
    memory = save("Never recalled yet")
    before = counts(installed)

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        screen = await open_memory(pilot, memory)
        await pilot.press("g", "y")
        await pilot.pause()
        assert isinstance(app.screen, MessageDialog)
        text = screen_text(app)
        assert "Could not give feedback" in text
        assert "Nothing was signed or changed." in text
        await pilot.press("enter")
        await pilot.pause()
        assert on_top(app) is screen
        assert points(screen) == 1

    drive(scenario, size=(100, 40))
    assert counts(installed) == before


def test_label_dispute_is_signed_and_the_history_gains_a_row(installed: Path) -> None:
    memory = save("The moon is made of cheese")
    before = counts(installed)

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        screen = await open_memory(pilot, memory)
        assert "label history: none" in section(screen, "labels")
        rows_before = table_rows(screen.query_one("#detail-labels", Static))
        await pilot.press("l")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, LabelDialog)
        await choose(pilot, dialog.query_one("#judgment", Select), "dispute")
        assert not dialog.query_one("#passphrase", Input).display, "dispute needs no passphrase"
        await pilot.press("tab")
        await paste(pilot, "astronauts brought back rock")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, MessageDialog), dialog_text(pilot)
        assert "Signed label recorded" in screen_text(app)
        assert "not judged -> disputed: a person doubts it" in dialog_text(pilot)
        await pilot.press("enter")
        await pilot.pause()
        assert on_top(app) is screen
        assert table_rows(screen.query_one("#detail-labels", Static)) == rows_before + 1
        labels = section(screen, "labels")
        assert "disputed" in labels and "astronauts brought back rock" in labels
        assert "disputed: a person doubts it" in section(screen, "fields")

    drive(scenario, size=(100, 40))
    after = counts(installed)
    assert after["memory_classifications"] == before["memory_classifications"] + 1
    assert memory_field(installed, memory, "epistemic_label") == "disputed"


def test_label_dialog_asks_for_a_judgment_a_reason_and_the_passphrase_before_signing(
    installed: Path,
) -> None:
    memory = save("The moon is made of cheese")
    before = counts(installed)

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        screen = await open_memory(pilot, memory)
        await pilot.press("l")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, LabelDialog)
        error = dialog.query_one("#dialog-error", Static)
        await pilot.click("#sign")
        await pilot.pause()
        assert app.screen is dialog and "Choose a judgment" in text_of(error)
        await choose(pilot, dialog.query_one("#judgment", Select), "refute")
        assert dialog.query_one("#passphrase", Input).display, "refute raises trust: the passphrase box shows"
        await pilot.click("#sign")
        await pilot.pause()
        assert app.screen is dialog and "Give a reason" in text_of(error)
        dialog.query_one("#reason", Input).focus()
        await type_text(pilot, "it is fine")
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is dialog and "master passphrase" in text_of(error)
        await pilot.press("escape")
        await pilot.pause()
        assert on_top(app) is screen

    drive(scenario, size=(100, 40))
    assert counts(installed) == before


def test_refute_with_a_wrong_passphrase_shows_an_error_and_changes_nothing(
    installed: Path, passphrase: str
) -> None:
    memory = save("The moon is made of cheese")
    before = counts(installed)

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        screen = await open_memory(pilot, memory)
        await fill_label(pilot, "refute", "checked it", "not-the-" + passphrase)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, MessageDialog)
        text = screen_text(app)
        assert "Could not record your judgment (not-poison)" in text
        assert "Nothing was signed or changed." in text
        assert "Traceback" not in text
        await pilot.press("enter")
        await pilot.pause()
        assert on_top(app) is screen
        assert "label history: none" in section(screen, "labels")

    drive(scenario, size=(100, 40))
    assert counts(installed) == before
    assert memory_field(installed, memory, "epistemic_label") == "unverified"


def test_refute_with_the_master_passphrase_is_signed_by_agent_and_master(
    installed: Path, passphrase: str
) -> None:
    memory = save("The moon is made of cheese")
    before = counts(installed)

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        screen = await open_memory(pilot, memory)
        await fill_label(pilot, "refute", "checked it", passphrase)
        assert passphrase not in screen_text(app), "the passphrase is never shown"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, MessageDialog), dialog_text(pilot)
        assert "not judged -> not poison: a person cleared the suspicion" in dialog_text(pilot)
        await pilot.press("enter")
        await pilot.pause()
        assert "cli + master" in section(screen, "labels")
        assert table_rows(screen.query_one("#detail-labels", Static)) == 1

    drive(scenario, size=(100, 40))
    assert counts(installed)["memory_classifications"] == before["memory_classifications"] + 1
    assert memory_field(installed, memory, "epistemic_label") == "poison_refuted"


async def correct_to(pilot: Pilot[Any], old_text: str, new_text: str) -> CorrectDialog:
    """On a memory's screen: c, replace the text in the dialog, ctrl+s."""
    app = pilot.app
    await pilot.press("c")
    await pilot.pause()
    dialog = app.screen
    assert isinstance(dialog, CorrectDialog)
    area = dialog.query_one("#correction", TextArea)
    assert area.text == old_text
    area.focus()
    await pilot.press("end", "ctrl+u")  # to the end of the (one) line, delete back to its start
    assert area.text == ""
    await paste(pilot, new_text)
    assert area.text == new_text
    await pilot.press("ctrl+s")
    await pilot.pause()
    return dialog


def test_correct_saves_a_new_version_and_opens_it(installed: Path) -> None:
    old = save("The meeting is on Monday", "--key", "work:meeting")
    before = counts(installed)

    async def scenario(pilot: Pilot[Any]) -> str:
        app = pilot.app
        screen = await open_memory(pilot, old)
        await pilot.press("c")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, CorrectDialog)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is dialog, "an unchanged text is not a correction"
        assert "Nothing changed" in text_of(dialog.query_one("#dialog-error", Static))
        await pilot.press("escape")
        await pilot.pause()
        assert on_top(app) is screen

        await correct_to(pilot, "The meeting is on Monday", "The meeting is on Tuesday")
        new_screens = [s for s in app.screen_stack if isinstance(s, MemoryScreen) and s is not screen]
        assert len(new_screens) == 1, app.screen_stack
        new_screen = new_screens[0]
        assert new_screen.memory_id != old
        assert "The meeting is on Tuesday" in section(new_screen, "value")
        assert "2 of 2 (current)" in section(new_screen, "fields")
        assert "work:meeting" in section(new_screen, "fields")
        versions = section(new_screen, "versions")
        assert old in versions and new_screen.memory_id in versions
        # back out of everything the correction opened, to the old version's screen
        for _ in range(len(app.screen_stack)):
            if on_top(app) is screen:
                break
            await pilot.press("escape")
            await pilot.pause()
        assert on_top(app) is screen
        assert "1 of 2 (superseded)" in section(screen, "fields"), section(screen, "fields")
        return new_screen.memory_id

    new = drive(scenario, size=(100, 40))
    after = counts(installed)
    assert after["memories"] == before["memories"] + 1
    assert after["memory_supersessions"] == before["memory_supersessions"] + 1
    assert (
        value(installed, f"SELECT old_memory_id FROM memory_supersessions WHERE new_memory_id = '{new}'")
        == old
    )
    assert memory_field(installed, old, "value") == "The meeting is on Monday", "the old version is kept"


def test_correct_shows_its_signed_result_on_top(installed: Path) -> None:
    """Like feedback and label, a correction shows what was signed as soon as it is signed; the
    result must not wait, hidden under the new version's screen, until the person goes back."""
    old = save("The meeting is on Monday")

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await open_memory(pilot, old)
        await correct_to(pilot, "The meeting is on Monday", "The meeting is on Tuesday")
        assert isinstance(app.screen, MessageDialog), (
            f"after ctrl+s the top screen is {type(app.screen).__name__}, stack {app.screen_stack}"
        )
        assert "Signed new version saved" in screen_text(app)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, MemoryScreen) and app.screen.memory_id != old

    drive(scenario, size=(100, 40))


def test_cancelled_correction_and_label_change_nothing(installed: Path) -> None:
    memory = save("The meeting is on Monday")
    before = counts(installed)

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        screen = await open_memory(pilot, memory)
        await pilot.press("c")
        await pilot.pause()
        area = app.screen.query_one("#correction", TextArea)
        area.focus()
        await type_text(pilot, "edited ")
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("l")
        await pilot.pause()
        await choose(pilot, app.screen.query_one("#judgment", Select), "confirm")
        await pilot.click("#cancel")
        await pilot.pause()
        assert app.screen is screen

    drive(scenario, size=(100, 40))
    assert counts(installed) == before
    assert memory_field(installed, memory, "epistemic_label") == "unverified"


def test_the_master_passphrase_is_gone_once_the_refute_is_signed(
    installed: Path, passphrase: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Textual prints an unexpected error's traceback with every frame's locals. Whatever goes
    wrong after the signing (here: drawing its result), no frame may still hold the master
    passphrase, and the dialog's password box is emptied when it hands it over."""
    import asyncio
    import io

    from rich.console import Console
    from rich.traceback import Traceback

    from aimos.tui.app import AimosApp

    memory = save("The moon is made of cheese")

    def broken_drawing(result: Any) -> list[str]:
        raise RuntimeError("drawing the signed result failed")

    monkeypatch.setattr("aimos.tui.app.event_lines", broken_drawing)
    boxes: list[Input] = []

    async def main() -> None:
        app = AimosApp()
        async with app.run_test(size=(100, 40)) as pilot:
            await pilot.pause()
            await open_memory(pilot, memory)
            await pilot.press("l")
            await pilot.pause()
            dialog = app.screen
            await choose(pilot, dialog.query_one("#judgment", Select), "refute")
            dialog.query_one("#reason", Input).focus()
            await type_text(pilot, "checked it")
            box = dialog.query_one("#passphrase", Input)
            boxes.append(box)
            box.focus()
            await paste(pilot, passphrase)
            await pilot.press("enter")
            await pilot.pause()
            await pilot.pause()

    try:
        asyncio.run(main())
    except RuntimeError as exc:
        assert "drawing the signed result failed" in str(exc)
        printed = io.StringIO()
        Console(file=printed, width=200).print(
            Traceback.from_exception(type(exc), exc, exc.__traceback__, show_locals=True, locals_max_length=5)
        )
        traceback = printed.getvalue()
    else:
        raise AssertionError("the injected drawing error did not happen")
    assert "answered" in traceback, "the traceback shows the frame that ran the signing"
    assert passphrase not in traceback, "the master passphrase is in a traceback's locals"
    assert boxes and boxes[0].value == "", "the password box still holds the passphrase"
    assert memory_field(installed, memory, "epistemic_label") == "poison_refuted", "the refute was signed"
