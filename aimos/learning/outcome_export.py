"""MutMem V2 mutation-outcome bundles (`hom.aimos.mutmem-portable-mutation-evidence/v2`) from
aimos outcomes, with their P2 witness and trust context.

Two halves, as for the recall export (:mod:`aimos.recall.envelope`):

* at outcome time, inside the outcome's write transaction, :func:`recall_binding` finds the V2
  ``recall_receipt`` event of the recall the outcome rests on, and :func:`sign_valence_row` signs
  the one record aimos has no native counterpart for: the housekeeper's VALENCE row binding the
  outcome to that recall and to the outcome event (one Ed25519 signature). The writer
  (:mod:`aimos.learning.outcomes`) makes the outcome event the V2 outcome event (parent = the V2
  recall event, metadata naming the occurrence), names the valence row hash in the REWEIGHT body
  or the no-op event, and carries the signed row in the terminal event's metadata;
* :func:`build_outcome_export` reads those rows and assembles the bundle, the witness and the
  trust context (the V2 recall envelope of :func:`aimos.recall.envelope.build_recall_envelope`).
  It signs nothing: an outcome recorded before this module existed has no V2 binding and
  cannot be exported (:class:`V2OutcomeUnavailableError`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from aimos import vocabulary
from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json, json_loads
from aimos.crypto.encoding import b64u_encode, iso_ms
from aimos.crypto.messages import new_nonce, payload_message
from aimos.errors import OutcomeNotFoundError, V2OutcomeUnavailableError
from aimos.identity.epochs import epoch_at
from aimos.identity.master import master_row
from aimos.identity.signer import Signer
from aimos.ledger.events import read_event, read_provenance
from aimos.store.connection import Connection, resolve_uuid_prefix
from aimos.store.queries import learning as q
from aimos.store.queries.ledger import body_sql
from aimos.verify import v2_mutation as vm

__all__ = [
    "RecallBinding",
    "V2OutcomeUnavailableError",
    "build_outcome_export",
    "recall_binding",
    "sign_valence_row",
]

TERMINAL_OPERATIONS: Final = {
    vocabulary.TERMINAL_AUTHORIZED_TRANSITION: vocabulary.WEIGHT_ADJUSTED_OPERATION,
    vocabulary.TERMINAL_SIGNED_NOOP: vocabulary.WEIGHT_UNCHANGED_OPERATION,
    vocabulary.TARGET_OCCURRENCE_OBSERVATION: vocabulary.OBSERVATION_RETAINED_OPERATION,
}


@dataclass(frozen=True)
class RecallBinding:
    """What an outcome's V2 evidence names of the V2 recall it rests on."""

    event_id: str
    mutation_hash: str
    merkle_root: str
    security_closure_sha256: str
    memory_id: str
    live_content_hash: str
    occurrence_ref: str


# --- at outcome time -----------------------------------------------------------------------------
def recall_binding(
    conn: Connection, native_event_id: str, memory_id: str, live_content_hash: str
) -> RecallBinding | None:
    """The V2 recall event bound to a native recall-receipt event and its evidence entry for
    ``memory_id``; None for a recall made before the V2 binding existed."""
    from aimos.recall.envelope import v2_event

    row = v2_event(conn, native_event_id)
    if row is None:
        return None
    meta: dict[str, Any] = json_loads(row["signed_body"])["metadata"]
    entry = next(
        (
            e
            for e in meta["evidence"]
            if e["memory_id"] == memory_id and e["live_content_hash"] == live_content_hash
        ),
        None,
    )
    if entry is None:
        return None
    return RecallBinding(
        event_id=str(row["event_id"]),
        mutation_hash=str(row["mutation_hash"]),
        merkle_root=str(meta["merkle_root"]),
        security_closure_sha256=str(meta["canary_final_security_closure_sha256"]),
        memory_id=memory_id,
        live_content_hash=live_content_hash,
        occurrence_ref=str(entry["occurrence_ref"]),
    )


