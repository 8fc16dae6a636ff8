"""The MCP server keeps one brain session open between calls (actions.session.KeptBrain). What
another process does between two calls is met at the next call exactly as when every call opened
the brain anew: a copy put back in place of the brain (by rename or rewritten in place), the brain
removed, a revocation committed, anchors.json or the freshness anchor deleted, a row edited with
SQLite. Each attack below succeeds against a session kept without its proof of validity."""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest
from support.cli import run_aimos, sqlite_value
from support.mcp import call, connect, refused

pytestmark = pytest.mark.timeout(180)


def backup_copy(brain: Path, target: Path) -> None:
    """A consistent copy of the brain as it is now (SQLite's backup API, as a user's tool would)."""
    with closing(sqlite3.connect(brain)) as source, closing(sqlite3.connect(target)) as copy:
        source.backup(copy)


def count_of(brain: Path, text: str) -> int:
    return int(sqlite_value(brain, f"SELECT COUNT(*) FROM memories WHERE value = '{text}'"))


def between_two_calls(agent: str, act: Callable[[], object], *words: str) -> str:
    """A save, ``act`` (another process's doing), then a save the server must refuse naming
    ``words``; the refusal's text."""

    async def scenario() -> str:
        async with connect(agent) as session:
            await call(session, "save_memory", {"text": "the boiler was serviced in May"})
            await call(session, "recall", {"query": "boiler"})
            act()
            return await refused(session, "save_memory", {"text": "saved after the change"}, *words)

    return asyncio.run(scenario())


def put_back(installed: Path, *, in_place: bool) -> Callable[[], None]:
    """An older copy of the brain put back over it, by rename (a new file) or rewritten in place
    (same inode), its WAL removed: a rollback the freshness anchor must catch."""
    brain = installed / "brain.sqlite3"
    older = installed / "older.sqlite3"
    backup_copy(brain, older)
    run_aimos("save", "a memory the older copy does not hold").ok()

    def act() -> None:
        if in_place:
            shutil.copyfile(older, brain)
            older.unlink()
        else:
            os.replace(older, brain)
        Path(f"{brain}-wal").unlink(missing_ok=True)

    return act


@pytest.mark.parametrize("in_place", [False, True], ids=["renamed", "rewritten_in_place"])
def test_an_older_copy_put_back_between_two_calls_is_refused(installed: Path, in_place: bool) -> None:
    text = between_two_calls("cli", put_back(installed, in_place=in_place), "not the newest one")
    assert "rolled" in text or "missing" in text, text
    assert count_of(installed / "brain.sqlite3", "saved after the change") == 0


def test_a_brain_removed_between_two_calls_is_not_written_to(installed: Path) -> None:
    brain = installed / "brain.sqlite3"

    def remove() -> None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{brain}{suffix}").unlink(missing_ok=True)

    between_two_calls("cli", remove, "no aimos brain")
    assert not brain.exists() and not Path(f"{brain}-wal").exists()


def test_a_revocation_by_another_process_between_two_calls_is_refused(installed: Path) -> None:
    run_aimos("agent", "enroll", "helper").ok()
    between_two_calls("helper", lambda: run_aimos("agent", "revoke", "helper").ok(), "revoked")
    assert count_of(installed / "brain.sqlite3", "saved after the change") == 0


def test_anchors_json_deleted_between_two_calls_is_refused(installed: Path) -> None:
    between_two_calls("cli", lambda: (installed / "config" / "anchors.json").unlink(), "no trust anchor")


def test_the_freshness_anchor_deleted_between_two_calls_is_refused(installed: Path) -> None:
    anchor = next(installed.glob("**/freshness-*.json"))
    between_two_calls("cli", anchor.unlink, "freshness anchor")
    assert not anchor.exists()  # not written anew by a save that sealed over it


def test_a_grant_edited_with_sqlite_between_two_calls_is_refused(installed: Path) -> None:
    brain = installed / "brain.sqlite3"

    def widen() -> None:
        with closing(sqlite3.connect(brain)) as db, db:
            guards = db.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'recall_grants'"
                " AND sql LIKE '%BEFORE UPDATE%'"
            ).fetchall()
            for name, _ in guards:
                db.execute(f'DROP TRIGGER "{name}"')
            db.execute("UPDATE recall_grants SET clearance_ceiling = 12")
            for _, sql in guards:  # the guards put back as they were
                db.execute(sql)

    between_two_calls("cli", widen, "changed outside aimos")


def test_nothing_changed_between_calls_keeps_working_and_verifies(installed: Path) -> None:
    """The kept session: many calls in a row, a CLI save between two of them (another process's
    commit: the server opens the brain anew), and the brain verifies after the server left."""

    async def scenario() -> None:
        async with connect("cli") as session:
            for i in range(5):
                await call(session, "save_memory", {"text": f"kept session note {i} about the garden"})
                if i == 2:
                    run_aimos("save", "a note saved by the CLI in between").ok()
                got = await call(session, "recall", {"query": "garden note"})
                assert got["results"], got

    asyncio.run(scenario())
    brain = installed / "brain.sqlite3"
    assert (
        int(sqlite_value(brain, "SELECT COUNT(*) FROM memories WHERE value LIKE 'kept session note%'")) == 5
    )
    run_aimos("verify").ok()
