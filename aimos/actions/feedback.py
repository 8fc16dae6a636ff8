"""Feedback: a signed outcome about a recalled memory, which the housekeeper turns into a signed
reweight (or a signed no-op, or an occurrence observation)."""

from __future__ import annotations

from dataclasses import replace

from aimos.actions.bodies import build_outcome_body
from aimos.actions.session import Brain, now
from aimos.errors import UsageError
from aimos.identity.devices import is_home
from aimos.identity.requests import sign_request
from aimos.learning.outcomes import OutcomeResult, forward_outcome, latest_receipt_for, record_outcome
from aimos.memory.versions import resolve_memory_id
from aimos.recall.receipts import resolve_receipt_id
from aimos.verify.kit.valence import SHARE_MAX_MILLI, SHARE_MIN_MILLI
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
    mid = resolve_memory_id(brain.conn, memory_ref, agent_id=agent)  # out of its grant: not found
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
    request = sign_request(signer, body, PATH_OUTCOME, now())
    if not is_home(brain.conn):  # the home alone appends to weight chains: it applies this request
        return forward_outcome(brain.conn, housekeeper, request, now())
    return record_outcome(brain.conn, housekeeper, request, now())


def weight_words(result: OutcomeResult) -> str:
    """The weight's move in one line: `weight 1.413 -> 1.645` or `weight stays 0.859` (on a device
    that is not the home: what the home will sign, once it applies the outcome)."""
    old, new = result.old_weight_milli / 1000, result.new_weight_milli / 1000
    said = f"weight {old:.3f} -> {new:.3f}" if new != old else f"weight stays {old:.3f}"
    return f"{said} once the home applies it" if result.provisional else said


PROVISIONAL = (
    "kept for the brain's home device, whose housekeeper alone signs weight changes: it applies this "
    "outcome at its next sync after this device's (`aimos sync`); until then the weight here is unchanged. "
)


def explain(result: OutcomeResult) -> str:
    """Why the weight moved as it did, in words a person can check (the CLI, the TUI and MCP all
    say this): the outcome recorded, the agent's evidence balance, and the rule that decided."""
    if result.provisional:
        return PROVISIONAL + "What it will do: " + explain(replace(result, provisional=False))
    said = "good" if result.reward_sign > 0 else "bad"
    if result.terminal == "occurrence_observation":
        return f"{said} kept as an occurrence observation: evidence about this disclosure only"
    if not result.weight_bearing:
        return (
            f"{said} kept as evidence with no weight authority: an outcome about this recall already moved "
            "the memory's weight (one outcome per agent and recall counts); recall it again to report anew"
        )
    balance = result.agent_good - result.agent_bad
    signed = f"{balance:+d}" if balance else "0"
    evidence = (
        f"{result.agent_id or 'the agent'}'s evidence on this memory is {signed} "
        f"({result.agent_good} good, {result.agent_bad} bad)"
    )
    old, new = result.old_weight_milli, result.new_weight_milli
    if new != old:
        direction = "rises" if new > old else "falls"
        if (new > old) != (result.reward_sign > 0):
            leaning = "positive" if balance > 0 else "negative"
            return (
                f"{said} recorded, yet the weight still {direction}: {evidence}, still net {leaning}; the "
                "weight follows the balance of an agent's evidence, not its last report"
            )
        return f"{said} recorded; the weight {direction}: {evidence}"
    if balance == 0:
        return f"{said} recorded; the weight does not move: {evidence}, which is balanced (a signed no-op)"
    at_bound = result.share_new_milli in (SHARE_MIN_MILLI, SHARE_MAX_MILLI)
    if at_bound and result.share_old_milli == result.share_new_milli:
        return (
            f"{said} recorded; the weight does not move: {evidence}, and one agent's evidence may scale a "
            "memory's weight only between half and double (more agents must agree to move it further)"
        )
    return f"{said} recorded; the weight does not move: {evidence}; the step rounds to nothing (signed no-op)"
