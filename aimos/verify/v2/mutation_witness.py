"""The P2 witness of V2 mutation-outcome evidence, in :data:`MUTATION_WITNESS_CODES` order: the
witness is present and committed, the trust context verifies in full as a V2 recall envelope under
the caller's fingerprint, the witness scope names this bundle, trust context, fingerprint and
company, then the housekeeper's signed proofs (:mod:`aimos.verify.v2.mutation_proofs`)."""

from __future__ import annotations

import struct
from collections.abc import Callable
from functools import partial
from typing import Any

from aimos import vocabulary
from aimos.crypto import commitments
from aimos.crypto.ed25519 import verify
from aimos.crypto.encoding import b64u_decode
from aimos.crypto.merkle import merkle_root
from aimos.errors import AimosError
from aimos.verify.kit import CheckFailed, Verdict, as_dict, check, is_hex64, is_int, require_dict, same_object
from aimos.verify.v2.mutation_proofs import (
    Housekeeper,
    event_proof_failure,
    provenance_proof_failure,
    valence_proof_failure,
)
from aimos.verify.v2.mutation_structure import Checked, check_structure, commitment
from aimos.verify.v2.mutation_words import (
    HOUSEKEEPER_EPOCH_KIND,
    OUTCOME_EVENT_SIGNATURE_INVALID,
    PROVENANCE_SIGNATURE_INVALID,
    RECALL_TRUST_CONTEXT_REASONS,
    TERMINAL_SIGNATURE_INVALID,
    TRANSITION_SIGNATURE_INVALID,
    TRUST_CONTEXT_INVALID,
    VALENCE_SIGNATURE_INVALID,
    WITNESS_COMMITMENT_INVALID,
    WITNESS_FORMAT,
    WITNESS_REQUIRED,
    WITNESS_SCOPE_INVALID,
)
from aimos.verify.v2.recall_profile import OBJECT_ROOT_FIELDS
from aimos.verify.v2_recall import verify_recall_envelope
from aimos.vocabulary import PROOF_REWEIGHT_PROVENANCE as REWEIGHT_PROOF_KIND
from aimos.vocabulary import PROOF_TERMINAL_EVENT_KIND
from aimos.vocabulary import TERMINAL_AUTHORIZED_TRANSITION as AUTHORIZED_TRANSITION


class Count:
    """Signatures verified so far (reported on failure too)."""

    def __init__(self) -> None:
        self.n = 0


def verify_mutation(
    bundle: Any,
    witness: Any,
    trust_context: Any,
    expected_master_fingerprint: str | None,
    structural_only: bool,
) -> Verdict:
    """The checks in order; the first failure is the verdict (with the signatures verified so far)."""
    signed = Count()
    try:
        checked = check_structure(bundle)
        if structural_only:
            return Verdict.valid()
        missing = "witness" if witness is None else "trust_context"
        check(
            witness is not None and trust_context is not None,
            WITNESS_REQUIRED,
            f"no {missing} was supplied",
            missing,
        )
        check_witness_commitment(witness)
        verify_trust_context(trust_context, expected_master_fingerprint, signed)
        check_witness(checked, witness, trust_context, expected_master_fingerprint, signed)
    except CheckFailed as failure:
        return Verdict.failed(failure, signed.n)
    return Verdict.valid(signed.n)


def check_witness_commitment(witness: Any) -> None:
    reason, where = WITNESS_COMMITMENT_INVALID, "witness"
    w = require_dict(witness, reason, "the witness is not a JSON object", where)
    check(
        same_object(w.get("format"), WITNESS_FORMAT),
        reason,
        "format is not the mutation-witness/v1 format object",
        "witness.format",
    )
    commitment(w, "witness_sha256", vocabulary.V2_MUTATION_WITNESS, reason, where, where)


def verify_trust_context(trust_context: Any, expected_master_fingerprint: str | None, signed: Count) -> None:
    """The trust context verifies as a V2 recall envelope; its signatures count in ``signed``. A
    failing one surfaces its recall reason unprefixed when that reason is a recall code, else
    ``MUTATION_TRUST_CONTEXT_INVALID`` (so the reasons stay closed)."""
    try:
        result = verify_recall_envelope(trust_context, expected_master_fingerprint)
    except Exception as exc:  # the recall verifier promises not to raise; stay closed if it does
        raise CheckFailed(
            TRUST_CONTEXT_INVALID, f"recall verifier raised {type(exc).__name__}", "trust_context"
        ) from None
    signed.n = result.signatures_verified if is_int(result.signatures_verified) else 0
    if result.verdict == "valid" and result.reason is None:
        return
    inner = f"trust context: {result.reason}" + (f" ({result.detail})" if result.detail else "")
    if result.where:
        inner += f" at {result.where}"
    if isinstance(result.reason, str) and result.reason in RECALL_TRUST_CONTEXT_REASONS:
        raise CheckFailed(result.reason, inner, "trust_context")
    raise CheckFailed(TRUST_CONTEXT_INVALID, inner, "trust_context")


