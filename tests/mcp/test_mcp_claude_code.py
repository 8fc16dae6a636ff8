"""`aimos mcp config --client claude-code` prints the ready `claude mcp add ...` command (issue 38,
item 14): a person pastes it into a shell; nobody cuts an inner object out of JSON by hand. The
command is checked the way a shell and Claude Code would read it, then its server part is started
as Claude Code would start it, and it saves into the brain."""

from __future__ import annotations

import asyncio
import json
import shlex
from pathlib import Path

import pytest
from support.cli import run_aimos, sqlite_value
from support.mcp import call, connect

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def awkward_home(aimos_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home whose path a shell would split or end early if the command were not quoted."""
    home = tmp_path / "my brains" / "it's $HOME; echo no"
    home.mkdir(parents=True, mode=0o700)
    monkeypatch.setenv("AIMOS_HOME", str(home))
    run_aimos("install", "--yes", "--keystore", "file", "--no-guides").ok()
    return home


def test_claude_code_gets_a_command_a_shell_reads_back_whole(awkward_home: Path) -> None:
    printed = run_aimos("mcp", "config", "--as", "cli", "--client", "claude-code").ok()
    words = shlex.split(printed.out.strip())
    assert words[:8] == ["claude", "mcp", "add", "--scope", "user", "--transport", "stdio", "aimos-cli"]
    server = words[words.index("--") + 1 :]
    options = words[8 : words.index("--")]
    # the name comes before --env: claude's --env takes every word after it until the next option
    assert options[0::2] == ["--env"] * (len(options) // 2), options
    env = dict(pair.split("=", 1) for pair in options[1::2])
    assert env["AIMOS_HOME"] == str(awkward_home)
    assert Path(server[0]).is_absolute() and server[1:] == ["mcp", "--as", "cli"]
    assert "claude mcp get aimos-cli" in printed.err and "--json" in printed.err

    async def saved() -> str:
        async with connect("", command=server, env=env) as session:
            return str(
                (await call(session, "save_memory", {"text": "added by the claude mcp command"}))["status"]
            )

    assert asyncio.run(saved()) == "saved"
    brain = awkward_home / "brain.sqlite3"
    assert (
        sqlite_value(brain, "SELECT COUNT(*) FROM memories WHERE value = 'added by the claude mcp command'")
        == "1"
    )


def test_the_json_is_still_there_for_those_who_want_it(awkward_home: Path) -> None:
    printed = run_aimos("mcp", "config", "--as", "cli", "--client", "claude-code", "--json").ok()
    entry = json.loads(printed.out)  # the server's own object, as `claude mcp add-json` takes it
    assert entry["type"] == "stdio" and entry["args"][-3:] == ["mcp", "--as", "cli"]
    assert "claude mcp add-json --scope user aimos-cli" in printed.err
    cursor = run_aimos("mcp", "config", "--as", "cli", "--client", "cursor").ok()
    assert "mcpServers" in json.loads(cursor.out)  # other clients keep their JSON


def test_an_agent_that_is_not_enrolled_gets_no_command(awkward_home: Path) -> None:
    result = run_aimos("mcp", "config", "--as", "nobody", "--client", "claude-code")
    assert result.code == 3 and "not enrolled" in result.err and "claude mcp add" not in result.out
