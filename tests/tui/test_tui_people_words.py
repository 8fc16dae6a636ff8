"""One set of words for people, everywhere (issue 38 item 4), in the real TUI driven with Pilot.

Every screen a person reaches (the memories list and its filters, a memory with its label
history, the help, the label dialog and its signed result, a recall with its results and the
withheld, the receipt view and its verification, the status screen and its verification) is read
as a person sees it: no protocol label or judgment word (support.people_words.PROTOCOL_WORDS,
derived from aimos/vocabulary.py), no count with its number left open ("result(s)"), and the
receipt's evidence numbered from 1, in the recall table's columns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.cli import run_aimos
from support.people_words import either_number_in, protocol_words_in
from support.tui import (
    drive,
    fill_label,
    notifications,
    open_memory,
    paste,
    run_recall,
    save,
    screen_text,
    settle,
    text_of,
)
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Select, Static

from aimos.tui.dialogs import HelpScreen, LabelDialog, MessageDialog
from aimos.tui.recall import ReceiptScreen

pytestmark = pytest.mark.timeout(240)


def everything_on(app: Any) -> str:
    """What the app shows now, and what its current screen holds beyond the visible part: every
    Static's content, every table row, every choice a Select offers, the notifications."""
    parts = [screen_text(app)]
    screen = app.screen
    parts += [text_of(widget) for widget in screen.query(Static)]
    for table in screen.query(DataTable):
        parts += [" ".join(str(cell) for cell in table.get_row_at(i)) for i in range(table.row_count)]
    for select in screen.query(Select):
        parts += [str(prompt) for prompt, _value in select._options]
    parts += notifications(app)
    return "\n".join(parts)


def test_every_screen_reads_in_peoples_words(installed: Path) -> None:
    cat = save("The cat's name is Tom")
    meeting = save("The team meeting moved to Friday at 10")
    dentist = save("The dentist appointment is on the 3rd of May")
    wifi = save("The guest wifi is called Tangerine")
    boiler = save("The boiler is serviced every October")
    for memory, word, reason in (
        (cat, "poison", "we never had a cat"),
        (cat, "not-poison", "we did, in 2019"),
        (meeting, "dispute", "it may have moved again"),
        (dentist, "support", "the letter says so"),
        (wifi, "poison", "planted by a web page"),
    ):
        run_aimos("label", memory, word, "--reason", reason).ok()
    seen: dict[str, str] = {}

    async def look(pilot: Pilot[Any], where: str) -> None:
        await settle(pilot)
        seen[where] = everything_on(pilot.app)

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await look(pilot, "memories")
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await look(pilot, "help")
        await pilot.press("escape")
        await pilot.pause()

        for memory in (cat, meeting, dentist, wifi):
            await open_memory(pilot, memory)
            await look(pilot, f"memory {memory[:8]}")
            await pilot.press("escape")
            await pilot.pause()

        await open_memory(pilot, boiler)
        dialog = await fill_label(pilot, "dispute", "the engineer never came")
        assert isinstance(dialog, LabelDialog)
        await look(pilot, "label dialog")
        await pilot.click("#sign")
        await settle(pilot)
        assert isinstance(app.screen, MessageDialog), app.screen
        await look(pilot, "signed label")
        await pilot.press("enter")
        await pilot.pause()
        await look(pilot, f"memory {boiler[:8]}")
        await pilot.press("escape")
        await pilot.pause()

        await run_recall(pilot, "what is the cat called")
        await look(pilot, "recall")
        await pilot.press("t")
        await pilot.pause()
        receipt = app.screen
        assert isinstance(receipt, ReceiptScreen)
        evidence = text_of(receipt.query_one("#receipt-evidence", Static))
        header, first = evidence.splitlines()[:2]
        assert header.split()[:5] == ["#", "memory", "match", "trust", "weight"], evidence
        assert first.split()[:2] == ["1", cat[:8]] and "not poison" in first, evidence
        await pilot.press("v")
        await look(pilot, "receipt")
        await pilot.press("escape")
        await pilot.pause()

        await pilot.press("slash")  # the recall screen again: a new question in its box
        app.screen.query_one("#query", Input).value = ""
        await paste(pilot, "what is the guest wifi called")
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("w")
        await look(pilot, "recall withheld")

        await pilot.press("3")
        await pilot.pause()
        await pilot.press("v")
        await look(pilot, "status")

    drive(scenario, size=(120, 50))

    problems = [f"{where}: {p}" for where, text in seen.items() for p in protocol_words_in(text)]
    problems += [
        f"{where}: number left open: {p}" for where, text in seen.items() for p in either_number_in(text)
    ]
    assert not problems, "a person reads the protocol's words:\n" + "\n".join(problems)
    # what each look saw is what it was meant to see
    assert "poison, not-poison, support or dispute" in seen["help"], seen["help"]
    assert "not poison: a person cleared the suspicion" in seen[f"memory {cat[:8]}"]
    assert "not judged -> disputed: a person doubts it" in seen["signed label"], seen["signed label"]
    assert "poison, confirmed by a person; withheld" in seen["recall withheld"], seen["recall withheld"]
    assert "VALID: every check passed" in seen["receipt"], seen["receipt"]
    assert "✓ the brain verifies: 5 memories" in seen["status"], seen["status"]
