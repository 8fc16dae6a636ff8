"""The README's MCP section, followed verbatim: its commands run as a user would run them (a shell
with the environment's bin on PATH), the snippet they print is valid JSON naming an executable
that exists, and a client that starts exactly that command gets the four tools."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from aimos_cli_support import run_aimos
from mcp_support import TOOLS, connect

pytestmark = pytest.mark.timeout(180)
README = Path(__file__).resolve().parents[2] / "README.md"


def mcp_section_commands() -> list[str]:
    text = README.read_text("utf-8")
    section = text.split("## Connecting an agent over MCP", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "the README's MCP section has no sh block"
    commands = [line.strip() for line in block.group(1).splitlines() if line.strip()]
    assert commands and all(c.startswith("aimos ") for c in commands), commands
    return commands


def test_the_readme_mcp_section_works_verbatim(aimos_home: Path, tmp_path: Path) -> None:
    run_aimos("install", "--yes", "--keystore", "file", "--no-guides").ok()
    # a user's shell after the README's first command: the environment's bin first on PATH; run
    # from elsewhere, so nothing depends on the checkout being the working directory
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    outputs = []
    for command in mcp_section_commands():
        done = subprocess.run(
            ["bash", "-c", command], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60
        )
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
        assert "Traceback" not in done.stderr
        outputs.append(done)
    snippet = json.loads(outputs[-1].stdout)  # the config command prints the client's JSON
    assert "claude_desktop_config.json" in outputs[-1].stderr
    ((name, entry),) = snippet["mcpServers"].items()
    command = Path(entry["command"])
    assert command.is_absolute() and command.is_file() and os.access(command, os.X_OK), entry
    assert entry["args"][-3:] == ["mcp", "--as", name.removeprefix("aimos-")]
    assert entry["env"]["AIMOS_HOME"] == str(aimos_home)

    async def listed() -> set[str]:
        async with connect("", command=[entry["command"], *entry["args"]], env=entry["env"]) as session:
            return {t.name for t in (await session.list_tools()).tools}

    assert asyncio.run(listed()) == TOOLS
