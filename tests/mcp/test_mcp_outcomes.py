"""Outcomes over MCP with the authority people expect: one weight-bearing outcome per recall,
the weight's move explained, and one agent unable to bury a memory by recalling it again and
again (valence rule 2, aimos/verify/kit/valence.py). Driven by the SDK's stdio client."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.cli import run_aimos, sqlite_value
from support.mcp import call, connect

pytestmark = pytest.mark.timeout(240)

TEXT = "The spare key is under the blue flowerpot"
QUERY = "where is the spare key"


def weight_of(home: Path, memory_id: str) -> int:
    return int(
        sqlite_value(
            home / "brain.sqlite3",
            f"SELECT retrieval_weight_milli FROM memories WHERE memory_id = '{memory_id}'",
        )
    )


def outcome_rows(home: Path, memory_id: str) -> str:
    return sqlite_value(
        home / "brain.sqlite3",
        "SELECT group_concat(terminal, ',') FROM (SELECT terminal FROM outcomes"
        f" WHERE memory_id = '{memory_id}' ORDER BY rowid)",
    )


@pytest.fixture
def installed(aimos_home: Path) -> Path:
    run_aimos("install", "--yes", "--keystore", "file", "--no-guides").ok()
    run_aimos("agent", "enroll", "helper").ok()
    return aimos_home


def test_twelve_bad_reports_on_one_receipt_move_the_weight_once(installed: Path) -> None:
    async def scenario() -> None:
        async with connect("helper") as session:
            saved = await call(session, "save_memory", {"text": TEXT})
            mid = saved["memory_id"]
            got = await call(session, "recall", {"query": QUERY})
            assert got["results"][0]["memory_id"] == mid
            receipt = got["receipt_id"]
            reports = [
                await call(
                    session, "report_outcome", {"memory_id": mid, "outcome": "bad", "receipt_id": receipt}
                )
                for _ in range(12)
            ]
            first, rest = reports[0], reports[1:]
            assert first["terminal"] == "authorized_transition" and first["weight_bearing"] is True
            assert first["new_weight"] < first["old_weight"] == 1.0
            assert first["evidence_balance"] == -1
            for r in rest:
                assert (r["terminal"], r["weight_bearing"]) == ("signed_noop", False), r
                assert r["old_weight"] == r["new_weight"] == first["new_weight"]
                assert "no weight authority" in r["why"]
            assert weight_of(installed, mid) == round(first["new_weight"] * 1000)
            assert outcome_rows(installed, mid).split(",") == ["authorized_transition"] + ["signed_noop"] * 11
            # still disclosed to everyone, the owner included
            mine = run_aimos("recall", QUERY, "--json").json()
            assert mid in [r["memory_id"] for r in mine["results"]]

    asyncio.run(scenario())
    run_aimos("verify").ok()  # both verifiers agree, with parity


def test_a_bad_after_two_goods_says_why_the_weight_still_rose(installed: Path) -> None:
    async def scenario() -> None:
        async with connect("helper") as session:
            mid = (await call(session, "save_memory", {"text": TEXT}))["memory_id"]
            moves = []
            for outcome in ("good", "good", "bad"):
                receipt = (await call(session, "recall", {"query": QUERY}))["receipt_id"]
                moves.append(
                    await call(
                        session,
                        "report_outcome",
                        {"memory_id": mid, "outcome": outcome, "receipt_id": receipt},
                    )
                )
            last = moves[-1]
            assert last["new_weight"] > last["old_weight"], last
            assert last["evidence_balance"] == 1
            assert "still rises" in last["why"] and "still net positive" in last["why"], last["why"]
            result = await session.call_tool(
                "report_outcome",
                {
                    "memory_id": mid,
                    "outcome": "bad",
                    "receipt_id": (await call(session, "recall", {"query": QUERY}))["receipt_id"],
                },
            )
            text = "\n".join(getattr(b, "text", "") for b in result.content)
            assert "weight" in text and "balanced" in text, text  # +1 -1 -> 0: the weight holds

    asyncio.run(scenario())


def test_one_agent_recalling_again_and_again_cannot_bury_a_memory(installed: Path) -> None:
    """Each bad report on its own recall: the weight falls, then stops at half of where it was;
    the memory is never withheld and the owner's own good reports lift it back."""

    async def scenario() -> str:
        async with connect("helper") as session:
            mid = (await call(session, "save_memory", {"text": TEXT}))["memory_id"]
            weights = []
            for _ in range(12):
                receipt = (await call(session, "recall", {"query": QUERY}))["receipt_id"]
                done = await call(
                    session, "report_outcome", {"memory_id": mid, "outcome": "bad", "receipt_id": receipt}
                )
                weights.append(done["new_weight"])
            assert weights == sorted(weights, reverse=True)
            assert min(weights) == 0.5, weights  # one agent: at most half
            assert "half and double" in done["why"], done["why"]
            return str(mid)

    mid = asyncio.run(scenario())
    owner = run_aimos("recall", QUERY, "--json").json()
    assert mid in [r["memory_id"] for r in owner["results"]]
    run_aimos("feedback", mid, "--good").ok()
    assert weight_of(installed, mid) > 500
    run_aimos("verify").ok()
