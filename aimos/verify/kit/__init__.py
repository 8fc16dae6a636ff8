"""The verifier kit: one verdict type, one way for a check to fail with a closed reason, the
value predicates every verifier shares, and the one strict JSON loader.

The verifiers import what they use from here; it imports only the crypto layer and the errors.
Each name is loaded from its module when first asked for (PEP 562): a command that needs one
module of the kit (the store's SQL functions need inheritance, judgment and redaction) does not
load the others.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aimos.verify.kit.strict_json import (
        BUNDLE_JSON_MALFORMED,
        BUNDLE_SIZE_LIMIT,
        CANONICAL_DEPTH_LIMIT,
        CANONICAL_NON_FINITE,
        JSON_DUPLICATE_KEY,
        MAX_BUNDLE_BYTES,
        BundleParseError,
        DuplicateKeyError,
        NonFiniteError,
        load_bundle,
        strict_json_loads,
    )
    from aimos.verify.kit.values import (
        DETAIL_LIMIT,
        SIGNATURE_BYTES,
        TimeForm,
        as_dict,
        b64u,
        canonical_bytes,
        canonical_or_none,
        canonical_sha256_hex,
        fields_are,
        fields_differ,
        finite_number,
        hex_bytes,
        is_dict,
        is_hex,
        is_hex64,
        is_int,
        is_text,
        is_uuid,
        js_round,
        parse_time,
        same,
        same_object,
        sha256_hex,
        short,
        signature_bytes,
        spki_der,
        utf16_units,
    )
    from aimos.verify.kit.verdict import (
        INDETERMINATE,
        INVALID,
        VALID,
        CheckFailed,
        Cursor,
        ReportVerdict,
        Verdict,
        VerdictWord,
        check,
        fail,
        require_dict,
    )

__all__ = [
    "BUNDLE_JSON_MALFORMED",
    "BUNDLE_SIZE_LIMIT",
    "CANONICAL_DEPTH_LIMIT",
    "CANONICAL_NON_FINITE",
    "DETAIL_LIMIT",
    "INDETERMINATE",
    "INVALID",
    "JSON_DUPLICATE_KEY",
    "MAX_BUNDLE_BYTES",
    "SIGNATURE_BYTES",
    "VALID",
    "BundleParseError",
    "CheckFailed",
    "Cursor",
    "DuplicateKeyError",
    "NonFiniteError",
    "ReportVerdict",
    "TimeForm",
    "Verdict",
    "VerdictWord",
    "as_dict",
    "b64u",
    "canonical_bytes",
    "canonical_or_none",
    "canonical_sha256_hex",
    "check",
    "fail",
    "fields_are",
    "fields_differ",
    "finite_number",
    "hex_bytes",
    "is_dict",
    "is_hex",
    "is_hex64",
    "is_int",
    "is_text",
    "is_uuid",
    "js_round",
    "load_bundle",
    "parse_time",
    "require_dict",
    "same",
    "same_object",
    "sha256_hex",
    "short",
    "signature_bytes",
    "spki_der",
    "strict_json_loads",
    "utf16_units",
]

# the modules the names above come from, in the order they are looked in
_PARTS = ("strict_json", "values", "verdict")


def __getattr__(name: str) -> Any:
    if name in __all__:
        for part in _PARTS:
            module = importlib.import_module(f"{__name__}.{part}")
            if name in vars(module):
                value = vars(module)[name]
                globals()[name] = value
                return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
