"""Run one job on the signed record: `system_job_started`, the job, `system_job_terminal`.

The started event is committed before the job begins, so a run that dies part-way (a crash, a
SIGKILL) leaves an open run in the ledger; the next start reconciles it with a terminal event
of status INTERRUPTED (the reference's boot recovery of open runs).
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass
from typing import Any

from aimos import paths
from aimos.crypto.canonical import json_loads
from aimos.errors import AimosError, NotInstalledError
from aimos.housekeeper.jobs import JobSpec, job_specs
from aimos.housekeeper.jobs.context import JobContext
from aimos.identity.epochs import load_signer, revocation_at
from aimos.identity.keystore import Keystore, open_keystore
from aimos.identity.signer import Signer
from aimos.ledger.events import append_event
from aimos.store.connection import Connection, open_writer, seal_with, write_transaction
from aimos.store.engine import rollback_if_open
from aimos.store.meta import brain_meta
from aimos.store.queries.housekeeper import events_with_metadata, newest_terminal, run_ids_of
from aimos.vocabulary import HOUSEKEEPER

STARTED = "system_job_started"
TERMINAL = "system_job_terminal"
INTERRUPTED = "INTERRUPTED"  # the status of a run its process never finished


@dataclass
class JobRun:
    job: str
    job_id: str
    run_id: str
    status: str  # SUCCESS | ATTENTION | FAILED
    trigger: str
    started_at: int
    finished_at: int
    duration_ms: float
    result: dict[str, Any]
    attention: list[str]
    error: str | None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def open_housekeeper_writer() -> tuple[Connection, dict[str, str]]:
    path = paths.brain_path()
    if not path.exists():
        raise NotInstalledError(f"no aimos brain at {path}")
    conn = open_writer(path)
    meta = brain_meta(conn)
    if "brain_id" not in meta:
        conn.close()
        raise NotInstalledError(f"no aimos brain at {path}")
    return conn, meta


def _append(conn: Connection, signer: Any, company: str, operation: str, metadata: dict[str, Any]) -> str:
    with write_transaction(conn, signer):
        event = append_event(
            conn, signer, operation=operation, company_id=company, metadata=metadata, now=int(time.time())
        )
    return str(event["event_id"])


def _still_current(conn: Connection, keystore: Keystore, signer: Signer) -> Signer:
    """``signer``, unless its key was rotated (`aimos housekeeper rotate-key`) while the job ran:
    then the housekeeper's new epoch, which signs and seals the run's terminal event instead."""
    if revocation_at(conn, HOUSEKEEPER, signer.valid_from) is None:
        return signer
    current = load_signer(conn, keystore, HOUSEKEEPER, int(time.time()))
    seal_with(conn, current)
    return current


def run_job(spec: JobSpec, *, trigger: str, scheduled_for: int | None = None) -> JobRun:
    """Run one job now in this process, bracketed by its signed events. Never raises for a job
    failure (the terminal event records it); raises only when the brain cannot be opened or the
    started event cannot be written."""
    conn, meta = open_housekeeper_writer()
    try:
        keystore = open_keystore(meta["keystore"], meta["brain_id"])
        started_at = int(time.time())
        housekeeper = load_signer(conn, keystore, HOUSEKEEPER, started_at)
        seal_with(conn, housekeeper)  # its writes are sealed by the housekeeper
        company = meta["company_id"]
        run_id = str(uuid.uuid4())
        base = {"job": spec.name, "job_id": spec.job_id, "run_id": run_id, "trigger": trigger}
        _append(
            conn,
            housekeeper,
            company,
            STARTED,
            {
                **base,
                "scheduled_for": scheduled_for,
                "pid": os.getpid(),
                "process": process_identity(os.getpid()),
            },
        )
        ctx = JobContext(conn, housekeeper, company, meta["brain_id"], started_at, run_id)
        clock = time.perf_counter()
        error: str | None = None
        result: dict[str, Any] = {}
        try:
            result = spec.run(ctx)
        except AimosError as exc:
            error = f"{type(exc).__name__}: {exc.message}"
        except Exception as exc:  # a job's failure is recorded, never lost and never fatal
            error = f"{type(exc).__name__}: {exc}"
        duration_ms = round((time.perf_counter() - clock) * 1000, 1)
        rollback_if_open(conn)
        status = "FAILED" if error else ("ATTENTION" if ctx.attention else "SUCCESS")
        finished_at = int(time.time())
        housekeeper = _still_current(conn, keystore, housekeeper)
        _append(
            conn,
            housekeeper,
            company,
            TERMINAL,
            {
                **base,
                "status": status,
                "duration_ms": duration_ms,
                "result": result,
                "attention": ctx.attention,
                "error": error,
            },
        )
        return JobRun(
            spec.name,
            spec.job_id,
            run_id,
            status,
            trigger,
            started_at,
            finished_at,
            duration_ms,
            result,
            ctx.attention,
            error,
        )
    finally:
        conn.close()


def last_runs(conn: Connection, *, completed_only: bool = False) -> dict[str, dict[str, Any]]:
    """Each job's newest terminal event (status, when, duration, attention) from the ledger;
    with ``completed_only``, the newest run that finished (not one closed as INTERRUPTED)."""
    found: dict[str, dict[str, Any]] = {}
    for spec in job_specs():
        row = newest_terminal(
            conn, TERMINAL, spec.job_id, skip_status=INTERRUPTED if completed_only else None
        )
        if row:
            metadata = json_loads(row["signed_body"])["metadata"]
            found[spec.name] = {
                "event_id": row["event_id"],
                "finished_at": int(row["ts_signed"]),
                "status": metadata.get("status"),
                "trigger": metadata.get("trigger"),
                "duration_ms": metadata.get("duration_ms"),
                "attention": metadata.get("attention") or [],
                "error": metadata.get("error"),
            }
    return found


def process_identity(pid: int) -> str | None:
    """The boot and the start time of process ``pid`` (Linux), so a reused pid is not the same
    process; None where /proc does not tell."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            boot = handle.read().strip()
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            started = handle.read().rsplit(")", 1)[-1].split()[19]
    except (OSError, IndexError):
        return None
    return f"{boot}:{started}"


