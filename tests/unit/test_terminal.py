"""aimos.terminal: stored text made safe to show on a terminal, and JSON that keeps it exact."""

from __future__ import annotations

import json
import sys
import unicodedata

from aimos.terminal import escape, first_line, json_escaped, visible, visible_line

HOSTILE = (
    "clear \x1b[2J\x1b[H title \x1b]0;pwned\x07 link \x1b]8;;https://evil.example/\x1b\\here\x1b]8;;\x1b\\"
    " csi \x9b31m bidi \u202eevil\u202c isolate \u2066x\u2069 zw a\u200bb tag \U000e0041"
    " [bold red]markup[/] [link=https://evil.example/]x[/link] del \x7f cr \r bs \x08 nul \x00"
)

# everything a terminal may obey or that hides or reorders text: must never come out as it is
DANGEROUS = {chr(c) for c in (*range(0x00, 0x20), *range(0x7F, 0xA0))} | {
    "\u061c", "\u200b", "\u200e", "\u200f", "\u2028", "\u2029", "\ufeff", "\u00ad",
    *map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2060, 0x2065)), *map(chr, range(0x2066, 0x2070)),
    *map(chr, range(0xE0000, 0xE0080)),
}  # fmt: skip


def raw_dangerous(text: str, *, keep: str = "") -> set[str]:
    return {c for c in text if c in DANGEROUS and c not in keep}


def test_controls_escape_sequences_and_bidi_are_shown_escaped() -> None:
    shown = visible(HOSTILE)
    assert raw_dangerous(shown, keep="\n\t") == set()
    for escaped in (
        "\\x1b[2J\\x1b[H",
        "\\x1b]0;pwned\\x07",
        "\\x9b31m",
        "\\u202eevil\\u202c",
        "\\u2066x\\u2069",
    ):
        assert escaped in shown
    assert "a\\u200bb" in shown and "\\U000e0041" in shown
    assert "\\x7f" in shown and "\\r" in shown and "\\x08" in shown and "\\x00" in shown
    # markup is text: the front ends never read it as markup, and it is not altered here
    assert "[bold red]markup[/]" in shown and "[link=https://evil.example/]x[/link]" in shown


def test_newline_and_tab_are_kept_in_multi_line_text_and_escaped_on_one_line() -> None:
    text = "first\tcolumn\nsecond line"
    assert visible(text) == text
    assert visible_line(text) == "first\\tcolumn\\nsecond line"
    assert "\n" not in visible_line(HOSTILE + "\n\n") and "\t" not in visible_line("a\tb")


def test_ordinary_text_is_unchanged() -> None:
    text = "Café · naïve — 東京 · עברית · مرحبا · emoji 👨\u200d👩\u200d👧 ZWNJ می\u200cخواهم · C:\\Users\\x \\d+"
    assert visible(text) == text == visible_line(text)


def test_a_backslash_stays_and_escaping_twice_changes_nothing() -> None:
    assert visible("C:\\temp\\x1b") == "C:\\temp\\x1b"  # a literal backslash is kept as typed
    for text in (HOSTILE, "a\nb\tc", "\\x1b"):
        assert visible(visible(text)) == visible(text)
        assert visible_line(visible_line(text)) == visible_line(text)
        assert visible_line(visible(text)) == visible_line(text)


def test_escape_forms() -> None:
    assert [escape(c) for c in "\t\n\r\x1b\x9b\u202e\U000e0041"] == [
        "\\t", "\\n", "\\r", "\\x1b", "\\x9b", "\\u202e", "\\U000e0041",
    ]  # fmt: skip


def test_every_unicode_control_and_format_character_is_escaped() -> None:
    """Against this Python's Unicode database: every Cc, Cf, Zl, Zp and surrogate code point is
    escaped, but for the newline and tab (kept in multi-line text) and ZWNJ/ZWJ (needed by scripts
    and emoji). A newer Unicode that adds a format character fails here until it is listed."""
    kept = {"\n", "\t", "\u200c", "\u200d"}
    missed = []
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if char in kept or unicodedata.category(char) not in ("Cc", "Cf", "Zl", "Zp", "Cs"):
            continue
        if visible(char) == char:
            missed.append(f"U+{code:04X}")
    assert missed == []
    assert visible("\u200c\u200d") == "\u200c\u200d"


def test_first_line_takes_the_text_up_to_the_first_newline_only() -> None:
    assert first_line("  one\ntwo") == "one"
    assert first_line("windows\r\nline") == "windows"
    # a lone CR, form feed or line separator does not cut the line (it would hide what follows)
    assert first_line("shown\rhidden") == "shown\\rhidden"
    assert first_line("a\u2028b\x0cc") == "a\\u2028b\\x0cc"
    assert first_line("\x1b[2J\nrest") == "\\x1b[2J"
    assert first_line(None) == first_line("") == ""


def test_json_keeps_the_exact_text_with_no_raw_control() -> None:
    doc = {"value": HOSTILE + "\u2028\ud800 astral \U0001f600", "list": ["\x85", "\u202e"]}
    dumped = json_escaped(json.dumps(doc, indent=2, ensure_ascii=False))
    assert raw_dangerous(dumped, keep="\n") == set()
    assert "\U0001f600" in dumped and "\\u202e" in dumped and "\\udb40\\udc41" in dumped
    assert json.loads(dumped) == doc
