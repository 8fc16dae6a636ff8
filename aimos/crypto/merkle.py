"""RFC 6962 Merkle tree hash over canonical JSON entries (the recall receipt root)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from aimos.crypto.canonical import canonical_json


def leaf_hash(entry: Any) -> bytes:
    return hashlib.sha256(b"\x00" + canonical_json(entry)).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _root(leaves: Sequence[bytes]) -> bytes:
    n = len(leaves)
    if n == 1:
        return leaves[0]
    k = 1 << ((n - 1).bit_length() - 1)  # largest power of two strictly below n
    return node_hash(_root(leaves[:k]), _root(leaves[k:]))


def merkle_root(entries: Sequence[Any]) -> bytes:
    """MTH over the entries; the empty tree is H("")."""
    if not entries:
        return hashlib.sha256(b"").digest()
    return _root([leaf_hash(e) for e in entries])


def inclusion_path(entries: Sequence[Any], index: int) -> list[bytes]:
    """Audit path for ``entries[index]`` (RFC 6962 section 2.1.1)."""
    leaves = [leaf_hash(e) for e in entries]

    def path(m: int, lv: Sequence[bytes]) -> list[bytes]:
        n = len(lv)
        if n <= 1:
            return []
        k = 1 << ((n - 1).bit_length() - 1)
        if m < k:
            return [*path(m, lv[:k]), _root(lv[k:])]
        return [*path(m - k, lv[k:]), _root(lv[:k])]

    if not 0 <= index < len(leaves):
        raise IndexError("entry index out of range")
    return path(index, leaves)


def verify_inclusion(entry: Any, index: int, size: int, path: Sequence[bytes], root: bytes) -> bool:
    """Check an audit path (RFC 9162 section 2.1.3.2)."""
    if not 0 <= index < size:
        return False
    fn, sn = index, size - 1
    r = leaf_hash(entry)
    for p in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while fn & 1 == 0 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root
