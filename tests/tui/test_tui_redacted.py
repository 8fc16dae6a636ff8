"""A redacted memory in the TUI: the list and the detail screen show who redacted it, when and
why, never an empty text; its signed record still verifies there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.tui import drive, open_memory, save, section
from textual.pilot import Pilot

from aimos.tui.memory_table import MemoryTable

pytestmark = pytest.mark.timeout(120)


def _redact(memory_id: str, passphrase: str) -> None:
    from aimos.actions import redaction
    from aimos.actions.session import open_brain

    with open_brain(write=True) as brain:
        redaction.redact(brain, brain.master_with(passphrase), memory_id, "it said where the panel is")


def test_the_list_and_the_detail_show_the_redaction_notice(installed: Path, passphrase: str) -> None:
    memory = save("The alarm panel is by the back door, behind the coat rack")
    _redact(memory, passphrase)

    async def scenario(pilot: Pilot[Any]) -> None:
        table = pilot.app.screen.query_one(MemoryTable)
        rows = [table.memory_at(i) for i in range(len(table.rowids))]
        ours = next(r for r in rows if r and r["memory_id"] == memory)
        assert ours["redacted"] and ours["redacted"].endswith("it said where the panel is")
        screen = await open_memory(pilot, memory)
        shown = section(screen, "value")
        assert shown.startswith("[redacted by the master at ") and "it said where the panel is" in shown, (
            shown
        )
        assert "coat rack" not in shown

    drive(scenario, size=(110, 40))
