"""`aimos mcp` at its edges: signals, a client that goes away, ids taken whole (no prefix probes
past the grant), tool errors worded exactly as the CLI words them, the schema's bounds, and the
snippet of a brain in the XDG user dirs."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from support.cli import run_aimos, sqlite_value
from support.mcp import AIMOS, TOOLS, call, connect, refused, text_of

pytestmark = pytest.mark.timeout(180)

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


@pytest.fixture
def installed(aimos_home: Path) -> Path:
    run_aimos("install", "--yes", "--keystore", "file", "--no-guides").ok()
    run_aimos("agent", "enroll", "reader", "--read-only", "--clearance", "3").ok()
    return aimos_home


def started(**popen: Any) -> subprocess.Popen[str]:
    """`aimos mcp --agent cli` past the handshake, its stdin still open (so it sits in readline)."""
    proc = subprocess.Popen(
        [str(AIMOS), "mcp", "--agent", "cli"],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **({"stdout": subprocess.PIPE} | popen),
    )
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(INITIALIZE) + "\n" + json.dumps(INITIALIZED) + "\n")
    proc.stdin.flush()
    if proc.stdout is not None:
        assert json.loads(proc.stdout.readline())["id"] == 0
    return proc


def ended(proc: subprocess.Popen[str]) -> tuple[int, str]:
    try:
        code = proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail("the server did not stop")
    err = proc.stderr.read() if proc.stderr else ""
    assert "Traceback" not in err and "internal error" not in err, err
    return code, err


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 0)])
def test_ctrl_c_and_sigterm_stop_the_server_while_stdin_stays_open(
    installed: Path, signum: int, code: int
) -> None:
    """Ctrl-C did nothing until the client's next line (stdin is read by a thread no signal
    interrupts); SIGTERM killed the process in the middle of a call."""
    proc = started()
    assert proc.stdin is not None
    for n in range(5):
        params = {"name": "save_memory", "arguments": {"text": f"saved just before the signal {n}"}}
        proc.stdin.write(
            json.dumps({"jsonrpc": "2.0", "id": n + 1, "method": "tools/call", "params": params}) + "\n"
        )
    proc.stdin.flush()
    time.sleep(0.3)
    proc.send_signal(signum)
    assert ended(proc)[0] == code
    run_aimos("verify").ok()  # a call cut short leaves nothing half-written


def test_a_client_that_closes_its_end_lets_the_server_leave_quietly(installed: Path) -> None:
    """A write to a closed stdout ended in "internal error (ExceptionGroup)", exit 1."""
    read_end, write_end = os.pipe()
    try:
        proc = started(stdout=write_end)
    finally:
        os.close(write_end)
    os.close(read_end)  # the client is gone: nobody reads the answers
    assert proc.stdin is not None
    line = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    try:
        proc.stdin.write(json.dumps(line) + "\n")
        proc.stdin.flush()
        time.sleep(1)
        proc.stdin.close()
    except BrokenPipeError:
        pass
    assert ended(proc)[0] == 0


def test_ids_are_taken_whole_so_a_prefix_cannot_probe_past_the_grant(installed: Path) -> None:
    """A prefix resolved to the full id before the grant was checked, and the refusal named it:
    a clearance-3 agent learnt the ids of clearance-8 memories (and other agents' receipts)."""

    async def scenario() -> None:
        async with connect("cli") as cli:
            high = await call(
                cli, "save_memory", {"text": "The vault code is with the notary", "clearance": 8}
            )
            memory_id = high["memory_id"]
            receipt_id = (await call(cli, "recall", {"query": "vault code notary"}))["receipt_id"]
            shown = await call(cli, "show_memory", {"memory_id": memory_id.upper()})
            assert shown["memory_id"] == memory_id  # the whole id, in either case, is fine
        async with connect("reader") as reader:
            for tool, arguments in (
                ("show_memory", {"memory_id": memory_id[:8]}),
                ("report_outcome", {"memory_id": memory_id[:8], "outcome": "bad"}),
                ("report_outcome", {"memory_id": memory_id, "outcome": "bad", "receipt_id": receipt_id[:8]}),
            ):
                text = await refused(reader, tool, arguments, "not a full", "id")
                assert memory_id not in text or arguments["memory_id"] == memory_id, text
                assert receipt_id not in text, text
            # above its grant: the answer for an id that does not exist, word for word (issue 35,
            # item 13: the agent learns nothing, not even that the memory exists)
            above = await refused(reader, "show_memory", {"memory_id": memory_id}, "no memory")
            absent = "0" * 8 + memory_id[8:]
            missing = await refused(reader, "show_memory", {"memory_id": absent}, "no memory")
            assert above.replace(memory_id, "ID") == missing.replace(absent, "ID"), (above, missing)

    asyncio.run(scenario())


def test_tool_errors_are_the_cli_words_without_the_sdk_prefix(installed: Path) -> None:
    async def scenario() -> None:
        async with connect("cli") as session:
            for tool, arguments in (
                ("recall", {"query": "anything", "limit": 0}),
                ("save_memory", {"text": "token ghp_" + "Xk9mQ2vL7pR4tW8yB3nC6hJ1sD5fG0aZ2eU4"}),
                ("show_memory", {"memory_id": "0000"}),
            ):
                result = await session.call_tool(tool, arguments)
                assert result.is_error and text_of(result).startswith("error: "), text_of(result)
                assert "\nhint: " in text_of(result) and "Error executing tool" not in text_of(result)

    asyncio.run(scenario())


def test_the_input_schema_carries_the_bounds_and_id_shape(installed: Path) -> None:
    async def scenario() -> dict[str, Any]:
        async with connect("cli") as session:
            return {t.name: t.input_schema for t in (await session.list_tools()).tools}

    schemas = asyncio.run(scenario())
    clearance = schemas["save_memory"]["properties"]["clearance"]
    assert (clearance["minimum"], clearance["maximum"]) == (0, 12)
    limit = schemas["recall"]["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"]) == (1, 200)
    for tool, field in (
        ("show_memory", "memory_id"),
        ("report_outcome", "memory_id"),
        ("report_outcome", "receipt_id"),
    ):
        assert "pattern" in schemas[tool]["properties"][field], (tool, field)


