"""`aimos --help` and every group's --help at a normal terminal's width (issue 38 item 11).

In each help's command table, every command's summary is a whole short sentence on one line: no
"..." or "…" where Click cut it, no line wrapped under it, a capital first and a full stop last,
one sentence; and it is the first line of the command's own --help, standing alone as its first
paragraph. The groups are read from the command line itself, so a new command is held to it.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from support.cli import run_aimos

WIDTHS = (80, 100)
_ROW = re.compile(r"^  (\S+)\s{2,}(\S.*)$")


def _groups() -> list[tuple[str, ...]]:
    """The root and every group of the command line (a command with commands of its own)."""
    from aimos.cli.app import _command_tree

    found: list[tuple[str, ...]] = []

    def walk(command: Any, path: tuple[str, ...]) -> None:
        if getattr(command, "commands", None):
            found.append(path)
            for name, sub in command.commands.items():
                walk(sub, (*path, name))

    walk(_command_tree(None), ())
    return found


GROUPS = _groups()


def command_table(help_text: str) -> list[tuple[str, str, list[str]]]:
    """The rows of a help's "Commands:" table: (name, summary, the lines wrapped under it)."""
    lines = help_text.splitlines()
    start = lines.index("Commands:") + 1
    rows: list[tuple[str, str, list[str]]] = []
    for text in lines[start:]:
        if not text.strip():
            break
        found = _ROW.match(text)
        if found:
            rows.append((found.group(1), found.group(2).rstrip(), []))
        else:
            assert rows, f"a table line before any command: {text!r}"
            rows[-1][2].append(text.strip())
    return rows


def description(help_text: str) -> list[str]:
    """The paragraphs of a command's --help between its usage line and its first section."""
    body = help_text.split("\n\n")
    paragraphs = []
    for block in body[1:]:
        if block.lstrip().startswith(("Arguments:", "Options:", "Commands:")):
            break
        paragraphs.append(" ".join(block.split()))
    return paragraphs


def test_every_group_is_found() -> None:
    assert {(), ("agent",), ("eval",), ("housekeeper",), ("mcp",)} <= set(GROUPS), GROUPS


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("group", GROUPS, ids=lambda g: " ".join(g) or "aimos")
def test_each_summary_is_a_whole_short_sentence(group: tuple[str, ...], width: int) -> None:
    shown = run_aimos(*group, "--help", env={"COLUMNS": str(width)}).ok()
    rows = command_table(shown.out)
    assert rows, shown.describe()
    problems = []
    for name, summary, wrapped in rows:
        if "..." in summary or "…" in summary:
            problems.append(f"{name}: cut short: {summary!r}")
        if wrapped:
            problems.append(f"{name}: does not fit on its line: {summary!r} + {wrapped}")
        whole = " ".join([summary, *wrapped])
        if not (whole[0].isupper() and whole.endswith(".")) or re.search(r"[.;:!?] [A-Z]", whole.rstrip(".")):
            problems.append(f"{name}: not one whole sentence: {whole!r}")
        own = description(run_aimos(*group, name, "--help", env={"COLUMNS": str(width)}).ok().out)
        if not own or own[0] != whole:
            problems.append(f"{name}: the summary is not its help's first paragraph: {whole!r} vs {own[:1]}")
    assert not problems, f"aimos {' '.join(group)} --help at {width} columns:\n" + "\n".join(problems)
