"""Portable verifier of MutMem V1 recall evidence and recall corpora.

Schemas: ``hom.aimos.mutmem-recall-evidence/v1`` (one signed recall: trust anchors, the agent's
signed request, the recalled memories, the recall receipt and the housekeeper's signed
``recall_receipt`` event) and ``hom.aimos.mutmem-recall-corpus/v1`` (N such bundles under one
corpus root). Pure: a parsed document (or its bytes) in, a verdict out; no I/O, no store, and no
stored hash is trusted: every hash, certificate and signature is recomputed.

The checks follow the HOM-AIMOS reference verifier (``verifiers/mutmem-python/recall_verifier.py``)
in its order; the first failure is the primary reason, with the reference's reason strings.

Recall evidence:

1. the whole document canonicalizes (depth <= 32, safe integers, finite numbers; the reference
   canonicalizes every document as it parses it): ``canonical_json_*``;
2. the envelope: exactly its seven fields, the exact ``format`` object, non-empty ``bundle_id`` and
   ``company_id``, a ``memories`` list: ``recall_bundle_schema_invalid``;
3. the trust anchors ``{master, certificates}``: the master (or null) is exactly
   ``{public_key_b64u, fingerprint}`` with fingerprint = H(key DER); at most 16 certificate anchors
   ``{certificate_sha256, public_key_b64u}``, hashes distinct lowercase hex:
   ``recall_trust_anchor_schema_invalid``; an unreadable master key ``master_key_invalid``, an
   anchor key that is no Ed25519 SPKI key ``public_key_invalid``;
4. the request ``{body, method, path, nonce, ts_signed, signature, certificate}``
   (``recall_request_schema_invalid``); its certificate (below); the certificate names the body's
   ``agent_id`` (``recall_request_identity_invalid``); POST ``/aimos/recall``, the body's
   ``ts_signed`` and a nonce (``recall_request_context_invalid``); the agent's request signature,
   request form 3 (``recall_request_signature_invalid``); then the body normalized into the recall
   command: known fields only (``recall_unknown_field:<name>``), a query, key or memory id
   (``recall_query_or_identifier_required``), a UUID memory id (``recall_memory_id_invalid``), limit
   1..200, clearance 0..12, max_hops 1..4 (``recall_integer_invalid``);
5. the command's company is the bundle's (``recall_scope_binding_invalid``);
6. a receipt object with an ``evidence`` list, else *indeterminate*
   ``recall_mandatory_evidence_missing``; its fields (``recall_receipt_schema_invalid``); one
   evidence entry per memory (``recall_receipt_evidence_count_mismatch``);
7. memory *i* and evidence entry *i*: exact fields, ordinal *i*, the same memory id, the request's
   source filter (and memory-type filter, when given), the same three lowercase-hex provenance
   hashes: ``recall_receipt_memory_binding_invalid:<i>``;
8. with a ``merkle_schema``: the epistemic-decision profile, its decision hash as the first Merkle
   entry and the evidence after it (``recall_receipt_epistemic_binding_invalid``);
9. the receipt's command hash H(command), outer request hash H(body), RFC 6962 Merkle root and the
   two mutation hashes' form: ``recall_receipt_cryptographic_binding_invalid``;
10. the event receipt: absent or null gives *indeterminate* ``recall_mandatory_evidence_missing``;
    exact fields (``recall_event_receipt_schema_invalid``); its signer certificate (below); an
    object body (``recall_event_body_invalid``); a lowercase-hex predecessor
    (``recall_event_previous_hash_invalid``); content hash, event-link mutation hash and every
    binding of the signed body to the receipt (``recall_event_binding_invalid``); the signature,
    payload form 1 (``recall_event_signature_invalid``).

A certificate (request or event) is read as base64url canonical JSON ``{body, sig}`` with exactly
the eight body fields (``cert_malformed`` / ``cert_schema``); it must chain to an anchor: a
self-issued certificate (issuer = agent_id) to a certificate anchor naming its hash and key, any
other to the master anchor when the issuer is ``aimos-master`` or the master's fingerprint
(``recall_trust_anchor_missing``); the issuer's signature (``cert_sig_invalid``); and the signing
time within its window (``cert_epoch_invalid``).

Corpus: exactly ``{format, intended_n, members, corpus_root}`` (``recall_corpus_schema_invalid``);
the exact format and ``intended_n`` >= 1 members (``recall_corpus_intended_n_invalid``); member *i*
is ``{ordinal: i, bundle_id, bundle_sha256, bundle}`` with a distinct id equal to the bundle's and
bundle_sha256 = H(canonicalJSON(bundle)) (``recall_corpus_member_invalid``); every member bundle is
verified; the corpus root (``recall_corpus_root_mismatch``). The corpus verdict is the first invalid
member's, else the first indeterminate member's, else valid; its reason is that member's reason.

The caller's trust anchor. The reference trusts the anchors the bundle carries. Given
``expected_master_fingerprint``, aimos also requires, after every reference check has passed (so
each reference reason is reported unchanged), that the bundle's master anchor is that fingerprint
and that the request certificate was verified under it: ``recall_trust_anchor_master_mismatch``
(aimos's own reason). The housekeeper's event certificate stays self-issued and anchored by the
bundle itself, as in the reference: a valid verdict proves the agent's request under the caller's
master, and a receipt consistent with it signed by the key the bundle names for the housekeeper.

Where aimos is stricter than the reference Python verifier (none of these occur in well-formed
evidence): base64url must be canonical and unpadded; JSON values are compared as canonical JSON, so
``true`` never equals ``1``; a certificate must also have ``v`` 1, integer times and a non-empty
window (else ``cert_schema``); an anchor key must be an Ed25519 SPKI key; a non-object event
``metadata`` fails the event binding and a non-object member bundle the corpus member check (the
reference fails both with an internal error). A defect of this verifier (an exception no check
expects) gives *indeterminate* ``verifier_internal_error``, as the cognitive verifier does.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, NoReturn, TypeGuard

from aimos.crypto import commitments
from aimos.crypto.canonical import MAX_SAFE_INTEGER, canonical_json
from aimos.crypto.certs import MASTER_ISSUER, Certificate, parse_certificate, verify_certificate
from aimos.crypto.ed25519 import fingerprint_of_der, raw_from_spki, verify
from aimos.crypto.encoding import b64u_decode, is_hex64
from aimos.crypto.merkle import merkle_root
from aimos.crypto.messages import payload_message, request_message
from aimos.errors import AimosError, CanonicalJSONError
from aimos.verify.kit import BundleParseError, load_bundle, strict_json_loads

RECALL_SCHEMA: Final = "hom.aimos.mutmem-recall-evidence/v1"
CORPUS_SCHEMA: Final = "hom.aimos.mutmem-recall-corpus/v1"
RECALL_FORMAT: Final[Mapping[str, object]] = {
    "schema": RECALL_SCHEMA,
    "version": 1,
    "authority": "descriptive_only",
    "canonicalization": "hom-aimos/canonical-json/v1",
    "hash": "sha256",
    "signature": "ed25519",
}
CORPUS_FORMAT: Final[Mapping[str, object]] = {
    "schema": CORPUS_SCHEMA,
    "version": 1,
    "authority": "descriptive_only",
}
RECALL_FIELDS: Final = frozenset(
    {"format", "bundle_id", "company_id", "trust_anchors", "request", "memories", "recall_receipt"}
)
CORPUS_FIELDS: Final = frozenset({"format", "intended_n", "members", "corpus_root"})
CORPUS_MEMBER_FIELDS: Final = frozenset({"ordinal", "bundle_id", "bundle_sha256", "bundle"})
TRUST_ANCHOR_FIELDS: Final = frozenset({"master", "certificates"})
MASTER_ANCHOR_FIELDS: Final = frozenset({"public_key_b64u", "fingerprint"})
CERTIFICATE_ANCHOR_FIELDS: Final = frozenset({"certificate_sha256", "public_key_b64u"})
MAX_CERTIFICATE_ANCHORS: Final = 16
REQUEST_FIELDS: Final = frozenset(
    {"body", "method", "path", "nonce", "ts_signed", "signature", "certificate"}
)
RECALL_METHOD: Final = "POST"
RECALL_PATH: Final = "/aimos/recall"
RECEIPT_REQUIRED_FIELDS: Final = frozenset(
    {
        "command_hash",
        "outer_request_hash",
        "authority_mutation_hash",
        "request_receipt_id",
        "request_receipt_mutation_hash",
        "merkle_root",
        "evidence",
    }
)
RECEIPT_OPTIONAL_FIELDS: Final = frozenset(
    {"event_receipt", "merkle_schema", "epistemic_decision_sha256", "merkle_entries"}
)
EPISTEMIC_MERKLE_SCHEMA: Final = "hom-aimos/recall-merkle/v2-epistemic-decision"
EPISTEMIC_ENTRY_TYPE: Final = "epistemic_decision"
MEMORY_FIELDS: Final = frozenset({"id", "source", "memory_type", "provenance_proof"})
PROOF_HASH_FIELDS: Final = ("live_content_hash", "save_mutation_hash", "binding_mutation_hash")
EVIDENCE_FIELDS: Final = frozenset(
    {
        "ordinal",
        "memory_id",
        *PROOF_HASH_FIELDS,
        "truth_state",
        "raw_calibration_score",
        "calibrated_score",
        "calibration_event_id",
        "calibration_mutation_hash",
        "calibration_formula_version",
    }
)
EVENT_RECEIPT_FIELDS: Final = frozenset(
    {
        "event_id",
        "proof_required",
        "ledger_version",
        "ledger_seq",
        "signed_body",
        "content_hash",
        "mutation_hash",
        "prev_mutation_hash",
        "signer_agent_id",
        "signer_valid_from",
        "cert_fingerprint",
        "signer_certificate",
        "identity_tier",
        "ts_signed",
        "nonce",
        "signature",
    }
)
RECALL_OPERATION: Final = "recall_receipt"
LEDGER_VERSION: Final = 1
# The recall command's fields (the reference's normalizeRecallCommand accepts these and no other).
COMMAND_FIELDS: Final = frozenset(
    {
        "query", "q", "key", "memory_id", "company_id", "agent_id", "limit", "clearance_level",
        "memory_type_filter", "source_filter", "session_id", "project_id", "workspace_path", "sort",
        "mode", "selectivity", "lazy", "max_hops", "projection", "cache", "semantic_cache",
        "early_exit", "debug_recall", "doctor_trace", "context_window", "tokens_used",
        "recall_share", "summary_token_budget", "evidence_token_budget", "full_detail_token_budget",
        "answer_shape", "requested_shape", "answer_mode", "ts_signed",
    }
)  # fmt: skip
DEFAULT_COMPANY: Final = "hom"
LIMIT_DEFAULT, LIMIT_MIN, LIMIT_MAX = 10, 1, 200
CLEARANCE_MIN, CLEARANCE_MAX = 0, 12
MAX_HOPS_MIN, MAX_HOPS_MAX = 1, 4
_CERT_FIELDS: Final = frozenset(
    {"v", "agent_id", "pubkey", "device_fp", "valid_from", "valid_until", "issuer", "issued_at"}
)
# The reference accepts any letter case in a memory id, version 1-5 and the RFC 4122 variant.
_MEMORY_UUID: Final = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", re.IGNORECASE
)

Verdict = Literal["valid", "invalid", "indeterminate"]


class R:
    """The closed vocabulary. ``MEMORY_BINDING_INVALID`` and ``UNKNOWN_FIELD`` are reported with a
    suffix: ``:<memory index>`` and ``:<field name>``."""

    # -- the document as JSON (also from the kit's strict loader when reading bytes) --
    CANONICAL_DEPTH_LIMIT: Final = "canonical_json_depth_limit"
    CANONICAL_INVALID: Final = "canonical_json_invalid"
    # -- recall evidence, in check order --
    BUNDLE_SCHEMA_INVALID: Final = "recall_bundle_schema_invalid"
    TRUST_ANCHOR_SCHEMA_INVALID: Final = "recall_trust_anchor_schema_invalid"
    MASTER_KEY_INVALID: Final = "master_key_invalid"
    PUBLIC_KEY_INVALID: Final = "public_key_invalid"
    REQUEST_SCHEMA_INVALID: Final = "recall_request_schema_invalid"
    TRUST_ANCHOR_MISSING: Final = "recall_trust_anchor_missing"
    CERT_MALFORMED: Final = "cert_malformed"
    CERT_SCHEMA: Final = "cert_schema"
    CERT_SIG_INVALID: Final = "cert_sig_invalid"
    CERT_EPOCH_INVALID: Final = "cert_epoch_invalid"
    REQUEST_IDENTITY_INVALID: Final = "recall_request_identity_invalid"
    REQUEST_CONTEXT_INVALID: Final = "recall_request_context_invalid"
    REQUEST_SIGNATURE_INVALID: Final = "recall_request_signature_invalid"
    UNKNOWN_FIELD: Final = "recall_unknown_field"
    QUERY_OR_IDENTIFIER_REQUIRED: Final = "recall_query_or_identifier_required"
    MEMORY_ID_INVALID: Final = "recall_memory_id_invalid"
    INTEGER_INVALID: Final = "recall_integer_invalid"
    SCOPE_BINDING_INVALID: Final = "recall_scope_binding_invalid"
    MANDATORY_EVIDENCE_MISSING: Final = "recall_mandatory_evidence_missing"  # indeterminate
    RECEIPT_SCHEMA_INVALID: Final = "recall_receipt_schema_invalid"
    EVIDENCE_COUNT_MISMATCH: Final = "recall_receipt_evidence_count_mismatch"
    MEMORY_BINDING_INVALID: Final = "recall_receipt_memory_binding_invalid"
    EPISTEMIC_BINDING_INVALID: Final = "recall_receipt_epistemic_binding_invalid"
    CRYPTOGRAPHIC_BINDING_INVALID: Final = "recall_receipt_cryptographic_binding_invalid"
    EVENT_RECEIPT_SCHEMA_INVALID: Final = "recall_event_receipt_schema_invalid"
    EVENT_BODY_INVALID: Final = "recall_event_body_invalid"
    EVENT_PREVIOUS_HASH_INVALID: Final = "recall_event_previous_hash_invalid"
    EVENT_BINDING_INVALID: Final = "recall_event_binding_invalid"
    EVENT_SIGNATURE_INVALID: Final = "recall_event_signature_invalid"
    # -- aimos's own: the caller's trust anchor --
    MASTER_MISMATCH: Final = "recall_trust_anchor_master_mismatch"
    # -- corpus --
    CORPUS_SCHEMA_INVALID: Final = "recall_corpus_schema_invalid"
    CORPUS_INTENDED_N_INVALID: Final = "recall_corpus_intended_n_invalid"
    CORPUS_MEMBER_INVALID: Final = "recall_corpus_member_invalid"
    CORPUS_ROOT_MISMATCH: Final = "recall_corpus_root_mismatch"
    # -- the verifier itself failed (never caused by input alone) --
    VERIFIER_INTERNAL_ERROR: Final = "verifier_internal_error"


INDETERMINATE_REASONS: Final = frozenset({R.MANDATORY_EVIDENCE_MISSING, R.VERIFIER_INTERNAL_ERROR})


# --- verdicts -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class RecallEvidenceVerdict:
    """The verdict on one recall-evidence bundle. Hashes are set when the checks reached them."""

    verdict: Verdict
    primary_reason: str | None
    detail: str | None = field(default=None, compare=False)
    bundle_sha256: str | None = None
    command_hash: str | None = None
    outer_request_hash: str | None = None
    merkle_root: str | None = None
    memories: int | None = None
    recall_leaves: int | None = None
    signatures_verified: int = 0

    @property
    def ok(self) -> bool:
        return self.verdict == "valid"

    def as_dict(self) -> dict[str, Any]:
        return {
            "schema": RECALL_SCHEMA,
            "verdict": self.verdict,
            "primary_reason": self.primary_reason,
            "detail": self.detail,
            "bundle_sha256": self.bundle_sha256,
            "command_hash": self.command_hash,
            "outer_request_hash": self.outer_request_hash,
            "merkle_root": self.merkle_root,
            "counts": {"memories": self.memories, "recall_leaves": self.recall_leaves},
            "signatures_verified": self.signatures_verified,
        }


@dataclass(frozen=True)
class CorpusMemberVerdict:
    ordinal: int
    bundle_id: str
    verdict: Verdict
    primary_reason: str | None


@dataclass(frozen=True)
class RecallCorpusVerdict:
    """The verdict on a recall corpus; ``members`` holds every member verified before a failure."""

    verdict: Verdict
    primary_reason: str | None
    detail: str | None = field(default=None, compare=False)
    intended_n: int | None = None
    observed_n: int | None = None
    corpus_root: str | None = None
    members: tuple[CorpusMemberVerdict, ...] = ()

    @property
    def ok(self) -> bool:
        return self.verdict == "valid"

    def as_dict(self) -> dict[str, Any]:
        return {
            "schema": CORPUS_SCHEMA,
            "verdict": self.verdict,
            "primary_reason": self.primary_reason,
            "detail": self.detail,
            "intended_n": self.intended_n,
            "observed_n": self.observed_n,
            "corpus_root": self.corpus_root,
            "members": [
                {
                    "ordinal": m.ordinal,
                    "bundle_id": m.bundle_id,
                    "verdict": m.verdict,
                    "primary_reason": m.primary_reason,
                }
                for m in self.members
            ],
        }


class _Fail(Exception):
    """A check failed with a reason of the closed vocabulary."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail


