"""The MCP recall tool leaves aimos's own guides out of a person's question unless the agent asks for
them (`guides: true`) or the question names aimos (issue 37, item 4); `guides` must be a boolean."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.cli import BRAIN, run_aimos, sqlite_value
from support.mcp import call, connect, refused

pytestmark = pytest.mark.timeout(180)


def test_recall_searches_the_guides_only_when_asked_or_about_aimos(aimos_home: Path) -> None:
    run_aimos("install", "--yes", "--keystore", "file", "--no-service").ok()
    run_aimos("save", "Dr. Okafor fills my cavities every spring").ok()
    system = set(
        sqlite_value(aimos_home / BRAIN, "SELECT memory_id FROM memories WHERE scope = 'system'").split()
    )
    assert len(system) == 8

    async def scenario() -> None:
        async with connect("cli") as session:
            query = {"query": "which dentist do I see", "limit": 10}
            plain = await call(session, "recall", query)
            assert not system & {r["memory_id"] for r in plain["results"]}, plain
            asked = await call(session, "recall", {**query, "guides": True})
            assert system & {r["memory_id"] for r in asked["results"]}, asked
            about = await call(session, "recall", {"query": "how do I install aimos"})
            assert about["results"] and {r["memory_id"] for r in about["results"]} <= system, about
            for value in ("yes", 1, "true"):  # a boolean, not something that reads as one
                await refused(session, "recall", {**query, "guides": value}, "guides")

    asyncio.run(scenario())
