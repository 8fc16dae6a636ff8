"""Portable verifier of MutMem V2 recall-disclosure envelopes (`hom.aimos.mutmem-portable-evidence/v2`).

Pure: a parsed bundle in, a :class:`V2Verdict` out. It imports only the crypto layer and the error
types, reads no store and does no I/O, and trusts no stored hash: every commitment is recomputed.

What is checked (PROTOCOL-NOTES section 4), stopping at the first failure:

1. the 37 structural predicates, in the reference's check order (which is not the order of the
   closed code list :data:`RECALL_STRUCTURAL_CODES`): the envelope commitment, object schemas,
   the trust anchor, actor and housekeeper identity epochs and revocation states, the effective
   grant (master-signed or the housekeeper system principal), the request envelope and receipt,
   the seven decision hashes and their bindings, the return projection, every result's five
   objects, the native receipt's Merkle entries and root, and the housekeeper's signed event;
2. unless ``structural_only``, the 7 P2 cryptographic checks (:data:`RECALL_CRYPTO_CODES`): the
   caller's expected master fingerprint (the trust anchor is the caller's, never the bundle's), the
   actor and housekeeper certificates under the master key, the master grant signature (payload
   form 1), the actor's request signature (request form 3), the housekeeper's event signature and
   one housekeeper occurrence signature per result. A valid verdict has verified
   2 + (1 for a master grant) + 1 + 1 + result_count signatures.

Where aimos is stricter than the reference verifiers (every such input gets a closed reason):

* the envelope has exactly its nine fields and the exact ``format`` object, its objects are in
  canonical order with ``ordinal`` equal to their position (the reference Python verifier accepts
  a permuted array whose ordinals are canonical), and ``expected_master_fingerprint`` is lowercase;
* hashes are lowercase 64-hex and UUIDs lowercase everywhere (the reference lowercases some of them
  before comparing); times are the canonical ``YYYY-MM-DDTHH:MM:SS.mmmZ`` form (the reference
  normalizes any ISO-8601 text); integers are JSON integers (not booleans, not ``1.0``);
* a master grant's ``signed_body.allowed`` must be ``true`` (the reference compares truthiness), its
  nonce a string and its ``ts_signed`` an integer; a request's ``requested_data_class`` must be a
  known class (as the reference Python verifier; its JS predicates let an unknown class through);
  other values are compared as canonical JSON, so ``true`` never equals ``1``.

The caller's expected master fingerprint is compared case-insensitively (it is the caller's
argument, not bundle content). ``signatures_verified`` counts the signatures that verified before
the verdict, so an invalid verdict may report a partial count.

Malformed input never raises: anything that is not the expected shape fails the check that reads
it. Should an unexpected exception still escape a check (a defect, not a protocol outcome), it is
reported as the failure of the check being evaluated (``ENVELOPE_COMMITMENT_INVALID`` before the
envelope is rebuilt) with a detail naming the exception, so the reason stays in
:data:`RECALL_REASONS`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final, NoReturn, TypeGuard

from aimos.crypto import commitments
from aimos.crypto.canonical import MAX_SAFE_INTEGER, canonical_json
from aimos.crypto.certs import MASTER_ISSUER, parse_certificate, verify_certificate
from aimos.crypto.ed25519 import verify
from aimos.crypto.encoding import b64u_decode
from aimos.crypto.merkle import merkle_root
from aimos.crypto.messages import payload_message, request_message
from aimos.errors import AimosError

# --- the closed vocabulary --------------------------------------------------------------------
ENVELOPE_COMMITMENT_INVALID: Final = "ENVELOPE_COMMITMENT_INVALID"
OBJECT_SCHEMA_INVALID: Final = "OBJECT_SCHEMA_INVALID"
TRUST_ROOT_MISMATCH: Final = "TRUST_ROOT_MISMATCH"
TRUST_ANCHOR_KEY_MISMATCH: Final = "TRUST_ANCHOR_KEY_MISMATCH"
IDENTITY_SCOPE_MISMATCH: Final = "IDENTITY_SCOPE_MISMATCH"
IDENTITY_CERTIFICATE_BINDING_INVALID: Final = "IDENTITY_CERTIFICATE_BINDING_INVALID"
IDENTITY_EPOCH_INVALID: Final = "IDENTITY_EPOCH_INVALID"
REVOCATION_STATE_INVALID: Final = "REVOCATION_STATE_INVALID"
HOUSEKEEPER_IDENTITY_INVALID: Final = "HOUSEKEEPER_IDENTITY_INVALID"
HOUSEKEEPER_REVOCATION_STATE_INVALID: Final = "HOUSEKEEPER_REVOCATION_STATE_INVALID"
HOUSEKEEPER_SYSTEM_PRINCIPAL_INVALID: Final = "HOUSEKEEPER_SYSTEM_PRINCIPAL_INVALID"
GRANT_SCOPE_MISMATCH: Final = "GRANT_SCOPE_MISMATCH"
GRANT_NOT_EFFECTIVE: Final = "GRANT_NOT_EFFECTIVE"
GRANT_COMMITMENT_INVALID: Final = "GRANT_COMMITMENT_INVALID"
REQUEST_CONTEXT_INVALID: Final = "REQUEST_CONTEXT_INVALID"
REQUEST_BODY_HASH_MISMATCH: Final = "REQUEST_BODY_HASH_MISMATCH"
COMMAND_HASH_MISMATCH: Final = "COMMAND_HASH_MISMATCH"
REQUEST_RECEIPT_BINDING_INVALID: Final = "REQUEST_RECEIPT_BINDING_INVALID"
REQUEST_RECEIPT_COMMITMENT_INVALID: Final = "REQUEST_RECEIPT_COMMITMENT_INVALID"
AUTHORITY_MUTATION_BINDING_INVALID: Final = "AUTHORITY_MUTATION_BINDING_INVALID"
DECISION_HASH_MALFORMED: Final = "DECISION_HASH_MALFORMED"
CONTENT_STATE_BINDING_INVALID: Final = "CONTENT_STATE_BINDING_INVALID"
EPISTEMIC_BINDING_INVALID: Final = "EPISTEMIC_BINDING_INVALID"
SECURITY_CLOSURE_BINDING_INVALID: Final = "SECURITY_CLOSURE_BINDING_INVALID"
RETURN_PROJECTION_BINDING_INVALID: Final = "RETURN_PROJECTION_BINDING_INVALID"
RESULT_CARDINALITY_INVALID: Final = "RESULT_CARDINALITY_INVALID"
RESULT_IDENTITY_BINDING_INVALID: Final = "RESULT_IDENTITY_BINDING_INVALID"
PROVENANCE_BINDING_INVALID: Final = "PROVENANCE_BINDING_INVALID"
OCCURRENCE_BINDING_INVALID: Final = "OCCURRENCE_BINDING_INVALID"
OCCURRENCE_NATIVE_BODY_INVALID: Final = "OCCURRENCE_NATIVE_BODY_INVALID"
EPISTEMIC_PROJECTION_BINDING_INVALID: Final = "EPISTEMIC_PROJECTION_BINDING_INVALID"
RECEIPT_EVIDENCE_BINDING_INVALID: Final = "RECEIPT_EVIDENCE_BINDING_INVALID"
MERKLE_ENTRY_BINDING_INVALID: Final = "MERKLE_ENTRY_BINDING_INVALID"
MERKLE_ROOT_MISMATCH: Final = "MERKLE_ROOT_MISMATCH"
EVENT_RECEIPT_BINDING_INVALID: Final = "EVENT_RECEIPT_BINDING_INVALID"
EVENT_RECEIPT_COMMITMENT_INVALID: Final = "EVENT_RECEIPT_COMMITMENT_INVALID"
REVOCATION_EVENT_BINDING_INVALID: Final = "REVOCATION_EVENT_BINDING_INVALID"

EXPECTED_TRUST_ANCHOR_REQUIRED: Final = "EXPECTED_TRUST_ANCHOR_REQUIRED"
ACTOR_CERTIFICATE_SIGNATURE_INVALID: Final = "ACTOR_CERTIFICATE_SIGNATURE_INVALID"
HOUSEKEEPER_CERTIFICATE_SIGNATURE_INVALID: Final = "HOUSEKEEPER_CERTIFICATE_SIGNATURE_INVALID"
MASTER_GRANT_SIGNATURE_INVALID: Final = "MASTER_GRANT_SIGNATURE_INVALID"
ACTOR_REQUEST_SIGNATURE_INVALID: Final = "ACTOR_REQUEST_SIGNATURE_INVALID"
HOUSEKEEPER_EVENT_SIGNATURE_INVALID: Final = "HOUSEKEEPER_EVENT_SIGNATURE_INVALID"
HOUSEKEEPER_OCCURRENCE_SIGNATURE_INVALID: Final = "HOUSEKEEPER_OCCURRENCE_SIGNATURE_INVALID"

# The reference's closed list (protocol-manifest.json `failure_codes`), in its order.
RECALL_STRUCTURAL_CODES: tuple[str, ...] = (
    ENVELOPE_COMMITMENT_INVALID,
    OBJECT_SCHEMA_INVALID,
    TRUST_ROOT_MISMATCH,
    TRUST_ANCHOR_KEY_MISMATCH,
    IDENTITY_SCOPE_MISMATCH,
    IDENTITY_CERTIFICATE_BINDING_INVALID,
    IDENTITY_EPOCH_INVALID,
    REVOCATION_STATE_INVALID,
    HOUSEKEEPER_IDENTITY_INVALID,
    HOUSEKEEPER_REVOCATION_STATE_INVALID,
    HOUSEKEEPER_SYSTEM_PRINCIPAL_INVALID,
    GRANT_SCOPE_MISMATCH,
    GRANT_NOT_EFFECTIVE,
    GRANT_COMMITMENT_INVALID,
    REQUEST_CONTEXT_INVALID,
    REQUEST_BODY_HASH_MISMATCH,
    COMMAND_HASH_MISMATCH,
    REQUEST_RECEIPT_BINDING_INVALID,
    REQUEST_RECEIPT_COMMITMENT_INVALID,
    AUTHORITY_MUTATION_BINDING_INVALID,
    DECISION_HASH_MALFORMED,
    CONTENT_STATE_BINDING_INVALID,
    EPISTEMIC_BINDING_INVALID,
    SECURITY_CLOSURE_BINDING_INVALID,
    RETURN_PROJECTION_BINDING_INVALID,
    RESULT_CARDINALITY_INVALID,
    RESULT_IDENTITY_BINDING_INVALID,
    PROVENANCE_BINDING_INVALID,
    OCCURRENCE_BINDING_INVALID,
    OCCURRENCE_NATIVE_BODY_INVALID,
    EPISTEMIC_PROJECTION_BINDING_INVALID,
    RECEIPT_EVIDENCE_BINDING_INVALID,
    MERKLE_ENTRY_BINDING_INVALID,
    MERKLE_ROOT_MISMATCH,
    EVENT_RECEIPT_BINDING_INVALID,
    EVENT_RECEIPT_COMMITMENT_INVALID,
    REVOCATION_EVENT_BINDING_INVALID,
)
# The P2 cryptographic checks, in check order.
RECALL_CRYPTO_CODES: tuple[str, ...] = (
    EXPECTED_TRUST_ANCHOR_REQUIRED,
    ACTOR_CERTIFICATE_SIGNATURE_INVALID,
    HOUSEKEEPER_CERTIFICATE_SIGNATURE_INVALID,
    MASTER_GRANT_SIGNATURE_INVALID,
    ACTOR_REQUEST_SIGNATURE_INVALID,
    HOUSEKEEPER_EVENT_SIGNATURE_INVALID,
    HOUSEKEEPER_OCCURRENCE_SIGNATURE_INVALID,
)
RECALL_REASONS: frozenset[str] = frozenset(RECALL_STRUCTURAL_CODES + RECALL_CRYPTO_CODES)

# --- the profile ------------------------------------------------------------------------------
BUNDLE_SCHEMA: Final = "hom.aimos.mutmem-portable-evidence/v2"
NATIVE_RECEIPT_SCHEMA: Final = "hom-aimos/recall-merkle/v3-epistemic-and-security-closure"
FORMAT: Final[Mapping[str, object]] = {
    "schema": BUNDLE_SCHEMA,
    "version": 2,
    "profile": "recall_disclosure",
    "canonicalization": "hom-aimos/canonical-json/v1",
    "hash": "sha256",
    "signature": "ed25519",
    "trust_anchor_mode": "external_expected_master_fingerprint_required",
    "native_receipt_schema": NATIVE_RECEIPT_SCHEMA,
}
ENVELOPE_FIELDS: Final = frozenset(
    {
        "format",
        "bundle_id",
        "company_id",
        "expected_master_fingerprint",
        "result_count",
        "object_count",
        "object_root_sha256",
        "objects",
        "bundle_sha256",
    }
)
OBJECT_FIELDS: Final = frozenset(
    {"ordinal", "kind", "schema", "subject_id", "result_ordinal", "body_sha256", "body"}
)
OBJECT_ROOT_FIELDS: Final = ("ordinal", "kind", "schema", "subject_id", "result_ordinal", "body_sha256")
SINGLETON_KINDS: Final = (
    "trust_anchor",
    "actor_identity_epoch",
    "actor_revocation_state",
    "housekeeper_identity_epoch",
    "housekeeper_revocation_state",
    "effective_recall_grant",
    "request_envelope",
    "request_receipt",
    "content_state_projection",
    "epistemic_recall_decision",
    "final_security_closure",
    "return_projection",
    "native_recall_receipt",
)
RESULT_KINDS: Final = (
    "memory_state",
    "provenance_chain",
    "occurrence",
    "epistemic_projection",
    "receipt_evidence",
)
OBJECT_SCHEMAS: Final[Mapping[str, str]] = {
    "trust_anchor": "hom.aimos.mutmem-trust-anchor/v2",
    "actor_identity_epoch": "hom.aimos.mutmem-actor-identity-epoch/v2",
    "actor_revocation_state": "hom.aimos.mutmem-actor-revocation-state/v2",
    "housekeeper_identity_epoch": "hom.aimos.mutmem-housekeeper-identity-epoch/v2",
    "housekeeper_revocation_state": "hom.aimos.mutmem-housekeeper-revocation-state/v2",
    "effective_recall_grant": "hom.aimos.mutmem-effective-recall-grant/v2",
    "request_envelope": "hom.aimos.mutmem-request-envelope/v2",
    "request_receipt": "hom.aimos.mutmem-request-receipt/v2",
    "content_state_projection": "hom.aimos.mutmem-content-state-projection/v2",
    "epistemic_recall_decision": "hom.aimos.mutmem-epistemic-recall-decision/v2",
    "final_security_closure": "hom.aimos.mutmem-final-security-closure/v2",
    "return_projection": "hom-aimos/native-recall-return-projection/v1",
    "native_recall_receipt": "hom.aimos.mutmem-native-recall-receipt/v2",
    "memory_state": "hom.aimos.mutmem-memory-state/v2",
    "provenance_chain": "hom.aimos.mutmem-provenance-chain/v2",
    "occurrence": "hom.aimos.mutmem-occurrence-evidence/v2",
    "epistemic_projection": "hom.aimos.mutmem-epistemic-projection/v2",
    "receipt_evidence": "hom.aimos.mutmem-recall-evidence-entry/v2",
}
SINGLETON_COUNT: Final = len(SINGLETON_KINDS)
RESULT_OBJECT_COUNT: Final = len(RESULT_KINDS)
MAX_RESULTS: Final = 200
MAX_BODY_BYTES: Final = 1024 * 1024
MAX_TEXT_UNITS: Final = 200  # bundle_id, company_id and object schemas (UTF-16 code units, as JS)

HOUSEKEEPER: Final = "housekeeper"
MASTER_GRANT: Final = "master_signed_recall_grant"
SYSTEM_PRINCIPAL: Final = "housekeeper_system_principal"
RECALL_AUTHORIZATION_SCHEMA: Final = "hom.aimos.recall-authorization/v1"
SYSTEM_PRINCIPAL_FORBIDDEN: Final = (
    "signed_body",
    "content_hash",
    "prev_mutation_hash",
    "ts_signed",
    "nonce",
    "signature_b64u",
)
HOUSEKEEPER_TIERS: Final = ("T1", "T1_SYSTEM_SELF")
REQUEST_SIG_FORM: Final = 3
REQUEST_METHOD: Final = "POST"
REQUEST_PATH: Final = "/aimos/recall"
MAX_CLEARANCE: Final = 12
DATA_CLASSES: Final = ("public", "internal", "confidential", "restricted")
RETURN_PATHS: Final = frozenset(
    {"identifier_exact", "post_compaction_handoff", "semantic_cache", "adaptive_early_exit", "normal_recall"}
)
CONTENT_KERNEL_SCHEMA: Final = "hom.aimos.content-state-occurrence-kernel/v1"
SECURITY_CLOSURE_SCHEMA: Final = "hom-aimos/canary-recall-final-closure/v2-epistemic-scope"
OCCURRENCE_V3_SCHEMA: Final = "hom.aimos.memory-occurrence/v3"
OCCURRENCE_LEGACY_SCHEMA: Final = "hom.aimos.memory-occurrence-ref/legacy-v1"
RECALL_OPERATION: Final = "recall_receipt"
SIGNATURE_BYTES: Final = 64

_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX = re.compile(r"(?:[0-9a-f]{2})+")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
_ANY_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_ISO = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})\.[0-9]{3}Z")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_DETAIL_LIMIT = 300


# --- the verdict --------------------------------------------------------------------------------
@dataclass(frozen=True)
class V2Verdict:
    verdict: str  # "valid" | "invalid"
    reason: str | None  # the first failing code, from RECALL_REASONS
    detail: str | None  # which check, which object ordinal / result ordinal
    where: str | None  # "objects[5]", "result 0", or None
    signatures_verified: int

    @property
    def ok(self) -> bool:
        return self.verdict == "valid"

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "reason": self.reason,
            "detail": self.detail,
            "where": self.where,
            "signatures_verified": self.signatures_verified,
        }


class _Failure(Exception):
    def __init__(self, code: str, detail: str, where: str | None) -> None:
        super().__init__(code)
        self.code = code
        self.detail = detail
        self.where = where


# --- value predicates (never raise) -------------------------------------------------------------
def _is_int(value: object) -> TypeGuard[int]:
    """A JSON integer in the safe range (booleans are not integers)."""
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= MAX_SAFE_INTEGER


def _is_text(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and value != ""


def _is_hex64(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and _HEX64.fullmatch(value) is not None


def _is_uuid(value: object) -> TypeGuard[str]:
    """A lowercase RFC 4122 UUID of version 1-5 (the subject and memory ids)."""
    return isinstance(value, str) and _UUID.fullmatch(value) is not None


def _is_dict(value: object) -> TypeGuard[dict[str, Any]]:
    return isinstance(value, dict)


def _is_int_equal(value: object, expected: int) -> bool:
    return _is_int(value) and value == expected


def _utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le", errors="surrogatepass")) // 2


def _same(left: object, right: object) -> bool:
    """Equality of JSON values as the reference compares them: by canonical JSON."""
    if isinstance(left, str) or isinstance(right, str):
        return isinstance(left, str) and isinstance(right, str) and left == right
    try:
        return canonical_json(left) == canonical_json(right)
    except (AimosError, RecursionError, TypeError, ValueError):
        return False


def _sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _canonical_sha256_hex(value: object) -> str:
    return _sha256_hex(canonical_json(value))


def _iso_seconds(value: object) -> int | None:
    """Unix seconds (floor) of a canonical `YYYY-MM-DDTHH:MM:SS.mmmZ` time, else None."""
    if not isinstance(value, str):
        return None
    match = _ISO.fullmatch(value)
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in match.groups())
    try:
        moment = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError:
        return None
    return (moment - _EPOCH) // timedelta(seconds=1)


def _b64u(value: object) -> bytes | None:
    """Decoded canonical unpadded base64url (non-empty), else None."""
    if not _is_text(value):
        return None
    try:
        data = b64u_decode(value)
    except AimosError:
        return None
    return data or None


def _signature(value: object) -> bytes | None:
    data = _b64u(value)
    return data if data is not None and len(data) == SIGNATURE_BYTES else None


def _object_where(ordinal: int) -> str:
    return f"objects[{ordinal}]"


def _singleton_where(kind: str) -> str:
    return _object_where(SINGLETON_KINDS.index(kind))


def _result_object_ordinal(result: int, kind: str) -> int:
    return SINGLETON_COUNT + RESULT_OBJECT_COUNT * result + RESULT_KINDS.index(kind)


def _short(text: str) -> str:
    return text if len(text) <= _DETAIL_LIMIT else text[: _DETAIL_LIMIT - 3] + "..."


# --- the verifier -------------------------------------------------------------------------------
class _Verifier:
    """One verification run. ``code`` / ``where`` name the check being evaluated, so an unexpected
    exception can be reported as that check's failure."""

    def __init__(self) -> None:
        self.code: str = ENVELOPE_COMMITMENT_INVALID
        self.where: str | None = None
        self.signatures = 0
        self.bundle: dict[str, Any] = {}
        self.company = ""
        self.fingerprint = ""
        self.count = 0
        self.singletons: dict[str, dict[str, Any]] = {}  # kind -> body
        self.results: list[dict[str, dict[str, Any]]] = []  # result -> kind -> object
        # values established by earlier checks
        self.agent_id = ""
        self.valid_from = ""
        self.cert_fingerprint = ""
        self.hk_valid_from = ""
        self.hk_fingerprint = ""
        self.request_ts = 0
        self.request_hash = ""
        self.epistemic_hash = ""
        self.security_hash = ""
        self.evidence: list[Any] = []
        self.commitments: list[bytes] = []

    # -- failure plumbing --
    def at(self, code: str, where: str | None = None) -> None:
        self.code = code
        self.where = where

    def fail(self, detail: str, code: str | None = None) -> NoReturn:
        raise _Failure(code or self.code, detail, self.where)

    def need(self, condition: bool, detail: str, code: str | None = None) -> None:
        if not condition:
            self.fail(detail, code)

    def iso(self, value: object, what: str, code: str | None = None) -> str:
        """A canonical ISO time (returned unchanged), or a failure with ``code``."""
        if isinstance(value, str) and _iso_seconds(value) is not None:
            return value
        self.fail(f"{what} is not a canonical ISO time (YYYY-MM-DDTHH:MM:SS.mmmZ)", code)

    def hex64(self, value: object, what: str, code: str | None = None) -> str:
        if _is_hex64(value):
            return value
        self.fail(f"{what} is not a lowercase 64-hex hash", code)

    def body(self, kind: str) -> dict[str, Any]:
        return self.singletons[kind]

    # -- 1. ENVELOPE_COMMITMENT_INVALID --
    def envelope(self, bundle: object) -> None:
        self.at(ENVELOPE_COMMITMENT_INVALID)
        if not _is_dict(bundle):
            self.fail(f"the bundle is a {type(bundle).__name__}, not a JSON object")
        keys = set(bundle)
        if keys != ENVELOPE_FIELDS:
            missing = sorted(ENVELOPE_FIELDS - keys)
            extra = sorted(repr(k) for k in keys - ENVELOPE_FIELDS)
            self.fail(f"envelope fields differ: missing {missing}, unexpected {extra}")
        self.bundle = bundle
        self.need(_same(bundle["format"], FORMAT), "format is not the recall_disclosure v2 format object")
        for field in ("bundle_id", "company_id"):
            value = bundle[field]
            self.need(
                _is_text(value) and _utf16_units(value) <= MAX_TEXT_UNITS,
                f"{field} must be a string of 1..{MAX_TEXT_UNITS} characters",
            )
        self.company = bundle["company_id"]
        self.fingerprint = self.hex64(bundle["expected_master_fingerprint"], "expected_master_fingerprint")
        count = bundle["result_count"]
        self.need(
            _is_int(count) and 0 <= count <= MAX_RESULTS, f"result_count must be an integer 0..{MAX_RESULTS}"
        )
        self.count = count
        expected_objects = SINGLETON_COUNT + RESULT_OBJECT_COUNT * count
        object_count = bundle["object_count"]
        self.need(
            _is_int(object_count) and object_count == expected_objects,
            f"object_count must be 13 + 5 * result_count = {expected_objects}",
        )
        objects = bundle["objects"]
        self.need(isinstance(objects, list), "objects is not an array")
        self.need(
            len(objects) == expected_objects,
            f"objects holds {len(objects)} objects, 13 + 5 * result_count = {expected_objects} expected",
        )
        seen: dict[tuple[str, int | None], int] = {}
        subjects: dict[int, str] = {}
        for position, obj in enumerate(objects):
            self.where = _object_where(position)
            key = self.envelope_object(obj, position, subjects)
            if key in seen:
                self.fail(f"duplicate object: {key[0]} already at objects[{seen[key]}]")
            seen[key] = position
        self.where = None
        canonical = [(kind, None) for kind in SINGLETON_KINDS] + [
            (kind, r) for r in range(count) for kind in RESULT_KINDS
        ]
        absent = [k for k in canonical if k not in seen]
        if absent:
            kind, result = absent[0]
            self.fail(f"object {kind}" + ("" if result is None else f" of result {result}") + " is missing")
        self.results = [{} for _ in range(count)]
        for position, (obj, (kind, result)) in enumerate(zip(objects, canonical, strict=True)):
            self.where = _object_where(position)
            self.need(
                obj["kind"] == kind and obj["result_ordinal"] == result,
                f"objects are not in canonical order: {kind} expected at position {position}",
            )
            self.need(_is_int(obj["ordinal"]) and obj["ordinal"] == position, f"ordinal must be {position}")
            if result is None:
                self.singletons[kind] = obj["body"]
            else:
                self.results[result][kind] = obj
        self.where = None
        root = merkle_root([{f: obj[f] for f in OBJECT_ROOT_FIELDS} for obj in objects])
        self.need(bundle["object_root_sha256"] == root.hex(), "object_root_sha256 does not recompute")
        bundle_hash = commitments.v2_bundle_hash(
            bundle["bundle_id"], self.company, bytes.fromhex(self.fingerprint), count, root
        )
        self.need(bundle["bundle_sha256"] == bundle_hash.hex(), "bundle_sha256 does not recompute")

    def envelope_object(self, obj: object, position: int, subjects: dict[int, str]) -> tuple[str, int | None]:
        self.need(_is_dict(obj), "object is not a JSON object")
        assert isinstance(obj, dict)
        keys = set(obj)
        if keys != OBJECT_FIELDS:
            missing = sorted(OBJECT_FIELDS - keys)
            extra = sorted(repr(k) for k in keys - OBJECT_FIELDS)
            self.fail(f"object fields differ: missing {missing}, unexpected {extra}")
        kind = obj["kind"]
        self.need(isinstance(kind, str) and kind in OBJECT_SCHEMAS, f"unknown object kind {kind!r:.60}")
        schema = obj["schema"]
        self.need(
            _is_text(schema) and _utf16_units(schema) <= MAX_TEXT_UNITS,
            f"{kind}: schema must be a string of 1..{MAX_TEXT_UNITS} characters",
        )
        body = obj["body"]
        self.need(_is_dict(body), f"{kind}: body is not a JSON object")
        self.need(_same(body.get("schema"), schema), f"{kind}: body.schema differs from the object schema")
        result: int | None
        if kind in SINGLETON_KINDS:
            self.need(
                obj["subject_id"] is None and obj["result_ordinal"] is None,
                f"{kind} is a singleton: subject_id and result_ordinal must be null",
            )
            result = None
        else:
            result = obj["result_ordinal"]
            self.need(
                _is_int(result) and 0 <= result < self.count,
                f"{kind}: result_ordinal must be an integer 0..result_count-1",
            )
            assert isinstance(result, int)
            subject = obj["subject_id"]
            self.need(_is_uuid(subject), f"{kind}: subject_id is not a lowercase memory UUID")
            prior = subjects.setdefault(result, subject)
            self.need(prior == subject, f"{kind}: subject_id differs from result {result}'s other objects")
        try:
            body_bytes = canonical_json(body)
        except AimosError as exc:
            self.fail(f"{kind}: body is not canonical JSON ({exc.reason or exc.message})")
        self.need(
            len(body_bytes) <= MAX_BODY_BYTES,
            f"{kind}: body is {len(body_bytes)} canonical bytes, more than {MAX_BODY_BYTES}",
        )
        digest = commitments.v2_object_hash(kind, schema, body)
        self.need(obj["body_sha256"] == digest.hex(), f"{kind}: body_sha256 does not recompute")
        return kind, result

    # -- 2. OBJECT_SCHEMA_INVALID --
    def schemas(self) -> None:
        for position, obj in enumerate(self.bundle["objects"]):
            self.at(OBJECT_SCHEMA_INVALID, _object_where(position))
            kind = obj["kind"]
            self.need(
                obj["schema"] == OBJECT_SCHEMAS[kind] and _same(obj["body"].get("schema"), obj["schema"]),
                f"{kind}: schema must be {OBJECT_SCHEMAS[kind]}",
            )

    # -- 3..20: trust anchor, identities, revocations, grant, request, receipt --
    def authority(self) -> None:
        trust = self.body("trust_anchor")
        identity = self.body("actor_identity_epoch")
        revocation = self.body("actor_revocation_state")
        hk = self.body("housekeeper_identity_epoch")
        hk_revocation = self.body("housekeeper_revocation_state")
        grant = self.body("effective_recall_grant")
        request = self.body("request_envelope")
        receipt = self.body("request_receipt")
        native = self.body("native_recall_receipt")
        company = self.company

        self.at(TRUST_ROOT_MISMATCH, _singleton_where("trust_anchor"))
        # reference quirk: a malformed fingerprint here reports DECISION_HASH_MALFORMED
        master_fp = self.hex64(trust.get("master_fingerprint"), "master_fingerprint", DECISION_HASH_MALFORMED)
        self.need(
            master_fp == self.fingerprint, "master_fingerprint differs from expected_master_fingerprint"
        )

        self.at(TRUST_ANCHOR_KEY_MISMATCH, _singleton_where("trust_anchor"))
        master_key = _b64u(trust.get("master_public_key_b64u"))
        self.need(master_key is not None, "master_public_key_b64u is not canonical base64url")
        assert master_key is not None
        self.need(
            _sha256_hex(master_key) == master_fp, "H(master public key) differs from master_fingerprint"
        )

        self.at(IDENTITY_CERTIFICATE_BINDING_INVALID, _singleton_where("actor_identity_epoch"))
        agent_id = identity.get("agent_id")
        valid_from = self.iso(identity.get("valid_from"), "actor valid_from", IDENTITY_SCOPE_MISMATCH)
        cert_fp = self.hex64(
            identity.get("cert_fingerprint"), "actor cert_fingerprint", IDENTITY_SCOPE_MISMATCH
        )
        certificate = identity.get("certificate")
        self.need(
            _is_text(certificate) and _is_text(identity.get("public_key_b64u")),
            "actor certificate and public key must be non-empty strings",
        )
        assert isinstance(certificate, str)
        self.need(
            _sha256_hex(certificate.encode("utf-8")) == cert_fp,
            "H(actor certificate) differs from cert_fingerprint",
        )

        self.at(IDENTITY_SCOPE_MISMATCH, _singleton_where("actor_identity_epoch"))
        self.need(_is_text(agent_id), "actor agent_id must be a non-empty string")
        assert isinstance(agent_id, str)
        self.need(identity.get("company_id") == company, "actor epoch company differs from the bundle's")
        for kind, body, agent_field in (
            ("request_envelope", request, "actor_agent_id"),
            ("request_receipt", receipt, "actor_agent_id"),
        ):
            self.where = _singleton_where(kind)
            self.need(body.get("company_id") == company, f"{kind} company differs from the bundle's")
            self.need(body.get(agent_field) == agent_id, f"{kind} actor differs from the actor epoch's")
            self.need(
                self.iso(body.get("actor_valid_from"), f"{kind} actor_valid_from") == valid_from,
                f"{kind} actor_valid_from differs from the actor epoch's",
            )
            self.need(
                body.get("cert_fingerprint") == cert_fp,
                f"{kind} cert_fingerprint differs from the actor epoch's",
            )
        self.agent_id, self.valid_from, self.cert_fingerprint = agent_id, valid_from, cert_fp

        self.at(HOUSEKEEPER_IDENTITY_INVALID, _singleton_where("housekeeper_identity_epoch"))
        hk_valid_from = self.iso(hk.get("valid_from"), "housekeeper valid_from")
        hk_fp = self.hex64(hk.get("cert_fingerprint"), "housekeeper cert_fingerprint")
        hk_certificate = hk.get("certificate")
        self.need(hk.get("company_id") == company, "housekeeper epoch company differs from the bundle's")
        self.need(hk.get("agent_id") == HOUSEKEEPER, "housekeeper epoch agent_id must be housekeeper")
        self.need(
            _is_text(hk_certificate) and _is_text(hk.get("public_key_b64u")),
            "housekeeper certificate and public key must be non-empty strings",
        )
        assert isinstance(hk_certificate, str)
        self.need(
            _sha256_hex(hk_certificate.encode("utf-8")) == hk_fp,
            "H(housekeeper certificate) differs from cert_fingerprint",
        )
        self.hk_valid_from, self.hk_fingerprint = hk_valid_from, hk_fp

        if agent_id == HOUSEKEEPER:
            self.at(HOUSEKEEPER_SYSTEM_PRINCIPAL_INVALID, _singleton_where("actor_identity_epoch"))
            self.need(
                identity.get("identity_tier") in HOUSEKEEPER_TIERS,
                "the housekeeper actor's tier must be T1 or T1_SYSTEM_SELF",
            )
            self.need(
                valid_from == hk_valid_from
                and cert_fp == hk_fp
                and certificate == hk_certificate
                and _same(identity.get("public_key_b64u"), hk.get("public_key_b64u")),
                "the housekeeper actor epoch differs from the housekeeper epoch",
            )

        self.at(IDENTITY_EPOCH_INVALID, _singleton_where("request_envelope"))
        request_ts = request.get("ts_signed")
        self.need(_is_int(request_ts), "request ts_signed must be a safe integer")
        assert isinstance(request_ts, int)
        self.where = _singleton_where("actor_identity_epoch")
        valid_until = self.iso(identity.get("valid_until"), "actor valid_until")
        start, end = _iso_seconds(valid_from), _iso_seconds(valid_until)
        assert start is not None and end is not None
        self.need(
            start <= request_ts <= end,
            f"request ts_signed {request_ts} is outside the actor epoch [{start}, {end}]",
        )
        self.request_ts = request_ts

        self.at(REVOCATION_STATE_INVALID, _singleton_where("actor_revocation_state"))
        self.revocation_state(revocation, agent_id, valid_from, "actor")
        evaluated = revocation["evaluated_at_unix_seconds"]
        assert isinstance(evaluated, int)
        self.need(evaluated >= request_ts, "actor revocation state was evaluated before the request")

        self.at(HOUSEKEEPER_REVOCATION_STATE_INVALID, _singleton_where("housekeeper_revocation_state"))
        self.revocation_state(hk_revocation, HOUSEKEEPER, hk_valid_from, "housekeeper")

        self.grant(grant, request)
        self.request(request)
        self.request_receipt(request, receipt, native)

        self.at(AUTHORITY_MUTATION_BINDING_INVALID, _singleton_where("native_recall_receipt"))
        self.need(
            _is_hex64(grant.get("mutation_hash"))
            and native.get("authority_mutation_hash") == grant["mutation_hash"],
            "native receipt authority_mutation_hash differs from the grant's mutation_hash",
        )
        self.at(REQUEST_CONTEXT_INVALID, _singleton_where("native_recall_receipt"))
        self.need(
            native.get("outer_request_hash") == request.get("outer_request_hash"),
            "native receipt outer_request_hash differs from the request's",
        )
        self.need(
            native.get("command_hash") == request.get("command_hash"),
            "native receipt command_hash differs from the request's",
        )

    def revocation_state(self, state: dict[str, Any], agent_id: str, valid_from: str, who: str) -> None:
        self.need(state.get("company_id") == self.company, f"{who} revocation state company differs")
        self.need(state.get("agent_id") == agent_id, f"{who} revocation state agent differs")
        self.need(
            self.iso(state.get("valid_from"), f"{who} revocation valid_from") == valid_from,
            f"{who} revocation state valid_from differs from the epoch's",
        )
        self.need(state.get("revoked") is False, f"{who} revocation state must have revoked = false")
        self.need(
            _is_int(state.get("evaluated_at_unix_seconds")),
            f"{who} revocation evaluated_at_unix_seconds must be a safe integer",
        )

    def grant(self, grant: dict[str, Any], request: dict[str, Any]) -> None:
        where = _singleton_where("effective_recall_grant")
        self.at(GRANT_SCOPE_MISMATCH, where)
        self.need(grant.get("company_id") == self.company, "grant company differs from the bundle's")
        self.need(grant.get("subject_agent_id") == self.agent_id, "grant subject differs from the actor")
        self.need(
            self.iso(grant.get("subject_valid_from"), "grant subject_valid_from") == self.valid_from,
            "grant subject_valid_from differs from the actor epoch's",
        )
        self.need(
            grant.get("master_fingerprint") == self.fingerprint,
            "grant master_fingerprint differs from expected_master_fingerprint",
        )
        clearance = grant.get("clearance_ceiling")
        self.need(
            _is_int(clearance) and 0 <= clearance <= MAX_CLEARANCE,
            f"grant clearance_ceiling must be an integer 0..{MAX_CLEARANCE}",
        )
        assert isinstance(clearance, int)
        requested = request.get("requested_clearance_level")
        requested = clearance if requested is None else requested
        self.need(
            _is_int(requested) and 0 <= requested <= clearance,
            "requested_clearance_level must be an integer 0..clearance_ceiling",
        )
        ceiling = grant.get("data_class_ceiling")
        self.need(ceiling in DATA_CLASSES, "grant data_class_ceiling is not a known data class")

        self.at(GRANT_NOT_EFFECTIVE, where)
        self.need(grant.get("allowed") is True, "grant allowed is not true")
        requested_class = request.get("requested_data_class")
        if requested_class is not None:
            self.where = _singleton_where("request_envelope")
            self.need(requested_class in DATA_CLASSES, "requested_data_class is not a known data class")
            self.need(
                DATA_CLASSES.index(requested_class) <= DATA_CLASSES.index(ceiling),
                "requested_data_class ranks above the grant's data_class_ceiling",
            )

        kind = grant.get("authority_kind")
        if kind == MASTER_GRANT:
            self.master_grant(grant, clearance, ceiling)
        elif kind == SYSTEM_PRINCIPAL:
            self.system_principal(grant, clearance, ceiling)
        else:
            self.at(GRANT_COMMITMENT_INVALID, where)
            self.fail("grant authority_kind is unknown")

    def master_grant(self, grant: dict[str, Any], clearance: int, ceiling: object) -> None:
        self.at(GRANT_COMMITMENT_INVALID, _singleton_where("effective_recall_grant"))
        self.need(self.agent_id != HOUSEKEEPER, "the housekeeper cannot hold a master-signed recall grant")
        body = grant.get("signed_body")
        self.need(_is_dict(body), "grant signed_body is not an object")
        assert isinstance(body, dict)
        self.need(body.get("schema") == RECALL_AUTHORIZATION_SCHEMA, "grant signed_body schema is wrong")
        self.need(
            body.get("company_id") == grant.get("company_id")
            and body.get("subject_agent_id") == grant.get("subject_agent_id"),
            "grant signed_body company or subject differs from the grant",
        )
        self.need(
            self.iso(body.get("subject_valid_from"), "signed_body subject_valid_from") == self.valid_from,
            "grant signed_body subject_valid_from differs from the actor epoch's",
        )
        self.need(body.get("allowed") is True, "grant signed_body allowed is not true")
        self.need(
            _is_int_equal(body.get("clearance_ceiling"), clearance)
            and body.get("data_class_ceiling") == ceiling
            and body.get("master_fingerprint") == grant.get("master_fingerprint"),
            "grant signed_body ceilings or master fingerprint differ from the grant",
        )
        content = _canonical_sha256_hex(body)
        self.need(grant.get("content_hash") == content, "grant content_hash is not H(canonical signed_body)")
        prev = grant.get("prev_mutation_hash")
        self.need(prev is None or _is_hex64(prev), "grant prev_mutation_hash is neither null nor a hash")
        nonce, ts = grant.get("nonce"), grant.get("ts_signed")
        self.need(isinstance(nonce, str) and _is_int(ts), "grant nonce or ts_signed is malformed")
        assert isinstance(nonce, str) and isinstance(ts, int)
        mutation = commitments.recall_authorization_mutation_hash(
            None if prev is None else bytes.fromhex(prev), bytes.fromhex(content), nonce, ts
        )
        self.need(grant.get("mutation_hash") == mutation.hex(), "grant mutation_hash does not recompute")
        self.need(
            _signature(grant.get("signature_b64u")) is not None,
            "grant signature_b64u is not 64 bytes of canonical base64url",
        )

    def system_principal(self, grant: dict[str, Any], clearance: int, ceiling: object) -> None:
        self.at(HOUSEKEEPER_SYSTEM_PRINCIPAL_INVALID, _singleton_where("effective_recall_grant"))
        self.need(self.agent_id == HOUSEKEEPER, "only the housekeeper acts as the system principal")
        present = [field for field in SYSTEM_PRINCIPAL_FORBIDDEN if field in grant]
        self.need(not present, f"a system-principal grant must not carry {present}")
        system = grant.get("system_principal_body")
        self.need(_is_dict(system), "system_principal_body is not an object")
        assert isinstance(system, dict)
        valid_from = self.iso(system.get("valid_from"), "system_principal_body valid_from")
        self.need(
            system.get("kind") == SYSTEM_PRINCIPAL
            and system.get("company_id") == self.company
            and system.get("agent_id") == HOUSEKEEPER
            and valid_from == self.valid_from,
            "system_principal_body does not name this company's housekeeper epoch",
        )
        self.need(
            clearance == MAX_CLEARANCE and ceiling == "restricted",
            "the system principal has clearance 12 and data class restricted",
        )
        principal = {
            "kind": SYSTEM_PRINCIPAL,
            "company_id": self.company,
            "agent_id": HOUSEKEEPER,
            "valid_from": valid_from,
        }
        self.need(
            grant.get("mutation_hash") == _canonical_sha256_hex(principal),
            "grant mutation_hash is not the system-principal hash",
        )

    def request(self, request: dict[str, Any]) -> None:
        self.at(REQUEST_CONTEXT_INVALID, _singleton_where("request_envelope"))
        self.need(
            _is_int_equal(request.get("request_sig_form"), REQUEST_SIG_FORM), "request_sig_form must be 3"
        )
        self.need(
            request.get("signed_method") == REQUEST_METHOD and request.get("signed_path") == REQUEST_PATH,
            "the request must be POST /aimos/recall",
        )
        self.need(_is_text(request.get("nonce")), "request nonce must be a non-empty string")
        self.need(
            _signature(request.get("signature_b64u")) is not None,
            "request signature_b64u is not 64 bytes of canonical base64url",
        )
        self.need(_is_dict(request.get("request_body")), "request_body is not an object")

        self.at(REQUEST_BODY_HASH_MISMATCH, _singleton_where("request_envelope"))
        self.request_hash = _canonical_sha256_hex(request["request_body"])
        self.need(
            request.get("request_body_hash") == self.request_hash,
            "request_body_hash is not H(canonical request_body)",
        )
        self.need(
            request.get("outer_request_hash") == self.request_hash,
            "outer_request_hash is not H(canonical request_body)",
        )

        self.at(COMMAND_HASH_MISMATCH, _singleton_where("request_envelope"))
        command = request.get("normalized_command")
        self.need(_is_dict(command), "normalized_command is not an object")
        self.need(
            request.get("command_hash") == _canonical_sha256_hex(command),
            "command_hash is not H(canonical normalized_command)",
        )

    def request_receipt(
        self, request: dict[str, Any], receipt: dict[str, Any], native: dict[str, Any]
    ) -> None:
        self.at(REQUEST_RECEIPT_BINDING_INVALID, _singleton_where("request_receipt"))
        receipt_id = receipt.get("request_receipt_id")
        self.need(_is_uuid(receipt_id), "request_receipt_id is not a lowercase UUID")
        self.need(
            _is_int_equal(receipt.get("request_sig_form"), REQUEST_SIG_FORM)
            and _is_int_equal(receipt.get("ts_signed"), self.request_ts),
            "receipt request_sig_form or ts_signed differs from the request's",
        )
        for field in ("signed_method", "signed_path", "nonce"):
            self.need(
                _same(receipt.get(field), request.get(field)), f"receipt {field} differs from the request's"
            )
        self.need(receipt.get("request_hash") == self.request_hash, "receipt request_hash differs")
        self.where = _singleton_where("native_recall_receipt")
        self.need(native.get("request_receipt_id") == receipt_id, "native receipt request_receipt_id differs")
        self.need(
            _same(native.get("request_receipt_mutation_hash"), receipt.get("mutation_hash")),
            "native receipt request_receipt_mutation_hash differs from the receipt's",
        )

        self.at(REQUEST_RECEIPT_COMMITMENT_INVALID, _singleton_where("request_receipt"))
        claims = receipt.get("signed_claims")
        claims_hash = None if claims is None else _canonical_sha256_hex(claims)
        self.need(
            _same(receipt.get("signed_claims_hash"), claims_hash),
            "signed_claims_hash is not H(canonical signed_claims) (or null)",
        )
        self.need(
            receipt.get("signature_b64u") == request.get("signature_b64u"),
            "receipt signature differs from the request signature",
        )
        signature = _signature(receipt.get("signature_b64u"))
        self.need(signature is not None, "receipt signature_b64u is not 64 bytes of canonical base64url")
        assert signature is not None
        prev = receipt.get("prev_mutation_hash")
        self.need(prev is None or _is_hex64(prev), "receipt prev_mutation_hash is neither null nor a hash")
        mutation = commitments.request_receipt_mutation_hash(
            None if prev is None else bytes.fromhex(prev),
            bytes.fromhex(self.request_hash),
            None if claims_hash is None else bytes.fromhex(claims_hash),
            signature,
            request["signed_method"],
            request["signed_path"],
            request["nonce"],
            self.request_ts,
        )
        self.need(receipt.get("mutation_hash") == mutation.hex(), "receipt mutation_hash does not recompute")

    # -- 21..25: decisions and the return projection --
    def decisions(self) -> None:
        content = self.body("content_state_projection")
        epistemic = self.body("epistemic_recall_decision")
        security = self.body("final_security_closure")
        projection = self.body("return_projection")
        native = self.body("native_recall_receipt")

        self.at(DECISION_HASH_MALFORMED)
        hashes: dict[str, str] = {}
        for kind, body, field in (
            ("content_state_projection", content, "admission_decision_sha256"),
            ("content_state_projection", content, "return_selection_decision_sha256"),
            ("content_state_projection", content, "state_view_root_sha256"),
            ("content_state_projection", content, "occurrence_view_root_sha256"),
            ("epistemic_recall_decision", epistemic, "decision_sha256"),
            ("final_security_closure", security, "decision_sha256"),
            ("return_projection", projection, "decision_sha256"),
        ):
            self.where = _singleton_where(kind)
            hashes[f"{kind}.{field}"] = self.hex64(body.get(field), f"{kind} {field}")
        selection = hashes["content_state_projection.return_selection_decision_sha256"]
        state_root = hashes["content_state_projection.state_view_root_sha256"]
        occurrence_root = hashes["content_state_projection.occurrence_view_root_sha256"]
        self.epistemic_hash = hashes["epistemic_recall_decision.decision_sha256"]
        self.security_hash = hashes["final_security_closure.decision_sha256"]

        self.at(OBJECT_SCHEMA_INVALID, _singleton_where("content_state_projection"))
        self.need(
            content.get("native_decision_schema") == CONTENT_KERNEL_SCHEMA,
            f"content_state_projection native_decision_schema must be {CONTENT_KERNEL_SCHEMA}",
        )
        self.where = _singleton_where("final_security_closure")
        self.need(
            security.get("native_decision_schema") == SECURITY_CLOSURE_SCHEMA,
            f"final_security_closure native_decision_schema must be {SECURITY_CLOSURE_SCHEMA}",
        )

        self.at(CONTENT_STATE_BINDING_INVALID, _singleton_where("return_projection"))
        self.need(
            projection.get("content_state_selection_sha256") == selection,
            "return projection content_state_selection_sha256 differs from the return-selection decision",
        )
        self.where = _singleton_where("final_security_closure")
        self.need(
            security.get("state_view_root_sha256") == state_root
            and security.get("occurrence_view_root_sha256") == occurrence_root,
            "security closure state/occurrence view roots differ from the content projection's",
        )

        self.at(EPISTEMIC_BINDING_INVALID, _singleton_where("final_security_closure"))
        self.need(
            security.get("epistemic_decision_sha256") == self.epistemic_hash,
            "security closure epistemic_decision_sha256 differs from the epistemic decision",
        )
        self.where = _singleton_where("native_recall_receipt")
        self.need(
            native.get("epistemic_decision_sha256") == self.epistemic_hash,
            "native receipt epistemic_decision_sha256 differs from the epistemic decision",
        )

        self.at(SECURITY_CLOSURE_BINDING_INVALID, _singleton_where("return_projection"))
        self.need(
            projection.get("final_security_closure_sha256") == self.security_hash,
            "return projection final_security_closure_sha256 differs from the security decision",
        )
        self.where = _singleton_where("native_recall_receipt")
        self.need(
            native.get("canary_final_security_closure_sha256") == self.security_hash,
            "native receipt canary_final_security_closure_sha256 differs from the security decision",
        )

        self.at(RETURN_PROJECTION_BINDING_INVALID, _singleton_where("return_projection"))
        self.need(
            isinstance(epistemic.get("selected_memory_ids"), list)
            and isinstance(security.get("selected_clean_memory_ids"), list)
            and isinstance(projection.get("projected_memory_ids"), list)
            and isinstance(projection.get("projected_live_content_hashes"), list),
            "selected / projected memory lists must be arrays",
        )
        return_path = projection.get("return_path")
        self.need(
            isinstance(return_path, str) and return_path in RETURN_PATHS,
            "return_path is not an allowed return path",
        )
        self.need(security.get("return_path") == return_path, "security closure return_path differs")
        self.need(
            projection.get("ordered_unique_subset_of_final_clean_security_closure") is True
            and projection.get("output_content_commitments_unchanged") is True
            and projection.get("canonical_memory_mutated") is False
            and projection.get("retention_changed") is False,
            "return projection flags are not (true, true, false, false)",
        )
        self.where = _singleton_where("native_recall_receipt")
        self.need(
            native.get("return_projection_event_body_bound") is True,
            "native receipt return_projection_event_body_bound is not true",
        )
        self.need(
            _same(native.get("return_projection"), projection),
            "native receipt return_projection differs from the return projection object",
        )

    # -- 26..32: results --
    def result_objects(self) -> None:
        native = self.body("native_recall_receipt")
        projection = self.body("return_projection")
        epistemic = self.body("epistemic_recall_decision")
        security = self.body("final_security_closure")
        content = self.body("content_state_projection")
        count = self.count

        self.at(RESULT_CARDINALITY_INVALID, _singleton_where("native_recall_receipt"))
        self.need(
            native.get("merkle_schema") == NATIVE_RECEIPT_SCHEMA, "native receipt merkle_schema is wrong"
        )
        self.need(
            _is_int_equal(native.get("result_count"), count),
            "native receipt result_count differs from the bundle's",
        )
        evidence = native.get("evidence")
        self.need(
            isinstance(evidence, list) and len(evidence) == count,
            "native receipt evidence does not hold result_count entries",
        )
        assert isinstance(evidence, list)
        self.where = _singleton_where("return_projection")
        projected_ids: list[Any] = projection["projected_memory_ids"]
        projected_hashes: list[Any] = projection["projected_live_content_hashes"]
        selected_clean: list[Any] = security["selected_clean_memory_ids"]
        selected: list[Any] = epistemic["selected_memory_ids"]
        self.need(
            _is_int_equal(projection.get("projected_output_count"), count)
            and len(projected_ids) == count
            and len(projected_hashes) == count,
            "return projection does not project result_count memories",
        )

        refs = content.get("selected_occurrence_refs")
        for r, group in enumerate(self.results):
            memory_obj = group["memory_state"]
            memory = memory_obj["body"]
            provenance = group["provenance_chain"]["body"]
            occurrence = group["occurrence"]["body"]
            projected = group["epistemic_projection"]["body"]
            entry = group["receipt_evidence"]["body"]
            where = f"result {r}"
            first = _result_object_ordinal(r, "memory_state")

            self.at(RESULT_IDENTITY_BINDING_INVALID, where)
            memory_id = memory.get("memory_id")
            live = self.hex64(memory.get("live_content_hash"), f"result {r} memory_state live_content_hash")
            self.need(_is_uuid(memory_id), f"objects[{first}] memory_id is not a lowercase memory UUID")
            self.need(
                memory_obj["subject_id"] == memory_id, f"objects[{first}] memory_id differs from subject_id"
            )
            for kind, body, hash_field in (
                ("provenance_chain", provenance, "live_content_hash"),
                ("occurrence", occurrence, "live_content_hash_hex"),
                ("epistemic_projection", projected, "live_content_hash"),
                ("receipt_evidence", entry, "live_content_hash"),
            ):
                ordinal = _result_object_ordinal(r, kind)
                self.need(body.get("memory_id") == memory_id, f"objects[{ordinal}] {kind} memory_id differs")
                self.need(body.get(hash_field) == live, f"objects[{ordinal}] {kind} {hash_field} differs")

            self.at(PROVENANCE_BINDING_INVALID, where)
            for field in ("save_mutation_hash", "binding_mutation_hash"):
                value = self.hex64(provenance.get(field), f"provenance {field}")
                self.need(
                    entry.get(field) == value, f"receipt evidence {field} differs from the provenance's"
                )

            self.at(OCCURRENCE_BINDING_INVALID, where)
            occurrence_ref = self.hex64(occurrence.get("occurrence_ref"), "occurrence_ref")
            self.need(
                entry.get("occurrence_ref") == occurrence_ref,
                "receipt evidence occurrence_ref differs from the occurrence's",
            )

            self.at(OCCURRENCE_NATIVE_BODY_INVALID, where)
            self.occurrence(occurrence, memory_id, live, occurrence_ref)

            self.at(EPISTEMIC_PROJECTION_BINDING_INVALID, where)
            self.need(
                projected.get("decision_sha256") == self.epistemic_hash,
                "epistemic projection decision_sha256 differs from the epistemic decision",
            )
            self.need(memory_id in selected, "the memory is not in the epistemic selected_memory_ids")

            self.at(RECEIPT_EVIDENCE_BINDING_INVALID, where)
            self.need(_is_int_equal(entry.get("ordinal"), r), f"receipt evidence ordinal must be {r}")
            stripped = {k: v for k, v in entry.items() if k != "schema"}
            self.need(_same(stripped, evidence[r]), f"receipt evidence differs from native evidence[{r}]")

            self.at(RETURN_PROJECTION_BINDING_INVALID, where)
            self.need(
                projected_ids[r] == memory_id and projected_hashes[r] == live,
                f"projected_memory_ids[{r}] / projected_live_content_hashes[{r}] differ from the result",
            )
            self.need(
                r < len(selected_clean) and selected_clean[r] == memory_id,
                f"selected_clean_memory_ids[{r}] differs from the result",
            )

            self.at(CONTENT_STATE_BINDING_INVALID, where)
            self.need(
                isinstance(refs, list) and occurrence_ref in refs,
                "the occurrence_ref is not in selected_occurrence_refs",
            )
            self.evidence.append(stripped)

        self.at(RETURN_PROJECTION_BINDING_INVALID, _singleton_where("return_projection"))
        self.need(
            _same(selected, projected_ids) and _same(selected_clean, projected_ids),
            "epistemic selected / security selected-clean lists differ from projected_memory_ids",
        )

    def occurrence(self, occurrence: dict[str, Any], memory_id: str, live: str, occurrence_ref: str) -> None:
        form = occurrence.get("occurrence_form")
        native = occurrence.get("native_body")
        if form == "v3":
            self.need(occurrence.get("native_schema") == OCCURRENCE_V3_SCHEMA, "v3 native_schema is wrong")
            self.need(_is_dict(native), "native_body is not an object")
            assert isinstance(native, dict)
            commitment = self.occurrence_commitment(native)
            self.need(
                native.get("schema") == OCCURRENCE_V3_SCHEMA
                and native.get("memory_id") == memory_id
                and native.get("live_content_hash_hex") == live,
                "native_body schema, memory or live hash differs from the result",
            )
            self.need(
                native.get("occurrence_commitment") == occurrence_ref and commitment.hex() == occurrence_ref,
                "the occurrence v3 commitment does not recompute to occurrence_ref",
            )
            self.need(
                _is_text(occurrence.get("signature_b64u")) and _is_text(occurrence.get("signer_certificate")),
                "a v3 occurrence needs a signature and a signer certificate",
            )
            self.commitments.append(commitment)
        elif form == "legacy_v1":
            self.need(
                occurrence.get("native_schema") == OCCURRENCE_LEGACY_SCHEMA,
                "legacy_v1 native_schema is wrong",
            )
            self.need(
                _is_dict(native) and native.get("memory_id") == memory_id,
                "legacy native_body memory_id differs from the result",
            )
            self.commitments.append(b"")
        else:
            self.fail("occurrence_form is neither v3 nor legacy_v1")

    def occurrence_commitment(self, native: dict[str, Any]) -> bytes:
        """Recompute `hom.aimos.memory-occurrence/v3` from native_body, after checking every field."""

        def flag(name: str, value_name: str, valid: bool) -> bool:
            present = native.get(name)
            self.need(_is_int(present) and present in (0, 1), f"native_body {name} must be 0 or 1")
            if present == 0:
                self.need(native.get(value_name) in (None, ""), f"native_body {value_name} must be empty")
                return False
            self.need(valid, f"native_body {value_name} is malformed")
            return True

        def upper(name: str, *, empty: bool = False) -> str:
            value = native.get(name)
            self.need(
                isinstance(value, str) and (empty or value != "") and value == value.upper(),
                f"native_body {name} must be an upper-case string",
            )
            assert isinstance(value, str)
            return value

        for name in ("company_id", "agent_id"):
            self.need(_is_text(native.get(name)), f"native_body {name} must be a non-empty string")
        for name in ("occurrence_event_id", "memory_id"):
            value = native.get(name)
            self.need(
                isinstance(value, str) and _ANY_UUID.fullmatch(value) is not None,
                f"native_body {name} is not a lowercase UUID",
            )
        for name in ("live_content_hash_hex", "cert_fingerprint_hex", "request_body_hash_hex"):
            self.hex64(native.get(name), f"native_body {name}")
        event_type = upper("event_type")
        identity_tier = upper("identity_tier")
        method = upper("signed_method", empty=True)
        path = native.get("signed_path")
        self.need(isinstance(path, str), "native_body signed_path must be a string")
        assert isinstance(path, str)
        self.need(
            (method != "" and path != "")
            or (method == "" and path == "" and event_type.startswith("INTERNAL_")),
            "native_body signed method and path may be empty only for INTERNAL_* events",
        )
        self.need(_is_int_equal(native.get("sig_form_version"), 3), "native_body sig_form_version must be 3")
        nonce_hex = native.get("nonce_hex")
        self.need(
            isinstance(nonce_hex, str)
            and _HEX.fullmatch(nonce_hex) is not None
            and 32 <= len(nonce_hex) <= 64,
            "native_body nonce_hex must be 16..32 bytes of lowercase hex",
        )
        assert isinstance(nonce_hex, str)
        valid_from_ms, ts = native.get("signer_valid_from_unix_ms"), native.get("ts_signed_unix_seconds")
        self.need(_is_int(valid_from_ms), "native_body signer_valid_from_unix_ms must be a safe integer")
        self.need(
            _is_int(ts) and ts >= 0, "native_body ts_signed_unix_seconds must be a non-negative integer"
        )
        assert isinstance(valid_from_ms, int) and isinstance(ts, int)
        has_predecessor = flag(
            "predecessor_present",
            "predecessor_commitment_hex",
            _is_hex64(native.get("predecessor_commitment_hex")),
        )
        has_receipt = flag(
            "request_receipt_present",
            "request_receipt_mutation_hash_hex",
            _is_hex64(native.get("request_receipt_mutation_hash_hex")),
        )
        has_authorization = flag(
            "authorization_event_present",
            "authorization_event_id",
            isinstance(native.get("authorization_event_id"), str)
            and _ANY_UUID.fullmatch(native["authorization_event_id"]) is not None,
        )
        try:
            return commitments.occurrence_v3_commitment(
                company_id=native["company_id"],
                occurrence_event_id=native["occurrence_event_id"],
                memory_id=native["memory_id"],
                event_type=event_type,
                live_hash=bytes.fromhex(native["live_content_hash_hex"]),
                predecessor=bytes.fromhex(native["predecessor_commitment_hex"]) if has_predecessor else None,
                agent_id=native["agent_id"],
                signer_valid_from_ms=valid_from_ms,
                cert_fingerprint=bytes.fromhex(native["cert_fingerprint_hex"]),
                identity_tier=identity_tier,
                sig_form_version=3,
                nonce=bytes.fromhex(nonce_hex),
                ts_signed=ts,
                signed_method=method,
                signed_path=path,
                request_body_hash=bytes.fromhex(native["request_body_hash_hex"]),
                request_receipt_mutation_hash=(
                    bytes.fromhex(native["request_receipt_mutation_hash_hex"]) if has_receipt else None
                ),
                authorization_event_id=native["authorization_event_id"] if has_authorization else None,
            )
        except (AimosError, ValueError) as exc:
            self.fail(f"the occurrence v3 commitment cannot be encoded ({exc})")

    # -- 33..37: Merkle entries, root, the housekeeper's event, revocation binding --
    def merkle_and_event(self) -> None:
        native = self.body("native_recall_receipt")
        identity = self.body("actor_identity_epoch")
        hk = self.body("housekeeper_identity_epoch")
        native_where = _singleton_where("native_recall_receipt")

        self.at(MERKLE_ENTRY_BINDING_INVALID, native_where)
        entries: list[Any] = [
            {"entry_type": "epistemic_decision", "decision_sha256": self.epistemic_hash},
            {"entry_type": "canary_final_security_closure", "decision_sha256": self.security_hash},
            *self.evidence,
        ]
        self.need(
            _same(native.get("merkle_entries"), entries), "merkle_entries differ from the expected entries"
        )

        self.at(MERKLE_ROOT_MISMATCH, native_where)
        root = merkle_root(entries).hex()
        self.need(native.get("merkle_root") == root, "native receipt merkle_root does not recompute")

        self.at(EVENT_RECEIPT_BINDING_INVALID, native_where)
        event = native.get("event_receipt")
        self.need(_is_dict(event), "event_receipt is missing")
        assert isinstance(event, dict)
        body = event.get("signed_body")
        self.need(_is_dict(body), "event_receipt signed_body is missing")
        assert isinstance(body, dict)
        metadata = body.get("metadata")
        self.need(_is_dict(metadata), "event_receipt metadata is missing")
        assert isinstance(metadata, dict)
        self.need(body.get("operation") == RECALL_OPERATION, "event operation is not recall_receipt")
        self.need(
            body.get("company_id") == identity.get("company_id")
            and body.get("actor_agent_id") == identity.get("agent_id"),
            "event company or actor differs from the actor epoch",
        )
        self.need(
            self.iso(body.get("actor_valid_from"), "event actor_valid_from") == self.valid_from,
            "event actor_valid_from differs from the actor epoch's",
        )
        for field in (
            "command_hash",
            "outer_request_hash",
            "authority_mutation_hash",
            "request_receipt_id",
            "request_receipt_mutation_hash",
        ):
            self.need(_same(metadata.get(field), native.get(field)), f"event metadata {field} differs")
        self.need(metadata.get("merkle_root") == root, "event metadata merkle_root differs")
        self.need(
            _is_int_equal(metadata.get("result_count"), len(self.evidence)),
            "event metadata result_count differs",
        )
        self.need(_same(metadata.get("evidence"), self.evidence), "event metadata evidence differs")
        self.need(
            _same(metadata.get("return_projection"), native.get("return_projection")),
            "event metadata return_projection differs",
        )

        self.at(HOUSEKEEPER_IDENTITY_INVALID, native_where)
        self.need(body.get("signer_agent_id") == HOUSEKEEPER, "event signer is not the housekeeper")
        self.need(
            self.iso(body.get("signer_valid_from"), "event signer_valid_from") == self.hk_valid_from,
            "event signer_valid_from differs from the housekeeper epoch's",
        )
        self.need(
            body.get("cert_fingerprint") == self.hk_fingerprint,
            "event cert_fingerprint differs from the housekeeper epoch's",
        )
        signer_certificate = event.get("signer_certificate")
        self.need(
            isinstance(signer_certificate, str)
            and signer_certificate == hk.get("certificate")
            and _sha256_hex(signer_certificate.encode("utf-8")) == self.hk_fingerprint,
            "event signer_certificate is not the housekeeper epoch's certificate",
        )

        self.at(EVENT_RECEIPT_COMMITMENT_INVALID, native_where)
        content = _canonical_sha256_hex(body)
        self.need(event.get("content_hash") == content, "event content_hash is not H(canonical signed_body)")
        prev = self.hex64(event.get("prev_mutation_hash"), "event prev_mutation_hash")
        nonce, ts = event.get("nonce"), event.get("ts_signed")
        self.need(_is_text(nonce) and _is_int(ts) and ts >= 0, "event nonce or ts_signed is malformed")
        assert isinstance(nonce, str) and isinstance(ts, int)
        mutation = commitments.event_link_hash(bytes.fromhex(prev), bytes.fromhex(content), nonce, ts)
        self.need(event.get("mutation_hash") == mutation.hex(), "event mutation_hash does not recompute")
        self.need(
            body.get("prev_mutation_hash") == prev and _is_int_equal(body.get("ts_signed"), ts),
            "event signed_body prev_mutation_hash / ts_signed differ from the event's",
        )
        self.need(
            _signature(event.get("signature_b64u")) is not None,
            "event signature_b64u is not 64 bytes of canonical base64url",
        )

        for kind in ("actor_revocation_state", "housekeeper_revocation_state"):
            self.at(REVOCATION_EVENT_BINDING_INVALID, _singleton_where(kind))
            state = self.body(kind)
            self.need(
                state.get("source_event_mutation_hash") == event["mutation_hash"]
                and _is_int_equal(state.get("evaluated_at_unix_seconds"), ts),
                f"{kind} is not evaluated at the recall event",
            )

    # -- P2: signatures --
    def cryptography(self, expected_master_fingerprint: object) -> None:
        trust = self.body("trust_anchor")
        identity = self.body("actor_identity_epoch")
        hk = self.body("housekeeper_identity_epoch")
        grant = self.body("effective_recall_grant")
        request = self.body("request_envelope")
        native = self.body("native_recall_receipt")
        event = native["event_receipt"]

        self.at(EXPECTED_TRUST_ANCHOR_REQUIRED)
        expected = (
            expected_master_fingerprint.lower() if isinstance(expected_master_fingerprint, str) else None
        )
        self.need(
            _is_hex64(expected), "an expected master fingerprint (64 hex) must be supplied by the caller"
        )
        self.need(
            expected == self.fingerprint,
            "the supplied master fingerprint differs from the bundle's expected_master_fingerprint",
        )
        assert isinstance(expected, str)
        master_key = trust["master_public_key_b64u"]

        self.at(ACTOR_CERTIFICATE_SIGNATURE_INVALID, _singleton_where("actor_identity_epoch"))
        self.certificate(identity, identity["agent_id"], master_key, expected, self.request_ts)
        self.at(HOUSEKEEPER_CERTIFICATE_SIGNATURE_INVALID, _singleton_where("housekeeper_identity_epoch"))
        self.certificate(hk, HOUSEKEEPER, master_key, expected, event["ts_signed"])

        if grant["authority_kind"] == MASTER_GRANT:
            self.at(MASTER_GRANT_SIGNATURE_INVALID, _singleton_where("effective_recall_grant"))
            message = payload_message(grant["signed_body"], grant["nonce"], grant["ts_signed"])
            self.signature(master_key, message, grant["signature_b64u"], "master grant")

        self.at(ACTOR_REQUEST_SIGNATURE_INVALID, _singleton_where("request_envelope"))
        message = request_message(
            request["request_body"], REQUEST_METHOD, REQUEST_PATH, request["nonce"], self.request_ts
        )
        self.signature(identity["public_key_b64u"], message, request["signature_b64u"], "actor request")

        self.at(HOUSEKEEPER_EVENT_SIGNATURE_INVALID, _singleton_where("native_recall_receipt"))
        message = payload_message(event["signed_body"], event["nonce"], event["ts_signed"])
        self.signature(hk["public_key_b64u"], message, event["signature_b64u"], "housekeeper event")

        for r, group in enumerate(self.results):
            self.at(HOUSEKEEPER_OCCURRENCE_SIGNATURE_INVALID, f"result {r}")
            occurrence = group["occurrence"]["body"]
            ordinal = _result_object_ordinal(r, "occurrence")
            self.need(
                occurrence.get("occurrence_form") == "v3",
                f"objects[{ordinal}]: only a v3 occurrence carries a housekeeper signature",
            )
            self.need(
                occurrence.get("signer_certificate") == hk["certificate"],
                f"objects[{ordinal}]: the occurrence signer certificate is not the housekeeper's",
            )
            message = commitments.occurrence_v3_signature_message(self.commitments[r])
            self.signature(
                hk["public_key_b64u"],
                message,
                occurrence.get("signature_b64u"),
                f"objects[{ordinal}] occurrence",
            )

    def certificate(
        self, epoch: dict[str, Any], agent_id: str, master_key: str, expected: str, at: int
    ) -> None:
        try:
            cert = parse_certificate(epoch["certificate"])
        except AimosError as exc:
            self.fail(f"the certificate cannot be parsed ({exc.reason or exc.message})")
        self.need(
            cert.agent_id == agent_id and cert.pubkey == epoch.get("public_key_b64u"),
            "the certificate names another agent or public key than the epoch",
        )
        try:
            verify_certificate(cert, master_key, at=at, accepted_issuers=(MASTER_ISSUER, expected))
        except AimosError as exc:
            self.fail(
                f"the certificate does not verify under the master key at {at} ({exc.reason or exc.message})"
            )
        self.signatures += 1
        self.need(
            cert.valid_from == _iso_seconds(epoch.get("valid_from"))
            and cert.valid_until == _iso_seconds(epoch.get("valid_until")),
            "the certificate window differs from the epoch's valid_from / valid_until",
        )

    def signature(self, public_key: object, message: bytes, signature_b64u: object, what: str) -> None:
        signature = _signature(signature_b64u)
        self.need(
            isinstance(public_key, str) and signature is not None and verify(public_key, message, signature),
            f"the {what} signature does not verify",
        )
        self.signatures += 1


def verify_recall_envelope(
    bundle: Any, expected_master_fingerprint: str | None = None, *, structural_only: bool = False
) -> V2Verdict:
    """Verify a MutMem V2 recall-disclosure envelope; never raises.

    ``structural_only`` runs the 37 structural predicates only (the P1 vectors carry fake keys).
    Otherwise the caller's ``expected_master_fingerprint`` is required: without it the first
    cryptographic check fails with ``EXPECTED_TRUST_ANCHOR_REQUIRED``.
    """
    run = _Verifier()
    try:
        run.envelope(bundle)
        run.schemas()
        run.authority()
        run.decisions()
        run.result_objects()
        run.merkle_and_event()
        if not structural_only:
            run.cryptography(expected_master_fingerprint)
    except _Failure as failure:
        return V2Verdict("invalid", failure.code, _short(failure.detail), failure.where, run.signatures)
    except Exception as exc:  # a defect, not a protocol outcome: still a closed reason (module doc)
        detail = f"unexpected {type(exc).__name__} while evaluating {run.code}: {exc}"
        return V2Verdict("invalid", run.code, _short(detail), run.where, run.signatures)
    return V2Verdict("valid", None, None, None, run.signatures)
