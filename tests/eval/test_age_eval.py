"""`aimos eval age`: a scaled year of use in a scratch brain (saves with an import among them,
recalls, outcomes, judgments, the housekeeper's jobs) measured at checkpoints beside the bare
parts; the report's counts, checkpoints, bytes and ratios agree with each other, the scratch brain
is purged with a receipt, and a plan that does not fit is refused before any brain is built."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import run_aimos

from aimos.housekeeper.jobs import JOB_NAMES

pytestmark = pytest.mark.timeout(300)

TINY = (
    "--memories", "60", "--recalls", "60", "--outcomes", "20", "--judgments", "6", "--imported", "12",
    "--checkpoint", "20", "--checkpoint", "40", "--window", "8", "--nights", "2",
)  # fmt: skip


@pytest.mark.real_process
def test_a_tiny_year_adds_up_and_its_brain_is_purged(aimos_home: Path) -> None:
    rep = run_aimos("eval", "age", *TINY, "--json", timeout=280).json()
    assert (rep["memories"], rep["recalls"], rep["judgments"]) == (60, 60, 6)
    assert 0 < rep["outcomes"] <= 20 and 0 <= rep["transitions"] <= rep["outcomes"]
    assert sum(rep["outcome_terminals"].values()) == rep["outcomes"]
    assert rep["outcome_terminals"].get("authorized_transition", 0) == rep["transitions"]

    # the import: 12 memories from notes of up to five sections, through `aimos import`'s path
    imp = rep["import"]
    assert (imp["memories"], imp["files"], imp["occurrences"]) == (12, 3, 0)
    assert imp["saved"] + imp["quarantined"] == 12 and imp["save"]["n"] == 12
    overall = rep["overall"]
    assert overall["save"]["n"] == 60 - 12  # the rest one signed save at a time
    assert overall["recall"]["n"] == 60 and overall["judgment"]["n"] == 6
    assert overall["outcome"]["n"] == rep["outcomes"]
    assert (overall["transition"] or {"n": 0})["n"] == rep["transitions"]

    bare = rep["bare"]["bare_parts_median_ms"]
    parts = ("bare_sign", "bare_verify", "bare_durable_commit")
    assert bare == pytest.approx(sum(rep["bare"][p]["median_ms"] for p in parts), abs=1e-3) and bare > 0

    points = rep["checkpoints"]
    assert [p["memories"] for p in points] == [20, 40, 60]
    assert [p["recalls"] for p in points] == [20, 40, 60]  # recalls kept pace with the saves
    sizes = [p["brain_bytes"] for p in points]
    assert sizes == sorted(sizes) and sizes[0] > 0
    for p in points:
        assert p["window"]["saves"] == 8 and p["save"]["n"] == 8 and p["bare_parts_median_ms"] > 0
        assert p["recall"]["n"] == p["window"]["recalls"] > 0
        assert p["bytes_per_memory"] > 0 and p["bytes_per_recall"] > 0
        assert p["brain_bytes_per_memory"] == pytest.approx(p["brain_bytes"] / p["memories"], abs=0.1)
        for op in ("save", "recall", "outcome", "transition"):
            if p[op] is not None:
                assert p[op]["p95_ms"] >= p[op]["median_ms"] > 0
                # each checkpoint's ratios are to the bare parts measured there
                here = p["bare_parts_median_ms"]
                assert p[op]["ratio_to_bare"] == pytest.approx(p[op]["median_ms"] / here, abs=0.01)
    growth = rep["growth"]
    assert (growth["from_memories"], growth["to_memories"], growth["target"]) == (20, 60, 1.25)
    for op in ("save", "recall"):
        assert growth[op] == pytest.approx(points[-1][op]["median_ms"] / points[0][op]["median_ms"], abs=1e-3)
        relative = points[-1][op]["ratio_to_bare"] / points[0][op]["ratio_to_bare"]
        assert growth[f"{op}_ratio_to_bare"] == pytest.approx(relative, abs=1e-3)
    assert overall["save"]["ratio_to_bare"] == pytest.approx(overall["save"]["median_ms"] / bare, abs=0.01)

    # two nights, each running every housekeeper job on the signed record
    assert len(rep["nights"]) == 2 and rep["nights"][-1]["memories"] == 60
    for night in rep["nights"]:
        assert set(night["jobs"]) == set(JOB_NAMES)
        assert all(j["status"] != "FAILED" and j["error"] is None for j in night["jobs"].values())
    assert rep["verify"]["ok"] is True and rep["verify"]["seconds"] > 0
    assert rep["backup"]["ok"] is True and rep["backup"]["bytes"] > 0
    assert rep["brain_file_bytes"] >= sizes[-1] // 2

    # the scratch brain was purged with a signed receipt, its home removed; the user's brain untouched
    purged = rep["scratch_brains_purged"]
    assert purged["receipts"] == 1 and len(list(Path(purged["receipts_dir"]).glob("*.receipt.json"))) == 1
    assert not Path(rep["scratch_home"]).exists()
    assert not (aimos_home / "brain.sqlite3").exists()


def test_the_text_report_names_every_figure(aimos_home: Path) -> None:
    result = run_aimos("eval", "age", *TINY, timeout=280).ok()
    for words in (
        "a scaled year: 60 memories, 60 recalls",
        "bare parts: sign",
        "B/memory",
        "ratio to bare",
        "import: 12 memories from 3 notes",
        "growth of the save median from 20 to 60 memories",
        "growth of the recall median from 20 to 60 memories",
        "night at 60 memories: heartbeat",
        "verify (both verifiers, parity, brain checks)",
        "backup (the housekeeper's online backup)",
    ):
        assert words in result.out, result.describe()
    assert "1 scratch brain purged" in result.err


def test_a_plan_that_does_not_fit_is_refused_before_any_brain(aimos_home: Path) -> None:
    for args, words in (
        (("--memories", "5"), "--memories must be between 10 and 1,000,000"),
        (("--recalls", "10", "--outcomes", "11"), "--outcomes must be between 0 and 10"),
        (("--memories", "100", "--checkpoint", "101"), "checkpoint 101 is outside the run of 100 memories"),
        (
            ("--memories", "100", "--imported", "30", "--checkpoint", "50", "--checkpoint", "70"),
            "the 30 imported memories do not fit before the checkpoint at 70",
        ),
    ):
        result = run_aimos("eval", "age", *args)
        assert result.code == 2 and words in result.err and "Traceback" not in result.err, result.describe()
    assert not (aimos_home / "purge-receipts").exists() and not (aimos_home / "brain.sqlite3").exists()


@pytest.mark.slow
def test_the_default_checkpoints_below_the_run_and_its_end(aimos_home: Path) -> None:
    """A run past the first default checkpoint measures at 1,000 and at its own end; the default
    counts of outcomes (a fifth of the recalls) and judgments (one in 100 memories)."""
    rep = run_aimos(
        "eval", "age", "--memories", "1100", "--recalls", "110", "--window", "100", "--imported", "40",
        "--nights", "1", "--json", timeout=290,
    ).json()  # fmt: skip
    assert [p["memories"] for p in rep["checkpoints"]] == [1000, 1100]
    assert [p["recalls"] for p in rep["checkpoints"]] == [100, 110]
    assert [p["save"]["n"] for p in rep["checkpoints"]] == [100, 60]  # after the 40 imported
    assert rep["import"]["memories"] == 40 and rep["judgments"] == 11 and 0 < rep["outcomes"] <= 22
    assert rep["verify"]["ok"] is True
