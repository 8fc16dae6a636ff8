"""The fixed words of V1 recall evidence and corpora: formats, field sets, the recall command's
fields and bounds, and the closed vocabulary of reasons (:class:`R`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from aimos import vocabulary
from aimos.verify import kit
from aimos.vocabulary import DEFAULT_COMPANY as DEFAULT_COMPANY
from aimos.vocabulary import V1_RECALL_CORPUS_SCHEMA as CORPUS_SCHEMA
from aimos.vocabulary import V1_RECALL_EVIDENCE_SCHEMA as RECALL_SCHEMA

RECALL_FORMAT: Final[Mapping[str, object]] = {
    "schema": RECALL_SCHEMA,
    "version": 1,
    "authority": "descriptive_only",
    "canonicalization": vocabulary.CANONICAL_JSON_PROFILE,
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
LIMIT_DEFAULT, LIMIT_MIN, LIMIT_MAX = vocabulary.RECALL_DEFAULT_LIMIT, 1, vocabulary.RECALL_MAX_LIMIT
CLEARANCE_MIN, CLEARANCE_MAX = vocabulary.CLEARANCE_MIN, vocabulary.CLEARANCE_MAX
MAX_HOPS_MIN, MAX_HOPS_MAX = 1, 4


class R:
    """The closed vocabulary. ``MEMORY_BINDING_INVALID`` and ``UNKNOWN_FIELD`` are reported with a
    suffix: ``:<memory index>`` and ``:<field name>``."""

    # -- the document as JSON (also from the kit's strict loader when reading bytes) --
    CANONICAL_DEPTH_LIMIT: Final = kit.CANONICAL_DEPTH_LIMIT
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
