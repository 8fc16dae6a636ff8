"""Each of the five jobs forced to run now with the real `aimos housekeeper run-job NAME --json`:
its two signed events (and nothing else but what the job itself records), and its effect checked
against the brain with plain SQL."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import apsw
import pytest
from support.cli import assert_refused, run_aimos
from support.housekeeper import (
    JOB_IDS,
    ROOT_EVENT,
    STARTED,
    TERMINAL,
    WEEK,
    assert_housekeeper_signed,
    brain_file,
    chains_ok,
    event_count,
    events,
    hk,
    only,
    query,
    read_only,
    run_job,
    scalar,
    signature_ok,
    status_json,
)

from aimos.housekeeper.jobs.bottleneck import CHECKPOINT_TRIES

pytestmark = pytest.mark.timeout(120)


def check_bracket(
    home: Path, run: dict[str, Any], name: str, *, status: str = "SUCCESS"
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The run's one started and one terminal event: housekeeper-signed, metadata as specified."""
    assert run["job"] == name and run["job_id"] == JOB_IDS[name], run
    assert run["status"] == status, run
    assert run["trigger"] == "manual"
    started = only(events(home, STARTED, run_id=run["run_id"]), "started event for the run")
    terminal = only(events(home, TERMINAL, run_id=run["run_id"]), "terminal event for the run")
    for event in (started, terminal):
        assert_housekeeper_signed(home, event)
        meta = event["meta"]
        assert (meta["job"], meta["job_id"], meta["run_id"], meta["trigger"]) == (
            name,
            JOB_IDS[name],
            run["run_id"],
            "manual",
        )
    assert isinstance(started["meta"]["pid"], int) and started["meta"]["pid"] > 0
    assert terminal["meta"]["status"] == status
    assert terminal["meta"]["result"] == run["result"]
    assert terminal["meta"]["attention"] == run["attention"]
    assert terminal["meta"]["error"] == run["error"]
    assert started["ledger_seq"] < terminal["ledger_seq"]
    assert run["started_at"] <= started["ts_signed"] <= terminal["ts_signed"] <= run["finished_at"] + 1
    chains_ok(home)
    return started, terminal


def test_a_run_reads_as_lines_for_a_person(stocked: Path) -> None:
    """Without --json a run's details are readable lines: no Python dict, list or True."""
    result = hk("run-job", "heartbeat")
    assert result.code == 0, result.describe()
    details = dict(row.strip().split(": ", 1) for row in result.out.splitlines()[1:])
    assert details["counts"].startswith("memories ") and ", events " in details["counts"]
    assert details["ledger_head_ok"] == "yes"
    assert not any(c in result.out for c in "{}'") and "True" not in result.out


def test_heartbeat_counts_match_the_brain(stocked: Path) -> None:
    before = event_count(stocked)
    run = run_job("heartbeat")
    assert event_count(stocked) == before + 2
    started, terminal = check_bracket(stocked, run, "heartbeat")
    assert run["error"] is None and run["attention"] == []
    result = run["result"]
    counts = {
        "memories": scalar(stocked, "SELECT COUNT(*) FROM memories"),
        "outcomes": scalar(stocked, "SELECT COUNT(*) FROM outcomes"),
        "receipts": scalar(stocked, "SELECT COUNT(*) FROM recall_receipts"),
        # the job counted before its own terminal event was written
        "events": scalar(stocked, "SELECT COUNT(*) FROM events") - 1,
    }
    assert counts["memories"] >= 3 and counts["outcomes"] >= 1 and counts["receipts"] >= 1
    assert result["counts"] == counts
    flow = {
        r["operation"]: r["n"]
        for r in query(
            stocked,
            "SELECT operation, COUNT(*) AS n FROM events WHERE ts_signed > ? AND event_id <> ?"
            " GROUP BY operation",
            (run["started_at"] - 30 * 60, terminal["event_id"]),
        )
    }
    assert result["events_last_30_min"] == flow
    assert flow[STARTED] >= 1
    assert result["ledger_head_ok"] is True
    assert result["pid"] == started["meta"]["pid"]
    assert result["ping_ms"] >= 0 and result["brain_bytes"] > 0
    # `status` reads the last run back from the signed ledger
    report = status_json()
    job = only([j for j in report["jobs"] if j["name"] == "heartbeat"], "heartbeat row")
    assert job["last_run"]["event_id"] == terminal["event_id"]
    assert job["last_run"]["status"] == "SUCCESS" and job["last_run"]["trigger"] == "manual"


