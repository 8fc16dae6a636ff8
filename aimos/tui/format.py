"""Pure text helpers for the TUI: times, first lines, the memory list's column layout, the
weight trajectory chart, and stored text made safe to draw. No Textual, no I/O (tested on their
own).

Stored text (a memory's value, key, type, scope, source, an agent id, a reason, a query) reaches
the screen only through ``plain`` and ``plain_line`` (rich Text, never markup: "[bold]" or
"[link=...]" in a memory stays as typed) or through ``first_line``/``cell``: control characters
and escape sequences are shown escaped (aimos.terminal), never sent to the terminal.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from rich.text import Text

from aimos.actions.labels import label_short
from aimos.memory.redaction import shown_text
from aimos.memory.versions import created_time
from aimos.terminal import first_line as one_line
from aimos.terminal import visible, visible_line

BLOCKS = " ▁▂▃▄▅▆▇█"


def when(ts: int | None, *, seconds: bool = False) -> str:
    """A UTC time as the CLI prints it (no local time zone, so screens read the same anywhere)."""
    if ts is None:
        return "-"
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d %H:%M:%SZ" if seconds else "%Y-%m-%d %H:%M")


def first_line(text: str | None, width: int) -> str:
    """The first line of stored text, escaped, cut to ``width`` with an ellipsis."""
    line = one_line(text)
    if width <= 0:
        return ""
    return line if len(line) <= width else line[: width - 1] + "…"


def plain(text: object, style: str = "") -> Text:
    """Stored text as drawn: its lines kept, controls escaped, no markup read."""
    return Text(visible(str(text)), style=style)


def plain_line(text: object, style: str = "") -> Text:
    """Stored text for one line (a field, a table cell): newlines and tabs escaped too."""
    return Text(visible_line(str(text)), style=style)


def cells(*values: object) -> list[Text]:
    """A table row of stored values as one-line Text (a str cell of a rich Table or a DataTable
    would be read as markup); a Text already made is kept."""
    return [v if isinstance(v, Text) else plain_line(v) for v in values]


def fit(text: str, width: int) -> str:
    """Exactly ``width`` characters: cut with an ellipsis or padded with spaces."""
    if width <= 0:
        return ""
    return text.ljust(width) if len(text) <= width else text[: width - 1] + "…"


@dataclass(frozen=True)
class Column:
    name: str
    title: str
    width: int  # 0: takes the rest


# in the order they appear; the ones a narrow terminal drops first come last in OPTIONAL
_ALL = {
    "id": Column("id", "id", 8),
    "key": Column("key", "key", 18),
    "type": Column("type", "type", 10),  # every title is shorter than its width: room for ▲/▼
    "label": Column("label", "label", 16),
    "weight": Column("weight", "weight", 7),
    "clearance": Column("clearance", "clr", 4),
    "created": Column("created", "created", 16),
    "text": Column("text", "memory", 0),
}
ESSENTIAL = ("id", "label", "weight", "text")
OPTIONAL = ("type", "clearance", "created", "key")
MIN_TEXT = 20


def layout(width: int) -> list[Column]:
    """The columns that fit ``width`` cells (one space between columns), text taking the rest."""
    chosen = set(ESSENTIAL)
    used = sum(_ALL[c].width + 1 for c in ESSENTIAL if c != "text")
    for name in OPTIONAL:
        if used + _ALL[name].width + 1 + MIN_TEXT <= width:
            chosen.add(name)
            used += _ALL[name].width + 1
    columns = [c for name, c in _ALL.items() if name in chosen]
    rest = max(width - used, 1)
    return [Column(c.name, c.title, rest) if c.name == "text" else c for c in columns]


def cell(column: str, memory: dict[str, Any], *, with_key: bool) -> str:
    """One memory's value for one column of the list."""
    if column == "id":
        return visible_line(str(memory["memory_id"])[:8])
    if column == "key":
        return visible_line(memory["key"] or "-")
    if column == "type":
        return visible_line(str(memory["memory_type"]))
    if column == "label":
        return visible_line(label_short(str(memory["epistemic_label"])))
    if column == "weight":
        return f"{memory['retrieval_weight_milli'] / 1000:.3f}"
    if column == "clearance":
        return str(memory["clearance_level"])
    if column == "created":
        return when(created_time(memory))
    text = first_line(shown_text(memory), 10_000)
    text = f"{visible_line(memory['key'])} · {text}" if with_key and memory["key"] else text
    return f"(superseded) {text}" if memory.get("superseded") else text


def row_text(columns: list[Column], memory: dict[str, Any]) -> str:
    show_key = not any(c.name == "key" for c in columns)
    return " ".join(fit(cell(c.name, memory, with_key=show_key), c.width) for c in columns)


def header_text(columns: list[Column], sort: str, descending: bool) -> str:
    arrow = "▼" if descending else "▲"
    return " ".join(fit(c.title + (arrow if c.name == sort else ""), c.width) for c in columns)


def trajectory_points(trajectory: dict[str, Any]) -> list[int]:
    """The weight (milli) after each step, starting with the initial weight; outcomes that moved
    nothing repeat the weight so every piece of evidence has its place on the chart."""
    points = [int(trajectory["start"]["weight_milli"])]
    for step in trajectory["steps"]:
        points.append(int(step["new_weight_milli"]) if step["new_weight_milli"] is not None else points[-1])
    return points


def chart(points: list[int], *, height: int = 4, width: int = 60) -> list[str]:
    """A small column chart of weights (milli, 100..3000), newest on the right, scaled between the
    lowest and highest point (a flat line sits in the middle). At most ``width`` columns: the
    newest points are kept. Each point is two cells wide when there is room."""
    if not points:
        return []
    shown = points[-width:]
    lo, hi = min(shown), max(shown)
    levels = height * 8
    scale = [(levels // 2 if hi == lo else 1 + round((p - lo) * (levels - 1) / (hi - lo))) for p in shown]
    cell_width = 2 if len(shown) * 2 <= width else 1
    lines = []
    for row in range(height - 1, -1, -1):
        base = row * 8
        chars = []
        for level in scale:
            fill = min(max(level - base, 0), 8)
            chars.append(BLOCKS[fill] * cell_width)
        lines.append("".join(chars).rstrip() or " ")
    return lines
