"""The home of the chains (issue 39; docs/sync.md, "The home, and why chains cannot fork"): device
A put the brain on the hub and is its home, device B joined it. What extends a memory's chains
after its save (its weight, its occurrences, its versions, its label) is written by the home
alone: B keeps its signed requests for the home and says what they will do, changing nothing; the
home applies each once when it arrives, and after the devices sync each chain is one chain, the
same on both, and both verifiers agree on both devices.

Everything through the real CLI in subprocesses; the brains are read with the `sqlite3` shell.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from support.agreement_texts import POISON, QUESTION, REFERENCE
from support.cli import table_counts
from support.hub_devices import Device, Pair, assert_verified_alike

pytestmark = pytest.mark.timeout(300)

KETTLE = ("the copper kettle in the attic whistles in E flat", "copper kettle attic")


def shared(pair: Pair, *texts: str) -> list[str]:
    """Memories A saves and B pulls (A syncs, then B): their ids."""
    saved = [pair.a.save(text) for text in texts]
    pair.a.sync()
    pair.b.sync()
    assert set(saved) <= pair.b.memory_ids()
    return saved


def sync_round(pair: Pair) -> list[dict[str, Any]]:
    """B, A, B: B's requests reach the home, and what the home wrote of them comes back."""
    return [pair.b.sync(), pair.a.sync(), pair.b.sync()]


def weight(device: Device, memory: str) -> float:
    return float(device.run("show", memory, "--json").json()["weight"])


def count(device: Device, table: str, where: str) -> int:
    return int(device.query(f"SELECT COUNT(*) AS n FROM {table} WHERE {where}")[0]["n"])


def weight_chain(device: Device, memory: str) -> list[str]:
    """The memory's weight projections on ``device``, asserted to be one chain: exactly one row whose
    predecessor is none of them (the genesis), no two rows naming the same predecessor, every row
    reached from the genesis, each starting from the weight the one before it ended at. The
    projection hashes in chain order."""
    found = device.query(
        "SELECT projection_hash, prev_projection_hash, old_weight_milli, new_weight_milli"
        f" FROM weight_projections WHERE memory_id = '{memory}'"
    )
    hashes = {r["projection_hash"] for r in found}
    genesis = [r for r in found if r["prev_projection_hash"] not in hashes]
    assert len(genesis) == 1, f"{device.home.name}: {len(genesis)} chain starts in {found}"
    following = {r["prev_projection_hash"]: r for r in found}
    assert len(following) == len(found), f"{device.home.name}: two projections share a predecessor: {found}"
    chain = genesis
    while chain[-1]["projection_hash"] in following:
        chain.append(following[chain[-1]["projection_hash"]])
    assert len(chain) == len(found), f"{device.home.name}: projections off the chain: {found}"
    for before, after in itertools.pairwise(chain):
        assert after["old_weight_milli"] == before["new_weight_milli"], chain
    assert weight(device, memory) == chain[-1]["new_weight_milli"] / 1000
    return [r["projection_hash"] for r in chain]


def kept_for_home(device: Device) -> list[dict[str, Any]]:
    """The signed requests ``device`` kept for the home (hub_requests), in the order kept."""
    return device.query("SELECT request_id, signed_path, nonce FROM hub_requests ORDER BY rowid")


# --- outcomes ----------------------------------------------------------------------------------
@pytest.mark.parametrize("b_says", ["--good", "--bad"])
def test_outcomes_given_on_both_devices_offline_make_one_weight_chain(pair: Pair, b_says: str) -> None:
    a, b = pair.a, pair.b
    text, query = KETTLE
    (memory,) = shared(pair, text)
    assert memory in a.recall(query) and memory in b.recall(query)
    start = weight(b, memory)

    # offline: the home's outcome is its own transition; B's is kept for the home
    a.run("feedback", memory, "--good").ok()
    assert weight(a, memory) > start
    on_b = b.run("feedback", memory, b_says).ok()
    assert on_b.out.strip().endswith("once the home applies it"), on_b.describe()
    assert "kept for the brain's home device" in on_b.err and "aimos export-outcome" not in on_b.err, (
        on_b.describe()
    )
    assert weight(b, memory) == start  # provisional: nothing changed on B
    where = f"memory_id = '{memory}'"
    assert count(b, "outcomes", where) == 0 and count(b, "weight_projections", where) == 0
    assert [r["signed_path"] for r in kept_for_home(b)] == ["/aimos/outcome"]

    done = sync_round(pair)
    assert done[1]["forwarded_applied"] == 1 and done[1]["forwarded_refused"] == [], done[1]
    chains = [weight_chain(d, memory) for d in (a, b)]
    assert chains[0] == chains[1], chains
    print(f"A --good, B {b_says}: {len(chains[0])} projections, weight {start} -> {weight(a, memory)}")
    assert weight(a, memory) == weight(b, memory)
    for d in (a, b):
        assert count(d, "outcomes", where) == 2, d.home.name
    # applied once: the next syncs apply nothing again
    assert a.sync()["forwarded_applied"] == 0
    assert weight_chain(a, memory) == chains[0]
    assert_verified_alike(a, b)