def test_bottleneck_scan_checkpoints_the_wal(stocked: Path, tmp_path: Path) -> None:
    before = event_count(stocked)
    main_only = tmp_path / "main-only.sqlite3"
    # an idle connection keeps the WAL from being folded in when the job's process closes, so
    # what reached the main file is what the job's own checkpoint moved there
    with read_only(brain_file(stocked)) as idle:
        idle.execute("SELECT COUNT(*) FROM events").fetchall()
        run = run_job("bottleneck-scan")
        shutil.copyfile(brain_file(stocked), main_only)
    assert event_count(stocked) == before + 2
    started, terminal = check_bracket(stocked, run, "bottleneck-scan")
    result = run["result"]
    checkpoint = result["wal_checkpoint"]
    assert checkpoint["busy"] == 0, result
    assert checkpoint["checkpointed"] == checkpoint["log_frames"], result
    pending = scalar(
        stocked,
        "SELECT COUNT(*) FROM outcomes o WHERE o.terminal = 'authorized_transition'"
        " AND NOT EXISTS (SELECT 1 FROM weight_projections w WHERE w.outcome_id = o.outcome_id)",
    )
    assert result["pending_outcomes"] == pending == 0
    conn = apsw.Connection(str(main_only))
    try:
        ids = {r[0] for r in conn.execute("SELECT event_id FROM events").fetchall()}
    finally:
        conn.close()
    assert started["event_id"] in ids, "the started event never reached the main file: no checkpoint"
    assert terminal["event_id"] not in ids  # written after the checkpoint, still only in the WAL


def test_bottleneck_scan_reports_a_checkpoint_a_reader_blocks(stocked: Path) -> None:
    with read_only(brain_file(stocked)) as reader:
        reader.execute("BEGIN")
        reader.execute("SELECT COUNT(*) FROM events").fetchall()  # holds a snapshot
        result = run_aimos(
            "housekeeper", "run-job", "bottleneck-scan", "--json", env={"AIMOS_BUSY_TIMEOUT_MS": "200"}
        )
        reader.execute("COMMIT")
    run = result.json()
    check_bracket(stocked, run, "bottleneck-scan", status="ATTENTION")
    checkpoint = run["result"]["wal_checkpoint"]  # PASSIVE: it copies what it can and never waits
    assert checkpoint["checkpointed"] < checkpoint["log_frames"], checkpoint
    assert any("WAL checkpoint" in a for a in run["attention"]), run
    assert checkpoint["tries"] == CHECKPOINT_TRIES, checkpoint  # about a second of tries before it asks
    assert "attention:" in result.err


