"""What each device tells the others it has pulled, and what a device makes of it (pure:
aimos/hub/heads.py). The end-to-end case, a hub that withholds records, is
tests/hub/test_hub_withholding.py."""

from __future__ import annotations

from aimos.hub.heads import behind, claims_of, heads_row, merged

A, B, C = "aimos-device:a", "aimos-device:b", "aimos-device:c"
LINK = "1" * 64


def test_a_device_publishes_every_other_device_it_pulled_and_not_itself() -> None:
    row = heads_row(A, 40, {B: (7, LINK), C: (3, LINK), A: (9, LINK)})
    assert row["device"] == A and row["through"] == 40
    assert claims_of(A, row) == {B: (7, LINK), C: (3, LINK)}


def test_a_claim_filed_under_another_device_or_malformed_says_nothing() -> None:
    row = heads_row(A, 40, {C: (3, LINK)})
    assert claims_of(B, row) == {}  # a heads record names its own device
    for heads in ("not json", "[1, 2]", '{"x": [true, "l"]}', '{"x": ["3", "l"]}', '{"x": [3]}'):
        assert claims_of(A, {"device": A, "through": 1, "heads": heads}) == {}, heads


def test_the_furthest_claim_is_kept_and_this_device_behind_is_named() -> None:
    seen = merged(None, [(A, heads_row(A, 10, {C: (3, LINK)}))])
    seen = merged(seen, [(B, heads_row(B, 12, {C: (5, LINK)})), (A, heads_row(A, 11, {C: (4, LINK)}))])
    assert seen == {C: {"n": 5, "link": LINK, "by": B}}
    assert behind(seen, {C: (5, LINK)}, A) == []
    assert behind(seen, {C: (2, LINK)}, A) == [{"device": C, "records": 3, "seen_by": B, "here": 2}]
    assert behind(seen, {}, A) == [{"device": C, "records": 5, "seen_by": B, "here": 0}]
    assert behind(seen, {}, C) == []  # what others say of this device's own records: not behind


def test_a_state_file_changed_by_hand_is_read_without_its_broken_entries() -> None:
    seen = merged({C: {"n": "5", "by": B}, B: "x", A: {"n": 2, "by": C, "link": LINK}}, [])
    assert seen == {A: {"n": 2, "by": C, "link": LINK}}


def test_a_claim_past_a_devices_refusal_counts_up_to_the_record_before_it() -> None:
    """Another device told it pulled record 2**62 of C, which this device refuses from record 11
    on (C was revoked; an older aimos took a cut device's number from the records it refused
    unread): C's records after 10 are refused whoever has them, so only those up to 10 are owed."""
    seen = merged(None, [(B, heads_row(B, 40, {C: (2**62, LINK), A: (9, LINK)}))])
    assert behind(seen, {C: (10, LINK), A: (9, LINK)}, A, {C: 11}) == []
    here = {C: (7, LINK), A: (9, LINK)}
    assert behind(seen, here, A, {C: 11}) == [{"device": C, "records": 3, "seen_by": B, "here": 7}]
    assert behind(seen, {C: (10, LINK)}, A) == [
        {"device": C, "records": 2**62 - 10, "seen_by": B, "here": 10}
    ]