def test_the_snippet_reaches_a_brain_in_the_xdg_dirs(aimos_home: Path, tmp_path: Path) -> None:
    """Without AIMOS_HOME the brain, config and keystore live in the platformdirs user dirs; a
    client starts the server with HOME and PATH but not the XDG variables that moved them."""
    xdg = {
        name: str(tmp_path / name.lower()) for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME")
    }
    xdg["XDG_CACHE_HOME"] = str(tmp_path / "xdg_cache_home")
    where = {**xdg, "HOME": str(tmp_path / "user")}
    run_aimos("install", "--yes", "--keystore", "file", "--no-guides", env=where, unset=["AIMOS_HOME"]).ok()
    assert (tmp_path / "xdg_data_home" / "aimos" / "brain.sqlite3").is_file()
    printed = run_aimos(
        "mcp", "config", "--agent", "cli", "--client", "cursor", env=where, unset=["AIMOS_HOME"]
    )
    entry = json.loads(printed.ok().out)["mcpServers"]["aimos-cli"]
    assert "AIMOS_HOME" not in entry["env"]
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        assert entry["env"][name] == xdg[name]

    async def listed() -> set[str]:
        # the SDK client adds only its default environment (HOME, PATH, ...) to the snippet's env
        async with connect("", command=[entry["command"], *entry["args"]], env=entry["env"]) as session:
            saved = await call(session, "save_memory", {"text": "saved through the XDG snippet"})
            assert saved["status"] == "saved"
            return {t.name for t in (await session.list_tools()).tools}

    assert asyncio.run(listed()) == TOOLS
    brain = tmp_path / "xdg_data_home" / "aimos" / "brain.sqlite3"
    assert (
        sqlite_value(brain, "SELECT COUNT(*) FROM memories WHERE value = 'saved through the XDG snippet'")
        == "1"
    )


