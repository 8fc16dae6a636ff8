"""The checks of an agent's id, an epoch's validity, a clearance and a data class: pure, each
raising a UsageError that names the fix."""

from __future__ import annotations

import re

from aimos.errors import (
    UsageError,
)
from aimos.vocabulary import (
    CLEARANCE_MAX,
    DATA_CLASSES,
    MAX_VALIDITY_DAYS,
    RESERVED_AGENT_IDS,
)

AGENT_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def data_class_rank(name: str) -> int:
    try:
        return DATA_CLASSES.index(name)
    except ValueError:
        raise UsageError("unknown data class", f"Use one of: {', '.join(DATA_CLASSES)}.") from None


def check_agent_id(agent_id: str) -> str:
    if not AGENT_ID_RE.fullmatch(agent_id or ""):
        raise UsageError(
            "the agent id given is not valid",
            "Agent ids are 1-64 characters of letters, digits, '_' and '-'.",
        )
    if agent_id in RESERVED_AGENT_IDS:
        raise UsageError(f"agent id {agent_id!r} is reserved", "Choose another agent id.")
    return agent_id


def check_validity_days(days: int) -> int:
    if not 1 <= days <= MAX_VALIDITY_DAYS:
        raise UsageError(
            f"validity of {days} days is out of range", f"Use --validity-days 1..{MAX_VALIDITY_DAYS}."
        )
    return days


def check_clearance(clearance: int, *, ceiling: int = CLEARANCE_MAX) -> int:
    if not 0 <= clearance <= ceiling:
        raise UsageError(f"clearance {clearance} is out of range", f"Use a clearance from 0 to {ceiling}.")
    return clearance
