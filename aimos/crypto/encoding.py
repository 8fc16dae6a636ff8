"""Byte encodings of the protocol: uuid16, be32/be64, u32/u64, framing, base64url, hex, times."""

from __future__ import annotations

import base64
import binascii
import calendar
import re
import struct
import uuid
from collections.abc import Callable
from datetime import UTC, datetime

from aimos.errors import EncodingError

_B64U_ALPHABET = re.compile(r"[A-Za-z0-9_-]*")
_HEX64 = re.compile(r"[0-9a-f]{64}")


def b64u_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64u_decode(text: str) -> bytes:
    """Decode canonical unpadded base64url; anything that does not re-encode identically fails."""
    if not isinstance(text, str) or not _B64U_ALPHABET.fullmatch(text) or len(text) % 4 == 1:
        raise EncodingError("not unpadded base64url", reason="base64url_invalid")
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise EncodingError("not unpadded base64url", reason="base64url_invalid") from exc
    if b64u_encode(data) != text:
        raise EncodingError("non-canonical base64url", reason="base64url_non_canonical")
    return data


def is_hex64(text: object) -> bool:
    return isinstance(text, str) and bool(_HEX64.fullmatch(text))


def hex32(text: str) -> bytes:
    """Decode a lowercase 64-hex hash into 32 bytes (uppercase is non-canonical)."""
    if not is_hex64(text):
        raise EncodingError("hash must be 64 lowercase hex characters", reason="hash_hex_invalid")
    return bytes.fromhex(text)


def uuid16(value: str) -> bytes:
    """16 raw bytes of a UUID given in its canonical string form."""
    try:
        parsed = uuid.UUID(value)
    except (ValueError, AttributeError, TypeError) as exc:
        raise EncodingError(f"not a UUID: {value!r}", reason="uuid_invalid") from exc
    return parsed.bytes


# The protocol's fixed-width numbers, big-endian: each is its struct format's packer (the same
# bytes and the same struct.error on a number out of range as struct.pack with that format).
be32: Callable[[int], bytes] = struct.Struct(">i").pack
be64: Callable[[int], bytes] = struct.Struct(">q").pack
u16: Callable[[int], bytes] = struct.Struct(">H").pack
u32: Callable[[int], bytes] = struct.Struct(">I").pack
u64: Callable[[int], bytes] = struct.Struct(">Q").pack
float4_be: Callable[[float], bytes] = struct.Struct(">f").pack


def framed(text: str) -> bytes:
    """u32be(byte length) || UTF-8 bytes; empty strings are refused."""
    data = text.encode("utf-8")
    if not data:
        raise EncodingError("framed strings must not be empty", reason="framed_empty")
    return u32(len(data)) + data


def iso_ms(seconds: int) -> str:
    """`2026-08-10T18:49:54.000Z` for integer Unix seconds (JS toISOString)."""
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


# the form iso_ms writes, read without strptime (a tenth of its time); any other text strptime reads
_ISO_MS = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.000Z")


def parse_iso_ms(text: str) -> int:
    """Integer Unix seconds of an ISO time as produced by :func:`iso_ms`."""
    found = _ISO_MS.fullmatch(text) if isinstance(text, str) else None
    try:
        if found is not None:
            year, month, day, hour, minute, second = (int(g) for g in found.groups())
            return calendar.timegm(datetime(year, month, day, hour, minute, second).timetuple())
        parsed = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    except (ValueError, TypeError) as exc:
        raise EncodingError(f"not an ISO timestamp: {text!r}", reason="time_invalid") from exc
    return int(parsed.timestamp())
