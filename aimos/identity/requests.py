"""Signed agent requests (request form 3) and their verification by the brain."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from aimos.crypto.canonical import canonical_json
from aimos.crypto.certs import CertificateCache, verify_certificate
from aimos.crypto.ed25519 import verify
from aimos.crypto.encoding import b64u_decode, b64u_encode, iso_ms
from aimos.crypto.messages import CLOCK_SKEW_SECONDS, new_nonce, request_message, within_skew
from aimos.errors import (
    ClockSkewError,
    EncodingError,
    EpochExpiredError,
    EpochRevokedError,
    GrantError,
    ReplayError,
    SignatureError,
    UsageError,
)
from aimos.identity.epochs import revocation_at
from aimos.identity.master import master_row
from aimos.identity.signer import Signer
from aimos.identity.trusted import check_identities, verified_grant
from aimos.store.connection import Connection
from aimos.store.queries.identity import epoch_by_certificate, insert_nonce, nonce_forwarded, nonce_used
from aimos.vocabulary import HOUSEKEEPER, PATH_SAVE, REQUEST_METHOD, ROLE_AGENT


@dataclass(frozen=True)
class SignedRequest:
    """What an agent sends: the body and the envelope (the Aimos-Agent-* headers)."""

    body: dict[str, Any]
    method: str
    path: str
    nonce: str
    ts: int
    signature_b64u: str
    certificate: str

    def to_json(self) -> dict[str, Any]:
        return {
            "body": self.body,
            "method": self.method,
            "path": self.path,
            "nonce": self.nonce,
            "ts_signed": self.ts,
            "signature_b64u": self.signature_b64u,
            "certificate": self.certificate,
        }


@dataclass(frozen=True)
class VerifiedRequest:
    request: SignedRequest
    agent_id: str
    valid_from: int
    cert_fingerprint: str
    identity_tier: str
    grant: dict[str, Any]
    request_hash: str
    body_bytes: bytes  # canonicalJSON(request.body), computed once


def sign_request(signer: Signer, body: dict[str, Any], path: str, now: int) -> SignedRequest:
    nonce = new_nonce()
    signature = signer.key.sign(request_message(body, REQUEST_METHOD, path, nonce, now))
    return SignedRequest(body, REQUEST_METHOD, path, nonce, now, b64u_encode(signature), signer.certificate)


_verified_certs = CertificateCache()


def verify_request(
    conn: Connection,
    req: SignedRequest,
    *,
    path: str,
    now: int,
    received: int | None = None,
    record: bool = True,
) -> VerifiedRequest:
    """Check a request against the brain; records its nonce (call inside the write transaction;
    ``record`` off: the caller records it with ``record_nonce``, or forwards the request).

    ``received``: a request another device of the brain received and forwarded to this one, the
    home (hub_requests): its clock is checked against the time that device received it, and its
    nonce, recorded there as forwarded, is used here."""
    if req.method.upper() != REQUEST_METHOD or req.path != path:
        raise UsageError(f"this endpoint takes POST {path}, not {req.method} {req.path}")
    check_identities(conn)  # the epoch, revocation and grant rows read below are the sealed ones
    try:
        cert = _verified_certs.parse(req.certificate)
        signature = b64u_decode(req.signature_b64u)
    except EncodingError as exc:
        raise SignatureError("the request signature is not canonical base64url") from exc
    epoch = epoch_by_certificate(conn, cert.fingerprint)
    # the housekeeper signs saves only (the system-scope guide memories); every other request
    # comes from an agent epoch
    if epoch is None or not (
        epoch["role"] == ROLE_AGENT or (epoch["role"] == HOUSEKEEPER and path == PATH_SAVE)
    ):
        raise SignatureError(
            "the request's certificate is not an enrolled agent epoch of this brain",
            "Enrol the agent with `aimos agent enroll ID` and sign with its key.",
        )
    master = master_row(conn)
    if not _verified_certs.seen(cert.fingerprint, master["public_key_b64u"]):
        verify_certificate(cert, master["public_key_b64u"])
        _verified_certs.add(cert.fingerprint, master["public_key_b64u"])
    body_bytes = canonical_json(req.body)
    message = request_message(req.body, req.method, req.path, req.nonce, req.ts, body_bytes=body_bytes)
    if not verify(cert.pubkey, message, signature):
        raise SignatureError("the request signature does not verify under the agent's key")
    agent_id, valid_from = epoch["agent_id"], epoch["valid_from"]
    if req.ts < epoch["valid_from"]:
        raise EpochExpiredError(
            f"the request time {iso_ms(req.ts)} is before agent {agent_id}'s epoch starts "
            f"({iso_ms(epoch['valid_from'])})",
            "Sign the request again with the current time.",
        )
    if req.ts > epoch["valid_until"]:
        raise EpochExpiredError(
            f"agent {agent_id}'s epoch expired at {iso_ms(epoch['valid_until'])}",
            f"Run `aimos agent rotate {agent_id}` to enrol a new epoch.",
        )
    revoked_at = revocation_at(conn, agent_id, valid_from)
    # A revoked epoch's requests are refused from the moment the revocation is recorded, whatever
    # time they claim (revoked_at itself may be a second ahead: see identity.epochs.revoke_epoch).
    if revoked_at is not None:
        raise EpochRevokedError(
            f"agent {agent_id}'s epoch was revoked at {iso_ms(revoked_at)}; "
            "its requests are refused from then on",
            f"Run `aimos agent rotate {agent_id}` to enrol a new epoch.",
        )
    clock = now if received is None else received
    if not within_skew(req.ts, clock):
        raise ClockSkewError(
            f"request time is {req.ts - clock:+d} s from the brain's clock "
            f"(at most {CLOCK_SKEW_SECONDS} s allowed)"
        )
    grant = verified_grant(conn, agent_id, valid_from)
    if grant is None or not grant["allowed"]:
        raise GrantError(f"agent {agent_id!r} has no master-signed grant for this epoch")
    if nonce_used(conn, agent_id, req.nonce) or (
        received is None and nonce_forwarded(conn, agent_id, req.nonce)
    ):
        raise ReplayError(f"nonce already used by agent {agent_id!r}: the request is a replay")
    request_hash = hashlib.sha256(body_bytes).hexdigest()
    verified = VerifiedRequest(
        req, agent_id, valid_from, cert.fingerprint, epoch["identity_tier"], grant, request_hash, body_bytes
    )
    if record:
        record_nonce(conn, verified, now)
    return verified


def record_nonce(conn: Connection, verified: VerifiedRequest, now: int) -> None:
    """The request's nonce, used from now on (verify_request does it unless told not to)."""
    req = verified.request
    insert_nonce(
        conn, verified.agent_id, req.nonce, verified.valid_from, req.ts, req.path, verified.request_hash, now
    )
