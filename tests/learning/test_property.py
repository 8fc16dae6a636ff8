"""Properties: any sequence of signed outcomes keeps the brain verifiable and the live weights equal to
the weight rule replayed over the retained principal-state outcomes (SPEC sections 6 and 9); and the
rule itself (valence rule 2, aimos/verify/kit/valence.py) keeps one agent's part of a weight bounded.

The brain property: each example installs its own brain (a function-scoped fixture would be shared
between hypothesis examples), saves 1-3 memories, then applies a random sequence of good/bad
outcomes, some of them occurrence-scoped, each about a new recall or about one made before (so some
are further outcomes about a recall that already moved the weight). After every outcome:
`verify_brain` passes; every live weight equals `WeightLedger` (rule 2) replayed over the principal
outcomes in order, and the writer's terminal and weight authority are the ledger's; the corpus proof
root is unchanged when no record changed (a signed no-op or an occurrence observation) and moves when
a transition was appended.

The rule properties (pure, no brain): one agent's outcomes move a weight within half and double the
weight it found (exactly from the default 1000, up to each step's rounding from elsewhere); a further
outcome about the same recall never moves it; and from 1000, until the share reaches its bounds, rule
2 gives exactly MutMem's replay.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.learning import (
    disclosing_receipt,
    fresh_brain,
    give,
    principal_rewards,
    projections,
    put,
    weight,
)

from aimos.verify.brain.verifier import verify_brain
from aimos.verify.kit import valence as rule
from aimos.vocabulary import VALENCE_RULE_V2

pytestmark = pytest.mark.timeout(120)

TEXTS = (
    "the heron colony nests by the east lake",
    "a heron eats fish and frogs at dawn",
    "herons fly south when the heron lake freezes",
)

step = st.tuples(
    st.integers(min_value=0, max_value=2),  # which memory (modulo how many there are)
    st.sampled_from(["good", "bad"]),
    st.integers(min_value=0, max_value=5),  # 0: occurrence-scoped (about 1 in 6)
    st.integers(min_value=0, max_value=3),  # 0: a new recall; else an earlier one (modulo how many)
)


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(n_memories=st.integers(min_value=1, max_value=3), steps=st.lists(step, min_size=1, max_size=14))
def test_random_outcomes_keep_the_brain_verifiable(
    n_memories: int, steps: list[tuple[int, str, int, int]]
) -> None:
    with fresh_brain() as brain:
        conn = brain.conn
        ids = [put(brain, TEXTS[i]) for i in range(n_memories)]
        receipts = [disclosing_receipt(brain, "heron", *ids)]
        rewards: dict[str, list[int]] = {m: [] for m in ids}
        ledgers = {m: rule.WeightLedger(1000) for m in ids}
        report = verify_brain(conn)
        assert report.ok
        root = report.corpus_proof_root
        for which, outcome, kind, recall in steps:
            mid = ids[which % n_memories]
            scope = "occurrence_observation" if kind == 0 else "principal_state"
            if recall == 0:
                receipts.append(disclosing_receipt(brain, "heron", *ids))
                receipt = receipts[-1]
            else:
                receipt = receipts[recall % len(receipts)]
            result = give(brain, mid, receipt, outcome, scope=scope)
            if scope == "principal_state":
                rewards[mid].append(1 if outcome == "good" else -1)
                expected = ledgers[mid].step(brain.agent.agent_id, receipt, rewards[mid][-1], VALENCE_RULE_V2)
                assert result.terminal == expected.terminal
                assert result.weight_bearing == expected.weight_bearing
                assert (result.old_weight_milli, result.new_weight_milli) == (
                    expected.old_milli,
                    expected.new_milli,
                )
            for m in ids:
                assert weight(conn, m) == ledgers[m].weight_milli, (m, rewards[m])
                assert principal_rewards(conn, m) == rewards[m]
            report = verify_brain(conn)
            assert report.ok, [r for r in report.records if not r.ok]
            again = verify_brain(conn)
            assert again.corpus_proof_root == report.corpus_proof_root
            if result.terminal == "authorized_transition":
                assert report.corpus_proof_root != root
            else:
                assert result.terminal == ("occurrence_observation" if kind == 0 else "signed_noop")
                assert report.corpus_proof_root == root, "nothing changed, yet the corpus root moved"
            root = report.corpus_proof_root
        for m in ids:
            chain = projections(conn, m)
            record = next(r for r in verify_brain(conn).records if r.memory_id == m)
            assert record.chain_length == record.sigs_verified == len(chain)
            assert record.certification_status == ("certified_chain" if chain else "default_empty_chain")


# --- the rule (pure) --------------------------------------------------------------------------------------
# one agent's outcomes: (reward, which recall: 0 a new one, else an earlier one modulo how many)
outcomes = st.lists(
    st.tuples(st.sampled_from([1, -1]), st.integers(min_value=0, max_value=4)), min_size=1, max_size=60
)
PURE = settings(max_examples=400, deadline=None, derandomize=True, database=None)


def recalls(sequence: list[tuple[int, int]]) -> list[tuple[int, str, bool]]:
    """(reward, recall receipt, whether an earlier outcome was about that recall) for each outcome:
    0 makes a new recall, any other number picks an earlier one (modulo how many there are)."""
    made: list[str] = []
    seen: set[str] = set()
    out = []
    for reward, recall in sequence:
        if recall == 0 or not made:
            made.append(f"receipt-{len(made)}")
            receipt = made[-1]
        else:
            receipt = made[recall % len(made)]
        out.append((reward, receipt, receipt in seen))
        seen.add(receipt)
    return out


def one_agent(start: int, sequence: list[tuple[int, int]]) -> list[tuple[rule.Step, bool]]:
    """Replay one agent's outcomes through rule 2 from ``start``: each step, and whether its recall
    was already reported on."""
    ledger = rule.WeightLedger(start)
    steps = []
    for reward, receipt, repeat in recalls(sequence):
        steps.append((ledger.step("agent", receipt, reward, VALENCE_RULE_V2), repeat))
        assert ledger.weight_milli == steps[-1][0].new_milli
    return steps


@PURE
@given(sequence=outcomes)
def test_one_agent_from_the_default_moves_a_weight_within_half_and_double(
    sequence: list[tuple[int, int]],
) -> None:
    for s, repeat in one_agent(1000, sequence):
        assert 500 <= s.new_milli <= 2000
        assert s.new_milli == s.share_new_milli  # from the default, the weight is the agent's share
        if repeat:  # a further outcome about the same recall never moves the weight
            assert (s.terminal, s.weight_bearing, s.new_milli) == ("signed_noop", False, s.old_milli)
            assert s.share_new_milli == s.share_old_milli
        else:
            assert s.weight_bearing


@PURE
@given(start=st.integers(min_value=200, max_value=1500), sequence=outcomes)
def test_one_agent_moves_a_weight_within_half_and_double_up_to_rounding(
    start: int, sequence: list[tuple[int, int]]
) -> None:
    """Where neither the floor nor the ceiling clips it, the weight tracks start * share / 1000; each
    transition rounds to a milli, and later ratios carry that rounding along (a bound the test
    computes as it goes)."""
    slack = 0.0  # how far the weight may be from start * share / 1000
    for s, repeat in one_agent(start, sequence):
        if repeat:
            assert (s.terminal, s.weight_bearing, s.new_milli) == ("signed_noop", False, s.old_milli)
            continue
        if s.share_new_milli != s.share_old_milli:  # w' = round(w s' / s): one more rounding
            slack = slack * s.share_new_milli / s.share_old_milli + 0.5
        exact = start * s.share_new_milli / 1000
        assert abs(s.new_milli - exact) <= slack + 1e-9, (start, s)
        assert start / 2 - slack <= s.new_milli <= 2 * start + slack


@PURE
@given(rewards=st.lists(st.sampled_from([1, -1]), min_size=1, max_size=40))
def test_one_agent_from_the_default_is_mutmems_rule_until_the_share_bounds(rewards: list[int]) -> None:
    """Each outcome about a recall of its own: rule 2 gives MutMem's replay at every step until
    MutMem's weight leaves [500, 2000]; there rule 2 stops at the bound."""
    ledger = rule.WeightLedger(1000)
    for n, reward in enumerate(rewards, start=1):
        previous = ledger.weight_milli
        got = ledger.step("agent", f"receipt-{n}", reward, VALENCE_RULE_V2)
        mutmem = rule.replay(1000, rewards[:n])
        if not 500 <= mutmem <= 2000:
            # the first step beyond the share's bounds: MutMem's step from the same weight, clipped
            step_alone, _ = rule.next_weight_milli(previous, rewards[:n])
            assert got.new_milli == max(500, min(2000, step_alone)) in (500, 2000)
            break
        assert got.new_milli == mutmem, (rewards[:n], got)
        assert got.terminal == ("signed_noop" if mutmem == previous else "authorized_transition")