def run_still_alive(metadata: dict[str, Any]) -> bool:
    """The process that wrote a started event still runs (same pid and, where known, same start)."""
    pid = metadata.get("pid")
    if not isinstance(pid, int) or not pid_alive(pid):
        return False
    recorded = metadata.get("process")
    return recorded is None or recorded == process_identity(pid)


def pid_alive(pid: Any) -> bool:
    """True while ``pid`` is a live process (a zombie, dead but not yet reaped, counts as gone)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except (OSError, IndexError):
        return True  # no /proc (macOS): kill(0) is all there is


def open_runs(conn: Connection) -> list[dict[str, Any]]:
    """Started events with no terminal event whose process is gone: runs a killed process never
    finished (a run still going in another live process is left alone)."""
    finished = run_ids_of(conn, TERMINAL)
    found = []
    for r in events_with_metadata(conn, STARTED):
        metadata = json_loads(r["metadata"])
        if metadata.get("run_id") in finished or run_still_alive(metadata):
            continue
        found.append({"event_id": r["event_id"], "started_at": int(r["ts_signed"]), **metadata})
    return found


def reconcile_open_runs() -> list[str]:
    """Close every open run with a signed INTERRUPTED terminal event; returns their run ids."""
    conn, meta = open_housekeeper_writer()
    try:
        open_now = open_runs(conn)
        if not open_now:
            return []
        keystore = open_keystore(meta["keystore"], meta["brain_id"])
        housekeeper = load_signer(conn, keystore, HOUSEKEEPER, int(time.time()))
        seal_with(conn, housekeeper)  # its writes are sealed by the housekeeper
        for run in open_now:
            _append(
                conn,
                housekeeper,
                meta["company_id"],
                TERMINAL,
                {
                    "job": run.get("job"),
                    "job_id": run.get("job_id"),
                    "run_id": run.get("run_id"),
                    "trigger": run.get("trigger"),
                    "status": INTERRUPTED,
                    "duration_ms": None,
                    "result": {},
                    "attention": ["the process running this job stopped before it finished"],
                    "error": None,
                    "started_event_id": run["event_id"],
                },
            )
        return [str(r.get("run_id")) for r in open_now]
    finally:
        conn.close()
