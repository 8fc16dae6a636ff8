"""An MCP agent saves text made to take over a terminal (issue 18, item 5): MCP gives the agent
back the exact text, and a person who lists, recalls or shows it with the CLI sees it escaped."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from support.cli import run_aimos
from support.mcp import call, connect

pytestmark = pytest.mark.timeout(240)

HOSTILE = (
    "The boiler code \x1b[2J\x1b[H\x1b]0;pwned\x07 is \x1b]8;;https://evil.example/\x07here\x1b]8;;\x07"
    " \x9b31m\u202eevil\u202c [bold red]markup[/]\nsecond line\x08\x08\rverifies: yes"
)
RAW = {chr(c) for c in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))} | set("\u202c\u202e")


def test_text_saved_over_mcp_is_exact_over_mcp_and_escaped_on_the_cli(installed: Path) -> None:
    async def scenario() -> tuple[str, str, str]:
        async with connect("cli") as session:
            saved = await call(session, "save_memory", {"text": HOSTILE, "key": "home:\x1b[31mboiler"})
            shown = await call(session, "show_memory", {"memory_id": saved["memory_id"]})
            got = await call(session, "recall", {"query": "boiler code"})
            return saved["memory_id"], shown["text"], got["results"][0]["text"]

    memory_id, shown_text, recalled_text = asyncio.run(scenario())
    assert shown_text == recalled_text == HOSTILE  # the agent gets the exact text back

    for args in (("list",), ("list", "--history"), ("recall", "boiler code"), ("show", memory_id)):
        result = run_aimos(*args, input=b"").ok()
        raw = sorted({f"U+{ord(c):04X}" for c in result.out + result.err if c in RAW})
        assert raw == [], f"raw control characters reached the terminal: {raw}\n{result.describe()}"
        assert "\\x1b[2J\\x1b[H\\x1b]0;pwned\\x07" in result.out, result.describe()
    shown = run_aimos("show", memory_id, input=b"").ok().out
    assert "\\x08\\x08\\rverifies: yes" in shown and "home:\\x1b[31mboiler" in shown
    detail = json.loads(run_aimos("show", memory_id, "--json", input=b"").ok().out)
    assert (detail["value"], detail["key"]) == (HOSTILE, "home:\x1b[31mboiler")
