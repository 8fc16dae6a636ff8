"""Certificates in the reference's format: base64url(canonicalJSON({body, sig}))."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from aimos.crypto.canonical import canonical_json, json_loads
from aimos.crypto.ed25519 import KeyPair, verify
from aimos.crypto.encoding import b64u_decode, b64u_encode
from aimos.errors import AimosError, EncodingError, SignatureError
from aimos.vocabulary import MASTER_ISSUER

PERPETUAL_UNTIL = 253402300799  # 9999-12-31T23:59:59Z
CERT_FIELDS = ("v", "agent_id", "pubkey", "device_fp", "valid_from", "valid_until", "issuer", "issued_at")


@dataclass(frozen=True)
class Certificate:
    body: dict[str, Any]
    sig: str
    text: str

    @property
    def fingerprint(self) -> str:
        return cert_fingerprint(self.text)

    @property
    def agent_id(self) -> str:
        return str(self.body["agent_id"])

    @property
    def pubkey(self) -> str:
        return str(self.body["pubkey"])

    @property
    def valid_from(self) -> int:
        return int(self.body["valid_from"])

    @property
    def valid_until(self) -> int:
        return int(self.body["valid_until"])


def cert_fingerprint(certificate: str) -> str:
    """SHA-256 of the ASCII certificate string itself."""
    return hashlib.sha256(certificate.encode("ascii")).hexdigest()


def issue_certificate(
    issuer_key: KeyPair,
    *,
    agent_id: str,
    pubkey: str,
    device_fp: str,
    valid_from: int,
    valid_until: int,
    issued_at: int,
    issuer: str = MASTER_ISSUER,
) -> Certificate:
    if valid_until <= valid_from:
        raise EncodingError("certificate valid_until must be after valid_from", reason="cert_window")
    body: dict[str, Any] = {
        "v": 1,
        "agent_id": agent_id,
        "pubkey": pubkey,
        "device_fp": device_fp,
        "valid_from": int(valid_from),
        "valid_until": int(valid_until),
        "issuer": issuer,
        "issued_at": int(issued_at),
    }
    sig = b64u_encode(issuer_key.sign(canonical_json(body)))
    text = b64u_encode(canonical_json({"body": body, "sig": sig}))
    return Certificate(body=body, sig=sig, text=text)


def parse_certificate(text: str) -> Certificate:
    """Parse and shape-check a certificate string (no signature check)."""
    try:
        outer = json_loads(b64u_decode(text))
    except (EncodingError, ValueError, UnicodeDecodeError) as exc:
        raise SignatureError("certificate is not base64url JSON", reason="cert_malformed") from exc
    if not isinstance(outer, dict) or set(outer) != {"body", "sig"}:
        raise SignatureError("certificate must hold exactly body and sig", reason="cert_malformed")
    body, sig = outer["body"], outer["sig"]
    if not isinstance(body, dict) or any(f not in body for f in CERT_FIELDS) or not isinstance(sig, str):
        raise SignatureError("certificate body is missing fields", reason="cert_malformed")
    try:
        canonical = canonical_json(outer) == b64u_decode(text)
    except AimosError:
        canonical = False
    if not canonical:
        raise SignatureError("certificate JSON is not canonical", reason="cert_malformed")
    if not isinstance(body["v"], int) or isinstance(body["v"], bool) or body["v"] != 1:
        raise SignatureError("certificate version must be 1", reason="cert_malformed")
    for f in ("valid_from", "valid_until", "issued_at"):
        if not isinstance(body[f], int) or isinstance(body[f], bool):
            raise SignatureError(f"certificate {f} must be integer seconds", reason="cert_malformed")
    if body["valid_until"] <= body["valid_from"]:
        raise SignatureError("certificate window is empty", reason="cert_malformed")
    return Certificate(body=body, sig=sig, text=text)


def verify_certificate(
    cert: Certificate,
    issuer_public_key: str,
    *,
    at: int | None = None,
    accepted_issuers: tuple[str, ...] = (MASTER_ISSUER,),
) -> None:
    """Check the issuer signature, issuer name and (when ``at`` is given) the validity window."""
    if cert.body["issuer"] not in accepted_issuers:
        raise SignatureError("certificate issuer is not the master", reason="cert_issuer_invalid")
    try:
        signature = b64u_decode(cert.sig)
    except EncodingError as exc:
        raise SignatureError("certificate signature is malformed", reason="cert_signature_invalid") from exc
    if not verify(issuer_public_key, canonical_json(cert.body), signature):
        raise SignatureError("certificate signature does not verify", reason="cert_signature_invalid")
    if at is not None and not (cert.valid_from <= at <= cert.valid_until):
        raise SignatureError("certificate is outside its validity window", reason="cert_window")


class CertificateCache:
    """Remembers certificates parsed, and (fingerprint, issuer key) pairs verified, in this process."""

    def __init__(self, limit: int = 1024) -> None:
        self._seen: set[tuple[str, str]] = set()
        self._parsed: dict[str, Certificate] = {}
        self._limit = limit

    def parse(self, text: str) -> Certificate:
        cert = self._parsed.get(text)
        if cert is None:
            cert = parse_certificate(text)
            if len(self._parsed) >= self._limit:
                self._parsed.clear()
            self._parsed[text] = cert
        return cert

    def seen(self, fingerprint: str, issuer_public_key: str) -> bool:
        return (fingerprint, issuer_public_key) in self._seen

    def add(self, fingerprint: str, issuer_public_key: str) -> None:
        self._seen.add((fingerprint, issuer_public_key))
