"""Predicates the cognitive and V1 recall verifiers share beside the kit (generic, but not yet in
:mod:`aimos.verify.kit`): the certificate body's fields, an Ed25519 SPKI key, JavaScript's
``Math.round`` and a finite JSON number. They never raise."""

from __future__ import annotations

import math
from typing import Final

from aimos.crypto.ed25519 import raw_from_spki
from aimos.errors import AimosError
from aimos.verify.kit import b64u

#: The eight fields of a certificate body (``hom.aimos`` agent certificates).
CERT_BODY_FIELDS: Final = frozenset(
    {"v", "agent_id", "pubkey", "device_fp", "valid_from", "valid_until", "issuer", "issued_at"}
)


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
