"""The TUI's label dialog in plain words, asking for the master passphrase exactly when the chosen
judgment would raise the memory's trust from its current label (an agent alone may only lower it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.tui import choose, counts, drive, fill_label, memory_field, open_memory, save
from textual.pilot import Pilot
from textual.widgets import Input, Label, Select

from aimos.tui.dialogs import LabelDialog

pytestmark = pytest.mark.timeout(120)


def test_the_passphrase_box_follows_the_memorys_current_label(installed: Path) -> None:
    memory = save("The dentist is on tuesday")

    async def scenario(pilot: Pilot[Any]) -> None:
        await open_memory(pilot, memory)
        await pilot.press("l")
        await pilot.pause()
        dialog = pilot.app.screen
        assert isinstance(dialog, LabelDialog)
        title = str(dialog.query_one(".dialog-title", Label).render())
        assert "not judged" in title, title
        offered = [prompt for prompt, _v in dialog.query_one("#judgment", Select)._options]
        words = [str(p).split(":")[0] for p in offered if str(p).strip()]
        assert [w for w in words if w in ("poison", "not-poison", "support", "dispute")] == [
            "poison",
            "not-poison",
            "support",
            "dispute",
        ], offered
        box = dialog.query_one("#passphrase", Input)
        for judgment, raises in (("dispute", False), ("confirm", False), ("support", True), ("refute", True)):
            await choose(pilot, dialog.query_one("#judgment", Select), judgment)
            assert box.display is raises, judgment
        await pilot.press("escape")
        await pilot.pause()
        # dispute lowers an unjudged memory's trust: signed by the agent alone
        dialog = await fill_label(pilot, "dispute", "the surgery moved")
        assert not dialog.query_one("#passphrase", Input).display
        await pilot.click("#sign")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()

    before = counts(installed)
    drive(scenario, size=(100, 40))
    assert counts(installed)["memory_classifications"] == before["memory_classifications"] + 1
    assert memory_field(installed, memory, "epistemic_label") == "disputed"
