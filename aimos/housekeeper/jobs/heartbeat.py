"""Heartbeat (every 30 minutes): an integrity ping, counts, event flow and latency; no LLM."""

from __future__ import annotations

import os
import time
from typing import Any

from aimos import paths
from aimos.housekeeper.jobs.context import JobContext
from aimos.ledger.events import body_sql
from aimos.store.connection import one, rows

WINDOW_SECONDS = 30 * 60


def _ping_ms(ctx: JobContext) -> float:
    start = time.perf_counter()
    one(ctx.conn, "SELECT COUNT(*) AS n FROM schema_migrations")
    return round((time.perf_counter() - start) * 1000, 3)


def _newest_event_checks(ctx: JobContext) -> bool:
    """The housekeeper's newest event still hashes and verifies against its epoch key (in SQL)."""
    body = body_sql(ctx.conn, "e")
    row = one(
        ctx.conn,
        f"SELECT aimos_sha256_hex({body}) = e.content_hash"
        " AND aimos_event_link(e.prev_mutation_hash, e.content_hash, e.nonce, e.ts_signed) = e.mutation_hash"
        " AND aimos_ed25519_verify(i.public_key_b64u,"
        f"       aimos_payload_message({body}, e.nonce, e.ts_signed), e.signature_b64u) = 1 AS ok"
        " FROM events e JOIN identity_epochs i"
        "   ON i.agent_id = e.signer_agent_id AND i.valid_from = e.signer_valid_from"
        " WHERE e.signer_agent_id = ? AND e.signer_valid_from = ?"
        " ORDER BY e.ledger_seq DESC LIMIT 1",
        (ctx.housekeeper.agent_id, ctx.housekeeper.valid_from),
    )
    return row is None or bool(row["ok"])


def _file_bytes(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def run(ctx: JobContext) -> dict[str, Any]:
    ping_ms = _ping_ms(ctx)
    counts = {
        name: int(one(ctx.conn, f"SELECT COUNT(*) AS n FROM {table}")["n"])  # type: ignore[index]
        for name, table in (
            ("memories", "memories"),
            ("events", "events"),
            ("outcomes", "outcomes"),
            ("receipts", "recall_receipts"),
        )
    }
    since = ctx.now - WINDOW_SECONDS
    flow = {
        r["operation"]: int(r["n"])
        for r in rows(
            ctx.conn,
            "SELECT operation, COUNT(*) AS n FROM events WHERE ts_signed > ? GROUP BY operation",
            (since,),
        )
    }
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
