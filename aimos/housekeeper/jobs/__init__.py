"""The five required housekeeper jobs (PROTOCOL-NOTES 14), each a plain function of a context.

A job returns a JSON-able result that goes into its signed `system_job_terminal` event, and sets
`attention` when it ran but found something a person should look at.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aimos.housekeeper.jobs.context import JobContext


@dataclass(frozen=True)
class JobSpec:
    name: str  # what a person types: `aimos housekeeper run-job NAME`
    job_id: str  # the reference's scheduler id, recorded in the signed events
    cron: dict[str, str]  # APScheduler CronTrigger fields, UTC
    summary: str
    run: Callable[[JobContext], dict[str, Any]]


def _specs() -> tuple[JobSpec, ...]:
    from aimos.housekeeper.jobs import bottleneck, heartbeat, nightly_dream, weekly

    return (
        JobSpec(
            "heartbeat",
            "__system_heartbeat__",
            {"minute": "*/30"},
            "integrity ping, counts, latency",
            heartbeat.run,
        ),
        JobSpec(
            "bottleneck-scan",
            "__bottleneck_scan__",
            {"minute": "0"},
            "pending outcomes and reclassification, WAL checkpoint",
            bottleneck.run,
        ),
        JobSpec(
            "nightly-dream",
            "__nightly_dream__",
            {"hour": "2", "minute": "0"},
            "full verification, signed corpus root, online backup (keep 7)",
            nightly_dream.run,
        ),
        JobSpec(
            "weekly-assessment",
            "__weekly_assessment__",
            {"day_of_week": "sun", "hour": "2", "minute": "0"},
            "7-day event statistics by operation",
            weekly.assessment,
        ),
        JobSpec(
            "weekly-audit",
            "__weekly_audit__",
            {"day_of_week": "sun", "hour": "3", "minute": "0"},
            "memory types, labels, weights, identities and event chains",
            weekly.audit,
        ),
    )


JOB_NAMES = ("heartbeat", "bottleneck-scan", "nightly-dream", "weekly-assessment", "weekly-audit")


def job_specs() -> tuple[JobSpec, ...]:
    return _specs()


def job_spec(name: str) -> JobSpec:
    from aimos.errors import UsageError

    for spec in _specs():
        if name in (spec.name, spec.job_id):
            return spec
    raise UsageError(f"no housekeeper job named {name!r}", f"Use one of: {', '.join(JOB_NAMES)}.")
