"""`aimos eval tui`: the TUI's first paint beside `aimos list`, and its scrolling, opening and
filtering, measured on a scratch brain of synthetic memories (the real app, headless); bad input
refused before anything is built."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import run_aimos

pytestmark = pytest.mark.timeout(300)

FIGURES = ("first_paint", "import_app", "cli_list_20", "cli_list_filtered", "open_memory", "filter")


def test_first_paint_and_scrolling_are_measured(aimos_home: Path) -> None:
    report = run_aimos("eval", "tui", "--memories", "100", "--runs", "1", "--json", timeout=280).ok().json()
    assert report["memories"] == report["rows"] == 100
    for name in FIGURES:
        figures = report[name]
        assert figures["n"] >= 1 and 0 < figures["median_ms"] <= figures["p95_ms"], (name, figures)
    assert report["page_presses"] == 200 and report["press_cached"]["n"] >= 1
    assert report["filter_matches"] >= 1 and report["jump_to_end_ms"] > 0
    assert report["ratio_first_paint_to_cli_list"] > 0 and report["target_first_paint_ms"] == 1000
    shown = run_aimos("eval", "tui", "--memories", "100", "--runs", "1", timeout=280).ok().out
    assert "aimos tui over 100 memories" in shown and "first paint / `aimos list -n 20`" in shown, shown
    assert "jump to the end" in shown and "over 100 rows" in shown, shown
    assert not list(aimos_home.glob("**/brain.sqlite3")), "the scratch brain is purged"


@pytest.mark.parametrize(
    ("option", "value", "words"),
    [
        ("--memories", "99", "--memories must be between 100 and 1,000,000"),
        ("--runs", "0", "--runs must be between 1 and 50"),
    ],
)
def test_bad_input_is_refused_before_anything_is_built(
    aimos_home: Path, option: str, value: str, words: str
) -> None:
    result = run_aimos("eval", "tui", option, value)
    assert (result.code, "Traceback" in result.err) == (2, False) and words in result.err, result.describe()
    assert not list(aimos_home.glob("**/brain.sqlite3"))
