"""Bottleneck scan (hourly): pending outcomes, pending reclassification, WAL checkpoint.

It first has the agreement detector judge what the saves queued (migration 15): the saving
command and every recall judge it too, so the queue is normally empty; a save whose process
stopped before its detector ran is judged here at the latest (`detector_judged` in the result).

aimos applies an authorized outcome in the same transaction that records it, so an outcome
waiting for its transition can only be a row whose projection is missing; the scan counts them
(the verifier names them `unreachable_rows`) and asks for attention rather than inventing the
missing signature. Likewise the classifier runs inside each save (and relabels a growing cluster
there), so a pending reclassification is a fingerprinted memory with no classification at all.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from aimos.housekeeper.jobs.context import JobContext
from aimos.store.connection import Connection
from aimos.store.engine import wal_checkpoint
from aimos.store.queries.housekeeper import fingerprints_without_classification, outcomes_without_transition

# work a write left undone: (its key in the result, its count, what the count is of)
_BACKLOGS: tuple[tuple[str, Callable[[Connection], int], str], ...] = (
    ("pending_outcomes", outcomes_without_transition, "authorized outcomes have no signed transition"),
    (
        "pending_reclassification",
        fingerprints_without_classification,
        "fingerprinted memories have no classification",
    ),
)

# a reader's snapshot lasts a moment (a recall, a status): the checkpoint tries again for about a
# second before it asks a person to look, so only a reader that stays holds it up
CHECKPOINT_TRIES = 11
CHECKPOINT_PAUSE_S = 0.1


def _pause() -> None:
    time.sleep(CHECKPOINT_PAUSE_S)


def _checkpoint(conn: Connection) -> tuple[int, int, int, int]:
    """PASSIVE checkpoints until one copies the whole log or the tries run out: (busy, frames in
    the log, frames copied, tries)."""
    for tries in range(1, CHECKPOINT_TRIES + 1):
        # PASSIVE: copy what no reader still needs, never wait and never block a writer
        busy, log_frames, checkpointed = wal_checkpoint(conn, "PASSIVE")
        if not busy and checkpointed >= log_frames:
            break
        if tries < CHECKPOINT_TRIES:
            _pause()
    return busy, log_frames, checkpointed, tries


def run(ctx: JobContext) -> dict[str, Any]:
    from aimos.epistemic.detect import settle

    counts: dict[str, int] = {"detector_judged": settle(ctx.conn, ctx.housekeeper, ctx.now)}
    for key, count, what in _BACKLOGS:
        counts[key] = count(ctx.conn)
        if counts[key]:
            ctx.attention.append(f"{counts[key]} {what}")
    busy, log_frames, checkpointed, tries = _checkpoint(ctx.conn)
    if busy or checkpointed < log_frames:
        ctx.attention.append(
            "the WAL checkpoint could not finish (a reader held it for over a second); it retries next hour"
        )
    return {
        **counts,
        "wal_checkpoint": {
            "busy": int(busy),
            "log_frames": int(log_frames),
            "checkpointed": int(checkpointed),
            "tries": tries,
        },
    }
