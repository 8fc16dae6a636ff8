"""The housekeeper's key rotation and the housekeeper's own work: its jobs sign with the new epoch
(a new event chain), and a backup taken before the rotation is restored without bringing the
rotated-out key back (the restore gives the housekeeper a new key of its own)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from support.cli import run_aimos
from support.housekeeper import chains_ok, events, run_job

pytestmark = pytest.mark.timeout(240)


def _housekeepers() -> list[dict[str, Any]]:
    agents = run_aimos("agent", "list", "--json").json()
    return [a for a in agents if a["agent_id"] == "housekeeper"]


def _verified() -> None:
    report = run_aimos("verify", "--json").json()
    assert report["ok"] and report["parity"], report


def _next_second() -> None:
    time.sleep(1.05 - time.time() % 1)


def test_jobs_sign_with_the_new_epoch_after_a_rotation(stocked: Path) -> None:
    run_job("heartbeat")
    _next_second()
    rotated = run_aimos("housekeeper", "rotate-key", "--json").json()
    _next_second()
    run_job("heartbeat")
    signers = {e["signer_valid_from"] for e in events(stocked, "system_job_terminal")}
    assert len(signers) == 2, signers  # one chain per epoch, the newest the rotated-in one
    newest = max(events(stocked, "system_job_terminal"), key=lambda e: e["ts_signed"])
    assert json.loads(newest["signed_body"])["signer_valid_from"] == rotated["valid_from"]
    assert len(chains_ok(stocked)) == 2
    _verified()


def test_a_backup_from_before_the_rotation_is_restored_with_a_new_housekeeper_key(stocked: Path) -> None:
    backup = run_job("nightly-dream")["result"]["backup"]["file"]
    for _ in range(2):  # rotated twice since the backup: neither rotated-out key comes back
        _next_second()
        run_aimos("housekeeper", "rotate-key").ok()
        run_aimos("save", "saved after a rotation, before the restore").ok()
    _next_second()

    restored = run_aimos("restore", backup, "--yes", "--json").json()
    assert restored["housekeeper_key_rotated"] is True
    assert "housekeeper" not in restored["lost"]["revocations_undone"]
    # the backup's epoch (the one rotated out) is revoked again, and a new one seals the brain
    epochs = _housekeepers()
    assert [e["state"] for e in epochs] == ["revoked", "active"], epochs
    assert run_aimos("save", "the first save after the restore").ok().out.strip()
    assert run_job("heartbeat")["status"] == "SUCCESS"
    _verified()


def test_a_backup_whose_housekeeper_key_is_still_here_is_restored_as_before(stocked: Path) -> None:
    backup = run_job("nightly-dream")["result"]["backup"]["file"]
    run_aimos("save", "saved after the backup").ok()
    restored = run_aimos("restore", backup, "--yes", "--json").json()
    assert restored["housekeeper_key_rotated"] is False
    assert [e["state"] for e in _housekeepers()] == ["active"]
    _verified()


def test_a_job_running_while_the_key_is_rotated_ends_on_the_record(stocked: Path, passphrase: str) -> None:
    """The job holds the key it started with; rotated away mid-run, the job's own write is refused
    (nothing sealed by a revoked key) and its terminal event is signed with the new key."""
    from aimos.actions.agents import rotate_housekeeper
    from aimos.actions.session import open_brain
    from aimos.housekeeper.jobs import JobSpec
    from aimos.housekeeper.jobs.context import JobContext
    from aimos.housekeeper.runs import run_job as run_in_process
    from aimos.ledger.events import append_event
    from aimos.store.connection import write_transaction

    def rotate_midway(ctx: JobContext) -> dict[str, Any]:
        with open_brain(write=True) as brain:
            rotated = rotate_housekeeper(brain, brain.master_with(passphrase))
        time.sleep(max(0.0, rotated.signer.valid_from - time.time()))
        with write_transaction(ctx.conn):
            append_event(
                ctx.conn,
                ctx.housekeeper,
                operation="heartbeat",
                company_id=ctx.company_id,
                metadata={},
                now=int(time.time()),
            )
        return {}

    spec = JobSpec("rotate-midway", "aimos.test.rotate_midway", {"hour": "0"}, "test", rotate_midway)
    run = run_in_process(spec, trigger="manual")
    assert run.status == "FAILED" and run.error is not None and "revoked" in run.error, run
    terminal = only_terminal(stocked, run.run_id)
    new = [e for e in _housekeepers() if e["state"] == "active"]
    assert json.loads(terminal["signed_body"])["signer_valid_from"] == new[0]["valid_from"]
    chains_ok(stocked)
    _verified()


def only_terminal(home: Path, run_id: str) -> dict[str, Any]:
    (found,) = events(home, "system_job_terminal", run_id=run_id)
    return found
