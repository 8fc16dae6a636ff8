"""Shell completion, Typer's own, for bash, zsh and fish: the real `aimos` entry point prints each
shell's script, and answers a completion request the way that script asks (subcommands and
options of the words typed so far)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

AIMOS = Path(sys.executable).with_name("aimos")  # the console script the install made


def _aimos(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(AIMOS), *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("shell", "marker"),
    [
        ("bash", "complete -o default -F _aimos_completion aimos"),
        ("zsh", "#compdef aimos"),
        ("fish", "complete --command aimos"),
    ],
)
def test_each_shell_gets_its_script(shell: str, marker: str) -> None:
    done = _aimos({"_AIMOS_COMPLETE": f"source_{shell}"})
    assert done.returncode == 0, done.stderr
    assert marker in done.stdout


def test_the_scripts_requests_complete_commands_and_options() -> None:
    bash = _aimos({"_AIMOS_COMPLETE": "complete_bash", "COMP_WORDS": "aimos rec", "COMP_CWORD": "1"})
    assert bash.stdout.split() == ["recall", "receipt"]
    option = _aimos(
        {"_AIMOS_COMPLETE": "complete_bash", "COMP_WORDS": "aimos recall --li", "COMP_CWORD": "2"}
    )
    assert option.stdout.split() == ["--limit"]
    zsh = _aimos({"_AIMOS_COMPLETE": "complete_zsh", "_TYPER_COMPLETE_ARGS": "aimos rec"})
    assert '"recall"' in zsh.stdout and '"receipt"' in zsh.stdout
    fish = _aimos(
        {
            "_AIMOS_COMPLETE": "complete_fish",
            "_TYPER_COMPLETE_ARGS": "aimos rec",
            "_TYPER_COMPLETE_FISH_ACTION": "get-args",
        }
    )
    assert [line.split("\t")[0] for line in fish.stdout.splitlines()] == ["recall", "receipt"]


def test_help_names_the_completion_options() -> None:
    done = _aimos({}, "--help")
    assert "--install-completion" in done.stdout and "--show-completion" in done.stdout
