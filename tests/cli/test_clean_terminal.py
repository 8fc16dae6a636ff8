"""Clean terminals (issue 18, item 5), through the real `aimos` in subprocesses: memory text,
fields, reasons and queries holding escape sequences, control characters, bidi overrides and
markup are shown escaped by every human view (list, list --history, recall, show, the label
history, receipts, errors), and `--json` gives back the exact text."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.cli import Result, run_aimos

pytestmark = pytest.mark.timeout(180)

# a screen clear and cursor home, a window-title OSC, an OSC-8 hyperlink, an 8-bit CSI, a
# backspace and a carriage return (which overwrite what was printed), a bidi override and
# isolate, a zero-width space, DEL, and Rich/Textual markup
HOSTILE = (
    "boiler \x1b[2J\x1b[H note \x1b]0;pwned\x07 link \x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"
    " csi \x9b31m red bs\x08\x08 cr\rverifies: yes bidi \u202eevil\u202c iso \u2066x\u2069"
    " zw a\u200bb del\x7f [bold red]markup[/] [link=https://evil.example/]x[/link]"
)
SECOND_LINE = "\nsecond line \x1b[31m"
# what must never reach the terminal as it is (a newline and a tab may: multi-line views keep them)
RAW = {chr(c) for c in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))} | set(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\u200e\u200f\u2028\u2029\ufeff"
)
ESCAPED = ("\\x1b[2J\\x1b[H", "\\x1b]0;pwned\\x07", "\\x9b31m", "\\u202eevil\\u202c", "\\x08\\x08", "\\r")


def aimos(*args: str, stdin: bytes = b"") -> Result:
    """`aimos ARGS`, its output read as the UTF-8 bytes it wrote (bytes in, so no text decoding
    of the child's output can hide a control character)."""
    return run_aimos(*args, input=stdin)


def assert_clean(result: Result, *must_show: str) -> None:
    result.ok()
    raw = sorted({f"U+{ord(c):04X}" for c in result.out + result.err if c in RAW})
    assert raw == [], f"raw control or format characters reached the terminal: {raw}\n{result.describe()}"
    for shown in must_show:
        assert shown in result.out, f"{shown!r} is not shown\n{result.describe()}"


def one_line_views(result: Result, memory_id: str) -> list[str]:
    """The lines of a list/recall table that carry ``memory_id``: exactly one (no stored newline
    starts a row of its own)."""
    lines = [line for line in result.out.splitlines() if memory_id[:8] in line]
    assert len(lines) == 1, result.describe()
    return lines


def test_every_human_view_shows_stored_text_escaped_and_json_keeps_it_exact(installed: Path) -> None:
    value = HOSTILE + SECOND_LINE
    key, source = "home:\x1b[31mboiler\nverifies: yes", "agent\x07\u202e"
    memory_id = aimos(
        "save", "--key", key, "--source", source, "--type", "note[/]", "--scope", "home\x1b[2J", "-",
        stdin=value.encode(),
    ).ok().out.strip()  # fmt: skip

    # list: one row, escaped, cut; --json exact
    listed = aimos("list")
    assert_clean(listed, "\\x1b[2J\\x1b[H", "note[/]")
    assert "second line" not in listed.out  # a one-line view shows the first line only
    one_line_views(listed, memory_id)
    assert aimos("list", "--json").json()["memories"][0]["value"] == value

    # show: the value's lines kept, every field on its one line
    shown = aimos("show", memory_id)
    assert_clean(shown, *ESCAPED, "[bold red]markup[/]", "second line \\x1b[31m")
    assert "home:\\x1b[31mboiler\\nverifies: yes" in shown.out
    assert "agent\\x07\\u202e" in shown.out and "home\\x1b[2J" in shown.out
    assert not any(line.startswith("verifies: yes") for line in shown.out.splitlines())
    detail = aimos("show", memory_id, "--json").json()
    assert (detail["value"], detail["key"], detail["source"]) == (value, key, source)
    assert (detail["memory_type"], detail["scope"]) == ("note[/]", "home\x1b[2J")

    # recall: the result row escaped; the query kept exact in the receipt's JSON
    query = "boiler \x1b]0;pwned\x07 note"
    recalled = aimos("recall", query)
    assert_clean(recalled, "\\x1b[2J\\x1b[H")
    one_line_views(recalled, memory_id)
    as_json = aimos("recall", query, "--json").json()
    assert as_json["results"][0]["value"] == value
    receipt_id = as_json["receipt"]["receipt_id"]
    assert_clean(aimos("receipt", "show", receipt_id), "boiler \\x1b]0;pwned\\x07 note")
    assert_clean(aimos("receipt", "list"), "boiler \\x1b]0;pwned\\x07 note")
    assert aimos("receipt", "show", receipt_id, "--json").json()["command"]["query"] == query

    # a judgment's reason: kept exact, shown escaped on its line of the label history
    reason = "doubtful \x1b[2J\nverifies: yes \u202e"
    label = aimos("label", memory_id, "dispute", "--reason", reason)
    assert_clean(label)
    history = aimos("show", memory_id)
    assert_clean(history, "doubtful \\x1b[2J\\nverifies: yes \\u202e")
    assert not any(line.startswith("verifies: yes") for line in history.out.splitlines())
    assert aimos("show", memory_id, "--json").json()["label_history"][-1]["reason"] == reason

    # a correction, and the list with --history: both versions, each on one line, escaped
    corrected = HOSTILE.replace("boiler", "boiler fixed")
    new_id = aimos("correct", memory_id, "-", stdin=corrected.encode()).ok().out.strip()
    with_history = aimos("list", "--history")
    assert_clean(with_history, "boiler fixed \\x1b[2J")
    one_line_views(with_history, memory_id)
    one_line_views(with_history, new_id)
    assert {m["value"] for m in aimos("list", "--history", "--json").json()["memories"]} == {value, corrected}

    # the other views that print stored text: status, verify, the receipt's verdict
    for args in (("status",), ("verify",), ("receipt", "verify", receipt_id)):
        assert_clean(aimos(*args))


def test_json_output_holds_no_raw_control_and_reads_back_exact(installed: Path) -> None:
    """`--json` is safe on a terminal too: the characters a terminal would obey are JSON escapes
    (C0 ones always were; DEL, C1, bidi and zero-width ones are now), and parsing gives back the
    exact bytes that were saved."""
    value = HOSTILE + "\x85 nel \u2028 ls \U000e0041 tag"
    memory_id = aimos("save", "-", stdin=value.encode()).ok().out.strip()
    views: dict[tuple[str, ...], Callable[[dict[str, Any]], str]] = {
        ("show", memory_id, "--json"): lambda doc: doc["value"],
        ("list", "--json"): lambda doc: doc["memories"][0]["value"],
        ("recall", "boiler note", "--json"): lambda doc: doc["results"][0]["value"],
    }
    for args, text_in in views.items():
        result = aimos(*args)
        assert_clean(result, "\\u001b[2J", "\\u202e", "\\u009b31m", "\\u0085", "\\u2028", "\\udb40\\udc41")
        assert text_in(json.loads(result.out)).encode("utf-8") == value.encode("utf-8"), args


def test_an_error_quoting_what_was_typed_shows_it_escaped(installed: Path) -> None:
    result = aimos("show", "\x1b[2J\u202e")
    assert result.code != 0
    raw = {c for c in result.out + result.err if c in RAW}
    assert raw == set(), result.describe()
