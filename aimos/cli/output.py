"""Output helpers: stdout carries data, stderr carries talk."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from typing import Any


def emit_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def say(text: str) -> None:
    """A line of talk on stderr, after whatever data is already written: stdout is flushed first,
    so with both streams in one file (`> log 2>&1`) the lines keep the order they were said in."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # nobody reads stdout any more: the talk still goes to stderr
        pass
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def when(ts: int | None) -> str:
    if ts is None:
        return "-"
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def first_line(text: str, width: int = 60) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"


def table(headers: list[str], body: list[list[str]]) -> str:
    widths = [len(h) for h in headers]
    for row in body:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in body]
    return "\n".join(lines)


def read_confirmation(expected: str) -> str:
    """A typed confirmation (purge, redact): at the terminal's prompt, else the next line of stdin.
    Ctrl-C at the prompt is an interruption (exit 130, nothing changed)."""
    import typer

    if sys.stdin.isatty():
        try:
            typed = typer.prompt(
                f"Type exactly `{expected}` to confirm", default="", show_default=False, err=True
            )
        except typer.Abort:
            raise KeyboardInterrupt from None
        return str(typed)
    return sys.stdin.readline().rstrip("\r\n")
