"""Portable verifier of MutMem V2 mutation-outcome evidence (PROTOCOL-NOTES section 5).

Pure: a parsed mutation bundle (``hom.aimos.mutmem-portable-mutation-evidence/v2``), optionally
its P2 witness (``hom.aimos.mutmem-portable-mutation-witness/v1``) and trust context (a V2
recall envelope), in; a :class:`~aimos.verify.v2_recall.V2Verdict` out. It imports only the
crypto layer, the error types and the V2 recall verifier; it reads no store and does no I/O.
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

import hashlib
import re
import struct
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Final, TypeGuard

from aimos import vocabulary
from aimos.crypto import commitments
from aimos.crypto.canonical import MAX_SAFE_INTEGER, canonical_json
from aimos.crypto.ed25519 import verify
from aimos.crypto.encoding import b64u_decode
from aimos.crypto.merkle import merkle_root
from aimos.crypto.messages import payload_message
from aimos.errors import AimosError
from aimos.verify.v2_recall import RECALL_REASONS, V2Verdict, verify_recall_envelope

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
BUNDLE_SCHEMA: Final = "hom.aimos.mutmem-portable-mutation-evidence/v2"
OUTCOME_SCHEMA: Final = "hom.aimos.mutation-outcome-evidence/v2"
WITNESS_SCHEMA: Final = "hom.aimos.mutmem-portable-mutation-witness/v1"
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
PRINCIPAL_STATE: Final = "principal_state"
OCCURRENCE_OBSERVATION: Final = "occurrence_observation"
TARGET_SCOPES: Final = (PRINCIPAL_STATE, OCCURRENCE_OBSERVATION)
AUTHORIZED_TRANSITION: Final = "authorized_transition"
SIGNED_NOOP: Final = "signed_noop"
TERMINAL_KINDS: Final = (AUTHORIZED_TRANSITION, SIGNED_NOOP, OCCURRENCE_OBSERVATION)
OUTCOME_OPERATION: Final = "mutation_outcome_evidence_v2"
NOOP_OPERATION: Final = "cognitive_weight_unchanged"
OBSERVATION_OPERATION: Final = "mutation_occurrence_observation_retained"
REWEIGHT: Final = "REWEIGHT"
VALENCE: Final = "VALENCE"
HOUSEKEEPER: Final = "housekeeper"
HOUSEKEEPER_EPOCH_KIND: Final = "housekeeper_identity_epoch"
REWEIGHT_PROOF_KIND: Final = "reweight_provenance"
TERMINAL_EVENT_PROOF_KIND: Final = "terminal_event"
OBJECT_ROOT_FIELDS: Final = ("ordinal", "kind", "schema", "subject_id", "result_ordinal", "body_sha256")
WEIGHT_MIN_MILLI: Final = commitments.WEIGHT_MIN_MILLI
WEIGHT_MAX_MILLI: Final = commitments.WEIGHT_MAX_MILLI

_UUID: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_HEX64: Final = re.compile(r"[0-9a-f]{64}")
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MS: Final = timedelta(milliseconds=1)


class _Fail(Exception):
    """A check failed with a reason of the closed vocabulary."""

    def __init__(self, reason: str, detail: str, where: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail
        self.where = where


# --- small helpers ------------------------------------------------------------------------------
def _is_uuid(value: object) -> bool:
    return isinstance(value, str) and _UUID.fullmatch(value) is not None


def _is_hex64(value: object) -> bool:
    return isinstance(value, str) and _HEX64.fullmatch(value) is not None


def _int(value: object) -> TypeGuard[int]:
    """A JSON integer (never a bool) in the safe range."""
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= MAX_SAFE_INTEGER


def _text(value: object) -> bool:
    return isinstance(value, str) and value != ""


def _obj(value: object) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _same(a: object, b: object) -> bool:
    """JSON equality: strings exactly, null only with null, everything else by canonical bytes
    (so a boolean never equals a number, though Python says True == 1)."""
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if a is None or b is None:
        return a is b
    try:
        return canonical_json(a) == canonical_json(b)
    except AimosError:
        return False


def _sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _instant_ms(value: object) -> int | None:
    """Milliseconds since the epoch of an ISO-8601 time with a zone (``…T18:49:54.000Z``)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return None
    try:
        return (parsed - _EPOCH) // _MS
    except OverflowError:
        return None


def _require(ok: bool, reason: str, detail: str, where: str) -> None:
    if not ok:
        raise _Fail(reason, detail, where)


def _verdict(reason: str | None, detail: str | None, where: str | None, signatures: int) -> V2Verdict:
    return V2Verdict(
        verdict="valid" if reason is None else "invalid",
        reason=reason,
        detail=detail,
        where=where,
        signatures_verified=signatures,
    )


# --- public entry point -----------------------------------------------------------------------
def verify_mutation_bundle(
    bundle: Any,
    *,
    witness: Any = None,
    trust_context: Any = None,
    expected_master_fingerprint: str | None = None,
    structural_only: bool = False,
) -> V2Verdict:
    """Verify one parsed mutation bundle; with ``structural_only`` only the 12 structural
    checks run, otherwise the P2 witness is required and checked against ``trust_context``
    under ``expected_master_fingerprint``. Never raises on any input."""
    try:
        return _verify(bundle, witness, trust_context, expected_master_fingerprint, structural_only)
    except Exception as exc:  # a verifier bug, never a property of the input: say so, do not guess
        return V2Verdict(
            verdict="indeterminate",
            reason=VERIFIER_INTERNAL_ERROR,
            detail=f"{type(exc).__name__}: {exc}",
            where=None,
            signatures_verified=0,
        )


