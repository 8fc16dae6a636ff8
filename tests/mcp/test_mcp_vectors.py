"""The MCP server keeps the embedding model (issue 37, item 3): after it has answered a save it
makes the new memory's vector, so the next recall finds it by meaning without making it first."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.cli import sqlite_value
from support.mcp import call, connect
from support.process import wait_for

pytestmark = pytest.mark.timeout(180)


def vector_rows(brain: Path) -> int:
    return int(sqlite_value(brain, "SELECT COUNT(*) FROM memory_vectors"))


def test_a_saved_memory_gets_its_vector_after_the_answer(installed: Path) -> None:
    brain = installed / "brain.sqlite3"

    async def scenario() -> None:
        async with connect("cli") as session:
            await call(session, "save_memory", {"text": "Dr. Okafor fills my cavities every spring"})
            await asyncio.to_thread(wait_for, lambda: vector_rows(brain) == 1, "the first vector", 60)
            await call(session, "save_memory", {"text": "I drink coffee every morning"})
            await asyncio.to_thread(wait_for, lambda: vector_rows(brain) == 2, "the second vector", 60)

    asyncio.run(scenario())
    assert vector_rows(brain) == 2
