"""Cross-conversation validation of the lexical channel's settings (`aimos eval locomo --folds`).

A setting chosen on the conversations it is measured on can fit them. Here each fold chooses,
among GRID, the setting with the best sum of any-hit, evidence recall, hit@1 and MRR at the
largest cut-off on its training conversations, and reports that choice measured on the others,
beside the default setting (recall.candidates' constants) and the one before them (BEFORE) on the
same held-out conversations. The rankings are the channel's own (no recall policy: every memory of
these brains is unjudged with the same weight, so the policy reorders only near-copies). Pure: the
caller collects the per-question scores.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from aimos.eval.metrics import mean_scores

Setting = tuple[tuple[str, float], ...]

NAMES = ("context_depth", "lead_boost", "when_boost", "answer_lift", "question_damping")
GRID: list[Setting] = [
    tuple(zip(NAMES, values, strict=True))
    for values in itertools.product((20, 100), (0.0, 1.5), (0.0, 1.0), (0.0, 0.5), (0.0, 0.2))
]
BEFORE: Setting = tuple(zip(NAMES, (100, 0.0, 0.0, 0.0, 0.0), strict=True))  # the channel before these


def default_setting() -> Setting:
    from aimos.recall import candidates as c

    values = (c.CONTEXT_DEPTH, c.LEAD_BOOST, c.WHEN_BOOST, c.ANSWER_LIFT, c.QUESTION_DAMPING)
    return tuple(zip(NAMES, values, strict=True))


def splits(n: int) -> list[tuple[list[int], list[int]]]:
    """Four train/test splits of n conversations: first half / second half, even / odd, and each
    the other way round. Pure."""
    half = list(range(n // 2))
    rest = list(range(n // 2, n))
    even = list(range(0, n, 2))
    odd = list(range(1, n, 2))
    return [(half, rest), (rest, half), (even, odd), (odd, even)]


def objective(m: Mapping[str, float], k: int) -> float:
    return m[f"any_hit@{k}"] + m[f"evidence_recall@{k}"] + m["hit@1"] + m["mrr"]


def cross_validate(scores: Sequence[Mapping[Setting, list[dict[str, float]]]], k: int) -> dict[str, Any]:
    """``scores[c][setting]``: the per-question scores of conversation c under a setting (every
    setting of GRID, the default and BEFORE). The folds' choices and held-out figures. Pure."""

    def mean(setting: Setting, convs: Sequence[int]) -> dict[str, float]:
        return mean_scores([row for c in convs for row in scores[c][setting]])

    def brief(m: Mapping[str, float]) -> dict[str, float]:
        return {key: m[key] for key in ("hit@1", "mrr", f"any_hit@{k}", f"evidence_recall@{k}")}

    folds = []
    default = default_setting()
    for train, test in splits(len(scores)):
        if not any(scores[c][default] for c in train) or not any(scores[c][default] for c in test):
            continue  # a side with no question scored: nothing to choose on, or to measure
        chosen = max(GRID, key=lambda s: (objective(mean(s, train), k), s == default))
        folds.append(
            {
                "train": train,
                "test": test,
                "chosen": dict(chosen),
                "train_chosen": brief(mean(chosen, train)),
                "test_chosen": brief(mean(chosen, test)),
                "test_default": brief(mean(default, test)),
                "test_before": brief(mean(BEFORE, test)),
            }
        )
    everything = range(len(scores))
    return {
        "default": dict(default),
        "before": dict(BEFORE),
        "all_default": brief(mean(default, everything)),
        "all_before": brief(mean(BEFORE, everything)),
        "folds": folds,
    }
