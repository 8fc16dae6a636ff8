"""Output helpers: stdout carries data, stderr carries talk.

Everything said or printed here goes through `aimos.terminal`: a control character or escape
sequence in stored text (any agent can save one) is shown escaped, never obeyed by the terminal.
Table cells and first lines are one-line views (a newline in them is shown as ``\\n``); JSON keeps
the exact text, with those characters as JSON escapes."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

from aimos import terminal


def emit_json(value: Any) -> None:
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
    sys.stdout.write(terminal.json_escaped(text) + "\n")


def out(text: str = "") -> None:
    sys.stdout.write(terminal.visible(text) + "\n")


def say(text: str) -> None:
    """A line of talk on stderr, after whatever data is already written: stdout is flushed first,
    so with both streams in one file (`> log 2>&1`) the lines keep the order they were said in."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # nobody reads stdout any more: the talk still goes to stderr
        pass
    sys.stderr.write(terminal.visible(text) + "\n")
    sys.stderr.flush()


class PhaseProgress:
    """A progress line for work in ``total`` steps, told ``(done, phase)`` as each starts and
    ``count(items, of)`` as a step's items go (shown after the phase: "1,500/10,000");
    terminal.draw_progress: on a terminal only, wiped when the work is done."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None) -> None:
        self.total, self.label, self.stream = total, label, stream
        self.done, self.phase = 0, ""

    def __call__(self, done: int, phase: str) -> None:
        self.done, self.phase = done, phase
        terminal.draw_progress(done, self.total, self.label, phase, self.stream)

    def count(self, items: int, of: int) -> None:
        note = f"{self.phase} {items:,}/{of:,}"
        terminal.draw_progress(self.done, self.total, self.label, note, self.stream)


def phase_progress(total: int, label: str, stream: TextIO | None = None) -> PhaseProgress:
    """A progress line for work in ``total`` steps (see PhaseProgress)."""
    return PhaseProgress(total, label, stream)


def when(ts: int | None) -> str:
    if ts is None:
        return "-"
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def first_line(text: str | None, width: int = 60) -> str:
    """The first line of stored text for a one-line view: escaped, then cut to ``width``."""
    line = terminal.first_line(text)
    return line if len(line) <= width else line[: width - 1] + "…"


def line(text: object) -> str:
    """A stored value for a place on one line (a field, a reason): newlines and tabs escaped too."""
    return terminal.visible_line(str(text))


def readable(value: object, nested: bool = False) -> str:
    """A job's detail for a person rather than a Python repr: a mapping as "key value" pairs, a
    list as its items, True and False as yes and no, "none" when empty; a container inside another
    in parentheses. Not escaped: pass the result through ``line``."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        shown = ", ".join(f"{k} {readable(v, True)}" for k, v in value.items()) or "none"
    elif isinstance(value, list | tuple):
        shown = ", ".join(readable(v, True) for v in value) or "none"
    else:
        return "-" if value is None else str(value)
    return f"({shown})" if nested else shown


def table(headers: list[str], body: list[list[str]]) -> str:
    """Columns padded to their widest cell; every cell is a one-line view, escaped before it is
    measured (so the columns line up with what is shown)."""
    body = [[terminal.visible_line(c) for c in row] for row in body]
    widths = [len(h) for h in headers]
    for row in body:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in body]
    return "\n".join(lines)


def ask(question: str, *, no_terminal: str, yes_hint: str) -> None:
    """A yes/no question at the terminal before something that cannot be undone: no (or Enter) is
    AbortedError (exit 8), and without a terminal UsageError (``no_terminal``, exit 2): then
    ``yes_hint`` says how to give the answer beforehand (--yes). Nothing was changed either way."""
    import typer

    from aimos.errors import AbortedError, UsageError

    if not sys.stdin.isatty():
        raise UsageError(no_terminal, yes_hint)
    try:
        agreed = typer.confirm(question, default=False, err=True)
    except typer.Abort:
        raise KeyboardInterrupt from None
    if not agreed:
        raise AbortedError("you answered no: nothing was changed", f"Run it again and answer y. {yes_hint}")


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