def sign_valence_row(
    housekeeper: Signer,
    binding: RecallBinding,
    *,
    company_id: str,
    memory_id: str,
    outcome_id: str,
    target_scope: str,
    reward_sign: int,
    outcome_event: dict[str, Any],
    now: int,
) -> dict[str, Any]:
    """The housekeeper-signed VALENCE row of one outcome (payload form; a standalone row, so its
    ``prev_hash`` is null): ``{body, nonce, ts_signed, prev_hash, content_hash, row_hash,
    signature_b64u}``, to be kept in the terminal event's signed metadata."""
    body: dict[str, Any] = {
        "evidence_schema": vocabulary.V2_MUTATION_OUTCOME_SCHEMA,
        "target_scope": target_scope,
        "memory_id": memory_id,
        "target_live_content_hash": binding.live_content_hash,
        "target_occurrence_ref": binding.occurrence_ref,
        "recall_event_id": binding.event_id,
        "recall_event_mutation_hash": binding.mutation_hash,
        "recall_merkle_root": binding.merkle_root,
        "security_closure_sha256": binding.security_closure_sha256,
        "outcome_id": outcome_id,
        "outcome_event_id": outcome_event["event_id"],
        "outcome_event_mutation_hash": outcome_event["mutation_hash"],
        "event_type": vocabulary.VALENCE_EVENT,
        "company_id": company_id,
        "reward_sign": reward_sign,
        "context_hash": None,
        "signer_agent_id": housekeeper.agent_id,
        "signer_valid_from": iso_ms(housekeeper.valid_from),
        "cert_fingerprint": housekeeper.cert_fingerprint,
        "identity_tier": housekeeper.identity_tier,
        "ts_signed": now,
    }
    body_bytes = canonical_json(body)
    nonce = new_nonce()
    signature = housekeeper.key.sign(payload_message(body, nonce, now, body_bytes=body_bytes))
    content = commitments.sha256(body_bytes)
    row_hash = commitments.provenance_mutation_hash(content, None, nonce, now)
    return {
        "body": body,
        "nonce": nonce,
        "ts_signed": now,
        "prev_hash": None,
        "content_hash": content.hex(),
        "row_hash": row_hash.hex(),
        "signature_b64u": b64u_encode(signature),
    }


# --- export ----------------------------------------------------------------------------------------
def _event_by_outcome(conn: Connection, operation: str, outcome: q.OutcomeRow) -> dict[str, Any] | None:
    """The first ``operation`` event about ``outcome`` (among its memory's events, each body read
    back from its stored form), read as the row it stands for."""
    row = q.first_outcome_event(conn, body_sql(conn), outcome["memory_id"], operation, outcome["outcome_id"])
    return None if row is None else read_event(row)


def _signer_fields(hk: dict[str, Any], *, agent: str, start: str) -> dict[str, Any]:
    return {
        agent: hk["agent_id"],
        start: iso_ms(hk["valid_from"]),
        start.replace("_from", "_until"): iso_ms(hk["valid_until"]),
        "cert_fingerprint": hk["cert_fingerprint"],
        "identity_tier": hk["identity_tier"],
        "signer_public_key_b64u": hk["public_key_b64u"],
        "signer_certificate": hk["certificate"],
    }


