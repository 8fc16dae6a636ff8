"""Clean terminals in the TUI (issue 18, item 5): a memory made to take over a terminal (a screen
clear, cursor home, a window-title OSC, an OSC-8 link, an 8-bit CSI, a bidi override, Rich markup)
is drawn escaped in the memory list, the filter choices, the detail screen, the recall screen and
the receipt; the header, the filter box and the column titles stay where they are; and no byte the
app sends to the terminal is a control character that came from the brain.

A small brain of its own (not the shared seeded fixture): made by the real signed paths in this
test, so its ids and times differ on each run, and the snapshots mask them (same length, so the
layout is what is compared)."""

from __future__ import annotations

import difflib
import io
import os
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from support.cli import run_aimos
from support.tui import aimos_app, choose, drive, memory_id_at, paste, recall, run_recall, save, screen_text
from textual.pilot import Pilot
from textual.widgets import Input, Select, Static, TextArea

from aimos.terminal import visible
from aimos.tui.detail import MemoryScreen
from aimos.tui.dialogs import CorrectDialog
from aimos.tui.memory_table import MemoryTable
from aimos.tui.recall import ReceiptScreen

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
UPDATE = os.environ.get("AIMOS_UPDATE_SNAPSHOTS") == "1"

HOSTILE = (
    "Boiler \x1b[2J\x1b[H\x1b]0;pwned\x07 code \x1b]8;;https://evil.example/\x07link\x1b]8;;\x07"
    " \x9b31m \u202eevil\u202c [bold red]markup[/] [link=https://evil.example/]x[/link]\nsecond line"
)
HOSTILE_KEY = "home:\x1b[31mkey[/]"
HOSTILE_SCOPE = "home\x1b[2J[/]"
REASON = "doubtful \x1b[2J [b]really[/b]\nverifies: yes"
# a terminal obeys these (or they reorder text): none may come from the brain to the terminal
RAW = {chr(c) for c in (*range(0x00, 0x0A), *range(0x0B, 0x20), *range(0x7F, 0xA0))} | set(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b"
)
# what the app itself writes: colours (SGR) and cursor moves
OWN_SEQUENCES = re.compile(r"\x1b\[[0-9;]*[mH]")
ZEROS = str.maketrans("123456789", "000000000")


def brain_with_hostile_memories() -> dict[str, str]:
    ids = {
        "plain": save("The spare key is with the neighbour at number 12", "--key", "home:spare-key"),
        "hostile": save(HOSTILE, "--key", HOSTILE_KEY, "--type", "note[/]", "--scope", HOSTILE_SCOPE),
    }
    run_aimos("label", ids["hostile"], "dispute", "--reason", REASON, input=b"").ok()
    return ids


def terminal_bytes(app: Any) -> str:
    """What the app writes to the terminal for the whole screen, as Textual's driver does: the
    compositor's update rendered by a terminal console."""
    written = io.StringIO()
    console = Console(
        width=app.size.width,
        height=app.size.height,
        file=written,
        force_terminal=True,
        color_system="truecolor",
        legacy_windows=False,
        safe_box=False,
    )
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return written.getvalue()


def assert_clean(app: Any) -> str:
    """No control character from the brain on screen or in what is written to the terminal; the
    screen's text."""
    written = OWN_SEQUENCES.sub("", terminal_bytes(app))
    raw = sorted({f"U+{ord(c):04X}" for c in written if c in RAW})
    around = [written[max(i - 20, 0) : i + 20] for i, c in enumerate(written) if c in RAW][:3]
    assert raw == [], f"raw control characters reach the terminal: {raw}: {around}"
    text = screen_text(app)
    assert not {c for c in text if c in RAW}
    return text


