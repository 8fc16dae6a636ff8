"""canonical_json's C-encoder fast path must give rfc8785's bytes on every document it takes."""

from __future__ import annotations

import random
import string
from typing import Any

import rfc8785

from aimos.crypto.canonical import canonical_json

CHARS = string.printable + "éü中文\u2028\u2029\x00\x01\x1f\x7f\"\\/\U0001f600\ue000\uffff\ud7ff"


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(CHARS) for _ in range(rng.randint(0, 8)))


def _doc(rng: random.Random, depth: int = 0) -> Any:
    r = rng.random()
    if depth > 4 or r < 0.3:
        return rng.choice(
            [None, True, False, rng.randint(-(2**53) + 1, 2**53 - 1), _text(rng), rng.randint(-5, 5),
             rng.random() * 10 ** rng.randint(-10, 25), float(rng.randint(-100, 100))]
        )
    if r < 0.65:
        return {_text(rng): _doc(rng, depth + 1) for _ in range(rng.randint(0, 5))}
    return [_doc(rng, depth + 1) for _ in range(rng.randint(0, 5))]


def test_fast_path_agrees_with_rfc8785_on_random_documents() -> None:
    rng = random.Random(8785)
    checked = 0
    for _ in range(5000):
        doc = _doc(rng)
        expected = bytes(rfc8785.dumps(doc))
        assert canonical_json(doc) == expected, doc
        checked += 1
    assert checked == 5000


def test_utf16_key_order_differs_from_code_point_order() -> None:
    # By code point U+E000 comes first; by UTF-16 code unit U+1F600 does.
    doc = {"\U0001f600": 1, "\ue000": 2}
    assert canonical_json(doc) == bytes(rfc8785.dumps(doc))
    # U+1F600 is the pair D83D DE00, which sorts before E000 as UTF-16 code units
    assert canonical_json(doc).index("\U0001f600".encode()) < canonical_json(doc).index("\ue000".encode())
