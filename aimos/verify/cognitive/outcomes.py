"""The weight rules replayed from the bundle's signed events (aimos's own check beside the
reference's chain checks, the same as the in-database verifier's): every principal outcome the
housekeeper recorded (its ``mutation_outcome_evidence_v2`` event: agent, receipt, reward) and the
terminal event it ended in (``cognitive_weight_adjusted`` or ``cognitive_weight_unchanged``, with
the weight rule it names), in the order they were written. Each terminal must be what the rule
gives (aimos/verify/kit/valence.py): the weights moved, or not, as the rule says, and a further
outcome about one recall never moved them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aimos.verify.cognitive.events import IndexedEvent
from aimos.verify.kit import is_int
from aimos.verify.kit.valence import WeightLedger
from aimos.vocabulary import (
    MUTATION_OUTCOME_OPERATION,
    TARGET_PRINCIPAL_STATE,
    TERMINAL_AUTHORIZED_TRANSITION,
    WEIGHT_ADJUSTED_OPERATION,
    WEIGHT_UNCHANGED_OPERATION,
)

_TERMINALS = (WEIGHT_ADJUSTED_OPERATION, WEIGHT_UNCHANGED_OPERATION)


def _order(event: Mapping[str, Any]) -> tuple[int, int]:
    """Write order: the housekeeper's epochs in the order they began, each epoch's ledger in sequence."""
    seq, valid_from = event.get("ledger_sequence"), event.get("signer_valid_from")
    return (valid_from if is_int(valid_from) else 0, seq if is_int(seq) else 0)


def replay_failures(events: Mapping[str, IndexedEvent], memories: list[Mapping[str, Any]]) -> dict[str, str]:
    """memory_id -> why its outcomes do not replay (only memories with a failure)."""
    evidence: dict[str, list[Mapping[str, Any]]] = {}
    terminals: dict[str, Mapping[str, Any]] = {}
    for indexed in events.values():
        event = indexed.event
        meta = event.get("metadata")
        if not indexed.verified or not isinstance(meta, Mapping):
            continue
        operation = event.get("operation")
        if operation == MUTATION_OUTCOME_OPERATION and meta.get("target_scope") == TARGET_PRINCIPAL_STATE:
            evidence.setdefault(str(meta.get("memory_id")), []).append(event)
        elif operation in _TERMINALS:
            terminals[str(meta.get("outcome_id"))] = event
    out: dict[str, str] = {}
    for memory in memories:
        mid = str(memory.get("memory_id"))
        baseline = memory.get("baseline")
        start = baseline.get("observed_weight_milli") if isinstance(baseline, Mapping) else None
        ledger = WeightLedger(start if is_int(start) else 1000)
        for event in sorted(evidence.get(mid, []), key=_order):
            reason = _step_failure(ledger, event, terminals)
            if reason is not None:
                out[mid] = reason
                break
    return out


def _step_failure(
    ledger: WeightLedger, event: Mapping[str, Any], terminals: Mapping[str, Mapping[str, Any]]
) -> str | None:
    meta = event["metadata"]
    body = event.get("signed_body")
    outcome_id = str(meta.get("outcome_id"))
    terminal = terminals.get(outcome_id)
    terminal_meta = terminal.get("metadata") if terminal is not None else None
    if not isinstance(terminal_meta, Mapping) or not isinstance(body, Mapping):
        return f"outcome {outcome_id} has no signed terminal event"
    try:
        step = ledger.step(
            str(body.get("actor_agent_id")),
            str(meta.get("receipt_id")),
            meta.get("reward_sign"),  # the step refuses anything but -1 and 1
            terminal_meta.get("valence_rule"),
        )
    except ValueError as exc:
        return f"outcome {outcome_id}: {exc}"
    assert terminal is not None
    if step.terminal == TERMINAL_AUTHORIZED_TRANSITION:
        moved = (terminal_meta.get("old_weight_milli"), terminal_meta.get("new_weight_milli"))
        holds = terminal.get("operation") == WEIGHT_ADJUSTED_OPERATION and moved == (
            step.old_milli,
            step.new_milli,
        )
    else:
        holds = (
            terminal.get("operation") == WEIGHT_UNCHANGED_OPERATION
            and terminal_meta.get("weight_milli") == step.old_milli
        )
    return None if holds else f"outcome {outcome_id} is not what the rule gives"
