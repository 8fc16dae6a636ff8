"""A benchmark's targets, each judged met or missed beside the figure it judges (pure: no I/O).

An evaluation's report carries its figures and its targets; `judge` pairs one figure with one
target and says whether it holds, so a printed report never leaves the reader to compare numbers
by eye. A target is an upper bound (a time, a size, a ratio) unless it says it is a lower one.
"""

from __future__ import annotations

from dataclasses import dataclass

MET = "met"
MISSED = "missed"
NOT_MEASURED = "not measured"


@dataclass(frozen=True)
class Verdict:
    what: str  # the figure's name, in words ("recall median")
    value: float | None  # None: this run did not measure it
    target: float
    unit: str  # " ms", " B", "x", " s" (printed right after the number)
    at_least: bool  # True: the target is a floor, not a ceiling

    @property
    def word(self) -> str:
        if self.value is None:
            return NOT_MEASURED
        held = self.value >= self.target if self.at_least else self.value <= self.target
        return MET if held else MISSED

    def line(self) -> str:
        bound = ">=" if self.at_least else "<="
        shown = "-" if self.value is None else f"{_number(self.value)}{self.unit}"
        return f"{self.what} {shown} (target {bound} {_number(self.target)}{self.unit}): {self.word}"


def judge(
    what: str, value: float | None, target: float, unit: str = "", *, at_least: bool = False
) -> Verdict:
    return Verdict(what, value, target, unit, at_least)


def summary(verdicts: list[Verdict]) -> str:
    """One closing line: how many targets this run met, missed and did not measure."""
    words = [v.word for v in verdicts]
    missed, met = words.count(MISSED), words.count(MET)
    parts = [f"{met} of {len(words)} met"] + ([f"{missed} missed"] if missed else [])
    if unmeasured := words.count(NOT_MEASURED):
        parts.append(f"{unmeasured} not measured at this size")
    return "targets: " + ", ".join(parts)


def _number(x: float) -> str:
    if float(x).is_integer():
        return f"{int(x):,}"
    return f"{x:,.2f}" if abs(x) >= 1 else f"{x:.4g}"
