"""Outcomes through the one writer, in-process on a real installed brain (SPEC section 6,
PROTOCOL-NOTES sections 3, 7 and 8): signed evidence bound to the recall receipt that disclosed the
memory; authorized transitions (REWEIGHT node, projection h_i, housekeeper-signed t_i, live weight,
`cognitive_weight_adjusted`), signed no-ops, occurrence observations, and refusals that change
nothing. Weights follow valence rule 2 (aimos/verify/kit/valence.py): one weight-bearing outcome per
agent, recall receipt and memory, and each agent's share of a weight within [0.5, 2.0], so an
outcome meant to move a weight is given about a recall of its own (`give_anew`).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from support.cells import cell_int
from support.learning import (
    CANARY,
    ask,
    counts,
    disclosing_receipt,
    enrol,
    events_of,
    give,
    give_anew,
    ledger_replay,
    now,
    outcome_request,
    principal_rewards,
    projections,
    put,
    reweight_nodes,
    weight,
)

from aimos.actions.feedback import explain
from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json
from aimos.crypto.ed25519 import verify
from aimos.crypto.encoding import b64u_decode
from aimos.crypto.messages import payload_message
from aimos.errors import MemoryNotFoundError, NotFoundError, ReplayError, UsageError
from aimos.exit_codes import exit_code_for
from aimos.learning.outcomes import record_outcome
from aimos.store.connection import one, rows, write_transaction
from aimos.verify.brain.verifier import verify_brain
from aimos.verify.kit import valence as rule
from aimos.vocabulary import VALENCE_RULE_V2

pytestmark = pytest.mark.timeout(60)

USAGE, NOT_FOUND, IDENTITY = 2, 3, 6
QUERY = "heron colony"  # a recall that discloses the `heron` memory


@pytest.fixture
def heron(brain: Any) -> tuple[str, str]:
    """(memory id, receipt id): a memory and the recall receipt that disclosed it."""
    mid = put(brain, "the heron colony nests by the east lake every spring")
    return mid, disclosing_receipt(brain, QUERY, mid)


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
    ("sequence", "weights"),
    [
        (["good", "bad", "good"], [1165, 1165, 1357]),  # sum 0: signed no-op
        (["bad", "bad", "good", "good", "good"], [859, 708, 608, 608, 708]),  # sum -1: still down
        (["good", "good", "bad", "bad", "bad"], [1165, 1413, 1645, 1645, 1413]),  # sum +1: still up
    ],
    ids=["up-down-up", "down-down-up-up-up", "up-up-down-down-down"],
)
def test_live_weight_follows_replay(
    brain: Any, heron: tuple[str, str], sequence: list[str], weights: list[int]
) -> None:
    """One agent from the default weight, each outcome about its own recall, within the share's
    bounds [500, 2000]: rule 2 gives exactly MutMem's numbers."""
    mid, first = heron
    rewards: list[int] = []
    ledger = rule.WeightLedger(1000)
    for n, outcome in enumerate(sequence):
        receipt = first if n == 0 else disclosing_receipt(brain, QUERY, mid)
        before = weight(brain.conn, mid)
        result = give(brain, mid, receipt, outcome)
        rewards.append(1 if outcome == "good" else -1)
        expected = rule.replay(1000, rewards)
        step = ledger.step(brain.agent.agent_id, receipt, rewards[-1], VALENCE_RULE_V2)
        assert weight(brain.conn, mid) == expected == step.new_milli == weights[n], (sequence, rewards)
        assert (result.old_weight_milli, result.new_weight_milli) == (before, expected)
        assert result.terminal == ("signed_noop" if expected == before else "authorized_transition")
        assert result.receipt_id == receipt and result.memory_id == mid
        assert result.weight_bearing and result.valence_rule == VALENCE_RULE_V2
        assert (result.agent_good, result.agent_bad) == (rewards.count(1), rewards.count(-1))
    assert principal_rewards(brain.conn, mid) == rewards


