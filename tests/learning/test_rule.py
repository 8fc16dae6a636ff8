"""The valence update rule (pure), SPEC section 6 and PROTOCOL-NOTES section 8:

    j = tanh(sum of all retained r),  r in {-1, +1}
    w' = clip_[0.1, 3.0](w * exp(0.2 j))
    q = floor(1000 w + 0.5)            (half up, as JavaScript's Math.round)

Expected values are worked out by hand below (tanh(1) = 0.761594, e^0.152319 = 1.164531, ...), not
by calling the module under test.
"""

from __future__ import annotations

import math

import pytest

from aimos.verify.kit import valence as rule

# tanh(1) = 0.7615941559557649; tanh(2) = 0.9640275800758169; tanh(3) = 0.9950547536867305
UP_1 = 1.1645314662036572  # e^(0.2 tanh 1)
DOWN_1 = 0.8587144521392577  # e^(-0.2 tanh 1)


def test_constants_are_the_reference_ones() -> None:
    assert rule.ETA == 0.2
    assert (rule.MIN_MILLI, rule.MAX_MILLI) == (100, 3000)


# --- hand-computed single steps ---------------------------------------------------------------
def test_one_bad_outcome_from_one_gives_0_859_as_protocol_notes_say() -> None:
    # 1000 * e^(-0.2 * 0.761594) = 858.714 -> 859 (PROTOCOL-NOTES 8, the SPEC live-fire value)
    q, j = rule.next_weight_milli(1000, [-1])
    assert q == 859
    assert j == pytest.approx(-0.7615941559557649, abs=1e-15)


def test_one_good_outcome_from_one_gives_1_165() -> None:
    # 1000 * e^(0.2 * 0.761594) = 1164.531 -> 1165
    q, j = rule.next_weight_milli(1000, [1])
    assert q == 1165
    assert j == pytest.approx(0.7615941559557649, abs=1e-15)


@pytest.mark.parametrize(
    ("current", "rewards", "expected"),
    [
        # sum 2: 1165 * e^(0.2 * 0.964028) = 1165 * 1.212646 = 1412.73 -> 1413
        (1165, [1, 1], 1413),
        # sum 3: 1413 * e^(0.2 * 0.995055) = 1413 * 1.220201 = 1724.14 -> 1724
        (1413, [1, 1, 1], 1724),
        # sum -2: 859 * e^(-0.2 * 0.964028) = 859 * 0.824643 = 708.37 -> 708
        (859, [-1, -1], 708),
        # sum +1 after good, bad, good: 1165 * 1.164531 = 1356.68 -> 1357
        (1165, [1, -1, 1], 1357),
        # sum 0: j = 0, the weight does not move
        (1165, [1, -1], 1165),
        (1000, [], 1000),
    ],
)
def test_hand_computed_steps(current: int, rewards: list[int], expected: int) -> None:
    assert rule.next_weight_milli(current, rewards)[0] == expected


def test_every_retained_reward_counts_with_no_age_term() -> None:
    # only the sum matters: the order and the number of old outcomes do not
    assert rule.next_weight_milli(1000, [1, 1, -1])[0] == rule.next_weight_milli(1000, [-1, 1, 1])[0]
    assert rule.next_weight_milli(1000, [1] * 40 + [-1] * 40)[0] == 1000
    assert rule.judge([]) == 0.0
    assert rule.judge([1] * 50) == pytest.approx(1.0)  # tanh saturates: j stays in [-1, 1]


# --- clipping at 0.1 and 3.0 ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("current", "rewards", "expected"),
    [
        (3000, [1], 3000),  # 3000 * 1.164531 = 3493.6, clipped
        (2900, [1], 3000),  # 3377.1, clipped
        (2576, [1], 3000),  # 2999.8 -> 3000
        (2575, [1], 2999),  # 2998.66 -> 2999, below the cap
        (100, [-1], 100),  # 85.9, clipped
        (110, [-1], 100),  # 94.5, clipped
        (116, [-1], 100),  # 99.6 -> 100
        (117, [-1], 100),  # 100.47 -> 100
        (118, [-1], 101),  # 101.33 -> 101
    ],
)
def test_clipping(current: int, rewards: list[int], expected: int) -> None:
    assert rule.next_weight_milli(current, rewards)[0] == expected


