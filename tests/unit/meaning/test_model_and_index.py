"""The pinned model (meaning/model) and the vectors kept current (meaning/index, store/vectors), on a
real brain with the real model."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from aimos import paths
from aimos.actions.bodies import build_recall_body, build_save_body
from aimos.errors import ModelUnavailableError
from aimos.identity.requests import sign_request
from aimos.meaning import index, model
from aimos.memory.save import save
from aimos.recall.pipeline import recall
from aimos.store import vectors
from aimos.store.connection import write_transaction
from aimos.vocabulary import PATH_RECALL, PATH_SAVE


@pytest.fixture(autouse=True)
def fresh_model_state() -> Any:
    model.forget()
    index.forget()
    yield
    model.forget()
    index.forget()


def _save(brain: Any, text: str) -> str:
    now = int(time.time())
    body = build_save_body(company_id="personal", value=text)
    return save(brain.conn, brain.housekeeper, sign_request(brain.agent, body, PATH_SAVE, now), now).memory_id


def _recall(brain: Any, query: str, **options: Any) -> list[str]:
    now = int(time.time())
    request = sign_request(brain.agent, build_recall_body(query=query, limit=10), PATH_RECALL, now)
    return [r["memory_id"] for r in recall(brain.conn, brain.housekeeper, request, now, **options).results]


# --- the pinned files -----------------------------------------------------------------------------
def test_only_the_pinned_bytes_load(tmp_path: Path) -> None:
    real = model.locate()
    model.check_files(real, rehash=True)  # the installed wheel's files are the pinned ones
    forged = tmp_path / model.MODEL_FILE
    forged.write_bytes(b"\x00" * 1024)
    with pytest.raises(ModelUnavailableError, match="not the pinned one"):
        model.check_files(model.ModelFiles(forged, real.engine), rehash=True)
    engine = tmp_path / real.engine.name
    engine.write_bytes(real.engine.read_bytes()[:-1] + b"\x01")
    with pytest.raises(ModelUnavailableError, match="not the pinned one"):
        model.check_files(model.ModelFiles(real.model, engine), rehash=True)


def test_a_checked_file_is_remembered_privately_and_a_changed_one_is_hashed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    real = model.locate()
    model.check_files(real, rehash=True)
    remembered = paths.cache_dir() / model.CHECKED_FILE
    assert remembered.stat().st_mode & 0o777 == 0o600
    assert remembered.parent.stat().st_mode & 0o777 == 0o700
    entries = json.loads(remembered.read_text())
    assert entries[str(real.model)][-1] == model.MODEL_SHA256
    # a file that changed after it was remembered is hashed again, and refused
    copy = tmp_path / model.MODEL_FILE
    copy.write_bytes(b"not the model")
    entries[str(copy)] = [*entries[str(real.model)][:-1], model.MODEL_SHA256]  # a stale stamp
    remembered.write_text(json.dumps(entries))
    with pytest.raises(ModelUnavailableError):
        model.check_files(model.ModelFiles(copy, real.engine))


def test_turned_off_it_never_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(model.DISABLE_ENV, "off")
    assert model.load_or_none() is None
    assert "turned off" in (model.why_unavailable() or "")


def test_a_long_text_is_cut_and_an_empty_list_embeds_nothing() -> None:
    embedder = model.load()
    assert embedder.passages([]).shape == (0, model.DIMS)
    long = embedder.passages(["word " * 5000])  # cut at EMBEDDED_CHARS: seconds, not minutes
    assert long.shape == (1, model.DIMS) and abs(float(np.linalg.norm(long[0])) - 1) < 1e-3


# --- the vectors of a brain -----------------------------------------------------------------------
def test_vectors_are_made_after_the_saves_in_order_and_kept_current(brain: Any) -> None:
    embedder = model.load()
    ids = [_save(brain, t) for t in ("I drink coffee every morning", "Dr. Okafor fills my cavities")]
    before = vectors.state(brain.conn)
    assert not before.current(embedder.name)
    made = index.embed_pending(brain.conn, embedder)
    after = vectors.state(brain.conn)
    assert made >= 2 and after.current(embedder.name) and after.newest_vector == after.newest_memory
    assert index.embed_pending(brain.conn, embedder) == 0  # nothing left
    rowids = [
        int(brain.conn.execute("SELECT rowid FROM memories WHERE memory_id = ?", (i,)).fetchall()[0][0])
        for i in ids
    ]
    held = vectors.of_memories(brain.conn, rowids)
    assert all(len(blob) == 4 + model.DIMS for _, blob, _ in held.values())
    # aimos's guides get an empty vector: they answer questions about aimos, by their words
    guides = brain.conn.execute(
        "SELECT COUNT(*) FROM memory_vectors v JOIN memories m ON m.rowid = v.memory_rowid"
        " WHERE m.scope = 'system' AND length(v.vector) > 0"
    ).fetchall()[0][0]
    assert guides == 0
    near, mean, count = index.MeaningQuery(
        embedder.name, embedder.dims, embedder.query("which dentist do I see")
    ).nearest(brain.conn, 5)
    assert near[0][0] == rowids[1] and near[0][1] > mean and count == 2


def test_a_removed_vector_moves_the_generation_and_the_kept_matrix_is_read_again(brain: Any) -> None:
    embedder = model.load()
    _save(brain, "The boiler is serviced every October")
    index.embed_pending(brain.conn, embedder)
    kept = index.matrix(brain.conn, embedder.name, embedder.dims)
    size = len(kept)
    generation = vectors.state(brain.conn).generation
    with write_transaction(brain.conn):
        vectors.remove(brain.conn, vectors.rowids(brain.conn)[-1])
    assert vectors.state(brain.conn).generation == generation + 1
    assert len(index.matrix(brain.conn, embedder.name, embedder.dims)) == size - 1


def test_a_vector_is_refused_for_a_memory_that_does_not_exist(brain: Any) -> None:
    import apsw

    with pytest.raises(apsw.ConstraintError, match="belongs to a saved memory"):
        brain.conn.execute(
            "INSERT INTO memory_vectors (memory_rowid, model, vector) VALUES (999999, 'm', x'00')"
        )


def test_a_recall_finds_a_memory_by_meaning_and_stores_the_vectors_it_made(brain: Any) -> None:
    allergy = _save(brain, "Penicillin gives me hives and swelling")
    _save(brain, "The boiler is serviced every October by Dana")
    assert _recall(brain, "which antibiotic causes a rash", meaning=False) == []  # no shared word
    assert _recall(brain, "which antibiotic causes a rash")[:1] == [allergy]
    assert vectors.state(brain.conn).current(model.MODEL_NAME)
    assert _recall(brain, "what is the capital of Mongolia") == []  # nothing answers: abstain


def test_a_refused_recall_stores_no_vector(brain: Any) -> None:
    _save(brain, "I drink coffee every morning")
    count = brain.conn.execute("SELECT COUNT(*) FROM memory_vectors").fetchall()[0][0]
    now = int(time.time())
    body = build_recall_body(query="what do I drink", limit=10)
    request = sign_request(brain.agent, {**body, "limit": 0}, PATH_RECALL, now)
    with pytest.raises(Exception, match="limit"):
        recall(brain.conn, brain.housekeeper, request, now)
    assert brain.conn.execute("SELECT COUNT(*) FROM memory_vectors").fetchall()[0][0] == count


def test_words_alone_when_the_model_is_off(brain: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(model.DISABLE_ENV, "off")
    coffee = _save(brain, "I drink coffee every morning")
    assert _recall(brain, "coffee") == [coffee]
    assert _recall(brain, "what beverage do I like") == []
    assert brain.conn.execute("SELECT COUNT(*) FROM memory_vectors").fetchall()[0][0] == 0
    assert os.environ[model.DISABLE_ENV] == "off"
