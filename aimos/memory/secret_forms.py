"""The forms of a text the secret gate looks at, each mapped back to the text as given, and the
finding a shape rule gives (pure).

normalised: NFKC per character (full-width letters become ASCII), invisible characters dropped,
ASCII %XX escapes decoded; joined: line breaks and the spaces around them removed; wrapped: the
base64 and hex runs that decode to text, decoded.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass

B64_RUN = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/=_-])")
_HEX_RUN = re.compile(r"(?<![0-9A-Za-z])(?:[0-9a-fA-F]{2}){12,}(?![0-9A-Za-z])")


def b64_bytes(run: str) -> bytes | None:
    raw = run.rstrip("=")
    raw += "=" * (-len(raw) % 4)
    try:
        if "-" in raw or "_" in raw:
            return base64.urlsafe_b64decode(raw)
        return base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        return None


Lazy = Callable[[], "re.Pattern[str]"]


def lazy(pattern: str) -> Lazy:
    """A pattern compiled when first asked for: the gate's rules hold a hundred patterns, which
    cost a process some 40 ms to compile, and a text that mentions none of a rule's words never
    asks for that rule's."""
    return functools.cache(functools.partial(re.compile, pattern))


@dataclass(frozen=True)
class Finding:
    """A secret shape: its kind (words for a person) and its span in the text, never the text."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class Form:
    """A text derived from the original, with the original index of each of its characters
    (``origin`` None: the text is the original)."""

    name: str
    text: str
    origin: tuple[int, ...] | range | None

    def span(self, start: int, end: int) -> tuple[int, int]:
        origin = self.origin if self.origin is not None else range(len(self.text))
        if not origin:
            return 0, 0
        last = origin[min(end, len(origin)) - 1] + 1 if end > 0 else 0
        return origin[min(start, len(origin) - 1)], last


_ASCII_ESCAPE = re.compile(r"[0-7][0-9A-Fa-f]")
_INVISIBLE = frozenset("\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u3164\uffa0")


def _invisible(ch: str) -> bool:
    return ch in _INVISIBLE or unicodedata.category(ch) == "Cf"


def normalised(text: str) -> Form:
    """NFKC per character (full-width letters become ASCII), invisible characters (zero-width,
    soft hyphen, direction marks) dropped, ASCII %XX escapes decoded."""
    if text.isascii() and "%" not in text and not any(_invisible(c) for c in set(text)):
        return Form("normalised", text, None)  # most texts: nothing to undo
    chars: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        if _invisible(ch):
            continue
        for c in unicodedata.normalize("NFKC", ch) if ord(ch) > 0x7F else ch:
            chars.append(c)
            origin.append(i)
    out_chars: list[str] = []
    out_origin: list[int] = []
    i = 0
    while i < len(chars):
        escape = "".join(chars[i + 1 : i + 3]) if chars[i] == "%" else ""
        if _ASCII_ESCAPE.fullmatch(escape):
            out_chars.append(chr(int(escape, 16)))
            out_origin.append(origin[i])
            i += 3
            continue
        out_chars.append(chars[i])
        out_origin.append(origin[i])
        i += 1
    return Form("normalised", "".join(out_chars), tuple(out_origin))


def joined(form: Form) -> Form:
    """The lines joined: each line break, with the spaces around it, removed (a key split over
    lines becomes one run again)."""
    text = form.text
    whole = form.origin if form.origin is not None else range(len(text))
    pieces: list[str] = []
    origin: list[int] = []
    at = 0
    for m in _LINE_BREAK.finditer(text):
        pieces.append(text[at : m.start()])
        origin.extend(whole[at : m.start()])
        at = m.end()
    if at == 0:
        return Form("joined", text, form.origin)
    pieces.append(text[at:])
    origin.extend(whole[at:])
    return Form("joined", "".join(pieces), tuple(origin))


_LINE_BREAK = re.compile(r"[ \t]*(?:\r?\n|\\n)[ \t]*")


# decoded base64 or hex is scanned when it reads as text: mostly printable, valid UTF-8
def _as_text(data: bytes) -> str | None:
    if len(data) < 12:
        return None
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(1 for c in decoded if c.isprintable() or c in "\n\r\t")
    return decoded if printable >= 0.9 * len(decoded) else None


def wrapped(form: Form) -> Iterator[tuple[str, str, int, int]]:
    """(how it was wrapped, decoded text, start, end in ``form``) for each base64 or hex run that
    decodes to text."""
    for m in _HEX_RUN.finditer(form.text):
        text = _as_text(bytes.fromhex(m.group(0)))
        if text is not None:
            yield "hex-wrapped", text, m.start(), m.end()
    for m in B64_RUN.finditer(form.text):
        data = b64_bytes(m.group(0))
        text = _as_text(data) if data is not None else None
        if text is not None:
            yield "base64-wrapped", text, m.start(), m.end()
