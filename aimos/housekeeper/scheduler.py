"""The housekeeper process: APScheduler (the only module that imports it) running the five jobs,
and recall by meaning's helpers: the model kept loaded, lent to the person's other processes on a
private socket (meaning/serve), and the vectors job (jobs/vectors: derived rows, not on the record).

One process per brain (the OS lock in `state`); jobs run one at a time on a single worker thread
(they write the same brain, and one writer at a time is the store's rule); each run is on the
signed record (`runs.run_job`). At start: open runs of a killed predecessor are closed, then any
job whose scheduled time passed since its last run (or since the brain was installed) is run once
to catch up. SIGTERM or SIGINT lets the running job finish, then the process exits 0.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from datetime import UTC, datetime
from typing import Any

from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_EXECUTED, JobExecutionEvent
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from aimos import __version__, paths, terminal
from aimos.housekeeper import state
from aimos.housekeeper.jobs import JobSpec, job_specs
from aimos.housekeeper.jobs import sync as sync_job
from aimos.housekeeper.jobs import vectors as vectors_job
from aimos.housekeeper.runs import last_runs, open_housekeeper_writer, reconcile_open_runs, run_job
from aimos.plural import plural
from aimos.store.connection import open_reader
from aimos.vocabulary import HOUSEKEEPER_STATUS_SCHEMA


def trigger_for(spec: JobSpec) -> CronTrigger:
    return CronTrigger(timezone=UTC, **spec.cron)


def next_fire(spec: JobSpec, after: int) -> int | None:
    """The first scheduled time strictly after ``after`` (epoch seconds, UTC)."""
    moment = datetime.fromtimestamp(after, tz=UTC)
    fire = trigger_for(spec).get_next_fire_time(None, moment)
    if fire is not None and int(fire.timestamp()) <= after:
        fire = trigger_for(spec).get_next_fire_time(None, datetime.fromtimestamp(after + 1, tz=UTC))
    return int(fire.timestamp()) if fire is not None else None


def missed_jobs(now: int) -> list[tuple[JobSpec, int]]:
    """Jobs whose scheduled time came and went with no run since (the run they owe, once)."""
    conn, meta = open_housekeeper_writer()
    try:
        last = last_runs(conn, completed_only=True)  # a run closed as INTERRUPTED is still owed
    finally:
        conn.close()
    installed = int(meta.get("created_at", now))
    owed = []
    for spec in job_specs():
        since = last[spec.name]["finished_at"] if spec.name in last else installed
        due = next_fire(spec, since)
        if due is not None and due <= now:
            owed.append((spec, due))
    return owed


def schedule_table(now: int) -> list[dict[str, Any]]:
    return [
        {
            "name": s.name,
            "job_id": s.job_id,
            "cron": s.cron,
            "summary": s.summary,
            "next_run": next_fire(s, now),
        }
        for s in job_specs()
    ]


class Housekeeper:
    """The foreground process behind `aimos housekeeper run`."""

    def __init__(self) -> None:
        self.stop_requested = threading.Event()
        self.started_at = int(time.time())
        self.scheduler = BackgroundScheduler(
            executors={"default": ThreadPoolExecutor(max_workers=1)},
            # no grace limit: a machine that slept through 02:00 runs the job once when it wakes
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
            timezone=UTC,
        )
        self.last_result: dict[str, Any] = {}
        self._lock = threading.Lock()
        self.embedding: Any = None
        self._vectors_running = threading.Event()  # meaning.serve.EmbeddingServer while the socket is served

    def _vectors(self) -> None:
        """The vectors job (not on the signed record): a failure is logged, and tried again."""
        if self.stop_requested.is_set():
            return
        clock = time.perf_counter()
        self._vectors_running.set()
        try:
            made = vectors_job.run()
        except Exception as exc:  # a busy or missing brain: the next run tries again
            self._log(f"{vectors_job.NAME} could not run: {type(exc).__name__}: {exc}")
            return
        finally:
            self._vectors_running.clear()
        if made:
            self._log(f"{vectors_job.NAME}: made {made} in {(time.perf_counter() - clock) * 1000:.0f} ms")

    def _sync(self) -> None:
        """The hub sync (not on the signed record): a failure is logged, and tried again."""
        if self.stop_requested.is_set():
            return
        try:
            done = sync_job.run()
        except Exception as exc:  # the hub down, a record refused, the brain busy: the next run tries
            self._log(f"{sync_job.NAME} could not run: {type(exc).__name__}: {exc}")
            return
        if done and (done["pushed"] or done["pulled"]):
            self._log(
                f"{sync_job.NAME}: pushed {done['pushed']}, pulled {done['pulled']} in {done['seconds']} s"
            )
        for line in done["repairs"] if done else []:
            self._log(f"{sync_job.NAME}: {line}")

    def _vectors_soon(self) -> None:
        """A question was answered on the socket: a memory saved just before it gets its vector now."""
        if self._vectors_running.is_set():
            return
        with contextlib.suppress(Exception):  # (stopping: the scheduler is shut down)
            self.scheduler.modify_job(vectors_job.NAME, next_run_time=datetime.now(tz=UTC))

    def _serve_model(self) -> None:
        """Load the model and lend it on the socket (a thread of its own: the jobs do not wait)."""
        from aimos.meaning.model import load_or_none, why_unavailable
        from aimos.meaning.serve import EmbeddingServer

        embedder = load_or_none()
        if embedder is None:
            self._log(f"recall by meaning: words only ({why_unavailable()})")
            return
        server = EmbeddingServer(embedder, log=self._log, after=self._vectors_soon)
        try:
            server.start()
        except OSError as exc:  # a socket path longer than the OS allows, say
            self._log(f"not lending the model on {server.path}: {exc.strerror or exc}")
            return
        with self._lock:  # (a stop meanwhile closes it here, or finds it set)
            stopping = self.stop_requested.is_set()
            if not stopping:
                self.embedding = server
        if stopping:
            server.close()
            return
        self._log(f"lending the embedding model on {server.path}")

    def _job(self, name: str, trigger: str, scheduled_for: int | None) -> None:
        if self.stop_requested.is_set():  # stopping: jobs still queued in the executor do not start
            self._log(f"{name} ({trigger}) not started: stopping")
            return
        spec = next(s for s in job_specs() if s.name == name)
        try:
            run = run_job(spec, trigger=trigger, scheduled_for=scheduled_for)
        except Exception as exc:  # the brain could not even record the run (busy, missing, locked)
            with self._lock:
                self.last_result[name] = {
                    "status": "NOT_RUN",
                    "finished_at": int(time.time()),
                    "error": str(exc),
                }
            self._log(f"{name} ({trigger}) could not run: {type(exc).__name__}: {exc}")
            return
        with self._lock:
            self.last_result[name] = {
                "status": run.status,
                "finished_at": run.finished_at,
                "error": run.error,
            }
        self._log(
            f"{name} ({trigger}) {run.status} in {run.duration_ms} ms"
            + (f": {run.error}" if run.error else "")
        )

    def _scheduled(self, name: str) -> None:
        self._job(name, "schedule", int(time.time()))

    def _log(self, text: str) -> None:
        stamp = datetime.now(tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        sys.stderr.write(f"{stamp} housekeeper: {terminal.visible_line(text)}\n")  # one line per entry
        sys.stderr.flush()

    def write_status(self, *, running: bool) -> None:
        jobs = []
        for job in self.scheduler.get_jobs():
            fire = job.next_run_time
            jobs.append({"name": job.id, "next_run": int(fire.timestamp()) if fire else None})
        with self._lock:
            last = dict(self.last_result)
        state.write_status(
            {
                "schema": HOUSEKEEPER_STATUS_SCHEMA,
                "pid": os.getpid(),
                "running": running,
                "ready": running and {s.name for s in job_specs()} <= {j["name"] for j in jobs},
                "started_at": self.started_at,
                "updated_at": int(time.time()),
                "aimos_version": __version__,
                "jobs": sorted(jobs, key=lambda j: j["name"]),
                "results_this_process": last,
            }
        )

    def _after_job(self, event: JobExecutionEvent) -> None:
        if not self.stop_requested.is_set() and event.job_id not in (vectors_job.NAME, sync_job.NAME):
            self.write_status(running=True)

    def _on_signal(self, signum: int, _frame: Any) -> None:
        self._log(f"signal {signal.Signals(signum).name}: finishing the running job, then exiting")
        self.stop_requested.set()

    def run(self) -> int:
        with state.holding_lock():
            state.write_pid(os.getpid())
            try:
                return self._run_locked()
            finally:
                state.clear_process_files()

    def _run_locked(self) -> int:
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        closed = reconcile_open_runs()
        if closed:
            self._log(f"closed {plural(len(closed), 'run')} a previous process left open")
        for spec in job_specs():
            self.scheduler.add_job(
                self._scheduled, trigger_for(spec), args=[spec.name], id=spec.name, name=spec.summary
            )
        self.scheduler.add_job(
            self._vectors,
            IntervalTrigger(seconds=vectors_job.INTERVAL_SECONDS, timezone=UTC),
            id=vectors_job.NAME,
            name="vectors of the memories saved since",
            next_run_time=datetime.now(tz=UTC),
        )
        self.scheduler.add_job(
            self._sync,
            IntervalTrigger(seconds=sync_job.interval_seconds(), timezone=UTC),
            id=sync_job.NAME,
            name="sync with the hub, when one is set",
            next_run_time=datetime.now(tz=UTC),
        )
        self.scheduler.add_listener(self._after_job, EVENT_JOB_EXECUTED | EVENT_JOB_ERROR)
        self.scheduler.start()
        threading.Thread(target=self._serve_model, name="aimos-model", daemon=True).start()
        self.write_status(running=True)
        self._log(f"ready: {len(job_specs())} jobs registered (pid {os.getpid()})")
        now = int(time.time())
        for spec, due in missed_jobs(now):
            self._log(
                f"catching up {spec.name} (was due {datetime.fromtimestamp(due, tz=UTC):%Y-%m-%d %H:%M}Z)"
            )
            self.scheduler.add_job(
                self._job,
                "date",
                run_date=datetime.now(tz=UTC),
                args=[spec.name, "catch_up", due],
                id=f"catch-up:{spec.name}",
                misfire_grace_time=None,
            )
        while not self.stop_requested.wait(timeout=60):
            pass
        self.scheduler.shutdown(wait=True)  # the running job finishes; queued ones return at once
        with self._lock:
            lent, self.embedding = self.embedding, None
        if lent is not None:
            lent.close()
        self.write_status(running=False)
        self._log("stopped")
        return 0


def readiness(now: int | None = None) -> dict[str, Any]:
    """What `aimos housekeeper status` and `aimos status` report: running, the jobs registered,
    each job's last run (from the signed ledger) and next run, and the service manager."""
    now = int(time.time()) if now is None else now
    running = state.is_running()
    status = state.read_status() if running else None
    registered = {j["name"]: j.get("next_run") for j in (status or {}).get("jobs", [])}
    conn = open_reader(paths.brain_path())
    try:
        last = last_runs(conn)
    finally:
        conn.close()
    jobs = []
    for spec in job_specs():
        jobs.append(
            {
                "name": spec.name,
                "job_id": spec.job_id,
                "schedule": " ".join(f"{k}={v}" for k, v in spec.cron.items()) + " UTC",
                "summary": spec.summary,
                "registered": spec.name in registered,
                "next_run": registered.get(spec.name) if spec.name in registered else next_fire(spec, now),
                "last_run": last.get(spec.name),
            }
        )
    record = state.read_service_record()
    ready = bool(running and status and status.get("ready") and all(j["registered"] for j in jobs))
    return {
        "running": running,
        "ready": ready,
        "pid": state.read_pid() if running else None,
        "started_at": status.get("started_at") if status else None,
        "service": {"manager": record["manager"], "name": record.get("name")} if record else None,
        "jobs_registered": sum(1 for j in jobs if j["registered"]),
        "jobs": jobs,
        "log": str(state.log_path()),
    }
