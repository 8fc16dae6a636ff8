"""The in-process memory of valid signatures: only a valid (key, message, signature) triple enters,
a changed byte anywhere is checked afresh (and fails), the memory is bounded (oldest out), and
`remembering(n)` widens it for one whole-brain verification and shrinks it back afterwards."""

from __future__ import annotations

from typing import Any

import pytest
from nacl.signing import SigningKey, VerifyKey

from aimos.crypto import ed25519
from aimos.crypto.ed25519 import KeyPair, _VerifiedSignatures, remembering, verify
from aimos.verify.kit.values import same


@pytest.fixture
def libsodium_calls(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The messages that reach libsodium's verify (a memory hit never does)."""
    calls: list[bytes] = []
    real = VerifyKey  # what aimos.crypto.ed25519 imports and verifies with

    class Counting(real):  # type: ignore[misc, valid-type]
        def verify(self, message: Any, signature: Any = None, **kw: Any) -> Any:
            calls.append(bytes(message))
            return super().verify(message, signature, **kw)

    monkeypatch.setattr(ed25519, "VerifyKey", Counting)
    return calls


def test_a_valid_signature_is_checked_once_and_a_changed_byte_always(libsodium_calls: list[bytes]) -> None:
    key = KeyPair.generate()
    other = KeyPair.generate()
    message = b"memory_saved event body"
    signature = bytes(SigningKey(key.seed).sign(message).signature)  # not via sign(): unremembered
    assert verify(key.raw_public, message, signature)
    assert verify(key.raw_public, message, signature)
    assert libsodium_calls == [message]  # the second time was a lookup
    forged = bytes([signature[0] ^ 1]) + signature[1:]
    for triple in (
        (key.raw_public, message + b"!", signature),
        (key.raw_public, message, forged),
        (other.raw_public, message, signature),
    ):
        assert not verify(*triple)
        assert not verify(*triple)  # a failure is never remembered: checked again, fails again
    assert len(libsodium_calls) == 7


def test_the_memory_is_bounded_oldest_out() -> None:
    memory = _VerifiedSignatures(limit=3)
    triples = [(b"k" * 32, f"m{i}".encode(), b"s" * 64) for i in range(5)]
    for t in triples:
        memory.add(*t)
    assert [t in memory for t in triples] == [False, False, True, True, True]
    memory.add(*triples[2])  # seen again: the newest now
    memory.add(b"k" * 32, b"m5", b"s" * 64)
    assert triples[2] in memory and triples[3] not in memory


def test_remembering_widens_for_a_block_and_shrinks_back(libsodium_calls: list[bytes]) -> None:
    key = KeyPair.generate()
    normal = ed25519._VERIFIED.limit
    messages = [f"event {i}".encode() for i in range(normal + 50)]
    signed = [(m, key.sign(m)) for m in messages]  # sign() remembers what it made
    libsodium_calls.clear()
    assert verify(key.raw_public, *signed[0]) and libsodium_calls == [messages[0]]  # evicted since
    with remembering(normal * 2):
        assert ed25519._VERIFIED.limit == normal * 2
        for m, s in signed:
            assert verify(key.raw_public, m, s)
        checked = len(libsodium_calls)
        for m, s in signed:
            assert verify(key.raw_public, m, s)
        assert len(libsodium_calls) == checked  # every one remembered within the block
    assert ed25519._VERIFIED.limit == normal
    assert len(ed25519._VERIFIED._entries) <= normal


def test_same_compares_json_values_as_the_reference_does() -> None:
    assert same(None, None) and same(True, True) and same(7, 7) and same("a", "a")
    assert not same(True, 1) and not same(1, True) and not same(0, False) and not same(None, 0)
    assert same(1, 1.0)  # one canonical form, "1"
    assert not same(2**60, 2**60)  # no canonical form: equal to nothing
    assert not same("1", 1) and not same(1, 2) and not same(False, True)
    assert same({"a": [1, True]}, {"a": [1, True]}) and not same({"a": [1]}, {"a": [True]})


def test_remembering_blocks_nest_and_the_largest_open_one_holds() -> None:
    normal = ed25519._VERIFIED.limit
    with remembering(normal * 4):
        with remembering(normal * 2):  # an export's verify inside `aimos verify`, say
            assert ed25519._VERIFIED.limit == normal * 4
        assert ed25519._VERIFIED.limit == normal * 4  # the inner block did not shrink the outer
        with remembering(normal * 8):
            assert ed25519._VERIFIED.limit == normal * 8
        assert ed25519._VERIFIED.limit == normal * 4
    assert ed25519._VERIFIED.limit == normal
