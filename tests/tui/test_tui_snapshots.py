"""SVG snapshots of the TUI's main screens on the fixed seeded brain (tests/tui/seeded_brain.py).

A snapshot that differs fails with the first lines that differ (as text) and the new SVG written
beside the test's tmp dir; `AIMOS_UPDATE_SNAPSHOTS=1` re-takes them after a deliberate change.
The app runs with a fixed clock and from a fixed home path, so nothing on screen depends on when
or where the test runs.
"""

from __future__ import annotations

import asyncio
import difflib
import io
import json
import os
import re
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import apsw
import pytest
import seeded_brain
from rich.console import Console

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
# the README's picture of the TUI: a snapshot like the others, kept where the README links it
README_SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "tui.svg"
HOME = Path(tempfile.gettempdir()) / "aimos-tui-snapshot-home"
UPDATE = os.environ.get("AIMOS_UPDATE_SNAPSHOTS") == "1"


def fixture_value(sql: str) -> Any:
    conn = apsw.Connection(str(seeded_brain.FIXTURE / "brain.sqlite3"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return conn.execute(sql).fetchall()[0][0]
    finally:
        conn.close()


FIXED_NOW = int(fixture_value("SELECT MAX(ts_signed) FROM events")) + 3600


def memory_by_key(key: str) -> str:
    return str(fixture_value(f"SELECT memory_id FROM memories WHERE key = '{key}' ORDER BY created_at DESC"))


def screen_text(app: Any) -> str:
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True, record=True)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


Steps = Callable[[Any], Awaitable[None]]


def take(size: tuple[int, int], steps: Steps | None = None, *, home: Path = HOME) -> tuple[str, str]:
    """Open the app on the seeded brain at ``size``, run ``steps(pilot)``, return (svg, text)."""
    from aimos.paths import using_home
    from aimos.tui.app import AimosApp

    async def run() -> tuple[str, str]:
        app = AimosApp(clock=lambda: FIXED_NOW)
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            if steps is not None:
                await steps(pilot)
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
            return app.export_screenshot(), screen_text(app)

    with using_home(home):
        return asyncio.run(run())


def check(name: str, svg: str, text: str, tmp_path: Path, *, path: Path | None = None) -> None:
    """``svg`` is the committed snapshot at ``path`` (SNAPSHOTS/name.svg unless given), byte for
    byte; its text (SNAPSHOTS/name.txt) is kept to show what differs."""
    path = path or SNAPSHOTS / f"{name}.svg"
    text_path = SNAPSHOTS / f"{name}.txt"
    if UPDATE or not path.exists():
        if not UPDATE:
            pytest.fail(f"no snapshot {path}: run with AIMOS_UPDATE_SNAPSHOTS=1 to take it")
        path.write_text(svg, "utf-8")
        text_path.write_text(text, "utf-8")
        return
    if svg != path.read_text("utf-8"):
        (tmp_path / f"{name}.svg").write_text(svg, "utf-8")
        before = text_path.read_text("utf-8").splitlines() if text_path.exists() else []
        diff = "\n".join(
            list(difflib.unified_diff(before, text.splitlines(), "snapshot", "now", lineterm=""))[:40]
        )
        pytest.fail(
            f"{name} differs from its snapshot (new SVG: {tmp_path / (name + '.svg')})\n"
            + (diff or "(same text: colours or layout changed)")
            + "\nIf the change is deliberate: AIMOS_UPDATE_SNAPSHOTS=1 pytest tests/tui/test_tui_snapshots.py"
        )


@pytest.fixture(autouse=True)
def seeded_home() -> None:
    seeded_brain.copy_to(HOME)


def test_the_fixture_is_current_and_verifies() -> None:
    """A migration added since the fixture was made, or a fixture that no longer verifies, means
    the snapshots show a brain aimos would not make: rebuild it (see seeded_brain.py)."""
    from aimos.store.connection import code_schema_version, open_reader, schema_version
    from aimos.verify.brain.verifier import verify_brain

    conn = open_reader(HOME / "brain.sqlite3")
    try:
        assert schema_version(conn) == code_schema_version(), (
            "rebuild: python tests/tui/seeded_brain.py --write"
        )
        report = verify_brain(conn)
        assert report.ok, [r for r in report.records if not r.ok]
    finally:
        conn.close()
    anchors = json.loads((HOME / "config" / "anchors.json").read_text())
    assert len(anchors["brains"]) == 1
    assert not (seeded_brain.FIXTURE / "keystore").exists()
    assert not list(seeded_brain.FIXTURE.rglob("*.key"))


def test_snapshots_are_deterministic() -> None:
    first = take((80, 24))
    seeded_brain.copy_to(HOME)
    assert take((80, 24)) == first


def test_memories_80x24(tmp_path: Path) -> None:
    svg, text = take((80, 24))
    assert "11 memories" not in text  # the superseded version is hidden by default
    assert "10 memories" in text
    check("memories_80x24", svg, text, tmp_path)


def test_memories_60x20(tmp_path: Path) -> None:
    svg, text = take((60, 20))
    assert "10 memories" in text
    check("memories_60x20", svg, text, tmp_path)


def test_memories_filtered_by_words(tmp_path: Path) -> None:
    async def steps(pilot: Any) -> None:
        await pilot.press("slash", *"home", "enter")

    svg, text = take((80, 24), steps)
    assert "3 of 10 memories" in text
    check("memories_filtered", svg, text, tmp_path)


def test_memories_with_history_sorted_by_weight(tmp_path: Path) -> None:
    async def steps(pilot: Any) -> None:
        await pilot.press("h", "o", "v")

    svg, text = take((100, 24), steps)
    assert "11 memories and superseded versions" in text
    assert "sorted by weight ▲" in text
    check("memories_history_weight", svg, text, tmp_path)


def test_memory_detail_with_trajectory(tmp_path: Path) -> None:
    boiler = memory_by_key("home:boiler")

    async def steps(pilot: Any) -> None:
        pilot.app.open_memory(boiler)

    svg, text = take((100, 60), steps)
    assert "weight trajectory: 4 points" in text
    assert "✓ verifies: 1 signed weight change, 1 signature checked" in text
    check("memory_detail_trajectory", svg, text, tmp_path)


def test_memory_detail_with_label_history(tmp_path: Path) -> None:
    poison = str(fixture_value("SELECT memory_id FROM memories WHERE key IS NULL"))

    async def steps(pilot: Any) -> None:
        pilot.app.open_memory(poison)

    svg, text = take((100, 50), steps)
    assert "poison, confirmed by a person; withheld" in text and "asks for a password" in text
    check("memory_detail_labels", svg, text, tmp_path)


def test_memory_detail_of_a_corrected_version(tmp_path: Path) -> None:
    old = str(fixture_value("SELECT old_memory_id FROM memory_supersessions"))

    async def steps(pilot: Any) -> None:
        pilot.app.open_memory(old)

    svg, text = take((100, 40), steps)
    assert "1 of 2 (superseded)" in text
    check("memory_detail_superseded", svg, text, tmp_path)


def test_receipt_verified(tmp_path: Path) -> None:
    from aimos.tui.recall import ReceiptScreen

    receipt = str(fixture_value("SELECT receipt_id FROM recall_receipts"))

    async def steps(pilot: Any) -> None:
        await pilot.app.push_screen(ReceiptScreen(receipt))
        await pilot.pause()
        await pilot.press("v")

    svg, text = take((100, 40), steps)
    assert "VALID: every check passed" in text
    assert re.search(r"✓ Merkle root recomputes", text)
    check("receipt_verified", svg, text, tmp_path)


def test_recall_screen_before_a_query(tmp_path: Path) -> None:
    async def steps(pilot: Any) -> None:
        await pilot.press("2")

    svg, text = take((80, 24), steps)
    assert "Only memories that match come back" in text and "signed receipt" in text
    check("recall_empty", svg, text, tmp_path)


def test_status(tmp_path: Path) -> None:
    async def steps(pilot: Any) -> None:
        await pilot.press("3")

    svg, text = take((100, 50), steps)
    assert "housekeeper NOT running" in text
    assert "last corpus proof root" in text
    check("status", svg, text, tmp_path)


def test_status_after_verify_all(tmp_path: Path) -> None:
    async def steps(pilot: Any) -> None:
        await pilot.press("3")
        await pilot.pause()
        await pilot.press("v")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    svg, text = take((100, 50), steps)
    assert "✓ the brain verifies: 11 memories" in text
    check("status_verified", svg, text, tmp_path)


def test_help(tmp_path: Path) -> None:
    async def steps(pilot: Any) -> None:
        await pilot.press("question_mark")

    svg, text = take((80, 24), steps)
    assert "1 / 2 / 3     memories, recall, status" in text
    check("help", svg, text, tmp_path)


def test_the_readme_screenshot_is_the_tui_today(tmp_path: Path) -> None:
    """docs/tui.svg, shown by the README, is Textual's own screenshot of the memories screen on the
    seeded brain at 110x17 with the fixed clock: a change to that screen fails here until the
    picture is taken again (AIMOS_UPDATE_SNAPSHOTS=1), so the README never shows an older TUI."""
    svg, text = take((110, 17))
    assert "10 memories" in text and "home:boiler" in text
    assert "README" not in svg and str(HOME) not in svg  # nothing of the machine it was taken on
    check("readme_tui", svg, text, tmp_path, path=README_SCREENSHOT)
