"""The one verdict type and the one way a check fails.

A check fails by raising :class:`CheckFailed` with a reason from its verifier's closed vocabulary
(through :func:`fail`, :func:`check` or a :class:`Cursor`); the verifier's entry point turns it
into a :class:`Verdict` in one place (:meth:`Verdict.failed`). Nothing else is caught as a
protocol outcome: an unexpected exception is a defect, reported as the verifier chooses
(``indeterminate`` with its internal-error reason, or the failure of the check being evaluated).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal, NoReturn, TypeVar

VerdictWord = Literal["valid", "invalid", "indeterminate"]
VALID: VerdictWord = "valid"
INVALID: VerdictWord = "invalid"
INDETERMINATE: VerdictWord = "indeterminate"

_V = TypeVar("_V", bound="Verdict")


class CheckFailed(Exception):
    """A check failed: ``reason`` is from the verifier's closed vocabulary, ``detail`` says what
    did not hold, ``where`` names the object or check (``"objects[5]"``, ``"bundle.outcome"``)."""

    def __init__(self, reason: str, detail: str = "", where: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail
        self.where = where


def fail(reason: str, detail: str = "", where: str | None = None) -> NoReturn:
    """Fail the current check."""
    raise CheckFailed(reason, detail, where)


def check(condition: bool, reason: str, detail: str = "", where: str | None = None) -> None:
    """Fail with ``reason`` unless ``condition`` holds."""
    if not condition:
        raise CheckFailed(reason, detail, where)


def require_dict(value: object, reason: str, detail: str = "", where: str | None = None) -> dict[str, Any]:
    """``value`` if it is a JSON object, else fail with ``reason``."""
    if not isinstance(value, dict):
        raise CheckFailed(reason, detail, where)
    return value


class Cursor:
    """The check being evaluated (its reason and location), for verifiers whose checks run in a
    fixed order and fail with the reason of the step they are in: ``at`` moves to a step,
    ``need`` / ``fail`` fail it (or fail with another reason given explicitly)."""

    def __init__(self, reason: str, where: str | None = None) -> None:
        self.reason = reason
        self.where = where

    def at(self, reason: str, where: str | None = None) -> None:
        self.reason = reason
        self.where = where

    def fail(self, detail: str, reason: str | None = None) -> NoReturn:
        raise CheckFailed(reason or self.reason, detail, self.where)

    def need(self, condition: bool, detail: str, reason: str | None = None) -> None:
        if not condition:
            self.fail(detail, reason)

    def failure(self, detail: str) -> CheckFailed:
        """The current check's failure (for reporting an unexpected exception as this check's)."""
        return CheckFailed(self.reason, detail, self.where)


@dataclass(frozen=True)
class Verdict:
    """A verifier's answer: ``verdict`` valid / invalid / indeterminate, the first failing
    ``reason`` (closed vocabulary; None when valid), its ``detail`` and ``where``, and how many
    signatures verified before the verdict. Verifiers that report more subclass it."""

    verdict: VerdictWord
    reason: str | None = None
    detail: str | None = None
    where: str | None = None
    signatures_verified: int = 0

    @property
    def ok(self) -> bool:
        return self.verdict == VALID

    @property
    def primary_reason(self) -> str | None:
        return self.reason

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "reason": self.reason,
            "detail": self.detail,
            "where": self.where,
            "signatures_verified": self.signatures_verified,
        }

    def report_head(self, schema: str) -> dict[str, Any]:
        """The keys a verifier's report document (its ``as_dict``) opens with: its schema, the
        verdict, the primary reason and its detail; the verifier's own keys follow."""
        return {
            "schema": schema,
            "verdict": self.verdict,
            "primary_reason": self.primary_reason,
            "detail": self.detail,
        }

    @classmethod
    def valid(cls: type[_V], signatures: int = 0, **extra: Any) -> _V:
        return cls(VALID, None, None, None, signatures, **extra)

    @classmethod
    def invalid(
        cls: type[_V],
        reason: str,
        detail: str | None = None,
        where: str | None = None,
        signatures: int = 0,
        **extra: Any,
    ) -> _V:
        return cls(INVALID, reason, detail, where, signatures, **extra)

    @classmethod
    def indeterminate(cls: type[_V], reason: str, *args: Any, **extra: Any) -> _V:
        """No answer either way (mandatory evidence missing, or a defect of the verifier);
        the arguments are :meth:`invalid`'s."""
        return replace(cls.invalid(reason, *args, **extra), verdict=INDETERMINATE)

    @classmethod
    def failed(cls: type[_V], failure: CheckFailed, signatures: int = 0, **extra: Any) -> _V:
        """The invalid verdict of a failed check (the one place a failure becomes a verdict)."""
        return cls(INVALID, failure.reason, failure.detail, failure.where, signatures, **extra)


@dataclass(frozen=True)
class ReportVerdict(Verdict):
    """A verdict with a report document of its own (its ``as_dict``): two are equal whatever their
    ``detail`` says, since the reason says what failed."""

    detail: str | None = field(default=None, compare=False)
