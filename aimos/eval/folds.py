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


# The fusion of the lexical channel with the meaning channel (recall.candidates.Fusion): a small grid
# of its weight, floor and margin (its abstention thresholds, ALONE and LIFT, act only when no memory
# shares a word with the question, which LoCoMo's questions rarely are: they come from the meaning
# probe and stay at recall's values). WORDS gives meaning no weight (the lexical channel's ranking);
# FIRST_GUESS is the fusion as it was first written.
FUSION_NAMES = ("weight", "floor", "full", "margin", "alone", "lift")


def _fusions() -> list[Setting]:
    from aimos.recall.candidates import MEANING_ALONE, MEANING_FULL, MEANING_LIFT

    return [
        tuple(zip(FUSION_NAMES, (w, floor, MEANING_FULL, margin, MEANING_ALONE, MEANING_LIFT), strict=True))
        for w, floor, margin in itertools.product((0.05, 0.1, 0.2, 0.5, 1.0), (0.77, 0.80), (0.04, 0.08))
    ]


FUSION_GRID: list[Setting] = _fusions()
WORDS: Setting = tuple(zip(FUSION_NAMES, (0.0, 0.77, 0.90, 0.04, 1.0, 1.0), strict=True))
FIRST_GUESS: Setting = tuple(zip(FUSION_NAMES, (1.0, 0.77, 0.90, 0.04, 0.80, 0.06), strict=True))


def default_fusion() -> Setting:
    from aimos.recall import candidates as c

    values = (
        c.MEANING_WEIGHT,
        c.MEANING_FLOOR,
        c.MEANING_FULL,
        c.MEANING_MARGIN,
        c.MEANING_ALONE,
        c.MEANING_LIFT,
    )
    return tuple(zip(FUSION_NAMES, values, strict=True))


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


def cross_validate(
    scores: Sequence[Mapping[Setting, list[dict[str, float]]]],
    k: int,
    grid: Sequence[Setting] = GRID,
    default: Setting | None = None,
    others: Mapping[str, Setting] | None = None,
) -> dict[str, Any]:
    """``scores[c][setting]``: the per-question scores of conversation c under a setting (every
    setting of ``grid``, the ``default`` and the ``others`` it is compared with; by default the
    lexical channel's GRID, its default_setting() and BEFORE). The folds' choices and held-out
    figures. Pure."""
    default = default_setting() if default is None else default
    others = {"before": BEFORE} if others is None else others

    def mean(setting: Setting, convs: Sequence[int]) -> dict[str, float]:
        return mean_scores([row for c in convs for row in scores[c][setting]])

    def brief(m: Mapping[str, float]) -> dict[str, float]:
        return {key: m[key] for key in ("hit@1", "mrr", f"any_hit@{k}", f"evidence_recall@{k}")}

    folds = []
    for train, test in splits(len(scores)):
        if not any(scores[c][default] for c in train) or not any(scores[c][default] for c in test):
            continue  # a side with no question scored: nothing to choose on, or to measure
        chosen = max(grid, key=lambda s: (objective(mean(s, train), k), s == default))
        fold: dict[str, Any] = {
            "train": train,
            "test": test,
            "chosen": dict(chosen),
            "train_chosen": brief(mean(chosen, train)),
            "test_chosen": brief(mean(chosen, test)),
            "test_default": brief(mean(default, test)),
        }
        fold.update({f"test_{name}": brief(mean(s, test)) for name, s in others.items()})
        folds.append(fold)
    everything = range(len(scores))
    report: dict[str, Any] = {"default": dict(default), "all_default": brief(mean(default, everything))}
    for name, s in others.items():
        report[name] = dict(s)
        report[f"all_{name}"] = brief(mean(s, everything))
    report["others"] = list(others)
    report["folds"] = folds
    if folds:
        report["held_out"] = {
            arm: mean_of([f[f"test_{arm}"] for f in folds]) for arm in ("chosen", "default", *others)
        }
    return report


def mean_of(rows: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """The mean of each figure over the folds' held-out measures. Pure."""
    return {key: round(sum(r[key] for r in rows) / len(rows), 4) for key in rows[0]}
