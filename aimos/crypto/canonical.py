"""Canonical JSON `hom-aimos/canonical-json/v1`: RFC 8785 plus the reference's limits.

rfc8785 serializes numbers as ECMAScript does; on top of it this module enforces the depth
limit (32, root at depth 0), safe integers only, finite numbers only and JSON types only,
each failure with its own reason.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import rfc8785

from aimos.errors import CanonicalJSONError

_FAST = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False)

MAX_DEPTH = 32
MAX_SAFE_INTEGER = 2**53 - 1


def _check(value: Any, depth: int) -> bool:
    """Validate ``value``; True when it needs rfc8785's slow path (floats, keys beyond U+D7FF)."""
    if depth > MAX_DEPTH:
        raise CanonicalJSONError(
            f"JSON nested deeper than {MAX_DEPTH} levels", reason="canonical_json_depth_limit"
        )
    if value is None or isinstance(value, bool | str):
        return False
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise CanonicalJSONError(
                "integer outside the safe range (|n| <= 2^53 - 1)",
                reason="canonical_json_unsafe_integer",
            )
        return False
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CanonicalJSONError(
                "non-finite number (NaN or Infinity)", reason="canonical_json_non_finite"
            )
        return True
    if isinstance(value, dict):
        slow = False
        for key, item in value.items():
            if not isinstance(key, str):
                raise CanonicalJSONError("object keys must be strings", reason="canonical_json_key_type")
            # Python sorts by code point, RFC 8785 by UTF-16 code unit: they differ only for
            # keys holding characters above U+D7FF, which take the slow path.
            if key and max(key) > "\ud7ff":
                slow = True
            slow = _check(item, depth + 1) or slow
        return slow
    if isinstance(value, list | tuple):
        slow = False
        for item in value:
            slow = _check(item, depth + 1) or slow
        return slow
    raise CanonicalJSONError(
        f"value of type {type(value).__name__} has no JSON form",
        reason="canonical_json_unsupported_type",
    )


def canonical_json(value: Any) -> bytes:
    """The canonical bytes of ``value``; raises CanonicalJSONError with a reason.

    Values without floats and with BMP-below-surrogate keys serialize identically with the C
    json encoder (sorted keys, no whitespace, raw non-ASCII, lowercase \\u00xx escapes); a
    test checks that fast path against rfc8785 on random documents.
    """
    slow = _check(value, 0)
    try:
        if not slow:
            return _FAST.encode(value).encode("utf-8")
        return bytes(rfc8785.dumps(value))
    except (rfc8785.CanonicalizationError, UnicodeEncodeError) as exc:
        raise CanonicalJSONError(
            "string is not valid Unicode (lone surrogate)", reason="canonical_json_invalid_string"
        ) from exc


def canonical_text(value: Any) -> str:
    return canonical_json(value).decode("utf-8")


def canonical_sha256(value: Any) -> bytes:
    """SHA-256 of the canonical bytes (raw 32 bytes)."""
    return hashlib.sha256(canonical_json(value)).digest()


def canonical_sha256_hex(value: Any) -> str:
    return canonical_sha256(value).hex()
