"""Portable verifier of MutMem V2 mutation-outcome evidence (PROTOCOL-NOTES section 5).

Pure: a parsed mutation bundle (``hom.aimos.mutmem-portable-mutation-evidence/v2``), optionally
its P2 witness (``hom.aimos.mutmem-portable-mutation-witness/v1``) and trust context (a V2
recall envelope), in; a :class:`~aimos.verify.kit.Verdict` out. It imports only the crypto
layer, the vocabulary, the kit and the V2 recall verifier; it reads no store and does no I/O.
This module holds the closed vocabulary, the profile and the entry point; the checks are in
:mod:`aimos.verify.v2.mutation_structure` and :mod:`aimos.verify.v2.mutation_witness` (with the
signed proofs in :mod:`aimos.verify.v2.mutation_proofs`).
Every hash is recomputed; no stored hash is trusted. The first failing check is the reason;
nothing raises, whatever the input.

Structural checks (the 12 reference codes, in the reference's check order):

1. ``MUTATION_BUNDLE_COMMITMENT_INVALID``: the exact ``format`` object, and
   ``bundle_sha256 = H("hom.aimos.mutmem-portable-mutation-evidence/v2"‖00 ‖ canonical(bundle
   without bundle_sha256))`` (a bundle that does not canonicalize fails here too);
2. ``MUTATION_RECALL_BINDING_INVALID``: ``recall_evidence_sha256 = H(canonical(recall_receipt))``;
3. ``MUTATION_OUTCOME_SCHEMA_INVALID``: outcome schema, company, UUID and hash formats, scope;
4. ``MUTATION_RECALL_BINDING_INVALID``: the recall receipt's event id, mutation hash, Merkle
   root, security closure and evidence {memory_id, live_content_hash, occurrence_ref} equal
   the outcome's;
5. ``MUTATION_OUTCOME_EVENT_INVALID``: operation, parent = recall event, metadata = outcome;
6. ``MUTATION_VALENCE_BINDING_INVALID``: the valence row binds the outcome and its event;
7. ``MUTATION_TERMINAL_KIND_INVALID``;
8. ``MUTATION_OBSERVATION_TERMINAL_INVALID`` / 9. ``MUTATION_NOOP_TERMINAL_INVALID`` /
10. ``MUTATION_TRANSITION_PROVENANCE_INVALID``, by terminal kind;
11. ``MUTATION_PROJECTION_BINDING_INVALID`` (weights integers in 100..3000 and different,
    hashes lowercase hex, a 64-byte transition signature);
12. ``MUTATION_PROJECTION_HASH_INVALID`` (``aimos.cwc/v1``), then
    ``MUTATION_TRANSITION_HASH_INVALID`` (``aimos.cognitive-transition/v2``).

P2 witness checks (unless ``structural_only``), in :data:`MUTATION_WITNESS_CODES` order:
witness and trust context present; the witness commitment
``witness_sha256 = H("hom.aimos.mutmem-portable-mutation-witness/v1"‖00 ‖ canonical(witness
without witness_sha256))``; then the trust context is verified in full (structure and crypto)
as a V2 recall envelope under the caller's expected master fingerprint; then the witness scope
(it names this bundle, this trust context and this fingerprint; one company); then the
housekeeper's signatures, each with its whole binding: the outcome event (event-link mutation
hash, payload form), the valence row (row hash, payload form), and either the REWEIGHT
provenance (v1 mutation hash, payload form) and the transition commitment (Ed25519 over its 32
raw bytes), or the terminal event. The signer is the housekeeper epoch of the verified trust
context, and each signed time must lie inside that epoch.

Where aimos is stricter than the reference verifier (every reference vector behaves
identically): ``bundle_id`` must be a non-empty string (check 1); the witness scope also requires
the trust context, its housekeeper epoch and every signed proof to carry the bundle's company;
each proof's ``ts_signed`` must lie inside the housekeeper epoch; the signed valence body must
say ``event_type`` VALENCE and carry the row's ``reward_sign`` (a bundle's unsigned
``reward_sign`` is otherwise unbound); the signed REWEIGHT body must name the memory and company
(and, where it names the signer, the proof's signer), so a signature cannot be replayed onto
another memory; unsigned fields of a proof that restate signed or trusted ones must agree with
them (``signer_valid_until`` / ``agent_valid_until`` with the epoch, the valence row's
``identity_tier`` and ``context_hash`` with its body, a provenance row's ``is_genesis`` with
its predecessor); hashes and UUIDs are lowercase (as in the V2 recall verifier; the reference
accepts uppercase UUIDs); booleans never pass as integers.

Reasons from the trust context: a failing trust context surfaces the recall verifier's own
reason **unprefixed** (as the reference does), with ``where="trust_context"`` (the recall
verifier's own location and detail go into ``detail``), when it is one of the recall codes
(:data:`RECALL_TRUST_CONTEXT_REASONS`, the recall verifier's closed ``RECALL_REASONS``: the 37
structural codes and the 7 P2 crypto codes). Any other recall outcome (a reason outside that
list, or a recall verifier exception) becomes ``MUTATION_TRUST_CONTEXT_INVALID`` with the
recall reason in ``detail``, so :data:`MUTATION_REASONS` stays closed whatever the recall
module returns. A defect of this module (an exception no check anticipated) is reported as
verdict ``indeterminate`` with ``MUTATION_VERIFIER_INTERNAL_ERROR``, never as a property of the
input (as the cognitive verifier does).

``signatures_verified`` counts every Ed25519 signature checked by the call: the trust
context's (as its verifier reports them) plus the witness's (3 for a signed no-op or
observation, 4 for a transition). Structural-only verification checks none.
"""