def test_bottleneck_scan_waits_out_a_reader_that_lets_go(
    stocked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader holding a snapshot for a moment (a recall, `aimos doctor`) is not a bottleneck: the
    scan tries again and the run ends SUCCESS, with no attention, once the reader has let go."""
    from aimos.housekeeper.jobs import bottleneck, job_spec
    from aimos.housekeeper.runs import run_job as run_in_process

    with read_only(brain_file(stocked)) as reader:
        reader.execute("BEGIN")
        reader.execute("SELECT COUNT(*) FROM events").fetchall()  # holds a snapshot
        pauses: list[int] = []

        def let_go() -> None:  # the reader's moment ends during the scan's first pause
            if not pauses:
                reader.execute("COMMIT")
            pauses.append(1)

        monkeypatch.setattr(bottleneck, "_pause", let_go)
        run = run_in_process(job_spec("bottleneck-scan"), trigger="manual")
    assert run.status == "SUCCESS" and not run.attention, run
    checkpoint = run.result["wal_checkpoint"]
    assert pauses == [1] and checkpoint["tries"] == 2, (pauses, checkpoint)
    assert checkpoint["busy"] == 0 and checkpoint["checkpointed"] == checkpoint["log_frames"], checkpoint


def test_nightly_dream_attests_the_root_and_makes_a_verified_backup(stocked: Path) -> None:
    before = event_count(stocked)
    run = run_job("nightly-dream")
    assert event_count(stocked) == before + 3  # started, corpus root, terminal
    started, terminal = check_bracket(stocked, run, "nightly-dream")
    result = run["result"]
    assert result["verified"] is True

    root_event = only(events(stocked, ROOT_EVENT, run_id=run["run_id"]), "corpus root event")
    assert_housekeeper_signed(stocked, root_event)
    assert root_event["event_id"] == result["corpus_root_event_id"]
    assert started["ledger_seq"] < root_event["ledger_seq"] < terminal["ledger_seq"]
    attested = root_event["meta"]
    memories = scalar(stocked, "SELECT COUNT(*) FROM memories")
    assert attested["memories"] == memories
    assert attested["in_database_ok"] is True and attested["portable_verdict"] == "valid"
    assert attested["parity"] is True
    assert attested["verified"] is True and attested["failure_reasons"] == []
    assert not (stocked / "state" / "verify-failed.json").exists()
    assert "verify       ok: the nightly verify on " in run_aimos("status").ok().out

    verify = run_aimos("verify", "--json").json()
    root = verify["in_database"]["corpus_proof_root"]
    assert attested["corpus_proof_root"] == root == result["corpus_proof_root"]
    assert attested["portable_corpus_proof_root"] == verify["portable"]["corpus_proof_root"]

    backups = stocked / "backups"
    backup = backups / result["backup"]["file"]
    assert sorted(p.name for p in backups.iterdir()) == [backup.name]  # no partial file left
    assert result["backups_kept"] == 1 and result["backups_removed"] == []
    assert backup.stat().st_mode & 0o777 == 0o600
    assert result["backup"]["bytes"] == backup.stat().st_size
    with read_only(backup) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA journal_mode").fetchall() == [("delete",)]
        assert conn.execute("SELECT COUNT(*) FROM memories").fetchall()[0][0] == memories
        backed = {r[0] for r in conn.execute("SELECT event_id FROM events").fetchall()}
    # the backup is taken after the root event and before the terminal event
    assert {started["event_id"], root_event["event_id"]} <= backed
    assert terminal["event_id"] not in backed

    from aimos.store.connection import open_reader
    from aimos.verify.brain.verifier import verify_brain

    conn = open_reader(backup)
    try:
        report = verify_brain(conn)
    finally:
        conn.close()
    assert report.ok
    assert len(report.records) == memories
    assert report.corpus_proof_root == root == result["backup"]["corpus_proof_root"]
    assert result["backup"]["integrity"] is True and result["backup"]["verifies"] is True
    assert run_aimos("verify").code == 0


def test_weekly_assessment_counts_the_last_seven_days(install_at: Any) -> None:
    install_at(days_ago=10)  # the install events fall outside the window
    home = Path(os.environ["AIMOS_HOME"])
    run_aimos("save", "a note saved this week about the heron").ok()
    before = event_count(home)
    run = run_job("weekly-assessment")
    assert event_count(home) == before + 2
    _, terminal = check_bracket(home, run, "weekly-assessment")
    since = run["started_at"] - WEEK
    expected = {
        r["operation"]: r["n"]
        for r in query(
            home,
            "SELECT operation, COUNT(*) AS n FROM events WHERE ts_signed > ? AND event_id <> ?"
            " GROUP BY operation",
            (since, terminal["event_id"]),
        )
    }
    result = run["result"]
    assert result["events_by_operation"] == expected
    assert "brain_installed" not in expected
    assert event_count(home, "brain_installed") == 1  # it exists, ten days back
    assert result["events"] == sum(expected.values())
    assert result["window_days"] == 7
    assert result["memories_saved"] == scalar(
        home, "SELECT COUNT(*) FROM memories WHERE created_at > ?", (since,)
    )
    assert result["memories_saved"] >= 1
    assert result["recalls"] == scalar(
        home, "SELECT COUNT(*) FROM recall_receipts WHERE created_at > ?", (since,)
    )


def test_weekly_audit_matches_sql(stocked: Path) -> None:
    before = event_count(stocked)
    run = run_job("weekly-audit")
    assert event_count(stocked) == before + 2
    check_bracket(stocked, run, "weekly-audit")
    result = run["result"]

    def distribution(column: str) -> dict[str, int]:
        return {
            str(r["k"]): r["n"]
            for r in query(stocked, f"SELECT {column} AS k, COUNT(*) AS n FROM memories GROUP BY k")
        }

    types = distribution("memory_type")
    assert {"note", "fact", "procedure"} <= set(types)
    assert result["memory_types"] == types
    assert result["scopes"] == distribution("scope")
    assert result["labels"] == distribution("epistemic_label")
    moved = scalar(stocked, "SELECT COUNT(*) FROM memories WHERE retrieval_weight_milli <> 1000")
    assert result["weights_milli"]["moved"] == moved >= 1
    chains = chains_ok(stocked)
    assert result["event_chains"] == len(chains)
    assert result["event_chains_broken"] == 0
    assert result["events_verified"] == event_count(stocked) - 1  # all but its own terminal
    assert result["agents_expiring_within_7_days"] == []


def test_weekly_audit_flags_an_agent_about_to_expire(install_at: Any) -> None:
    install_at(days_ago=10, validity_days=14)  # the cli agent expires in 4 days
    home = Path(os.environ["AIMOS_HOME"])
    result = hk("run-job", "weekly-audit", "--json")
    run = result.json()
    check_bracket(home, run, "weekly-audit", status="ATTENTION")
    assert run["result"]["agents_expiring_within_7_days"] == ["cli"]
    assert any("cli" in a for a in run["attention"]), run
    assert "attention:" in result.err


def test_a_failing_job_exits_1_and_is_on_the_record(stocked: Path) -> None:
    (stocked / "backups").write_text("not a directory\n")  # the backup cannot be written
    before = event_count(stocked)
    result = hk("run-job", "nightly-dream", "--json")
    assert result.code == 1, result.describe()
    assert "Traceback" not in result.both
    assert "error:" in result.err and "hint:" in result.err
    run = json.loads(result.out)
    assert run["status"] == "FAILED" and run["error"], run
    _, terminal = check_bracket(stocked, run, "nightly-dream", status="FAILED")
    assert terminal["meta"]["error"] == run["error"]
    assert event_count(stocked) == before + 3  # the corpus root was attested before the failure
    # fixed, the next run succeeds
    (stocked / "backups").unlink()
    assert run_job("nightly-dream")["status"] == "SUCCESS"


def test_run_job_accepts_the_reference_job_id(stocked: Path) -> None:
    run = run_job("__system_heartbeat__")
    check_bracket(stocked, run, "heartbeat")


def test_run_job_unknown_name_changes_nothing(stocked: Path) -> None:
    before = event_count(stocked)
    result = hk("run-job", "nosuch")
    assert_refused(result, 2, *JOB_IDS)
    assert "nosuch" in result.err
    assert event_count(stocked) == before
    assert not (stocked / "backups").exists()


def test_the_signature_check_catches_a_forgery(stocked: Path) -> None:
    """The hand-made signature check these tests rely on rejects a changed body or signature."""
    run = run_job("heartbeat")
    terminal = only(events(stocked, TERMINAL, run_id=run["run_id"]))
    assert signature_ok(stocked, terminal)
    forged_body = terminal["signed_body"].replace('"SUCCESS"', '"FAILED"')
    assert forged_body != terminal["signed_body"]
    assert not signature_ok(stocked, {**terminal, "signed_body": forged_body})
    other = only(events(stocked, STARTED, run_id=run["run_id"]))
    assert not signature_ok(stocked, {**terminal, "signature_b64u": other["signature_b64u"]})
    assert not signature_ok(stocked, {**terminal, "ts_signed": terminal["ts_signed"] + 1})
