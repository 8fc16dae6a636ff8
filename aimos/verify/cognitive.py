"""Portable verifier of cognitive-weight evidence (`hom.aimos.mutmem-cognitive-evidence/v1`).

Pure: a parsed bundle (or its bytes) in, a :class:`CognitiveVerdict` out. It imports only the
crypto layer and the error types, reads no database, and trusts no stored hash: every hash,
certificate and signature is recomputed from the bundle's own material and the master key.

What is checked, in this order (the first failure is the primary reason):

1. the bundle canonicalizes (depth <= 32, safe integers, finite numbers); its hash is
   ``bundle_sha256 = H(canonicalJSON(bundle))``;
2. the envelope: exactly the six top-level fields and the exact ``format`` object;
3. the master identity: ``fingerprint = H(SPKI DER)``, equal to the caller's expected
   fingerprint when one is given (the trust anchor is the caller's, never the bundle's);
4. the memory list (strictly ascending ids, one company, lowercase hex content hash, float4
   display weight consistent with its milli value) and the producer's ``sql_records`` shape;
   a failure in 1-4 is fatal: no records and no proof root;
5. every event stream: identity epoch (certificate under the master, or the housekeeper's
   self-signed genesis certificate), ledger genesis predecessor and links, event-link mutation
   hashes, content hashes and signatures, revocations;
6. every memory, one proof record each: the projection graph (one genesis, no fork, no cycle,
   every row reachable), then each transition in chain order: display columns, integer
   continuity, the REWEIGHT provenance node (content hash, certificate fingerprint, signer epoch
   and revocation, signed-message form, signature, mutation hash, event type, binding to this
   memory and these weights), the projection hash h_i and the signed transition commitment t_i;
   then the genesis anchor (1.000, or a signed retained baseline) and terminal fidelity;
7. parity: the producer's ``sql_records`` must equal the records rebuilt here.

The corpus proof root is computed over the rebuilt records whenever step 4 passed. Reasons come
from the closed vocabulary :data:`REASONS`; the names follow the HOM-AIMOS reference verifier.
"""

from __future__ import annotations

import hashlib
import math
import struct
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from os import PathLike
from typing import Any, Final, Literal, TypedDict, TypeGuard

from aimos import vocabulary
from aimos.crypto import commitments
from aimos.crypto.canonical import MAX_SAFE_INTEGER, canonical_json, json_loads
from aimos.crypto.certs import (
    MASTER_ISSUER,
    PERPETUAL_UNTIL,
    Certificate,
    parse_certificate,
    verify_certificate,
)
from aimos.crypto.ed25519 import fingerprint_of_der, raw_from_spki, verify
from aimos.crypto.encoding import b64u_decode, float4_be, parse_iso_ms
from aimos.crypto.messages import payload_message
from aimos.errors import AimosError, CanonicalJSONError, NotFoundError, UsageError
from aimos.verify.kit import (  # re-exported: callers read strict JSON through this module
    BundleParseError,
    DuplicateKeyError,
    NonFiniteError,
    load_bundle,
    strict_json_loads,
)

SCHEMA: Final = "hom.aimos.mutmem-cognitive-evidence/v1"
FORMAT: Final[Mapping[str, object]] = {
    "schema": SCHEMA,
    "version": 1,
    "authority": "descriptive_only",
    "binary_encoding": "lowercase_hex",
    "time_encoding": "unix_seconds",
}
TOP_LEVEL_FIELDS: Final = frozenset(
    {"format", "company_id", "master_identity", "event_streams", "memories", "sql_records"}
)
MAX_BUNDLE_BYTES: Final = 512 * 1024 * 1024

HOUSEKEEPER: Final = "housekeeper"
REWEIGHT: Final = "REWEIGHT"
REVOKE_EVENT_TYPE: Final = "REVOKE_AGENT_IDENTITY"
BASELINE_ATTESTATION: Final = "retained_nondefault_weight_baseline"
BASELINE_OPERATION: Final = "cognitive_initial_weight_attested"
BASELINE_METADATA_SCHEMA: Final = "hom.aimos.cognitive-initial-weight/v1"
BASELINE_EVENT_SKEW: Final = 5  # seconds between a baseline's observation and its signed event
DEFAULT_WEIGHT_MILLI: Final = 1000
_CERT_FIELDS: Final = frozenset(
    {"v", "agent_id", "pubkey", "device_fp", "valid_from", "valid_until", "issuer", "issued_at"}
)

Verdict = Literal["valid", "invalid", "indeterminate"]
CertificationStatus = Literal[
    "certified_chain", "default_empty_chain", "signed_initial_weight", "unattested_initial_weight"
]
CERTIFIED_CHAIN: Final = "certified_chain"
DEFAULT_EMPTY_CHAIN: Final = "default_empty_chain"
SIGNED_INITIAL_WEIGHT: Final = "signed_initial_weight"
UNATTESTED_INITIAL_WEIGHT: Final = "unattested_initial_weight"
CERTIFICATION_STATUSES: Final = frozenset(
    {CERTIFIED_CHAIN, DEFAULT_EMPTY_CHAIN, SIGNED_INITIAL_WEIGHT, UNATTESTED_INITIAL_WEIGHT}
)


