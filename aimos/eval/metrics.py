"""Retrieval metrics over ranked lists of ids (pure)."""

from __future__ import annotations

import math
from collections.abc import Sequence, Set


def first_hit_rank(ranked: Sequence[str], relevant: Set[str], k: int) -> int | None:
    for i, x in enumerate(ranked[:k]):
        if x in relevant:
            return i + 1
    return None


def any_hit(ranked: Sequence[str], relevant: Set[str], k: int) -> float:
    return 1.0 if first_hit_rank(ranked, relevant, k) is not None else 0.0


def reciprocal_rank(ranked: Sequence[str], relevant: Set[str], k: int) -> float:
    rank = first_hit_rank(ranked, relevant, k)
    return 0.0 if rank is None else 1.0 / rank


def evidence_recall(ranked: Sequence[str], relevant: Set[str], k: int) -> float:
    return len(set(ranked[:k]) & relevant) / len(relevant) if relevant else 0.0


def ndcg(ranked: Sequence[str], relevant: Set[str], k: int) -> float:
    """Binary-relevance nDCG@k; each relevant id counts once."""
    seen: set[str] = set()
    dcg = 0.0
    for i, x in enumerate(ranked[:k]):
        if x in relevant and x not in seen:
            seen.add(x)
            dcg += 1.0 / math.log2(i + 2)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(relevant), k)))
    return dcg / ideal if ideal else 0.0


def scores_for(ranked: Sequence[str], relevant: Set[str], ks: Sequence[int]) -> dict[str, float]:
    out = {"hit@1": any_hit(ranked, relevant, 1), "mrr": reciprocal_rank(ranked, relevant, max(ks))}
    for k in ks:
        out[f"any_hit@{k}"] = any_hit(ranked, relevant, k)
        out[f"evidence_recall@{k}"] = evidence_recall(ranked, relevant, k)
        out[f"ndcg@{k}"] = ndcg(ranked, relevant, k)
    return out


def mean_scores(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    if not rows:
        return {}
    return {key: round(sum(r[key] for r in rows) / len(rows), 4) for key in rows[0]}
