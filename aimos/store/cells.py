"""Reading a cell of the brain as text, whatever it holds, and texts stored deflated (pure)."""

from __future__ import annotations

import zlib

from aimos.vocabulary import RECALL_RECEIPT_OPERATION


def text_of(value: object) -> str:
    """A cell read as ``CAST(x AS BLOB)`` (so damaged, non-UTF-8 text cannot fail to decode) as
    text for a message, with undecodable bytes replaced."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    return "" if value is None else str(value)


# --- a text stored deflated (migration 11) ------------------------------------------------------
# A recall's decision (its candidates, a few hundred bytes each) is stored deflated: about a sixth
# of its bytes. What is hashed, signed and sealed stays the text itself (the seals read it back
# through aimos_inflate), so the stored form can change without touching a proof.
# A stored text inflates to at most this, and to at most INFLATED_RATIO times its stored size: a
# decision of 200 candidates is about 40 KB and deflates about sixfold, so neither bound is near, and
# a crafted bomb costs a verification at most 64 times the bytes an attacker wrote.
INFLATED_LIMIT = 1024 * 1024
INFLATED_RATIO = 64


def deflate_text(text: str) -> bytes:
    """``text`` as stored deflated (zlib, level 6: a recall decision to about a sixth, 0.1 ms)."""
    return zlib.compress(text.encode("utf-8"), 6)


def inflate_bytes(data: object) -> bytes | None:
    """The UTF-8 text bytes ``data`` (as ``deflate_text`` stored them) inflate to; None when it is
    not one whole zlib stream, would inflate past ``INFLATED_LIMIT`` or ``INFLATED_RATIO`` times
    its size, or is not UTF-8 (so the seals' reading and ``stored_text`` agree)."""
    if not isinstance(data, bytes | bytearray | memoryview):
        return None
    data = bytes(data)
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(data, min(INFLATED_LIMIT, INFLATED_RATIO * len(data)) or 1)
    except zlib.error:
        return None
    if inflater.unconsumed_tail or not inflater.eof or inflater.unused_data:
        return None
    try:
        out.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return out


def stored_text(text: object, deflated: object) -> str | None:
    """The text a cell pair holds: ``text`` as is when nothing is stored ``deflated`` (every row
    before migration 11), else the deflated text beside an empty ``text``. None for any other
    pair (an edit made outside aimos), or deflated bytes that are not UTF-8 text."""
    if deflated is None:
        return text if isinstance(text, str) else None
    data = inflate_bytes(deflated) if text == "" else None
    return None if data is None else data.decode("utf-8")


# --- an event's signed body stored deflated (migration 14) ---------------------------------------
# A recall's `recall_receipt` events (the native one and its V2-shaped child) carry the evidence,
# hashes and occurrences of the recall: most of a recall's bytes, in canonical JSON whose keys and
# repeated hex deflate to about two fifths. Only these events are stored deflated; every other
# operation's body stays text (the SQL that reads their fields with json_extract reads it as is),
# and a body of another operation stored deflated reads as nothing, so the seals name the row.
DEFLATED_EVENT_OPERATIONS = frozenset({RECALL_RECEIPT_OPERATION})


def event_body(operation: object, text: object, deflated: object) -> str | bytes | None:
    """The signed body an ``events`` row stands for: ``text`` as is when nothing is stored
    ``deflated`` (every event before migration 14, every event of another operation since), else
    the deflated body beside an empty text, for a recall's event only. None for any other triple.
    ``text`` may be given as its bytes (the seals read a damaged, non-UTF-8 body so), and then
    comes back as bytes. The SQL function ``aimos_event_body`` is this function."""
    if deflated is None:
        return text if isinstance(text, str | bytes) else None
    if operation not in DEFLATED_EVENT_OPERATIONS or text not in ("", b""):
        return None
    data = inflate_bytes(deflated)
    return None if data is None else data.decode("utf-8")
