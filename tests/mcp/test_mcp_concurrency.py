"""Two MCP servers for two agents on one brain at once, each saving 200 memories: no lock error
reaches a client, every save is kept, and every chain verifies afterwards."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from mcp import ClientSession
from support.cli import run_aimos, sqlite_value, table_counts
from support.mcp import connect, text_of

pytestmark = pytest.mark.timeout(300)
SAVES = 200
IN_FLIGHT = 4  # calls each client keeps outstanding at a time


async def save_many(agent: str) -> list[str]:
    async with connect(agent) as session:
        ids: list[str] = []
        errors: list[str] = []
        gate = asyncio.Semaphore(IN_FLIGHT)

        async def one(n: int, s: ClientSession) -> None:
            async with gate:
                result = await s.call_tool(
                    "save_memory", {"text": f"{agent} note {n}: the sea was calm at {n} past"}
                )
                if result.is_error:
                    errors.append(text_of(result))
                else:
                    ids.append(result.structured_content["memory_id"])

        await asyncio.gather(*(one(n, session) for n in range(SAVES)))
        assert not errors, errors[:3]
        return ids


def test_two_agents_save_200_each_at_once(aimos_home: Path) -> None:
    run_aimos("install", "--yes", "--keystore", "file", "--no-guides").ok()
    for agent in ("agent-a", "agent-b"):
        run_aimos("agent", "enroll", agent).ok()
    brain = aimos_home / "brain.sqlite3"
    before = table_counts(brain, ("memories",))["memories"]

    async def both() -> list[list[str]]:
        return list(await asyncio.gather(save_many("agent-a"), save_many("agent-b")))

    a_ids, b_ids = asyncio.run(both())
    assert len(set(a_ids)) == len(set(b_ids)) == SAVES
    assert not set(a_ids) & set(b_ids)
    assert table_counts(brain, ("memories",))["memories"] == before + 2 * SAVES
    for agent in ("agent-a", "agent-b"):
        kept = sqlite_value(brain, f"SELECT COUNT(*) FROM memories WHERE author_agent_id = '{agent}'")
        assert kept == str(SAVES), agent
    run_aimos("verify", timeout=180).ok()  # both verifiers: every memory and every event chain
