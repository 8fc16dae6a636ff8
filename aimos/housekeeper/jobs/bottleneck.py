"""Bottleneck scan (hourly): pending outcomes, pending reclassification, WAL checkpoint.

aimos applies an authorized outcome in the same transaction that records it, so an outcome
waiting for its transition can only be a row whose projection is missing; the scan counts them
(the verifier names them `unreachable_rows`) and asks for attention rather than inventing the
missing signature. Likewise the classifier runs inside each save (and relabels a growing cluster
there), so a pending reclassification is a fingerprinted memory with no classification at all.
"""

from __future__ import annotations

from typing import Any

from aimos.housekeeper.jobs.context import JobContext
from aimos.store.connection import one


def run(ctx: JobContext) -> dict[str, Any]:
    pending = one(
        ctx.conn,
        "SELECT COUNT(*) AS n FROM outcomes o WHERE o.terminal = 'authorized_transition'"
        " AND NOT EXISTS (SELECT 1 FROM weight_projections w WHERE w.outcome_id = o.outcome_id)",
    )
    pending_outcomes = int(pending["n"]) if pending else 0
    if pending_outcomes:
        ctx.attention.append(f"{pending_outcomes} authorized outcomes have no signed transition")
    unlabelled = one(
        ctx.conn,
        "SELECT COUNT(*) AS n FROM epistemic_fingerprints f WHERE NOT EXISTS"
        " (SELECT 1 FROM memory_classifications c WHERE c.memory_id = f.memory_id)",
    )
    pending_labels = int(unlabelled["n"]) if unlabelled else 0
    if pending_labels:
        ctx.attention.append(f"{pending_labels} fingerprinted memories have no classification")
    # PASSIVE: copy what no reader still needs, never wait and never block a writer
    row: tuple[Any, ...] = tuple(ctx.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()[0])
    busy, log_frames, checkpointed = (int(v) for v in row)
    if busy or checkpointed < log_frames:
        ctx.attention.append("the WAL checkpoint could not finish (a reader held it); it retries next hour")
    return {
        "pending_outcomes": pending_outcomes,
        "pending_reclassification": pending_labels,
        "wal_checkpoint": {
            "busy": int(busy),
            "log_frames": int(log_frames),
            "checkpointed": int(checkpointed),
        },
    }