def test_long_runs_saturate_at_the_bounds() -> None:
    # 1165 1413 1724 2105 2571 3000 ... and 859 708 580 475 389 318 260 213 174 142 116 100 ...
    assert rule.replay(1000, [1] * 6) == 3000
    assert rule.replay(1000, [1] * 5) == 2571
    assert rule.replay(1000, [1] * 30) == 3000
    assert rule.replay(1000, [-1] * 11) == 116
    assert rule.replay(1000, [-1] * 12) == 100
    assert rule.replay(1000, [-1] * 30) == 100


# --- quantization: half up, not Python's round-half-to-even ------------------------------------
@pytest.mark.parametrize(
    ("weight", "half_up", "bankers"),
    [
        # exactly representable binary fractions whose 1000 w ends in .5
        (1.0625, 1063, 1062),
        (2.5625, 2563, 2562),
        (0.8125, 813, 812),
        (0.5625, 563, 562),
        (1.1875, 1188, 1188),  # .5 with an odd integer part: both agree
        (0.3125, 313, 312),
    ],
)
def test_quantize_is_half_up_at_exact_halves(weight: float, half_up: int, bankers: int) -> None:
    assert weight * 1000 == math.floor(weight * 1000) + 0.5  # the boundary is exact
    assert round(weight * 1000) == bankers  # what Python's round would (wrongly) give
    assert rule.quantize(weight) == half_up


@pytest.mark.parametrize(
    ("weight", "q"), [(1.0, 1000), (0.859, 859), (1.0004999, 1000), (0.1, 100), (3.0, 3000)]
)
def test_quantize_ordinary_values(weight: float, q: int) -> None:
    assert rule.quantize(weight) == q


# --- replay agrees with repeated next_weight_milli ----------------------------------------------
@pytest.mark.parametrize(
    "rewards",
    [
        [],
        [1],
        [-1],
        [1, -1, 1],
        [-1, -1, 1, 1, 1],
        [1] * 8 + [-1] * 3,
        [-1] * 13 + [1] * 2,
        [1, 1, -1, -1, -1, 1],
    ],
)
@pytest.mark.parametrize("initial", [1000, 100, 3000, 859])
def test_replay_is_repeated_next_weight(initial: int, rewards: list[int]) -> None:
    w = initial
    for i in range(len(rewards)):
        w, _ = rule.next_weight_milli(w, rewards[: i + 1])
    assert rule.replay(initial, rewards) == w


def test_replay_of_up_down_up() -> None:
    # good: 1165; bad: sum 0 -> unchanged 1165; good: sum 1 -> 1357
    assert rule.replay(1000, [1]) == 1165
    assert rule.replay(1000, [1, -1]) == 1165
    assert rule.replay(1000, [1, -1, 1]) == 1357


def test_replay_from_the_quarantine_baseline() -> None:
    # 100 * 1.164531 = 116.45 -> 116; 116 * 1.212646 = 140.67 -> 141
    assert rule.replay(100, [1]) == 116
    assert rule.replay(100, [1, 1]) == 141
    assert rule.replay(100, [-1]) == 100


def test_eta_is_a_parameter() -> None:
    # 1000 * e^(0.5 * 0.761594) = 1000 * e^0.380797 = 1463.45 -> 1463
    assert rule.next_weight_milli(1000, [1], eta=0.5)[0] == 1463
    assert rule.replay(1000, [1], eta=0.5) == 1463


# --- only +1 and -1 are rewards -----------------------------------------------------------------
@pytest.mark.parametrize("bad", [0, 2, -2, 0.5, "1", None, 3])
def test_rewards_other_than_plus_minus_one_are_refused(bad: object) -> None:
    with pytest.raises(ValueError):
        rule.judge([1, bad])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        rule.next_weight_milli(1000, [bad])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        rule.replay(1000, [-1, bad])  # type: ignore[list-item]


def test_values_stay_integers_in_range() -> None:
    for rewards in ([1] * 20, [-1] * 20, [1, -1] * 10):
        w = 1000
        for i in range(len(rewards)):
            w, j = rule.next_weight_milli(w, rewards[: i + 1])
            assert isinstance(w, int) and not isinstance(w, bool)
            assert 100 <= w <= 3000
            assert -1.0 <= j <= 1.0
