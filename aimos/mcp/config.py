"""The configuration snippet an MCP client needs to start `aimos mcp --as ID` (pure).

Clients start servers with a small environment of their own, and a command that is not on the
client's PATH is the usual reason an MCP setup fails: the snippet names aimos by its absolute
path and passes AIMOS_HOME when one is set, so the client reaches the same brain.
"""

from __future__ import annotations

import shlex
from typing import Any

CLIENTS = ("claude-desktop", "claude-code", "cursor", "generic")

WHERE = {
    "claude-desktop": "Add this to claude_desktop_config.json (Settings > Developer > Edit Config), "
    "then restart Claude Desktop.",
    "claude-code": "Run this command in a shell: it adds aimos to Claude Code for you, in every project"
    " (user scope; a project's .mcp.json is shared, and this command holds paths of your own). Check it"
    " with `claude mcp get aimos-AGENT`; `--json` prints the JSON instead.",
    "claude-code --json": "Add it for yourself: `claude mcp add-json --scope user aimos-AGENT '<this JSON>'`"
    " (a project's .mcp.json is shared, and this snippet holds paths of your own).",
    "cursor": "Add this to ~/.cursor/mcp.json (or .cursor/mcp.json in a project).",
    "generic": "Start this command with these arguments and environment; it speaks MCP over stdio.",
}


def server_name(agent: str) -> str:
    return f"aimos-{agent}"


def server_entry(command: list[str], agent: str, env: dict[str, str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": command[0], "args": [*command[1:], "mcp", "--as", agent]}
    if env:
        entry["env"] = dict(sorted(env.items()))
    return entry


def client_config(client: str, command: list[str], agent: str, env: dict[str, str]) -> dict[str, Any]:
    """The JSON object to give ``client`` (one of CLIENTS)."""
    entry = server_entry(command, agent, env)
    if client == "generic":
        return entry
    if client == "claude-code":
        entry = {"type": "stdio", **entry}
    return {"mcpServers": {server_name(agent): entry}}


def claude_code_command(command: list[str], agent: str, env: dict[str, str]) -> str:
    """The `claude mcp add` command line that adds this server to Claude Code, ready to paste.

    The server's name comes before `--env`: Claude Code's `--env` takes every word after it until
    the next option, so a name written after it is read as one more variable (the order its own
    help shows fails). `--` ends claude's options: what follows is aimos's command and arguments.
    """
    entry = server_entry(command, agent, env)
    words = ["claude", "mcp", "add", "--scope", "user", "--transport", "stdio", server_name(agent)]
    for name, value in entry.get("env", {}).items():
        words += ["--env", f"{name}={value}"]
    words += ["--", entry["command"], *entry["args"]]
    return shlex.join(words)
