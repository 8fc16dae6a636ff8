"""A redacted memory over MCP (the SDK's stdio client): recall and show_memory give the agent the
redaction notice, never the removed text, and the structured result's text is empty. (Redacted
with --keep-key, so that its key still finds it.)"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.cli import run_aimos
from support.mcp import call, connect, server_env, text_of

pytestmark = pytest.mark.timeout(180)


def test_recall_and_show_give_the_notice(installed: Path) -> None:
    saved = run_aimos(
        "save", "The gate by the garage was painted marigold in the spring", "--key", "gate"
    ).ok()
    mid = saved.out.strip()
    done = run_aimos(
        "redact", mid[:8], "--reason", "it said too much", "--keep-key", input=f"redact {mid[:8]}\n"
    )
    assert done.code == 0, done.describe()

    async def scenario() -> None:
        async with connect("cli", env=server_env()) as session:
            recalled = await session.call_tool("recall", {"query": "gate"})
            assert not recalled.is_error and "marigold" not in text_of(recalled)
            assert f"[{mid}] [redacted by the master at " in text_of(recalled), text_of(recalled)
            hits = (recalled.structured_content or {})["results"]
            assert [h["text"] for h in hits if h["memory_id"] == mid] == [""]
            shown = await session.call_tool("show_memory", {"memory_id": mid})
            assert text_of(shown).startswith("[redacted by the master at "), text_of(shown)
            assert "it said too much" in text_of(shown) and "marigold" not in text_of(shown)
            assert (await call(session, "show_memory", {"memory_id": mid}))["text"] == ""

    asyncio.run(scenario())
