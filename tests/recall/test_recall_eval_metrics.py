"""aimos.eval.metrics against hand-computed values on small ranked lists (SPEC section 14)."""

from __future__ import annotations

import math

import pytest

from aimos.eval.metrics import (
    any_hit,
    evidence_recall,
    first_hit_rank,
    mean_scores,
    ndcg,
    reciprocal_rank,
    scores_for,
)

RANKED = ["a", "b", "c", "d", "e"]


def test_any_hit_at_k() -> None:
    assert any_hit(RANKED, {"c"}, 2) == 0.0
    assert any_hit(RANKED, {"c"}, 3) == 1.0
    assert any_hit(RANKED, {"z"}, 5) == 0.0
    assert any_hit([], {"a"}, 5) == 0.0
    assert first_hit_rank(RANKED, {"d", "b"}, 5) == 2


def test_reciprocal_rank() -> None:
    assert reciprocal_rank(RANKED, {"a"}, 5) == 1.0
    assert reciprocal_rank(RANKED, {"c", "e"}, 5) == pytest.approx(1 / 3)
    assert reciprocal_rank(RANKED, {"e"}, 4) == 0.0  # beyond k


def test_evidence_recall() -> None:
    assert evidence_recall(RANKED, {"b", "x"}, 5) == 0.5
    assert evidence_recall(RANKED, {"b", "d", "x", "y"}, 3) == 0.25
    assert evidence_recall(RANKED, {"a", "e"}, 5) == 1.0
    assert evidence_recall(RANKED, set(), 5) == 0.0


def test_ndcg_by_hand() -> None:
    # one relevant at rank 3 of two relevant: DCG = 1/log2(4) = 0.5; IDCG = 1 + 1/log2(3)
    assert ndcg(RANKED, {"c", "x"}, 5) == pytest.approx(0.5 / (1 + 1 / math.log2(3)))
    assert ndcg(RANKED, {"c", "x"}, 5) == pytest.approx(0.306574, abs=1e-6)
    # relevant at ranks 1 and 2: perfect
    assert ndcg(RANKED, {"a", "b"}, 5) == pytest.approx(1.0)
    # relevant at ranks 2 and 4: (1/log2 3 + 1/log2 5) / (1 + 1/log2 3)
    assert ndcg(RANKED, {"b", "d"}, 5) == pytest.approx(
        (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    )
    # the ideal is cut at k: three relevant, k = 1, hit at rank 1 -> 1.0
    assert ndcg(RANKED, {"a", "b", "c"}, 1) == pytest.approx(1.0)
    assert ndcg(RANKED, {"z"}, 5) == 0.0
    assert ndcg(RANKED, set(), 5) == 0.0


def test_ndcg_counts_a_repeated_id_once() -> None:
    assert ndcg(["a", "a", "b"], {"a"}, 3) == pytest.approx(1.0)
    assert ndcg(["x", "a", "a"], {"a"}, 3) == pytest.approx(1 / math.log2(3))


def test_scores_for_and_the_mean() -> None:
    row = scores_for(RANKED, {"c"}, [1, 5])
    assert row == {
        "hit@1": 0.0,
        "mrr": pytest.approx(1 / 3),
        "any_hit@1": 0.0,
        "evidence_recall@1": 0.0,
        "ndcg@1": 0.0,
        "any_hit@5": 1.0,
        "evidence_recall@5": 1.0,
        "ndcg@5": pytest.approx(0.5),
    }
    other = scores_for(RANKED, {"a"}, [1, 5])
    mean = mean_scores([row, other])
    assert mean["hit@1"] == 0.5
    assert mean["mrr"] == round((1 / 3 + 1) / 2, 4) == 0.6667
    assert mean["ndcg@5"] == 0.75
    assert mean_scores([]) == {}