class R:
    """The atomic reasons. Composite reasons (a prefix and an atomic reason) are the values of
    the ``_PROVENANCE``, ``_LEDGER_CERT``, ``_LEDGER_PROOF`` and ``_BASELINE_EVENT`` tables."""

    # -- input and envelope (fatal: no records, no proof root) --
    BUNDLE_JSON_MALFORMED: Final = "bundle_json_malformed"
    BUNDLE_SIZE_LIMIT: Final = "bundle_size_limit"
    JSON_DUPLICATE_KEY: Final = "json_duplicate_key"
    CANONICAL_DEPTH_LIMIT: Final = "canonical_json_depth_limit"
    CANONICAL_UNSAFE_INTEGER: Final = "canonical_json_unsafe_integer"
    CANONICAL_NON_FINITE: Final = "canonical_json_non_finite"
    CANONICAL_KEY_TYPE: Final = "canonical_json_key_type"
    CANONICAL_UNSUPPORTED_TYPE: Final = "canonical_json_unsupported_type"
    CANONICAL_INVALID_STRING: Final = "canonical_json_invalid_string"
    CANONICAL_INVALID: Final = "canonical_json_invalid"
    BUNDLE_INVALID: Final = "cognitive_evidence_bundle_invalid"
    BUNDLE_SCHEMA_INVALID: Final = "cognitive_evidence_bundle_schema_invalid"
    BUNDLE_IDENTITY_INVALID: Final = "cognitive_evidence_bundle_identity_invalid"
    MASTER_FINGERPRINT_MISMATCH: Final = "cognitive_evidence_master_fingerprint_mismatch"
    MEMORY_ORDER_INVALID: Final = "cognitive_evidence_memory_order_invalid"
    MEMORY_CONTENT_INVALID: Final = "cognitive_evidence_memory_content_invalid"
    MEMORY_WEIGHT_INVALID: Final = "cognitive_evidence_memory_weight_invalid"
    SQL_RECORD_INVALID: Final = "cognitive_evidence_sql_record_invalid"
    SQL_COUNT_INVALID: Final = "cognitive_evidence_sql_count_invalid"
    # -- identities (event-stream identity decoding) --
    IDENTITY_INVALID: Final = "cognitive_evidence_identity_invalid"
    IDENTITY_EPOCH_FIELDS_INVALID: Final = "cognitive_evidence_identity_epoch_invalid"
    # -- identity epoch at a signing time (also raw baseline reasons) --
    CERT_MALFORMED: Final = "cert_malformed"
    CERT_SCHEMA: Final = "cert_schema"
    CERT_SIG_INVALID: Final = "cert_sig_invalid"
    CERT_NOT_YET_VALID: Final = "cert_not_yet_valid"
    CERT_EXPIRED: Final = "cert_expired"
    CERTIFICATE_AUTHORITY_MISSING: Final = "certificate_authority_missing"
    IDENTITY_EPOCH_MISMATCH: Final = "identity_epoch_mismatch"
    REVOCATION_MASTER_MISMATCH: Final = "revocation_master_mismatch"
    REVOCATION_BODY_INVALID: Final = "revocation_body_invalid"
    REVOCATION_HASH_MISMATCH: Final = "revocation_hash_mismatch"
    REVOCATION_SIGNATURE_INVALID: Final = "revocation_signature_invalid"
    REVOCATION_PROOF_MALFORMED: Final = "revocation_proof_malformed"
    IDENTITY_REVOKED_BEFORE_SIGNATURE: Final = "identity_revoked_before_signature"
    # -- a signed event's proof (composed with ledger / baseline prefixes) --
    EVENT_PROOF_VERSION: Final = "event_proof_version"
    EVENT_PROOF_HASH_MISMATCH: Final = "event_proof_hash_mismatch"
    EVENT_PROOF_MALFORMED: Final = "event_proof_malformed"
    SIG_INVALID: Final = "sig_invalid"
    MALFORMED_INPUT: Final = "malformed_input"
    # -- event streams --
    EVENT_STREAM_INVALID: Final = "cognitive_evidence_event_stream_invalid"
    EVENT_INVALID: Final = "cognitive_evidence_event_invalid"
    EVENT_IDENTITY_MISMATCH: Final = "cognitive_evidence_event_identity_mismatch"
    EVENT_IDENTITY_EPOCH_INVALID: Final = "cognitive_evidence_event_identity_epoch_invalid"
    EVENT_DUPLICATE: Final = "cognitive_evidence_event_duplicate"
    LEDGER_CHAIN_LINK_INVALID: Final = "event_ledger_chain_link_invalid"
    LEDGER_IDENTITY_MISMATCH: Final = "event_ledger_identity_mismatch"
    LEDGER_CERTIFICATE_ISSUER_INVALID: Final = "event_ledger_certificate_issuer_invalid"
    LEDGER_SIGNER_REVOKED: Final = "event_ledger_signer_revoked_at_signature_time"
    # -- REWEIGHT provenance (always emitted with the ``provenance_`` prefix) --
    SIGNED_BODY_MISSING: Final = "signed_body_missing"
    SIGNED_BODY_CONTENT_HASH_MISMATCH: Final = "signed_body_content_hash_mismatch"
    SIGNER_CERTIFICATE_FINGERPRINT_MISMATCH: Final = "signer_certificate_fingerprint_mismatch"
    SIGNER_REVOKED_BEFORE_EVIDENCE: Final = "signer_revoked_before_evidence"
    SIGNER_CERTIFICATE_ROW_MISMATCH: Final = "signer_certificate_row_mismatch"
    GENESIS_SHAPE_INVALID: Final = "genesis_shape_invalid"
    ELEVATED_REQUIRES_FORM4: Final = "elevated_provenance_requires_form4"
    SIGNED_CHAIN_CLAIM_INVALID: Final = "signed_chain_claim_invalid"
    SIGNED_DEVICE_CLAIM_MISMATCH: Final = "signed_device_claim_mismatch"
    MUTATION_HASH_MISMATCH: Final = "mutation_hash_mismatch"
    SIGNED_BODY_EVENT_TYPE_MISMATCH: Final = "signed_body_event_type_mismatch"
    EVENT_TYPE_INVALID: Final = "event_type_invalid"  # verified, but bound to another memory/weights
    # -- memory records --
    PORTABLE_EVIDENCE_MALFORMED: Final = "portable_evidence_malformed"
    # -- label (classification) chains, aimos's own --
    UNBACKED_PROJECTION: Final = "unbacked_projection"
    FORK_OR_DISCONNECTED_HISTORY: Final = "fork_or_disconnected_history"
    EPISTEMIC_HASH_INVALID: Final = "epistemic_hash_invalid"
    EPISTEMIC_LIVE_CONTENT_MISMATCH: Final = "epistemic_live_content_mismatch"
    EPISTEMIC_AUTHORITY_INVALID: Final = "epistemic_authority_invalid"
    EPISTEMIC_EVIDENCE_INVALID: Final = "epistemic_evidence_invalid"
    UNATTESTED_INITIAL_WEIGHT: Final = "unattested_initial_weight"
    BASELINE_TERMINAL_WEIGHT_MISMATCH: Final = "baseline_terminal_weight_mismatch"
    PROJECTION_FORK: Final = "cognitive_projection_fork"
    PROJECTION_GENESIS_INVALID: Final = "cognitive_projection_genesis_invalid"
    PROJECTION_CYCLE: Final = "cognitive_projection_cycle"
    PROJECTION_DISCONNECTED: Final = "cognitive_projection_disconnected"
    PROJECTION_DISPLAY_INVALID: Final = "projection_display_invalid"
    CONTINUITY_BREAK: Final = "continuity_break"
    PROJECTION_HASH_INVALID: Final = "projection_hash_invalid"
    TRANSITION_SIGNATURE_INVALID: Final = "transition_signature_invalid"
    BASELINE_CHAIN_ANCHOR_INVALID: Final = "baseline_chain_anchor_invalid"
    DEFAULT_CHAIN_ANCHOR_INVALID: Final = "default_chain_anchor_invalid"
    TERMINAL_WEIGHT_MISMATCH: Final = "terminal_weight_mismatch"
    # -- signed retained baselines --
    BASELINE_BINDING_INVALID: Final = "baseline_binding_invalid"
    BASELINE_EVENT_MISSING: Final = "baseline_event_missing"
    BASELINE_EVENT_EPOCH_INVALID: Final = "baseline_event_epoch_invalid"
    BASELINE_EVENT_BINDING_INVALID: Final = "baseline_event_binding_invalid"
    BASELINE_HASH_INVALID: Final = "baseline_hash_invalid"
    BASELINE_SIGNATURE_INVALID: Final = "baseline_signature_invalid"
    # -- corpus --
    SQL_PARITY_MISMATCH: Final = "sql_portable_parity_mismatch"
    # -- the verifier itself failed (verdict "indeterminate"; never caused by input alone) --
    VERIFIER_INTERNAL_ERROR: Final = "verifier_internal_error"


ATOMIC_REASONS: Final = frozenset(v for k, v in vars(R).items() if k.isupper() and isinstance(v, str))

_CERT_REASONS: Final = frozenset(
    {R.CERT_MALFORMED, R.CERT_SCHEMA, R.CERT_SIG_INVALID, R.CERT_NOT_YET_VALID, R.CERT_EXPIRED}
)
_REVOCATION_REASONS: Final = frozenset(
    {
        R.REVOCATION_MASTER_MISMATCH,
        R.REVOCATION_BODY_INVALID,
        R.REVOCATION_HASH_MISMATCH,
        R.REVOCATION_SIGNATURE_INVALID,
        R.REVOCATION_PROOF_MALFORMED,
    }
)
_EPOCH_REASONS: Final = (
    _CERT_REASONS
    | _REVOCATION_REASONS
    | {R.CERTIFICATE_AUTHORITY_MISSING, R.IDENTITY_EPOCH_MISMATCH, R.IDENTITY_REVOKED_BEFORE_SIGNATURE}
)
_EVENT_PROOF_REASONS: Final = frozenset(
    {
        R.EVENT_PROOF_VERSION,
        R.EVENT_PROOF_HASH_MISMATCH,
        R.EVENT_PROOF_MALFORMED,
        R.SIG_INVALID,
        R.MALFORMED_INPUT,
    }
)
_PROVENANCE_BASES: Final = (
    _CERT_REASONS
    | _REVOCATION_REASONS
    | {
        R.CERTIFICATE_AUTHORITY_MISSING,
        R.SIGNED_BODY_MISSING,
        R.SIGNED_BODY_CONTENT_HASH_MISMATCH,
        R.SIGNER_CERTIFICATE_FINGERPRINT_MISMATCH,
        R.SIGNER_REVOKED_BEFORE_EVIDENCE,
        R.SIGNER_CERTIFICATE_ROW_MISMATCH,
        R.GENESIS_SHAPE_INVALID,
        R.ELEVATED_REQUIRES_FORM4,
        R.SIGNED_CHAIN_CLAIM_INVALID,
        R.SIGNED_DEVICE_CLAIM_MISMATCH,
        R.SIG_INVALID,
        R.MALFORMED_INPUT,
        R.MUTATION_HASH_MISMATCH,
        R.SIGNED_BODY_EVENT_TYPE_MISMATCH,
        R.EVENT_TYPE_INVALID,
    }
)
# Composite reasons, e.g. provenance_cert_expired, event_ledger_proof_invalid:sig_invalid.
_PROVENANCE: Final = {b: f"provenance_{b}" for b in _PROVENANCE_BASES}
_LEDGER_CERT: Final = {b: f"event_ledger_certificate_invalid:{b}" for b in _CERT_REASONS}
_LEDGER_PROOF: Final = {b: f"event_ledger_proof_invalid:{b}" for b in _EVENT_PROOF_REASONS}
_BASELINE_EVENT: Final = {b: f"baseline_event_{b}" for b in _EVENT_PROOF_REASONS}