def masked(text: str) -> str:
    """Ids, hashes and times made constant (same length, so the layout is unchanged). The SVG's
    class prefix (terminal-<number>, 9 or 10 digits) first, before the hex rule sees its digits."""
    text = re.sub(r"terminal-\d+", "terminal-0", text)
    when = r"\d{4}-\d{2}-\d{2}(?: |&#160;)\d{2}:\d{2}(?::\d{2}Z)?"  # the SVG's spaces are &#160;
    text = re.sub(
        when, lambda m: "&#160;".join(part.translate(ZEROS) for part in m.group().split("&#160;")), text
    )
    text = re.sub(r"(?<![0-9a-z])[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}", lambda m: "x" * 36, text)
    text = re.sub(r"(?<![0-9a-zA-Z])[0-9a-f]{8,}(?![0-9a-zA-Z])", lambda m: "x" * len(m.group()), text)
    return text


def check(name: str, svg: str, text: str, tmp_path: Path) -> None:
    svg, text = masked(svg), masked(text)
    path, text_path = SNAPSHOTS / f"{name}.svg", SNAPSHOTS / f"{name}.txt"
    if UPDATE or not path.exists():
        if not UPDATE:
            pytest.fail(f"no snapshot {path.name}: run with AIMOS_UPDATE_SNAPSHOTS=1 to take it")
        path.write_text(svg, "utf-8")
        text_path.write_text(text, "utf-8")
        return
    if text != text_path.read_text("utf-8") or svg != path.read_text("utf-8"):
        (tmp_path / f"{name}.svg").write_text(svg, "utf-8")
        before = text_path.read_text("utf-8").splitlines()
        diff = "\n".join(
            list(difflib.unified_diff(before, text.splitlines(), "snapshot", "now", lineterm=""))[:40]
        )
        pytest.fail(
            f"{name} differs from its snapshot (new SVG: {tmp_path / (name + '.svg')})\n"
            + (diff or "(same text: colours or layout changed)")
            + "\nIf the change is deliberate: AIMOS_UPDATE_SNAPSHOTS=1 pytest tests/tui/test_tui_clean_terminal.py"
        )


def test_the_memory_list_shows_hostile_text_escaped_under_an_intact_header(
    installed: Path, tmp_path: Path
) -> None:
    ids = brain_with_hostile_memories()

    async def scenario(pilot: Pilot[Any]) -> tuple[str, str]:
        app = pilot.app
        table = app.screen.query_one(MemoryTable)
        assert len(table.rowids) == 2
        text = assert_clean(app)
        lines = text.splitlines()
        # the header, the filter box and the column titles, each where it belongs
        assert "aimos: personal (cli) — memories" in lines[0], text
        assert "filter: any part of the key or text (/)" in lines[2], text
        assert "2 memories  ·  sorted by created ▼" in lines[4], text
        titles = r"^id\s+key\s+type\s+label\s+weight\s+clr\s+created▼\s+memory$"
        assert re.match(titles, lines[5].strip()), text
        row = next(line for line in lines if ids["hostile"][:8] in line)
        assert "\\x1b[2J\\x1b[H\\x1b]0;pwned\\x07" in row and "note[/]" in row, row
        return app.export_screenshot(), text

    svg, text = drive(scenario, size=(150, 12))
    check("clean_terminal_memories", svg, text, tmp_path)


def test_the_filter_choices_are_stored_text_drawn_escaped_not_read_as_markup(installed: Path) -> None:
    """A stored scope of "home\\x1b[2J[/]": a choice of the scope filter. As markup "[/]" closes
    nothing and stopped the app; as text the choice is drawn escaped and filters as any other."""
    ids = brain_with_hostile_memories()

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        scope = app.screen.query_one("#filter-scope", Select)
        await choose(pilot, scope, HOSTILE_SCOPE)
        await pilot.pause()
        table = app.screen.query_one(MemoryTable)
        assert [memory_id_at(table, i) for i in range(len(table.rowids))] == [ids["hostile"]]
        assert "home\\x" in assert_clean(app)  # as much as the box has room for
        chosen = scope.query_one("#label", Static).content
        assert str(getattr(chosen, "plain", chosen)) == "home\\x1b[2J[/]"

    drive(scenario, size=(100, 16))


