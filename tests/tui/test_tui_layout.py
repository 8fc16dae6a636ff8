"""The TUI in a small terminal (resized to 60x20 while running) and back, the help screen and the
theme: what a person must still be able to read and reach."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from support.tui import (
    aimos_app,
    choose,
    drive,
    lines_in,
    memory_id_at,
    paste,
    recall,
    save,
    screen_text,
    settle,
    text_of,
)
from textual.pilot import Pilot
from textual.widgets import Select, Static

from aimos.tui.detail import MemoryScreen
from aimos.tui.dialogs import HELP, ConfirmDialog, HelpScreen, LabelDialog
from aimos.tui.memories import MemoriesScreen
from aimos.tui.memory_table import MemoryTable
from aimos.tui.recall import RecallScreen
from aimos.tui.status import StatusScreen


def header(pilot: Pilot[Any]) -> list[str]:
    return text_of(pilot.app.screen.query_one("#list-header", Static)).split()


def footer_line(app: Any) -> str:
    return screen_text(app).rstrip("\n").splitlines()[-1]


def test_resized_to_60x20_every_screen_still_reads(installed: Path) -> None:
    boiler = save("The boiler is serviced every October", "--key", "home:boiler")
    tea = save("Alice prefers tea over coffee")
    recall("boiler")

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert "type" in header(pilot), "80 columns have room for the type column"
        await pilot.resize_terminal(60, 20)
        await pilot.pause()
        assert tuple(app.size) == (60, 20)
        assert isinstance(app.screen, MemoriesScreen)
        columns = header(pilot)
        for essential in ("id", "label", "weight", "memory"):
            assert essential in columns, columns
        assert "type" not in columns and not any(c.startswith("created") for c in columns), columns
        text = screen_text(app)
        assert boiler[:8] in text and tea[:8] in text
        assert "2 memories" in text
        for line in text.splitlines():
            assert len(line) <= 60
        footer = footer_line(app)
        for key in ("Open", "Filter", "Sort", "? Help"):
            assert key in footer, footer

        await pilot.press(
            "home",
            *["down"] * [memory_id_at(app.screen.query_one(MemoryTable), i) for i in range(2)].index(boiler),
            "enter",
        )
        await pilot.pause()
        assert isinstance(app.screen, MemoryScreen)
        text = screen_text(app)
        assert "The boiler is serviced every October" in text
        footer = footer_line(app)
        for key in ("Good", "Bad", "Label", "Correct", "? Help"):
            assert key in footer, footer
        await pilot.press("g")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog)
        text = screen_text(app)
        assert "Sign (y)" in text and "Cancel (n)" in text, text
        await pilot.press("n", "escape", "2")
        await pilot.pause()

        screen = app.screen
        assert isinstance(screen, RecallScreen)
        await paste(pilot, "boiler")
        await pilot.press("enter")
        await pilot.pause()
        assert boiler[:8] in screen_text(app)
        footer = footer_line(app)
        for key in ("Receipt", "Good", "? Help"):
            assert key in footer, footer

        await pilot.press("3", "v")
        await settle(pilot)
        assert isinstance(app.screen, StatusScreen)
        assert text_of(app.screen.query_one("#status-verify", Static)).startswith("✓ the brain verifies")

        await pilot.resize_terminal(120, 30)
        await pilot.press("1")
        await pilot.pause()
        columns = header(pilot)
        assert "created" in " ".join(columns) and "key" in columns, columns

    drive(scenario)


def test_verify_all_shows_its_verdict_on_a_60x20_screen(installed: Path) -> None:
    """After v, a person on a small terminal must see the verdict (or the progress) without
    hunting for it below the fold."""
    save("The boiler is serviced every October")

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await pilot.resize_terminal(60, 20)
        await pilot.press("3")
        await pilot.pause()
        assert isinstance(app.screen, StatusScreen)
        await pilot.press("v")
        await settle(pilot)
        assert text_of(app.screen.query_one("#status-verify", Static)).startswith("✓ the brain verifies")
        assert "the brain verifies" in screen_text(app), "the verdict is not on screen:\n" + screen_text(app)

    drive(scenario)


def test_the_filter_row_fits_60_columns(installed: Path) -> None:
    save("The boiler is serviced every October")

    async def scenario(pilot: Pilot[Any]) -> None:
        await pilot.resize_terminal(60, 20)
        await pilot.pause()
        screen = pilot.app.screen
        for widget_id in ("filter-text", "filter-type", "filter-label", "filter-scope"):
            region = screen.query_one(f"#{widget_id}").region
            assert region.right <= 60, f"#{widget_id} is cut off at 60 columns: {region}"

    drive(scenario)


def test_the_label_dialog_keeps_its_buttons_on_a_60x20_screen(installed: Path) -> None:
    memory = save("The moon is made of cheese")

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await pilot.resize_terminal(60, 20)
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, MemoryScreen) and app.screen.memory_id == memory
        await pilot.press("l")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, LabelDialog)
        await choose(pilot, dialog.query_one("#judgment", Select), "refute")  # shows the passphrase box
        await pilot.pause()
        text = screen_text(app)
        assert re.search(r"\bSign\b +Cancel\b", text), f"the Sign and Cancel buttons are not visible:\n{text}"

    drive(scenario)


def test_help_opens_with_question_mark_and_closes(installed: Path) -> None:
    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        below = app.screen
        for close in ("escape", "question_mark", "q"):
            await pilot.press("question_mark")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            text = screen_text(app)
            assert "aimos tui: browse your brain" in text
            assert "1 / 2 / 3" in text
            await pilot.press(close)
            await pilot.pause()
            assert app.screen is below, f"{close} closes the help"
            assert app.is_running, f"{close} on the help screen must not quit the app"
        for section in ("Memories", "A memory", "Recall", "Status"):
            assert section in HELP

    drive(scenario, size=(100, 45))


def test_help_is_reachable_from_every_screen(installed: Path) -> None:
    save("The boiler is serviced every October")

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        for switch in ("1", "2", "3"):
            await pilot.press(switch)
            await pilot.pause()
            if isinstance(app.screen, RecallScreen):
                await pilot.press("escape")  # the query box has the focus on arrival
                await pilot.pause()
            screen = app.screen
            await pilot.press("question_mark")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen), type(screen).__name__
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is screen
        await pilot.press("1", "enter")
        await pilot.pause()
        assert isinstance(app.screen, MemoryScreen)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)

    drive(scenario)


def test_theme_toggles_and_light_starts_light(installed: Path) -> None:
    """ctrl+t switches light and dark from any screen (even with the recall box focused), and the
    open screens redraw in the new theme's colours: the yellow of "housekeeper NOT running" is the
    light theme's warning text colour after the switch, not the dark one's."""

    async def dark(pilot: Pilot[Any]) -> None:
        app = aimos_app(pilot)
        assert app.theme == "textual-dark"
        await pilot.press("3")
        await pilot.pause()
        housekeeper = app.screen.query_one("#status-housekeeper", Static)
        dark_yellow = app.ink("yellow")
        assert any("NOT running" in line for line in lines_in(housekeeper, "yellow"))
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert app.theme == "textual-light"
        assert app.ink("yellow") != dark_yellow
        assert any("NOT running" in line for line in lines_in(housekeeper, "yellow")), (
            "redrawn in the new colours"
        )
        await pilot.press("2")
        await pilot.pause()
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert app.theme == "textual-dark"

    async def light(pilot: Pilot[Any]) -> None:
        assert pilot.app.theme == "textual-light"

    drive(dark)
    drive(light, light=True)
