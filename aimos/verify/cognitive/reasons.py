"""The closed vocabulary of cognitive-evidence verification and the bundle's fixed words.

Atomic reasons are the constants of :class:`R`; composite reasons (a prefix and an atomic reason)
are the values of the ``_PROVENANCE``, ``_LEDGER_CERT``, ``_LEDGER_PROOF`` and ``_BASELINE_EVENT``
tables. The names follow the HOM-AIMOS reference verifier.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

from aimos.verify import kit
from aimos.vocabulary import COGNITIVE_EVIDENCE_SCHEMA as SCHEMA
from aimos.vocabulary import HOUSEKEEPER as HOUSEKEEPER

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
MAX_BUNDLE_BYTES: Final = kit.MAX_BUNDLE_BYTES

BASELINE_EVENT_SKEW: Final = 5  # seconds between a baseline's observation and its signed event
DEFAULT_WEIGHT_MILLI: Final = 1000

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
    BUNDLE_JSON_MALFORMED: Final = kit.BUNDLE_JSON_MALFORMED
    BUNDLE_SIZE_LIMIT: Final = kit.BUNDLE_SIZE_LIMIT
    JSON_DUPLICATE_KEY: Final = kit.JSON_DUPLICATE_KEY
    CANONICAL_DEPTH_LIMIT: Final = kit.CANONICAL_DEPTH_LIMIT
    CANONICAL_UNSAFE_INTEGER: Final = "canonical_json_unsafe_integer"
    CANONICAL_NON_FINITE: Final = kit.CANONICAL_NON_FINITE
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
    # a corrected version more trusting than the label it owes the version it corrects
    CORRECTION_LIFTED_JUDGMENT: Final = "correction_lifted_judgment"
    # a classifier row after a person's judgment on the same memory
    CLASSIFIER_OVERRULED_JUDGMENT: Final = "classifier_overruled_judgment"
    # -- the weight rules replayed over the signed outcome events, aimos's own --
    VALENCE_REPLAY_MISMATCH: Final = "valence_replay_mismatch"
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
    # a memory a verified event names (its save, outcome, label, receipt...) is not in the bundle
    MEMORY_MISSING: Final = "cognitive_evidence_memory_missing"
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
#: The canonical-JSON failures reported by their own name (any other is canonical_json_invalid).
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
#: Reasons after which no proof records exist (the envelope, identity or memory list is unusable).
FATAL_REASONS: Final = _CANONICAL_REASONS | frozenset(
    {
        R.BUNDLE_JSON_MALFORMED,
        R.BUNDLE_SIZE_LIMIT,
        R.JSON_DUPLICATE_KEY,
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