def test_the_detail_screen_shows_hostile_text_escaped(installed: Path, tmp_path: Path) -> None:
    ids = brain_with_hostile_memories()

    async def scenario(pilot: Pilot[Any]) -> tuple[str, str]:
        app = aimos_app(pilot)
        app.open_memory(ids["hostile"])
        await pilot.pause()
        assert isinstance(app.screen, MemoryScreen)
        text = assert_clean(app)
        lines = text.splitlines()
        assert "aimos: personal (cli) — memory " in lines[0], text
        assert "\\x1b[2J\\x1b[H\\x1b]0;pwned\\x07 code" in text
        assert "\\u202eevil\\u202c [bold red]markup[/] [link=https://evil.example/]x[/link]" in text
        assert "second line" in text  # the value keeps its lines
        assert "home:\\x1b[31mkey[/]" in text and "home\\x1b[2J[/]" in text
        assert "doubtful \\x1b[2J [b]really[/b]" in text  # the reason's first line, escaped
        assert not any(line.strip().startswith("verifies: yes") for line in lines), text
        return app.export_screenshot(), text

    svg, text = drive(scenario, size=(110, 46))
    check("clean_terminal_detail", svg, text, tmp_path)


def test_the_recall_screen_and_receipt_show_hostile_text_escaped(installed: Path) -> None:
    """The results of a recall made in the TUI, and the receipt of a recall an agent made with a
    query of its own (shown in the receipt screen)."""
    brain_with_hostile_memories()
    query = "boiler code \x1b]0;pwned\x07 \u202e"
    receipt_id = str(recall(query)["receipt"]["receipt_id"])  # as an agent would, with its query

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await run_recall(pilot, "boiler code")
        await pilot.pause()
        text = assert_clean(app)
        assert "\\x1b[2J\\x1b[H" in text, text
        app.push_screen(ReceiptScreen(receipt_id))
        await pilot.pause()
        assert "boiler code \\x1b]0;pwned\\x07 \\u202e" in assert_clean(app)

    drive(scenario, size=(110, 30))


def test_the_correct_dialog_starts_from_the_text_as_shown(installed: Path) -> None:
    """The editor would send a control character to the terminal as it is: it starts with the
    escaped text, says so, and an untouched text is "nothing changed" (nothing is signed)."""
    ids = brain_with_hostile_memories()

    async def scenario(pilot: Pilot[Any]) -> None:
        app = aimos_app(pilot)
        app.open_memory(ids["hostile"])
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, CorrectDialog)
        assert app.screen.query_one("#correction", TextArea).text == visible(HOSTILE)
        text = assert_clean(app)
        assert "shown escaped, and saved as shown" in text.replace("\n", " ").replace("  ", " "), text
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "Nothing changed" in str(app.screen.query_one("#dialog-error", Static).content)

    drive(scenario, size=(110, 40))


def test_a_control_character_pasted_into_a_box_is_written_out_escaped(installed: Path) -> None:
    """A box draws its text as it is: what is pasted into the filter or the recall query is kept
    escaped, so the box shows (and searches) exactly what it holds."""
    brain_with_hostile_memories()

    async def scenario(pilot: Pilot[Any]) -> None:
        app = pilot.app
        box = app.screen.query_one("#filter-text", Input)
        box.focus()
        await paste(pilot, "boiler\x1b[2J\u202e")
        await pilot.pause(0.3)
        assert box.value == "boiler\\x1b[2J\\u202e"
        assert "boiler\\x1b[2J\\u202e" in assert_clean(app)
        app.screen.query_one(MemoryTable).focus()  # so that 2 switches to the recall screen
        screen = await run_recall(pilot, "boiler code \x1b]0;pwned\x07")
        assert screen.query_one("#query", Input).value == "boiler code \\x1b]0;pwned\\x07"
        assert_clean(app)

    drive(scenario, size=(110, 30))