def envelope_hash(trust_context: dict[str, Any]) -> str | None:
    """The V2 bundle hash recomputed from the envelope header and its object entries."""
    try:
        objects = trust_context["objects"]
        fingerprint = trust_context["expected_master_fingerprint"]
        if not isinstance(objects, list) or not is_hex64(fingerprint):
            return None
        root = merkle_root([{f: o[f] for f in OBJECT_ROOT_FIELDS} for o in objects])
        return commitments.v2_bundle_hash(
            trust_context["bundle_id"],
            trust_context["company_id"],
            bytes.fromhex(fingerprint),
            trust_context["result_count"],
            root,
        ).hex()
    except (AimosError, KeyError, TypeError, ValueError, AttributeError, OverflowError, struct.error):
        return None


def check_scope(
    checked: Checked, witness: dict[str, Any], trust_context: Any, expected: str | None
) -> Housekeeper:
    """The witness names this bundle, this trust context and this fingerprint; the trust context
    holds one usable housekeeper epoch, and everything is for the bundle's company."""
    reason = WITNESS_SCOPE_INVALID
    trust = require_dict(trust_context, reason, "the trust context is not a JSON object", "trust_context")
    check(
        witness.get("mutation_bundle_sha256") == checked.bundle["bundle_sha256"],
        reason,
        "the witness names another mutation bundle",
        "witness.mutation_bundle_sha256",
    )
    trust_hash = envelope_hash(trust)
    check(
        trust_hash is not None
        and trust_hash == trust.get("bundle_sha256")
        and witness.get("trust_context_bundle_sha256") == trust_hash,
        reason,
        "the witness names another trust context",
        "witness.trust_context_bundle_sha256",
    )
    check(
        is_hex64(expected) and witness.get("expected_master_fingerprint") == expected,
        reason,
        "the witness names another master fingerprint",
        "witness.expected_master_fingerprint",
    )
    epochs = [
        o.get("body")
        for o in trust.get("objects") or []
        if isinstance(o, dict) and o.get("kind") == HOUSEKEEPER_EPOCH_KIND
    ]
    epoch = require_dict(
        epochs[0] if len(epochs) == 1 else None,
        reason,
        "the trust context holds no single housekeeper identity epoch",
        "trust_context.objects",
    )
    hk = Housekeeper(epoch)
    check(hk.usable(), reason, "the housekeeper identity epoch is incomplete", "trust_context.objects")
    check(
        trust.get("company_id") == checked.company and hk.company == checked.company,
        reason,
        "the trust context is for another company",
        "trust_context.company_id",
    )
    return hk


def signed(failure: str | None, reason: str, where: str, count: Count) -> None:
    """A signed proof holds (else fail with ``reason``); one more signature verified."""
    check(failure is None, reason, failure or "", where)
    count.n += 1


def signed_terminal(
    proof: dict[str, Any], kind: str, key: str, prove: Callable[[Any], str | None], reason: str, count: Count
) -> None:
    """The witness's terminal proof is of ``kind`` and its ``key`` proves the terminal."""
    failure = f"terminal_proof.kind is not {kind}" if proof.get("kind") != kind else prove(proof.get(key))
    signed(failure, reason, f"witness.terminal_proof.{key}", count)


def check_witness(
    checked: Checked, witness: dict[str, Any], trust_context: Any, expected: str | None, count: Count
) -> None:
    """Scope, then the housekeeper's signatures, counting each one verified in ``count``."""
    hk = check_scope(checked, witness, trust_context, expected)
    company = checked.company
    outcome_event = event_proof_failure(witness.get("outcome_event"), checked.event, hk, company)
    signed(outcome_event, OUTCOME_EVENT_SIGNATURE_INVALID, "witness.outcome_event", count)
    valence = valence_proof_failure(witness.get("valence_evidence"), checked, hk)
    signed(valence, VALENCE_SIGNATURE_INVALID, "witness.valence_evidence", count)
    proof = as_dict(witness.get("terminal_proof")) or {}
    if checked.kind == AUTHORIZED_TRANSITION:
        provenance = as_dict(checked.terminal.get("reweight_provenance")) or {}
        prove_provenance = partial(provenance_proof_failure, summary=provenance, checked=checked, hk=hk)
        signed_terminal(
            proof, REWEIGHT_PROOF_KIND, "provenance", prove_provenance, PROVENANCE_SIGNATURE_INVALID, count
        )
        projection = as_dict(checked.bundle.get("cognitive_projection")) or {}
        signature = b64u_decode(projection["transition_signature_b64u"])
        holds = verify(str(hk.public_key), bytes.fromhex(projection["transition_hash"]), signature)
        signed(
            None if holds else "the transition signature does not verify under the housekeeper key",
            TRANSITION_SIGNATURE_INVALID,
            "bundle.cognitive_projection.transition_signature_b64u",
            count,
        )
        return
    terminal_event = as_dict(checked.terminal.get("event")) or {}
    prove_event = partial(event_proof_failure, summary=terminal_event, hk=hk, company=company)
    signed_terminal(proof, PROOF_TERMINAL_EVENT_KIND, "event", prove_event, TERMINAL_SIGNATURE_INVALID, count)
