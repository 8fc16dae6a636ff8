"""Master-signed purge artifacts (intent and receipt) and their verification; pure, no I/O.

An artifact is {body, canonical_body, signature, public_key, nonce, ts_signed}; the signature is
the master's Ed25519 over payload form 1 (canonical body, nonce, ts). It verifies when the key's
fingerprint is the body's actor fingerprint (and the one the verifier expects).
"""

from __future__ import annotations

import hashlib
from typing import Any

from aimos.crypto.canonical import canonical_json
from aimos.crypto.ed25519 import KeyPair, fingerprint_of_b64u, verify
from aimos.crypto.encoding import b64u_decode, b64u_encode
from aimos.crypto.messages import new_nonce, payload_message
from aimos.errors import AimosError
from aimos.vocabulary import PURGE_INTENT_SCHEMA, PURGE_RECEIPT_SCHEMA


def sign_artifact(master: KeyPair, body: dict[str, Any], ts: int) -> dict[str, Any]:
    nonce = new_nonce()
    canonical = canonical_json(body)
    signature = master.sign(payload_message(body, nonce, ts, body_bytes=canonical))
    return {
        "body": body,
        "canonical_body": canonical.decode("utf-8"),
        "signature": b64u_encode(signature),
        "public_key": master.public_b64u,
        "nonce": nonce,
        "ts_signed": ts,
    }


def artifact_sha256(artifact: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(artifact)).hexdigest()


def check_artifact(artifact: Any, schema: str, expected_fingerprint: str | None) -> str | None:
    """None when the artifact is well formed, signed by its actor and (if given) by the expected
    master; else the first reason it is not."""
    if not isinstance(artifact, dict):
        return "not_an_artifact"
    body = artifact.get("body")
    if not isinstance(body, dict) or body.get("schema") != schema:
        return "wrong_schema"
    try:
        canonical = canonical_json(body)
        signature = b64u_decode(str(artifact.get("signature")))
        fingerprint = fingerprint_of_b64u(str(artifact.get("public_key")))
    except AimosError:
        return "malformed"
    if artifact.get("canonical_body") != canonical.decode("utf-8"):
        return "canonical_body_mismatch"
    nonce, ts = artifact.get("nonce"), artifact.get("ts_signed")
    if not isinstance(nonce, str) or not isinstance(ts, int):
        return "malformed"
    if not verify(
        str(artifact["public_key"]), payload_message(body, nonce, ts, body_bytes=canonical), signature
    ):
        return "signature_invalid"
    actor = body.get("actor")
    if not isinstance(actor, dict) or actor.get("fingerprint") != fingerprint:
        return "actor_fingerprint_mismatch"
    if expected_fingerprint is not None and fingerprint != expected_fingerprint:
        return "master_fingerprint_mismatch"
    return None


def verify_purge_receipt(receipt: Any, intent: Any, expected_fingerprint: str) -> str | None:
    """None when the receipt and its intent are signed by the expected master and bound together."""
    for artifact, schema in ((receipt, PURGE_RECEIPT_SCHEMA), (intent, PURGE_INTENT_SCHEMA)):
        reason = check_artifact(artifact, schema, expected_fingerprint)
        if reason is not None:
            return f"{'receipt' if artifact is receipt else 'intent'}:{reason}"
    if receipt["body"].get("intent_sha256") != artifact_sha256(intent):
        return "receipt:intent_hash_mismatch"
    if receipt["body"].get("ceremony_id") != intent["body"].get("ceremony_id"):
        return "receipt:ceremony_mismatch"
    if receipt["body"].get("completion_status") != "complete":
        return "receipt:not_complete"
    return None
