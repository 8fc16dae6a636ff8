"""`aimos eval storage`: a scratch brain's bytes per memory, per recall and per outcome, table by
table (dbstat), and verification on it; the figures add up and each phase is counted against the
tables it writes. Bad input is refused before anything is built."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import run_aimos

pytestmark = pytest.mark.timeout(300)


def test_the_report_adds_up_and_each_phase_lands_in_its_tables(aimos_home: Path) -> None:
    rep = (
        run_aimos(
            "eval",
            "storage",
            "--memories",
            "150",
            "--recalls",
            "12",
            "--outcomes",
            "6",
            "--json",
            timeout=280,
        )
        .ok()
        .json()
    )
    assert rep["memories"] == 150 and rep["verify_ok"] is True and rep["verify_seconds"] > 0
    for part in ("per_memory", "per_recall", "per_outcome"):
        figures = rep[part]
        assert figures["stored"] == pytest.approx(sum(t["stored"] for t in figures["tables"].values()), abs=1)
        assert figures["payload"] > 0
    assert {"memories", "events", "memory_provenance", "memory_fts"} <= set(rep["per_memory"]["tables"])
    assert "recall_receipts" in rep["per_recall"]["tables"]
    assert "memories" not in rep["per_recall"]["tables"]  # a recall saves nothing
    assert 0 < rep["outcomes"] <= 6 and 0 <= rep["transitions"] <= rep["outcomes"]
    assert "outcomes" in rep["per_outcome"]["tables"]
    assert rep["brain_file_bytes"] >= rep["per_memory"]["stored"] * 150


def test_bad_input_is_refused(aimos_home: Path) -> None:
    for args, words in (
        (("--memories", "5"), "--memories must be between 100 and 1,000,000"),
        (("--recalls", "0"), "--recalls must be between 1 and 100,000"),
    ):
        result = run_aimos("eval", "storage", *args)
        assert result.code == 2 and words in result.err and "Traceback" not in result.err, result.describe()
