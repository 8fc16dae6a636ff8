"""Which memories still wait for a vector (store/vectors.pending): those past the newest vector,
and after a model change every vector the other model made, remade oldest first. The stale ones
are looked for only when the newest vector is another model's (a recall asks at every call; the
scan of the whole table cost about 150 ms at 100,000 vectors)."""

from __future__ import annotations

from typing import Any

from support.cli import run_aimos

from aimos.store import vectors
from aimos.store.connection import write_transaction

OLD, NEW = "old-model", "new-model"
FORM = b"\x00" * 4  # the stored form does not matter here


def memories(brain: Any, n: int) -> list[int]:
    for i in range(n):
        run_aimos("save", f"a note about the garden number {i}").ok()
    return [int(r) for (r,) in brain.conn.execute("SELECT rowid FROM memories ORDER BY rowid")]


def store(brain: Any, model: str, rowids: list[int]) -> None:
    with write_transaction(brain.conn):
        vectors.write(brain.conn, model, [(r, FORM) for r in rowids])


def waiting(brain: Any, model: str) -> list[int]:
    return [r for r, _ in vectors.pending(brain.conn, model, 100)]


def test_past_the_newest_vector(brain: Any) -> None:
    rows = memories(brain, 4)
    assert waiting(brain, NEW) == rows
    store(brain, NEW, rows[:2])
    assert waiting(brain, NEW) == rows[2:]
    assert vectors.stale_from(brain.conn, NEW) is None


def test_a_model_change_remakes_every_vector_oldest_first(brain: Any) -> None:
    rows = memories(brain, 5)
    store(brain, OLD, rows[:4])  # the fifth has none yet
    assert vectors.stale_from(brain.conn, NEW) == rows[0]
    assert waiting(brain, NEW) == rows
    store(brain, NEW, rows[:2])  # half remade: the newest vector is still the old model's
    assert vectors.stale_from(brain.conn, NEW) == rows[2]
    assert waiting(brain, NEW) == rows[2:]
    store(brain, NEW, rows[2:])
    assert vectors.stale_from(brain.conn, NEW) is None and waiting(brain, NEW) == []
    assert vectors.counts(brain.conn) == {NEW: 5}