#: Every reason this module can report, as a primary reason, a record reason or a stream reason.
PORTABLE_REASONS: Final[frozenset[str]] = (
    ATOMIC_REASONS
    | frozenset(_PROVENANCE.values())
    | frozenset(_LEDGER_CERT.values())
    | frozenset(_LEDGER_PROOF.values())
    | frozenset(_BASELINE_EVENT.values())
)
#: The reasons of the reference's in-database ``verify_cognitive_weight_chain`` (PROTOCOL-NOTES
#: section 7). The portable verifier reports the finer names above instead (unreachable_rows is
#: cognitive_projection_disconnected here, hash_mismatch is projection_hash_invalid, ...); they
#: are part of the vocabulary because a producer's ``sql_records`` may carry them.
IN_DATABASE_REASONS: Final[frozenset[str]] = frozenset(
    {
        "provenance_binding_invalid",
        "provenance_hash_invalid",
        "continuity_break",
        "hash_mismatch",
        "signature_missing",
        "transition_hash_invalid",
        "signature_invalid",
        "unreachable_rows",
        "terminal_weight_mismatch",
    }
)
#: The closed vocabulary of cognitive-evidence verification.
REASONS: Final[frozenset[str]] = PORTABLE_REASONS | IN_DATABASE_REASONS
#: Reasons after which no proof records exist (the envelope, identity or memory list is unusable).
FATAL_REASONS: Final = frozenset(
    {
        R.BUNDLE_JSON_MALFORMED,
        R.BUNDLE_SIZE_LIMIT,
        R.JSON_DUPLICATE_KEY,
        R.CANONICAL_DEPTH_LIMIT,
        R.CANONICAL_UNSAFE_INTEGER,
        R.CANONICAL_NON_FINITE,
        R.CANONICAL_KEY_TYPE,
        R.CANONICAL_UNSUPPORTED_TYPE,
        R.CANONICAL_INVALID_STRING,
        R.CANONICAL_INVALID,
        R.BUNDLE_INVALID,
        R.BUNDLE_SCHEMA_INVALID,
        R.BUNDLE_IDENTITY_INVALID,
        R.MASTER_FINGERPRINT_MISMATCH,
        R.MEMORY_ORDER_INVALID,
        R.MEMORY_CONTENT_INVALID,
        R.MEMORY_WEIGHT_INVALID,
        R.SQL_RECORD_INVALID,
        R.SQL_COUNT_INVALID,
        R.VERIFIER_INTERNAL_ERROR,
    }
)
_CANONICAL_REASONS: Final = frozenset(
    {
        R.CANONICAL_DEPTH_LIMIT,
        R.CANONICAL_UNSAFE_INTEGER,
        R.CANONICAL_NON_FINITE,
        R.CANONICAL_KEY_TYPE,
        R.CANONICAL_UNSUPPORTED_TYPE,
        R.CANONICAL_INVALID_STRING,
    }
)


# --- results ----------------------------------------------------------------------------------
class CognitiveRecord(TypedDict):
    """One memory's proof record (a plain dict: JSON-ready, and exactly the six fields the corpus
    proof root is computed over)."""

    memory_id: str
    certification_status: str
    ok: bool
    chain_length: int
    sigs_verified: int
    reason: str | None


@dataclass(frozen=True)
class EventStreamResult:
    signer_agent_id: str
    signer_valid_from: int | None
    event_count: int
    valid: bool
    reason: str | None


@dataclass(frozen=True)
class CognitiveVerdict:
    verdict: Verdict
    primary_reason: str | None
    records: tuple[CognitiveRecord, ...] = ()
    corpus_proof_root: str | None = None
    bundle_sha256: str | None = None
    event_streams: tuple[EventStreamResult, ...] = ()
    sql_parity: bool | None = None
    detail: str | None = field(default=None, compare=False)

    @property
    def ok(self) -> bool:
        return self.verdict == "valid"

    def as_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "verdict": self.verdict,
            "primary_reason": self.primary_reason,
            "detail": self.detail,
            "bundle_sha256": self.bundle_sha256,
            "corpus_proof_root": self.corpus_proof_root,
            "sql_parity": self.sql_parity,
            "records": [dict(r) for r in self.records],
            "event_streams": [
                {
                    "signer_agent_id": s.signer_agent_id,
                    "signer_valid_from": s.signer_valid_from,
                    "event_count": s.event_count,
                    "valid": s.valid,
                    "reason": s.reason,
                }
                for s in self.event_streams
            ],
        }


class _Fail(Exception):
    """A check failed with a reason of the closed vocabulary."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail or reason


# --- small helpers ----------------------------------------------------------------------------
_HEX_DIGITS: Final = frozenset("0123456789abcdef")


def _hex(value: object, nbytes: int) -> bytes | None:
    """Exactly ``nbytes`` bytes given as lowercase hex; None for anything else."""
    if isinstance(value, str) and len(value) == 2 * nbytes and _HEX_DIGITS.issuperset(value):
        return bytes.fromhex(value)
    return None


def _int(value: object, minimum: int | None = None, maximum: int | None = None) -> TypeGuard[int]:
    """A JSON integer (never a bool) within the safe range and the given bounds."""
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) > MAX_SAFE_INTEGER:
        return False
    return (minimum is None or value >= minimum) and (maximum is None or value <= maximum)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _eq(a: object, b: object) -> bool:
    """JSON equality of scalars: booleans never equal numbers (Python says True == 1)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def _js_round(value: float) -> int:
    """``Math.round`` for the finite values used here (halves round up)."""
    return math.floor(value + 0.5)


def _float4_hex(milli: int) -> str:
    return float4_be(milli / 1000).hex()


