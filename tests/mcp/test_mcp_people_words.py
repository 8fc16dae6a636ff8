"""One set of words for people, everywhere (issue 38 item 4), over MCP with the SDK's own client.

What an agent (and the person reading its transcript) is told in words: the server's
instructions, every tool's title, description and parameter descriptions, and every result's text
(a save, a recall with a withheld memory, an outcome, a shown memory of each label) says no protocol
label or judgment word (support.people_words.PROTOCOL_WORDS) and no "memory(s)"; the structured
results keep the protocol's words, as --json does.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import run_aimos
from support.mcp import call, connect, text_of
from support.people_words import either_number_in, protocol_words_in

from aimos import vocabulary
from aimos.mcp.server import INSTRUCTIONS

pytestmark = pytest.mark.timeout(180)


def test_what_mcp_says_in_words_is_peoples(installed: Path) -> None:
    said: list[str] = []

    async def session() -> dict[str, Any]:
        async with connect("cli") as client:
            tools = (await client.list_tools()).tools
            for tool in tools:
                said.append(f"{tool.name}: {tool.title} {tool.description} {json.dumps(tool.input_schema)}")
                said.append(str(tool.annotations))
            saved = {}
            for key, text in (
                ("cat", "The cat's name is Tom"),
                ("wifi", "The guest wifi is called Tangerine"),
                ("boiler", "The boiler is serviced every October"),
            ):
                result = await client.call_tool("save_memory", {"text": text})
                said.append(text_of(result))
                saved[key] = result.structured_content["memory_id"]
            for memory, word in (
                (saved["cat"], "poison"),
                (saved["cat"], "not-poison"),
                (saved["wifi"], "poison"),
            ):
                run_aimos("label", memory, word, "--reason", "a person looked").ok()
            shown = {}
            for key, memory in saved.items():
                result = await client.call_tool("show_memory", {"memory_id": memory})
                said.append(text_of(result))
                shown[key] = result.structured_content
            recalled = await client.call_tool("recall", {"query": "what is the guest wifi called"})
            said.append(text_of(recalled))
            recalled = await client.call_tool("recall", {"query": "what is the cat called"})
            said.append(text_of(recalled))
            outcome = await client.call_tool("report_outcome", {"memory_id": saved["cat"], "outcome": "good"})
            said.append(text_of(outcome))
            withheld = await call(client, "recall", {"query": "what is the guest wifi called"})
            return {"shown": shown, "withheld": withheld}

    got = asyncio.run(session())
    text = "\n".join([INSTRUCTIONS, *said])
    problems = protocol_words_in(text) + [f"number left open: {p}" for p in either_number_in(text)]
    assert not problems, "MCP tells an agent the protocol's words:\n" + "\n".join(problems)
    assert "1 untrusted memory withheld" in text, text
    assert "label: not poison: a person cleared the suspicion" in text, text
    assert "label: not judged" in text, text
    # the structured results keep the protocol's words
    assert {key: s["label"] for key, s in got["shown"].items()} == {
        "cat": vocabulary.POISON_REFUTED,
        "wifi": vocabulary.POISON_CONFIRMED,
        "boiler": vocabulary.UNVERIFIED,
    }
    assert got["withheld"]["withheld_count"] == 1


def test_a_judged_memory_says_its_label_in_recalls_text(installed: Path) -> None:
    """A client that shows its model only a tool's text must not pass a disputed memory off as a
    plain one: the text line of a judged memory carries its label in words (an unjudged one none)."""
    doubted = run_aimos("save", "The plumber's number is 0161 496 0000").ok().out.strip()
    plain = run_aimos("save", "The plumber is called Sam").ok().out.strip()
    run_aimos("label", doubted, "dispute", "--reason", "it may have changed").ok()

    async def recalled() -> tuple[str, Any]:
        async with connect("cli") as client:
            result = await client.call_tool("recall", {"query": "plumber"})
            return text_of(result), result.structured_content

    text, structured = asyncio.run(recalled())
    lines = {line.split("]")[0].split("[")[-1]: line for line in text.splitlines() if "[" in line}
    assert f"[{doubted}] (disputed: a person doubts it) The plumber's number" in lines[doubted], text
    assert lines[plain].endswith(f"[{plain}] The plumber is called Sam"), text
    labels = {r["memory_id"]: r["label"] for r in structured["results"]}
    assert labels[doubted] == vocabulary.DISPUTED  # the structured result keeps the protocol's word
