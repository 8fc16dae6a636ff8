"""Canonical JSON `hom-aimos/canonical-json/v1`: RFC 8785 plus the reference's limits.

rfc8785 serializes numbers as ECMAScript does; on top of it this module enforces the depth
limit (32, root at depth 0), safe integers only, finite numbers only and JSON types only,
each failure with its own reason.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import OrderedDict
from typing import Any

import rfc8785

from aimos.errors import CanonicalJSONError
from aimos.errors import JSONDepthError as JSONDepthError  # re-exported: aimos/verify imports it from here
from aimos.vocabulary import CANONICAL_JSON_MAX_DEPTH as MAX_DEPTH

_FAST = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False)

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


class _NeedsFullSerializer(Exception):
    """Raised by _fast_form when only the full path can write (or reject) the value."""


def _fast_form(value: Any, depth: int) -> Any:
    """``value`` as the C encoder writes it canonically, or _NeedsFullSerializer.

    The C encoder writes floats with Python's repr, the shortest digits that round-trip, as
    ECMAScript does too; the two differ only in layout: repr adds ".0" to integral floats (here
    made ints, exact below 2^53) and writes an exponent below 1e-4 (those take the full path; a
    non-integral float is below 2^52, so never reaches repr's upper exponent at 1e16). Exact types
    only: subclasses, NaN, unsafe integers, deep or odd values and keys above U+D7FF (whose order
    differs) are left to the full path, which validates them with their reason.
    """
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is float:
        if value.is_integer():  # False for NaN and infinities
            if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
                return int(value)
        elif (value >= 1e-4 or value <= -1e-4) and math.isfinite(value):
            return value
        raise _NeedsFullSerializer
    if kind is int:
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return value
        raise _NeedsFullSerializer
    if depth >= MAX_DEPTH:  # a container here has members beyond the limit
        raise _NeedsFullSerializer
    if kind is dict:
        out = {}
        for key, item in value.items():
            if type(key) is not str or (not key.isascii() and max(key) > "\ud7ff"):
                raise _NeedsFullSerializer
            out[key] = _fast_form(item, depth + 1)
        return out
    if kind is list or kind is tuple:
        return [_fast_form(item, depth + 1) for item in value]
    raise _NeedsFullSerializer


# The newest canonical texts this process wrote on the fast path (bounded): a writer's insert
# trigger asks whether the body it is given is canonical (store.functions.is_canonical), and the
# body is almost always one canonical_json wrote a moment before. A fast-path text reads back as
# the same values (safe integers, floats that round-trip, strings), which write the same text, so
# that answer is a lookup; the full path's texts are not kept (a float beyond 2^53 is written as
# digits that read back as an unsafe integer). tests/unit/crypto checks the answer is the same.
_MADE: OrderedDict[bytes, None] = OrderedDict()
MADE_KEPT = 64


def made_here(text: str) -> bool:
    """Whether ``text`` is one of the canonical texts this process wrote lately."""
    try:
        return text.encode("utf-8") in _MADE
    except UnicodeEncodeError:
        return False


def _made(out: bytes) -> bytes:
    _MADE[out] = None
    if len(_MADE) > MADE_KEPT:
        _MADE.popitem(last=False)
    return out


def canonical_json(value: Any) -> bytes:
    """The canonical bytes of ``value``; raises CanonicalJSONError with a reason.

    Most values go through the C json encoder (sorted keys, no whitespace, raw non-ASCII,
    lowercase \\u00xx escapes) in the form _fast_form gives them; the rest through _check and, for
    floats it cannot lay out and keys beyond U+D7FF, rfc8785. A test checks the fast paths
    against rfc8785 on random documents.
    """
    try:
        return _made(_FAST.encode(_fast_form(value, 0)).encode("utf-8"))
    except (_NeedsFullSerializer, UnicodeEncodeError):
        pass  # the full path decides, and names the reason when the value has no canonical form
    slow = _check(value, 0)
    try:
        if not slow:
            return _FAST.encode(value).encode("utf-8")
        return bytes(rfc8785.dumps(value))
    except (rfc8785.CanonicalizationError, UnicodeEncodeError) as exc:
        raise CanonicalJSONError(
            "string is not valid Unicode (lone surrogate)", reason="canonical_json_invalid_string"
        ) from exc


# A JSON string with its escapes (unrolled, so linear), and every ASCII character but brackets
# (outside strings JSON holds only ASCII; anything else is malformed and left for the parser).
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET: dict[int, None] = {c: None for c in range(128) if chr(c) not in "[]{}"}
_INNERMOST_PAIR = re.compile(r"[\[{][\]}]")


def _max_open_containers(text: str) -> int:
    """How many arrays and objects are open at the deepest point of JSON text (brackets inside
    strings do not count). Linear, and never recursive, whatever the text holds."""
    brackets = _JSON_STRING.sub("", text).translate(_NOT_BRACKET)
    # fast path: each pass removes the innermost pairs, so balanced text of depth n empties in n
    # passes (done in C); anything left after MAX_DEPTH + 1 passes is too deep or unbalanced
    rest, passes = brackets, 0
    while rest and passes <= MAX_DEPTH + 1:
        rest, passes = _INNERMOST_PAIR.sub("", rest), passes + 1
    if not rest:
        return passes
    depth = deepest = 0
    for char in brackets:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _deeper_than_limit(value: Any, depth: int = 0) -> bool:
    """The canonical rule on a parsed value: anything at depth > MAX_DEPTH (root at 0)."""
    if depth > MAX_DEPTH:
        return True
    if isinstance(value, dict):
        return any(_deeper_than_limit(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return any(_deeper_than_limit(v, depth + 1) for v in value)
    return False


def json_loads(text: str | bytes, *, what: str = "JSON", **options: Any) -> Any:
    """``json.loads`` for anything aimos verifies (files and the brain's own records): nesting
    deeper than the canonical limit raises JSONDepthError before the parser could recurse into
    it (a RecursionError never escapes); malformed text raises ValueError as json.loads does.
    ``options`` go to json.loads (object_pairs_hook, parse_constant)."""
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8")  # UnicodeDecodeError is a ValueError too
    # the root container is at depth 0: n open containers put the innermost at depth n - 1, and
    # its members (if it has any) at depth n. Every container opens with a bracket, so text with
    # no more brackets (in strings too) than the limit cannot be too deep: nothing to count.
    if text.count("{") + text.count("[") <= MAX_DEPTH:
        return json.loads(text, **options)
    open_containers = _max_open_containers(text)
    if open_containers > MAX_DEPTH + 1:
        raise JSONDepthError(what)
    value = json.loads(text, **options)
    if open_containers == MAX_DEPTH + 1 and _deeper_than_limit(value):
        raise JSONDepthError(what)
    return value


def canonical_text(value: Any) -> str:
    return canonical_json(value).decode("utf-8")


def canonical_sha256(value: Any) -> bytes:
    """SHA-256 of the canonical bytes (raw 32 bytes)."""
    return hashlib.sha256(canonical_json(value)).digest()


def canonical_sha256_hex(value: Any) -> str:
    return canonical_sha256(value).hex()