def _verify(
    bundle: Any,
    witness: Any,
    trust_context: Any,
    expected_master_fingerprint: str | None,
    structural_only: bool,
) -> V2Verdict:
    try:
        checked = _check_structure(bundle)
    except _Fail as exc:
        return _verdict(exc.reason, exc.detail, exc.where, 0)
    if structural_only:
        return _verdict(None, None, None, 0)

    if witness is None or trust_context is None:
        missing = "witness" if witness is None else "trust_context"
        return _verdict(WITNESS_REQUIRED, f"no {missing} was supplied", missing, 0)
    try:
        _check_witness_commitment(witness)
    except _Fail as exc:
        return _verdict(exc.reason, exc.detail, exc.where, 0)

    trust = _verify_trust_context(trust_context, expected_master_fingerprint)
    if trust.reason is not None:
        return _verdict(trust.reason, trust.detail, "trust_context", trust.signatures)

    count = _Count()
    try:
        _check_witness(checked, witness, trust_context, expected_master_fingerprint, count)
    except _Fail as exc:
        return _verdict(exc.reason, exc.detail, exc.where, trust.signatures + count.n)
    return _verdict(None, None, None, trust.signatures + count.n)


# --- structural checks ------------------------------------------------------------------------
class _Checked:
    """The parts of a structurally valid bundle the witness checks bind to."""

    def __init__(
        self,
        bundle: dict[str, Any],
        outcome: dict[str, Any],
        event: dict[str, Any],
        valence: dict[str, Any],
        terminal: dict[str, Any],
    ) -> None:
        self.bundle = bundle
        self.company: str = bundle["company_id"]
        self.outcome = outcome
        self.event = event
        self.valence = valence
        self.terminal = terminal
        self.kind: str = terminal["kind"]


def _check_structure(bundle: Any) -> _Checked:
    b = _obj(bundle)
    _require(b is not None, BUNDLE_COMMITMENT_INVALID, "the bundle is not a JSON object", "bundle")
    assert b is not None
    _check_bundle_commitment(b)

    # 2. recall_evidence_sha256 = H(canonical recall_receipt); the bundle canonicalized, so it does
    receipt_hash = _sha256_hex(canonical_json(b.get("recall_receipt")))
    _require(
        _is_hex64(b.get("recall_evidence_sha256")) and b.get("recall_evidence_sha256") == receipt_hash,
        RECALL_BINDING_INVALID,
        "recall_evidence_sha256 is not H(canonical recall_receipt)",
        "bundle.recall_evidence_sha256",
    )
    outcome = _check_outcome(b)
    _check_recall_receipt(b, outcome)
    event = _check_outcome_event(b, outcome)
    valence = _check_valence(b, outcome, event)
    terminal = _check_terminal(b, outcome, event, valence)
    return _Checked(b, outcome, event, valence, terminal)


def _check_bundle_commitment(b: dict[str, Any]) -> None:
    where = "bundle.format"
    fmt = _obj(b.get("format"))
    _require(
        fmt is not None
        and set(fmt) == set(BUNDLE_FORMAT)
        and all(_same(fmt[k], v) for k, v in BUNDLE_FORMAT.items()),
        BUNDLE_COMMITMENT_INVALID,
        "format is not the mutation-evidence/v2 format object",
        where,
    )
    _require(
        _text(b.get("bundle_id")),
        BUNDLE_COMMITMENT_INVALID,
        "bundle_id is not a non-empty string",
        "bundle.bundle_id",
    )
    where = "bundle.bundle_sha256"
    claimed = b.get("bundle_sha256")
    _require(_is_hex64(claimed), BUNDLE_COMMITMENT_INVALID, "bundle_sha256 is not lowercase 64-hex", where)
    try:
        body = canonical_json({k: v for k, v in b.items() if k != "bundle_sha256"})
    except AimosError as exc:
        raise _Fail(
            BUNDLE_COMMITMENT_INVALID, f"the bundle does not canonicalize ({exc.reason})", where
        ) from None
    _require(
        _sha256_hex(vocabulary.V2_MUTATION_BUNDLE + body) == claimed,
        BUNDLE_COMMITMENT_INVALID,
        "bundle_sha256 does not recompute",
        where,
    )


def _check_outcome(b: dict[str, Any]) -> dict[str, Any]:
    reason, where = OUTCOME_SCHEMA_INVALID, "bundle.outcome_evidence"
    company = b.get("company_id")
    _require(_text(company), reason, "company_id must be a non-empty string", "bundle.company_id")
    outcome = _obj(b.get("outcome_evidence"))
    _require(outcome is not None, reason, "outcome_evidence is not an object", where)
    assert outcome is not None
    _require(
        outcome.get("schema") == OUTCOME_SCHEMA, reason, "outcome schema is not outcome-evidence/v2", where
    )
    _require(outcome.get("company_id") == company, reason, "outcome company is not the bundle's", where)
    for name in ("memory_id", "recall_event_id", "outcome_id"):
        _require(_is_uuid(outcome.get(name)), reason, f"{name} is not a UUID", f"{where}.{name}")
    for name in (
        "live_content_hash",
        "occurrence_ref",
        "recall_event_mutation_hash",
        "recall_merkle_root",
        "security_closure_sha256",
    ):
        _require(_is_hex64(outcome.get(name)), reason, f"{name} is not lowercase 64-hex", f"{where}.{name}")
    _require(
        outcome.get("target_scope") in TARGET_SCOPES,
        reason,
        "target_scope is neither principal_state nor occurrence_observation",
        f"{where}.target_scope",
    )
    return outcome


