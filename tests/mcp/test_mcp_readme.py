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
from support.cli import run_aimos
from support.mcp import TOOLS, connect

pytestmark = pytest.mark.timeout(180)
README = Path(__file__).resolve().parents[2] / "README.md"


def mcp_section_commands(which: int = 0) -> list[str]:
    """The commands of the MCP section's sh block ``which``: 0 sets up Claude Desktop, 1 Claude Code."""
    text = README.read_text("utf-8")
    section = text.split("## Connecting an agent over MCP", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert len(blocks) > which, "the README's MCP section lacks an sh block"
    commands = [line.strip() for line in blocks[which].splitlines() if line.strip()]
    assert commands and all(c.startswith("aimos ") for c in commands), commands
    return commands


def run_verbatim(commands: list[str], cwd: Path) -> list[subprocess.CompletedProcess[str]]:
    """Each command in a user's shell after the README's first command: the environment's bin first
    on PATH; run from elsewhere, so nothing depends on the checkout being the working directory."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    outputs = []
    for command in commands:
        done = subprocess.run(
            ["bash", "-c", command], capture_output=True, text=True, env=env, cwd=cwd, timeout=60
        )
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
        assert "Traceback" not in done.stderr
        outputs.append(done)
    return outputs


def test_the_readme_mcp_section_works_verbatim(aimos_home: Path, tmp_path: Path) -> None:
    run_aimos("install", "--yes", "--keystore", "file", "--no-guides").ok()
    outputs = run_verbatim(mcp_section_commands(), tmp_path)
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


def test_the_readme_claude_code_setup_works_verbatim(aimos_home: Path, tmp_path: Path) -> None:
    """Claude Code's block enrols an agent of its own and prints its setup, which names the
    `claude mcp add` command that registers the server for the user, for exactly that agent."""
    run_aimos("install", "--yes", "--keystore", "file", "--no-guides").ok()
    commands = mcp_section_commands(1)
    assert any("--client claude-code" in c for c in commands), commands
    printed = run_verbatim(commands, tmp_path)[-1]
    assert printed.stdout.startswith("claude mcp add --scope user"), printed.stdout  # ready to run
    assert "claude-code" in printed.stdout and "--as" in printed.stdout
    assert str(aimos_home) in printed.stdout  # the client reaches this brain
