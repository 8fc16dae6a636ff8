"""Vectors (every INTERVAL_SECONDS, and soon after a question on the embedding socket): the
vectors of the memories saved since the last run, made with the model the housekeeper keeps.

Not one of the five jobs on the signed record: it writes derived rows only (no seal, as an index
rebuild does), and a signed pair of events every few seconds would be most of the ledger. A run
makes at most PER_RUN vectors, BATCH_SIZE to a write transaction of its own (embedding happens
outside it), so it never holds the brain, or the housekeeper's one worker thread, for long: a
backlog (a brain saved to with no housekeeper running, a model change) is worked off run by run.
With no model here (not installed, no build for the platform, AIMOS_MEANING=off) it does nothing.
"""

from __future__ import annotations

from typing import Final

NAME: Final = "vectors"
INTERVAL_SECONDS: Final = 15
PER_RUN: Final = 256  # about 7 s of a short memory's embedding on two cores
# a small batch: a question on the socket waits for the batch in progress (the model is one handle)
BATCH_SIZE: Final = 8


def run(per_run: int = PER_RUN) -> int:
    """Make up to ``per_run`` missing vectors of the home's brain; how many were made."""
    from aimos import paths
    from aimos.meaning.index import embed_pending
    from aimos.meaning.model import load_or_none
    from aimos.store import vectors
    from aimos.store.connection import open_reader, open_writer

    embedder = load_or_none()
    if embedder is None or not paths.brain_path().exists():
        return 0
    reader = open_reader()
    try:  # (most runs find nothing to do: they do not open the writer)
        waiting = bool(vectors.pending(reader, embedder.name, 1))
    finally:
        reader.close()
    if not waiting:
        return 0
    conn = open_writer()
    try:
        return embed_pending(conn, embedder, limit=per_run, batch_size=BATCH_SIZE)
    finally:
        conn.close()
