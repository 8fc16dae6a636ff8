"""The V2 mutation verifier's closed vocabulary and profile: its reasons, the bundle and witness
formats, and the protocol words its checks compare (the checks are in mutation_structure,
mutation_witness and mutation_proofs; the entry point is aimos.verify.v2_mutation)."""

from __future__ import annotations

from typing import Any, Final

from aimos.crypto import commitments
from aimos.verify.v2_recall import RECALL_REASONS
from aimos.vocabulary import CANONICAL_JSON_PROFILE as CANONICALIZATION
from aimos.vocabulary import HOUSEKEEPER as HOUSEKEEPER
from aimos.vocabulary import TARGET_OCCURRENCE_OBSERVATION as OCCURRENCE_OBSERVATION
from aimos.vocabulary import TARGET_PRINCIPAL_STATE as PRINCIPAL_STATE
from aimos.vocabulary import TERMINAL_AUTHORIZED_TRANSITION as AUTHORIZED_TRANSITION
from aimos.vocabulary import TERMINAL_SIGNED_NOOP as SIGNED_NOOP
from aimos.vocabulary import V2_MUTATION_BUNDLE_SCHEMA as BUNDLE_SCHEMA
from aimos.vocabulary import V2_MUTATION_OUTCOME_SCHEMA as OUTCOME_SCHEMA
from aimos.vocabulary import V2_MUTATION_WITNESS_SCHEMA as WITNESS_SCHEMA

# --- vocabulary ---------------------------------------------------------------------------------
BUNDLE_COMMITMENT_INVALID: Final = "MUTATION_BUNDLE_COMMITMENT_INVALID"
OUTCOME_SCHEMA_INVALID: Final = "MUTATION_OUTCOME_SCHEMA_INVALID"
RECALL_BINDING_INVALID: Final = "MUTATION_RECALL_BINDING_INVALID"
OUTCOME_EVENT_INVALID: Final = "MUTATION_OUTCOME_EVENT_INVALID"
VALENCE_BINDING_INVALID: Final = "MUTATION_VALENCE_BINDING_INVALID"
TERMINAL_KIND_INVALID: Final = "MUTATION_TERMINAL_KIND_INVALID"
OBSERVATION_TERMINAL_INVALID: Final = "MUTATION_OBSERVATION_TERMINAL_INVALID"
NOOP_TERMINAL_INVALID: Final = "MUTATION_NOOP_TERMINAL_INVALID"
TRANSITION_PROVENANCE_INVALID: Final = "MUTATION_TRANSITION_PROVENANCE_INVALID"
PROJECTION_BINDING_INVALID: Final = "MUTATION_PROJECTION_BINDING_INVALID"
PROJECTION_HASH_INVALID: Final = "MUTATION_PROJECTION_HASH_INVALID"
TRANSITION_HASH_INVALID: Final = "MUTATION_TRANSITION_HASH_INVALID"

WITNESS_REQUIRED: Final = "MUTATION_CRYPTOGRAPHIC_WITNESS_REQUIRED"
WITNESS_COMMITMENT_INVALID: Final = "MUTATION_CRYPTOGRAPHIC_WITNESS_COMMITMENT_INVALID"
WITNESS_SCOPE_INVALID: Final = "MUTATION_CRYPTOGRAPHIC_WITNESS_SCOPE_INVALID"
OUTCOME_EVENT_SIGNATURE_INVALID: Final = "MUTATION_OUTCOME_EVENT_SIGNATURE_INVALID"
VALENCE_SIGNATURE_INVALID: Final = "MUTATION_VALENCE_SIGNATURE_INVALID"
PROVENANCE_SIGNATURE_INVALID: Final = "MUTATION_PROVENANCE_SIGNATURE_INVALID"
TRANSITION_SIGNATURE_INVALID: Final = "MUTATION_TRANSITION_SIGNATURE_INVALID"
TERMINAL_SIGNATURE_INVALID: Final = "MUTATION_TERMINAL_SIGNATURE_INVALID"

# aimos's own: a trust-context outcome outside the reference recall codes, and a verifier bug
TRUST_CONTEXT_INVALID: Final = "MUTATION_TRUST_CONTEXT_INVALID"
VERIFIER_INTERNAL_ERROR: Final = "MUTATION_VERIFIER_INTERNAL_ERROR"

MUTATION_STRUCTURAL_CODES: Final[tuple[str, ...]] = (
    BUNDLE_COMMITMENT_INVALID,
    OUTCOME_SCHEMA_INVALID,
    RECALL_BINDING_INVALID,
    OUTCOME_EVENT_INVALID,
    VALENCE_BINDING_INVALID,
    TERMINAL_KIND_INVALID,
    OBSERVATION_TERMINAL_INVALID,
    NOOP_TERMINAL_INVALID,
    TRANSITION_PROVENANCE_INVALID,
    PROJECTION_BINDING_INVALID,
    PROJECTION_HASH_INVALID,
    TRANSITION_HASH_INVALID,
)
"""The reference's ``failure_codes`` list order. The check order differs in one place: the
``recall_evidence_sha256`` half of RECALL_BINDING runs before OUTCOME_SCHEMA."""

MUTATION_WITNESS_CODES: Final[tuple[str, ...]] = (
    WITNESS_REQUIRED,
    WITNESS_COMMITMENT_INVALID,
    # (here the trust context is verified as a V2 recall envelope, with crypto)
    WITNESS_SCOPE_INVALID,
    OUTCOME_EVENT_SIGNATURE_INVALID,
    VALENCE_SIGNATURE_INVALID,
    PROVENANCE_SIGNATURE_INVALID,  # authorized_transition ...
    TRANSITION_SIGNATURE_INVALID,  # ... authorized_transition
    TERMINAL_SIGNATURE_INVALID,  # signed_noop / occurrence_observation
)

RECALL_TRUST_CONTEXT_REASONS: Final[frozenset[str]] = RECALL_REASONS
"""Recall reasons a failing trust context surfaces unprefixed (see the module docstring)."""

MUTATION_REASONS: Final[frozenset[str]] = frozenset(
    {
        *MUTATION_STRUCTURAL_CODES,
        *MUTATION_WITNESS_CODES,
        TRUST_CONTEXT_INVALID,
        VERIFIER_INTERNAL_ERROR,
        *RECALL_TRUST_CONTEXT_REASONS,
    }
)
"""Closed: every reason :func:`verify_mutation_bundle` can return."""

# --- profile constants ------------------------------------------------------------------------
BUNDLE_FORMAT: Final[dict[str, Any]] = {
    "schema": BUNDLE_SCHEMA,
    "version": 2,
    "native_outcome_schema": OUTCOME_SCHEMA,
    "canonicalization": CANONICALIZATION,
    "hash": "sha256",
    "signature": "ed25519",
}
WITNESS_FORMAT: Final[dict[str, Any]] = {
    "schema": WITNESS_SCHEMA,
    "version": 1,
    "canonicalization": CANONICALIZATION,
    "hash": "sha256",
    "signature": "ed25519",
}
TARGET_SCOPES: Final = (PRINCIPAL_STATE, OCCURRENCE_OBSERVATION)
TERMINAL_KINDS: Final = (AUTHORIZED_TRANSITION, SIGNED_NOOP, OCCURRENCE_OBSERVATION)
HOUSEKEEPER_EPOCH_KIND: Final = "housekeeper_identity_epoch"  # the V2 recall envelope's object kind
WEIGHT_MIN_MILLI: Final = commitments.WEIGHT_MIN_MILLI
WEIGHT_MAX_MILLI: Final = commitments.WEIGHT_MAX_MILLI
