"""The brain's vectors kept current and searched: made after the saves (``embed_pending``), held
in memory per brain file (``matrix``), ranked against a question (``nearest``).

A vector is made outside any transaction (the model takes about 25 ms a memory on two cores) and
written in a short write transaction of its own, which changes only derived rows (no seal). The
matrix of a brain is kept in the process (the MCP server and the TUI keep theirs for their life);
it is extended by the vectors made since it was read, and read again whole when vectors were
replaced or removed (the generation moved) or the model changed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import apsw

from aimos.meaning.vectors import Matrix, pack
from aimos.store import vectors
from aimos.store.connection import write_transaction

if TYPE_CHECKING:
    from aimos.meaning.model import Embedder
    from aimos.meaning.vectors import Floats

BATCH = 32  # memories embedded per call of the engine (and per write transaction)
# a recall makes at most this many missing vectors before it searches (the rest are found by
# their words until the housekeeper's job, the MCP server or the next command makes them)
RECALL_BACKLOG = 16


def embed_pending(
    conn: apsw.Connection,
    embedder: Embedder,
    *,
    limit: int | None = None,
    progress: Callable[[int], None] | None = None,
    batch_size: int = BATCH,
) -> int:
    """Make the missing vectors (oldest memories first), ``batch_size`` at a time; returns how many
    were made. Not inside a transaction: each batch is embedded first and then written in one of its
    own (a memory that got its vector meanwhile keeps it)."""
    done = 0
    while limit is None or done < limit:
        want = batch_size if limit is None else min(batch_size, limit - done)
        batch = vectors.pending(conn, embedder.name, want)
        if not batch:
            break
        forms = made_for(embedder, batch)
        with write_transaction(conn):
            vectors.write(conn, embedder.name, forms)
        done += len(batch)
        if progress is not None:
            progress(done)
    return done


@dataclass
class _Kept:
    model: str
    generation: int
    newest: int
    matrix: Matrix


_KEPT: dict[str, _Kept] = {}
_KEPT_LOCK = threading.Lock()


def matrix(conn: apsw.Connection, model: str, dims: int) -> Matrix:
    """The brain's vectors by ``model`` as one matrix, kept for the process and brought up to date."""
    key = str(conn.filename)
    st = vectors.state(conn)
    with _KEPT_LOCK:
        kept = _KEPT.get(key)
        if (
            kept is None
            or kept.model != model
            or kept.generation != st.generation
            or kept.newest > st.newest_vector
        ):
            kept = _Kept(model, st.generation, 0, Matrix(dims))
            _KEPT[key] = kept
        if st.newest_vector > kept.newest:
            kept.matrix.extend(list(vectors.after(conn, model, kept.newest)))
            kept.newest = st.newest_vector
        return kept.matrix


def forget(conn: apsw.Connection | None = None) -> None:
    """Drop the kept matrix of a brain (or of all): the next search reads the vectors again."""
    with _KEPT_LOCK:
        if conn is None:
            _KEPT.clear()
        else:
            _KEPT.pop(str(conn.filename), None)


@dataclass(frozen=True)
class MeaningQuery:
    """A question's vector and the model that made it, ready for the meaning channel."""

    model: str
    dims: int
    vector: Floats
    made: list[tuple[int, bytes]] = field(default_factory=list)  # vectors made, not yet stored

    def nearest(self, conn: apsw.Connection, limit: int) -> tuple[list[tuple[int, float]], float]:
        """(memory rowid, cosine) of the ``limit`` nearest vectors, best first, and the mean cosine
        of all of them. The vectors prepare() made are stored first (the caller's transaction)."""
        if self.made:
            vectors.write(conn, self.model, self.made)
            self.made.clear()
        return matrix(conn, self.model, self.dims).ranked(self.vector, limit)


def prepare(conn: apsw.Connection, query: object, *, backlog: int = RECALL_BACKLOG) -> MeaningQuery | None:
    """Before a recall's transaction: the question's vector, and up to ``backlog`` vectors of
    memories that have none yet (stored by the recall's own transaction when it searches: a recall
    refused before it searches writes nothing). The model this process keeps, when it has loaded
    it (the MCP server, the TUI); else the running housekeeper's, asked on its socket (no missing
    vectors then: its own job makes them); else the model loaded here. None when none of them is
    available (recall by words alone) or the query is not text."""
    from aimos.meaning import model
    from aimos.meaning.serve import ask

    if not isinstance(query, str) or not query.strip() or model.turned_off():
        return None
    embedder = model.loaded()
    if embedder is None:
        vector = ask(query)
        if vector is not None:
            return MeaningQuery(model.MODEL_NAME, model.DIMS, vector)
        embedder = model.load_or_none()
    if embedder is None:
        return None
    made = made_for(embedder, vectors.pending(conn, embedder.name, backlog)) if backlog else []
    return MeaningQuery(embedder.name, embedder.dims, embedder.query(query), made)


def made_for(embedder: Embedder, batch: list[tuple[int, str]]) -> list[tuple[int, bytes]]:
    """The stored forms of (rowid, text) memories' vectors (an empty text: an empty form)."""
    texts = [text for _, text in batch if text.strip()]
    made = iter(embedder.passages(texts)) if texts else iter(())
    return [(rowid, pack(next(made)) if text.strip() else b"") for rowid, text in batch]
