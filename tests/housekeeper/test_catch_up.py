"""Missed runs (`scheduler.missed_jobs`) and open runs a killed process left (`runs.open_runs`,
`reconcile_open_runs`), in-process and through a real started housekeeper."""

from __future__ import annotations

import os
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from support.housekeeper import (
    DAY,
    JOB_IDS,
    JOB_NAMES,
    STARTED,
    TERMINAL,
    assert_housekeeper_signed,
    backups_of,
    chains_ok,
    dead_pid,
    events,
    hk,
    only,
    run_job,
    scalar,
    wait_for,
)

pytestmark = pytest.mark.timeout(120)


def owed(now: int) -> dict[str, int]:
    from aimos.housekeeper.scheduler import missed_jobs

    found = missed_jobs(now)
    names = [spec.name for spec, _ in found]
    assert len(names) == len(set(names)), f"a job is owed more than once: {names}"
    return {spec.name: due for spec, due in found}


def spec(name: str) -> Any:
    from aimos.housekeeper.jobs import job_spec

    return job_spec(name)


def created_at(home: Path) -> int:
    return int(scalar(home, "SELECT value FROM brain_meta WHERE key = 'created_at'"))


def utc(ts: int | None) -> datetime:
    assert ts is not None, "no time"
    return datetime.fromtimestamp(ts, tz=UTC)


def open_run(job: str, pid: int, trigger: str = "schedule", process: str | None = None) -> tuple[str, str]:
    """Append a housekeeper-signed `system_job_started` event as a process with ``pid`` would
    have before it died; returns (run_id, event_id)."""
    from aimos.housekeeper.runs import STARTED as started_op
    from aimos.housekeeper.runs import _append, open_housekeeper_writer
    from aimos.identity.epochs import load_signer
    from aimos.identity.keystore import open_keystore
    from aimos.vocabulary import HOUSEKEEPER

    conn, meta = open_housekeeper_writer()
    try:
        keystore = open_keystore(meta["keystore"], meta["brain_id"])
        signer = load_signer(conn, keystore, HOUSEKEEPER, int(time.time()))
        run_id = str(uuid.uuid4())
        metadata = {
            "job": job,
            "job_id": JOB_IDS[job],
            "run_id": run_id,
            "trigger": trigger,
            "scheduled_for": int(time.time()),
            "pid": pid,
            **({"process": process} if process is not None else {}),
        }
        event_id = _append(conn, signer, meta["company_id"], started_op, metadata)
    finally:
        conn.close()
    return run_id, event_id


def test_next_fire_is_strictly_after() -> None:
    from aimos.housekeeper.scheduler import next_fire

    half_past = int(datetime(2026, 3, 4, 10, 30, tzinfo=UTC).timestamp())
    assert next_fire(spec("heartbeat"), half_past) == half_past + 1800
    assert next_fire(spec("heartbeat"), half_past - 1) == half_past
    assert next_fire(spec("bottleneck-scan"), half_past) == half_past + 1800
    before_two = int(datetime(2026, 3, 4, 1, 59, 59, tzinfo=UTC).timestamp())
    assert next_fire(spec("nightly-dream"), before_two) == before_two + 1
    # 2026-03-04 is a Wednesday: the weekly jobs fall on Sunday 2026-03-08, 02:00 and 03:00 UTC
    assert utc(next_fire(spec("weekly-assessment"), half_past)) == datetime(2026, 3, 8, 2, 0, tzinfo=UTC)
    assert utc(next_fire(spec("weekly-audit"), half_past)) == datetime(2026, 3, 8, 3, 0, tzinfo=UTC)


def test_nothing_is_owed_at_install_and_every_job_once_eight_days_on(installed: Path) -> None:
    from aimos.housekeeper.runs import last_runs, open_housekeeper_writer
    from aimos.housekeeper.scheduler import next_fire

    installed_at = created_at(installed)
    assert owed(installed_at) == {}
    later = installed_at + 8 * DAY
    due = owed(later)
    assert sorted(due) == sorted(JOB_NAMES)
    conn, _ = open_housekeeper_writer()
    try:
        last = last_runs(conn)
    finally:
        conn.close()
    for name, when in due.items():
        since = last[name]["finished_at"] if name in last else installed_at
        assert when == next_fire(spec(name), since), name  # the first run missed, owed once
        assert since < when <= later
    assert utc(due["weekly-assessment"]).weekday() == 6 and utc(due["weekly-assessment"]).hour == 2
    assert utc(due["weekly-audit"]).weekday() == 6 and utc(due["weekly-audit"]).hour == 3
    assert (utc(due["nightly-dream"]).hour, utc(due["nightly-dream"]).minute) == (2, 0)
    assert utc(due["heartbeat"]).minute in (0, 30) and utc(due["bottleneck-scan"]).minute == 0