def _sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _canonical_uuid(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        return str(uuid.UUID(value)) == value
    except ValueError:
        return False


def _epoch_of_iso(value: object) -> int | None:
    if not isinstance(value, str):
        return None
    try:
        seconds = parse_iso_ms(value)
    except AimosError:
        return None
    return seconds if seconds >= 1 else None


# --- identities and certificates ---------------------------------------------------------------
@dataclass(frozen=True)
class _Master:
    public_key: str
    fingerprint: str


@dataclass(frozen=True)
class _Identity:
    agent_id: str
    pubkey: str
    certificate: str
    device_fingerprint: str
    valid_from: int
    valid_until: int
    revocation: Mapping[str, Any] | None

    @property
    def certificate_fingerprint(self) -> str:
        return _sha256_hex(self.certificate)


def _decode_identity(raw: object, where: str) -> _Identity:
    if not isinstance(raw, dict):
        raise _Fail(R.IDENTITY_INVALID, f"{where}: identity is not an object")
    valid_from, valid_until = raw.get("valid_from"), raw.get("valid_until")
    # Unix seconds up to 9999-12-31T23:59:59Z, the latest time an ISO-8601 epoch can name.
    if not _int(valid_from, 1, PERPETUAL_UNTIL) or not _int(valid_until, 1, PERPETUAL_UNTIL):
        raise _Fail(R.IDENTITY_EPOCH_FIELDS_INVALID, f"{where}: identity validity is not Unix seconds")
    texts = [raw.get(k) for k in ("agent_id", "pubkey_b64u", "certificate_b64u", "device_fingerprint")]
    revocation = raw.get("revocation")
    if (
        not all(isinstance(t, str) and t for t in texts)
        or not str(raw["certificate_b64u"]).isascii()
        or valid_until <= valid_from
        or not (revocation is None or isinstance(revocation, dict))
    ):
        raise _Fail(R.IDENTITY_INVALID, f"{where}: identity fields are missing or malformed")
    return _Identity(
        agent_id=raw["agent_id"],
        pubkey=raw["pubkey_b64u"],
        certificate=raw["certificate_b64u"],
        device_fingerprint=raw["device_fingerprint"],
        valid_from=valid_from,
        valid_until=valid_until,
        revocation=revocation,
    )


def _parse_cert(text: str) -> Certificate | str:
    """The certificate, or the reason it cannot be read."""
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
    if not _CERT_FIELDS.issubset(outer["body"]):
        return R.CERT_SCHEMA
    try:
        return parse_certificate(text)
    except AimosError:
        return R.CERT_MALFORMED


def _authority(cert: Certificate, identity: _Identity, master: _Master) -> str | None:
    """The key that must have signed ``cert``: the master's, or, for the housekeeper's genesis
    certificate (issuer == agent_id == housekeeper), the housekeeper's own."""
    issuer = cert.body.get("issuer")
    if _eq(issuer, cert.body.get("agent_id")):
        return identity.pubkey if issuer == HOUSEKEEPER else None
    if issuer == MASTER_ISSUER or issuer == master.fingerprint:
        return master.public_key
    return None


def _cert_valid_at(cert: Certificate, authority: str, at: int) -> str | None:
    try:
        verify_certificate(cert, authority, at=None, accepted_issuers=(str(cert.body["issuer"]),))
    except AimosError:
        return R.CERT_SIG_INVALID
    if at < cert.valid_from:
        return R.CERT_NOT_YET_VALID
    if at > cert.valid_until:
        return R.CERT_EXPIRED
    return None


def _identity_epoch(identity: _Identity, master: _Master, at: int) -> str | None:
    """None when ``identity`` could sign at ``at``: certified, matching, unrevoked."""
    cert = _parse_cert(identity.certificate)
    if isinstance(cert, str):
        return cert
    authority = _authority(cert, identity, master)
    if authority is None:
        return R.CERTIFICATE_AUTHORITY_MISSING
    reason = _cert_valid_at(cert, authority, at)
    if reason is not None:
        return reason
    body = cert.body
    if not (
        _eq(body.get("agent_id"), identity.agent_id)
        and _eq(body.get("pubkey"), identity.pubkey)
        and _eq(body.get("device_fp"), identity.device_fingerprint)
        and _eq(body.get("valid_from"), identity.valid_from)
        and _eq(body.get("valid_until"), identity.valid_until)
        and identity.valid_from <= at < identity.valid_until
    ):
        return R.IDENTITY_EPOCH_MISMATCH
    revocation = identity.revocation
    if revocation is None:
        return None
    if revocation.get("master_fingerprint") != master.fingerprint:
        return R.REVOCATION_MASTER_MISMATCH
    reason = _verify_revocation(revocation, identity, master)
    if reason is not None:
        return reason
    if revocation["ts_signed"] <= at:
        return R.IDENTITY_REVOKED_BEFORE_SIGNATURE
    return None


def _verify_revocation(rev: Mapping[str, Any], identity: _Identity, master: _Master) -> str | None:
    """A master-signed `hom.aimos.agent-revocation/v1` of exactly this certificate."""
    body = rev.get("signed_body")
    if (
        not isinstance(body, dict)
        or body.get("schema") != vocabulary.AGENT_REVOCATION_SCHEMA
        or body.get("event_type") != REVOKE_EVENT_TYPE
    ):
        return R.REVOCATION_BODY_INVALID
    agent_id = body.get("agent_id")
    agent_valid_from = _epoch_of_iso(body.get("agent_valid_from"))
    revoked_at = _epoch_of_iso(body.get("revoked_at"))
    signature = _hex(rev.get("signature"), 64)
    nonce, ts = rev.get("nonce"), rev.get("ts_signed")
    if (
        not isinstance(agent_id, str)
        or agent_valid_from is None
        or revoked_at is None
        or signature is None
        or not isinstance(nonce, str)
        or not nonce
        or not _int(ts, 1)
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
        and _eq(rev.get("agent_valid_from"), agent_valid_from)
        and body.get("target_cert_hash") == target.hex()
        and body.get("prior_identity_hash") == prior.hex()
        and body.get("master_fingerprint") == rev.get("master_fingerprint") == master.fingerprint
        and _hex(rev.get("target_cert_hash"), 32) == target
        and _hex(rev.get("prior_identity_hash"), 32) == prior
        and _hex(rev.get("content_hash"), 32) == content
        and _hex(rev.get("mutation_hash"), 32) == mutation
        and ts == revoked_at
    )
    if not exact:
        return R.REVOCATION_HASH_MISMATCH
    if not verify(master.public_key, payload_message(body, nonce, ts), signature):
        return R.REVOCATION_SIGNATURE_INVALID
    return None


# --- signed events ----------------------------------------------------------------------------
def _event_proof(event: Mapping[str, Any], pubkey: str) -> str | None:
    """The event's content hash, ledger-link mutation hash, field binding and signature."""
    body = event.get("signed_body")
    if (
        not isinstance(body, dict)
        or event.get("proof_required") is not True
        or not _eq(event.get("ledger_version"), 1)
    ):
        return R.EVENT_PROOF_VERSION
    previous = _hex(event.get("previous_mutation_hash"), 32)
    nonce, signed_at = event.get("nonce"), event.get("signed_at")
    if previous is None or not isinstance(nonce, str) or not _int(signed_at, 1):
        return R.EVENT_PROOF_MALFORMED
    try:
        content = commitments.provenance_content_hash(body)
        mutation = commitments.event_link_hash(previous, content, nonce, signed_at)
        same_metadata = canonical_json(body.get("metadata")) == canonical_json(event.get("metadata"))
    except AimosError:
        return R.EVENT_PROOF_MALFORMED
    exact = (
        _eq(body.get("event_id"), event.get("event_id"))
        and _eq(body.get("company_id"), event.get("company_id"))
        and _eq(body.get("subject_agent_id"), event.get("subject_agent_id"))
        and _eq(body.get("signer_agent_id"), event.get("signer_agent_id"))
        and _eq(_epoch_of_iso(body.get("signer_valid_from")), event.get("signer_valid_from"))
        and _eq(body.get("cert_fingerprint"), event.get("certificate_fingerprint"))
        and _eq(body.get("identity_tier"), event.get("identity_tier"))
        and _eq(body.get("authority_kind"), event.get("authority_kind"))
        and _eq(body.get("operation"), event.get("operation"))
        and _eq(body.get("key"), event.get("key"))
        and same_metadata
        and _eq(body.get("parent_event_id"), event.get("parent_event_id"))
        and _eq(body.get("ledger_seq"), event.get("ledger_sequence"))
        and body.get("prev_mutation_hash") == previous.hex()
        and _eq(body.get("ts_signed"), signed_at)
        and _hex(event.get("content_hash"), 32) == content
        and _hex(event.get("mutation_hash"), 32) == mutation
    )
    if not exact:
        return R.EVENT_PROOF_HASH_MISMATCH
    signature = _hex(event.get("signature"), 64)
    if signature is None:
        return R.EVENT_PROOF_MALFORMED
    if not nonce:
        return R.MALFORMED_INPUT
    if not verify(pubkey, payload_message(body, nonce, signed_at), signature):
        return R.SIG_INVALID
    return None


@dataclass(frozen=True)
class _IndexedEvent:
    event: Mapping[str, Any]
    verified: bool


def _verify_event_stream(
    stream: object, index: int, company: str, master: _Master, seen: dict[str, _IndexedEvent]
) -> tuple[EventStreamResult, str | None]:
    """One signer epoch's ledger; every event with an id is added to ``seen`` (with whether its
    stream verified). Returns the result and a detail for a failure."""
    where = f"event_streams[{index}]"
    agent = str(stream.get("signer_agent_id", "")) if isinstance(stream, dict) else ""
    valid_from = stream.get("signer_valid_from") if isinstance(stream, dict) else None
    events = stream.get("events") if isinstance(stream, dict) else None
    count = len(events) if isinstance(events, list) else 0
    added: list[str] = []
    try:
        _check_event_stream(stream, where, company, master)
        reason, detail = None, None
    except _Fail as exc:
        reason, detail = exc.reason, exc.detail
    if isinstance(events, list):
        for k, event in enumerate(events):
            event_id = event.get("event_id") if isinstance(event, dict) else None
            if not isinstance(event_id, str) or not event_id:
                continue
            if event_id in seen:
                if reason is None:
                    reason, detail = R.EVENT_DUPLICATE, f"{where}.events[{k}]: event id {event_id} repeats"
                continue
            seen[event_id] = _IndexedEvent(event, verified=False)
            added.append(event_id)
    if reason is None:
        for event_id in added:
            seen[event_id] = _IndexedEvent(seen[event_id].event, verified=True)
    result = EventStreamResult(
        signer_agent_id=agent,
        signer_valid_from=valid_from if _int(valid_from) else None,
        event_count=count,
        valid=reason is None,
        reason=reason,
    )
    return result, detail


def _check_event_stream(stream: object, where: str, company: str, master: _Master) -> None:
    if not isinstance(stream, dict):
        raise _Fail(R.EVENT_STREAM_INVALID, f"{where}: not an object")
    identity = _decode_identity(stream.get("identity"), f"{where}.identity")
    if stream.get("signer_agent_id") != identity.agent_id or not _eq(
        stream.get("signer_valid_from"), identity.valid_from
    ):
        raise _Fail(R.EVENT_IDENTITY_MISMATCH, f"{where}: the stream's signer is not its identity's")
    events = stream.get("events")
    if not isinstance(events, list):
        raise _Fail(R.EVENT_STREAM_INVALID, f"{where}: events is not a list")
    for k, event in enumerate(events):
        if not isinstance(event, dict) or not _int(event.get("signed_at"), 1):
            raise _Fail(R.EVENT_INVALID, f"{where}.events[{k}]: not an event with integer signed_at")
        epoch = _identity_epoch(identity, master, event["signed_at"])
        if (
            event.get("company_id") != company
            or event.get("signer_agent_id") != identity.agent_id
            or not _eq(event.get("signer_valid_from"), identity.valid_from)
            or epoch
        ):
            raise _Fail(
                R.EVENT_IDENTITY_EPOCH_INVALID,
                f"{where}.events[{k}]: signer epoch cannot sign it ({epoch or 'company or signer differs'})",
            )
    previous = commitments.event_genesis_predecessor(company, identity.agent_id, identity.valid_from)
    ids: set[str] = set()
    for k, event in enumerate(events):
        at = f"{where}.events[{k}]"
        signed_at: int = event["signed_at"]
        if (
            not _eq(event.get("ledger_sequence"), k + 1)
            or _hex(event.get("previous_mutation_hash"), 32) != previous
        ):
            raise _Fail(R.LEDGER_CHAIN_LINK_INVALID, f"{at}: does not link to its predecessor")
        cert = _parse_cert(identity.certificate)
        if (
            isinstance(cert, str)
            or not _eq(cert.body.get("agent_id"), identity.agent_id)
            or not _eq(cert.body.get("pubkey"), identity.pubkey)
            or event.get("certificate_fingerprint") != identity.certificate_fingerprint
        ):
            raise _Fail(R.LEDGER_IDENTITY_MISMATCH, f"{at}: certificate is not the signer's")
        authority = _authority(cert, identity, master)
        if authority is None:
            raise _Fail(R.LEDGER_CERTIFICATE_ISSUER_INVALID, f"{at}: certificate issuer is not trusted")
        cert_reason = _cert_valid_at(cert, authority, signed_at)
        if cert_reason is not None:
            raise _Fail(_LEDGER_CERT[cert_reason], f"{at}: {cert_reason}")
        revocation = identity.revocation
        if (
            revocation is not None
            and _int(revocation.get("ts_signed"))
            and revocation["ts_signed"] <= signed_at
        ):
            raise _Fail(R.LEDGER_SIGNER_REVOKED, f"{at}: signer was revoked")
        proof_reason = _event_proof(event, identity.pubkey)
        if proof_reason is not None:
            raise _Fail(_LEDGER_PROOF[proof_reason], f"{at}: {proof_reason}")
        event_id = event.get("event_id")
        if not isinstance(event_id, str) or not event_id or event_id in ids:
            raise _Fail(R.EVENT_DUPLICATE, f"{at}: missing or repeated event id")
        ids.add(event_id)
        previous = bytes.fromhex(event["mutation_hash"])


# --- REWEIGHT provenance ----------------------------------------------------------------------
def _provenance_message(prov: Mapping[str, Any], body: Mapping[str, Any], identity: _Identity) -> bytes | str:
    """The signed bytes of a provenance node (forms 1-4), or the reason they cannot be formed."""
    nonce, signed_at = prov.get("nonce"), prov.get("signed_at")
    signature_form = prov.get("signature_form", 1)
    request_form = prov.get("request_signature_form", 1)
    if not isinstance(nonce, str) or not nonce or not _int(signed_at, 1):
        return R.MALFORMED_INPUT
    if not _int(signature_form, 1) or not _int(request_form, 1):
        return R.MALFORMED_INPUT
    tier = prov.get("identity_tier")
    claims = prov.get("signed_claims")
    if tier in ("T2", "T3") and request_form != 4:
        return R.ELEVATED_REQUIRES_FORM4
    if request_form == 4:
        previous_claim = claims.get("prev_chain_hash") if isinstance(claims, dict) else None
        try:
            claim_ok = isinstance(previous_claim, str) and len(b64u_decode(previous_claim)) == 32
        except AimosError:
            claim_ok = False
        if not claim_ok:
            return R.SIGNED_CHAIN_CLAIM_INVALID
        if (
            tier == "T3"
            and isinstance(claims, dict)
            and claims.get("device_fp") != identity.device_fingerprint
        ):
            return R.SIGNED_DEVICE_CLAIM_MISMATCH
    canonical = canonical_json(body)
    tail = [nonce.encode("utf-8"), str(signed_at).encode()]
    if signature_form == 2:  # provenance form 2: payload \n memory_originated_at
        originated = prov.get("memory_originated_at")
        if not _int(originated):
            return R.MALFORMED_INPUT
        return b"\n".join([canonical, *tail, str(originated).encode()])
    if request_form in (3, 4):
        method, path = prov.get("signed_method"), prov.get("signed_path")
        method = method.upper() if isinstance(method, str) else ""
        path = path.split("?", 1)[0] if isinstance(path, str) else ""
        if not method or not path:
            return R.MALFORMED_INPUT
        parts = [canonical, method.encode("utf-8"), path.encode("utf-8")]
        if request_form == 4:
            assert isinstance(claims, dict)
            device = claims.get("device_fp")
            if device is not None and (not isinstance(device, str) or not device):
                return R.MALFORMED_INPUT
            parts.append(canonical_json({"prev_chain_hash": claims["prev_chain_hash"], "device_fp": device}))
        return b"\n".join([*parts, *tail])
    return b"\n".join([canonical, *tail])


def _verify_provenance(prov: Mapping[str, Any], identity: _Identity, master: _Master) -> str | None:
    """The node's own proof; returns None or an atomic provenance reason."""
    body = prov.get("body")
    if not isinstance(body, dict):
        return R.SIGNED_BODY_MISSING
    content = commitments.provenance_content_hash(body)
    stored_content = _hex(prov.get("content_hash"), 32)
    if stored_content is None:
        return R.MALFORMED_INPUT
    if stored_content != content:
        return R.SIGNED_BODY_CONTENT_HASH_MISMATCH
    if prov.get("certificate_fingerprint") != identity.certificate_fingerprint:
        return R.SIGNER_CERTIFICATE_FINGERPRINT_MISMATCH
    signed_at = prov.get("signed_at")
    if not _int(signed_at, 1):
        return R.MALFORMED_INPUT
    epoch = _identity_epoch(identity, master, signed_at)
    if (
        epoch is not None
        or prov.get("signer_agent_id") != identity.agent_id
        or not _eq(prov.get("signer_valid_from"), identity.valid_from)
    ):
        if epoch == R.IDENTITY_REVOKED_BEFORE_SIGNATURE:
            return R.SIGNER_REVOKED_BEFORE_EVIDENCE
        if epoch is None or epoch == R.IDENTITY_EPOCH_MISMATCH:
            return R.SIGNER_CERTIFICATE_ROW_MISMATCH  # e.g. a substituted key or certificate
        return epoch
    previous_value = prov.get("previous_mutation_hash")
    if not _eq(prov.get("is_genesis"), previous_value is None):
        return R.GENESIS_SHAPE_INVALID
    message = _provenance_message(prov, body, identity)
    if isinstance(message, str):
        return message
    signature = _hex(prov.get("signature"), 64)
    if signature is None:
        return R.MALFORMED_INPUT
    if not verify(identity.pubkey, message, signature):
        return R.SIG_INVALID
    previous = None if previous_value is None else _hex(previous_value, 32)
    if previous_value is not None and previous is None:
        return R.MALFORMED_INPUT
    originated = prov.get("memory_originated_at") if prov.get("signature_form") == 2 else None
    expected = commitments.provenance_mutation_hash(content, previous, prov["nonce"], signed_at, originated)
    if _hex(prov.get("mutation_hash"), 32) != expected:
        return R.MUTATION_HASH_MISMATCH
    if prov.get("event_type") != REWEIGHT or body.get("event_type") != REWEIGHT:
        return R.SIGNED_BODY_EVENT_TYPE_MISMATCH
    return None


def _weight_matches(value: object, milli: int) -> bool:
    number = _number(value)
    scaled = math.nan if number is None else number * 1000
    return math.isfinite(scaled) and _js_round(scaled) == milli


def _provenance_bound(
    projection: Mapping[str, Any], prov: Mapping[str, Any], memory: Mapping[str, Any], memory_id: str
) -> bool:
    """The node authorizes exactly this transition of this memory (no cross-memory replay)."""
    body = prov.get("body")
    assert isinstance(body, dict)
    return (
        prov.get("event_type") == REWEIGHT
        and _eq(prov.get("binding_schema_version"), 2)
        and prov.get("signer_agent_id") == HOUSEKEEPER
        and prov.get("backfilled") is False
        and body.get("event_type") == REWEIGHT
        and body.get("company_id") == memory.get("company_id")
        and body.get("memory_id") == memory_id
        and _weight_matches(body.get("old_weight"), projection["old_weight_milli"])
        and _weight_matches(body.get("new_weight"), projection["new_weight_milli"])
        and projection.get("company_id") == memory.get("company_id")
        and projection.get("memory_id") == memory_id
        and projection.get("provenance_mutation_hash") == prov.get("mutation_hash")
    )


# --- signed retained baselines -----------------------------------------------------------------
def _verify_baseline(
    baseline: Mapping[str, Any],
    memory: Mapping[str, Any],
    identity: _Identity,
    master: _Master,
    events: Mapping[str, _IndexedEvent],
) -> str | None:
    observed_float4 = _hex(baseline.get("observed_weight_float4"), 4)
    observed_at = baseline.get("observed_at")
    milli = baseline.get("observed_weight_milli")
    if observed_float4 is None or not _int(observed_at, 1) or not _int(milli, 100, 3000):
        return R.BASELINE_BINDING_INVALID
    observed = struct.unpack(">f", observed_float4)[0]
    if not math.isfinite(observed):
        return R.BASELINE_BINDING_INVALID
    epoch = _identity_epoch(identity, master, observed_at)
    exact = (
        baseline.get("company_id") == memory.get("company_id")
        and baseline.get("memory_id") == memory.get("memory_id")
        and baseline.get("live_content_hash") == memory.get("content_hash")
        and observed_float4 != float4_be(1.0)
        and _js_round(observed * 1000) == milli
        and baseline.get("attestation_reason") == BASELINE_ATTESTATION
        and baseline.get("historical_origin_claimed") is False
        and baseline.get("signer_agent_id") == HOUSEKEEPER == identity.agent_id
        and _eq(baseline.get("signer_valid_from"), identity.valid_from)
        and baseline.get("certificate_fingerprint") == identity.certificate_fingerprint
        and epoch is None
    )
    if not exact:
        return epoch or R.BASELINE_BINDING_INVALID
    event_id = baseline.get("event_id")
    indexed = events.get(event_id) if isinstance(event_id, str) else None
    if indexed is None or indexed.event.get("mutation_hash") != baseline.get("event_mutation_hash"):
        return R.BASELINE_EVENT_MISSING
    event = indexed.event
    event_at = event.get("signed_at")
    if (
        event.get("company_id") != baseline.get("company_id")
        or event.get("signer_agent_id") != baseline.get("signer_agent_id")
        or not _eq(event.get("signer_valid_from"), baseline.get("signer_valid_from"))
        or event.get("certificate_fingerprint") != baseline.get("certificate_fingerprint")
        or not indexed.verified
        or not _int(event_at, 1)
        or abs(event_at - observed_at) > BASELINE_EVENT_SKEW
        or _identity_epoch(identity, master, event_at) is not None
    ):
        return R.BASELINE_EVENT_EPOCH_INVALID
    proof = _event_proof(event, identity.pubkey)
    if proof is not None:
        return _BASELINE_EVENT[proof]
    metadata = event.get("metadata")
    if (
        not isinstance(metadata, dict)
        or event.get("operation") != BASELINE_OPERATION
        or event.get("key") != memory.get("memory_id")
        or metadata.get("schema") != BASELINE_METADATA_SCHEMA
        or metadata.get("observed_weight_float4") != observed_float4.hex()
        or not _eq(metadata.get("weight_milli"), milli)
        or not _eq(metadata.get("observed_ts"), observed_at)
        or metadata.get("memory_content_hash") != memory.get("content_hash")
        or metadata.get("historical_origin_claimed") is not False
        or metadata.get("canonical_memory_mutation") is not False
    ):
        return R.BASELINE_EVENT_BINDING_INVALID
    event_mutation = _hex(baseline.get("event_mutation_hash"), 32)
    live = _hex(baseline.get("live_content_hash"), 32)
    cert_fp = _hex(baseline.get("certificate_fingerprint"), 32)
    if event_mutation is None or live is None or cert_fp is None or not isinstance(event_id, str):
        return R.BASELINE_BINDING_INVALID
    try:
        expected = commitments.cognitive_baseline_hash(
            str(baseline.get("company_id")),
            str(baseline.get("memory_id")),
            event_id,
            event_mutation,
            live,
            observed,
            milli,
            observed_at,
            identity.valid_from,
            cert_fp,
        )
    except (AimosError, struct.error):
        return R.BASELINE_BINDING_INVALID
    if _hex(baseline.get("baseline_hash"), 32) != expected:
        return R.BASELINE_HASH_INVALID
    signature = _hex(baseline.get("signature"), 64)
    if signature is None or not verify(identity.pubkey, expected, signature):
        return R.BASELINE_SIGNATURE_INVALID
    return None


# --- memories ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Projection:
    row: Mapping[str, Any]
    provenance: Mapping[str, Any]
    identity: _Identity
    projection_hash: bytes
    previous_projection_hash: bytes | None
    sigma: bytes
    transition_hash: bytes
    transition_signature: bytes


def _decode_projection(raw: object, where: str) -> _Projection:
    if not isinstance(raw, dict) or not isinstance(raw.get("provenance"), dict):
        raise _Fail(R.PORTABLE_EVIDENCE_MALFORMED, f"{where}: projection or provenance is not an object")
    fields = {
        "projection_hash": (32, False),
        "previous_projection_hash": (32, True),
        "provenance_mutation_hash": (32, False),
        "transition_hash": (32, False),
        "transition_signature": (64, False),
    }
    decoded: dict[str, bytes | None] = {}
    for name, (size, nullable) in fields.items():
        value = raw.get(name)
        decoded[name] = None if value is None and nullable else _hex(value, size)
        if decoded[name] is None and not (value is None and nullable):
            raise _Fail(R.PORTABLE_EVIDENCE_MALFORMED, f"{where}.{name}: not {size} bytes of lowercase hex")
    try:
        identity = _decode_identity(raw["provenance"].get("identity"), f"{where}.provenance.identity")
    except _Fail as exc:
        raise _Fail(R.PORTABLE_EVIDENCE_MALFORMED, exc.detail) from exc

    def need(name: str) -> bytes:
        value = decoded[name]
        assert value is not None
        return value

    return _Projection(
        row=raw,
        provenance=raw["provenance"],
        identity=identity,
        projection_hash=need("projection_hash"),
        previous_projection_hash=decoded["previous_projection_hash"],
        sigma=need("provenance_mutation_hash"),
        transition_hash=need("transition_hash"),
        transition_signature=need("transition_signature"),
    )


def _order(projections: list[_Projection]) -> list[_Projection]:
    """The single chain from the single genesis; raises on a fork, cycle or unreachable row."""
    by_hash: dict[bytes, _Projection] = {}
    child: dict[bytes, _Projection] = {}
    genesis: list[_Projection] = []
    for p in projections:
        prev = p.previous_projection_hash
        if p.projection_hash in by_hash or (prev is not None and prev in child):
            raise _Fail(R.PROJECTION_FORK, "two projections share a hash or a predecessor")
        by_hash[p.projection_hash] = p
        if prev is None:
            genesis.append(p)
        else:
            child[prev] = p
    if len(genesis) != 1:
        raise _Fail(R.PROJECTION_GENESIS_INVALID, f"{len(genesis)} projections have no predecessor")
    ordered: list[_Projection] = []
    visited: set[bytes] = set()
    current: _Projection | None = genesis[0]
    while current is not None:
        if current.projection_hash in visited:
            raise _Fail(R.PROJECTION_CYCLE, "the projection chain loops")
        visited.add(current.projection_hash)
        ordered.append(current)
        current = child.get(current.projection_hash)
    if len(ordered) != len(projections):
        raise _Fail(
            R.PROJECTION_DISCONNECTED,
            f"{len(projections) - len(ordered)} projection(s) unreachable from the genesis",
        )
    return ordered


def _verify_memory(
    memory: Mapping[str, Any], where: str, master: _Master, events: Mapping[str, _IndexedEvent]
) -> tuple[CognitiveRecord, str | None]:
    memory_id: str = memory["memory_id"]
    raw_projections = memory.get("projections")
    raw_baseline = memory.get("baseline")

    def record(
        status: str, ok: bool, length: int, sigs: int, reason: str | None, detail: str = ""
    ) -> tuple[CognitiveRecord, str | None]:
        rec = CognitiveRecord(
            memory_id=memory_id,
            certification_status=status,
            ok=ok,
            chain_length=length,
            sigs_verified=sigs,
            reason=reason,
        )
        return rec, None if ok else f"{where}: {detail or reason}"

    guess = (
        CERTIFIED_CHAIN
        if isinstance(raw_projections, list) and raw_projections
        else SIGNED_INITIAL_WEIGHT
        if raw_baseline is not None
        else UNATTESTED_INITIAL_WEIGHT
    )
    try:
        if not isinstance(raw_projections, list):
            raise _Fail(R.PORTABLE_EVIDENCE_MALFORMED, "projections is not a list")
        if raw_baseline is not None and not isinstance(raw_baseline, dict):
            raise _Fail(R.PORTABLE_EVIDENCE_MALFORMED, "baseline is not an object")
        if raw_projections and not _canonical_uuid(memory_id):
            raise _Fail(R.PORTABLE_EVIDENCE_MALFORMED, "memory_id is not a canonical UUID")
        projections = [_decode_projection(p, f"projections[{i}]") for i, p in enumerate(raw_projections)]
        baseline_identity = None
        if raw_baseline is not None:
            try:
                baseline_identity = _decode_identity(raw_baseline.get("identity"), "baseline.identity")
            except _Fail as exc:
                raise _Fail(R.PORTABLE_EVIDENCE_MALFORMED, exc.detail) from exc
    except _Fail as exc:
        return record(guess, False, 0, 0, exc.reason, exc.detail)

    baseline_reason: str | None = None
    if raw_baseline is not None:
        assert baseline_identity is not None
        baseline_reason = _verify_baseline(raw_baseline, memory, baseline_identity, master, events)
    weight_float4 = memory["retrieval_weight_float4"]

    if not projections:
        if raw_baseline is not None:
            if baseline_reason is not None:
                return record(SIGNED_INITIAL_WEIGHT, False, 0, 0, baseline_reason)
            if weight_float4 != raw_baseline.get("observed_weight_float4"):
                return record(SIGNED_INITIAL_WEIGHT, False, 0, 0, R.BASELINE_TERMINAL_WEIGHT_MISMATCH)
            return record(SIGNED_INITIAL_WEIGHT, True, 0, 0, None)
        if weight_float4 == _float4_hex(DEFAULT_WEIGHT_MILLI):
            return record(DEFAULT_EMPTY_CHAIN, True, 0, 0, None)
        return record(UNATTESTED_INITIAL_WEIGHT, False, 0, 0, R.UNATTESTED_INITIAL_WEIGHT)

    try:
        ordered = _order(projections)
    except _Fail as exc:
        return record(CERTIFIED_CHAIN, False, 0, 0, exc.reason, exc.detail)

    company = memory["company_id"]
    previous_hash: bytes | None = None
    previous_milli: int | None = None
    sigs = 0
    for i, p in enumerate(ordered):
        step = f"chain step {i} (projection {p.row.get('projection_id')})"
        old, new = p.row.get("old_weight_milli"), p.row.get("new_weight_milli")
        if (
            not _int(old, commitments.WEIGHT_MIN_MILLI, commitments.WEIGHT_MAX_MILLI)
            or not _int(new, commitments.WEIGHT_MIN_MILLI, commitments.WEIGHT_MAX_MILLI)
            or old == new
            or p.row.get("old_weight_float4") != _float4_hex(old)
            or p.row.get("new_weight_float4") != _float4_hex(new)
        ):
            return record(
                CERTIFIED_CHAIN,
                False,
                i,
                sigs,
                R.PROJECTION_DISPLAY_INVALID,
                f"{step}: weights out of 100..3000, a no-op, or display columns not float4(q/1000)",
            )
        if previous_milli is not None and old != previous_milli:
            return record(
                CERTIFIED_CHAIN,
                False,
                i,
                sigs,
                R.CONTINUITY_BREAK,
                f"{step}: old weight {old} != previous new weight {previous_milli}",
            )
        base = _verify_provenance(p.provenance, p.identity, master)
        if base is None and not _provenance_bound(p.row, p.provenance, memory, memory_id):
            base = R.EVENT_TYPE_INVALID
        if base is not None:
            return record(
                CERTIFIED_CHAIN, False, i, sigs, _PROVENANCE[base], f"{step}: REWEIGHT provenance {base}"
            )
        h = commitments.projection_hash(memory_id, old, new, p.sigma, previous_hash)
        if h != p.projection_hash:
            return record(
                CERTIFIED_CHAIN, False, i, sigs, R.PROJECTION_HASH_INVALID, f"{step}: h_i does not recompute"
            )
        t = commitments.transition_commitment(company, memory_id, old, new, p.sigma)
        if t != p.transition_hash or not verify(p.identity.pubkey, t, p.transition_signature):
            return record(
                CERTIFIED_CHAIN,
                False,
                i,
                sigs,
                R.TRANSITION_SIGNATURE_INVALID,
                f"{step}: t_i does not recompute or its signature does not verify",
            )
        previous_hash, previous_milli = h, new
        sigs += 1

    n = len(ordered)
    genesis_old = ordered[0].row["old_weight_milli"]
    if raw_baseline is not None and (
        baseline_reason is not None or not _eq(raw_baseline.get("observed_weight_milli"), genesis_old)
    ):
        return record(
            CERTIFIED_CHAIN,
            False,
            n,
            sigs,
            R.BASELINE_CHAIN_ANCHOR_INVALID,
            f"the chain starts at {genesis_old} but the signed baseline does not attest it"
            + (f" ({baseline_reason})" if baseline_reason else ""),
        )
    if raw_baseline is None and genesis_old != DEFAULT_WEIGHT_MILLI:
        return record(
            CERTIFIED_CHAIN,
            False,
            n,
            sigs,
            R.DEFAULT_CHAIN_ANCHOR_INVALID,
            f"the chain starts at {genesis_old}, not 1000, without a signed baseline",
        )
    assert previous_milli is not None
    if memory["retrieval_weight_milli"] != previous_milli or weight_float4 != _float4_hex(previous_milli):
        return record(
            CERTIFIED_CHAIN,
            False,
            n,
            sigs,
            R.TERMINAL_WEIGHT_MISMATCH,
            f"live weight {memory['retrieval_weight_milli']} but the chain ends at {previous_milli}",
        )
    return record(CERTIFIED_CHAIN, True, n, sigs, None)


# --- the bundle -------------------------------------------------------------------------------
def _check_envelope(
    bundle: Mapping[str, Any], expected_master_fingerprint: str | None
) -> tuple[str, _Master]:
    if set(bundle) != TOP_LEVEL_FIELDS:
        extra, missing = sorted(set(bundle) - TOP_LEVEL_FIELDS), sorted(TOP_LEVEL_FIELDS - set(bundle))
        raise _Fail(R.BUNDLE_SCHEMA_INVALID, f"top-level fields: unknown {extra}, missing {missing}")
    fmt = bundle["format"]
    if (
        not isinstance(fmt, dict)
        or set(fmt) != set(FORMAT)
        or any(not _eq(fmt[k], v) or type(fmt[k]) is not type(v) for k, v in FORMAT.items())
    ):
        raise _Fail(R.BUNDLE_SCHEMA_INVALID, f"format must be exactly {dict(FORMAT)}")
    for name in ("event_streams", "memories", "sql_records"):
        if not isinstance(bundle[name], list):
            raise _Fail(R.BUNDLE_SCHEMA_INVALID, f"{name} is not a list")
    company, master = bundle["company_id"], bundle["master_identity"]
    if not isinstance(company, str) or not company.strip() or not isinstance(master, dict):
        raise _Fail(R.BUNDLE_IDENTITY_INVALID, "company_id or master_identity is missing")
    public_key, fingerprint = master.get("public_key_b64u"), master.get("fingerprint")
    if _hex(fingerprint, 32) is None or not isinstance(public_key, str):
        raise _Fail(R.BUNDLE_IDENTITY_INVALID, "master fingerprint is not 64 lowercase hex")
    assert isinstance(fingerprint, str)
    try:
        der = b64u_decode(public_key)
        raw_from_spki(der)
    except AimosError as exc:
        raise _Fail(R.BUNDLE_IDENTITY_INVALID, "master public key is not an Ed25519 SPKI key") from exc
    if fingerprint_of_der(der) != fingerprint:
        raise _Fail(R.MASTER_FINGERPRINT_MISMATCH, "master fingerprint is not H(public key DER)")
    if expected_master_fingerprint is not None and (
        not isinstance(expected_master_fingerprint, str)
        or expected_master_fingerprint.strip().lower() != fingerprint
    ):
        raise _Fail(R.MASTER_FINGERPRINT_MISMATCH, "master is not the expected one")
    return company, _Master(public_key=public_key, fingerprint=fingerprint)


LABELS = frozenset(
    {
        "unverified",
        "supported",
        "disputed",
        "poison_suspect",
        "poison_likely",
        "poison_confirmed",
        "poison_refuted",
    }
)


_JUDGED = {
    "poison_confirmed": "confirm",
    "poison_refuted": "refute",
    "supported": "support",
    "disputed": "dispute",
}
_CLASSIFIER_LABELS = frozenset({"unverified", "poison_suspect", "poison_likely"})


def _judgment_reason(meta: Mapping[str, Any], memory_id: str, master_public_key: str) -> str | None:
    """A person's judgment judges this memory with the label's judgment; one that raises trust
    (refuted, supported) carries the master's signature over the judged request body."""
    evidence = meta.get("evidence")
    body = evidence.get("body") if isinstance(evidence, Mapping) else None
    label = meta.get("label")
    if not isinstance(evidence, Mapping) or not isinstance(body, Mapping):
        return R.EPISTEMIC_EVIDENCE_INVALID
    if body.get("memory_id") != memory_id or _JUDGED.get(str(label)) != body.get("judgment"):
        return R.EPISTEMIC_EVIDENCE_INVALID
    if label in ("poison_refuted", "supported"):
        try:
            signature = b64u_decode(str(evidence.get("master_signature_b64u")))
            ts = evidence.get("ts")
            if not isinstance(ts, int):
                return R.EPISTEMIC_EVIDENCE_INVALID
            message = payload_message(dict(body), str(evidence.get("nonce")), ts)
        except (AimosError, TypeError, ValueError):
            return R.EPISTEMIC_EVIDENCE_INVALID
        if not verify(master_public_key, message, signature):
            return R.EPISTEMIC_EVIDENCE_INVALID
    return None


def _verify_label_chain(
    memory: Mapping[str, Any], events: Mapping[str, _IndexedEvent], signed: set[str], master_public_key: str
) -> str | None:
    """A memory's classification chain (aimos.memory-epistemic/v1): one chain from a single
    genesis, each g_j recomputed, each bound to a verified housekeeper `memory_epistemic_classified`
    event and to the live content; the live label is the newest row's (unverified with none)."""
    block = memory.get("epistemic")
    if not isinstance(block, dict) or not isinstance(block.get("chain"), list):
        return R.PORTABLE_EVIDENCE_MALFORMED
    previous: str | None = None
    for row in block["chain"]:
        if not isinstance(row, dict) or row.get("label") not in LABELS:
            return R.PORTABLE_EVIDENCE_MALFORMED
        if row.get("previous_classification_hash") != previous:
            return R.FORK_OR_DISCONNECTED_HISTORY
        try:
            g = commitments.epistemic_classification_hash(
                memory["memory_id"],
                row["label"],
                row["confidence_milli"],
                bytes.fromhex(row["live_content_hash"]),
                bytes.fromhex(row["authority_mutation_hash"]),
                bytes.fromhex(previous) if previous else None,
            ).hex()
        except (AimosError, KeyError, TypeError, ValueError):
            return R.PORTABLE_EVIDENCE_MALFORMED
        if g != row.get("classification_hash"):
            return R.EPISTEMIC_HASH_INVALID
        if row["live_content_hash"] != memory.get("content_hash"):
            return R.EPISTEMIC_LIVE_CONTENT_MISMATCH
        indexed = events.get(str(row.get("authority_event_id")))
        event: Mapping[str, Any] = indexed.event if indexed else {}
        meta = event.get("metadata")
        if (
            indexed is None
            or not indexed.verified
            or not isinstance(meta, Mapping)
            or event.get("operation") != "memory_epistemic_classified"
            or event.get("signer_agent_id") != "housekeeper"
            or event.get("mutation_hash") != row.get("authority_mutation_hash")
            or meta.get("memory_id") != memory["memory_id"]
            or meta.get("label") != row["label"]
            or meta.get("basis") != row.get("basis")
            or meta.get("confidence_milli") != row["confidence_milli"]
            or meta.get("live_content_hash") != row["live_content_hash"]
            or meta.get("prev_classification_hash") != previous
        ):
            return R.EPISTEMIC_AUTHORITY_INVALID
        if meta.get("basis") == "explicit":
            judged = _judgment_reason(meta, memory["memory_id"], master_public_key)
            if judged is not None:
                return judged
        elif row["label"] not in _CLASSIFIER_LABELS:
            return R.EPISTEMIC_EVIDENCE_INVALID
        previous = g
    ends_in = block["chain"][-1]["label"] if block["chain"] else "unverified"
    if block.get("label") != ends_in:
        return R.UNBACKED_PROJECTION
    if signed != {str(row.get("authority_event_id")) for row in block["chain"]}:
        return R.FORK_OR_DISCONNECTED_HISTORY
    return None


def _check_memories(memories: list[Any], company: str) -> None:
    previous: str | None = None
    for i, memory in enumerate(memories):
        where = f"memories[{i}]"
        memory_id = memory.get("memory_id") if isinstance(memory, dict) else None
        if (
            not isinstance(memory, dict)
            or not isinstance(memory_id, str)
            or not memory_id
            or memory.get("company_id") != company
            or (previous is not None and memory_id <= previous)
        ):
            raise _Fail(R.MEMORY_ORDER_INVALID, f"{where}: missing id, other company, or out of order")
        previous = memory_id
        if _hex(memory.get("content_hash"), 32) is None:
            raise _Fail(R.MEMORY_CONTENT_INVALID, f"{where}.content_hash: not 64 lowercase hex")
        weight = _hex(memory.get("retrieval_weight_float4"), 4)
        value = struct.unpack(">f", weight)[0] if weight is not None else math.nan
        milli = memory.get("retrieval_weight_milli")
        if not math.isfinite(value) or not _int(milli) or _js_round(value * 1000) != milli:
            raise _Fail(R.MEMORY_WEIGHT_INVALID, f"{where}: float4 weight and milli weight disagree")


def _sql_rows(rows: list[Any]) -> list[dict[str, Any]]:
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise _Fail(R.SQL_RECORD_INVALID, f"sql_records[{i}]: not an object")
        length, sigs = row.get("chain_length"), row.get("signatures_verified")
        if not _int(length, 0) or not _int(sigs, 0):
            raise _Fail(R.SQL_COUNT_INVALID, f"sql_records[{i}]: counts are not non-negative integers")
        out.append(
            {
                "memory_id": row.get("memory_id"),
                "certification_status": row.get("certification_status"),
                "ok": row.get("ok") is True,
                "chain_length": length,
                "sigs_verified": sigs,
                "reason": row.get("reason"),
            }
        )
    return out


def _parity(records: list[CognitiveRecord], sql_rows: list[dict[str, Any]]) -> bool:
    by_id = {str(r["memory_id"]): r for r in sql_rows}
    if not len(by_id) == len(sql_rows) == len(records):
        return False
    for record in records:
        row = by_id.get(record["memory_id"])
        if row is None or any(not _eq(row[k], v) for k, v in record.items()):
            return False
    return True


def _canonical_reason(exc: CanonicalJSONError) -> str:
    return exc.reason if exc.reason in _CANONICAL_REASONS else R.CANONICAL_INVALID


def _invalid(reason: str, detail: str, bundle_sha256: str | None = None) -> CognitiveVerdict:
    return CognitiveVerdict("invalid", reason, bundle_sha256=bundle_sha256, detail=detail)


def verify_cognitive_bundle(
    bundle: Any, *, expected_master_fingerprint: str | None = None
) -> CognitiveVerdict:
    """Verify one parsed cognitive-evidence bundle. Never raises on any input."""
    try:
        return _verify(bundle, expected_master_fingerprint)
    except Exception as exc:  # a verifier bug, never a property of the input: say so, do not guess
        return CognitiveVerdict(
            "indeterminate", R.VERIFIER_INTERNAL_ERROR, detail=f"{type(exc).__name__}: {exc}"
        )


def _verify(bundle: Any, expected_master_fingerprint: str | None) -> CognitiveVerdict:
    try:
        bundle_sha256 = hashlib.sha256(canonical_json(bundle)).hexdigest()
    except CanonicalJSONError as exc:
        return _invalid(_canonical_reason(exc), exc.message)
    if not isinstance(bundle, dict):
        return _invalid(R.BUNDLE_INVALID, "the bundle is not a JSON object", bundle_sha256)
    try:
        company, master = _check_envelope(bundle, expected_master_fingerprint)
        memories: list[Any] = bundle["memories"]
        _check_memories(memories, company)
        sql_rows = _sql_rows(bundle["sql_records"])
    except _Fail as exc:
        return _invalid(exc.reason, exc.detail, bundle_sha256)

    events: dict[str, _IndexedEvent] = {}
    streams: list[EventStreamResult] = []
    failures: list[tuple[str, str | None]] = []
    for index, stream in enumerate(bundle["event_streams"]):
        result, detail = _verify_event_stream(stream, index, company, master, events)
        streams.append(result)
        if result.reason is not None:
            failures.append((result.reason, detail))

    # every signed classification event, by the memory it classifies: a label chain must hold a
    # row for each (a chain cut short leaves its signed events behind)
    classified: dict[str, set[str]] = {}
    for event_id, indexed in events.items():
        ev = indexed.event
        meta = ev.get("metadata") if isinstance(ev, Mapping) else None
        if ev.get("operation") == "memory_epistemic_classified" and isinstance(meta, Mapping):
            classified.setdefault(str(meta.get("memory_id")), set()).add(event_id)

    records: list[CognitiveRecord] = []
    for index, memory in enumerate(memories):
        record, detail = _verify_memory(memory, f"memories[{index}]", master, events)
        if record["ok"] and ("epistemic" in memory or memory["memory_id"] in classified):
            label_reason = _verify_label_chain(
                memory, events, classified.get(memory["memory_id"], set()), master.public_key
            )
            if label_reason is not None:
                record = CognitiveRecord(**{**record, "ok": False, "reason": label_reason})
                detail = f"memories[{index}].epistemic: {label_reason}"
        records.append(record)
        if record["reason"] is not None and not record["ok"]:
            failures.append((record["reason"], detail))

    parity = _parity(records, sql_rows)
    if not parity:
        failures.append((R.SQL_PARITY_MISMATCH, "sql_records differ from the records rebuilt here"))
    root = commitments.corpus_proof_root(records).hex()
    primary, detail = failures[0] if failures else (None, None)
    return CognitiveVerdict(
        verdict="invalid" if failures else "valid",
        primary_reason=primary,
        records=tuple(records),
        corpus_proof_root=root,
        bundle_sha256=bundle_sha256,
        event_streams=tuple(streams),
        sql_parity=parity,
        detail=detail,
    )


# --- bytes and files --------------------------------------------------------------------------
def verify_cognitive_bytes(
    data: bytes | str, *, expected_master_fingerprint: str | None = None
) -> CognitiveVerdict:
    """Parse UTF-8 JSON text strictly (no duplicate keys, no NaN/Infinity) and verify it."""
    try:
        parsed = load_bundle(data, max_bytes=MAX_BUNDLE_BYTES)
    except BundleParseError as exc:
        return _invalid(exc.reason, exc.detail)
    return verify_cognitive_bundle(parsed, expected_master_fingerprint=expected_master_fingerprint)


def verify_cognitive_file(
    path: str | PathLike[str], *, expected_master_fingerprint: str | None = None
) -> CognitiveVerdict:
    """Read and verify an evidence file. A missing file raises NotFoundError and an unreadable one
    UsageError; whatever the file holds yields a verdict, never an exception."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BUNDLE_BYTES + 1)
    except FileNotFoundError as exc:
        raise NotFoundError(f"no evidence file at {path}", "Check the path of the exported bundle.") from exc
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return verify_cognitive_bytes(data, expected_master_fingerprint=expected_master_fingerprint)


__all__ = [
    "FATAL_REASONS",
    "IN_DATABASE_REASONS",
    "PORTABLE_REASONS",
    "REASONS",
    "SCHEMA",
    "CognitiveRecord",
    "CognitiveVerdict",
    "DuplicateKeyError",
    "EventStreamResult",
    "NonFiniteError",
    "R",
    "strict_json_loads",
    "verify_cognitive_bundle",
    "verify_cognitive_bytes",
    "verify_cognitive_file",
]
