"""Strict reading of evidence files, shared by the portable verifiers: bytes in, a JSON value out.

No duplicate keys, no NaN or Infinity, a size ceiling, and nesting too deep for the parser reported
as the canonical-JSON depth limit; each failure carries its reason from the closed vocabulary, so a
verifier can turn it into a verdict without catching anything else.
"""

from __future__ import annotations

from typing import Any, Final

from aimos.crypto.canonical import JSONDepthError, json_loads

MAX_BUNDLE_BYTES: Final = 512 * 1024 * 1024

BUNDLE_JSON_MALFORMED: Final = "bundle_json_malformed"
BUNDLE_SIZE_LIMIT: Final = "bundle_size_limit"
JSON_DUPLICATE_KEY: Final = "json_duplicate_key"
CANONICAL_DEPTH_LIMIT: Final = "canonical_json_depth_limit"
CANONICAL_NON_FINITE: Final = "canonical_json_non_finite"


class DuplicateKeyError(ValueError):
    """A JSON object repeats a key (strict parsing refuses it)."""


class NonFiniteError(ValueError):
    """A JSON document holds NaN or Infinity (strict parsing refuses it)."""


class BundleParseError(ValueError):
    """The bytes are not a strict JSON document; ``reason`` is from the closed vocabulary."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(key)
        out[key] = value
    return out


def _reject_constant(name: str) -> Any:
    raise NonFiniteError(name)


def strict_json_loads(text: str) -> Any:
    """JSON with no duplicate keys, no NaN/Infinity and no nesting deeper than the canonical
    limit; raises DuplicateKeyError, NonFiniteError, JSONDepthError or ValueError (all
    ValueErrors; the depth is checked before parsing, so no RecursionError)."""
    return json_loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)


def load_bundle(data: bytes | str, *, max_bytes: int = MAX_BUNDLE_BYTES) -> Any:
    """Parse UTF-8 JSON text strictly; raises BundleParseError (never anything else)."""
    if len(data) > max_bytes:
        raise BundleParseError(BUNDLE_SIZE_LIMIT, f"the bundle exceeds {max_bytes} bytes")
    try:
        text = data if isinstance(data, str) else data.decode("utf-8")
        return strict_json_loads(text)
    except DuplicateKeyError as exc:
        raise BundleParseError(JSON_DUPLICATE_KEY, f"duplicate JSON key {exc}") from None
    except NonFiniteError as exc:
        raise BundleParseError(CANONICAL_NON_FINITE, f"non-finite JSON number {exc}") from None
    except JSONDepthError as exc:
        raise BundleParseError(CANONICAL_DEPTH_LIMIT, exc.message) from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise BundleParseError(BUNDLE_JSON_MALFORMED, f"not UTF-8 JSON: {exc}") from None
