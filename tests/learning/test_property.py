"""Property: any sequence of signed outcomes keeps the brain verifiable and the live weights equal to
the rule replayed over the retained principal-state rewards (SPEC sections 6 and 9).

Each example installs its own brain (a function-scoped fixture would be shared between hypothesis
examples), saves 1-3 memories, recalls them once, then applies a random sequence of good/bad outcomes,
some of them occurrence-scoped. After every outcome: `verify_brain` passes; every live weight equals
`rule.replay(1000, principal rewards in order)`; the corpus proof root is unchanged when no record
changed (a signed no-op or an occurrence observation) and moves when a transition was appended.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from learning_support import (
    disclosing_receipt,
    fresh_brain,
    give,
    principal_rewards,
    projections,
    put,
    weight,
)

from aimos.verify.kit import valence as rule
from aimos.learning.verifier import verify_brain

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
    n_memories: int, steps: list[tuple[int, str, int]]
) -> None:
    with fresh_brain() as brain:
        conn = brain.conn
        ids = [put(brain, TEXTS[i]) for i in range(n_memories)]
        receipt = disclosing_receipt(brain, "heron", *ids)
        rewards: dict[str, list[int]] = {m: [] for m in ids}
        report = verify_brain(conn)
        assert report.ok
        root = report.corpus_proof_root
        for which, outcome, kind in steps:
            mid = ids[which % n_memories]
            scope = "occurrence_observation" if kind == 0 else "principal_state"
            result = give(brain, mid, receipt, outcome, scope=scope)
            if scope == "principal_state":
                rewards[mid].append(1 if outcome == "good" else -1)
            for m in ids:
                assert weight(conn, m) == rule.replay(1000, rewards[m]), (m, rewards[m])
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
