"""Weekly assessment and weekly audit (Sundays, UTC): statistics as signed events."""

from __future__ import annotations

from typing import Any

from aimos.housekeeper.jobs.context import JobContext
from aimos.identity.agents import epochs_due
from aimos.identity.epochs import epochs
from aimos.identity.signer import epoch_state
from aimos.store.queries.housekeeper import (
    memories_by,
    memories_saved_since,
    operations_since,
    outcomes_since,
    recalls_since,
    weight_summary,
)
from aimos.verify.brain.verifier import verify_event_chains
from aimos.vocabulary import EXPIRY_WARNING_DAYS

WEEK_SECONDS = 7 * 24 * 3600


def assessment(ctx: JobContext) -> dict[str, Any]:
    """The last 7 days: events by operation, saves, recalls, outcomes by terminal and sign."""
    since = ctx.now - WEEK_SECONDS
    by_operation = operations_since(ctx.conn, since, ordered=True)
    outcomes = {
        f"{terminal}:{'good' if sign > 0 else 'bad'}": n
        for terminal, sign, n in outcomes_since(ctx.conn, since)
    }
    return {
        "window_days": 7,
        "events_by_operation": by_operation,
        "events": sum(by_operation.values()),
        "memories_saved": memories_saved_since(ctx.conn, since),
        "recalls": recalls_since(ctx.conn, since),
        "outcomes": outcomes,
    }


def audit(ctx: JobContext) -> dict[str, Any]:
    """Memory types, scopes, labels and weights; identities; every event chain re-verified."""
    weights: dict[str, Any] = dict(weight_summary(ctx.conn) or {})
    identities: dict[str, int] = {}
    for e in epochs(ctx.conn):
        state = epoch_state(e, ctx.now)
        identities[state] = identities.get(state, 0) + 1
    # the same read as the expiry warnings and `aimos agent rotate --expiring` (ended ones too)
    expiring = [due.agent_id for due in epochs_due(ctx.conn, ctx.now)]
    if expiring:
        ctx.attention.append(
            f"agent epochs expire within {EXPIRY_WARNING_DAYS} days: {', '.join(expiring)}"
            " (aimos agent rotate --expiring)"
        )
    chains = verify_event_chains(ctx.conn)
    broken = [c for c in chains if not c["ok"]]
    for c in broken:
        ctx.attention.append(f"event chain of {c['signer_agent_id']} fails: {c['reason']}")
    return {
        "memory_types": memories_by(ctx.conn, "memory_type"),
        "scopes": memories_by(ctx.conn, "scope"),
        "labels": memories_by(ctx.conn, "epistemic_label"),
        "weights_milli": {
            "min": weights.get("lo"),
            "max": weights.get("hi"),
            "mean": round(float(weights["mean"]), 1) if weights.get("mean") is not None else None,
            "moved": int(weights.get("moved") or 0),
        },
        "epochs_by_state": identities,
        "agents_expiring_within_7_days": sorted(expiring),
        "event_chains": len(chains),
        "event_chains_broken": len(broken),
        "events_verified": sum(int(c["events"]) for c in chains),
    }