def _check_recall_receipt(b: dict[str, Any], outcome: dict[str, Any]) -> None:
    reason, where = RECALL_BINDING_INVALID, "bundle.recall_receipt"
    receipt = _obj(b.get("recall_receipt"))
    _require(receipt is not None, reason, "recall_receipt is not an object", where)
    assert receipt is not None
    evidence = _obj(receipt.get("evidence"))
    _require(evidence is not None, reason, "recall_receipt.evidence is not an object", f"{where}.evidence")
    assert evidence is not None
    pairs = (
        (receipt, "event_id", "recall_event_id"),
        (receipt, "mutation_hash", "recall_event_mutation_hash"),
        (receipt, "merkle_root", "recall_merkle_root"),
        (receipt, "security_closure_sha256", "security_closure_sha256"),
        (evidence, "memory_id", "memory_id"),
        (evidence, "live_content_hash", "live_content_hash"),
        (evidence, "occurrence_ref", "occurrence_ref"),
    )
    for source, name, outcome_name in pairs:
        _require(
            source.get(name) == outcome[outcome_name],
            reason,
            f"the recall receipt's {name} is not the outcome's {outcome_name}",
            f"{where}.{'evidence.' if source is evidence else ''}{name}",
        )


def _check_outcome_event(b: dict[str, Any], outcome: dict[str, Any]) -> dict[str, Any]:
    reason, where = OUTCOME_EVENT_INVALID, "bundle.outcome_event"
    event = _obj(b.get("outcome_event"))
    _require(event is not None, reason, "outcome_event is not an object", where)
    assert event is not None
    _require(_is_uuid(event.get("event_id")), reason, "event_id is not a UUID", f"{where}.event_id")
    _require(
        _is_hex64(event.get("mutation_hash")), reason, "mutation_hash is not 64-hex", f"{where}.mutation_hash"
    )
    _require(
        event.get("operation") == OUTCOME_OPERATION,
        reason,
        f"operation is not {OUTCOME_OPERATION}",
        f"{where}.operation",
    )
    _require(
        event.get("parent_event_id") == outcome["recall_event_id"],
        reason,
        "the outcome event's parent is not the recall event",
        f"{where}.parent_event_id",
    )
    metadata = _obj(event.get("metadata"))
    _require(metadata is not None, reason, "metadata is not an object", f"{where}.metadata")
    assert metadata is not None
    for name in ("target_scope", "memory_id", "live_content_hash", "occurrence_ref"):
        _require(
            metadata.get(name) == outcome[name],
            reason,
            f"metadata.{name} is not the outcome's",
            f"{where}.metadata.{name}",
        )
    return event


