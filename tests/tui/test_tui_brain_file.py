"""A brain file the TUI cannot use, met during a session (the file swapped from outside): one
that cannot be opened at all (a folder in its place) is named as such, with the fix for its path;
one that is not a database is called that, not "cannot open". The TUI says the words the CLI
says for the same home, whether the store met the engine's error (a signed recall, the status
screen's verify) or it reached the TUI's own guard (a read on a connection of its own)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import apsw
from support.cli import BRAIN, run_aimos
from support.tui import aimos_app, drive, run_recall, settle, text_of
from textual.pilot import Pilot
from textual.widgets import Static

from aimos.tui.dialogs import MessageDialog
from aimos.tui.status import StatusScreen

CANNOT_OPEN = "cannot open the brain file"
NOT_A_DATABASE = "the brain file is not a readable SQLite database"


def swap_the_brain(home: Path, what: str) -> None:
    """Put ``what`` (a folder, or a file that is not a database) where the brain file was; the
    brain and its WAL moved aside (the app's open reader keeps reading what it opened)."""
    for suffix in ("", "-wal", "-shm"):
        if (home / (BRAIN + suffix)).exists():
            shutil.move(home / (BRAIN + suffix), home / ("moved.sqlite3" + suffix))
    if what == "folder":
        (home / BRAIN).mkdir()
    else:
        (home / BRAIN).write_bytes(b"these are notes, not a database\n" * 200)


def cli_words() -> tuple[str, str]:
    """What `aimos status` says of the brain file now: its error and hint lines."""
    result = run_aimos("status")
    assert result.code != 0, result.describe()
    lines = dict(
        line.split(": ", 1) for line in result.err.splitlines() if line.startswith(("error: ", "hint: "))
    )
    assert set(lines) == {"error", "hint"}, result.describe()
    return lines["error"], lines["hint"]


def dialog_body(pilot: Pilot[Any]) -> str:
    dialog = pilot.app.screen
    assert isinstance(dialog, MessageDialog), type(dialog).__name__
    return text_of(dialog.query_one(".dialog-body", Static))


def raw_read(path: Path) -> object:
    """A read on a connection of its own, as a library call the store does not wrap would make:
    the engine's own error reaches the TUI's guard."""
    conn = apsw.Connection(str(path))
    try:
        return conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
    finally:
        conn.close()


def _meets(home: Path, what: str) -> list[str]:
    """The texts the TUI shows: after a recall, as the status screen opens, after its verify, and
    after a read that meets the engine's error itself; each checked to say what the CLI says."""
    shown: list[str] = []

    async def scenario(pilot: Pilot[Any]) -> None:
        app = aimos_app(pilot)
        swap_the_brain(home, what)
        error, hint = cli_words()
        await run_recall(pilot, "boiler")
        recall = dialog_body(pilot)
        assert error in recall and hint in recall, recall
        assert "Nothing was signed or changed." in recall
        shown.append(recall)
        await pilot.press("escape")
        await pilot.pause()
        app.switch_mode("status")
        await settle(pilot)
        opening = dialog_body(pilot)  # the status screen reads the brain's state as it opens
        assert error in opening and hint in opening, opening
        shown.append(opening)
        await pilot.press("escape")
        await pilot.pause()
        status = app.screen
        assert isinstance(status, StatusScreen), type(status).__name__
        await pilot.press("v")
        await settle(pilot)
        verify = text_of(status.query_one("#status-verify", Static))
        assert verify.startswith("✗") and error in verify and hint in verify, verify
        shown.append(verify)
        assert app.read(lambda: raw_read(home / BRAIN), doing="read the brain") is None
        await pilot.pause()
        raw = dialog_body(pilot)
        assert error in raw and hint in raw, raw
        shown.append(raw)
        await pilot.press("escape")
        await pilot.pause()

    drive(scenario, size=(120, 40))
    return shown


def test_a_folder_in_place_of_the_brain_is_named_and_not_called_damaged(installed: Path) -> None:
    for text in _meets(installed, "folder"):
        assert f"{CANNOT_OPEN}: {installed / BRAIN} is a folder, not a file" in text, text
        assert "Move that folder out of the way" in text, "what to do"
        assert "damaged" not in text and "backup" not in text and NOT_A_DATABASE not in text, text


def test_a_file_that_is_not_a_database_is_called_so_not_unopenable(installed: Path) -> None:
    for text in _meets(installed, "not a database"):
        assert NOT_A_DATABASE in text and "Restore it from a backup" in text, text
        assert CANNOT_OPEN not in text and "folder, not a file" not in text, text