def test_up_down_up_hand_values(brain: Any, heron: tuple[str, str]) -> None:
    mid, receipt = heron
    assert give(brain, mid, receipt, "good").new_weight_milli == 1165
    noop = give_anew(brain, mid, QUERY, "bad")  # sum 0: tanh 0 = 0, the weight does not move
    assert (noop.terminal, noop.new_weight_milli, noop.weight_bearing) == ("signed_noop", 1165, True)
    assert give_anew(brain, mid, QUERY, "good").new_weight_milli == 1357
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
    for n, outcome in enumerate(("good", "good", "bad")):  # 1165, 1413, 1645 (the balance is still +1)
        if n:
            receipt = disclosing_receipt(brain, QUERY, mid)  # each outcome about its own recall
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
    results = [give(brain, mid, receipt, "good")]
    results += [give_anew(brain, mid, QUERY, o) for o in ("good", "bad", "bad", "bad")]
    chain = projections(brain.conn, mid)
    assert len(chain) == sum(r.terminal == "authorized_transition" for r in results) == 4
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
        (event,) = [
            e
            for e in events_of(brain.conn, "cognitive_weight_adjusted", mid)
            if json.loads(e["signed_body"])["metadata"]["outcome_id"] == p["outcome_id"]
        ]
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
def assert_noop_at(brain: Any, mid: str, result: Any, at: int, before: dict[str, int]) -> None:
    """A weight-bearing signed no-op at ``at``: evidence kept, no projection, the unchanged event."""
    assert (result.terminal, result.old_weight_milli, result.new_weight_milli) == ("signed_noop", at, at)
    assert result.weight_bearing
    assert (result.projection_hash, result.transition_hash) == (None, None)
    assert delta(before, counts(brain.conn)) == {
        "outcomes": 1,
        "weight_projections": 0,
        "memory_provenance": 0,
        "events": 2,  # the outcome evidence and cognitive_weight_unchanged
        "request_nonces": 1,
    }
    assert weight(brain.conn, mid) == at
    row = one(brain.conn, "SELECT * FROM outcomes WHERE outcome_id = ?", (result.outcome_id,))
    assert row is not None and row["terminal"] == "signed_noop"
    unchanged = [
        e
        for e in events_of(brain.conn, "cognitive_weight_unchanged", mid)
        if json.loads(e["signed_body"])["metadata"]["outcome_id"] == result.outcome_id
    ]
    assert len(unchanged) == 1 and unchanged[0]["event_id"] == result.event_id
    meta = json.loads(unchanged[0]["signed_body"])["metadata"]
    assert meta["projection_appended"] is False and meta["weight_milli"] == at
    assert meta["valence_rule"] == VALENCE_RULE_V2 and meta["weight_bearing"] is True


def test_signed_noop_at_one_agents_ceiling(brain: Any, heron: tuple[str, str]) -> None:
    """One agent alone doubles the weight at most: its share stops at 2.0 (MutMem's rule alone
    would have gone on to 2571 and 3000)."""
    mid, receipt = heron
    ups = [give(brain, mid, receipt, "good").new_weight_milli]
    ups += [give_anew(brain, mid, QUERY, "good").new_weight_milli for _ in range(3)]
    assert ups == [1165, 1413, 1724, 2000]  # 1724 * e^(0.2 tanh 4) = 2103: the share stops at 2000
    chain_before = projections(brain.conn, mid)
    receipt = disclosing_receipt(brain, QUERY, mid)
    before = counts(brain.conn)
    result = give(brain, mid, receipt, "good")
    assert_noop_at(brain, mid, result, 2000, before)
    assert (result.share_old_milli, result.share_new_milli) == (2000, 2000)
    assert (result.agent_good, result.agent_bad) == (5, 0)
    assert "between half and double" in explain(result)
    assert projections(brain.conn, mid) == chain_before
    assert len(events_of(brain.conn, "cognitive_weight_unchanged", mid)) == 1
    # the kept evidence still counts
    assert principal_rewards(brain.conn, mid) == [1] * 5
    assert rule.replay(1000, [1] * 5) == 2571  # what MutMem's rule would have given


