"""Zip bombs and other hostile archives for the import attacks, built at run time in well under a
second (imported as a plain module, like attack_support).

A deflate stream of one repeated block: one MiB of ``fill`` deflated once, ended by a full flush
(byte-aligned, no history), so the same bytes deflate the next MiB; ``MiB`` copies and a final
empty block inflate to ``MiB`` MiB. About 1 KiB of zip per MiB unzipped (the deflate limit)."""

from __future__ import annotations

import bz2
import struct
import zlib
from pathlib import Path

MiB = 1 << 20
NAME = "conversations.json"
STORED, DEFLATED, BZIP2 = 0, 8, 12


def _member(name: str, method: int, data: bytes, crc: int, size: int, offset: int) -> tuple[bytes, bytes]:
    """A member's local header (with its data) and its central directory entry (size < 4 GiB)."""
    raw = name.encode()
    local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, method, 0, 0, crc, len(data), size, len(raw), 0)
    central = struct.pack(
        "<4s6H3L5H2L",
        b"PK\x01\x02",
        20,
        20,
        0,
        method,
        0,
        0,
        crc,
        len(data),
        size,
        len(raw),
        0,
        0,
        0,
        0,
        0,
        offset,
    )
    return local + raw + data, central + raw


def write_zip(path: Path, members: list[tuple[str, int, bytes, int, int]], *, pad: int = 0) -> Path:
    """A zip of ``members`` (name, method, compressed data, crc, size the header declares), after
    ``pad`` zero bytes (a bigger zip, the same members: zipfile skips what comes before them)."""
    body = bytearray(pad)
    directory = bytearray()
    for name, method, data, crc, size in members:
        local, central = _member(name, method, data, crc, size, len(body))
        body += local
        directory += central
    end = struct.pack(
        "<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(directory), len(body), 0
    )
    path.write_bytes(bytes(body + directory) + end)
    return path


def deflated(mib: int, fill: bytes = b" ", head: bytes = b"") -> tuple[bytes, int, int]:
    """``head`` then ``mib`` blocks of ``fill`` repeated to a MiB (or just under), deflated:
    (data, crc, size)."""
    block = fill * (MiB // len(fill))
    squeeze = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = squeeze.compress(head) + squeeze.flush(zlib.Z_FULL_FLUSH)
    one = squeeze.compress(block) + squeeze.flush(zlib.Z_FULL_FLUSH)
    crc = zlib.crc32(head)
    for _ in range(mib):
        crc = zlib.crc32(block, crc)
    return first + one * mib + squeeze.flush(), crc, len(head) + mib * len(block)


def deflate_bomb(
    path: Path, mib: int, *, fill: bytes = b" ", declared: int | None = None, pad: int = 0, head: bytes = b""
) -> Path:
    """A zip whose conversations.json is ``head`` and ``mib`` MiB of ``fill``; its headers say it
    is ``declared`` bytes (the truth unless given: a header may lie)."""
    data, crc, size = deflated(mib, fill, head)
    return write_zip(path, [(NAME, DEFLATED, data, crc, size if declared is None else declared)], pad=pad)


def bzip2_bomb(path: Path, mib: int, *, declared: int) -> Path:
    """A zip whose conversations.json is ``mib`` MiB of spaces, bzip2-compressed (a few hundred
    bytes: bzip2 runs far past deflate's limit), declaring ``declared`` bytes."""
    squeeze = bz2.BZ2Compressor(9)
    block = b" " * MiB
    data = b"".join(squeeze.compress(block) for _ in range(mib)) + squeeze.flush()
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(block, crc)
    return write_zip(path, [(NAME, BZIP2, data, crc, declared)])


def many_members(path: Path, count: int) -> Path:
    """A zip of ``count`` directory entries (all pointing at one empty local member): ~50 bytes
    each in the zip, several hundred in memory once Python's zipfile lists them."""
    local, _ = _member("a", STORED, b"", 0, 0, 0)
    directory = bytearray()
    for i in range(count):
        _, central = _member(f"{i:07d}", STORED, b"", 0, 0, 0)
        directory += central
    entries = min(count, 0xFFFF)
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, entries, entries, len(directory), len(local), 0)
    path.write_bytes(local + bytes(directory) + end)
    return path


def stored(path: Path, name: str, data: bytes) -> Path:
    """A zip holding ``data`` as ``name``, uncompressed."""
    return write_zip(path, [(name, STORED, data, zlib.crc32(data), len(data))])