def test_a_run_pays_what_it_owed(install_at: Any) -> None:
    from aimos.housekeeper.scheduler import next_fire

    install_at(days_ago=10)
    now = int(time.time())
    assert sorted(owed(now)) == sorted(JOB_NAMES)  # ten days: every job, each once

    audit = run_job("weekly-audit")
    after_audit = owed(audit["finished_at"])
    assert "weekly-audit" not in after_audit
    assert {"weekly-assessment", "nightly-dream"} <= set(after_audit)

    beat = run_job("heartbeat")
    assert "heartbeat" not in owed(beat["finished_at"])
    # what is owed next is counted from the last terminal event, not from the install
    week_on = beat["finished_at"] + 8 * DAY
    assert owed(week_on)["heartbeat"] == next_fire(spec("heartbeat"), beat["finished_at"])


def test_reconcile_closes_only_runs_whose_process_is_gone(brain: Any) -> None:
    from aimos.housekeeper.runs import open_runs, reconcile_open_runs

    home = brain.home
    dead_run, dead_event = open_run("heartbeat", dead_pid())
    live_run, _ = open_run("weekly-audit", os.getpid())  # this process: alive
    assert [r["run_id"] for r in open_runs(brain.conn)] == [dead_run]

    assert reconcile_open_runs() == [dead_run]
    terminal = only(events(home, TERMINAL, run_id=dead_run), "INTERRUPTED terminal")
    assert_housekeeper_signed(home, terminal)
    meta = terminal["meta"]
    assert meta["status"] == "INTERRUPTED"
    assert (meta["job"], meta["job_id"], meta["trigger"]) == ("heartbeat", JOB_IDS["heartbeat"], "schedule")
    assert meta["started_event_id"] == dead_event
    assert events(home, TERMINAL, run_id=live_run) == []
    # closed once: a second reconcile finds nothing
    assert reconcile_open_runs() == []
    assert len(events(home, TERMINAL, run_id=dead_run)) == 1
    chains_ok(home)
    # `status` shows the interrupted run as the job's last run
    report = hk("status", "--json").json()
    beat = only([j for j in report["jobs"] if j["name"] == "heartbeat"], "heartbeat row")
    assert beat["last_run"]["status"] == "INTERRUPTED"


def test_an_interrupted_run_is_still_owed(install_at: Any) -> None:
    """A nightly dream killed part-way made no backup: after the restart reconciles it, the
    catch-up must still owe that run (an INTERRUPTED terminal is not a run that happened)."""
    from aimos.housekeeper.runs import reconcile_open_runs

    install_at(days_ago=10)
    assert "nightly-dream" in owed(int(time.time()))
    run_id, _ = open_run("nightly-dream", dead_pid(), trigger="catch_up")
    assert reconcile_open_runs() == [run_id]
    assert "nightly-dream" in owed(int(time.time())), (
        "the INTERRUPTED terminal counted as the nightly dream's last run, so the missed run "
        "is never caught up"
    )


def test_started_housekeeper_closes_open_runs(brain: Any, reaper: Any) -> None:

    run_id, _ = open_run("bottleneck-scan", dead_pid())
    started = hk("start")
    started.ok()
    terminal = wait_for(
        lambda: events(brain.home, TERMINAL, run_id=run_id), "the INTERRUPTED terminal", timeout=30
    )
    assert only(terminal)["meta"]["status"] == "INTERRUPTED"
    assert_housekeeper_signed(brain.home, terminal[0])
    hk("stop").ok()
    assert len(events(brain.home, TERMINAL, run_id=run_id)) == 1
    chains_ok(brain.home)


def test_started_housekeeper_catches_up_each_missed_job_once(install_at: Any, reaper: Any) -> None:
    install_at(days_ago=10)
    home = Path(os.environ["AIMOS_HOME"])
    expected = owed(int(time.time()))
    assert sorted(expected) == sorted(JOB_NAMES)

    hk("start").ok()

    def caught_up() -> list[dict[str, Any]]:
        done = events(home, TERMINAL, trigger="catch_up")
        return done if len(done) >= len(JOB_NAMES) else []

    done = wait_for(caught_up, "five catch-up runs", timeout=60)
    hk("stop").ok()
    done = events(home, TERMINAL, trigger="catch_up")
    assert sorted(e["meta"]["job"] for e in done) == sorted(JOB_NAMES)  # each once
    for terminal in done:
        meta = terminal["meta"]
        assert meta["status"] == "SUCCESS", meta
        assert_housekeeper_signed(home, terminal)
        started = only(events(home, STARTED, run_id=meta["run_id"]), "started event")
        assert started["meta"]["trigger"] == "catch_up"
        assert started["meta"]["scheduled_for"] == expected[meta["job"]]
    assert len(backups_of(home)) == 1
    assert owed(max(e["ts_signed"] for e in done)) == {}
    chains_ok(home)


def test_a_reused_pid_does_not_keep_a_dead_run_open(brain: Any) -> None:
    """pids repeat (containers especially): a started event whose pid is alive but whose
    recorded process start differs belongs to a dead process and is closed."""
    from aimos.housekeeper.runs import process_identity, reconcile_open_runs

    mine = process_identity(os.getpid())
    assert mine is not None  # Linux: boot id and start time
    reused, _ = open_run("heartbeat", os.getpid(), process="another-boot:12345")
    same, _ = open_run("weekly-audit", os.getpid(), process=mine)
    assert reconcile_open_runs() == [reused]
    assert events(brain.home, TERMINAL, run_id=same) == []