def test_two_agents_reach_the_ceiling_one_cannot(brain: Any, heron: tuple[str, str]) -> None:
    mid, _ = heron
    for _ in range(6):  # 1165 1413 1724 2000 2000 2000: one agent stops at double
        give_anew(brain, mid, QUERY, "good")
    assert weight(brain.conn, mid) == 2000
    second = enrol(brain, "second")
    ups = [give_anew(brain, mid, QUERY, "good", signer=second) for _ in range(3)]
    # the second agent's share goes 1000 -> 1165 -> 1413 -> 1724 and the weight by its ratio:
    # 2000 * 1.165 = 2330, 2330 * 1413 / 1165 = 2826, 2826 * 1724 / 1413 = 3448 -> clipped to 3000
    assert [(r.old_weight_milli, r.new_weight_milli) for r in ups] == [
        (2000, 2330),
        (2330, 2826),
        (2826, 3000),
    ]
    assert [(r.share_old_milli, r.share_new_milli) for r in ups] == [(1000, 1165), (1165, 1413), (1413, 1724)]
    assert all(r.terminal == "authorized_transition" and r.agent_id == "second" for r in ups)
    chain_before = projections(brain.conn, mid)
    receipt = disclosing_receipt(brain, QUERY, mid, signer=second)
    before = counts(brain.conn)
    result = give(brain, mid, receipt, "good", signer=second)
    assert_noop_at(brain, mid, result, 3000, before)
    assert projections(brain.conn, mid) == chain_before
    assert principal_rewards(brain.conn, mid) == [1] * 10
    assert weight(brain.conn, mid) == ledger_replay(brain.conn, mid).weight_milli == 3000
    assert verify_brain(brain.conn).ok


def test_signed_noop_at_one_agents_floor(brain: Any, heron: tuple[str, str]) -> None:
    mid, receipt = heron
    downs = [give(brain, mid, receipt, "bad").new_weight_milli]
    downs += [give_anew(brain, mid, QUERY, "bad").new_weight_milli for _ in range(3)]
    assert downs == [859, 708, 580, 500]  # 580 * e^(-0.2 tanh 4) = 477: the share stops at 500
    receipt = disclosing_receipt(brain, QUERY, mid)
    before = counts(brain.conn)
    result = give(brain, mid, receipt, "bad")
    assert_noop_at(brain, mid, result, 500, before)
    assert "between half and double" in explain(result)
    # the 4th bad still moved it (580 -> 500): the 5th is the first no-op
    assert len(events_of(brain.conn, "cognitive_weight_unchanged", mid)) == 1
    for _ in range(7):  # twelve bad reports in all, each about its own recall: never the floor
        assert give_anew(brain, mid, QUERY, "bad").new_weight_milli == 500
    assert principal_rewards(brain.conn, mid) == [-1] * 12
    assert rule.replay(1000, [-1] * 12) == 100  # what MutMem's rule would have given


def test_four_agents_reach_the_floor_three_cannot(brain: Any, heron: tuple[str, str]) -> None:
    mid, _ = heron
    three = [brain.agent, enrol(brain, "second"), enrol(brain, "third")]
    reached = []
    for signer in three:
        for _ in range(5):  # the fifth bad of each agent: its share is already at 500
            result = give_anew(brain, mid, QUERY, "bad", signer=signer)
        reached.append(result.new_weight_milli)
        assert (result.terminal, result.share_new_milli) == ("signed_noop", 500)
    # each agent halves the weight it found: 1000 -> 500 -> 250 -> 125, never the floor
    assert reached == [500, 250, 125]
    fourth = enrol(brain, "fourth")
    downs = [give_anew(brain, mid, QUERY, "bad", signer=fourth) for _ in range(2)]
    # 125 * 859 / 1000 = 107, then 107 * 708 / 859 = 88: clipped to the floor
    assert [(r.old_weight_milli, r.new_weight_milli) for r in downs] == [(125, 107), (107, 100)]
    assert weight(brain.conn, mid) == ledger_replay(brain.conn, mid).weight_milli == 100
    # at the floor recall withholds it from everyone
    for signer in (*three, fourth):
        withheld = ask(brain, QUERY, signer=signer).withheld
        assert [(w["memory_id"], w["reason"]) for w in withheld] == [(mid, "weight_at_floor")]
    assert verify_brain(brain.conn).ok


