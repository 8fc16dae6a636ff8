"""The committed vectors of recall by meaning (generate_meaning_vectors.py): the stored form byte for
byte, and the pinned model's output for fixed texts within the engine's float noise."""

from __future__ import annotations

import json
import struct

import generate_meaning_vectors as gen
import numpy as np
import pytest

from aimos.meaning.vectors import pack, unpack, well_formed

COMMITTED = json.loads(gen.OUTPUT.read_text("utf-8"))


def test_the_committed_file_is_this_schema() -> None:
    assert COMMITTED["schema"] == gen.SCHEMA
    assert set(COMMITTED["forms"]) == set(gen.FORMS)


@pytest.mark.parametrize("name", sorted(gen.FORMS))
def test_each_stored_form_is_the_committed_bytes(name: str) -> None:
    want = COMMITTED["forms"][name]
    blob = pack(np.array(want["input"], dtype=np.float32))
    assert blob.hex() == want["stored_hex"]
    assert [round(float(x), 6) for x in unpack(blob)] == want["read_back"]
    assert well_formed(blob, len(want["input"]))


def test_the_layout_by_hand() -> None:
    """A float32 scale (the largest magnitude over 127), then each component over it, rounded half
    to even, as signed bytes."""
    blob = bytes.fromhex(COMMITTED["forms"]["mixed"]["stored_hex"])
    (scale,) = struct.unpack("<f", blob[:4])
    assert scale == pytest.approx(1.0 / 127.0)
    assert [b - 256 if b > 127 else b for b in blob[4:]] == [
        round(v / scale) for v in (0.5, -0.25, 0.125, -1.0)
    ]


def test_a_malformed_form_is_not_a_vector() -> None:
    good = pack(np.ones(4, dtype=np.float32))
    assert not well_formed(good[:-1], 4)
    assert not well_formed(good + b"\x00", 4)
    assert not well_formed(struct.pack("<f", float("nan")) + good[4:], 4)
    assert not well_formed(struct.pack("<f", -1.0) + good[4:], 4)
    assert not well_formed("text", 4)


def test_the_pinned_model_gives_the_committed_vectors() -> None:
    """Within the engine's float noise: a model or engine whose output moved fails here."""
    from aimos.meaning.model import MODEL_NAME, load

    assert COMMITTED["model"] == MODEL_NAME
    model = load()
    memories = model.passages(gen.MEMORIES)
    for text, vector in zip(gen.MEMORIES, memories, strict=True):
        shown = vector[: gen.SHOWN] * 10
        assert np.allclose(shown, COMMITTED["memory_components"][text], atol=0.15), text
        assert float(np.linalg.norm(vector)) == pytest.approx(1.0, abs=1e-3)
    for question, by_memory in COMMITTED["cosines"].items():
        q = model.query(question)
        for text, vector in zip(gen.MEMORIES, memories, strict=True):
            assert float(np.dot(vector, q)) == pytest.approx(by_memory[text], abs=0.015), (question, text)
    # the answer is nearest for each question (the property recall by meaning rests on)
    assert (
        max(COMMITTED["cosines"]["which dentist do I see"].items(), key=lambda kv: kv[1])[0]
        == gen.MEMORIES[0]
    )
    assert max(COMMITTED["cosines"]["what do I drink"].items(), key=lambda kv: kv[1])[0] == gen.MEMORIES[1]
