"""The pure recall policy (aimos.recall.policy.decide): trust multipliers, effective score, MMR
diversity (lambda 0.72, ties to the lower index), withholding budget and abstention.
SPEC section 8; PROTOCOL-NOTES section 10 (epistemic selection).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from aimos.crypto.canonical import canonical_sha256_hex
from aimos.recall.policy import MMR_LAMBDA, NOT_RELEVANT, RELEVANCE_FLOOR, Candidate, Scored, decide

QUERY_SHA = "0" * 64


def cand(
    memory_id: str,
    relevance: float,
    *,
    value: str | None = None,
    label: str = "supported",
    weight_milli: int = 1000,
    quarantine: bool = False,
    scope: str = "personal",
    memory_type: str = "note",
) -> Candidate:
    return Candidate(
        memory_id=memory_id,
        value=value if value is not None else memory_id,  # one token of its own: no overlap
        key=None,
        weight_milli=weight_milli,
        label=label,
        quarantine=quarantine,
        relevance=relevance,
        scope=scope,
        memory_type=memory_type,
    )


def ids(scored: Sequence[Scored]) -> list[str]:
    return [s.memory_id for s in scored]


# --- trust multipliers ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("label", "multiplier", "untrusted"),
    [
        ("poison_confirmed", 0.1, True),
        ("poison_likely", 0.1, True),
        ("poison_suspect", 0.25, True),
        ("disputed", 0.4, False),
        ("supported", 1.0, False),
        ("poison_refuted", 1.0, False),
        ("unverified", 0.72, False),
    ],
)
def test_trust_multiplier_of_each_label(label: str, multiplier: float, untrusted: bool) -> None:
    c = cand("m1", 0.5, label=label, weight_milli=2000)
    d = decide([c], limit=10, query_sha256=QUERY_SHA)
    (s,) = d.considered
    assert s.trust.multiplier == pytest.approx(multiplier)
    assert s.trust.untrusted is untrusted
    # effective score = relevance x trust x live weight
    assert s.effective == pytest.approx(0.5 * multiplier * 2.0)
    if untrusted:
        assert ids(d.withheld) == ["m1"] and d.selected == [] and d.abstained
    else:
        assert ids(d.selected) == ["m1"] and d.withheld == [] and not d.abstained


@pytest.mark.parametrize(
    "kwargs",
    [
        {"quarantine": True},
        {"scope": "quarantine"},
        {"memory_type": "quarantine"},
    ],
    ids=["quarantine-flag", "quarantine-scope", "quarantine-type"],
)
def test_retained_quarantine_is_untrusted_at_0_1_whatever_the_label(kwargs: dict[str, Any]) -> None:
    c = cand("q", 1.0, label="supported", **kwargs)
    (s,) = decide([c], limit=10, query_sha256=QUERY_SHA).considered
    assert (s.trust.multiplier, s.trust.untrusted, s.trust.reason) == (0.1, True, "retained_quarantine")


def test_weight_at_the_floor_is_untrusted_at_0_1() -> None:
    at_floor = cand("floor", 1.0, label="supported", weight_milli=100)
    above = cand("above", 1.0, label="supported", weight_milli=101)
    d = decide([at_floor, above], limit=10, query_sha256=QUERY_SHA)
    by_id = {s.memory_id: s for s in d.considered}
    assert (by_id["floor"].trust.multiplier, by_id["floor"].trust.untrusted) == (0.1, True)
    assert by_id["floor"].trust.reason == "weight_at_floor"
    assert by_id["floor"].effective == pytest.approx(1.0 * 0.1 * 0.1)
    assert (by_id["above"].trust.multiplier, by_id["above"].trust.untrusted) == (1.0, False)
    assert by_id["above"].effective == pytest.approx(0.101)
    assert ids(d.selected) == ["above"] and ids(d.withheld) == ["floor"]


def test_live_weight_scales_the_effective_score() -> None:
    low = cand("low", 1.0, label="supported", weight_milli=500)
    high = cand("high", 0.6, label="supported", weight_milli=3000)
    d = decide([low, high], limit=10, query_sha256=QUERY_SHA)
    assert [round(s.effective, 6) for s in d.considered] == [0.5, 1.8]
    assert ids(d.selected) == ["high", "low"]


def test_bypassed_trust_treats_every_candidate_as_trusted() -> None:
    poison = cand("p", 1.0, label="poison_confirmed")
    quarantined = cand("q", 0.9, quarantine=True, weight_milli=100)
    d = decide([poison, quarantined], limit=10, query_sha256=QUERY_SHA, bypass_trust=True)
    assert all(s.trust.multiplier == 1.0 and not s.trust.untrusted for s in d.considered)
    assert ids(d.selected) == ["p", "q"] and d.withheld == []
    assert d.body["trust_bypassed"] is True


# --- MMR diversity ------------------------------------------------------------------------------
def test_mmr_prefers_a_diverse_candidate_over_a_near_duplicate() -> None:
    # a: eff 1.0; b: eff 0.95 but the same tokens as a (Jaccard 1); c: eff 0.8, disjoint tokens.
    # After a: b scores 0.72*0.95 - 0.28*1 = 0.404 and c scores 0.72*0.8 = 0.576, so c comes second.
    a = cand("a", 1.0, value="apple banana cherry")
    b = cand("b", 0.95, value="cherry banana apple")
    c = cand("c", 0.8, value="dog elephant")
    d = decide([a, b, c], limit=10, query_sha256=QUERY_SHA)
    assert ids(d.selected) == ["a", "c", "b"]
    assert MMR_LAMBDA == 0.72


def test_mmr_keeps_relevance_order_when_the_overlap_is_small() -> None:
    # b overlaps a by Jaccard 1/5 = 0.2: 0.72*0.95 - 0.28*0.2 = 0.628 > c's 0.72*0.8 = 0.576.
    a = cand("a", 1.0, value="apple banana cherry")
    b = cand("b", 0.95, value="apple grape kiwi")
    c = cand("c", 0.8, value="dog elephant")
    assert ids(decide([a, b, c], limit=10, query_sha256=QUERY_SHA).selected) == ["a", "b", "c"]


def test_mmr_penalty_is_the_maximum_overlap_with_anything_picked() -> None:
    # After a and c are picked, d overlaps c completely (penalty 1) and e overlaps nothing.
    a = cand("a", 1.0, value="apple banana")
    c = cand("c", 0.9, value="dog elephant")
    d_ = cand("d", 0.85, value="elephant dog")
    e = cand("e", 0.5, value="fig grape")
    # picks: a (0.72), then c (0.648) over d (0.612), then e (0.36) over d (0.612 - 0.28 = 0.332)
    assert ids(decide([a, c, d_, e], limit=10, query_sha256=QUERY_SHA).selected) == ["a", "c", "e", "d"]


def test_equal_scores_go_to_the_lower_index() -> None:
    first = cand("zzz", 0.7, value="alpha")
    second = cand("aaa", 0.7, value="beta")
    assert ids(decide([first, second], limit=10, query_sha256=QUERY_SHA).selected) == ["zzz", "aaa"]
    assert ids(decide([second, first], limit=10, query_sha256=QUERY_SHA).selected) == ["aaa", "zzz"]
    assert ids(decide([second, first], limit=1, query_sha256=QUERY_SHA).selected) == ["aaa"]


# --- withholding and the budget ---------------------------------------------------------------
def test_untrusted_candidates_do_not_use_up_result_slots() -> None:
    # budget = min(n, limit + #untrusted) = min(3, 1 + 1) = 2: the untrusted top candidate and
    # the best trusted one are picked; the trusted one is the single result.
    poison = cand("u", 1.0, label="poison_suspect", weight_milli=3000)  # 0.25 * 3 = 0.75
    t1 = cand("t1", 0.5)
    t2 = cand("t2", 0.4)
    d = decide([poison, t1, t2], limit=1, query_sha256=QUERY_SHA)
    assert ids(d.selected) == ["t1"]
    assert ids(d.withheld) == ["u"]
    assert not d.abstained
    decisions = {c["memory_id"]: c["decision"] for c in d.body["candidates"]}
    assert decisions == {"u": "withheld", "t1": "selected", "t2": "not_selected"}
    assert d.body["withheld"] == [{"memory_id": "u", "reason": "label:poison_suspect"}]


def test_budget_is_limit_plus_the_number_of_untrusted() -> None:
    # 3 trusted + 2 untrusted, limit 2 -> budget 4: t1, t2, t3 and the better untrusted are
    # picked (MMR order), the results are cut to 2, and only the picked untrusted is withheld.
    t1, t2, t3 = cand("t1", 0.9), cand("t2", 0.8), cand("t3", 0.7)
    u1 = cand("u1", 1.0, label="poison_confirmed")  # 0.1
    u2 = cand("u2", 1.0, quarantine=True, weight_milli=100)  # 0.1 * 0.1 = 0.01
    d = decide([t1, t2, t3, u1, u2], limit=2, query_sha256=QUERY_SHA)
    assert ids(d.selected) == ["t1", "t2"]
    assert ids(d.withheld) == ["u1"]
    decisions = {c["memory_id"]: c["decision"] for c in d.body["candidates"]}
    assert decisions == {
        "t1": "selected",
        "t2": "selected",
        "t3": "not_selected",
        "u1": "withheld",
        "u2": "not_selected",
    }


def test_budget_never_exceeds_the_candidates() -> None:
    d = decide([cand("a", 0.9), cand("u", 0.8, label="poison_likely")], limit=200, query_sha256=QUERY_SHA)
    assert ids(d.selected) == ["a"] and ids(d.withheld) == ["u"]


def test_results_are_cut_to_the_limit() -> None:
    many = [cand(f"m{i:02d}", 1.0 - i / 100) for i in range(30)]
    d = decide(many, limit=5, query_sha256=QUERY_SHA)
    assert ids(d.selected) == ["m00", "m01", "m02", "m03", "m04"]


# --- abstention -------------------------------------------------------------------------------
def test_abstains_when_only_untrusted_candidates_remain() -> None:
    d = decide(
        [cand("q", 1.0, quarantine=True, weight_milli=100), cand("p", 0.9, label="poison_confirmed")],
        limit=10,
        query_sha256=QUERY_SHA,
    )
    assert d.abstained and d.selected == []
    assert ids(d.withheld) == ["p", "q"]  # 0.09 before 0.01
    assert d.body["abstained"] is True and d.body["selected_memory_ids"] == []


def test_abstains_without_candidates() -> None:
    d = decide([], limit=10, query_sha256=QUERY_SHA)
    assert d.abstained and d.selected == [] and d.withheld == []


def test_a_candidate_below_the_relevance_floor_is_never_a_result() -> None:
    # a memory sharing only a word found in most of the brain scores about a millionth of the best
    d = decide(
        [
            cand("best", 1.0),
            cand("weak", 0.2),
            cand("padding", 1e-6),
            cand("zero", 0.0),
            cand("edge", RELEVANCE_FLOOR),
        ],
        limit=10,
        query_sha256=QUERY_SHA,
    )
    assert ids(d.selected) == ["best", "weak", "edge"]
    assert not d.abstained
    verdicts = {c["memory_id"]: c["decision"] for c in d.body["candidates"]}
    assert verdicts == {
        "best": "selected",
        "weak": "selected",
        "edge": "selected",
        "padding": NOT_RELEVANT,
        "zero": NOT_RELEVANT,
    }


def test_the_floor_is_judged_on_the_relevance_the_decision_records() -> None:
    # 0.0099996 is recorded as 0.01 (6 places): at the floor, so a result, as the record says
    d = decide(
        [cand("best", 1.0), cand("edge", 0.0099996), cand("below", 0.0099994)],
        limit=5,
        query_sha256=QUERY_SHA,
    )
    recorded = {c["memory_id"]: (c["relevance"], c["decision"]) for c in d.body["candidates"]}
    assert recorded["edge"] == (0.01, "selected")
    assert recorded["below"] == (0.009999, NOT_RELEVANT)


def test_a_poison_below_the_floor_is_not_relevant_rather_than_withheld() -> None:
    d = decide([cand("a", 1.0), cand("p", 0.001, label="poison_confirmed")], limit=10, query_sha256=QUERY_SHA)
    assert ids(d.selected) == ["a"] and d.withheld == []
    assert {c["memory_id"]: c["decision"] for c in d.body["candidates"]}["p"] == NOT_RELEVANT


def test_abstains_when_nothing_is_relevant_enough() -> None:
    d = decide([cand("x", 0.001), cand("y", 0.0)], limit=10, query_sha256=QUERY_SHA)
    assert d.abstained and d.selected == [] and d.withheld == []
    assert d.body["abstained"] is True


def test_disputed_is_down_weighted_but_still_disclosed() -> None:
    d = decide([cand("d", 1.0, label="disputed"), cand("s", 0.5)], limit=10, query_sha256=QUERY_SHA)
    assert ids(d.selected) == ["s", "d"]  # 0.5 > 0.4
    assert not d.abstained


# --- the decision body ----------------------------------------------------------------------------
def test_decision_body_is_hashed_canonically() -> None:
    d = decide([cand("a", 0.9), cand("u", 0.8, label="poison_likely")], limit=3, query_sha256=QUERY_SHA)
    assert d.sha256 == canonical_sha256_hex(d.body)
    assert d.body["version"] == "aimos-recall-policy/v4"
    assert d.body["relevance_floor"] == RELEVANCE_FLOOR
    assert d.body["query_sha256"] == QUERY_SHA
    assert d.body["mmr_lambda"] == 0.72 and d.body["limit"] == 3
    assert d.body["selected_memory_ids"] == ["a"]
    assert [c["memory_id"] for c in d.body["candidates"]] == ["a", "u"]
    # the same input decides the same way, byte for byte
    again = decide([cand("a", 0.9), cand("u", 0.8, label="poison_likely")], limit=3, query_sha256=QUERY_SHA)
    assert again.sha256 == d.sha256