def _check_valence(b: dict[str, Any], outcome: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
    reason, where = VALENCE_BINDING_INVALID, "bundle.valence_evidence"
    valence = _obj(b.get("valence_evidence"))
    _require(valence is not None, reason, "valence_evidence is not an object", where)
    assert valence is not None
    _require(_is_hex64(valence.get("row_hash")), reason, "row_hash is not 64-hex", f"{where}.row_hash")
    sign = valence.get("reward_sign")
    _require(_int(sign) and sign in (-1, 1), reason, "reward_sign is not -1 or 1", f"{where}.reward_sign")
    body = _obj(valence.get("body_json"))
    _require(body is not None, reason, "body_json is not an object", f"{where}.body_json")
    assert body is not None
    expected = {
        "evidence_schema": OUTCOME_SCHEMA,
        "target_scope": outcome["target_scope"],
        "memory_id": outcome["memory_id"],
        "target_live_content_hash": outcome["live_content_hash"],
        "target_occurrence_ref": outcome["occurrence_ref"],
        "recall_event_id": outcome["recall_event_id"],
        "recall_event_mutation_hash": outcome["recall_event_mutation_hash"],
        "recall_merkle_root": outcome["recall_merkle_root"],
        "security_closure_sha256": outcome["security_closure_sha256"],
        "outcome_id": outcome["outcome_id"],
        "outcome_event_id": event["event_id"],
        "outcome_event_mutation_hash": event["mutation_hash"],
    }
    for name, value in expected.items():
        _require(
            body.get(name) == value, reason, f"body_json.{name} does not bind", f"{where}.body_json.{name}"
        )
    # aimos: a body that states the reward sign must state the row's
    _require(
        "reward_sign" not in body or _same(body["reward_sign"], sign),
        reason,
        "body_json.reward_sign is not the row's reward_sign",
        f"{where}.body_json.reward_sign",
    )
    return valence


def _check_terminal(
    b: dict[str, Any], outcome: dict[str, Any], event: dict[str, Any], valence: dict[str, Any]
) -> dict[str, Any]:
    terminal = _obj(b.get("terminal"))
    kind = terminal.get("kind") if terminal is not None else None
    _require(
        terminal is not None and isinstance(kind, str) and kind in TERMINAL_KINDS,
        TERMINAL_KIND_INVALID,
        "terminal.kind is not one of the three terminal kinds",
        "bundle.terminal.kind",
    )
    assert terminal is not None
    if kind == OCCURRENCE_OBSERVATION:
        _check_observation(b, terminal, outcome, event)
    elif kind == SIGNED_NOOP:
        _check_noop(b, terminal, outcome, valence)
    else:
        _check_transition(b, terminal, outcome, valence)
    return terminal


def _terminal_event(terminal: dict[str, Any], reason: str) -> tuple[dict[str, Any], dict[str, Any]]:
    where = "bundle.terminal.event"
    event = _obj(terminal.get("event"))
    _require(event is not None, reason, "terminal.event is not an object", where)
    assert event is not None
    _require(_is_uuid(event.get("event_id")), reason, "terminal event_id is not a UUID", f"{where}.event_id")
    metadata = _obj(event.get("metadata"))
    _require(metadata is not None, reason, "terminal event metadata is not an object", f"{where}.metadata")
    assert metadata is not None
    _require(
        metadata.get("projection_appended") is False,
        reason,
        "projection_appended must be false",
        f"{where}.metadata.projection_appended",
    )
    return event, metadata


def _check_observation(
    b: dict[str, Any], terminal: dict[str, Any], outcome: dict[str, Any], event: dict[str, Any]
) -> None:
    reason, where = OBSERVATION_TERMINAL_INVALID, "bundle.terminal"
    _require(
        outcome["target_scope"] == OCCURRENCE_OBSERVATION,
        reason,
        "an observation terminal needs target_scope occurrence_observation",
        "bundle.outcome_evidence.target_scope",
    )
    _require(
        b.get("cognitive_projection") is None,
        reason,
        "an observation appends no projection",
        "bundle.cognitive_projection",
    )
    terminal_event, metadata = _terminal_event(terminal, reason)
    _require(
        terminal_event.get("operation") == OBSERVATION_OPERATION,
        reason,
        f"operation is not {OBSERVATION_OPERATION}",
        f"{where}.event.operation",
    )
    _require(
        terminal_event.get("parent_event_id") == event["event_id"],
        reason,
        "the observation's parent is not the outcome event",
        f"{where}.event.parent_event_id",
    )
    for name in ("outcome_id", "occurrence_ref"):
        _require(
            metadata.get(name) == outcome[name],
            reason,
            f"metadata.{name} is not the outcome's",
            f"{where}.event.metadata.{name}",
        )


def _check_noop(
    b: dict[str, Any], terminal: dict[str, Any], outcome: dict[str, Any], valence: dict[str, Any]
) -> None:
    reason, where = NOOP_TERMINAL_INVALID, "bundle.terminal"
    _require(
        outcome["target_scope"] == PRINCIPAL_STATE,
        reason,
        "a signed no-op needs target_scope principal_state",
        "bundle.outcome_evidence.target_scope",
    )
    _require(
        b.get("cognitive_projection") is None,
        reason,
        "a signed no-op appends no projection",
        "bundle.cognitive_projection",
    )
    terminal_event, metadata = _terminal_event(terminal, reason)
    _require(
        terminal_event.get("operation") == NOOP_OPERATION,
        reason,
        f"operation is not {NOOP_OPERATION}",
        f"{where}.event.operation",
    )
    _require(
        metadata.get("valence_row_hash") == valence["row_hash"],
        reason,
        "metadata.valence_row_hash is not the valence row hash",
        f"{where}.event.metadata.valence_row_hash",
    )


def _check_transition(
    b: dict[str, Any], terminal: dict[str, Any], outcome: dict[str, Any], valence: dict[str, Any]
) -> None:
    reason, where = TRANSITION_PROVENANCE_INVALID, "bundle.terminal.reweight_provenance"
    _require(
        outcome["target_scope"] == PRINCIPAL_STATE,
        reason,
        "a transition needs target_scope principal_state",
        "bundle.outcome_evidence.target_scope",
    )
    provenance = _obj(terminal.get("reweight_provenance"))
    _require(provenance is not None, reason, "reweight_provenance is not an object", where)
    assert provenance is not None
    _require(
        provenance.get("event_type") == REWEIGHT, reason, "event_type is not REWEIGHT", f"{where}.event_type"
    )
    _require(
        provenance.get("memory_id") == outcome["memory_id"],
        reason,
        "the provenance is for another memory",
        f"{where}.memory_id",
    )
    body = _obj(provenance.get("body_json"))
    _require(
        body is not None and body.get("valence_row_hash") == valence["row_hash"],
        reason,
        "body_json.valence_row_hash is not the valence row hash",
        f"{where}.body_json.valence_row_hash",
    )
    sigma = provenance.get("mutation_hash")
    _require(_is_hex64(sigma), reason, "mutation_hash is not 64-hex", f"{where}.mutation_hash")

    reason, where = PROJECTION_BINDING_INVALID, "bundle.cognitive_projection"
    projection = _obj(b.get("cognitive_projection"))
    _require(projection is not None, reason, "a transition needs a cognitive_projection object", where)
    assert projection is not None
    _require(
        projection.get("memory_id") == outcome["memory_id"],
        reason,
        "the projection is for another memory",
        f"{where}.memory_id",
    )
    _require(
        projection.get("provenance_mutation_hash") == sigma,
        reason,
        "provenance_mutation_hash is not the REWEIGHT provenance's mutation hash",
        f"{where}.provenance_mutation_hash",
    )
    old, new = projection.get("old_weight_milli"), projection.get("new_weight_milli")
    for name, value in (("old_weight_milli", old), ("new_weight_milli", new)):
        _require(
            _int(value) and WEIGHT_MIN_MILLI <= value <= WEIGHT_MAX_MILLI,
            reason,
            f"{name} is not an integer in {WEIGHT_MIN_MILLI}..{WEIGHT_MAX_MILLI}",
            f"{where}.{name}",
        )
    _require(old != new, reason, "a transition must change the weight", f"{where}.new_weight_milli")
    for name in ("projection_hash", "transition_hash"):
        _require(_is_hex64(projection.get(name)), reason, f"{name} is not 64-hex", f"{where}.{name}")
    prev = projection.get("prev_projection_hash")
    _require(
        prev is None or _is_hex64(prev),
        reason,
        "prev_projection_hash is neither null nor 64-hex",
        f"{where}.prev_projection_hash",
    )
    encoded = projection.get("transition_signature_b64u")
    try:
        signature = b64u_decode(encoded) if isinstance(encoded, str) else b""
    except AimosError:
        signature = b""
    _require(
        len(signature) == 64,
        reason,
        "transition_signature_b64u is not a canonical base64url 64-byte signature",
        f"{where}.transition_signature_b64u",
    )

    assert isinstance(old, int) and isinstance(new, int) and isinstance(sigma, str)
    memory_id: str = outcome["memory_id"]
    projection_hash = commitments.projection_hash(
        memory_id, old, new, bytes.fromhex(sigma), bytes.fromhex(prev) if prev is not None else None
    )
    _require(
        projection_hash.hex() == projection["projection_hash"],
        PROJECTION_HASH_INVALID,
        "projection_hash does not recompute (aimos.cwc/v1)",
        f"{where}.projection_hash",
    )
    company: str = b["company_id"]
    transition = commitments.transition_commitment(company, memory_id, old, new, bytes.fromhex(sigma))
    _require(
        transition.hex() == projection["transition_hash"],
        TRANSITION_HASH_INVALID,
        "transition_hash does not recompute (aimos.cognitive-transition/v2)",
        f"{where}.transition_hash",
    )


# --- P2 witness -----------------------------------------------------------------------------------
def _check_witness_commitment(witness: Any) -> None:
    reason, where = WITNESS_COMMITMENT_INVALID, "witness"
    w = _obj(witness)
    _require(w is not None, reason, "the witness is not a JSON object", where)
    assert w is not None
    fmt = _obj(w.get("format"))
    _require(
        fmt is not None
        and set(fmt) == set(WITNESS_FORMAT)
        and all(_same(fmt[k], v) for k, v in WITNESS_FORMAT.items()),
        reason,
        "format is not the mutation-witness/v1 format object",
        "witness.format",
    )
    claimed = w.get("witness_sha256")
    _require(_is_hex64(claimed), reason, "witness_sha256 is not lowercase 64-hex", "witness.witness_sha256")
    try:
        body = canonical_json({k: v for k, v in w.items() if k != "witness_sha256"})
    except AimosError as exc:
        raise _Fail(reason, f"the witness does not canonicalize ({exc.reason})", where) from None
    _require(
        _sha256_hex(vocabulary.V2_MUTATION_WITNESS + body) == claimed,
        reason,
        "witness_sha256 does not recompute",
        "witness.witness_sha256",
    )


class _Trust:
    def __init__(self, reason: str | None, detail: str | None, signatures: int) -> None:
        self.reason = reason
        self.detail = detail
        self.signatures = signatures


def _verify_trust_context(trust_context: Any, expected_master_fingerprint: str | None) -> _Trust:
    try:
        result = verify_recall_envelope(trust_context, expected_master_fingerprint)
    except Exception as exc:  # the recall verifier promises not to raise; stay closed if it does
        return _Trust(TRUST_CONTEXT_INVALID, f"recall verifier raised {type(exc).__name__}", 0)
    signatures = result.signatures_verified if _int(result.signatures_verified) else 0
    if result.verdict == "valid" and result.reason is None:
        return _Trust(None, None, signatures)
    inner = f"trust context: {result.reason}" + (f" ({result.detail})" if result.detail else "")
    if result.where:
        inner += f" at {result.where}"
    if isinstance(result.reason, str) and result.reason in RECALL_TRUST_CONTEXT_REASONS:
        return _Trust(result.reason, inner, signatures)
    return _Trust(TRUST_CONTEXT_INVALID, inner, signatures)


def _envelope_hash(trust_context: dict[str, Any]) -> str | None:
    """The V2 bundle hash recomputed from the envelope header and its object entries."""
    try:
        objects = trust_context["objects"]
        fingerprint = trust_context["expected_master_fingerprint"]
        if not isinstance(objects, list) or not _is_hex64(fingerprint):
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


class _Housekeeper:
    def __init__(self, body: dict[str, Any]) -> None:
        self.agent_id: object = body.get("agent_id")
        self.valid_from_ms = _instant_ms(body.get("valid_from"))
        self.valid_until_ms = _instant_ms(body.get("valid_until"))
        self.cert_fingerprint: object = body.get("cert_fingerprint")
        self.public_key: object = body.get("public_key_b64u")
        self.certificate: object = body.get("certificate")
        self.company: object = body.get("company_id")

    def usable(self) -> bool:
        return (
            self.agent_id == HOUSEKEEPER
            and self.valid_from_ms is not None
            and self.valid_until_ms is not None
            and _is_hex64(self.cert_fingerprint)
            and _text(self.public_key)
            and _text(self.certificate)
        )

    def within(self, ts: int) -> bool:
        assert self.valid_from_ms is not None and self.valid_until_ms is not None
        return self.valid_from_ms <= ts * 1000 <= self.valid_until_ms


class _Count:
    """Signatures verified so far (reported on failure too)."""

    def __init__(self) -> None:
        self.n = 0


def _check_witness(
    checked: _Checked, witness: dict[str, Any], trust_context: Any, expected: str | None, count: _Count
) -> None:
    """Scope, then the housekeeper's signatures, counting each one verified in ``count``."""
    reason = WITNESS_SCOPE_INVALID
    _require(
        isinstance(trust_context, dict),
        reason,
        "the trust context is not a JSON object",
        "trust_context",
    )
    assert isinstance(trust_context, dict)
    _require(
        witness.get("mutation_bundle_sha256") == checked.bundle["bundle_sha256"],
        reason,
        "the witness names another mutation bundle",
        "witness.mutation_bundle_sha256",
    )
    trust_hash = _envelope_hash(trust_context)
    _require(
        trust_hash is not None
        and trust_hash == trust_context.get("bundle_sha256")
        and witness.get("trust_context_bundle_sha256") == trust_hash,
        reason,
        "the witness names another trust context",
        "witness.trust_context_bundle_sha256",
    )
    _require(
        _is_hex64(expected) and witness.get("expected_master_fingerprint") == expected,
        reason,
        "the witness names another master fingerprint",
        "witness.expected_master_fingerprint",
    )
    epochs = [
        o.get("body")
        for o in trust_context.get("objects") or []
        if isinstance(o, dict) and o.get("kind") == HOUSEKEEPER_EPOCH_KIND
    ]
    epoch = epochs[0] if len(epochs) == 1 else None
    _require(
        isinstance(epoch, dict),
        reason,
        "the trust context holds no single housekeeper identity epoch",
        "trust_context.objects",
    )
    assert isinstance(epoch, dict)
    hk = _Housekeeper(epoch)
    _require(hk.usable(), reason, "the housekeeper identity epoch is incomplete", "trust_context.objects")
    _require(
        trust_context.get("company_id") == checked.company and hk.company == checked.company,
        reason,
        "the trust context is for another company",
        "trust_context.company_id",
    )

    _check_signed(
        _event_proof_failure(witness.get("outcome_event"), checked.event, hk, checked.company),
        OUTCOME_EVENT_SIGNATURE_INVALID,
        "witness.outcome_event",
    )
    count.n += 1
    _check_signed(
        _valence_proof_failure(witness.get("valence_evidence"), checked, hk),
        VALENCE_SIGNATURE_INVALID,
        "witness.valence_evidence",
    )
    count.n += 1
    proof = _obj(witness.get("terminal_proof")) or {}
    if checked.kind == AUTHORIZED_TRANSITION:
        provenance = _obj(checked.terminal.get("reweight_provenance")) or {}
        _check_signed(
            (
                _provenance_proof_failure(proof.get("provenance"), provenance, checked, hk)
                if proof.get("kind") == REWEIGHT_PROOF_KIND
                else "terminal_proof.kind is not reweight_provenance"
            ),
            PROVENANCE_SIGNATURE_INVALID,
            "witness.terminal_proof.provenance",
        )
        count.n += 1
        projection = _obj(checked.bundle.get("cognitive_projection")) or {}
        signature = b64u_decode(projection["transition_signature_b64u"])
        _require(
            verify(str(hk.public_key), bytes.fromhex(projection["transition_hash"]), signature),
            TRANSITION_SIGNATURE_INVALID,
            "the transition signature does not verify under the housekeeper key",
            "bundle.cognitive_projection.transition_signature_b64u",
        )
        count.n += 1
        return
    terminal_event = _obj(checked.terminal.get("event")) or {}
    _check_signed(
        (
            _event_proof_failure(proof.get("event"), terminal_event, hk, checked.company)
            if proof.get("kind") == TERMINAL_EVENT_PROOF_KIND
            else "terminal_proof.kind is not terminal_event"
        ),
        TERMINAL_SIGNATURE_INVALID,
        "witness.terminal_proof.event",
    )
    count.n += 1


def _check_signed(failure: str | None, reason: str, where: str) -> None:
    if failure is not None:
        raise _Fail(reason, failure, where)


def _first(checks: tuple[tuple[Callable[[], bool], str], ...]) -> str | None:
    """The message of the first check that does not hold (a check that raises does not hold)."""
    for check, message in checks:
        try:
            ok = check()
        except (AimosError, KeyError, TypeError, ValueError, AttributeError, OverflowError, struct.error):
            ok = False
        if not ok:
            return message
    return None


def _same_signer(proof: dict[str, Any], agent_field: str, from_field: str, hk: _Housekeeper) -> bool:
    """The proof names the trust context's housekeeper epoch (its end too, when it states one)."""
    from_ms = _instant_ms(proof.get(from_field))
    until_field = from_field.replace("_from", "_until")
    return (
        proof.get(agent_field) == HOUSEKEEPER
        and from_ms is not None
        and from_ms == hk.valid_from_ms
        and (until_field not in proof or _instant_ms(proof[until_field]) == hk.valid_until_ms)
        and proof.get("cert_fingerprint") == hk.cert_fingerprint
        and proof.get("signer_public_key_b64u") == hk.public_key
        and proof.get("signer_certificate") == hk.certificate
    )


def _signature_holds(hk: _Housekeeper, body: Any, nonce: Any, ts: Any, signature_b64u: Any) -> bool:
    """Payload form over the signed body under the housekeeper key."""
    if not _text(nonce) or not _int(ts) or not isinstance(signature_b64u, str):
        return False
    signature = b64u_decode(signature_b64u)
    return len(signature) == 64 and verify(str(hk.public_key), payload_message(body, nonce, ts), signature)


def _ts_ok(ts: object, hk: _Housekeeper) -> bool:
    return _int(ts) and ts >= 0 and hk.within(ts)


def _event_proof_failure(
    proof_value: Any, summary: dict[str, Any], hk: _Housekeeper, company: str
) -> str | None:
    """Why a full signed event proof does not prove ``summary``; None when it does."""
    proof = _obj(proof_value)
    if proof is None:
        return "the event proof is not an object"
    body = _obj(proof.get("signed_body"))
    if body is None:
        return "signed_body is not an object"
    ts: Any = proof.get("ts_signed")

    def content_hash() -> str:
        return _sha256_hex(canonical_json(body))

    def link_holds() -> bool:
        link = commitments.event_link_hash(
            bytes.fromhex(proof["prev_mutation_hash"]), bytes.fromhex(content_hash()), proof["nonce"], ts
        )
        return (
            _is_hex64(proof["prev_mutation_hash"])
            and _text(proof["nonce"])
            and link.hex() == proof["mutation_hash"]
        )

    same_fields = (
        "event_id",
        "company_id",
        "subject_agent_id",
        "signer_agent_id",
        "cert_fingerprint",
        "identity_tier",
        "authority_kind",
        "operation",
        "key",
        "metadata",
        "parent_event_id",
        "ledger_seq",
        "prev_mutation_hash",
        "ts_signed",
    )
    return _first(
        (
            (
                lambda: _is_uuid(proof.get("event_id")) and proof.get("event_id") == summary.get("event_id"),
                "event_id is not the bundle's",
            ),
            (
                lambda: all(
                    _same(proof.get(f), summary.get(f))
                    for f in ("operation", "parent_event_id", "mutation_hash")
                ),
                "operation, parent or mutation hash is not the bundle's",
            ),
            (
                lambda: (
                    _obj(proof.get("metadata")) is not None
                    and _same(proof.get("metadata"), summary.get("metadata"))
                ),
                "metadata is not the bundle's",
            ),
            (
                lambda: (
                    proof.get("proof_required") is True
                    and _int(proof.get("ledger_version"))
                    and proof.get("ledger_version") == 1
                ),
                "not a proof-required ledger_version 1 event",
            ),
            (
                lambda: _same_signer(proof, "signer_agent_id", "signer_valid_from", hk),
                "the signer is not the trust context's housekeeper epoch",
            ),
            (lambda: proof.get("company_id") == company, "the event is for another company"),
            (
                lambda: (
                    all(_same(body.get(f), proof.get(f)) for f in same_fields)
                    and _instant_ms(body.get("signer_valid_from"))
                    == _instant_ms(proof.get("signer_valid_from"))
                ),
                "signed_body does not match the proof's fields",
            ),
            (
                lambda: _int(proof.get("ledger_seq")) and proof["ledger_seq"] >= 1,
                "ledger_seq is not a positive integer",
            ),
            (lambda: _ts_ok(ts, hk), "ts_signed is outside the housekeeper epoch"),
            (lambda: _instant_ms(proof.get("timestamp")) == ts * 1000, "timestamp is not ts_signed"),
            (lambda: proof.get("content_hash") == content_hash(), "content_hash does not recompute"),
            (link_holds, "mutation_hash does not recompute (event link)"),
            (
                lambda: _signature_holds(hk, body, proof.get("nonce"), ts, proof.get("signature_b64u")),
                "the housekeeper signature does not verify",
            ),
        )
    )


def _valence_proof_failure(proof_value: Any, checked: _Checked, hk: _Housekeeper) -> str | None:
    proof = _obj(proof_value)
    if proof is None:
        return "the valence proof is not an object"
    body = _obj(proof.get("body_json"))
    if body is None:
        return "body_json is not an object"
    summary = checked.valence
    ts: Any = proof.get("ts_signed")

    def content_hash() -> str:
        return _sha256_hex(canonical_json(body))

    def row_holds() -> bool:
        prev = proof.get("prev_hash")
        if prev is not None and not _is_hex64(prev):
            return False
        row = commitments.provenance_mutation_hash(
            bytes.fromhex(content_hash()),
            bytes.fromhex(prev) if prev is not None else None,
            proof["nonce"],
            ts,
        )
        return _text(proof["nonce"]) and row.hex() == proof.get("row_hash")

    return _first(
        (
            (lambda: proof.get("proof_required") is True, "not a proof-required valence row"),
            (
                lambda: _same_signer(proof, "signer_agent_id", "signer_valid_from", hk),
                "the signer is not the trust context's housekeeper epoch",
            ),
            (
                lambda: (
                    proof.get("row_hash") == summary.get("row_hash")
                    and _same(proof.get("reward_sign"), summary.get("reward_sign"))
                ),
                "row hash or reward sign is not the bundle's",
            ),
            (lambda: _same(body, summary.get("body_json")), "body_json is not the bundle's"),
            (
                lambda: (
                    proof.get("memory_id") == checked.outcome["memory_id"]
                    and proof.get("company_id") == checked.company
                ),
                "the row is for another memory or company",
            ),
            (
                lambda: (
                    body.get("event_type") == VALENCE
                    and body.get("company_id") == checked.company
                    and _same(body.get("reward_sign"), proof.get("reward_sign"))
                ),
                "the signed body is not this company's VALENCE row with this reward sign",
            ),
            (
                lambda: (
                    _same(body.get("ts_signed"), ts)
                    and body.get("cert_fingerprint") == proof.get("cert_fingerprint")
                    and body.get("signer_agent_id") == proof.get("signer_agent_id")
                    and ("identity_tier" not in body or body["identity_tier"] == proof.get("identity_tier"))
                    and (
                        "context_hash" not in proof or _same(proof["context_hash"], body.get("context_hash"))
                    )
                    and _instant_ms(body.get("signer_valid_from"))
                    == _instant_ms(proof.get("signer_valid_from"))
                ),
                "the signed body does not name the proof's signer and time",
            ),
            (lambda: _ts_ok(ts, hk), "ts_signed is outside the housekeeper epoch"),
            (lambda: proof.get("content_hash") == content_hash(), "content_hash does not recompute"),
            (row_holds, "row_hash does not recompute"),
            (
                lambda: _signature_holds(hk, body, proof.get("nonce"), ts, proof.get("signature_b64u")),
                "the housekeeper signature does not verify",
            ),
        )
    )


def _provenance_proof_failure(
    proof_value: Any, summary: dict[str, Any], checked: _Checked, hk: _Housekeeper
) -> str | None:
    proof = _obj(proof_value)
    if proof is None:
        return "the provenance proof is not an object"
    body = _obj(proof.get("body_json"))
    if body is None:
        return "body_json is not an object"
    ts: Any = proof.get("ts_signed")

    def content_hash() -> str:
        return _sha256_hex(canonical_json(body))

    def mutation_holds() -> bool:
        prev = proof.get("prev_mutation_hash")
        if prev is not None and not _is_hex64(prev):
            return False
        mutation = commitments.provenance_mutation_hash(
            bytes.fromhex(content_hash()),
            bytes.fromhex(prev) if prev is not None else None,
            proof["nonce"],
            ts,
        )
        return _text(proof["nonce"]) and mutation.hex() == proof.get("mutation_hash")

    def body_names_signer() -> bool:
        # optional in the body; when named they must be the proof's
        return (
            ("cert_fingerprint" not in body or body["cert_fingerprint"] == proof.get("cert_fingerprint"))
            and ("signer_agent_id" not in body or body["signer_agent_id"] == proof.get("agent_id"))
            and (
                "signer_valid_from" not in body
                or _instant_ms(body["signer_valid_from"]) == _instant_ms(proof.get("agent_valid_from"))
            )
        )

    return _first(
        (
            (
                lambda: all(
                    _same(proof.get(f), summary.get(f))
                    for f in ("provenance_id", "memory_id", "event_type", "mutation_hash")
                ),
                "provenance id, memory, event type or mutation hash is not the bundle's",
            ),
            (lambda: _same(body, summary.get("body_json")), "body_json is not the bundle's"),
            (
                lambda: proof.get("event_type") == REWEIGHT and body.get("event_type") == REWEIGHT,
                "not a REWEIGHT provenance row",
            ),
            (lambda: proof.get("backfilled") is False, "a backfilled row proves nothing"),
            (
                lambda: proof.get("is_genesis") is (proof.get("prev_mutation_hash") is None),
                "is_genesis contradicts prev_mutation_hash",
            ),
            (
                lambda: _same_signer(proof, "agent_id", "agent_valid_from", hk),
                "the signer is not the trust context's housekeeper epoch",
            ),
            (
                lambda: (
                    body.get("memory_id") == checked.outcome["memory_id"]
                    and body.get("company_id") == checked.company
                ),
                "the signed body does not name this memory and company",
            ),
            (body_names_signer, "the signed body names another signer"),
            (
                lambda: (
                    proof.get("sig_form_version") == 1
                    and proof.get("request_sig_form") == 1
                    and _int(proof.get("sig_form_version"))
                    and _int(proof.get("request_sig_form"))
                ),
                "not a payload-form (v1) provenance signature",
            ),
            (lambda: _ts_ok(ts, hk), "ts_signed is outside the housekeeper epoch"),
            (lambda: proof.get("content_hash") == content_hash(), "content_hash does not recompute"),
            (mutation_holds, "mutation_hash does not recompute"),
            (
                lambda: _signature_holds(hk, body, proof.get("nonce"), ts, proof.get("signature_b64u")),
                "the housekeeper signature does not verify",
            ),
        )
    )
