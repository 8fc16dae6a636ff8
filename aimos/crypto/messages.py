"""Signed-message forms: payload (form 1), request context (form 3), nonces, clock skew."""

from __future__ import annotations

import os
from typing import Any

from aimos.crypto.canonical import canonical_json
from aimos.crypto.encoding import b64u_encode

CLOCK_SKEW_SECONDS = 300
NONCE_BYTES = 16


def new_nonce() -> str:
    return b64u_encode(os.urandom(NONCE_BYTES))


def payload_message(body: Any, nonce: str, ts: int, *, body_bytes: bytes | None = None) -> bytes:
    """Form 1: canonicalJSON(body) \\n nonce \\n ts (``body_bytes``: already canonical)."""
    canonical = body_bytes if body_bytes is not None else canonical_json(body)
    return b"\n".join([canonical, nonce.encode("utf-8"), str(int(ts)).encode()])


def request_message(
    body: Any, method: str, path: str, nonce: str, ts: int, *, body_bytes: bytes | None = None
) -> bytes:
    """Request form 3: canonicalJSON(body) \\n METHOD \\n path-without-query \\n nonce \\n ts."""
    return b"\n".join(
        [
            body_bytes if body_bytes is not None else canonical_json(body),
            method.upper().encode("ascii"),
            path.split("?", 1)[0].encode("utf-8"),
            nonce.encode("utf-8"),
            str(int(ts)).encode(),
        ]
    )


def within_skew(ts: int, now: int, skew: int = CLOCK_SKEW_SECONDS) -> bool:
    return abs(int(now) - int(ts)) <= skew
