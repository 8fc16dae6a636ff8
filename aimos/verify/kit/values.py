"""Value predicates shared by the verifiers: they never raise, whatever the value.

Each verifier keeps its exact acceptance: where they genuinely differ (UUID letter case and
version, the time forms), the difference is an explicit option here, not a second copy.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal, TypeGuard

from aimos.crypto.canonical import MAX_SAFE_INTEGER, canonical_json
from aimos.crypto.ed25519 import raw_from_spki
from aimos.crypto.encoding import b64u_decode, parse_iso_ms
from aimos.crypto.encoding import is_hex64 as _is_hex64
from aimos.errors import AimosError

SIGNATURE_BYTES: Final = 64
DETAIL_LIMIT: Final = 300

_HEX: Final = re.compile(r"(?:[0-9a-f]{2})+")
_UUID: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_UUID_ANY_CASE: Final = re.compile(_UUID.pattern, re.IGNORECASE)
_RFC4122: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
_RFC4122_ANY_CASE: Final = re.compile(_RFC4122.pattern, re.IGNORECASE)
_CANONICAL_TIME: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})\.([0-9]{3})Z"
)
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_SECOND: Final = timedelta(seconds=1)
_MS: Final = timedelta(milliseconds=1)

# --- JSON shapes --------------------------------------------------------------------------------


def is_dict(value: object) -> TypeGuard[dict[str, Any]]:
    return isinstance(value, dict)


def as_dict(value: object) -> dict[str, Any] | None:
    """The value if it is a JSON object, else None."""
    return value if isinstance(value, dict) else None


def is_text(value: object) -> TypeGuard[str]:
    """A non-empty string."""
    return isinstance(value, str) and value != ""


def is_int(value: object, minimum: int | None = None, maximum: int | None = None) -> TypeGuard[int]:
    """A JSON integer (never a bool, never ``1.0``) in the safe range and the given bounds."""
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) > MAX_SAFE_INTEGER:
        return False
    return (minimum is None or value >= minimum) and (maximum is None or value <= maximum)


def fields_are(value: object, fields: Iterable[str]) -> TypeGuard[dict[str, Any]]:
    """A JSON object with exactly these keys."""
    return isinstance(value, dict) and set(value) == set(fields)


def fields_differ(value: Mapping[str, Any], fields: Iterable[str]) -> str | None:
    """None when ``value`` has exactly ``fields``, else ``missing [...], unexpected [...]``."""
    expected = set(fields)
    keys = set(value)
    if keys == expected:
        return None
    missing = sorted(expected - keys)
    extra = sorted(repr(k) for k in keys - expected)
    return f"missing {missing}, unexpected {extra}"


def utf16_units(text: str) -> int:
    """The length JavaScript gives a string (UTF-16 code units)."""
    return len(text.encode("utf-16-le", errors="surrogatepass")) // 2


def short(text: str, limit: int = DETAIL_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- hex, UUIDs, base64url ----------------------------------------------------------------------


def is_hex64(value: object) -> TypeGuard[str]:
    """A lowercase 64-hex hash."""
    return _is_hex64(value)


def is_hex(value: object, nbytes: int | None = None) -> TypeGuard[str]:
    """Lowercase hex of whole bytes: exactly ``nbytes`` of them, or any non-zero number."""
    if not isinstance(value, str) or _HEX.fullmatch(value) is None:
        return False
    return nbytes is None or len(value) == 2 * nbytes


def hex_bytes(value: object, nbytes: int | None = None) -> bytes | None:
    """The bytes of :func:`is_hex` lowercase hex, else None."""
    return bytes.fromhex(value) if is_hex(value, nbytes) else None


def is_uuid(value: object, *, rfc4122: bool = False, any_case: bool = False) -> TypeGuard[str]:
    """A hyphenated UUID: lowercase unless ``any_case``; with ``rfc4122`` only versions 1-5 of
    the RFC 4122 variant (the memory ids)."""
    if not isinstance(value, str):
        return False
    if rfc4122:
        pattern = _RFC4122_ANY_CASE if any_case else _RFC4122
    else:
        pattern = _UUID_ANY_CASE if any_case else _UUID
    return pattern.fullmatch(value) is not None


def b64u(value: object, *, nonempty: bool = False) -> bytes | None:
    """Decoded canonical unpadded base64url of a non-empty string (and, with ``nonempty``, of
    at least one byte), else None."""
    if not is_text(value):
        return None
    try:
        data = b64u_decode(value)
    except AimosError:
        return None
    return None if nonempty and not data else data


def signature_bytes(value: object) -> bytes | None:
    """A 64-byte Ed25519 signature in canonical base64url, else None."""
    data = b64u(value)
    return data if data is not None and len(data) == SIGNATURE_BYTES else None


# --- canonical bytes and hashes -----------------------------------------------------------------

canonical_bytes = canonical_json  # raises CanonicalJSONError (an AimosError) with a reason


def canonical_or_none(value: object) -> bytes | None:
    """The canonical bytes of ``value``, or None when it has none."""
    try:
        return canonical_json(value)
    except (AimosError, RecursionError, TypeError, ValueError):
        return None


def same(left: object, right: object) -> bool:
    """Equality of JSON values as the reference compares them: strings exactly, everything else
    by canonical bytes (so ``true`` never equals ``1``, though Python says True == 1)."""
    if isinstance(left, str) or isinstance(right, str):
        return isinstance(left, str) and isinstance(right, str) and left == right
    kind = type(left)
    if kind is type(right):  # the common cases, without bytes
        if kind is bool or left is None:
            return left == right
        if kind is int and isinstance(left, int):  # an unsafe integer has no canonical form
            return left == right and abs(left) <= MAX_SAFE_INTEGER
    left_bytes = canonical_or_none(left)
    return left_bytes is not None and left_bytes == canonical_or_none(right)


def same_object(value: object, expected: Mapping[str, object]) -> bool:
    """A JSON object with exactly ``expected``'s keys, each value :func:`same`."""
    return (
        isinstance(value, dict)
        and set(value) == set(expected)
        and all(same(value[k], v) for k, v in expected.items())
    )


