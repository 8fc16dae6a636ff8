"""The 12 structural checks of V2 mutation-outcome evidence, in the reference's check order
(PROTOCOL-NOTES section 5): the bundle commitment, the recall binding, the outcome, the outcome
event, the valence row, the terminal (observation, signed no-op or transition) and the projection
and transition hashes. Each check fails with its closed reason and the path it read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from aimos import vocabulary
from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json
from aimos.errors import AimosError
from aimos.verify.kit import (
    canonical_sha256_hex,
    check,
    fail,
    is_hex64,
    is_int,
    is_text,
    is_uuid,
    require_dict,
    same,
    same_object,
    sha256_hex,
    signature_bytes,
)
from aimos.verify.v2.mutation_words import (
    BUNDLE_COMMITMENT_INVALID,
    BUNDLE_FORMAT,
    NOOP_TERMINAL_INVALID,
    OBSERVATION_TERMINAL_INVALID,
    OUTCOME_EVENT_INVALID,
    OUTCOME_SCHEMA_INVALID,
    PROJECTION_BINDING_INVALID,
    PROJECTION_HASH_INVALID,
    RECALL_BINDING_INVALID,
    TARGET_SCOPES,
    TERMINAL_KIND_INVALID,
    TERMINAL_KINDS,
    TRANSITION_HASH_INVALID,
    TRANSITION_PROVENANCE_INVALID,
    VALENCE_BINDING_INVALID,
    WEIGHT_MAX_MILLI,
    WEIGHT_MIN_MILLI,
)
from aimos.vocabulary import (
    MUTATION_OUTCOME_OPERATION,
    OBSERVATION_RETAINED_OPERATION,
    REWEIGHT_EVENT,
    WEIGHT_UNCHANGED_OPERATION,
)
from aimos.vocabulary import TARGET_OCCURRENCE_OBSERVATION as OCCURRENCE_OBSERVATION
from aimos.vocabulary import TARGET_PRINCIPAL_STATE as PRINCIPAL_STATE
from aimos.vocabulary import TERMINAL_AUTHORIZED_TRANSITION as AUTHORIZED_TRANSITION
from aimos.vocabulary import TERMINAL_SIGNED_NOOP as SIGNED_NOOP
from aimos.vocabulary import V2_MUTATION_OUTCOME_SCHEMA as OUTCOME_SCHEMA

OUTCOME_UUIDS = ("memory_id", "recall_event_id", "outcome_id")
OUTCOME_HASHES = (
    "live_content_hash",
    "occurrence_ref",
    "recall_event_mutation_hash",
    "recall_merkle_root",
    "security_closure_sha256",
)
# the recall receipt's fields (receipt.X / receipt.evidence.X) -> the outcome field each must equal
RECEIPT_BINDINGS = (
    ("", "event_id", "recall_event_id"),
    ("", "mutation_hash", "recall_event_mutation_hash"),
    ("", "merkle_root", "recall_merkle_root"),
    ("", "security_closure_sha256", "security_closure_sha256"),
    ("evidence.", "memory_id", "memory_id"),
    ("evidence.", "live_content_hash", "live_content_hash"),
    ("evidence.", "occurrence_ref", "occurrence_ref"),
)
EVENT_METADATA_BINDINGS = ("target_scope", "memory_id", "live_content_hash", "occurrence_ref")
# the valence body field -> the outcome (or, prefixed "event.", outcome event) field it binds
VALENCE_BINDINGS = (
    ("target_scope", "target_scope"),
    ("memory_id", "memory_id"),
    ("target_live_content_hash", "live_content_hash"),
    ("target_occurrence_ref", "occurrence_ref"),
    ("recall_event_id", "recall_event_id"),
    ("recall_event_mutation_hash", "recall_event_mutation_hash"),
    ("recall_merkle_root", "recall_merkle_root"),
    ("security_closure_sha256", "security_closure_sha256"),
    ("outcome_id", "outcome_id"),
    ("outcome_event_id", "event.event_id"),
    ("outcome_event_mutation_hash", "event.mutation_hash"),
)


class Checked:
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


def bind(
    source: Mapping[str, Any], expected: Mapping[str, object], reason: str, where: str, detail: str
) -> None:
    """Each ``source[name]`` equals ``expected[name]``, in order; ``detail`` names the field as
    ``{name}``, and the failure is at ``where.name``."""
    for name, value in expected.items():
        check(source.get(name) == value, reason, detail.format(name=name), f"{where}.{name}")


def commitment(
    value: dict[str, Any], field: str, domain: bytes, reason: str, where: str, unencodable_at: str
) -> None:
    """``value[field] = H(domain ‖ canonical(value without field))``, a lowercase 64-hex; a value
    without canonical bytes fails at ``unencodable_at``."""
    claimed = value.get(field)
    check(is_hex64(claimed), reason, f"{field} is not lowercase 64-hex", f"{where}.{field}")
    try:
        body = canonical_json({k: v for k, v in value.items() if k != field})
    except AimosError as exc:
        fail(reason, f"the {where} does not canonicalize ({exc.reason})", unencodable_at)
    check(sha256_hex(domain + body) == claimed, reason, f"{field} does not recompute", f"{where}.{field}")


def check_structure(bundle: Any) -> Checked:
    b = require_dict(bundle, BUNDLE_COMMITMENT_INVALID, "the bundle is not a JSON object", "bundle")
    # 1. the format, the bundle id and the bundle commitment
    check(
        same_object(b.get("format"), BUNDLE_FORMAT),
        BUNDLE_COMMITMENT_INVALID,
        "format is not the mutation-evidence/v2 format object",
        "bundle.format",
    )
    check(
        is_text(b.get("bundle_id")),
        BUNDLE_COMMITMENT_INVALID,
        "bundle_id is not a non-empty string",
        "bundle.bundle_id",
    )
    commitment(
        b,
        "bundle_sha256",
        vocabulary.V2_MUTATION_BUNDLE,
        BUNDLE_COMMITMENT_INVALID,
        "bundle",
        "bundle.bundle_sha256",
    )

    # 2. recall_evidence_sha256 = H(canonical recall_receipt); the bundle canonicalized, so it does
    check(
        is_hex64(b.get("recall_evidence_sha256"))
        and b.get("recall_evidence_sha256") == canonical_sha256_hex(b.get("recall_receipt")),
        RECALL_BINDING_INVALID,
        "recall_evidence_sha256 is not H(canonical recall_receipt)",
        "bundle.recall_evidence_sha256",
    )
    outcome = check_outcome(b)
    check_recall_receipt(b, outcome)
    event = check_outcome_event(b, outcome)
    valence = check_valence(b, outcome, event)
    terminal = check_terminal(b, outcome, event, valence)
    return Checked(b, outcome, event, valence, terminal)


def check_outcome(b: dict[str, Any]) -> dict[str, Any]:
    reason, where = OUTCOME_SCHEMA_INVALID, "bundle.outcome_evidence"
    company = b.get("company_id")
    check(is_text(company), reason, "company_id must be a non-empty string", "bundle.company_id")
    outcome = require_dict(b.get("outcome_evidence"), reason, "outcome_evidence is not an object", where)
    check(outcome.get("schema") == OUTCOME_SCHEMA, reason, "outcome schema is not outcome-evidence/v2", where)
    check(outcome.get("company_id") == company, reason, "outcome company is not the bundle's", where)
    for name in OUTCOME_UUIDS:
        check(is_uuid(outcome.get(name)), reason, f"{name} is not a UUID", f"{where}.{name}")
    for name in OUTCOME_HASHES:
        check(is_hex64(outcome.get(name)), reason, f"{name} is not lowercase 64-hex", f"{where}.{name}")
    check(
        outcome.get("target_scope") in TARGET_SCOPES,
        reason,
        "target_scope is neither principal_state nor occurrence_observation",
        f"{where}.target_scope",
    )
    return outcome


def check_recall_receipt(b: dict[str, Any], outcome: dict[str, Any]) -> None:
    reason, where = RECALL_BINDING_INVALID, "bundle.recall_receipt"
    receipt = require_dict(b.get("recall_receipt"), reason, "recall_receipt is not an object", where)
    evidence = require_dict(
        receipt.get("evidence"), reason, "recall_receipt.evidence is not an object", f"{where}.evidence"
    )
    for prefix, name, outcome_name in RECEIPT_BINDINGS:
        source = evidence if prefix else receipt
        check(
            source.get(name) == outcome[outcome_name],
            reason,
            f"the recall receipt's {name} is not the outcome's {outcome_name}",
            f"{where}.{prefix}{name}",
        )


def check_outcome_event(b: dict[str, Any], outcome: dict[str, Any]) -> dict[str, Any]:
    reason, where = OUTCOME_EVENT_INVALID, "bundle.outcome_event"
    event = require_dict(b.get("outcome_event"), reason, "outcome_event is not an object", where)
    check(is_uuid(event.get("event_id")), reason, "event_id is not a UUID", f"{where}.event_id")
    check(
        is_hex64(event.get("mutation_hash")), reason, "mutation_hash is not 64-hex", f"{where}.mutation_hash"
    )
    check(
        event.get("operation") == MUTATION_OUTCOME_OPERATION,
        reason,
        f"operation is not {MUTATION_OUTCOME_OPERATION}",
        f"{where}.operation",
    )
    check(
        event.get("parent_event_id") == outcome["recall_event_id"],
        reason,
        "the outcome event's parent is not the recall event",
        f"{where}.parent_event_id",
    )
    metadata = require_dict(event.get("metadata"), reason, "metadata is not an object", f"{where}.metadata")
    expected = {name: outcome[name] for name in EVENT_METADATA_BINDINGS}
    bind(metadata, expected, reason, f"{where}.metadata", "metadata.{name} is not the outcome's")
    return event


def check_valence(b: dict[str, Any], outcome: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
    reason, where = VALENCE_BINDING_INVALID, "bundle.valence_evidence"
    valence = require_dict(b.get("valence_evidence"), reason, "valence_evidence is not an object", where)
    check(is_hex64(valence.get("row_hash")), reason, "row_hash is not 64-hex", f"{where}.row_hash")
    sign = valence.get("reward_sign")
    check(is_int(sign) and sign in (-1, 1), reason, "reward_sign is not -1 or 1", f"{where}.reward_sign")
    body = require_dict(valence.get("body_json"), reason, "body_json is not an object", f"{where}.body_json")
    expected: dict[str, object] = {"evidence_schema": OUTCOME_SCHEMA}
    for name, source in VALENCE_BINDINGS:
        expected[name] = event[source[6:]] if source.startswith("event.") else outcome[source]
    bind(body, expected, reason, f"{where}.body_json", "body_json.{name} does not bind")
    # aimos: a body that states the reward sign must state the row's
    check(
        "reward_sign" not in body or same(body["reward_sign"], sign),
        reason,
        "body_json.reward_sign is not the row's reward_sign",
        f"{where}.body_json.reward_sign",
    )
    return valence


def check_terminal(
    b: dict[str, Any], outcome: dict[str, Any], event: dict[str, Any], valence: dict[str, Any]
) -> dict[str, Any]:
    terminal = b.get("terminal")
    kind = terminal.get("kind") if isinstance(terminal, dict) else None
    check(
        isinstance(terminal, dict) and isinstance(kind, str) and kind in TERMINAL_KINDS,
        TERMINAL_KIND_INVALID,
        "terminal.kind is not one of the three terminal kinds",
        "bundle.terminal.kind",
    )
    assert isinstance(terminal, dict) and isinstance(kind, str)
    if kind == AUTHORIZED_TRANSITION:
        check_transition(b, terminal, outcome, valence)
    else:
        values = {"outcome": outcome, "event": event, "valence": valence}
        check_signed_terminal(b, terminal, outcome, SIGNED_TERMINALS[kind], values)
    return terminal


class SignedTerminal(NamedTuple):
    """How an observation or a signed no-op binds: its reason, target scope, the words its
    details use, its event's operation, and the terminal event's (``event_bindings``) and its
    metadata's fields, each equal to ``(source, field)`` of the outcome, outcome event or valence
    row, with the detail its failure gives."""

    reason: str
    target_scope: str
    needs: str
    appends: str
    operation: str
    event_bindings: tuple[tuple[str, tuple[str, str], str], ...]
    metadata_bindings: tuple[tuple[str, tuple[str, str], str], ...]


SIGNED_TERMINALS: Mapping[str, SignedTerminal] = {
    OCCURRENCE_OBSERVATION: SignedTerminal(
        OBSERVATION_TERMINAL_INVALID,
        OCCURRENCE_OBSERVATION,
        "an observation terminal",
        "an observation",
        OBSERVATION_RETAINED_OPERATION,
        (("parent_event_id", ("event", "event_id"), "the observation's parent is not the outcome event"),),
        (
            ("outcome_id", ("outcome", "outcome_id"), "metadata.outcome_id is not the outcome's"),
            ("occurrence_ref", ("outcome", "occurrence_ref"), "metadata.occurrence_ref is not the outcome's"),
        ),
    ),
    SIGNED_NOOP: SignedTerminal(
        NOOP_TERMINAL_INVALID,
        PRINCIPAL_STATE,
        "a signed no-op",
        "a signed no-op",
        WEIGHT_UNCHANGED_OPERATION,
        (),
        (
            (
                "valence_row_hash",
                ("valence", "row_hash"),
                "metadata.valence_row_hash is not the valence row hash",
            ),
        ),
    ),
}


def check_signed_terminal(
    b: dict[str, Any],
    terminal: dict[str, Any],
    outcome: dict[str, Any],
    spec: SignedTerminal,
    values: Mapping[str, Mapping[str, Any]],
) -> None:
    """An observation or a signed no-op: its target scope, no projection, and a terminal event
    with its operation whose fields and metadata bind the outcome (:data:`SIGNED_TERMINALS`)."""
    reason = spec.reason
    check(
        outcome["target_scope"] == spec.target_scope,
        reason,
        f"{spec.needs} needs target_scope {spec.target_scope}",
        "bundle.outcome_evidence.target_scope",
    )
    check(
        b.get("cognitive_projection") is None,
        reason,
        f"{spec.appends} appends no projection",
        "bundle.cognitive_projection",
    )
    where = "bundle.terminal.event"
    event = require_dict(terminal.get("event"), reason, "terminal.event is not an object", where)
    check(is_uuid(event.get("event_id")), reason, "terminal event_id is not a UUID", f"{where}.event_id")
    metadata = require_dict(
        event.get("metadata"), reason, "terminal event metadata is not an object", f"{where}.metadata"
    )
    check(
        metadata.get("projection_appended") is False,
        reason,
        "projection_appended must be false",
        f"{where}.metadata.projection_appended",
    )
    check(
        event.get("operation") == spec.operation,
        reason,
        f"operation is not {spec.operation}",
        f"{where}.operation",
    )
    for source, bindings, at in (
        (event, spec.event_bindings, where),
        (metadata, spec.metadata_bindings, f"{where}.metadata"),
    ):
        for name, (of, field), detail in bindings:
            check(source.get(name) == values[of][field], reason, detail, f"{at}.{name}")


def check_transition(
    b: dict[str, Any], terminal: dict[str, Any], outcome: dict[str, Any], valence: dict[str, Any]
) -> None:
    reason, where = TRANSITION_PROVENANCE_INVALID, "bundle.terminal.reweight_provenance"
    check(
        outcome["target_scope"] == PRINCIPAL_STATE,
        reason,
        "a transition needs target_scope principal_state",
        "bundle.outcome_evidence.target_scope",
    )
    provenance = require_dict(
        terminal.get("reweight_provenance"), reason, "reweight_provenance is not an object", where
    )
    check(
        provenance.get("event_type") == REWEIGHT_EVENT,
        reason,
        "event_type is not REWEIGHT",
        f"{where}.event_type",
    )
    check(
        provenance.get("memory_id") == outcome["memory_id"],
        reason,
        "the provenance is for another memory",
        f"{where}.memory_id",
    )
    body = provenance.get("body_json")
    check(
        isinstance(body, dict) and body.get("valence_row_hash") == valence["row_hash"],
        reason,
        "body_json.valence_row_hash is not the valence row hash",
        f"{where}.body_json.valence_row_hash",
    )
    sigma = provenance.get("mutation_hash")
    check(is_hex64(sigma), reason, "mutation_hash is not 64-hex", f"{where}.mutation_hash")

    reason, where = PROJECTION_BINDING_INVALID, "bundle.cognitive_projection"
    projection = require_dict(
        b.get("cognitive_projection"), reason, "a transition needs a cognitive_projection object", where
    )
    check(
        projection.get("memory_id") == outcome["memory_id"],
        reason,
        "the projection is for another memory",
        f"{where}.memory_id",
    )
    check(
        projection.get("provenance_mutation_hash") == sigma,
        reason,
        "provenance_mutation_hash is not the REWEIGHT provenance's mutation hash",
        f"{where}.provenance_mutation_hash",
    )
    old, new = projection.get("old_weight_milli"), projection.get("new_weight_milli")
    for name, value in (("old_weight_milli", old), ("new_weight_milli", new)):
        check(
            is_int(value, WEIGHT_MIN_MILLI, WEIGHT_MAX_MILLI),
            reason,
            f"{name} is not an integer in {WEIGHT_MIN_MILLI}..{WEIGHT_MAX_MILLI}",
            f"{where}.{name}",
        )
    check(old != new, reason, "a transition must change the weight", f"{where}.new_weight_milli")
    for name in ("projection_hash", "transition_hash"):
        check(is_hex64(projection.get(name)), reason, f"{name} is not 64-hex", f"{where}.{name}")
    prev = projection.get("prev_projection_hash")
    check(
        prev is None or is_hex64(prev),
        reason,
        "prev_projection_hash is neither null nor 64-hex",
        f"{where}.prev_projection_hash",
    )
    check(
        signature_bytes(projection.get("transition_signature_b64u")) is not None,
        reason,
        "transition_signature_b64u is not a canonical base64url 64-byte signature",
        f"{where}.transition_signature_b64u",
    )

    assert isinstance(old, int) and isinstance(new, int) and isinstance(sigma, str)
    memory_id: str = outcome["memory_id"]
    projection_hash = commitments.projection_hash(
        memory_id, old, new, bytes.fromhex(sigma), bytes.fromhex(prev) if prev is not None else None
    )
    check(
        projection_hash.hex() == projection["projection_hash"],
        PROJECTION_HASH_INVALID,
        "projection_hash does not recompute (aimos.cwc/v1)",
        f"{where}.projection_hash",
    )
    company: str = b["company_id"]
    transition = commitments.transition_commitment(company, memory_id, old, new, bytes.fromhex(sigma))
    check(
        transition.hex() == projection["transition_hash"],
        TRANSITION_HASH_INVALID,
        "transition_hash does not recompute (aimos.cognitive-transition/v2)",
        f"{where}.transition_hash",
    )
