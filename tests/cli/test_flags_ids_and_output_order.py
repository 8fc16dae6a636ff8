"""Small things that must read right: one flag for the signing agent (`--as`, with `--agent` still
read where it used to be), id messages with the right article, a short prefix called too short,
and stdout and stderr in the order they were written when both go to one file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import UUID_RE, assert_refused, parse_json, run_aimos

pytestmark = pytest.mark.timeout(120)

USAGE, NOT_FOUND = 2, 3


# --- one flag for the signing agent -----------------------------------------------------------
def author(memory_id: str) -> str:
    return str(parse_json(run_aimos("show", memory_id, "--json"))["author_agent_id"])


@pytest.mark.parametrize("flag", ["--as", "--agent"])
def test_save_and_correct_take_as_and_still_read_agent(installed: Path, flag: str) -> None:
    run_aimos("agent", "enroll", "bob").ok()
    saved = run_aimos("save", f"bob saved this with {flag}", flag, "bob").ok().out.strip()
    assert UUID_RE.match(saved) and author(saved) == "bob"
    corrected = (
        run_aimos("correct", saved[:8], f"bob corrected this with {flag}", flag, "bob").ok().out.strip()
    )
    assert author(corrected) == "bob"


@pytest.mark.parametrize("flag", ["--as", "--agent"])
def test_mcp_config_takes_as_and_still_reads_agent(installed: Path, flag: str) -> None:
    snippet = json.loads(run_aimos("mcp", "config", flag, "cli", "--client", "generic").ok().out)
    assert snippet["args"][-3:] == ["mcp", "--as", "cli"], "new snippets start the server with --as"


def test_help_shows_only_as(installed: Path) -> None:
    for command in (
        ("save",),
        ("correct",),
        ("recall",),
        ("feedback",),
        ("label",),
        ("tui",),
        ("mcp",),
        ("mcp", "config"),
    ):
        shown = run_aimos(*command, "--help", env={"COLUMNS": "200"}).ok().out
        assert "--as " in shown, (command, shown)
        assert "--agent " not in shown, f"the old spelling is read, not shown: {command}\n{shown}"


def test_a_value_spelled_agent_is_left_alone(installed: Path) -> None:
    """Only the option's name is the old spelling: a memory's text or key "agent" stays as it is."""
    saved = run_aimos("save", "--agent", "cli", "--key", "agent", "agent").ok().out.strip()
    shown = parse_json(run_aimos("show", saved, "--json"))
    assert (shown["value"], shown["key"]) == ("agent", "agent")


# --- id messages ---------------------------------------------------------------------------------
def test_not_an_id_takes_the_right_article(installed: Path, tmp_path: Path) -> None:
    assert_refused(run_aimos("show", "zzzz"), NOT_FOUND)
    assert "error: that is not a memory id" in run_aimos("show", "zzzz").err
    outcome = run_aimos("export-outcome", "zzzz", "-o", str(tmp_path / "o.json"))
    assert outcome.code == NOT_FOUND and "error: that is not an outcome id" in outcome.err, outcome.describe()
    receipt = run_aimos("receipt", "show", "zzzz")
    assert receipt.code == NOT_FOUND and "error: that is not a recall receipt id" in receipt.err, (
        receipt.describe()
    )


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("show", "ab"), "memory id prefix ab"),
        (("correct", "7a1", "x"), "memory id prefix 7a1"),
        (("feedback", "a", "--good"), "memory id prefix a"),
        (("label", "ab", "dispute", "--reason", "x"), "memory id prefix ab"),
        (("receipt", "show", "ab"), "recall receipt id prefix ab"),
    ],
)
def test_a_prefix_under_four_characters_is_too_short(
    installed: Path, args: tuple[str, ...], said: str
) -> None:
    result = run_aimos(*args)
    assert_refused(result, USAGE, "at least 4 characters")
    assert f"error: {said} is too short" in result.err, result.describe()


def test_an_unknown_long_prefix_is_not_found(installed: Path) -> None:
    result = run_aimos("show", "abcdef12")
    assert_refused(result, NOT_FOUND)
    assert "error: no memory with id abcdef12" in result.err


# --- output order --------------------------------------------------------------------------------
def test_stdout_and_stderr_in_one_file_keep_their_order(aimos_home: Path) -> None:
    """`aimos install > log 2>&1`: the report (stdout) comes before the advice after it (stderr),
    with Python's own buffering (PYTHONUNBUFFERED unset), one pipe for both streams."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    done = subprocess.run(
        [sys.executable, "-m", "aimos", "install", "--yes", "--keystore", "file", "--no-guides"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    first = lines.index(next(line for line in lines if line.startswith("Installed brain")))
    receipt = lines.index(next(line for line in lines if line.startswith("receipt: ")))
    advice = lines.index("Next, try:")
    # where the passphrase came from is said when it is read, before the install's report
    assert lines[0].startswith("master passphrase read from "), done.stdout
    assert first == 1 and first < receipt < advice, done.stdout