def sha256_hex(data: bytes | str) -> str:
    """SHA-256 hex of bytes (a string is hashed as its UTF-8)."""
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def canonical_sha256_hex(value: object) -> str:
    """SHA-256 hex of the canonical bytes; raises CanonicalJSONError when there are none."""
    return sha256_hex(canonical_json(value))


# --- times ----------------------------------------------------------------------------------------

TimeForm = Literal["canonical", "aimos", "iso"]


def parse_time(value: object, *, form: TimeForm = "canonical", unit: Literal["s", "ms"] = "s") -> int | None:
    """Unix seconds (``unit="s"``, floored) or milliseconds of a time, else None.

    ``form`` is the strictness:

    * ``"canonical"``: exactly ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (the V2 recall verifier);
    * ``"aimos"``: what :func:`aimos.crypto.encoding.parse_iso_ms` reads (``%Y-%m-%dT%H:%M:%S.%fZ``;
      seconds as it gives them);
    * ``"iso"``: any ISO-8601 text :meth:`datetime.fromisoformat` reads, with a zone.
    """
    if not isinstance(value, str):
        return None
    moment: datetime | None
    if form == "canonical":
        match = _CANONICAL_TIME.fullmatch(value)
        if match is None:
            return None
        year, month, day, hour, minute, second, milli = (int(g) for g in match.groups())
        try:
            moment = datetime(year, month, day, hour, minute, second, milli * 1000, tzinfo=UTC)
        except ValueError:
            return None
    elif form == "aimos":
        if unit == "s":
            try:
                return parse_iso_ms(value)
            except AimosError:
                return None
        try:
            moment = datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
        except ValueError:
            return None
    else:
        if not value:
            return None
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return None
        if moment.tzinfo is None:
            return None
    try:
        return (moment - _EPOCH) // (_SECOND if unit == "s" else _MS)
    except OverflowError:
        return None


def spki_der(value: object) -> bytes | None:
    """The DER of an Ed25519 SPKI public key given as canonical base64url, else None."""
    der = b64u(value)
    if der is None:
        return None
    try:
        raw_from_spki(der)
    except AimosError:
        return None
    return der


def finite_number(value: object) -> float | None:
    """A JSON number (never a bool) as a finite float, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def js_round(value: float) -> int:
    """JavaScript's ``Math.round`` for finite values (halves round up)."""
    return math.floor(value + 0.5)