def test_kept_noop_evidence_keeps_counting(brain: Any, heron: tuple[str, str]) -> None:
    """At the agent's ceiling, goods are no-ops but retained: the agent's balance then takes as many
    bads to come back to zero, and only a negative balance brings the weight down."""
    mid, _ = heron
    for _ in range(8):
        give_anew(brain, mid, QUERY, "good")
    assert weight(brain.conn, mid) == 2000
    for n in range(1, 9):  # the agent's balance 7, 6, ... 0: still up (capped) or balanced: no-ops
        result = give_anew(brain, mid, QUERY, "bad")
        assert (result.terminal, result.agent_good - result.agent_bad) == ("signed_noop", 8 - n)
        assert weight(brain.conn, mid) == 2000
    down = give_anew(brain, mid, QUERY, "bad")  # balance -1: 2000 * e^(-0.2 tanh 1) = 1717
    assert (down.terminal, down.old_weight_milli, down.new_weight_milli) == (
        "authorized_transition",
        2000,
        1717,
    )
    assert "still" not in explain(down)
    assert weight(brain.conn, mid) == ledger_replay(brain.conn, mid).weight_milli == 1717


def test_one_agent_cannot_take_a_memory_below_half_the_weight_it_found(
    brain: Any, heron: tuple[str, str]
) -> None:
    """valence.py: one agent's evidence scales a weight by a factor between 0.5 and 2 and no more.
    The second agent finds the memory at 2000 (the first agent's doing); its goods take it to 3000
    (clipped: its share says 2000 * 2.0 = 4000), then its bads take its share to 0.5 and the weight
    to 3000 * 500 / 2000 = 750, below 1000, half of what it found."""
    mid, _ = heron
    for _ in range(4):
        give_anew(brain, mid, QUERY, "good")
    found = weight(brain.conn, mid)
    assert found == 2000
    second = enrol(brain, "second")
    for _ in range(4):
        give_anew(brain, mid, QUERY, "good", signer=second)
    assert weight(brain.conn, mid) == 3000
    for _ in range(16):  # its balance +4 .. -12: the share falls to 500 and stays
        last = give_anew(brain, mid, QUERY, "bad", signer=second)
    assert last.share_new_milli == 500
    now_at = weight(brain.conn, mid)
    assert now_at == ledger_replay(brain.conn, mid).weight_milli  # the writer does what the rule says
    assert now_at >= found // 2, f"one agent took the memory from {found} to {now_at}"


# --- one weight-bearing outcome per agent, recall and memory ------------------------------------------------
def test_twelve_bad_outcomes_about_one_recall_move_the_weight_once(
    brain: Any, heron: tuple[str, str]
) -> None:
    mid, receipt = heron
    results = [give(brain, mid, receipt, "bad") for _ in range(12)]
    first, again = results[0], results[1:]
    assert (first.terminal, first.old_weight_milli, first.new_weight_milli) == (
        "authorized_transition",
        1000,
        859,
    )
    assert first.weight_bearing
    for r in again:  # kept as evidence, signed, with no weight authority
        assert (r.terminal, r.old_weight_milli, r.new_weight_milli) == ("signed_noop", 859, 859)
        assert not r.weight_bearing and (r.projection_hash, r.transition_hash) == (None, None)
        assert (r.agent_good, r.agent_bad) == (0, 1)  # the agent's evidence is still the one bad
        assert "no weight authority" in explain(r)
    assert weight(brain.conn, mid) == 859
    assert len(projections(brain.conn, mid)) == len(reweight_nodes(brain.conn, mid)) == 1
    kept = rows(
        brain.conn,
        "SELECT receipt_id, terminal, reward_sign FROM outcomes WHERE memory_id = ? ORDER BY rowid",
        (mid,),
    )
    assert [(o["receipt_id"], o["terminal"], o["reward_sign"]) for o in kept] == [
        (receipt, "authorized_transition", -1)
    ] + [(receipt, "signed_noop", -1)] * 11
    unchanged = events_of(brain.conn, "cognitive_weight_unchanged", mid)
    assert [json.loads(e["signed_body"])["metadata"]["weight_bearing"] for e in unchanged] == [False] * 11
    assert {e["event_id"] for e in unchanged} == {r.event_id for r in again}
    # a recall of its own moves it again (the agent's balance -2)
    assert give_anew(brain, mid, QUERY, "bad").new_weight_milli == 708
    from aimos.verify.brain.parity import verify_everything

    report = verify_everything(brain.conn, brain.master.fingerprint)
    assert report["ok"] and report["parity"], report
    assert report["portable"]["verdict"] == "valid"


