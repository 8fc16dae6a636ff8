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

from aimos.meaning.vectors import Matrix, pack
from aimos.plural import agree, plural
from aimos.store import vectors
from aimos.store.connection import Connection, write_transaction

if TYPE_CHECKING:
    from aimos.meaning.model import Embedder
    from aimos.meaning.vectors import Floats

BATCH = 32  # memories embedded per call of the engine (and per write transaction)
# a recall makes at most this many missing vectors before it searches (the rest are found by
# their words until the housekeeper's job, the MCP server or the next command makes them)
RECALL_BACKLOG = 16


def embed_pending(
    conn: Connection,
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


def matrix(conn: Connection, model: str, dims: int) -> Matrix:
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


def forget(conn: Connection | None = None) -> None:
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

    def store(self, conn: Connection) -> list[int]:
        """Store the vectors prepare() made (in the caller's write transaction; once); their memory
        rowids. A recall does this before the agreement detector judges what its saves queued, so
        that the detector compares those memories by meaning too."""
        stored = [rowid for rowid, _ in self.made]
        if self.made:
            vectors.write(conn, self.model, self.made)
            self.made.clear()
        return stored

    def nearest(self, conn: Connection, limit: int) -> tuple[list[tuple[int, float]], float, int]:
        """(memory rowid, cosine) of the ``limit`` nearest vectors, best first, the mean cosine of
        all of them and their number. The vectors prepare() made are stored first (the caller's
        transaction)."""
        self.store(conn)
        kept = matrix(conn, self.model, self.dims)
        near, mean = kept.ranked(self.vector, limit)
        return near, mean, len(kept)


def prepare(conn: Connection, query: object, *, backlog: int = RECALL_BACKLOG) -> MeaningQuery | None:
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


# --- `aimos verify`'s checks of the vectors (the in-database verifier's brain checks) -------------
# The reasons a vector is named by; each failure's fix is `aimos index rebuild` (derived data).
MALFORMED = "vector_malformed"  # not the stored form of the model's dims (or not empty where it must be)
ORPHAN = "vector_orphan"  # of no memory
MISSING = "vector_missing"  # a memory below the newest vector has none (deleted)
OF_REDACTED = "vector_of_redacted"  # a redacted memory's vector is not empty
STALE = "vector_stale_model"  # made by another model (or file): stale, not tampering
MISMATCH = "vector_mismatch"  # recomputed from the memory's text, it points elsewhere
GENERATION = "vector_generation_malformed"  # the generation counter is not one row, id 1, from 0
REASONS = (MALFORMED, ORPHAN, MISSING, OF_REDACTED, STALE, MISMATCH, GENERATION)
FIX = "run `aimos index rebuild`"
SAMPLE = 64  # vectors recomputed at random by default (`aimos verify --vectors all`: every one)
NEWEST = 8  # and always the newest ones (those a recall or the housekeeper made last)
AGREE = 0.99  # the least cosine of a stored vector with its recomputation (int8, batch order)
RECOMPUTE = ("sample", "all")


def _failure(reason: str, detail: str) -> dict[str, object]:
    return {"check": "vectors", "reason": reason, "detail": detail, "table": "memory_vectors"}


def form_failures(conn: Connection) -> tuple[list[dict[str, object]], dict[str, object]]:
    """The checks of every vector that need no model (inside the verifier's snapshot): each well
    formed for the pinned model's dims (empty exactly when its memory has no text to embed: a
    guide), of a memory, none missing below the newest, none but empty for a redacted memory, made
    by the pinned model; and the generation counter's shape. (failures, what was counted)."""
    from aimos.meaning.model import DIMS, MODEL_NAME
    from aimos.meaning.vectors import well_formed
    from aimos.store.cells import memory_names

    bad: list[int] = []
    redacted: list[int] = []
    stale: dict[str, int] = {}
    count = current = 0
    for s in vectors.with_text(conn):
        count += 1
        if s.redacted and s.blob != b"":
            redacted.append(s.rowid)
        elif s.model != MODEL_NAME:
            stale[s.model] = stale.get(s.model, 0) + 1
        elif s.blob != b"" if not s.text.strip() else not well_formed(s.blob, DIMS):
            bad.append(s.rowid)
        else:
            current += 1
    failures = []
    if bad:
        failures.append(
            _failure(
                MALFORMED,
                f"{len(bad)} not the stored form of its memory's vector"
                f" ({DIMS} dims): {memory_names(conn, bad)}; {FIX}",
            )
        )
    found = vectors.orphans(conn)
    if found:
        more = len(found) >= vectors.CHECKED_LIMIT
        failures.append(_failure(ORPHAN, f"vectors of no memory: {memory_names(conn, found, more)}; {FIX}"))
    found = vectors.missing(conn)
    if found:
        more = len(found) >= vectors.CHECKED_LIMIT
        failures.append(
            _failure(
                MISSING,
                f"no vector, though later memories have one: {memory_names(conn, found, more)}; {FIX}",
            )
        )
    if redacted:
        failures.append(
            _failure(
                OF_REDACTED,
                f"a vector for a redacted memory's removed text: {memory_names(conn, redacted)}; {FIX}",
            )
        )
    if stale:
        models = ", ".join(sorted(stale)[:2]) + (" and more" if len(stale) > 2 else "")
        failures.append(
            _failure(
                STALE,
                f"{sum(stale.values())} vectors made by another model ({models}, not {MODEL_NAME}): {FIX}",
            )
        )
    rows = vectors.generations(conn)
    if len(rows) > 1 or any(i != 1 or type(g) is not int or g < 0 for i, g in rows):
        failures.append(
            _failure(GENERATION, f"memory_vectors_generation holds {rows!r}, not one count; {FIX}")
        )
    summary: dict[str, object] = {
        "model": MODEL_NAME,
        "vectors": count,
        "current": current,
        "stale": sum(stale.values()),
        "memories": vectors.memory_count(conn),
        "recompute": None,
        "recomputed": 0,
        "skipped": None,
    }
    return failures, summary


def picked(rowids: list[int], how: str) -> list[int]:
    """The vectors to recompute: every one ("all"), or SAMPLE at random (unpredictable to whoever
    edits the file) and the NEWEST ("sample")."""
    import random

    if how == "all" or len(rowids) <= SAMPLE + NEWEST:
        return list(rowids)
    newest, rest = rowids[-NEWEST:], rowids[:-NEWEST]
    return sorted(random.SystemRandom().sample(rest, SAMPLE) + newest)


def recompute_failures(
    conn: Connection, how: str, progress: Callable[[int, int], None] | None = None
) -> tuple[list[dict[str, object]], dict[str, object]]:
    """Recompute vectors by the pinned model from their memories' text (``how``: "sample" or
    "all") and compare by cosine: (failures, {recompute, recomputed, skipped}). Each chunk is read
    in one statement (a vector with its text); with the model unavailable here the recompute is
    skipped, and why is said (not a failure)."""
    from aimos.meaning.model import DIMS, MODEL_NAME, load_or_none, why_unavailable
    from aimos.meaning.vectors import cosine, unpack, well_formed
    from aimos.store.cells import memory_names

    wanted = picked(vectors.made_by(conn, MODEL_NAME), how)
    told: dict[str, object] = {"recompute": how, "recomputed": 0, "skipped": None}
    if not wanted:
        return [], told
    embedder = load_or_none()
    if embedder is None:
        told["skipped"] = f"the model is not available here: {why_unavailable()}"
        return [], told
    wrong: list[int] = []
    done = recomputed = 0
    for start in range(0, len(wanted), BATCH):
        chunk = wanted[start : start + BATCH]
        found = vectors.of_memories(conn, chunk)
        items = [
            (rowid, blob, text)
            for rowid, (model, blob, text) in sorted(found.items())
            if model == embedder.name and text.strip() and well_formed(blob, DIMS)  # else: form_failures'
        ]
        if items:
            fresh = embedder.passages([text for _, _, text in items])
            wrong += [
                r for (r, blob, _), f in zip(items, fresh, strict=True) if cosine(unpack(blob), f) < AGREE
            ]
        done += len(chunk)
        recomputed += len(items)
        told["recomputed"] = recomputed
        if progress is not None:
            progress(done, len(wanted))
    if not wrong:
        return [], told
    detail = (
        f"{len(wrong)} of {recomputed} recomputed from their memory's text differ"
        f" (cosine under {AGREE}): {memory_names(conn, wrong)}; {FIX}"
    )
    return [_failure(MISMATCH, detail)], told


# --- whether recall by meaning is on (`aimos status`, `aimos doctor`) ------------------------------
@dataclass(frozen=True)
class MeaningState:
    """Whether the model works here and how many memories have its vectors; when off, why, and
    the fix (None when off by choice or for want of a build for this platform)."""

    on: bool
    why: str | None
    fix: str | None
    vectors: int
    memories: int

    def text(self) -> str:
        from aimos.meaning.model import MODEL_NAME

        if not self.on:
            return f"recall by meaning off: {self.why}; recall works on words alone"
        shown = MODEL_NAME.split(":")[0]
        having = agree(self.vectors, "has a vector", "have vectors")
        return f"recall by meaning on ({shown}, {self.vectors} of {plural(self.memories, 'memory')} {having})"

    def to_json(self) -> dict[str, object]:
        return {**self.__dict__, "text": self.text()}


def meaning_state(conn: Connection) -> MeaningState:
    """Loads the model (as a recall would) to say whether it works here."""
    from aimos.errors import ModelUnavailableError
    from aimos.meaning.model import MODEL_NAME, left_off, load

    made = vectors.counts(conn) if vectors.table_exists(conn) else {}  # none before migration 19
    counted = made.get(MODEL_NAME, 0), vectors.memory_count(conn)
    try:
        load()
    except ModelUnavailableError as exc:
        return MeaningState(False, exc.message, None if left_off() else exc.hint, *counted)
    return MeaningState(True, None, None, *counted)
