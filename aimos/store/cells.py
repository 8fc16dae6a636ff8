"""Reading a cell of the brain as text for a message, whatever it holds (pure)."""

from __future__ import annotations


def text_of(value: object) -> str:
    """A cell read as ``CAST(x AS BLOB)`` (so damaged, non-UTF-8 text cannot fail to decode) as
    text for a message, with undecodable bytes replaced."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    return "" if value is None else str(value)