def _event_summary(event: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = json_loads(event["signed_body"])
    return {
        "event_id": event["event_id"],
        "operation": event["operation"],
        "parent_event_id": body.get("parent_event_id"),
        "mutation_hash": event["mutation_hash"],
        "metadata": body["metadata"],
    }


def _event_proof(event: dict[str, Any], hk: dict[str, Any]) -> dict[str, Any]:
    """A full signed event proof of one aimos event (every field restates its signed body)."""
    body: dict[str, Any] = json_loads(event["signed_body"])
    proof: dict[str, Any] = {
        "event_id": event["event_id"],
        "timestamp": iso_ms(int(event["ts_signed"])),
        "company_id": body["company_id"],
        "operation": body["operation"],
        "metadata": body["metadata"],
        "parent_event_id": body.get("parent_event_id"),
        "proof_required": True,
        "ledger_version": 1,
        "ledger_seq": body["ledger_seq"],
        **_signer_fields(hk, agent="signer_agent_id", start="signer_valid_from"),
        "signed_body": body,
        "content_hash": event["content_hash"],
        "mutation_hash": event["mutation_hash"],
        "prev_mutation_hash": event["prev_mutation_hash"],
        "ts_signed": event["ts_signed"],
        "nonce": event["nonce"],
        "signature_b64u": event["signature_b64u"],
    }
    if "key" in body:
        proof["key"] = body["key"]
    return proof


def _hk_epoch(conn: Connection, agent_id: str, valid_from: int) -> dict[str, Any]:
    row = epoch_at(conn, agent_id, valid_from)
    if row is None:
        raise V2OutcomeUnavailableError(f"identity epoch {agent_id}@{iso_ms(valid_from)} is missing")
    return row


def _commit(value: dict[str, Any], domain: bytes, field: str) -> dict[str, Any]:
    committed = json_loads(canonical_json(value))
    assert isinstance(committed, dict)
    committed[field] = commitments.sha256(domain + canonical_json(value)).hex()
    return committed


@dataclass(frozen=True)
class _Exported:
    """One outcome as its export reads it: the rows and events the bundle and witness restate."""

    outcome_id: str
    outcome: q.OutcomeRow
    terminal_kind: str
    outcome_event: dict[str, Any]
    terminal_event: dict[str, Any]
    valence_row: dict[str, Any]
    binding: RecallBinding
    trust_context: dict[str, Any]
    hk: dict[str, Any]  # the housekeeper epoch that signed the outcome


def build_outcome_export(
    conn: Connection, outcome_ref: str
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(bundle, witness, trust context) of one aimos outcome; public material only, nothing signed."""
    x = _read_outcome(conn, outcome_ref)
    outcome_evidence, recall_receipt = _outcome_evidence(x), _recall_receipt(x.binding)
    valence_evidence, valence_proof = _valence_evidence(x)
    if x.terminal_kind == vocabulary.TERMINAL_AUTHORIZED_TRANSITION:
        terminal, terminal_proof, projection = _reweight_terminal(conn, x)
    else:
        projection = None
        terminal = {"kind": x.terminal_kind, "event": _event_summary(x.terminal_event)}
        terminal_proof = {
            "kind": vocabulary.PROOF_TERMINAL_EVENT_KIND,
            "event": _event_proof(x.terminal_event, x.hk),
        }

    bundle = _commit(
        {
            "format": dict(vm.BUNDLE_FORMAT),
            "bundle_id": f"aimos-outcome-{x.outcome_id}",
            "company_id": str(x.outcome["company_id"]),
            "recall_evidence_sha256": commitments.sha256(canonical_json(recall_receipt)).hex(),
            "outcome_evidence": outcome_evidence,
            "recall_receipt": recall_receipt,
            "outcome_event": _event_summary(x.outcome_event),
            "valence_evidence": valence_evidence,
            "terminal": terminal,
            "cognitive_projection": projection,
        },
        vocabulary.V2_MUTATION_BUNDLE,
        "bundle_sha256",
    )
    witness = _commit(
        {
            "format": dict(vm.WITNESS_FORMAT),
            "mutation_bundle_sha256": bundle["bundle_sha256"],
            "trust_context_bundle_sha256": x.trust_context["bundle_sha256"],
            "expected_master_fingerprint": master_row(conn)["fingerprint"],
            "outcome_event": _event_proof(x.outcome_event, x.hk),
            "valence_evidence": valence_proof,
            "terminal_proof": terminal_proof,
        },
        vocabulary.V2_MUTATION_WITNESS,
        "witness_sha256",
    )
    return bundle, witness, x.trust_context


def _read_outcome(conn: Connection, outcome_ref: str) -> _Exported:
    """The outcome ``outcome_ref`` names with its V2 evidence, each binding checked: its outcome
    and terminal events, the signed valence row, the V2 recall it rests on (and that recall's
    trust context), signed by the same housekeeper epoch as that recall."""
    from aimos.recall.envelope import build_recall_envelope

    outcome_id = resolve_uuid_prefix(
        conn,
        outcome_ref,
        table="outcomes",
        column="outcome_id",
        what="outcome",
        not_found=OutcomeNotFoundError,
    )
    o = q.outcome_row(conn, outcome_id)
    assert o is not None
    terminal_kind = str(o["terminal"])
    outcome_event = _event_by_outcome(conn, vocabulary.MUTATION_OUTCOME_OPERATION, o)
    terminal_event = _event_by_outcome(conn, TERMINAL_OPERATIONS[terminal_kind], o)
    if outcome_event is None or terminal_event is None:
        raise V2OutcomeUnavailableError(f"outcome {outcome_id} has no outcome or terminal event")
    terminal_meta: dict[str, Any] = json_loads(terminal_event["signed_body"])["metadata"]
    valence_row = terminal_meta.get("valence_row")
    outcome_meta: dict[str, Any] = json_loads(outcome_event["signed_body"])["metadata"]
    if not isinstance(valence_row, dict) or "occurrence_ref" not in outcome_meta:
        raise V2OutcomeUnavailableError(
            f"outcome {outcome_id} was recorded without the signed V2 binding (no valence row)"
        )
    receipt_event_id = q.receipt_event_id(conn, o["receipt_id"])
    assert receipt_event_id is not None
    binding = recall_binding(conn, receipt_event_id, o["memory_id"], o["live_content_hash"])
    if binding is None or binding.event_id != _event_summary(outcome_event)["parent_event_id"]:
        raise V2OutcomeUnavailableError(f"outcome {outcome_id}'s recall has no matching V2 recall event")
    trust_context = build_recall_envelope(conn, o["receipt_id"])

    hk = _hk_epoch(conn, outcome_event["signer_agent_id"], int(outcome_event["signer_valid_from"]))
    trust_hk = next(x["body"] for x in trust_context["objects"] if x["kind"] == vm.HOUSEKEEPER_EPOCH_KIND)
    if trust_hk["valid_from"] != iso_ms(hk["valid_from"]) or trust_hk["agent_id"] != hk["agent_id"]:
        raise V2OutcomeUnavailableError(
            "the outcome was signed by another housekeeper epoch than the recall it rests on "
            "(the housekeeper's key was rotated between them)",
            "A mutation bundle is verified against the recall's housekeeper epoch; recall again.",
        )
    return _Exported(
        outcome_id, o, terminal_kind, outcome_event, terminal_event, valence_row, binding, trust_context, hk
    )


def _outcome_evidence(x: _Exported) -> dict[str, Any]:
    o, binding = x.outcome, x.binding
    return {
        "schema": vocabulary.V2_MUTATION_OUTCOME_SCHEMA,
        "company_id": str(o["company_id"]),
        "memory_id": o["memory_id"],
        "outcome_id": x.outcome_id,
        "target_scope": o["target_scope"],
        "live_content_hash": binding.live_content_hash,
        "occurrence_ref": binding.occurrence_ref,
        "recall_event_id": binding.event_id,
        "recall_event_mutation_hash": binding.mutation_hash,
        "recall_merkle_root": binding.merkle_root,
        "security_closure_sha256": binding.security_closure_sha256,
    }


def _recall_receipt(binding: RecallBinding) -> dict[str, Any]:
    return {
        "event_id": binding.event_id,
        "mutation_hash": binding.mutation_hash,
        "merkle_root": binding.merkle_root,
        "security_closure_sha256": binding.security_closure_sha256,
        "evidence": {
            "memory_id": binding.memory_id,
            "live_content_hash": binding.live_content_hash,
            "occurrence_ref": binding.occurrence_ref,
        },
    }


def _valence_evidence(x: _Exported) -> tuple[dict[str, Any], dict[str, Any]]:
    """The valence row as the bundle restates it, and as the witness proves it."""
    o, valence_row = x.outcome, x.valence_row
    valence_body: dict[str, Any] = valence_row["body"]
    valence_evidence = {
        "row_hash": valence_row["row_hash"],
        "reward_sign": o["reward_sign"],
        "body_json": valence_body,
        "signature_b64u": valence_row["signature_b64u"],
        "signer_agent_id": valence_body["signer_agent_id"],
        "signer_valid_from": valence_body["signer_valid_from"],
        "cert_fingerprint": valence_body["cert_fingerprint"],
    }
    valence_proof = {
        "row_id": valence_row["row_hash"],
        "memory_id": o["memory_id"],
        "company_id": str(o["company_id"]),
        "reward_sign": o["reward_sign"],
        "context_hash": valence_body["context_hash"],
        "body_json": valence_body,
        "content_hash": valence_row["content_hash"],
        "prev_hash": valence_row["prev_hash"],
        "row_hash": valence_row["row_hash"],
        "ts_signed": valence_row["ts_signed"],
        "nonce": valence_row["nonce"],
        "signature_b64u": valence_row["signature_b64u"],
        "proof_required": True,
        **_signer_fields(x.hk, agent="signer_agent_id", start="signer_valid_from"),
    }
    return valence_evidence, valence_proof


def _reweight_terminal(
    conn: Connection, x: _Exported
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """An authorized transition's terminal (its REWEIGHT node), the node's proof and the weight
    projection: (terminal, terminal proof, projection)."""
    outcome_id = x.outcome_id
    p = q.projection_of_outcome(conn, outcome_id)
    found = q.provenance_row(conn, p["provenance_mutation_hash"]) if p is not None else None
    node = read_provenance(found) if found is not None else None
    if p is None or node is None or node["body_json"] is None:
        raise V2OutcomeUnavailableError(f"outcome {outcome_id}'s projection or REWEIGHT node is missing")
    node_body: dict[str, Any] = json_loads(node["body_json"])
    if node_body.get("valence_row_hash") != x.valence_row["row_hash"]:
        raise V2OutcomeUnavailableError(f"outcome {outcome_id}'s REWEIGHT node does not name its valence row")
    terminal: dict[str, Any] = {
        "kind": x.terminal_kind,
        "reweight_provenance": {
            "provenance_id": node["provenance_id"],
            "event_type": vocabulary.REWEIGHT_EVENT,
            "memory_id": node["memory_id"],
            "mutation_hash": node["mutation_hash"],
            "body_json": node_body,
        },
    }
    terminal_proof: dict[str, Any] = {
        "kind": vocabulary.PROOF_REWEIGHT_PROVENANCE,
        "provenance": {
            "provenance_id": node["provenance_id"],
            "memory_id": node["memory_id"],
            **_signer_fields(x.hk, agent="agent_id", start="agent_valid_from"),
            "content_hash": node["content_hash"],
            "mutation_hash": node["mutation_hash"],
            "prev_mutation_hash": node["prev_mutation_hash"],
            "ts_signed": node["ts_signed"],
            "nonce": node["nonce"],
            "signature_b64u": node["signature_b64u"],
            "is_genesis": node["prev_mutation_hash"] is None,
            "backfilled": bool(node["backfilled"]),
            "memory_originated_at": None,
            "event_type": vocabulary.REWEIGHT_EVENT,
            "body_json": node_body,
            "sig_form_version": node["signature_form"],
            "request_sig_form": node["signature_form"],
            "signed_method": None,
            "signed_path": None,
            "signed_claims": None,
        },
    }
    projection = {
        "memory_id": p["memory_id"],
        "old_weight_milli": p["old_weight_milli"],
        "new_weight_milli": p["new_weight_milli"],
        "provenance_mutation_hash": p["provenance_mutation_hash"],
        "prev_projection_hash": p["prev_projection_hash"],
        "projection_hash": p["projection_hash"],
        "transition_hash": p["transition_hash"],
        "transition_signature_b64u": p["transition_signature_b64u"],
    }
    return terminal, terminal_proof, projection
