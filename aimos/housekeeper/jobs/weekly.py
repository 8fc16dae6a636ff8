"""Weekly assessment and weekly audit (Sundays, UTC): statistics as signed events."""

from __future__ import annotations

from typing import Any

from aimos.housekeeper.jobs.context import JobContext
from aimos.identity.agents import epochs_due
from aimos.identity.epochs import epoch_state, epochs
from aimos.store.connection import one, rows
from aimos.verify.brain.verifier import verify_event_chains
from aimos.vocabulary import EXPIRY_WARNING_DAYS

WEEK_SECONDS = 7 * 24 * 3600


def _count(ctx: JobContext, sql: str, params: tuple[Any, ...] = ()) -> int:
    row = one(ctx.conn, sql, params)
    return int(row["n"]) if row else 0


def assessment(ctx: JobContext) -> dict[str, Any]:
    """The last 7 days: events by operation, saves, recalls, outcomes by terminal and sign."""
    since = ctx.now - WEEK_SECONDS
    by_operation = {
        r["operation"]: int(r["n"])
        for r in rows(
            ctx.conn,
            "SELECT operation, COUNT(*) AS n FROM events WHERE ts_signed > ?"
            " GROUP BY operation ORDER BY operation",
            (since,),
        )
    }
    outcomes = {
        f"{r['terminal']}:{'good' if r['reward_sign'] > 0 else 'bad'}": int(r["n"])
        for r in rows(
            ctx.conn,
            "SELECT terminal, reward_sign, COUNT(*) AS n FROM outcomes WHERE created_at > ?"
            " GROUP BY terminal, reward_sign",
            (since,),
        )
    }
    return {
        "window_days": 7,
        "events_by_operation": by_operation,
        "events": sum(by_operation.values()),
        "memories_saved": _count(ctx, "SELECT COUNT(*) AS n FROM memories WHERE created_at > ?", (since,)),
        "recalls": _count(ctx, "SELECT COUNT(*) AS n FROM recall_receipts WHERE created_at > ?", (since,)),
        "outcomes": outcomes,
    }


def audit(ctx: JobContext) -> dict[str, Any]:
    """Memory types, scopes, labels and weights; identities; every event chain re-verified."""

    def distribution(column: str) -> dict[str, int]:
        return {
            str(r["k"]): int(r["n"])
            for r in rows(
                ctx.conn, f"SELECT {column} AS k, COUNT(*) AS n FROM memories GROUP BY k ORDER BY k"
            )
        }

    weights = (
        one(
            ctx.conn,
            "SELECT MIN(retrieval_weight_milli) AS lo, MAX(retrieval_weight_milli) AS hi,"
            " AVG(retrieval_weight_milli) AS mean, SUM(retrieval_weight_milli <> 1000) AS moved"
            " FROM memories",
        )
        or {}
    )
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
        "memory_types": distribution("memory_type"),
        "scopes": distribution("scope"),
        "labels": distribution("epistemic_label"),
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
