"""Backup retention: the nightly dream keeps the newest 7 backups of the brain, all real backups
that open and pass SQLite's integrity check."""

from __future__ import annotations

import calendar
from pathlib import Path

import pytest
from support.cells import cell_str
from support.housekeeper import read_only, run_job

pytestmark = pytest.mark.timeout(120)

KEEP = 7


def backup_names(home: Path) -> list[str]:
    return sorted(p.name for p in (home / "backups").iterdir())


def test_nightly_dream_keeps_the_newest_seven(stocked: Path) -> None:
    from aimos.housekeeper.jobs.nightly_dream import online_backup

    # eight older real backups, one a day from 2020-01-01
    first = calendar.timegm((2020, 1, 1, 0, 0, 0))
    old = [online_backup(first + day * 86400).name for day in range(8)]
    assert (
        old[0] == "brain-20200101T000000Z-0000.sqlite3" and old[-1] == "brain-20200108T000000Z-0000.sqlite3"
    )
    assert backup_names(stocked) == old

    run = run_job("nightly-dream")
    newest = run["result"]["backup"]["file"]
    assert run["result"]["backups_removed"] == old[:2]
    assert run["result"]["backups_kept"] == KEEP
    assert backup_names(stocked) == sorted([*old[2:], newest])

    kept_newest = []
    for _ in range(2):
        run = run_job("nightly-dream")
        kept_newest.append(run["result"]["backup"]["file"])
        names = backup_names(stocked)
        assert len(names) == KEEP and run["result"]["backups_kept"] == KEEP
        assert all(name in names for name in kept_newest), (kept_newest, names)
    assert newest in backup_names(stocked)
    assert backup_names(stocked)[:4] == old[4:]  # then the oldest went, one per run
    for name in backup_names(stocked):
        path = stocked / "backups" / name
        assert path.stat().st_mode & 0o777 == 0o600
        with read_only(path) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


def test_backups_made_in_the_same_second_keep_the_newest(stocked: Path) -> None:
    """Two nightly runs can start in the same second (a manual run-job beside a scheduled or
    catch-up run): the backup just made must never be the one retention removes."""
    from aimos.housekeeper.jobs.nightly_dream import online_backup, prune_backups

    with read_only(stocked / "brain.sqlite3") as conn:
        ((cell,),) = conn.execute("SELECT value FROM brain_meta WHERE key = 'brain_id'").fetchall()
    brain_id = cell_str(cell)
    now = calendar.timegm((2026, 3, 1, 2, 0, 0))
    for n in range(KEEP + 2):
        made = online_backup(now)
        prune_backups(brain_id, now)
        assert made.exists(), (
            f"backup #{n + 1} ({made.name}) was removed by the retention that followed it; "
            f"left: {backup_names(stocked)}"
        )
    assert len(backup_names(stocked)) == KEEP
    # the record of backups follows retention: it names the ones kept, not the ones removed
    from aimos.housekeeper.backup_records import recorded

    assert sorted(b.path.name for b in recorded(brain_id)) == backup_names(stocked)


def test_without_a_trust_anchor_the_nightly_job_asks_for_attention(stocked: Path) -> None:
    """The anchor comes from anchors.json, outside the brain; with none for this brain the job
    still verifies (against the brain's own master) but says what that does not prove."""
    (stocked / "config" / "anchors.json").unlink()
    run = run_job("nightly-dream")
    assert run["status"] == "ATTENTION", run
    assert any("anchors.json holds no master fingerprint" in a for a in run["attention"]), run


def test_a_backup_that_does_not_verify_prunes_nothing(stocked: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from aimos.housekeeper.jobs import nightly_dream

    first = calendar.timegm((2020, 1, 1, 0, 0, 0))
    old = [nightly_dream.online_backup(first + day * 86400).name for day in range(KEEP)]
    monkeypatch.setattr(
        nightly_dream,
        "check_backup",
        lambda path: {"integrity": False, "verifies": False, "memories": 0, "corpus_proof_root": ""},
    )
    from aimos.housekeeper.jobs import job_spec
    from aimos.housekeeper.runs import run_job as run_in_process

    run = run_in_process(job_spec("nightly-dream"), trigger="manual")
    assert run.status == "ATTENTION" and run.result["backups_removed"] == []
    assert set(old) <= set(backup_names(stocked))
    assert len(backup_names(stocked)) == KEEP + 1
