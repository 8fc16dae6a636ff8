"""The valence update rules (pure, no I/O): the writer of weights and both verifiers replay them.

**MutMem's rule** (``rule 1``): j = tanh(sum r), w' = clip_[0.1, 3.0](w exp(eta j)), over every
retained principal outcome of the memory, in order. No age term: every retained outcome counts,
forever. It is what the reference's vectors exercise, and every outcome recorded before
:data:`VALENCE_RULE_V2` keeps replaying under it.

**aimos's rule 2** (:data:`VALENCE_RULE_V2`), for every outcome recorded since. Under MutMem's rule
one agent could push a memory to the floor (where recall withholds it from everyone) or to the
ceiling by recalling it again and again and reporting each time; even a sum clipped per agent
would not stop that, since the rule multiplies the weight once per outcome. Rule 2 keeps MutMem's
step but bounds each agent's part:

- one weight-bearing outcome per (agent, recall receipt, memory): a further outcome about the same
  disclosure is kept as evidence with no weight authority (a signed no-op);
- each agent has its own share of the memory's weight, s (milli, from 1000), which follows
  MutMem's rule over that agent's own weight-bearing rewards, clipped to
  [SHARE_MIN_MILLI, SHARE_MAX_MILLI] = [0.5, 2.0];
- the memory's weight is the weight it had when rule 2 began (its base) times every agent's share,
  w = clip_[0.1, 3.0](round(base x prod s_a)), in exact integers (half up): a function of the
  shares, so the clip never carries into a later step.

So one agent's evidence scales a memory's weight by a factor between 0.5 and 2 and no more: from
the default weight it never reaches the floor (four agents must agree for that: 0.5^3 > 0.1) nor
the ceiling (two must). For a single agent from the default weight, and for every first outcome,
rule 2 gives exactly what MutMem's gives until the share reaches its bound. Once a memory has an
outcome under rule 2, none of its later outcomes may name MutMem's rule.

Weights leave this module as integers q = round(1000 w) (half up, as JavaScript's Math.round), the
only form on any hash path.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from aimos.vocabulary import TERMINAL_AUTHORIZED_TRANSITION as AUTHORIZED_TRANSITION
from aimos.vocabulary import TERMINAL_SIGNED_NOOP as SIGNED_NOOP
from aimos.vocabulary import VALENCE_RULE_V2

ETA = 0.2
MIN_MILLI = 100
MAX_MILLI = 3000
SHARE_START_MILLI: Final = 1000
SHARE_MIN_MILLI: Final = 500
SHARE_MAX_MILLI: Final = 2000


def quantize(weight: float) -> int:
    return math.floor(weight * 1000 + 0.5)


def judge(rewards: Iterable[int]) -> float:
    """j = tanh(sum of retained rewards), each in {-1, +1}; 0 with no evidence."""
    return math.tanh(_evidence(rewards))


def _evidence(rewards: Iterable[int]) -> int:
    total = 0
    for r in rewards:
        if r not in (-1, 1):
            raise ValueError("a reward is -1 or +1")
        total += r
    return total


def step_milli(
    current_milli: int, evidence: int, *, low: int = MIN_MILLI, high: int = MAX_MILLI, eta: float = ETA
) -> tuple[int, float]:
    """MutMem's step from an evidence sum: (clip_[low, high](round(w exp(eta tanh(evidence)))), j).
    The one place the step is computed: a memory's weight under MutMem's rule, an agent's share
    under rule 2."""
    j = math.tanh(evidence)
    return max(low, min(high, quantize((current_milli / 1000) * math.exp(eta * j)))), j


def next_weight_milli(current_milli: int, rewards: Iterable[int], eta: float = ETA) -> tuple[int, float]:
    """MutMem's step: (new q, j) for a memory at ``current_milli`` given all its retained rewards."""
    return step_milli(current_milli, _evidence(rewards), eta=eta)


def replay(initial_milli: int, rewards_in_order: Iterable[int], eta: float = ETA) -> int:
    """The live weight after applying MutMem's rule once per outcome, in order."""
    weight = initial_milli
    seen: list[int] = []
    for r in rewards_in_order:
        seen.append(r)
        weight, _ = next_weight_milli(weight, seen, eta)
    return weight


