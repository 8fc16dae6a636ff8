"""The content key's generations, pure (aimos/hub/box.py, aimos/hub/generations.py): a box says the
generation that sealed it and cannot be made to say another; a first-generation box is a plain
SecretBox as before generations; a key enters a device's ring only when the master's record of its
generation commits to it; a wrap opens only with the housekeeper key it was made for."""

from __future__ import annotations

import os

import pytest

from aimos.crypto.ed25519 import KeyPair
from aimos.errors import EncodingError, VerificationError
from aimos.hub import box, generations
from aimos.hub.generations import MASTER
from aimos.store.postgres import KeyRow

BRAIN = "brain-1"


def test_a_box_opens_with_the_generation_that_sealed_it_and_no_other() -> None:
    first, second = os.urandom(32), os.urandom(32)
    old = box.KeyRing({1: first})
    new = old.add(2, second)
    assert box.generation_of(old.seal(b"before")) == 1
    assert box.generation_of(new.seal(b"after")) == 2
    assert new.open(old.seal(b"before"), "x") == b"before"
    assert new.open(box.seal_record(first, b"as before generations"), "x") == b"as before generations"
    sealed = new.seal(b"after")
    with pytest.raises(VerificationError) as unknown:
        old.open(sealed, "#9 (device D, record 3)")
    assert unknown.value.reason == "hub_record_unknown_generation"
    assert (
        "hub record #9 (device D, record 3) is sealed under content key generation 2" in unknown.value.message
    )
    # the same box said to be of another generation whose key the device holds: it does not open
    relabelled = box.header(3) + sealed[len(box.header(2)) :]
    with pytest.raises(VerificationError) as changed:
        new.add(3, second).open(relabelled, "x")
    assert changed.value.reason == "hub_record_unopenable"


def test_a_ring_never_shows_a_key_and_reads_the_item_an_aimos_before_generations_wrote() -> None:
    first, second = os.urandom(32), os.urandom(32)
    ring = box.KeyRing({1: first, 2: second})
    assert repr(ring) == "KeyRing(generations=[1, 2])"
    assert box.KeyRing.from_text(ring.to_text()).keys == ring.keys
    from aimos.crypto.encoding import b64u_encode

    assert box.KeyRing.from_text(b64u_encode(first)).keys == {1: first}
    with pytest.raises(EncodingError):
        box.KeyRing.from_text('{"2": "AAAA"}')
    with pytest.raises(ValueError):
        box.KeyRing({2: second})


def test_a_generation_is_taken_only_when_the_masters_record_commits_to_its_key() -> None:
    master, housekeeper, other = KeyPair.generate(), KeyPair.generate(), KeyPair.generate()
    ring = box.KeyRing({1: os.urandom(32)})
    key = os.urandom(32)
    record = generations.generation_row(master, BRAIN, 2, key, ["d-gone"], 1_700_000_000)
    mine = box.recipient_name(ring.first, housekeeper.public_b64u)
    rows = [record, KeyRow(2, mine, box.wrap_for(housekeeper.public_b64u, key))]
    signed = generations.records(rows, BRAIN, master.public_b64u)
    assert signed[2]["left_out"] == ["d-gone"]
    assert generations.taken(ring, rows, signed, housekeeper=housekeeper).keys[2] == key
    assert generations.taken(ring, rows, signed, master_seed=master.seed).keys[2] == key
    # a wrap made for another housekeeper key, or a key the record does not commit to: not taken
    assert 2 not in generations.taken(ring, rows, signed, housekeeper=other).keys
    slipped = [record, KeyRow(2, mine, box.wrap_for(housekeeper.public_b64u, os.urandom(32)))]
    assert 2 not in generations.taken(ring, slipped, signed, housekeeper=housekeeper).keys
    # a record the master did not sign, or of another brain, is no record
    forged = generations.generation_row(KeyPair.generate(), BRAIN, 2, key, [], 1_700_000_000)
    assert generations.records([forged], BRAIN, master.public_b64u) == {}
    assert generations.records([record], "brain-2", master.public_b64u) == {}
    assert (
        generations.records(
            [KeyRow(3, MASTER, record.wrapped, record.signed_body, record.signature)],
            BRAIN,
            master.public_b64u,
        )
        == {}
    )