def test_a_good_after_two_bads_on_other_recalls_of_another_agent_counts_on_its_own(
    brain: Any, heron: tuple[str, str]
) -> None:
    """Each agent's share follows its own evidence: another agent's first good is a first good."""
    mid, _ = heron
    give_anew(brain, mid, QUERY, "bad")
    give_anew(brain, mid, QUERY, "bad")
    assert weight(brain.conn, mid) == 708
    second = enrol(brain, "second")
    up = give_anew(brain, mid, QUERY, "good", signer=second)
    # the second agent's share 1000 -> 1165 (tanh 1, not tanh -1): 708 * 1.165 = 825
    assert (up.old_weight_milli, up.new_weight_milli, up.agent_good, up.agent_bad) == (708, 825, 1, 0)
    assert weight(brain.conn, mid) == ledger_replay(brain.conn, mid).weight_milli == 825


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
    later = disclosing_receipt(brain, QUERY, mid)  # each outcome about its own recall
    assert give(brain, mid, receipt, "good", t=t).new_weight_milli == 1165
    second = give(brain, mid, later, "good", t=t - 1)
    assert (second.terminal, second.new_weight_milli) == ("authorized_transition", 1413)
    assert weight(brain.conn, mid) == rule.replay(1000, [1, 1]) == 1413


# --- a warm process keeps the memory's ledger (learning.outcomes.ledger_of) ---------------------------
def test_the_kept_ledger_is_the_replayed_one_and_a_change_elsewhere_drops_it(
    brain: Any, heron: tuple[str, str]
) -> None:
    """Many outcomes on one memory from two agents, repeats among them: after each, the ledger the
    connection keeps equals a replay of the rows; a write by another connection, or an outcome row
    that is not the kept one's newest (a rollback), is never answered from the kept one."""
    from aimos.learning import outcomes

    mid, first = heron
    other = enrol(brain, "reader")
    receipts = {brain.agent.agent_id: first, "reader": disclosing_receipt(brain, QUERY, mid, signer=other)}
    for n in range(12):
        signer = brain.agent if n % 3 else other
        if n % 4 == 0:  # a fresh recall to report on; otherwise a repeat about the last one
            receipts[signer.agent_id] = disclosing_receipt(brain, QUERY, mid, signer=signer)
        give(brain, mid, receipts[signer.agent_id], "good" if n % 5 else "bad", signer=signer)
        kept = outcomes._LEDGERS[brain.conn][mid][1]
        replayed = outcomes.principal_outcomes(brain.conn, mid)
        fresh = rule.WeightLedger(1000)
        for o in replayed:
            fresh.step(o["agent_id"], o["receipt_id"], int(o["reward_sign"]), o["valence_rule"])
        assert kept == fresh and kept.weight_milli == weight(brain.conn, mid)
    # an outcome rolled back after its step was kept: the next step replays the rows
    with pytest.raises(RuntimeError), write_transaction(brain.conn, brain.housekeeper):
        outcomes.record_outcome_in_transaction(
            brain.conn, brain.housekeeper, outcome_request(brain, mid, first, "bad"), now()
        )
        raise RuntimeError("rolled back")
    assert outcomes.ledger_of(brain.conn, mid) == fresh
    # a wrong ledger kept under the right mark is answered from (so the cache is what the checks
    # above tested) until another connection writes
    outcomes._keep_ledger(brain.conn, mid, rule.WeightLedger(5))
    assert outcomes.ledger_of(brain.conn, mid) == rule.WeightLedger(5)
    import apsw

    probe = apsw.Connection(str(brain.home / "brain.sqlite3"))
    try:
        version = probe.execute("PRAGMA user_version").fetchall()[0][0]
        probe.execute(f"PRAGMA user_version = {cell_int(version)}")  # the same value: a commit all the same
    finally:
        probe.close()
    assert outcomes.ledger_of(brain.conn, mid) == fresh  # replayed, not the kept one
