"""Portable verifier of MutMem V2 recall-disclosure envelopes (`hom.aimos.mutmem-portable-evidence/v2`).

Pure: a parsed bundle in, a :class:`V2Verdict` (the kit's :class:`~aimos.verify.kit.Verdict`) out.
It imports only the crypto layer, the vocabulary and the kit, reads no store and does no I/O, and
trusts no stored hash: every commitment is recomputed. The checks live in :mod:`aimos.verify.v2`
(``recall_envelope``, ``recall_authority``, ``recall_results``, ``recall_event``), run in this order.

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

from typing import Any

from aimos.verify.kit import CheckFailed, Verdict, short
from aimos.verify.kit import Verdict as V2Verdict
from aimos.verify.v2.recall_authority import check_authority
from aimos.verify.v2.recall_envelope import check_envelope, check_schemas
from aimos.verify.v2.recall_event import check_cryptography, check_merkle_and_event
from aimos.verify.v2.recall_profile import (
    ACTOR_CERTIFICATE_SIGNATURE_INVALID,
    ACTOR_REQUEST_SIGNATURE_INVALID,
    AUTHORITY_MUTATION_BINDING_INVALID,
    COMMAND_HASH_MISMATCH,
    CONTENT_STATE_BINDING_INVALID,
    DECISION_HASH_MALFORMED,
    ENVELOPE_COMMITMENT_INVALID,
    EPISTEMIC_BINDING_INVALID,
    EPISTEMIC_PROJECTION_BINDING_INVALID,
    EVENT_RECEIPT_BINDING_INVALID,
    EVENT_RECEIPT_COMMITMENT_INVALID,
    EXPECTED_TRUST_ANCHOR_REQUIRED,
    FORMAT,
    GRANT_COMMITMENT_INVALID,
    GRANT_NOT_EFFECTIVE,
    GRANT_SCOPE_MISMATCH,
    HOUSEKEEPER_CERTIFICATE_SIGNATURE_INVALID,
    HOUSEKEEPER_EVENT_SIGNATURE_INVALID,
    HOUSEKEEPER_IDENTITY_INVALID,
    HOUSEKEEPER_OCCURRENCE_SIGNATURE_INVALID,
    HOUSEKEEPER_REVOCATION_STATE_INVALID,
    HOUSEKEEPER_SYSTEM_PRINCIPAL_INVALID,
    IDENTITY_CERTIFICATE_BINDING_INVALID,
    IDENTITY_EPOCH_INVALID,
    IDENTITY_SCOPE_MISMATCH,
    MASTER_GRANT_SIGNATURE_INVALID,
    MAX_RESULTS,
    MERKLE_ENTRY_BINDING_INVALID,
    MERKLE_ROOT_MISMATCH,
    OBJECT_ROOT_FIELDS,
    OBJECT_SCHEMA_INVALID,
    OBJECT_SCHEMAS,
    OCCURRENCE_BINDING_INVALID,
    OCCURRENCE_NATIVE_BODY_INVALID,
    PROVENANCE_BINDING_INVALID,
    RECALL_CRYPTO_CODES,
    RECALL_REASONS,
    RECALL_STRUCTURAL_CODES,
    RECEIPT_EVIDENCE_BINDING_INVALID,
    REQUEST_BODY_HASH_MISMATCH,
    REQUEST_CONTEXT_INVALID,
    REQUEST_RECEIPT_BINDING_INVALID,
    REQUEST_RECEIPT_COMMITMENT_INVALID,
    RESULT_CARDINALITY_INVALID,
    RESULT_IDENTITY_BINDING_INVALID,
    RESULT_KINDS,
    RETURN_PROJECTION_BINDING_INVALID,
    REVOCATION_EVENT_BINDING_INVALID,
    REVOCATION_STATE_INVALID,
    SECURITY_CLOSURE_BINDING_INVALID,
    SINGLETON_KINDS,
    TRUST_ANCHOR_KEY_MISMATCH,
    TRUST_ROOT_MISMATCH,
)
from aimos.verify.v2.recall_results import check_decisions, check_result_objects
from aimos.verify.v2.recall_run import RecallRun
from aimos.vocabulary import CLEARANCE_MAX as MAX_CLEARANCE
from aimos.vocabulary import DATA_CLASSES as DATA_CLASSES
from aimos.vocabulary import HOUSEKEEPER as HOUSEKEEPER
from aimos.vocabulary import HOUSEKEEPER_SYSTEM_PRINCIPAL as SYSTEM_PRINCIPAL
from aimos.vocabulary import MASTER_SIGNED_RECALL_GRANT as MASTER_GRANT
from aimos.vocabulary import OCCURRENCE_LEGACY_SCHEMA as OCCURRENCE_LEGACY_SCHEMA
from aimos.vocabulary import OCCURRENCE_V3_SCHEMA as OCCURRENCE_V3_SCHEMA
from aimos.vocabulary import PATH_RECALL as REQUEST_PATH
from aimos.vocabulary import RECALL_AUTHORIZATION_SCHEMA as RECALL_AUTHORIZATION_SCHEMA
from aimos.vocabulary import REQUEST_METHOD as REQUEST_METHOD
from aimos.vocabulary import REQUEST_SIG_FORM as REQUEST_SIG_FORM
from aimos.vocabulary import V2_CONTENT_KERNEL_SCHEMA as CONTENT_KERNEL_SCHEMA
from aimos.vocabulary import V2_NATIVE_RECALL_RECEIPT_SCHEMA as NATIVE_RECEIPT_SCHEMA
from aimos.vocabulary import V2_RECALL_BUNDLE_SCHEMA as BUNDLE_SCHEMA
from aimos.vocabulary import V2_SECURITY_CLOSURE_SCHEMA as SECURITY_CLOSURE_SCHEMA

__all__ = [
    "ACTOR_CERTIFICATE_SIGNATURE_INVALID",
    "ACTOR_REQUEST_SIGNATURE_INVALID",
    "AUTHORITY_MUTATION_BINDING_INVALID",
    "BUNDLE_SCHEMA",
    "COMMAND_HASH_MISMATCH",
    "CONTENT_KERNEL_SCHEMA",
    "CONTENT_STATE_BINDING_INVALID",
    "DATA_CLASSES",
    "DECISION_HASH_MALFORMED",
    "ENVELOPE_COMMITMENT_INVALID",
    "EPISTEMIC_BINDING_INVALID",
    "EPISTEMIC_PROJECTION_BINDING_INVALID",
    "EVENT_RECEIPT_BINDING_INVALID",
    "EVENT_RECEIPT_COMMITMENT_INVALID",
    "EXPECTED_TRUST_ANCHOR_REQUIRED",
    "FORMAT",
    "GRANT_COMMITMENT_INVALID",
    "GRANT_NOT_EFFECTIVE",
    "GRANT_SCOPE_MISMATCH",
    "HOUSEKEEPER",
    "HOUSEKEEPER_CERTIFICATE_SIGNATURE_INVALID",
    "HOUSEKEEPER_EVENT_SIGNATURE_INVALID",
    "HOUSEKEEPER_IDENTITY_INVALID",
    "HOUSEKEEPER_OCCURRENCE_SIGNATURE_INVALID",
    "HOUSEKEEPER_REVOCATION_STATE_INVALID",
    "HOUSEKEEPER_SYSTEM_PRINCIPAL_INVALID",
    "IDENTITY_CERTIFICATE_BINDING_INVALID",
    "IDENTITY_EPOCH_INVALID",
    "IDENTITY_SCOPE_MISMATCH",
    "MASTER_GRANT",
    "MASTER_GRANT_SIGNATURE_INVALID",
    "MAX_CLEARANCE",
    "MAX_RESULTS",
    "MERKLE_ENTRY_BINDING_INVALID",
    "MERKLE_ROOT_MISMATCH",
    "NATIVE_RECEIPT_SCHEMA",
    "OBJECT_ROOT_FIELDS",
    "OBJECT_SCHEMAS",
    "OBJECT_SCHEMA_INVALID",
    "OCCURRENCE_BINDING_INVALID",
    "OCCURRENCE_LEGACY_SCHEMA",
    "OCCURRENCE_NATIVE_BODY_INVALID",
    "OCCURRENCE_V3_SCHEMA",
    "PROVENANCE_BINDING_INVALID",
    "RECALL_AUTHORIZATION_SCHEMA",
    "RECALL_CRYPTO_CODES",
    "RECALL_REASONS",
    "RECALL_STRUCTURAL_CODES",
    "RECEIPT_EVIDENCE_BINDING_INVALID",
    "REQUEST_BODY_HASH_MISMATCH",
    "REQUEST_CONTEXT_INVALID",
    "REQUEST_METHOD",
    "REQUEST_PATH",
    "REQUEST_RECEIPT_BINDING_INVALID",
    "REQUEST_RECEIPT_COMMITMENT_INVALID",
    "REQUEST_SIG_FORM",
    "RESULT_CARDINALITY_INVALID",
    "RESULT_IDENTITY_BINDING_INVALID",
    "RESULT_KINDS",
    "RETURN_PROJECTION_BINDING_INVALID",
    "REVOCATION_EVENT_BINDING_INVALID",
    "REVOCATION_STATE_INVALID",
    "SECURITY_CLOSURE_BINDING_INVALID",
    "SECURITY_CLOSURE_SCHEMA",
    "SINGLETON_KINDS",
    "SYSTEM_PRINCIPAL",
    "TRUST_ANCHOR_KEY_MISMATCH",
    "TRUST_ROOT_MISMATCH",
    "V2Verdict",
    "verify_recall_envelope",
]


def verify_recall_envelope(
    bundle: Any, expected_master_fingerprint: str | None = None, *, structural_only: bool = False
) -> Verdict:
    """Verify a MutMem V2 recall-disclosure envelope; never raises.

    ``structural_only`` runs the 37 structural predicates only (the P1 vectors carry fake keys).
    Otherwise the caller's ``expected_master_fingerprint`` is required: without it the first
    cryptographic check fails with ``EXPECTED_TRUST_ANCHOR_REQUIRED``.
    """
    run = RecallRun()
    try:
        check_envelope(run, bundle)
        check_schemas(run)
        check_authority(run)
        check_decisions(run)
        check_result_objects(run)
        check_merkle_and_event(run)
        if not structural_only:
            check_cryptography(run, expected_master_fingerprint)
    except CheckFailed as failure:
        return Verdict.invalid(failure.reason, short(failure.detail), failure.where, run.signatures)
    except Exception as exc:  # a defect, not a protocol outcome: still a closed reason (module doc)
        detail = f"unexpected {type(exc).__name__} while evaluating {run.reason}: {exc}"
        return Verdict.invalid(run.reason, short(detail), run.where, run.signatures)
    return Verdict.valid(run.signatures)