class _Indeterminate(Exception):
    """Mandatory evidence is absent: nothing is proved either way."""

    def __init__(self, detail: str) -> None:
        super().__init__(R.MANDATORY_EVIDENCE_MISSING)
        self.detail = detail


def _fail(reason: str, detail: str) -> NoReturn:
    raise _Fail(reason, detail)


# --- value predicates (never raise) -------------------------------------------------------------
def _is_dict(value: object) -> TypeGuard[dict[str, Any]]:
    return isinstance(value, dict)


def _is_text(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and value != ""


def _is_int(value: object) -> TypeGuard[int]:
    """A JSON integer in the safe range (booleans are not integers)."""
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= MAX_SAFE_INTEGER


def _fields_are(value: object, fields: frozenset[str]) -> TypeGuard[dict[str, Any]]:
    return isinstance(value, dict) and set(value) == fields


def _same(left: object, right: object) -> bool:
    """Equality of JSON values by canonical JSON (``true`` never equals ``1``)."""
    if isinstance(left, str) or isinstance(right, str):
        return isinstance(left, str) and isinstance(right, str) and left == right
    try:
        return canonical_json(left) == canonical_json(right)
    except (AimosError, RecursionError, TypeError, ValueError):
        return False


def _same_object(value: object, expected: Mapping[str, object]) -> bool:
    return (
        _is_dict(value)
        and set(value) == set(expected)
        and all(_same(value[k], v) for k, v in expected.items())
    )


def _sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _canonical_sha256_hex(value: object) -> str:
    return _sha256_hex(canonical_json(value))


def _b64u(value: object) -> bytes | None:
    """Canonical unpadded base64url of a non-empty string, else None."""
    if not _is_text(value):
        return None
    try:
        return b64u_decode(value)
    except AimosError:
        return None


def _ed25519_key(value: object) -> bool:
    der = _b64u(value)
    if der is None:
        return False
    try:
        raw_from_spki(der)
    except AimosError:
        return False
    return True


def _metadata(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The signed body's metadata object (absent reads as empty, as the reference reads it)."""
    meta = body.get("metadata", {})
    return meta if _is_dict(meta) else None


# --- one verification run ----------------------------------------------------------------------
@dataclass
class _Trusted:
    body: dict[str, Any]
    fingerprint: str
    under_master: bool


class _RecallRun:
    def __init__(self, bundle: dict[str, Any]) -> None:
        self.bundle = bundle
        self.signatures = 0
        self.request_under_master = False
        self.command_hash: str | None = None
        self.outer_hash: str | None = None
        self.root: str | None = None
        self.leaves: int | None = None

    # -- envelope and anchors --
    def envelope(self) -> None:
        b = self.bundle
        if set(b) != RECALL_FIELDS:
            extra, missing = sorted(set(b) - RECALL_FIELDS), sorted(RECALL_FIELDS - set(b))
            _fail(R.BUNDLE_SCHEMA_INVALID, f"top-level fields: unknown {extra}, missing {missing}")
        if not _same_object(b["format"], RECALL_FORMAT):
            _fail(R.BUNDLE_SCHEMA_INVALID, f"format must be exactly {dict(RECALL_FORMAT)}")
        if not _is_text(b["bundle_id"]) or not _is_text(b["company_id"]):
            _fail(R.BUNDLE_SCHEMA_INVALID, "bundle_id and company_id must be non-empty strings")
        if not isinstance(b["memories"], list):
            _fail(R.BUNDLE_SCHEMA_INVALID, "memories is not a list")

    def trust_anchors(self) -> None:
        anchors = self.bundle["trust_anchors"]
        if not _fields_are(anchors, TRUST_ANCHOR_FIELDS):
            _fail(R.TRUST_ANCHOR_SCHEMA_INVALID, "trust_anchors must be exactly {master, certificates}")
        master = anchors["master"]
        if master is not None:
            if not _fields_are(master, MASTER_ANCHOR_FIELDS):
                _fail(
                    R.TRUST_ANCHOR_SCHEMA_INVALID, "the master anchor must be {public_key_b64u, fingerprint}"
                )
            if not is_hex64(master["fingerprint"]):
                _fail(R.TRUST_ANCHOR_SCHEMA_INVALID, "the master fingerprint is not 64 lowercase hex")
            key = master["public_key_b64u"]
            if not _is_text(key) or len(key) % 4 == 1:
                _fail(R.MASTER_KEY_INVALID, "the master public key is not base64url")
            der = _b64u(key)
            if der is None or fingerprint_of_der(der) != master["fingerprint"]:
                _fail(R.TRUST_ANCHOR_SCHEMA_INVALID, "the master fingerprint is not H(public key DER)")
        certificates = anchors["certificates"]
        if not isinstance(certificates, list) or len(certificates) > MAX_CERTIFICATE_ANCHORS:
            _fail(
                R.TRUST_ANCHOR_SCHEMA_INVALID,
                f"certificates must be a list of at most {MAX_CERTIFICATE_ANCHORS}",
            )
        seen: set[str] = set()
        for index, anchor in enumerate(certificates):
            where = f"trust_anchors.certificates[{index}]"
            if not _fields_are(anchor, CERTIFICATE_ANCHOR_FIELDS):
                _fail(
                    R.TRUST_ANCHOR_SCHEMA_INVALID, f"{where} must be {{certificate_sha256, public_key_b64u}}"
                )
            digest = anchor["certificate_sha256"]
            if not is_hex64(digest) or digest in seen:
                _fail(R.TRUST_ANCHOR_SCHEMA_INVALID, f"{where}: certificate_sha256 is malformed or repeated")
            if not _ed25519_key(anchor["public_key_b64u"]):
                _fail(R.PUBLIC_KEY_INVALID, f"{where}: public_key_b64u is not an Ed25519 SPKI key")
            seen.add(digest)

    def certificate(self, text: object, signed_at: object, what: str) -> _Trusted:
        """The certificate ``text`` checked against the bundle's anchors at time ``signed_at``."""
        cert = _read_certificate(text, what)
        body = cert.body
        fingerprint = _sha256_hex(cert.text.encode("utf-8"))
        anchors = self.bundle["trust_anchors"]
        authority: str | None = None
        under_master = False
        if _same(body["issuer"], body["agent_id"]):
            for anchor in anchors["certificates"]:
                if anchor["certificate_sha256"] == fingerprint and _same(
                    anchor["public_key_b64u"], body["pubkey"]
                ):
                    authority = anchor["public_key_b64u"]
                    break
        else:
            master = anchors["master"]
            if master is not None and (
                body["issuer"] == MASTER_ISSUER or _same(body["issuer"], master["fingerprint"])
            ):
                authority, under_master = master["public_key_b64u"], True
        if authority is None:
            _fail(R.TRUST_ANCHOR_MISSING, f"the {what} certificate chains to no trust anchor of the bundle")
        try:
            verify_certificate(cert, authority, accepted_issuers=(body["issuer"],))
        except AimosError:
            _fail(R.CERT_SIG_INVALID, f"the {what} certificate's issuer signature does not verify")
        self.signatures += 1
        if not _is_int(signed_at) or not cert.valid_from <= signed_at <= cert.valid_until:
            _fail(R.CERT_EPOCH_INVALID, f"the {what} was not signed within its certificate's validity")
        return _Trusted(body, fingerprint, under_master)

    # -- the request and the command --
    def request(self) -> dict[str, Any]:
        request = self.bundle["request"]
        if not _fields_are(request, REQUEST_FIELDS) or not _is_dict(request["body"]):
            _fail(
                R.REQUEST_SCHEMA_INVALID,
                "request must be exactly {body (an object), method, path, nonce, "
                "ts_signed, signature, certificate}",
            )
        body: dict[str, Any] = request["body"]
        trusted = self.certificate(request["certificate"], request["ts_signed"], "request")
        self.request_under_master = trusted.under_master
        if not _same(trusted.body["agent_id"], body.get("agent_id")):
            _fail(R.REQUEST_IDENTITY_INVALID, "the request certificate is not the body's agent_id")
        nonce, ts = request["nonce"], request["ts_signed"]
        if (
            request["method"] != RECALL_METHOD
            or request["path"] != RECALL_PATH
            or not _same(body.get("ts_signed"), ts)
            or not _is_text(nonce)
        ):
            _fail(
                R.REQUEST_CONTEXT_INVALID,
                f"the request must be {RECALL_METHOD} {RECALL_PATH} with the body's ts_signed and a nonce",
            )
        signature = _b64u(request["signature"])
        message = request_message(body, RECALL_METHOD, RECALL_PATH, nonce, ts)
        pubkey = trusted.body["pubkey"]
        if signature is None or not isinstance(pubkey, str) or not verify(pubkey, message, signature):
            _fail(R.REQUEST_SIGNATURE_INVALID, "the agent's request signature does not verify")
        self.signatures += 1
        return _recall_command(body)

    # -- the receipt --
    def receipt(self, command: Mapping[str, Any]) -> None:
        if not _same(command["company_id"], self.bundle["company_id"]):
            _fail(R.SCOPE_BINDING_INVALID, "the recall command's company is not the bundle's")
        receipt = self.bundle["recall_receipt"]
        if not _is_dict(receipt) or not isinstance(receipt.get("evidence"), list):
            raise _Indeterminate("the recall receipt or its evidence list is absent")
        if not RECEIPT_REQUIRED_FIELDS <= set(receipt) <= RECEIPT_REQUIRED_FIELDS | RECEIPT_OPTIONAL_FIELDS:
            _fail(R.RECEIPT_SCHEMA_INVALID, "recall_receipt has missing or unknown fields")
        evidence: list[Any] = receipt["evidence"]
        memories: list[Any] = self.bundle["memories"]
        if len(evidence) != len(memories):
            _fail(R.EVIDENCE_COUNT_MISMATCH, f"{len(evidence)} evidence entries for {len(memories)} memories")
        for index, memory in enumerate(memories):
            _memory_binding(index, memory, evidence[index], command)
        entries = evidence
        if receipt.get("merkle_schema") is not None:
            entries = _epistemic_entries(receipt)
        command_hash = _canonical_sha256_hex(dict(command))
        outer_hash = _canonical_sha256_hex(self.bundle["request"]["body"])
        root = merkle_root(entries).hex()
        if not (
            _same(receipt["command_hash"], command_hash)
            and _same(receipt["outer_request_hash"], outer_hash)
            and _same(receipt["merkle_root"], root)
            and is_hex64(receipt["authority_mutation_hash"])
            and is_hex64(receipt["request_receipt_mutation_hash"])
        ):
            _fail(
                R.CRYPTOGRAPHIC_BINDING_INVALID,
                "the receipt's command hash, outer request hash, Merkle root "
                "or mutation hashes do not match the request and evidence",
            )
        self.command_hash, self.outer_hash, self.root, self.leaves = (
            command_hash,
            outer_hash,
            root,
            len(entries),
        )

    def event(self) -> None:
        receipt: dict[str, Any] = self.bundle["recall_receipt"]
        event = receipt.get("event_receipt")
        if event is None:
            raise _Indeterminate("the housekeeper's event receipt is absent")
        if not _fields_are(event, EVENT_RECEIPT_FIELDS):
            _fail(R.EVENT_RECEIPT_SCHEMA_INVALID, "event_receipt has missing or unknown fields")
        trusted = self.certificate(event["signer_certificate"], event["ts_signed"], "event receipt")
        body = event["signed_body"]
        if not _is_dict(body):
            _fail(R.EVENT_BODY_INVALID, "the event's signed_body is not an object")
        if not is_hex64(event["prev_mutation_hash"]):
            _fail(R.EVENT_PREVIOUS_HASH_INVALID, "the event's prev_mutation_hash is not 64 lowercase hex")
        ts: int = event["ts_signed"]  # an integer: the certificate epoch check passed
        nonce = str(event["nonce"])
        content = hashlib.sha256(canonical_json(body)).digest()
        mutation = commitments.event_link_hash(bytes.fromhex(event["prev_mutation_hash"]), content, nonce, ts)
        meta = _metadata(body)
        evidence = receipt["evidence"]
        bound = (
            event["proof_required"] is True
            and _same(event["ledger_version"], LEDGER_VERSION)
            and _same(body.get("ledger_version"), LEDGER_VERSION)
            and _same(event["event_id"], body.get("event_id"))
            and _same(event["signer_agent_id"], body.get("signer_agent_id"))
            and _same(event["signer_valid_from"], body.get("signer_valid_from"))
            and _same(event["ts_signed"], body.get("ts_signed"))
            and _same(event["cert_fingerprint"], trusted.fingerprint)
            and _same(body.get("cert_fingerprint"), trusted.fingerprint)
            and _same(event["content_hash"], content.hex())
            and _same(event["mutation_hash"], mutation.hex())
            and _same(event["prev_mutation_hash"], body.get("prev_mutation_hash"))
            and _same(body.get("company_id"), self.bundle["company_id"])
            and _same(body.get("operation"), RECALL_OPERATION)
            and _same(body.get("key"), self.command_hash)
            and meta is not None
            and _same(meta.get("command_hash"), self.command_hash)
            and _same(meta.get("outer_request_hash"), self.outer_hash)
            and _same(meta.get("merkle_root"), self.root)
            and _same(meta.get("result_count"), len(evidence))
            and _same(meta.get("evidence"), evidence)
        )
        if not bound:
            _fail(R.EVENT_BINDING_INVALID, "the event's hashes or signed body do not bind this receipt")
        signature = _b64u(event["signature"])
        pubkey = trusted.body["pubkey"]
        message = payload_message(body, nonce, ts)
        if signature is None or not isinstance(pubkey, str) or not verify(pubkey, message, signature):
            _fail(R.EVENT_SIGNATURE_INVALID, "the housekeeper's event signature does not verify")
        self.signatures += 1

    def pinned(self, expected_master_fingerprint: str | None) -> None:
        """aimos's own last check: the caller's master, not merely the bundle's (module doc)."""
        if expected_master_fingerprint is None:
            return
        master = self.bundle["trust_anchors"]["master"]
        expected = (
            expected_master_fingerprint.strip().lower()
            if isinstance(expected_master_fingerprint, str)
            else None
        )
        if master is None or master["fingerprint"] != expected:
            _fail(R.MASTER_MISMATCH, "the bundle's master anchor is not the expected master fingerprint")
        if not self.request_under_master:
            _fail(R.MASTER_MISMATCH, "the request certificate is not issued by the expected master")


def _read_certificate(text: object, what: str) -> Certificate:
    """base64url canonical JSON ``{body, sig}`` with exactly the eight body fields."""
    raw = _b64u(text)
    try:
        if raw is None:
            raise ValueError("not base64url")
        outer = strict_json_loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        _fail(R.CERT_MALFORMED, f"the {what} certificate is not base64url JSON")
    if (
        not _fields_are(outer, frozenset({"body", "sig"}))
        or not _fields_are(outer["body"], _CERT_FIELDS)
        or not isinstance(outer["sig"], str)
    ):
        _fail(R.CERT_SCHEMA, f"the {what} certificate is not {{body, sig}} with the eight body fields")
    try:
        canonical = canonical_json(outer) == raw
    except CanonicalJSONError as exc:
        _fail(exc.reason or R.CANONICAL_INVALID, f"the {what} certificate: {exc.message}")
    if not canonical:
        _fail(R.CERT_SCHEMA, f"the {what} certificate's JSON is not canonical")
    assert isinstance(text, str)  # _b64u accepted it
    try:
        return parse_certificate(text)
    except AimosError:
        _fail(R.CERT_SCHEMA, f"the {what} certificate needs v 1, integer times and a non-empty window")


def _bounded_int(value: object, default: int, low: int, high: int) -> int:
    number = default if value is None else value
    if not _is_int(number) or not low <= number <= high:
        _fail(R.INTEGER_INVALID, f"{value!r} is not an integer in {low}..{high}")
    return number


def _recall_command(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The recall command the request body names, normalized as the reference server does; its
    canonical hash is the receipt's ``command_hash``. Raises _Fail on a body it would refuse."""
    for name in raw:
        if name not in COMMAND_FIELDS:
            _fail(f"{R.UNKNOWN_FIELD}:{name}", f"the request body has the unknown field {name!r}")
    # str() of the value, as the reference Python verifier computes it (None reads as "None")
    query = str(raw.get("query", raw.get("q", ""))).strip()
    key = None if raw.get("key") is None else str(raw["key"]).strip()
    memory_id = None if raw.get("memory_id") is None else str(raw["memory_id"]).strip()
    if not query and not key and not memory_id:
        _fail(R.QUERY_OR_IDENTIFIER_REQUIRED, "the request names no query, key or memory id")
    if memory_id and not _MEMORY_UUID.fullmatch(memory_id):
        _fail(R.MEMORY_ID_INVALID, "the request's memory_id is not a UUID")
    command = dict(raw)
    command.update(
        {
            "query": query,
            "q": query,
            "key": key,
            "memory_id": memory_id,
            "company_id": DEFAULT_COMPANY if raw.get("company_id") is None else str(raw["company_id"]),
            "agent_id": None if raw.get("agent_id") is None else str(raw["agent_id"]),
            "limit": _bounded_int(raw.get("limit"), LIMIT_DEFAULT, LIMIT_MIN, LIMIT_MAX),
            "clearance_level": None
            if raw.get("clearance_level") is None
            else _bounded_int(raw["clearance_level"], 0, CLEARANCE_MIN, CLEARANCE_MAX),
            "max_hops": None
            if raw.get("max_hops") is None
            else _bounded_int(raw["max_hops"], 0, MAX_HOPS_MIN, MAX_HOPS_MAX),
        }
    )
    return command


def _memory_binding(index: int, memory: object, evidence: object, command: Mapping[str, Any]) -> None:
    reason = f"{R.MEMORY_BINDING_INVALID}:{index}"
    where = f"memories[{index}] / recall_receipt.evidence[{index}]"
    if (
        not _fields_are(memory, MEMORY_FIELDS)
        or not _fields_are(memory["provenance_proof"], frozenset(PROOF_HASH_FIELDS))
        or not _fields_are(evidence, EVIDENCE_FIELDS)
    ):
        _fail(reason, f"{where}: missing or unknown fields")
    proof = memory["provenance_proof"]
    type_filter = command.get("memory_type_filter")
    if not (
        _same(evidence["ordinal"], index)
        and _same(evidence["memory_id"], memory["id"])
        and _same(memory["source"], command.get("source_filter"))
        and (type_filter is None or _same(memory["memory_type"], type_filter))
    ):
        _fail(reason, f"{where}: ordinal, memory id, source or memory type does not match the request")
    for name in PROOF_HASH_FIELDS:
        if not is_hex64(evidence[name]) or not _same(evidence[name], proof[name]):
            _fail(
                reason, f"{where}: {name} differs from the memory's provenance proof or is not lowercase hex"
            )


def _epistemic_entries(receipt: Mapping[str, Any]) -> list[Any]:
    decision = receipt.get("epistemic_decision_sha256")
    entries = receipt.get("merkle_entries")
    evidence = receipt["evidence"]
    if not (
        receipt.get("merkle_schema") == EPISTEMIC_MERKLE_SCHEMA
        and is_hex64(decision)
        and isinstance(entries, list)
        and len(entries) == len(evidence) + 1
        and _same(entries[0], {"entry_type": EPISTEMIC_ENTRY_TYPE, "decision_sha256": decision})
        and _same(entries[1:], evidence)
    ):
        _fail(R.EPISTEMIC_BINDING_INVALID, "merkle_entries must be the epistemic decision, then the evidence")
    return entries


# --- entry points -------------------------------------------------------------------------------
def _canonical_failure(document: Any) -> tuple[str | None, _Fail | None]:
    """The document's canonical hash, or the canonical-JSON failure."""
    try:
        return _canonical_sha256_hex(document), None
    except CanonicalJSONError as exc:
        return None, _Fail(exc.reason or R.CANONICAL_INVALID, exc.message)


def _check_recall(
    bundle: Any, bundle_sha256: str, expected_master_fingerprint: str | None
) -> RecallEvidenceVerdict:
    if not _is_dict(bundle):
        return RecallEvidenceVerdict(
            "invalid", R.BUNDLE_SCHEMA_INVALID, "the bundle is not a JSON object", bundle_sha256=bundle_sha256
        )
    run = _RecallRun(bundle)
    try:
        run.envelope()
        run.trust_anchors()
        command = run.request()
        run.receipt(command)
        run.event()
        run.pinned(expected_master_fingerprint)
    except _Indeterminate as missing:
        try:
            run.pinned(expected_master_fingerprint)
        except _Fail as exc:
            return _recall_verdict(run, "invalid", exc.reason, exc.detail, bundle_sha256)
        return _recall_verdict(
            run, "indeterminate", R.MANDATORY_EVIDENCE_MISSING, missing.detail, bundle_sha256
        )
    except _Fail as exc:
        return _recall_verdict(run, "invalid", exc.reason, exc.detail, bundle_sha256)
    return _recall_verdict(run, "valid", None, None, bundle_sha256)


def _recall_verdict(
    run: _RecallRun, verdict: Verdict, reason: str | None, detail: str | None, bundle_sha256: str
) -> RecallEvidenceVerdict:
    memories = run.bundle.get("memories")
    return RecallEvidenceVerdict(
        verdict,
        reason,
        detail,
        bundle_sha256=bundle_sha256,
        command_hash=run.command_hash,
        outer_request_hash=run.outer_hash,
        merkle_root=run.root,
        memories=len(memories) if isinstance(memories, list) else None,
        recall_leaves=run.leaves,
        signatures_verified=run.signatures,
    )


def verify_recall_evidence(
    bundle: Any, *, expected_master_fingerprint: str | None = None
) -> RecallEvidenceVerdict:
    """Verify one parsed ``hom.aimos.mutmem-recall-evidence/v1`` bundle. Never raises.

    Without ``expected_master_fingerprint`` the bundle's own anchors are trusted, as the reference
    does; with it, they must name that master (module doc)."""
    try:
        bundle_sha256, failure = _canonical_failure(bundle)
        if failure is not None or bundle_sha256 is None:
            assert failure is not None
            return RecallEvidenceVerdict("invalid", failure.reason, failure.detail)
        return _check_recall(bundle, bundle_sha256, expected_master_fingerprint)
    except Exception as exc:  # a verifier defect, never a property of the input: say so, do not guess
        return RecallEvidenceVerdict(
            "indeterminate", R.VERIFIER_INTERNAL_ERROR, f"{type(exc).__name__}: {exc}"
        )


def verify_recall_corpus(
    corpus: Any, *, expected_master_fingerprint: str | None = None
) -> RecallCorpusVerdict:
    """Verify one parsed ``hom.aimos.mutmem-recall-corpus/v1`` corpus and each member. Never raises."""
    try:
        _, failure = _canonical_failure(corpus)
        if failure is not None:
            return RecallCorpusVerdict("invalid", failure.reason, failure.detail)
        return _check_corpus(corpus, expected_master_fingerprint)
    except Exception as exc:  # a verifier defect (see verify_recall_evidence)
        return RecallCorpusVerdict("indeterminate", R.VERIFIER_INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")


def _check_corpus(corpus: Any, expected_master_fingerprint: str | None) -> RecallCorpusVerdict:
    if not _fields_are(corpus, CORPUS_FIELDS):
        return RecallCorpusVerdict(
            "invalid",
            R.CORPUS_SCHEMA_INVALID,
            "a corpus is exactly {format, intended_n, members, corpus_root}",
        )
    intended_n, members = corpus["intended_n"], corpus["members"]
    observed_n = len(members) if isinstance(members, list) else None
    if (
        not _same_object(corpus["format"], CORPUS_FORMAT)
        or not _is_int(intended_n)
        or intended_n < 1
        or not isinstance(members, list)
        or len(members) != intended_n
    ):
        return RecallCorpusVerdict(
            "invalid",
            R.CORPUS_INTENDED_N_INVALID,
            f"format must be exactly {dict(CORPUS_FORMAT)} and members must number intended_n >= 1",
            intended_n=intended_n if _is_int(intended_n) else None,
            observed_n=observed_n,
        )
    verdicts: list[CorpusMemberVerdict] = []
    summaries: list[dict[str, Any]] = []
    seen: set[str] = set()
    for ordinal, member in enumerate(members):
        problem = _member_problem(ordinal, member, seen)
        if problem is not None:
            return RecallCorpusVerdict(
                "invalid",
                R.CORPUS_MEMBER_INVALID,
                f"members[{ordinal}]: {problem}",
                intended_n=intended_n,
                observed_n=observed_n,
                members=tuple(verdicts),
            )
        bundle_id: str = member["bundle_id"]
        seen.add(bundle_id)
        result = _check_recall(member["bundle"], member["bundle_sha256"], expected_master_fingerprint)
        verdicts.append(CorpusMemberVerdict(ordinal, bundle_id, result.verdict, result.primary_reason))
        summaries.append(
            {"ordinal": ordinal, "bundle_id": bundle_id, "bundle_sha256": member["bundle_sha256"]}
        )
    root = commitments.recall_corpus_root(intended_n, summaries).hex()
    if not _same(corpus["corpus_root"], root):
        return RecallCorpusVerdict(
            "invalid",
            R.CORPUS_ROOT_MISMATCH,
            "corpus_root is not the root of the members",
            intended_n=intended_n,
            observed_n=observed_n,
            corpus_root=root,
            members=tuple(verdicts),
        )
    primary = next((v for v in verdicts if v.verdict == "invalid"), None) or next(
        (v for v in verdicts if v.verdict == "indeterminate"), None
    )
    return RecallCorpusVerdict(
        "valid" if primary is None else primary.verdict,
        None if primary is None else primary.primary_reason,
        None if primary is None else f"member {primary.ordinal} ({primary.bundle_id}) is {primary.verdict}",
        intended_n=intended_n,
        observed_n=observed_n,
        corpus_root=root,
        members=tuple(verdicts),
    )


def _member_problem(ordinal: int, member: object, seen: set[str]) -> str | None:
    if not _fields_are(member, CORPUS_MEMBER_FIELDS):
        return "a member is exactly {ordinal, bundle_id, bundle_sha256, bundle}"
    bundle, bundle_id = member["bundle"], member["bundle_id"]
    if not _same(member["ordinal"], ordinal):
        return f"ordinal is not {ordinal}"
    if not _is_dict(bundle) or not _is_text(bundle_id) or not _same(bundle_id, bundle.get("bundle_id")):
        return "bundle_id is not the member bundle's bundle_id"
    if bundle_id in seen:
        return f"bundle_id {bundle_id!r} repeats"
    if not is_hex64(member["bundle_sha256"]) or member["bundle_sha256"] != _canonical_sha256_hex(bundle):
        return "bundle_sha256 is not H(canonicalJSON(bundle))"
    return None


def document_schema(document: Any) -> str | None:
    """``format.schema`` of a parsed document, when it has one."""
    fmt = document.get("format") if _is_dict(document) else None
    schema = fmt.get("schema") if _is_dict(fmt) else None
    return schema if isinstance(schema, str) else None


def verify_v1_recall_document(
    document: Any, *, expected_master_fingerprint: str | None = None, corpus: bool | None = None
) -> RecallEvidenceVerdict | RecallCorpusVerdict:
    """A corpus when ``corpus`` says so or, when it is None, when ``format.schema`` says so; else
    recall evidence."""
    if corpus if corpus is not None else document_schema(document) == CORPUS_SCHEMA:
        return verify_recall_corpus(document, expected_master_fingerprint=expected_master_fingerprint)
    return verify_recall_evidence(document, expected_master_fingerprint=expected_master_fingerprint)


def verify_v1_recall_bytes(
    data: bytes | str, *, expected_master_fingerprint: str | None = None
) -> RecallEvidenceVerdict | RecallCorpusVerdict:
    """Parse strictly (no duplicate keys, no NaN, depth-safe) and verify evidence or a corpus."""
    try:
        document = load_bundle(data)
    except BundleParseError as exc:
        return RecallEvidenceVerdict("invalid", exc.reason, exc.detail)
    return verify_v1_recall_document(document, expected_master_fingerprint=expected_master_fingerprint)


__all__ = [
    "CORPUS_SCHEMA",
    "INDETERMINATE_REASONS",
    "RECALL_SCHEMA",
    "CorpusMemberVerdict",
    "R",
    "RecallCorpusVerdict",
    "RecallEvidenceVerdict",
    "document_schema",
    "verify_recall_corpus",
    "verify_recall_evidence",
    "verify_v1_recall_bytes",
    "verify_v1_recall_document",
]
