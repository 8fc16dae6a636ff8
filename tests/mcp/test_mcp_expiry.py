"""An MCP agent within 7 days of its epoch's end is told so in every tool result's text (the CLI's
one line: the agent, when its epoch ends, the fix), driven by the SDK's stdio client with the
server's clock moved by libfaketime; 8 days before the end, nothing is said."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.cli import clock_moved, parse_json, run_aimos
from support.mcp import call, connect, refused, server_env, text_of

from aimos.vocabulary import DEFAULT_VALIDITY_DAYS, EXPIRY_WARNING_DAYS

pytestmark = pytest.mark.timeout(180)


def valid_until(agent: str) -> str:
    epochs = [e for e in parse_json(run_aimos("agent", "list", "--json")) if e["agent_id"] == agent]
    return str(epochs[-1]["valid_until"])


def test_tool_results_carry_the_expiry_warning_six_days_before_the_end(installed: Path) -> None:
    run_aimos("agent", "enroll", "claude").ok()
    until = valid_until("claude")
    warning = (
        f"warning: agent claude's epoch expires in 6 days ({until}): "
        "run `aimos agent rotate claude` or `aimos agent rotate --expiring`"
    )

    async def scenario() -> None:
        env = {**server_env(), **clock_moved(DEFAULT_VALIDITY_DAYS - 6)}
        async with connect("claude", env=env) as session:
            saved = await session.call_tool("save_memory", {"text": "The dentist is on Thursdays at 9"})
            assert not saved.is_error and text_of(saved).endswith("\n" + warning), text_of(saved)
            assert saved.structured_content is not None and "warning" not in str(saved.structured_content)
            memory_id = saved.structured_content["memory_id"]
            recalled = await session.call_tool("recall", {"query": "dentist"})
            assert text_of(recalled).endswith("\n" + warning), text_of(recalled)
            shown = await session.call_tool("show_memory", {"memory_id": memory_id})
            assert text_of(shown).count(warning) == 1, text_of(shown)
            reported = await session.call_tool("report_outcome", {"memory_id": memory_id, "outcome": "good"})
            assert text_of(reported).endswith("\n" + warning), text_of(reported)
            # a refusal the brain makes after the agent signed carries it too
            above = await refused(
                session, "save_memory", {"text": "above the grant", "clearance": 12}, "error:"
            )
            assert above.endswith("\n" + warning), above

    asyncio.run(scenario())


def test_no_warning_eight_days_before_the_end(installed: Path) -> None:
    run_aimos("agent", "enroll", "claude").ok()

    async def scenario() -> None:
        env = {**server_env(), **clock_moved(DEFAULT_VALIDITY_DAYS - (EXPIRY_WARNING_DAYS + 1))}
        async with connect("claude", env=env) as session:
            saved = await call(session, "save_memory", {"text": "The bins go out on Mondays"})
            shown = await session.call_tool("show_memory", {"memory_id": saved["memory_id"]})
            recalled = await session.call_tool("recall", {"query": "bins"})
            for result in (shown, recalled):
                assert "warning" not in text_of(result), text_of(result)

    asyncio.run(scenario())
