"""Feedback: a signed outcome about a recalled memory, which the housekeeper turns into a signed
reweight (or a signed no-op, or an occurrence observation)."""

from __future__ import annotations

from aimos.actions.bodies import build_outcome_body
from aimos.actions.session import Brain, now
from aimos.errors import UsageError
from aimos.identity.requests import sign_request
from aimos.learning.outcomes import OutcomeResult, latest_receipt_for, record_outcome
from aimos.memory.versions import resolve_memory_id
from aimos.recall.receipts import resolve_receipt_id
from aimos.vocabulary import PATH_OUTCOME


def give_feedback(
    brain: Brain,
    agent: str,
    memory_ref: str,
    *,
    good: bool,
    receipt_ref: str | None = None,
    occurrence: bool = False,
) -> OutcomeResult:
    """An outcome about ``memory_ref`` signed by ``agent`` (POST /aimos/outcome) about the recall
    ``receipt_ref`` (default: the newest of this agent's recalls that disclosed the memory)."""
    mid = resolve_memory_id(brain.conn, memory_ref)
    if receipt_ref is not None and not receipt_ref.strip():
        raise UsageError("the receipt id is empty", "Give a receipt id, or leave it out for the latest.")
    if receipt_ref:
        rid = resolve_receipt_id(brain.conn, receipt_ref)
    else:
        rid = latest_receipt_for(brain.conn, mid, agent)
    signer = brain.signer(agent)
    housekeeper = brain.housekeeper()
    body = build_outcome_body(
        memory_id=mid,
        receipt_id=rid,
        outcome="good" if good else "bad",
        target_scope="occurrence_observation" if occurrence else "principal_state",
    )
    return record_outcome(brain.conn, housekeeper, sign_request(signer, body, PATH_OUTCOME, now()), now())
