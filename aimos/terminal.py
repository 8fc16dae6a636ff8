"""Stored text made safe to show on a terminal: what cannot be seen is shown escaped.

Any agent can save any text, and the CLI and the TUI show it to a person. A terminal obeys the
control characters in what it is given: ``\\x1b[2J`` clears the screen, ``\\x1b]0;...\\x07`` sets
the window title, ``\\x1b]8;;URL\\x07`` makes a hidden link, a carriage return or backspaces
overwrite what was printed before (a memory could print "verifies: yes" over a failure), and a
bidi override (U+202E) makes text read in another order than it is stored. So every character
that is not itself visible text is shown as its escape, visibly:

- every C0 control except the newline and (in multi-line views) the tab, DEL, every C1 control
  (U+0080..U+009F: a terminal may take U+009B as the start of an escape sequence);
- the Unicode format characters (category Cf): the bidi embeddings, overrides, isolates and marks,
  the zero-width space, word joiner, invisible operators, BOM, soft hyphen, interlinear annotation
  and the tag characters (U+E0000.., which smuggle invisible ASCII); not the zero-width joiner
  and non-joiner (U+200D, U+200C), which emoji sequences and Persian and Indic scripts need and
  which move or hide nothing;
- the line and paragraph separators (U+2028, U+2029) and lone surrogates (not text; printing one
  fails).

The escapes are Python's: ``\\n``, ``\\t``, ``\\r``, else ``\\xNN``, ``\\uNNNN``, ``\\UNNNNNNNN``.
A backslash already in the text stays as it is: code, paths and regexes keep reading naturally,
and escaping twice changes nothing (``visible(visible(t)) == visible(t)``), so a front end may
escape a field and the line it goes in. The price is that a stored ``\\x1b`` (four characters)
looks like an escaped ESC; ``--json`` gives the exact text, which tells them apart.

A tab is kept where text keeps its lines (it moves the cursor to the next tab stop and rewrites
nothing), and escaped in one-line views, where it would break the columns. Rich or Textual markup
(``[bold]``, ``[link=...]``) is plain text here; the TUI draws stored text as Text objects, never
as markup.

JSON output (``--json``) keeps the exact text: ``json_escaped`` writes the same characters as JSON
``\\uNNNN`` escapes, which any JSON reader turns back into the original string.

Pure functions, no imports of aimos: a common module (the CLI, the TUI, the installer and the
housekeeper's log all use it).
"""

from __future__ import annotations

import functools
import re
import sys
from typing import TextIO

# the kept: "\n" always, "\t" in multi-line views (see _UNSEEN_LINE)
_C0_DEL_C1 = "\x00-\x08\x0b-\x1f\x7f-\x9f"
_FORMAT = (
    "\u00ad"  # soft hyphen
    "\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2"  # Arabic/Syriac format marks, ALM
    "\u180e"  # Mongolian vowel separator
    "\u200b\u200e\u200f"  # zero-width space, LRM, RLM (not ZWNJ U+200C, ZWJ U+200D)
    "\u2028-\u202e"  # line and paragraph separators; bidi embeddings and overrides
    "\u2060-\u2064\u2066-\u206f"  # word joiner, invisible operators; bidi isolates; deprecated
    "\ufeff\ufff9-\ufffb"  # BOM / zero-width no-break space; interlinear annotation
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f"  # language tag, tag characters
    "\ud800-\udfff"  # lone surrogates
)
_UNSEEN = f"[{_C0_DEL_C1}{_FORMAT}]"
_UNSEEN_LINE = f"[\t\n{_C0_DEL_C1}{_FORMAT}]"


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """_UNSEEN or _UNSEEN_LINE, compiled the first time a text needs it (printable ASCII, most of
    what a command prints, never does: see _plain)."""
    return re.compile(pattern)


def _plain(text: str) -> bool:
    """True when ``text`` is printable ASCII (U+0020..U+007E) alone: nothing in it is escaped."""
    return text.isascii() and text.isprintable()


_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def escape(char: str) -> str:
    """One character as its visible escape."""
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _escaped(match: re.Match[str]) -> str:
    return escape(match.group())


def visible(text: str) -> str:
    """``text`` for a terminal, lines kept: every control and invisible format character escaped,
    newlines and tabs left as they are."""
    return text if _plain(text) else _compiled(_UNSEEN).sub(_escaped, text)


def visible_line(text: str) -> str:
    """``text`` for one line of a terminal (a table cell, a field, a reason): as ``visible``, with
    newlines and tabs escaped too, so nothing stored can start a line of its own."""
    return text if _plain(text) else _compiled(_UNSEEN_LINE).sub(_escaped, text)


def first_line(text: str | None) -> str:
    """The first line of ``text`` (surrounding blanks removed), as a one-line view shows it. Only a
    newline ends a line (a CRLF's CR goes with it): a lone CR, a form feed or U+2028 is shown
    escaped rather than taken as a line break that hides what follows it."""
    stripped = (text or "").strip()
    line = stripped.split("\n", 1)[0]
    return visible_line(line[:-1] if line.endswith("\r") else line)


def json_escaped(dumped: str) -> str:
    """JSON text (``json.dumps`` with ``ensure_ascii=False``) with every character ``visible``
    escapes written as a JSON ``\\uNNNN`` escape instead (a pair of them past U+FFFF). JSON's own
    syntax is ASCII, so these can only be inside strings, and reading the JSON gives back the
    exact text."""
    return dumped if _plain(dumped) else _compiled(_UNSEEN).sub(_json_escape, dumped)


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


PROGRESS_WIDTH = 20


def draw_progress(done: int, total: int, label: str, note: str = "", stream: TextIO | None = None) -> None:
    """One progress line for long work, ``done`` of ``total``: drawn in place on stderr (or
    ``stream``) when it is a terminal, and wiped once the work is done (``done >= total``); a pipe
    or a log gets nothing, its lines are data and talk only. ``note`` (a phase, a file) is shown
    escaped."""
    target = stream if stream is not None else sys.stderr
    if not target.isatty():
        return
    if done >= total:
        target.write("\r\x1b[K")  # the work is done: the line goes
    else:
        filled = PROGRESS_WIDTH * max(done, 0) // max(total, 1)
        bar = "#" * filled + "." * (PROGRESS_WIDTH - filled)
        target.write(f"\r{label} [{bar}] {done}/{total} {visible_line(note)}\x1b[K")
    target.flush()
