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

from typing import Any

from aimos.verify.kit import Verdict
from aimos.verify.v2.mutation_witness import verify_mutation
from aimos.verify.v2.mutation_words import (  # re-exported: the names callers and tests know
    BUNDLE_COMMITMENT_INVALID as BUNDLE_COMMITMENT_INVALID,
)
from aimos.verify.v2.mutation_words import (
    BUNDLE_FORMAT as BUNDLE_FORMAT,
)
from aimos.verify.v2.mutation_words import (
    HOUSEKEEPER_EPOCH_KIND as HOUSEKEEPER_EPOCH_KIND,
)
from aimos.verify.v2.mutation_words import (
    MUTATION_REASONS as MUTATION_REASONS,
)
from aimos.verify.v2.mutation_words import (
    MUTATION_STRUCTURAL_CODES as MUTATION_STRUCTURAL_CODES,
)
from aimos.verify.v2.mutation_words import (
    MUTATION_WITNESS_CODES as MUTATION_WITNESS_CODES,
)
from aimos.verify.v2.mutation_words import (
    NOOP_TERMINAL_INVALID as NOOP_TERMINAL_INVALID,
)
from aimos.verify.v2.mutation_words import (
    OBSERVATION_TERMINAL_INVALID as OBSERVATION_TERMINAL_INVALID,
)
from aimos.verify.v2.mutation_words import (
    OUTCOME_EVENT_INVALID as OUTCOME_EVENT_INVALID,
)
from aimos.verify.v2.mutation_words import (
    OUTCOME_EVENT_SIGNATURE_INVALID as OUTCOME_EVENT_SIGNATURE_INVALID,
)
from aimos.verify.v2.mutation_words import (
    OUTCOME_SCHEMA_INVALID as OUTCOME_SCHEMA_INVALID,
)
from aimos.verify.v2.mutation_words import (
    PROJECTION_BINDING_INVALID as PROJECTION_BINDING_INVALID,
)
from aimos.verify.v2.mutation_words import (
    PROJECTION_HASH_INVALID as PROJECTION_HASH_INVALID,
)
from aimos.verify.v2.mutation_words import (
    PROVENANCE_SIGNATURE_INVALID as PROVENANCE_SIGNATURE_INVALID,
)
from aimos.verify.v2.mutation_words import (
    RECALL_BINDING_INVALID as RECALL_BINDING_INVALID,
)
from aimos.verify.v2.mutation_words import (
    RECALL_TRUST_CONTEXT_REASONS as RECALL_TRUST_CONTEXT_REASONS,
)
from aimos.verify.v2.mutation_words import (
    TARGET_SCOPES as TARGET_SCOPES,
)
from aimos.verify.v2.mutation_words import (
    TERMINAL_KIND_INVALID as TERMINAL_KIND_INVALID,
)
from aimos.verify.v2.mutation_words import (
    TERMINAL_KINDS as TERMINAL_KINDS,
)
from aimos.verify.v2.mutation_words import (
    TERMINAL_SIGNATURE_INVALID as TERMINAL_SIGNATURE_INVALID,
)
from aimos.verify.v2.mutation_words import (
    TRANSITION_HASH_INVALID as TRANSITION_HASH_INVALID,
)
from aimos.verify.v2.mutation_words import (
    TRANSITION_PROVENANCE_INVALID as TRANSITION_PROVENANCE_INVALID,
)
from aimos.verify.v2.mutation_words import (
    TRANSITION_SIGNATURE_INVALID as TRANSITION_SIGNATURE_INVALID,
)
from aimos.verify.v2.mutation_words import (
    TRUST_CONTEXT_INVALID as TRUST_CONTEXT_INVALID,
)
from aimos.verify.v2.mutation_words import (
    VALENCE_BINDING_INVALID as VALENCE_BINDING_INVALID,
)
from aimos.verify.v2.mutation_words import (
    VALENCE_SIGNATURE_INVALID as VALENCE_SIGNATURE_INVALID,
)
from aimos.verify.v2.mutation_words import (
    VERIFIER_INTERNAL_ERROR as VERIFIER_INTERNAL_ERROR,
)
from aimos.verify.v2.mutation_words import (
    WEIGHT_MAX_MILLI as WEIGHT_MAX_MILLI,
)
from aimos.verify.v2.mutation_words import (
    WEIGHT_MIN_MILLI as WEIGHT_MIN_MILLI,
)
from aimos.verify.v2.mutation_words import (
    WITNESS_COMMITMENT_INVALID as WITNESS_COMMITMENT_INVALID,
)
from aimos.verify.v2.mutation_words import (
    WITNESS_FORMAT as WITNESS_FORMAT,
)
from aimos.verify.v2.mutation_words import (
    WITNESS_REQUIRED as WITNESS_REQUIRED,
)
from aimos.verify.v2.mutation_words import (
    WITNESS_SCOPE_INVALID as WITNESS_SCOPE_INVALID,
)
from aimos.vocabulary import HOUSEKEEPER as HOUSEKEEPER

V2Verdict = Verdict  # the name the V2 verifiers' callers know

__all__ = [
    "MUTATION_REASONS",
    "MUTATION_STRUCTURAL_CODES",
    "MUTATION_WITNESS_CODES",
    "RECALL_TRUST_CONTEXT_REASONS",
    "V2Verdict",
    "verify_mutation_bundle",
]


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
    try:
        return verify_mutation(bundle, witness, trust_context, expected_master_fingerprint, structural_only)
    except Exception as exc:  # a verifier bug, never a property of the input: say so, do not guess
        return Verdict.indeterminate(VERIFIER_INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
