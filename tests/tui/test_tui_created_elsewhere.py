"""A memory imported from another brain's text export (issue 38, item 8), in the TUI with Pilot on
a real brain: the memories list's "created" column shows when it was first made (its signed
originated_at), and its screen shows that time as "created" beside "saved by", which stays this
brain's save."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.cli import run_aimos
from support.tui import drive, screen_text, text_of
from textual.pilot import Pilot
from textual.widgets import Static

from aimos.tui.detail import MemoryScreen


def test_the_list_and_the_memory_show_when_it_was_first_made(installed: Path, tmp_path: Path) -> None:
    export = tmp_path / "old.jsonl"
    export.write_text(
        json.dumps({"format": "aimos-text-export/v1"})
        + "\n"
        + json.dumps({"text": "The orchard was planted in the spring.", "created_at": "2023-03-01T09:30:00Z"})
        + "\n"
    )
    run_aimos("import", str(export)).ok()

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert "2023-03-01 09:30" in screen_text(app)  # the list's created column
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, MemoryScreen)
        fields = text_of(screen.query_one("#detail-fields", Static))
        assert (
            "created" in fields
            and "2023-03-01 09:30 (before it came here, as its signed save says)" in fields
        )
        saved = next(line for line in fields.splitlines() if line.startswith("saved by"))
        assert "2023" not in saved, fields

    drive(scenario, size=(120, 30))