# --- a save of text the brain holds: an occurrence -------------------------------------------------
def test_a_save_of_text_the_brain_holds_made_off_the_home_is_one_occurrence_on_both(pair: Pair) -> None:
    a, b = pair.a, pair.b
    texts = (
        "the night train to Vigo leaves from platform eleven",
        "the spare key hangs behind the barometer in the hall",
    )
    memories = shared(pair, *texts)
    known = a.memory_ids()

    plain = b.run("save", texts[0]).ok()
    assert plain.out.strip() == memories[0], plain.describe()
    assert "kept for the home device" in plain.err and memories[0] in plain.err, plain.describe()
    as_json = b.run("save", texts[1], "--json").json()
    assert as_json["memory_id"] == memories[1] and as_json["status"] == "duplicate", as_json
    assert as_json["provisional"] is True and as_json["event_id"] == "", as_json
    kept = kept_for_home(b)
    assert [r["signed_path"] for r in kept] == ["/aimos/save", "/aimos/save"], kept
    nonces = [r["nonce"] for r in kept]
    for memory, nonce in zip(memories, nonces, strict=True):
        assert count(b, "memory_occurrences", f"memory_id = '{memory}'") == 0
        assert count(b, "request_nonces", f"nonce = '{nonce}'") == 0  # the home records it

    done = sync_round(pair)
    assert done[1]["forwarded_applied"] == 2, done[1]
    for d in (a, b):
        assert d.memory_ids() == known, f"{d.home.name} holds a second copy"
        for memory, nonce in zip(memories, nonces, strict=True):
            occurred = d.query(f"SELECT request_nonce FROM memory_occurrences WHERE memory_id = '{memory}'")
            assert [r["request_nonce"] for r in occurred] == [nonce], (d.home.name, occurred)
            assert count(d, "request_nonces", f"nonce = '{nonce}'") == 1, d.home.name
    assert a.sync()["forwarded_applied"] == 0
    assert count(a, "memory_occurrences", "1") == count(b, "memory_occurrences", "1")
    assert_verified_alike(a, b)


# --- corrections: a memory's versions are one chain ------------------------------------------------
def test_two_devices_correct_one_memory_offline_and_the_home_keeps_one_version(pair: Pair) -> None:
    a, b = pair.a, pair.b
    (memory,) = shared(pair, "the allotment shed is painted green")
    on_a = a.run("correct", memory, "the allotment shed is painted blue since March").ok()
    new_version = on_a.out.strip()
    on_b = b.run("correct", memory, "the allotment shed is painted crimson, the committee chose it")
    assert on_b.code == 0 and on_b.out == "", on_b.describe()
    assert "kept for the home device" in on_b.err and memory in on_b.err, on_b.describe()
    (request,) = kept_for_home(b)

    done = sync_round(pair)
    assert done[1]["forwarded_applied"] == 0, done[1]
    assert [r["request_id"] for r in done[1]["forwarded_refused"]] == [request["request_id"]], done[1]
    for d in (a, b):
        versions = d.query(f"SELECT new_memory_id FROM memory_supersessions WHERE old_memory_id = '{memory}'")
        assert versions == [{"new_memory_id": new_version}], (d.home.name, versions)
        assert count(d, "memories", "value LIKE '%crimson%'") == 0, d.home.name
    status = a.run("hub", "status").ok()
    assert f"refused here  request {request['request_id']}" in status.out, status.describe()
    assert "already corrected" in status.out, status.describe()
    assert request["request_id"] in a.run("hub", "status", "--json").json()["requests_refused"]
    assert a.sync()["forwarded_refused"] == []  # not tried again
    assert_verified_alike(a, b)


