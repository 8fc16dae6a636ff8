"""Identities and certificates of a cognitive bundle: the master, a signer epoch, the certificate
that must have been valid when it signed, and a master-signed revocation of that certificate.

The functions here answer with a reason or None (a sub-proof whose reason the caller composes,
e.g. ``provenance_cert_expired``); only :func:`decode_identity` fails the check itself."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aimos import vocabulary
from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json, json_loads
from aimos.crypto.certs import (
    CERT_FIELDS,
    PERPETUAL_UNTIL,
    Certificate,
    parse_certificate,
    verify_certificate,
)
from aimos.crypto.ed25519 import verify
from aimos.crypto.encoding import b64u_decode
from aimos.crypto.messages import payload_message
from aimos.errors import AimosError
from aimos.verify.cognitive.reasons import R
from aimos.verify.kit import fail, hex_bytes, is_int, parse_time, same, sha256_hex
from aimos.vocabulary import HOUSEKEEPER as HOUSEKEEPER
from aimos.vocabulary import REVOKE_AGENT_IDENTITY_EVENT


@dataclass(frozen=True)
class Master:
    public_key: str
    fingerprint: str


@dataclass(frozen=True)
class Identity:
    agent_id: str
    pubkey: str
    certificate: str
    device_fingerprint: str
    valid_from: int
    valid_until: int
    revocation: Mapping[str, Any] | None

    @property
    def certificate_fingerprint(self) -> str:
        return sha256_hex(self.certificate)


def epoch_of_iso(value: object) -> int | None:
    """Unix seconds (>= 1) of an aimos ISO-8601 time, else None."""
    seconds = parse_time(value, form="aimos")
    return seconds if seconds is not None and seconds >= 1 else None


def decode_identity(raw: object, where: str) -> Identity:
    if not isinstance(raw, dict):
        fail(R.IDENTITY_INVALID, f"{where}: identity is not an object")
    valid_from, valid_until = raw.get("valid_from"), raw.get("valid_until")
    # Unix seconds up to 9999-12-31T23:59:59Z, the latest time an ISO-8601 epoch can name.
    if not is_int(valid_from, 1, PERPETUAL_UNTIL) or not is_int(valid_until, 1, PERPETUAL_UNTIL):
        fail(R.IDENTITY_EPOCH_FIELDS_INVALID, f"{where}: identity validity is not Unix seconds")
    texts = [raw.get(k) for k in ("agent_id", "pubkey_b64u", "certificate_b64u", "device_fingerprint")]
    revocation = raw.get("revocation")
    if (
        not all(isinstance(t, str) and t for t in texts)
        or not str(raw["certificate_b64u"]).isascii()
        or valid_until <= valid_from
        or not (revocation is None or isinstance(revocation, dict))
    ):
        fail(R.IDENTITY_INVALID, f"{where}: identity fields are missing or malformed")
    return Identity(
        agent_id=raw["agent_id"],
        pubkey=raw["pubkey_b64u"],
        certificate=raw["certificate_b64u"],
        device_fingerprint=raw["device_fingerprint"],
        valid_from=valid_from,
        valid_until=valid_until,
        revocation=revocation,
    )


@functools.lru_cache(maxsize=256)  # every event of an epoch names the same certificate
def parse_cert(text: str) -> Certificate | str:
    """The certificate, or the reason it cannot be read (a pure function of the text: callers
    share the result and never change it)."""
    try:
        outer = json_loads(b64u_decode(text))
    except (AimosError, ValueError, UnicodeDecodeError):
        return R.CERT_MALFORMED
    if (
        not isinstance(outer, dict)
        or not isinstance(outer.get("body"), dict)
        or not isinstance(outer.get("sig"), str)
    ):
        return R.CERT_MALFORMED
    if not set(CERT_FIELDS).issubset(outer["body"]):
        return R.CERT_SCHEMA
    try:
        return parse_certificate(text)
    except AimosError:
        return R.CERT_MALFORMED


def authority(cert: Certificate, identity: Identity, master: Master) -> str | None:
    """The key that must have signed ``cert``: the master's, or, for the housekeeper's genesis
    certificate (issuer == agent_id == housekeeper), the housekeeper's own."""
    issuer = cert.body.get("issuer")
    if same(issuer, cert.body.get("agent_id")):
        return identity.pubkey if issuer == HOUSEKEEPER else None
    if issuer == vocabulary.MASTER_ISSUER or issuer == master.fingerprint:
        return master.public_key
    return None


