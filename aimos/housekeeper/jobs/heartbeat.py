"""Heartbeat (every 30 minutes): an integrity ping, counts, event flow and latency; no LLM."""

from __future__ import annotations

import os
import time
from typing import Any

from aimos import paths
from aimos.housekeeper.jobs.context import JobContext
from aimos.store.queries.housekeeper import count_of, newest_event_verifies, operations_since
from aimos.store.queries.ledger import body_sql

WINDOW_SECONDS = 30 * 60


def _ping_ms(ctx: JobContext) -> float:
    start = time.perf_counter()
    count_of(ctx.conn, "schema_migrations")
    return round((time.perf_counter() - start) * 1000, 3)


def _newest_event_checks(ctx: JobContext) -> bool:
    """The housekeeper's newest event still hashes and verifies against its epoch key (in SQL)."""
    body = body_sql(ctx.conn, "e")
    ok = newest_event_verifies(ctx.conn, body, ctx.housekeeper.agent_id, ctx.housekeeper.valid_from)
    return ok is None or ok


def _file_bytes(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def run(ctx: JobContext) -> dict[str, Any]:
    ping_ms = _ping_ms(ctx)
    counts = {
        name: count_of(ctx.conn, table)
        for name, table in (
            ("memories", "memories"),
            ("events", "events"),
            ("outcomes", "outcomes"),
            ("receipts", "recall_receipts"),
        )
    }
    since = ctx.now - WINDOW_SECONDS
    flow = operations_since(ctx.conn, since)
    ledger_ok = _newest_event_checks(ctx)
    if not ledger_ok:
        ctx.attention.append("the housekeeper's newest event does not verify")
    brain = str(paths.brain_path())
    return {
        "ping_ms": ping_ms,
        "counts": counts,
        "events_last_30_min": flow,
        "ledger_head_ok": ledger_ok,
        "brain_bytes": _file_bytes(brain),
        "wal_bytes": _file_bytes(brain + "-wal"),
        "pid": os.getpid(),
    }