def test_a_bug_in_a_tool_is_an_internal_error_with_no_traceback_logged(
    installed: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A bug outside the brain call (here, rendering a memory) escaped to the SDK, which logs the
    traceback and the exception's text (which may quote the memory) on stderr."""
    import aimos.actions.memory
    from aimos.mcp.server import build_server

    memory = "the memory text must not reach a log"
    monkeypatch.setattr(aimos.actions.memory, "show", lambda *_: {"memory_id": "x", "value": memory})
    server = build_server("cli")
    some_id = "00000000-0000-4000-8000-000000000000"
    with caplog.at_level("DEBUG"):
        result = asyncio.run(server.call_tool("show_memory", {"memory_id": some_id}))
    text = text_of(result)
    assert getattr(result, "is_error", False) and text.startswith("error: internal error (KeyError)"), text
    assert memory not in text and memory not in caplog.text
    assert not [r for r in caplog.records if r.levelno >= 30 or r.exc_info], caplog.text


def test_a_refused_request_whose_id_can_be_read_is_answered_with_that_id(installed: Path) -> None:
    """Every refused line was answered with id null, so a client whose request held a lone
    surrogate (JSON.stringify writes one for a string cut inside a pair) or a bad field waited
    for its timeout; a line with no readable request id still gets null."""
    call_with = {"name": "save_memory", "arguments": {"text": "cut \ud83d"}}
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": call_with}),  # \ud83d
        json.dumps({"jsonrpc": "2.0", "id": "eight", "method": 8}),
        json.dumps({"jsonrpc": "2.0", "id": 9}),  # neither a request nor a response
        "not json at all",
        json.dumps({"jsonrpc": "2.0", "id": 10, "method": "tools/list"}),
    ]
    proc = started()
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("".join(line + "\n" for line in lines))
    proc.stdin.flush()
    answers = [json.loads(proc.stdout.readline()) for _ in lines]
    proc.stdin.close()
    assert ended(proc)[0] == 0
    by_order = [(a["id"], a.get("error", {}).get("code")) for a in answers]
    assert by_order == [(7, -32700), ("eight", -32600), (None, -32600), (None, -32700), (10, None)]
    assert (
        sqlite_value(installed / "brain.sqlite3", "SELECT COUNT(*) FROM memories WHERE value LIKE 'cut %'")
        == "0"
    )


def test_refusals_leave_stderr_empty(installed: Path) -> None:
    """Nothing of a call reaches the server's stderr (clients keep it in their logs): not the
    secret a save was refused for, not the arguments a schema refused, not a traceback."""
    secret = "ghp_" + "Xk9mQ2vL7pR4tW8yB3nC6hJ1sD5fG0aZ2eU4"
    calls = [
        ("save_memory", {"text": f"the token is {secret}"}),
        ("save_memory", {"text": {"nested": secret}}),
        ("recall", {"query": secret, "limit": "many"}),
        ("show_memory", {"memory_id": secret}),
        ("report_outcome", {"memory_id": secret, "outcome": "good"}),
        ("no_such_tool", {"text": secret}),
    ]
    proc = started()
    assert proc.stdin is not None and proc.stdout is not None
    for n, (tool, arguments) in enumerate(calls, start=1):
        params = {"name": tool, "arguments": arguments}
        proc.stdin.write(
            json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}) + "\n"
        )
    proc.stdin.flush()
    answers = [json.loads(proc.stdout.readline()) for _ in calls]
    proc.stdin.close()
    code, err = ended(proc)
    assert code == 0 and err == "", err
    assert all(a["result"]["isError"] for a in answers), answers
