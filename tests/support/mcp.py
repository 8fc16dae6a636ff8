"""Driving `aimos mcp` with the MCP SDK's own stdio client, as an MCP client would: the real
`aimos` console script as a subprocess, the brain in the test's AIMOS_HOME."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client

AIMOS = Path(sys.executable).parent / "aimos"  # the console script of the environment under test
TOOLS = {"save_memory", "recall", "report_outcome", "show_memory"}


def server_env() -> dict[str, str]:
    """What a client passes: AIMOS_HOME (and the session bus for the OS keychain)."""
    env = {"AIMOS_HOME": os.environ["AIMOS_HOME"]}
    for name in ("DBUS_SESSION_BUS_ADDRESS", "AIMOS_BUSY_TIMEOUT_MS"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    return env


def under_test(env: dict[str, str]) -> dict[str, str]:
    """``env`` plus what makes the server import the aimos under test: the PYTHONPATH the tests
    run with (a checkout beside the installed one), when there is one."""
    path = os.environ.get("PYTHONPATH")
    return {**env, "PYTHONPATH": path} if path and "PYTHONPATH" not in env else env


@asynccontextmanager
async def connect(
    agent: str, *, command: list[str] | None = None, env: dict[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    """An initialized session with `aimos mcp --as AGENT` (or the given command)."""
    argv = command or [str(AIMOS), "mcp", "--as", agent]
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=under_test(env or server_env()))
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


def text_of(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def call(session: ClientSession, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool call that must succeed; its structured content."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, f"{tool} failed: {text_of(result)}"
    assert isinstance(result.structured_content, dict), result
    json.dumps(result.structured_content)  # plain JSON
    return result.structured_content


async def refused(session: ClientSession, tool: str, arguments: dict[str, Any], *words: str) -> str:
    """A tool call that must come back as a tool error naming ``words``; its text."""
    result = await session.call_tool(tool, arguments)
    text = text_of(result)
    assert result.is_error, f"{tool} {arguments} was not refused: {text}"
    for word in words:
        assert word in text, f"{word!r} not in the error: {text}"
    assert "Traceback" not in text and 'File "' not in text, text
    return text
