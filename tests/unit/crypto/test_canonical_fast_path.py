"""canonical_json's C-encoder fast path must give rfc8785's bytes on every document it takes."""

from __future__ import annotations

import math
import random
import string
import struct
from typing import Any

import rfc8785

from aimos.crypto.canonical import _fast_form, _NeedsFullSerializer, canonical_json

CHARS = string.printable + 'éü中文\u2028\u2029\x00\x01\x1f\x7f"\\/\U0001f600\ue000\uffff\ud7ff'


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(CHARS) for _ in range(rng.randint(0, 8)))


def _doc(rng: random.Random, depth: int = 0) -> Any:
    r = rng.random()
    if depth > 4 or r < 0.3:
        return rng.choice(
            [
                None,
                True,
                False,
                rng.randint(-(2**53) + 1, 2**53 - 1),
                _text(rng),
                rng.randint(-5, 5),
                rng.random() * 10 ** rng.randint(-10, 25),
                float(rng.randint(-100, 100)),
            ]
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


# where Python's repr and ECMAScript's Number::toString change layout, and around them
EDGE_FLOATS = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    1e-4,
    -1e-4,
    9.999999999999999e-05,
    1.0000000000000002e-4,
    1e-5,
    1e-6,
    9.99e-7,
    1e-7,
    0.1 + 0.2,
    123.456,
    1e15 + 0.5,
    2.0**52 - 0.5,
    2.0**52,
    2.0**53 - 1,
    2.0**53,
    2.0**53 + 2,
    1e16,
    1e20,
    1e21,
    1e22,
    5e-324,
    2.2250738585072014e-308,
    1.7976931348623157e308,
    -1.7976931348623157e308,
    0.000123456,
    123456789.00000001,
]


def _random_double(rng: random.Random) -> float:
    while True:  # every finite bit pattern, so every exponent
        x: float = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if math.isfinite(x):
            return x


def test_floats_agree_with_rfc8785_on_both_paths() -> None:
    rng = random.Random(754)
    floats = EDGE_FLOATS + [_random_double(rng) for _ in range(20_000)]
    floats += [round(rng.random() * 10 ** rng.randint(-8, 3), 6) for _ in range(20_000)]
    took_c_encoder = 0
    for x in floats:
        for doc in (x, [x], {"score": x}):
            assert canonical_json(doc) == bytes(rfc8785.dumps(doc)), repr(x)
        try:
            _fast_form(x, 0)
            took_c_encoder += 1
        except _NeedsFullSerializer:
            continue
    # both paths really ran: the rounded scores mostly take the C encoder, odd doubles do not
    assert 10_000 < took_c_encoder < len(floats)


def test_decision_shaped_body_takes_the_c_encoder() -> None:
    body = {"mmr_lambda": 0.72, "candidates": [{"relevance": 0.5, "trust": 1.0, "weight_milli": 1000}]}
    assert _fast_form(body, 0) == {
        "mmr_lambda": 0.72,
        "candidates": [{"relevance": 0.5, "trust": 1, "weight_milli": 1000}],
    }
    assert (
        canonical_json(body)
        == b'{"candidates":[{"relevance":0.5,"trust":1,"weight_milli":1000}],"mmr_lambda":0.72}'
    )


def test_a_text_canonical_json_wrote_is_canonical_with_or_without_the_memory() -> None:
    """store.functions.is_canonical answers a text canonical_json wrote lately on its fast path
    from memory (canonical.made_here): on random documents, the answer is the full check's."""
    from aimos.crypto import canonical
    from aimos.store.functions import is_canonical

    rng = random.Random(36)
    remembered = 0
    for _ in range(2000):
        canonical._MADE.clear()
        text = canonical_json(_doc(rng)).decode("utf-8")
        answer = is_canonical(text)
        remembered += canonical.made_here(text)
        canonical._MADE.clear()
        assert answer == is_canonical(text), text
    assert remembered > 1000  # most documents take the fast path
    # a text it never wrote is checked in full: not canonical, though its values are
    assert is_canonical('{"b":1,"a":2}') == 0 and not canonical.made_here('{"b":1,"a":2}')