@functools.lru_cache(maxsize=256)
def _issuer_signed(text: str, key: str) -> bool:
    """Does ``key`` sign the certificate ``text`` under the issuer it names? Pure, so remembered."""
    cert = parse_cert(text)
    if isinstance(cert, str):
        return False
    try:
        verify_certificate(cert, key, at=None, accepted_issuers=(str(cert.body["issuer"]),))
    except AimosError:
        return False
    return True


def cert_valid_at(cert: Certificate, key: str, at: int) -> str | None:
    if not _issuer_signed(cert.text, key):
        return R.CERT_SIG_INVALID
    if at < cert.valid_from:
        return R.CERT_NOT_YET_VALID
    if at > cert.valid_until:
        return R.CERT_EXPIRED
    return None


def identity_epoch(identity: Identity, master: Master, at: int) -> str | None:
    """None when ``identity`` could sign at ``at``: certified, matching, unrevoked."""
    cert = parse_cert(identity.certificate)
    if isinstance(cert, str):
        return cert
    key = authority(cert, identity, master)
    if key is None:
        return R.CERTIFICATE_AUTHORITY_MISSING
    reason = cert_valid_at(cert, key, at)
    if reason is not None:
        return reason
    body = cert.body
    if not (
        same(body.get("agent_id"), identity.agent_id)
        and same(body.get("pubkey"), identity.pubkey)
        and same(body.get("device_fp"), identity.device_fingerprint)
        and same(body.get("valid_from"), identity.valid_from)
        and same(body.get("valid_until"), identity.valid_until)
        and identity.valid_from <= at < identity.valid_until
    ):
        return R.IDENTITY_EPOCH_MISMATCH
    revocation = identity.revocation
    if revocation is None:
        return None
    if revocation.get("master_fingerprint") != master.fingerprint:
        return R.REVOCATION_MASTER_MISMATCH
    reason = verify_revocation(revocation, identity, master)
    if reason is not None:
        return reason
    if revocation["ts_signed"] <= at:
        return R.IDENTITY_REVOKED_BEFORE_SIGNATURE
    return None


def verify_revocation(rev: Mapping[str, Any], identity: Identity, master: Master) -> str | None:
    """A master-signed `hom.aimos.agent-revocation/v1` of exactly this certificate."""
    body = rev.get("signed_body")
    if (
        not isinstance(body, dict)
        or body.get("schema") != vocabulary.AGENT_REVOCATION_SCHEMA
        or body.get("event_type") != REVOKE_AGENT_IDENTITY_EVENT
    ):
        return R.REVOCATION_BODY_INVALID
    agent_id = body.get("agent_id")
    agent_valid_from = epoch_of_iso(body.get("agent_valid_from"))
    revoked_at = epoch_of_iso(body.get("revoked_at"))
    signature = hex_bytes(rev.get("signature"), 64)
    nonce, ts = rev.get("nonce"), rev.get("ts_signed")
    if (
        not isinstance(agent_id, str)
        or agent_valid_from is None
        or revoked_at is None
        or signature is None
        or not isinstance(nonce, str)
        or not nonce
        or not is_int(ts, 1)
    ):
        return R.REVOCATION_PROOF_MALFORMED
    try:
        target = hashlib.sha256(identity.certificate.encode("ascii")).digest()
        prior = commitments.revocation_prior_identity_hash(agent_id, agent_valid_from, identity.certificate)
        content = commitments.sha256(canonical_json(body))
        mutation = commitments.agent_revocation_mutation_hash(prior, content, signature)
    except (AimosError, UnicodeEncodeError, ValueError, OverflowError, OSError):
        return R.REVOCATION_PROOF_MALFORMED
    exact = (
        agent_id == rev.get("agent_id") == identity.agent_id
        and same(rev.get("agent_valid_from"), agent_valid_from)
        and body.get("target_cert_hash") == target.hex()
        # the signed body names the prior identity hash when it carries one (aimos's own
        # revocations bind it through the target certificate hash and the mutation hash)
        and body.get("prior_identity_hash", prior.hex()) == prior.hex()
        and body.get("master_fingerprint") == rev.get("master_fingerprint") == master.fingerprint
        and hex_bytes(rev.get("target_cert_hash"), 32) == target
        and hex_bytes(rev.get("prior_identity_hash"), 32) == prior
        and hex_bytes(rev.get("content_hash"), 32) == content
        and hex_bytes(rev.get("mutation_hash"), 32) == mutation
        and ts == revoked_at
    )
    if not exact:
        return R.REVOCATION_HASH_MISMATCH
    if not verify(master.public_key, payload_message(body, nonce, ts), signature):
        return R.REVOCATION_SIGNATURE_INVALID
    return None
