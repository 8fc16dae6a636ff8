"""`aimos doctor`'s look at the housekeeper: running and ready, and each job's last run from the
signed ledger (a failed one, or one that asked for attention, is a warning). Reads only."""

from __future__ import annotations

from typing import Any

from aimos.actions.doctor import OK, WARN, Check
from aimos.crypto.encoding import iso_ms
from aimos.housekeeper.scheduler import readiness
from aimos.plural import agree, plural
from aimos.vocabulary import HOUSEKEEPER


def _last_run_problem(job: dict[str, Any]) -> tuple[str, str] | None:
    """(what, fix) for a job whose last run failed or asked for attention."""
    last = job["last_run"]
    if not last or last["status"] not in ("FAILED", "ATTENTION"):
        return None
    why = last.get("error") or "; ".join(str(a) for a in last.get("attention") or []) or "no reason recorded"
    verb = "failed" if last["status"] == "FAILED" else "asked for attention"
    return (
        f"the last {job['name']} run {verb} ({iso_ms(last['finished_at'])}): {why}",
        f"aimos housekeeper run-job {job['name']} (runs it now and says why)",
    )


def housekeeper_check(now: int | None = None) -> Check:
    report = readiness(now)
    problems = [p for p in (_last_run_problem(job) for job in report["jobs"]) if p is not None]
    if not report["running"]:
        problems.insert(
            0,
            (
                "not running: no scheduled job runs (the nightly verification and backup among them)",
                "aimos housekeeper start",
            ),
        )
    elif not report["ready"]:
        problems.insert(
            0,
            (
                f"running (pid {report['pid']}) but not ready: "
                f"{report['jobs_registered']} of {plural(len(report['jobs']), 'job')} registered",
                f"aimos housekeeper stop && aimos housekeeper start (its log: {report['log']})",
            ),
        )
    if problems:
        return Check(HOUSEKEEPER, WARN, "; ".join(p[0] for p in problems), "; ".join(p[1] for p in problems))
    ran = [job for job in report["jobs"] if job["last_run"]]
    runs = (
        f"{len(ran)} of {plural(len(report['jobs']), 'job')} {agree(len(ran), 'has', 'have')} run,"
        " none failed"
        if ran
        else "no job has run yet"
    )
    return Check(
        HOUSEKEEPER,
        OK,
        f"running (pid {report['pid']}), {plural(report['jobs_registered'], 'job')} registered; {runs}",
    )