@dataclass(frozen=True)
class Step:
    """What one principal outcome does to its memory's weight."""

    terminal: str  # authorized_transition | signed_noop
    old_milli: int
    new_milli: int
    j: float
    weight_bearing: bool  # False: a further outcome about a disclosure that already moved it
    rule: str | None  # None: MutMem's rule; else VALENCE_RULE_V2
    good: int = 0  # this agent's weight-bearing outcomes on this memory, with this one
    bad: int = 0
    share_old_milli: int = SHARE_START_MILLI
    share_new_milli: int = SHARE_START_MILLI

    @property
    def balance(self) -> int:
        """This agent's net evidence on this memory (good - bad)."""
        return self.good - self.bad


@dataclass
class _Agent:
    good: int = 0
    bad: int = 0
    share_milli: int = SHARE_START_MILLI


@dataclass
class WeightLedger:
    """One memory's weight as its principal outcomes move it, in write order (the writer asks it
    what the next outcome does; the verifiers replay every outcome through it)."""

    weight_milli: int = 1000
    _sum: int = 0  # every principal reward under MutMem's rule
    _agents: dict[str, _Agent] = field(default_factory=dict)
    _disclosures: set[tuple[str, str]] = field(default_factory=set)
    _base_milli: int | None = None  # the weight when rule 2 began; None while MutMem's rule holds

    def copy(self) -> WeightLedger:
        """An independent copy (a step on it leaves this one as it is)."""
        return WeightLedger(
            self.weight_milli,
            self._sum,
            {a: _Agent(s.good, s.bad, s.share_milli) for a, s in self._agents.items()},
            set(self._disclosures),
            self._base_milli,
        )

    def step(self, agent_id: str, receipt_id: str, reward: int, rule: str | None) -> Step:
        """Apply one principal outcome of ``agent_id`` about the disclosure ``receipt_id``. A
        ValueError for a reward or rule no writer gives, and for MutMem's rule after rule 2 began
        (an outcome that names no rule, or lost its terminal event, cannot pick the old rule)."""
        if reward not in (-1, 1) or isinstance(reward, bool):
            raise ValueError("a reward is -1 or +1")
        if rule not in (None, VALENCE_RULE_V2):
            raise ValueError(f"unknown valence rule {rule!r}")
        old = self.weight_milli
        disclosure = (agent_id, receipt_id)
        repeat = disclosure in self._disclosures
        self._disclosures.add(disclosure)
        if rule is None:  # MutMem's rule: every retained principal outcome counts
            if self._base_milli is not None:
                raise ValueError("an outcome under MutMem's rule after one under rule 2")
            self._sum += reward
            new, j = step_milli(old, self._sum)
            self.weight_milli = new
            return Step(AUTHORIZED_TRANSITION if new != old else SIGNED_NOOP, old, new, j, True, None)
        if self._base_milli is None:
            self._base_milli = old
        agent = self._agents.setdefault(agent_id, _Agent())
        if repeat:
            share = agent.share_milli
            return Step(SIGNED_NOOP, old, old, 0.0, False, rule, agent.good, agent.bad, share, share)
        if reward > 0:
            agent.good += 1
        else:
            agent.bad += 1
        share_old = agent.share_milli  # MutMem's step over the agent's own evidence, within its bounds
        share_new, j = step_milli(
            share_old, agent.good - agent.bad, low=SHARE_MIN_MILLI, high=SHARE_MAX_MILLI
        )
        agent.share_milli = share_new
        new = self._shared_weight()
        self.weight_milli = new
        terminal = AUTHORIZED_TRANSITION if new != old else SIGNED_NOOP
        return Step(terminal, old, new, j, True, rule, agent.good, agent.bad, share_old, share_new)

    def _shared_weight(self) -> int:
        """w = clip_[0.1, 3.0](round(base x the product of every agent's share)), exactly, in
        integers (half up): a function of the shares, so a clip never carries into a later step."""
        assert self._base_milli is not None
        numerator, denominator = self._base_milli, 1
        for agent in self._agents.values():
            numerator *= agent.share_milli
            denominator *= SHARE_START_MILLI
        return max(MIN_MILLI, min(MAX_MILLI, (2 * numerator + denominator) // (2 * denominator)))
