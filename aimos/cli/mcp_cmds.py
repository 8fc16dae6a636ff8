"""`aimos mcp --as ID` (the MCP server over stdio) and `aimos mcp config` (a client's snippet)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import typer

from aimos.cli.options import AGENT_ALIAS
from aimos.cli.output import out, say

mcp_app = typer.Typer(
    help="Serve one agent over MCP, signed as that agent.\n\nConnect agents over MCP (Model Context"
    " Protocol): each signs with its own enrolled identity.",
    invoke_without_command=True,
    rich_markup_mode=None,
    context_settings=AGENT_ALIAS,  # clients configured before `--as` start `aimos mcp --agent ID`
)


XDG_DIRS = ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME")


def aimos_command() -> list[str]:
    """How a client that knows nothing of this shell's PATH starts this aimos: its absolute path."""
    argv0 = Path(sys.argv[0])
    beside_python = Path(sys.executable).parent / "aimos"  # the console script of this environment
    on_path = shutil.which("aimos")
    candidates = (argv0 if argv0.name == "aimos" else None, beside_python, Path(on_path) if on_path else None)
    for candidate in candidates:
        if candidate is not None and candidate.is_file() and os.access(candidate, os.X_OK):
            return [str(candidate.absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "aimos"]


def _enrolled(agent: str, *, warn: bool = False) -> str:
    """Refuse an agent that is not enrolled (exit 3); the brain's keystore kind."""
    from aimos.actions.agents import expiry_warnings
    from aimos.actions.session import open_brain
    from aimos.identity.epochs import latest_epoch
    from aimos.identity.validators import check_agent_id

    check_agent_id(agent)
    with open_brain(write=False) as brain:
        epoch = latest_epoch(brain.conn, agent)
        if warn:  # the snippet works (again) once the agent has a current epoch
            if epoch["revoked_at"] is not None:
                say(f"warning: agent {agent}'s epoch is revoked: run `aimos agent rotate {agent}` first")
            for warning in expiry_warnings(brain, agent):
                say(warning)
        return str(brain.keystore.kind)


@mcp_app.callback(invoke_without_command=True)
def mcp_main(
    ctx: typer.Context,
    agent: str = typer.Option(None, "--as", help="The enrolled agent this server signs as."),
    no_key_cache: bool = typer.Option(
        False,
        "--no-key-cache",
        help="Read the agent's and the housekeeper's keys from the keystore at every call, not once "
        "per server (a revoked epoch is refused at the next call either way).",
    ),
) -> None:
    """Serve MCP on stdin/stdout for one enrolled agent (an MCP client starts this command)."""
    if ctx.invoked_subcommand is not None:
        return
    from aimos.errors import UsageError

    if agent is None:
        raise UsageError(
            "say which agent this server serves",
            "Run `aimos mcp --as ID` (enrol one first with `aimos install --add-agent ID`).",
        )
    from aimos.actions.session import open_brain
    from aimos.identity.keystore import KeystoreCache

    _enrolled(agent)
    keystores = None if no_key_cache else KeystoreCache()
    with open_brain(write=True, keystores=keystores) as brain:
        brain.signer(agent)  # revoked, expired or a locked keychain: refused now, not at the first call
    if sys.stdin.isatty():
        say(f"aimos mcp: serving agent {agent} over stdio; an MCP client talks to it (Ctrl-C stops)")
    import anyio

    from aimos.mcp.server import build_server, serve_stdio

    try:
        anyio.run(serve_stdio, build_server(agent, keystores))
    except* (BrokenPipeError, ConnectionResetError):
        pass  # the client closed its end: nobody is left to answer, so leave quietly (exit 0)


@mcp_app.command("config")
def config_cmd(
    agent: str = typer.Option(..., "--as", help="The enrolled agent the client will sign as."),
    client: str = typer.Option("generic", "--client", help="claude-desktop, claude-code, cursor or generic."),
    json_out: bool = typer.Option(
        False, "--json", help="For claude-code: print the JSON instead of the `claude mcp add` command."
    ),
) -> None:
    """Print what an MCP client needs to start aimos mcp.

    For claude-code, a `claude mcp add` command to run; for the other clients, the JSON to paste
    (aimos named by its absolute path)."""
    from aimos import paths
    from aimos.errors import UsageError
    from aimos.mcp.config import CLIENTS, WHERE, claude_code_command, client_config, server_name

    if client not in CLIENTS:
        raise UsageError(f"unknown client {client!r}", f"Use one of: {', '.join(CLIENTS)}.")
    keystore = _enrolled(agent, warn=True)
    env = {"AIMOS_HOME": str(paths.data_dir().absolute())} if os.environ.get("AIMOS_HOME") else {}
    # clients start servers with a small environment of their own (HOME, PATH, ...): pass on what
    # finds the brain and the keys. Without AIMOS_HOME the brain, config and keystore are in the
    # platformdirs user dirs, which the XDG variables move when they are set.
    passed = ["AIMOS_KEYSTORE"] + ([] if env else list(XDG_DIRS))
    passed += ["DBUS_SESSION_BUS_ADDRESS"] if keystore == "os" else []
    env.update({name: os.environ[name] for name in passed if os.environ.get(name)})
    if client == "claude-code" and not json_out:
        out(claude_code_command(aimos_command(), agent, env))
    elif client == "claude-code":  # the object `claude mcp add-json NAME '<JSON>'` takes, whole
        out(
            json.dumps(
                client_config(client, aimos_command(), agent, env)["mcpServers"][server_name(agent)], indent=2
            )
        )
    else:
        out(json.dumps(client_config(client, aimos_command(), agent, env), indent=2))
    where = f"{client} --json" if json_out and f"{client} --json" in WHERE else client
    say(WHERE[where].replace("AGENT", agent))