# --- a person's judgment, and moving the home -----------------------------------------------------
def test_a_judgment_elsewhere_is_kept_for_the_home_and_the_home_moves(pair: Pair) -> None:
    a, b = pair.a, pair.b
    first, second = shared(
        pair, "the pharmacy on Quay Street closes at six", "the boiler was serviced in May"
    )
    labels = ("memory_classifications", "events", "memories")
    before = table_counts(b.brain, labels)
    kept = (
        b.run("label", first, "dispute", "--reason", "the sign on the door says seven", "--json").ok().json()
    )
    assert kept["provisional"] is True and kept["label"] == "disputed" and kept["classification_hash"] == ""
    assert table_counts(b.brain, labels) == before  # nothing of the label chain on B: the home writes it
    assert count(b, "hub_requests", "signed_path = '/aimos/label'") == 1
    sync_round(pair)
    for d in (a, b):
        label = d.query(f"SELECT epistemic_label FROM memories WHERE memory_id = '{first}'")
        assert label == [{"epistemic_label": "disputed"}], d.home.name
    # raising trust needs the master: B's passphrase (AIMOS_PASSPHRASE_FILE) signs beside the agent
    b.run("label", first, "support", "--reason", "I checked the opening hours").ok()
    sync_round(pair)
    for d in (a, b):
        label = d.query(f"SELECT epistemic_label FROM memories WHERE memory_id = '{first}'")
        assert label == [{"epistemic_label": "supported"}], d.home.name

    b.run("hub", "home").ok()
    sync_round(pair)
    found = {d["device"]: d for d in a.run("hub", "devices", "--json").json()}
    assert found[b.device_fp()]["home"] is True and found[a.device_fp()]["home"] is False, found
    # now A keeps its judgments for B, and B writes them at once
    before = table_counts(a.brain, labels)
    assert (
        a.run("label", second, "dispute", "--reason", "no stamp", "--json").ok().json()["provisional"] is True
    )
    assert table_counts(a.brain, labels) == before
    assert (
        b.run("label", first, "dispute", "--reason", "it closed early", "--json")
        .ok()
        .json()
        .get("provisional")
        is None
    )
    a.sync(), b.sync(), a.sync()
    for d in (a, b):
        got = d.query(
            f"SELECT memory_id, epistemic_label FROM memories WHERE memory_id IN ('{first}', '{second}')"
            " ORDER BY memory_id"
        )
        assert sorted(r["epistemic_label"] for r in got) == ["disputed", "disputed"], (d.home.name, got)
    assert_verified_alike(a, b)


# --- the agreement detector -------------------------------------------------------------------
def classifications(device: Device, ids: list[str]) -> list[dict[str, Any]]:
    marks = ",".join(f"'{i}'" for i in ids)
    return device.query(
        "SELECT classification_id, memory_id, label, classification_hash FROM memory_classifications"
        f" WHERE memory_id IN ({marks}) ORDER BY classification_hash"
    )


def test_the_detector_judges_on_the_home_alone(pair: Pair) -> None:
    """A spread paraphrase attack and the reference it contradicts (tests/epistemic/
    test_agreement_detector.py, whose CLI test labels it on one device), saved on B: B judges none
    of it, not at its saves nor at a recall; A labels the attack when it arrives, and B holds A's
    labels after its next sync."""
    a, b = pair.a, pair.b
    reference = b.save(REFERENCE, "--source", "corpus:reference")
    b.run("agent", "enroll", "reader").ok()
    poison = [
        b.save(text, "--as", "reader", "--source", f"web:site{i}.example") for i, text in enumerate(POISON)
    ]
    ids = [reference, *poison]
    b.recall(QUESTION)
    assert classifications(b, ids) == []

    b.sync()
    judged = a.sync()
    assert judged["judged"] == len(ids), judged
    labelled = classifications(a, ids)
    assert {r["memory_id"] for r in labelled if r["label"] == "poison_likely"} == set(poison), labelled
    assert reference not in {r["memory_id"] for r in labelled if r["label"] != "unverified"}, labelled
    assert b.sync()["pulled"] > 0
    assert classifications(b, ids) == labelled
    marks = ",".join(f"'{i}'" for i in ids)
    shown = f"SELECT memory_id, epistemic_label FROM memories WHERE memory_id IN ({marks}) ORDER BY memory_id"
    assert a.query(shown) == b.query(shown)
    assert not set(poison) & set(b.recall(QUESTION))  # withheld on B too
    assert_verified_alike(a, b)
