"""Outcomes through the one writer, in-process on a real installed brain (SPEC section 6,
PROTOCOL-NOTES sections 3, 7 and 8): signed evidence bound to the recall receipt that disclosed the
memory; authorized transitions (REWEIGHT node, projection h_i, housekeeper-signed t_i, live weight,
`cognitive_weight_adjusted`), signed no-ops, occurrence observations, and refusals that change
nothing.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from learning_support import (
    CANARY,
    counts,
    disclosing_receipt,
    events_of,
    give,
    now,
    outcome_request,
    principal_rewards,
    projections,
    put,
    reweight_nodes,
    weight,
)

from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json
from aimos.crypto.ed25519 import verify
from aimos.crypto.encoding import b64u_decode
from aimos.crypto.messages import payload_message
from aimos.errors import MemoryNotFoundError, NotFoundError, ReplayError, UsageError
from aimos.exit_codes import exit_code_for
from aimos.verify.kit import valence as rule
from aimos.learning.outcomes import record_outcome
from aimos.store.connection import one, rows

pytestmark = pytest.mark.timeout(60)

USAGE, NOT_FOUND, IDENTITY = 2, 3, 6


@pytest.fixture
def heron(brain: Any) -> tuple[str, str]:
    """(memory id, receipt id): a memory and the recall receipt that disclosed it."""
    mid = put(brain, "the heron colony nests by the east lake every spring")
    return mid, disclosing_receipt(brain, "heron colony", mid)


def housekeeper_key(brain: Any, valid_from: int) -> str:
    row = one(
        brain.conn,
        "SELECT public_key_b64u FROM identity_epochs WHERE agent_id = 'housekeeper' AND valid_from = ?",
        (valid_from,),
    )
    assert row is not None
    return str(row["public_key_b64u"])


def delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {t: after[t] - before[t] for t in before}


# --- the weight moves exactly as the rule replays ---------------------------------------------------
@pytest.mark.parametrize(
    "sequence",
    [
        ["good", "bad", "good"],  # 1165, 1165 (sum 0: signed no-op), 1357
        ["bad", "bad", "good", "good", "good"],  # 859, 708, 708 (sum -1 -> down) ...
        ["good", "good", "bad", "bad", "bad"],
    ],
    ids=["up-down-up", "down-down-up-up-up", "up-up-down-down-down"],
)
def test_live_weight_follows_replay(brain: Any, heron: tuple[str, str], sequence: list[str]) -> None:
    mid, receipt = heron
    rewards: list[int] = []
    for outcome in sequence:
        before = weight(brain.conn, mid)
        result = give(brain, mid, receipt, outcome)
        rewards.append(1 if outcome == "good" else -1)
        expected = rule.replay(1000, rewards)
        assert weight(brain.conn, mid) == expected, (sequence, rewards)
        assert (result.old_weight_milli, result.new_weight_milli) == (before, expected)
        assert result.terminal == ("signed_noop" if expected == before else "authorized_transition")
        assert result.receipt_id == receipt and result.memory_id == mid
    assert principal_rewards(brain.conn, mid) == rewards


def test_up_down_up_hand_values(brain: Any, heron: tuple[str, str]) -> None:
    mid, receipt = heron
    assert give(brain, mid, receipt, "good").new_weight_milli == 1165
    noop = give(brain, mid, receipt, "bad")  # sum 0: tanh 0 = 0, the weight does not move
    assert (noop.terminal, noop.new_weight_milli) == ("signed_noop", 1165)
    assert give(brain, mid, receipt, "good").new_weight_milli == 1357
    assert [(p["old_weight_milli"], p["new_weight_milli"]) for p in projections(brain.conn, mid)] == [
        (1000, 1165),
        (1165, 1357),
    ]


def test_one_bad_outcome_gives_0_859(brain: Any, heron: tuple[str, str]) -> None:
    mid, receipt = heron
    result = give(brain, mid, receipt, "bad")
    assert (result.terminal, result.old_weight_milli, result.new_weight_milli) == (
        "authorized_transition",
        1000,
        859,
    )
    assert weight(brain.conn, mid) == 859


# --- each transition: one node, one projection, one event, and every hash recomputes ---------------------
def test_each_transition_appends_one_node_one_projection_one_event(
    brain: Any, heron: tuple[str, str]
) -> None:
    mid, receipt = heron
    for outcome in ("good", "good", "bad"):
        before = counts(brain.conn)
        adjusted_before = len(events_of(brain.conn, "cognitive_weight_adjusted", mid))
        result = give(brain, mid, receipt, outcome)
        assert result.terminal == "authorized_transition"
        assert delta(before, counts(brain.conn)) == {
            "outcomes": 1,
            "weight_projections": 1,
            "memory_provenance": 1,
            "events": 2,  # the outcome evidence and cognitive_weight_adjusted
            "request_nonces": 1,
        }
        assert len(events_of(brain.conn, "cognitive_weight_adjusted", mid)) == adjusted_before + 1
    assert len(reweight_nodes(brain.conn, mid)) == 3
    assert len(projections(brain.conn, mid)) == 3


def test_transition_hashes_and_signatures_recompute(brain: Any, heron: tuple[str, str]) -> None:
    mid, receipt = heron
    results = [give(brain, mid, receipt, o) for o in ("good", "good", "bad", "bad", "bad")]
    chain = projections(brain.conn, mid)
    assert len(chain) == sum(r.terminal == "authorized_transition" for r in results) >= 3
    nodes = {n["mutation_hash"]: n for n in reweight_nodes(brain.conn, mid)}
    company = "personal"
    prev_h: bytes | None = None
    prev_node: str | None = None
    for p in chain:
        sigma = bytes.fromhex(p["provenance_mutation_hash"])
        # h_i: `aimos.cwc/v1`, chained from 32 zero bytes at genesis
        h_i = commitments.projection_hash(mid, p["old_weight_milli"], p["new_weight_milli"], sigma, prev_h)
        assert p["projection_hash"] == h_i.hex()
        assert p["prev_projection_hash"] == (prev_h.hex() if prev_h else None)
        # t_i: `aimos.cognitive-transition/v2`, signed raw by the housekeeper epoch named on the row
        t_i = commitments.transition_commitment(
            company, mid, p["old_weight_milli"], p["new_weight_milli"], sigma
        )
        assert p["transition_hash"] == t_i.hex()
        key = housekeeper_key(brain, p["signer_valid_from"])
        assert verify(key, t_i, b64u_decode(p["transition_signature_b64u"]))
        assert not verify(key, t_i[:-1] + bytes([t_i[-1] ^ 1]), b64u_decode(p["transition_signature_b64u"]))
        # the REWEIGHT node: canonical body binding company, memory, weights and outcome
        node = nodes[p["provenance_mutation_hash"]]
        body = json.loads(node["body_json"])
        assert canonical_json(body).decode() == node["body_json"]
        assert body["event_type"] == node["event_type"] == "REWEIGHT"
        assert (body["company_id"], body["memory_id"], body["outcome_id"]) == (company, mid, p["outcome_id"])
        assert (body["old_weight_milli"], body["new_weight_milli"]) == (
            p["old_weight_milli"],
            p["new_weight_milli"],
        )
        assert (
            body["governor_flag"] == "SIGNED_VALENCE_REFERENCE_POINT" and body["reason"] == "outcome_evidence"
        )
        assert node["signer_agent_id"] == "housekeeper" and node["backfilled"] == 0
        assert node["binding_schema_version"] == 2
        content = commitments.sha256(node["body_json"].encode())
        assert node["content_hash"] == content.hex()
        assert node["prev_mutation_hash"] == prev_node
        mutation = commitments.provenance_mutation_hash(
            content, bytes.fromhex(prev_node) if prev_node else None, node["nonce"], node["ts_signed"]
        )
        assert node["mutation_hash"] == mutation.hex() == p["provenance_mutation_hash"]
        message = payload_message(body, node["nonce"], node["ts_signed"])
        assert verify(
            housekeeper_key(brain, node["signer_valid_from"]), message, b64u_decode(node["signature_b64u"])
        )
        # the signed event names the same hashes
        event = one(
            brain.conn,
            "SELECT signed_body FROM events WHERE operation = 'cognitive_weight_adjusted'"
            " AND json_extract(signed_body, '$.metadata.outcome_id') = ?",
            (p["outcome_id"],),
        )
        assert event is not None
        meta = json.loads(event["signed_body"])["metadata"]
        assert meta["projection_hash"] == p["projection_hash"]
        assert meta["transition_hash"] == p["transition_hash"]
        assert meta["provenance_mutation_hash"] == p["provenance_mutation_hash"]
        assert (meta["old_weight_milli"], meta["new_weight_milli"]) == (
            p["old_weight_milli"],
            p["new_weight_milli"],
        )
        prev_h, prev_node = h_i, node["mutation_hash"]
    assert weight(brain.conn, mid) == chain[-1]["new_weight_milli"]
    transitions = [r for r in results if r.terminal == "authorized_transition"]
    assert [r.projection_hash for r in transitions] == [p["projection_hash"] for p in chain]
    assert [r.transition_hash for r in transitions] == [p["transition_hash"] for p in chain]


def test_outcome_row_keeps_the_signed_request(brain: Any, heron: tuple[str, str]) -> None:
    mid, receipt = heron
    result = give(brain, mid, receipt, "bad")
    row = one(brain.conn, "SELECT * FROM outcomes WHERE outcome_id = ?", (result.outcome_id,))
    assert row is not None
    assert (
        row["memory_id"],
        row["receipt_id"],
        row["reward_sign"],
        row["target_scope"],
        row["terminal"],
    ) == (
        mid,
        receipt,
        -1,
        "principal_state",
        "authorized_transition",
    )
    assert row["agent_id"] == brain.agent.agent_id
    assert row["request_hash"] == commitments.sha256(row["request_body"].encode()).hex()
    assert json.loads(row["request_body"]) == {
        "memory_id": mid,
        "receipt_id": receipt,
        "outcome": "bad",
        "target_scope": "principal_state",
    }


# --- signed no-op: the evidence is kept, no projection --------------------------------------------------
def test_signed_noop_at_the_cap(brain: Any, heron: tuple[str, str]) -> None:
    mid, receipt = heron
    for _ in range(6):  # 1165 1413 1724 2105 2571 3000
        give(brain, mid, receipt, "good")
    assert weight(brain.conn, mid) == 3000
    chain_before = projections(brain.conn, mid)
    before = counts(brain.conn)
    result = give(brain, mid, receipt, "good")
    assert (result.terminal, result.old_weight_milli, result.new_weight_milli) == ("signed_noop", 3000, 3000)
    assert (result.projection_hash, result.transition_hash) == (None, None)
    assert delta(before, counts(brain.conn)) == {
        "outcomes": 1,
        "weight_projections": 0,
        "memory_provenance": 0,
        "events": 2,  # the outcome evidence and cognitive_weight_unchanged
        "request_nonces": 1,
    }
    assert projections(brain.conn, mid) == chain_before
    assert weight(brain.conn, mid) == 3000
    row = one(brain.conn, "SELECT * FROM outcomes WHERE outcome_id = ?", (result.outcome_id,))
    assert row is not None and row["terminal"] == "signed_noop" and row["reward_sign"] == 1
    unchanged = events_of(brain.conn, "cognitive_weight_unchanged", mid)
    assert len(unchanged) == 1 and unchanged[0]["event_id"] == result.event_id
    meta = json.loads(unchanged[0]["signed_body"])["metadata"]
    assert meta["outcome_id"] == result.outcome_id
    assert meta["projection_appended"] is False and meta["weight_milli"] == 3000
    # the kept evidence still counts: the sum is now 7
    assert principal_rewards(brain.conn, mid) == [1] * 7


def test_signed_noop_at_the_floor(brain: Any, heron: tuple[str, str]) -> None:
    mid, receipt = heron
    for _ in range(12):
        give(brain, mid, receipt, "bad")
    assert weight(brain.conn, mid) == 100
    before = counts(brain.conn)
    result = give(brain, mid, receipt, "bad")
    assert (result.terminal, result.new_weight_milli) == ("signed_noop", 100)
    assert delta(before, counts(brain.conn))["weight_projections"] == 0
    # the 12th bad still moved it (116 -> 100): this is the first no-op
    assert len(events_of(brain.conn, "cognitive_weight_unchanged", mid)) == 1


def test_kept_noop_evidence_keeps_counting(brain: Any, heron: tuple[str, str]) -> None:
    """At the cap, goods are no-ops but retained: it then takes as many bads to come back down."""
    mid, receipt = heron
    for _ in range(8):
        give(brain, mid, receipt, "good")
    result = give(brain, mid, receipt, "bad")  # sum 7: still up, capped -> no-op
    assert (result.terminal, weight(brain.conn, mid)) == ("signed_noop", 3000)
    assert weight(brain.conn, mid) == rule.replay(1000, principal_rewards(brain.conn, mid))


# --- occurrence-scoped evidence has no weight authority --------------------------------------------------
def test_occurrence_scoped_outcome_has_no_weight_authority(brain: Any, heron: tuple[str, str]) -> None:
    mid, receipt = heron
    for outcome in ("good", "good", "bad"):
        before = counts(brain.conn)
        result = give(brain, mid, receipt, outcome, scope="occurrence_observation")
        assert result.terminal == "occurrence_observation"
        assert (result.old_weight_milli, result.new_weight_milli) == (1000, 1000)
        assert delta(before, counts(brain.conn)) == {
            "outcomes": 1,
            "weight_projections": 0,
            "memory_provenance": 0,
            "events": 2,
            "request_nonces": 1,
        }
    assert weight(brain.conn, mid) == 1000
    kept = rows(brain.conn, "SELECT * FROM outcomes WHERE memory_id = ? ORDER BY rowid", (mid,))
    assert [(o["target_scope"], o["terminal"]) for o in kept] == [
        ("occurrence_observation", "occurrence_observation")
    ] * 3
    assert len(events_of(brain.conn, "mutation_occurrence_observation_retained", mid)) == 3
    # occurrence evidence does not count in the principal sum: one good now gives j = tanh(1)
    assert give(brain, mid, receipt, "good").new_weight_milli == 1165


# --- refusals change nothing ------------------------------------------------------------------------------
def assert_refused(brain: Any, request: Any, error: type[Exception], code: int, *watch: str) -> Exception:
    before = counts(brain.conn)
    weights = {m: weight(brain.conn, m) for m in watch}
    with pytest.raises(error) as caught:
        record_outcome(brain.conn, brain.housekeeper, request, request.ts)
    assert exit_code_for(caught.value) == code, caught.value
    assert getattr(caught.value, "hint", ""), "every refusal says what to do next"
    assert counts(brain.conn) == before, "a refused outcome left rows behind"
    assert {m: weight(brain.conn, m) for m in watch} == weights
    return caught.value


def test_memory_the_receipt_did_not_disclose(brain: Any, heron: tuple[str, str]) -> None:
    mid, receipt = heron
    other = put(brain, "the quarterly budget review is on thursday")
    disclosing_receipt(brain, "budget review", other)  # it was recalled, but not by `receipt`
    exc = assert_refused(brain, outcome_request(brain, other, receipt), NotFoundError, NOT_FOUND, mid, other)
    assert receipt in str(exc) and other in str(exc)


def test_memory_never_recalled_with_another_receipt(brain: Any, heron: tuple[str, str]) -> None:
    mid, receipt = heron
    other = put(brain, "the garden tap leaks in winter")
    assert_refused(brain, outcome_request(brain, other, receipt, "bad"), NotFoundError, NOT_FOUND, mid, other)


def test_unknown_receipt(brain: Any, heron: tuple[str, str]) -> None:
    mid, _ = heron
    assert_refused(brain, outcome_request(brain, mid, str(uuid.uuid4())), NotFoundError, NOT_FOUND, mid)


def test_unknown_memory(brain: Any, heron: tuple[str, str]) -> None:
    mid, receipt = heron
    assert_refused(
        brain, outcome_request(brain, str(uuid.uuid4()), receipt), MemoryNotFoundError, NOT_FOUND, mid
    )


@pytest.mark.parametrize("value", ["great", "GOOD", "", "neutral", "+1"])
def test_outcome_values_other_than_good_or_bad(brain: Any, heron: tuple[str, str], value: str) -> None:
    mid, receipt = heron
    assert_refused(brain, outcome_request(brain, mid, receipt, value), UsageError, USAGE, mid)


@pytest.mark.parametrize(
    "body",
    [
        {"outcome": 1},
        {"outcome": None},
        {"target_scope": "everything"},
        {"extra": "field"},
        {"memory_id": None},
    ],
    ids=["outcome-int", "outcome-null", "bad-scope", "unknown-field", "no-memory"],
)
def test_malformed_outcome_bodies(brain: Any, heron: tuple[str, str], body: dict[str, Any]) -> None:
    from aimos.identity.requests import sign_request
    from aimos.vocabulary import PATH_OUTCOME

    mid, receipt = heron
    full = {
        "memory_id": mid,
        "receipt_id": receipt,
        "outcome": "good",
        "target_scope": "principal_state",
        **body,
    }
    request = sign_request(brain.agent, full, PATH_OUTCOME, now())
    assert_refused(brain, request, UsageError, USAGE, mid)


def test_replayed_outcome_request_is_refused(brain: Any, heron: tuple[str, str]) -> None:
    mid, receipt = heron
    t = now()
    request = outcome_request(brain, mid, receipt, "good", t=t)
    first = record_outcome(brain.conn, brain.housekeeper, request, t)
    assert first.new_weight_milli == 1165
    exc = assert_refused(brain, request, ReplayError, IDENTITY, mid)
    assert "replay" in str(exc)
    assert weight(brain.conn, mid) == 1165
    assert principal_rewards(brain.conn, mid) == [1]


def test_outcome_on_a_retained_canary_is_never_possible_without_disclosure(
    brain: Any, heron: tuple[str, str]
) -> None:
    """A canary is kept in quarantine at 0.1 and withheld from recall, so no receipt discloses it."""
    mid, receipt = heron
    canary = put(brain, f"heron colony note {CANARY}")
    assert weight(brain.conn, canary) == 100
    assert_refused(brain, outcome_request(brain, canary, receipt), NotFoundError, NOT_FOUND, canary, mid)


# --- concurrency: outcomes stamped out of commit order ---------------------------------------------------
def test_outcome_stamped_one_second_before_the_previous_transition(
    brain: Any, heron: tuple[str, str]
) -> None:
    """Two writers (SPEC 4: agents, CLI and housekeeper share a brain) take `now` before waiting for
    the write lock, so the second transition to commit may carry a ts one second older than the
    first. It is a valid outcome (within the 300 s skew) and must be applied like any other."""
    mid, receipt = heron
    t = now() + 2  # both stamps inside the agent epoch, which may have started this second
    assert give(brain, mid, receipt, "good", t=t).new_weight_milli == 1165
    second = give(brain, mid, receipt, "good", t=t - 1)
    assert (second.terminal, second.new_weight_milli) == ("authorized_transition", 1413)
    assert weight(brain.conn, mid) == rule.replay(1000, [1, 1]) == 1413
