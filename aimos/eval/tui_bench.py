"""`aimos eval tui`: how fast the TUI opens and scrolls on a big brain.

A scratch brain of N synthetic memories (the real signed save) is built, then:
- first paint: a fresh Python process imports the app, opens the brain, queries the list and
  paints the first frame headless at 80x24 (Textual's Ready event), several runs; beside it, in
  the same run, `aimos list -n 20` as a subprocess on the same brain (a screenful from the CLI),
  and the same with four filters composed;
- scrolling: page down through the list in a running app: the cursor move plus drawing every
  visible line, split into moves that fetched a new page of rows from the brain and moves that
  did not (terminal output is not included: it is the same for any list);
- a jump to the end, and a word filter over every memory.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from aimos.eval.stats import summary_ms

FIRST_PAINT = """
import time
t0 = time.perf_counter()
from aimos.tui.app import AimosApp
imported = time.perf_counter() - t0

class Timed(AimosApp):
    def on_ready(self) -> None:
        print(imported, time.perf_counter() - t0, flush=True)
        self.exit()

Timed().run(headless=True, size=(80, 24))
"""


def _first_paint(runs: int) -> tuple[list[float], list[float]]:
    imports, paints = [], []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", FIRST_PAINT], capture_output=True, text=True, check=True, timeout=120
        )
        imported, painted = (float(x) for x in done.stdout.split()[-2:])
        imports.append(imported)
        paints.append(painted)
    return imports, paints


# `aimos list` with every filter a synthetic note matches, composed (each one a condition the scan
# checks): what the filters cost beside the plain list, in the same run
FILTERED = ("--type", "note", "--label", "not judged", "--since", "1d", "--source", "cli")


def _cli_list(runs: int, *filters: str) -> list[float]:
    walls = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "aimos", "list", "-n", "20", *filters],
            capture_output=True,
            check=True,
            timeout=120,
        )
        walls.append(time.perf_counter() - t0)
    return walls


async def _scroll(presses: int) -> dict[str, Any]:
    from aimos.memory.versions import browse
    from aimos.tui.app import AimosApp
    from aimos.tui.detail import load
    from aimos.tui.memory_table import MemoryTable

    app = AimosApp()
    fetched: list[float] = []
    cached: list[float] = []
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.screen.query_one(MemoryTable)
        region = table.size.region  # the whole table, from its top left corner
        for _ in range(presses):
            # the work of one page down: move the cursor and scroll, then draw every visible line
            # (fetching a page of rows from the brain when the view reaches one not yet cached)
            before = table.pages_loaded
            t0 = time.perf_counter()
            table.action_page(1)
            table.render_lines(region)
            (fetched if table.pages_loaded > before else cached).append(time.perf_counter() - t0)
            await pilot.pause()
        rows = len(table.rowids)
        t0 = time.perf_counter()
        table.action_jump(-1)
        table.render_lines(region)
        end = time.perf_counter() - t0
        await pilot.pause()
        current = table.current
        opens = []
        for _ in range(5):  # everything the memory screen reads, its one-memory verification included
            t0 = time.perf_counter()
            load(app.reader, str(current["memory_id"]) if current else "")
            opens.append(time.perf_counter() - t0)
        words = str(current["value"]).split()[2:] if current else []
        word = next((w for w in words if w.isalpha()), "note")
        filters, rowids = [], []
        for _ in range(5):  # the query, then drawing the first screen of matches
            t0 = time.perf_counter()
            rowids = browse(app.reader, text=word).rowids
            table.show(rowids)
            table.render_lines(region)
            filters.append(time.perf_counter() - t0)
            await pilot.pause()
        return {
            "rows": rows,
            "page_presses": presses,
            "press_with_fetch": summary_ms(fetched) if fetched else None,
            "press_cached": summary_ms(cached) if cached else None,
            "jump_to_end_ms": round(end * 1000, 2),
            "open_memory": summary_ms(opens),
            "filter_word": word,
            "filter_matches": len(rowids),
            "filter": summary_ms(filters),
        }


def run_tui_perf(memories: int = 100_000, runs: int = 5, presses: int = 200) -> dict[str, Any]:
    from aimos.eval.perf import fill_synthetic
    from aimos.eval.scratch import install_scratch, open_scratch, scratch_home
    from aimos.store.queries.eval import checkpoint

    rng = secrets.SystemRandom()
    with scratch_home("aimos-eval-tui-") as home:
        install_scratch("perf-tui")
        conn, agent, housekeeper = open_scratch()
        t0 = time.perf_counter()
        fill_synthetic(conn, agent, housekeeper, memories, rng)
        checkpoint(conn)
        conn.close()
        build_seconds = time.perf_counter() - t0
        assert os.environ["AIMOS_HOME"] == str(home)
        imports, paints = _first_paint(runs)
        lists = _cli_list(runs)
        filtered = _cli_list(runs, *FILTERED)
        scroll = asyncio.run(_scroll(presses))
        size_mb = (Path(home) / "brain.sqlite3").stat().st_size / 1e6
    first = summary_ms(paints)
    baseline = summary_ms(lists)
    return {
        "memories": memories,
        "brain_mb": round(size_mb, 1),
        "build_seconds": round(build_seconds, 1),
        "first_paint": first,
        "import_app": summary_ms(imports),
        "cli_list_20": baseline,
        "cli_list_filtered": summary_ms(filtered),
        "ratio_first_paint_to_cli_list": round(first["median_ms"] / baseline["median_ms"], 2),
        "target_first_paint_ms": 1000,
        **scroll,
    }