from __future__ import annotations

from typing import Any, Final

from aimos import vocabulary
from aimos.crypto import commitments
from aimos.verify.kit import Verdict
from aimos.verify.v2_recall import RECALL_REASONS

V2Verdict = Verdict  # the name the V2 verifiers' callers know

__all__ = [
    "MUTATION_REASONS",
    "MUTATION_STRUCTURAL_CODES",
    "MUTATION_WITNESS_CODES",
    "RECALL_TRUST_CONTEXT_REASONS",
    "V2Verdict",
    "verify_mutation_bundle",
]

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
BUNDLE_SCHEMA: Final = vocabulary.V2_MUTATION_BUNDLE_SCHEMA
OUTCOME_SCHEMA: Final = vocabulary.V2_MUTATION_OUTCOME_SCHEMA
WITNESS_SCHEMA: Final = vocabulary.V2_MUTATION_WITNESS_SCHEMA
CANONICALIZATION: Final = vocabulary.CANONICAL_JSON_PROFILE
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
PRINCIPAL_STATE: Final = vocabulary.TARGET_PRINCIPAL_STATE
OCCURRENCE_OBSERVATION: Final = vocabulary.TARGET_OCCURRENCE_OBSERVATION
TARGET_SCOPES: Final = (PRINCIPAL_STATE, OCCURRENCE_OBSERVATION)
AUTHORIZED_TRANSITION: Final = vocabulary.TERMINAL_AUTHORIZED_TRANSITION
SIGNED_NOOP: Final = vocabulary.TERMINAL_SIGNED_NOOP
TERMINAL_KINDS: Final = (AUTHORIZED_TRANSITION, SIGNED_NOOP, OCCURRENCE_OBSERVATION)
OUTCOME_OPERATION: Final = vocabulary.MUTATION_OUTCOME_OPERATION
NOOP_OPERATION: Final = vocabulary.WEIGHT_UNCHANGED_OPERATION
OBSERVATION_OPERATION: Final = vocabulary.OBSERVATION_RETAINED_OPERATION
REWEIGHT: Final = vocabulary.REWEIGHT_EVENT
VALENCE: Final = vocabulary.VALENCE_EVENT
HOUSEKEEPER: Final = vocabulary.HOUSEKEEPER
HOUSEKEEPER_EPOCH_KIND: Final = "housekeeper_identity_epoch"  # the V2 recall envelope's object kind
REWEIGHT_PROOF_KIND: Final = vocabulary.PROOF_REWEIGHT_PROVENANCE
TERMINAL_EVENT_PROOF_KIND: Final = vocabulary.PROOF_TERMINAL_EVENT
WEIGHT_MIN_MILLI: Final = commitments.WEIGHT_MIN_MILLI
WEIGHT_MAX_MILLI: Final = commitments.WEIGHT_MAX_MILLI


# --- public entry point -----------------------------------------------------------------------
def verify_mutation_bundle(
    bundle: Any,
    *,
    witness: Any = None,
    trust_context: Any = None,
    expected_master_fingerprint: str | None = None,
    structural_only: bool = False,
) -> Verdict:
    """Verify one parsed mutation bundle; with ``structural_only`` only the 12 structural
    checks run, otherwise the P2 witness is required and checked against ``trust_context``
    under ``expected_master_fingerprint``. Never raises on any input."""
    # imported here: the check modules import this module's vocabulary
    from aimos.verify.v2.mutation_witness import verify_mutation

    try:
        return verify_mutation(bundle, witness, trust_context, expected_master_fingerprint, structural_only)
    except Exception as exc:  # a verifier bug, never a property of the input: say so, do not guess
        return Verdict.indeterminate(VERIFIER_INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
