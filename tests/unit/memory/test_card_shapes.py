"""The payment-card shape and UUIDs: about one random UUID in 800 holds a digit run that passes the
card check (issuer prefix and Luhn), so a memory id quoted in an error was withheld as a secret (an
MCP test failed on one at random). A UUID is never a card; a card beside one is still one."""

from __future__ import annotations

import random
import uuid

from aimos.memory.gates import secret_kind
from aimos.memory.secret_shapes import card_findings

# UUIDs found to pass the card check before the fix (random version-4 ids)
CARD_LIKE_UUIDS = (
    "53033190-7660-45b1-99e1-7b552e94525c",
    "61773097-1066-43d1-bbe5-bb98f3938c34",
    "9a613169-3054-4859-ba10-3e1fd980d5fe",
)


def test_a_uuid_is_no_card_number() -> None:
    for u in CARD_LIKE_UUIDS:
        assert list(card_findings(u)) == [], u
        assert secret_kind(f"memory {u}: you may not see it") is None, u
        assert secret_kind(u.upper()) is None, u


def test_no_random_uuid_is_a_card_number() -> None:
    rnd = random.Random(20261203)
    for _ in range(20000):
        u = str(uuid.UUID(int=rnd.getrandbits(128), version=4))
        assert list(card_findings(u)) == [], u


def test_a_card_beside_a_uuid_is_still_found() -> None:
    text = f"id {CARD_LIKE_UUIDS[0]} card 4111 1111 1111 1111"
    found = [f for f in card_findings(text) if f.kind == "payment card number"]
    assert len(found) == 1 and text[found[0].start : found[0].end] == "4111 1111 1111 1111"
    assert secret_kind(f"pay with 4111111111111111, ref {CARD_LIKE_UUIDS[1]}") == "payment card number"
