"""MutMem V2 recall-disclosure envelopes (`hom.aimos.mutmem-portable-evidence/v2`) from aimos recalls.

Two halves:

* :func:`record_v2_receipt`, called by the recall pipeline inside the recall's write transaction,
  right after the native `aimos.recall-receipt/v1` receipt is recorded. It signs what the V2 profile
  needs and aimos's native receipt does not carry: one housekeeper-signed occurrence
  (`hom.aimos.memory-occurrence/v3`, event type ``RECALL_DISCLOSURE``) per disclosed memory, and a
  second housekeeper-signed ``recall_receipt`` event whose metadata is V2-shaped (command and outer
  request hashes, authority mutation hash, request receipt id and mutation hash, the V2 Merkle root
  over the epistemic decision, the security closure and the V2 evidence entries, the return
  projection). Its ``parent_event_id`` is the native receipt's event. Nothing is stored outside
  the events table: the signed metadata carries the occurrence signatures and decision hashes.
* :func:`build_recall_envelope` reads that event and the brain's public identity material and
  assembles the envelope. It signs nothing; a recall made before this module existed has no V2
  event and cannot be exported (:class:`V2ReceiptUnavailableError`).

Values aimos has no native counterpart for are derived deterministically (module constants and
the ``_decision`` helpers below name each formula): the return path is always ``normal_recall``;
the content-state and security-closure decision hashes are SHA-256 of canonical aimos bodies that
bind what aimos actually decided; calibration is aimos's effective score, uncalibrated.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Final

from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_sha256_hex, json_loads
from aimos.crypto.encoding import b64u_decode, b64u_encode, iso_ms
from aimos.crypto.merkle import merkle_root
from aimos.errors import V2ReceiptUnavailableError
from aimos.identity.epochs import epoch_at
from aimos.identity.master import master_row
from aimos.identity.requests import VerifiedRequest
from aimos.identity.signer import Signer
from aimos.ledger.events import append_event, read_event
from aimos.recall.disclosure import Disclosed
from aimos.recall.policy import Decision
from aimos.store.connection import Connection
from aimos.store.queries import recall_receipts as q
from aimos.store.queries.ledger import body_sql
from aimos.verify.v2 import recall_profile as v2
from aimos.vocabulary import CONTENT_ADMISSION_SCHEMA as ADMISSION_SCHEMA
from aimos.vocabulary import EFFECTIVE_SCORE_SCHEMA as CALIBRATION_FORMULA
from aimos.vocabulary import MASTER_SIGNED_RECALL_GRANT as MASTER_GRANT
from aimos.vocabulary import PATH_RECALL, RECALL_RECEIPT_OPERATION, REQUEST_METHOD, REQUEST_SIG_FORM
from aimos.vocabulary import RECEIPT_V2_BINDING_SCHEMA as V2_EVENT_PROFILE
from aimos.vocabulary import RETURN_SELECTION_SCHEMA as SELECTION_SCHEMA
from aimos.vocabulary import V2_CONTENT_KERNEL_SCHEMA as CONTENT_KERNEL_SCHEMA
from aimos.vocabulary import V2_NATIVE_RECALL_RECEIPT_SCHEMA as NATIVE_RECEIPT_SCHEMA
from aimos.vocabulary import V2_SECURITY_CLOSURE_SCHEMA as SECURITY_CLOSURE_SCHEMA

OCCURRENCE_EVENT_TYPE: Final = "RECALL_DISCLOSURE"
RETURN_PATH: Final = "normal_recall"


# --- derived decisions (deterministic, from what aimos signed) ------------------------------------
def _state_view(evidence: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "memory_id": e["memory_id"],
            "live_content_hash": e["live_content_hash"],
            "truth_state": e["truth_state"],
        }
        for e in evidence
    ]


def _occurrence_view(evidence: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"memory_id": e["memory_id"], "occurrence_ref": e["occurrence_ref"]} for e in evidence]


def _decisions(
    *, command_hash: str, native_decision_sha256: str, evidence: list[dict[str, Any]]
) -> dict[str, Any]:
    """The content-state, security-closure and return-projection bodies of one recall."""
    ids = [e["memory_id"] for e in evidence]
    refs = [e["occurrence_ref"] for e in evidence]
    state_root = merkle_root(_state_view(evidence)).hex()
    occurrence_root = merkle_root(_occurrence_view(evidence)).hex()
    admission = canonical_sha256_hex(
        {
            "schema": ADMISSION_SCHEMA,
            "command_hash": command_hash,
            "native_decision_sha256": native_decision_sha256,
            "state_view_root_sha256": state_root,
        }
    )
    selection = canonical_sha256_hex(
        {"schema": SELECTION_SCHEMA, "selected_memory_ids": ids, "selected_occurrence_refs": refs}
    )
    security_body = {
        "schema": SECURITY_CLOSURE_SCHEMA,
        "epistemic_decision_sha256": native_decision_sha256,
        "state_view_root_sha256": state_root,
        "occurrence_view_root_sha256": occurrence_root,
        "return_path": RETURN_PATH,
        "selected_clean_memory_ids": ids,
        # aimos's closure: every disclosed memory passed verify_many (fail closed) before the receipt
        "disclosure_verification": "all_selected_verified_before_disclosure",
    }
    security = canonical_sha256_hex(security_body)
    projection: dict[str, Any] = {
        "schema": v2.OBJECT_SCHEMAS["return_projection"],
        "canonical_memory_mutated": False,
        "content_state_selection_sha256": selection,
        "disclosure_expansion_performed": False,
        "final_security_closure_sha256": security,
        "ordered_unique_subset_of_final_clean_security_closure": True,
        "output_content_commitments_unchanged": True,
        "projected_live_content_hashes": [e["live_content_hash"] for e in evidence],
        "projected_memory_ids": ids,
        "projected_output_count": len(evidence),
        "retention_changed": False,
        "return_path": RETURN_PATH,
        "selected_clean_count": len(evidence),
    }
    projection["decision_sha256"] = canonical_sha256_hex(projection)
    return {
        "content_state": {
            "admission_decision_sha256": admission,
            "return_selection_decision_sha256": selection,
            "state_view_root_sha256": state_root,
            "occurrence_view_root_sha256": occurrence_root,
        },
        "epistemic_decision_sha256": native_decision_sha256,
        "canary_final_security_closure_sha256": security,
        "return_projection": projection,
    }


def _merkle_entries(decisions: dict[str, Any], evidence: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"entry_type": "epistemic_decision", "decision_sha256": decisions["epistemic_decision_sha256"]},
        {
            "entry_type": "canary_final_security_closure",
            "decision_sha256": decisions["canary_final_security_closure_sha256"],
        },
        *evidence,
    ]


def _occurrence_native(
    *,
    company_id: str,
    occurrence_event_id: str,
    memory_id: str,
    live_content_hash: str,
    verified_agent: dict[str, Any],
    request: dict[str, Any],
    request_receipt_mutation_hash: str,
    authorization_event_id: str,
) -> dict[str, Any]:
    """The `hom.aimos.memory-occurrence/v3` native body of a recall-disclosure occurrence."""
    return {
        "schema": v2.OCCURRENCE_V3_SCHEMA,
        "company_id": company_id,
        "occurrence_event_id": occurrence_event_id,
        "memory_id": memory_id,
        "event_type": OCCURRENCE_EVENT_TYPE,
        "live_content_hash_hex": live_content_hash,
        "predecessor_present": 0,
        "predecessor_commitment_hex": None,
        "agent_id": verified_agent["agent_id"],
        "signer_valid_from_unix_ms": verified_agent["valid_from"] * 1000,
        "cert_fingerprint_hex": verified_agent["cert_fingerprint"],
        "identity_tier": verified_agent["identity_tier"],
        "sig_form_version": REQUEST_SIG_FORM,
        "nonce_hex": b64u_decode(request["nonce"]).hex(),
        "ts_signed_unix_seconds": request["ts_signed"],
        "signed_method": REQUEST_METHOD,
        "signed_path": PATH_RECALL,
        "request_body_hash_hex": request["request_hash"],
        "request_receipt_present": 1,
        "request_receipt_mutation_hash_hex": request_receipt_mutation_hash,
        "authorization_event_present": 1,
        "authorization_event_id": authorization_event_id,
    }


def _occurrence_commitment(native: dict[str, Any]) -> bytes:
    return commitments.occurrence_v3_commitment(
        company_id=native["company_id"],
        occurrence_event_id=native["occurrence_event_id"],
        memory_id=native["memory_id"],
        event_type=native["event_type"],
        live_hash=bytes.fromhex(native["live_content_hash_hex"]),
        predecessor=None,
        agent_id=native["agent_id"],
        signer_valid_from_ms=native["signer_valid_from_unix_ms"],
        cert_fingerprint=bytes.fromhex(native["cert_fingerprint_hex"]),
        identity_tier=native["identity_tier"],
        sig_form_version=REQUEST_SIG_FORM,
        nonce=bytes.fromhex(native["nonce_hex"]),
        ts_signed=native["ts_signed_unix_seconds"],
        signed_method=native["signed_method"],
        signed_path=native["signed_path"],
        request_body_hash=bytes.fromhex(native["request_body_hash_hex"]),
        request_receipt_mutation_hash=bytes.fromhex(native["request_receipt_mutation_hash_hex"]),
        authorization_event_id=native["authorization_event_id"],
    )


def _request_receipt_mutation_hash(request: dict[str, Any]) -> str:
    """The request receipt commitment (no predecessor, no signed claims)."""
    return commitments.request_receipt_mutation_hash(
        None,
        bytes.fromhex(request["request_hash"]),
        None,
        b64u_decode(request["signature_b64u"]),
        REQUEST_METHOD,
        PATH_RECALL,
        request["nonce"],
        request["ts_signed"],
    ).hex()


# --- at recall time ------------------------------------------------------------------------------
def record_v2_receipt(
    conn: Connection,
    housekeeper: Signer,
    *,
    verified: VerifiedRequest,
    native_receipt: dict[str, Any],
    decision: Decision,
    disclosed: list[Disclosed],
    now: int,
) -> dict[str, Any]:
    """Sign the V2 occurrences and the V2-shaped `recall_receipt` event (inside the recall's
    write transaction, after :func:`aimos.recall.receipts.record_receipt`)."""
    company = native_receipt["company_id"]
    request = {
        "nonce": native_receipt["request_nonce"],
        "ts_signed": native_receipt["request_ts"],
        "signature_b64u": native_receipt["request_signature_b64u"],
        "request_hash": native_receipt["request_hash"],
    }
    agent = {
        "agent_id": verified.agent_id,
        "valid_from": verified.valid_from,
        "cert_fingerprint": verified.cert_fingerprint,
        "identity_tier": verified.identity_tier,
    }
    request_receipt_id = str(uuid.uuid4())
    request_receipt_mutation = _request_receipt_mutation_hash(request)
    occurrences: list[dict[str, Any]] = []
    evidence: list[dict[str, Any]] = []
    for ordinal, (scored, d) in enumerate(zip(decision.selected, disclosed, strict=True)):
        native = _occurrence_native(
            company_id=company,
            occurrence_event_id=str(uuid.uuid4()),
            memory_id=d.memory_id,
            live_content_hash=d.live_content_hash,
            verified_agent=agent,
            request=request,
            request_receipt_mutation_hash=request_receipt_mutation,
            authorization_event_id=native_receipt["event_id"],
        )
        commitment = _occurrence_commitment(native)
        signature = housekeeper.key.sign(commitments.occurrence_v3_signature_message(commitment))
        occurrences.append(
            {
                "memory_id": d.memory_id,
                "occurrence_event_id": native["occurrence_event_id"],
                "occurrence_commitment": commitment.hex(),
                "signature_b64u": b64u_encode(signature),
            }
        )
        score = round(scored.effective, 6)
        evidence.append(
            {
                "ordinal": ordinal,
                "memory_id": d.memory_id,
                "live_content_hash": d.live_content_hash,
                "save_mutation_hash": d.save_mutation_hash,
                "binding_mutation_hash": d.binding_mutation_hash,
                "occurrence_ref": commitment.hex(),
                "truth_state": d.version_state,
                "label": scored.candidate.label,
                "raw_calibration_score": score,
                "calibrated_score": score,
                "calibration_formula_version": CALIBRATION_FORMULA,
                "calibration_event_id": None,
                "calibration_mutation_hash": None,
            }
        )
    decisions = _decisions(
        command_hash=native_receipt["command_hash"],
        native_decision_sha256=decision.sha256,
        evidence=evidence,
    )
    metadata = {
        "profile": V2_EVENT_PROFILE,
        "native_receipt_id": native_receipt["receipt_id"],
        "command_hash": native_receipt["command_hash"],
        "outer_request_hash": native_receipt["request_hash"],
        "authority_mutation_hash": native_receipt["grant_mutation_hash"],
        "request_receipt_id": request_receipt_id,
        "request_receipt_mutation_hash": request_receipt_mutation,
        "merkle_root": merkle_root(_merkle_entries(decisions, evidence)).hex(),
        "result_count": len(evidence),
        "evidence": evidence,
        "return_projection": decisions["return_projection"],
        "content_state": decisions["content_state"],
        "epistemic_decision_sha256": decisions["epistemic_decision_sha256"],
        "canary_final_security_closure_sha256": decisions["canary_final_security_closure_sha256"],
        "occurrences": occurrences,
    }
    return append_event(
        conn,
        housekeeper,
        operation=RECALL_RECEIPT_OPERATION,
        company_id=company,
        metadata=metadata,
        now=now,
        actor_agent_id=verified.agent_id,
        actor_valid_from=verified.valid_from,
        parent_event_id=native_receipt["event_id"],
    )


# --- export --------------------------------------------------------------------------------------
def _epoch(conn: Connection, agent_id: str, valid_from: int) -> dict[str, Any]:
    row = epoch_at(conn, agent_id, valid_from)
    if row is None:
        raise V2ReceiptUnavailableError(f"identity epoch {agent_id}@{iso_ms(valid_from)} is missing")
    return row


def _epoch_body(kind: str, company: str, epoch: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema": v2.OBJECT_SCHEMAS[kind],
        "company_id": company,
        "agent_id": epoch["agent_id"],
        "valid_from": iso_ms(epoch["valid_from"]),
        "valid_until": iso_ms(epoch["valid_until"]),
        "cert_fingerprint": epoch["cert_fingerprint"],
        "certificate": epoch["certificate"],
        "public_key_b64u": epoch["public_key_b64u"],
        "identity_tier": epoch["identity_tier"],
    }


def _revocation_body(
    conn: Connection, kind: str, company: str, epoch: dict[str, Any], event: dict[str, Any]
) -> dict[str, Any]:
    row = q.revocation(conn, epoch["agent_id"], epoch["valid_from"])
    revoked = row is not None and int(row["revoked_at"]) <= int(event["ts_signed"])
    return {
        "schema": v2.OBJECT_SCHEMAS[kind],
        "company_id": company,
        "agent_id": epoch["agent_id"],
        "valid_from": iso_ms(epoch["valid_from"]),
        "revoked": revoked,
        "evaluated_at_unix_seconds": event["ts_signed"],
        "source_event_mutation_hash": event["mutation_hash"],
    }


def v2_event(conn: Connection, native_event_id: str) -> dict[str, Any] | None:
    """The V2 recall event bound to a native recall-receipt event (read as the row it stands for),
    or None (a recall made before the V2 binding existed)."""
    # The V2 event is appended by the same housekeeper right after the native receipt event, in the
    # same transaction: look a few ledger positions ahead through the chain's unique index (a scan
    # of every recall_receipt event, each body inflated, would grow with the number of recalls).
    row = q.bound_event_row(
        conn, native_event_id, body_sql(conn, "v"), RECALL_RECEIPT_OPERATION, V2_EVENT_PROFILE
    )
    return None if row is None else read_event(row)


def _v2_event(conn: Connection, native_event_id: str) -> dict[str, Any]:
    event = v2_event(conn, native_event_id)
    if event is None:
        raise V2ReceiptUnavailableError("this recall receipt has no signed V2 binding event")
    return event


def _object(kind: str, body: dict[str, Any], result: int | None, subject: str | None) -> dict[str, Any]:
    schema = v2.OBJECT_SCHEMAS[kind]
    return {
        "ordinal": 0,
        "kind": kind,
        "schema": schema,
        "subject_id": subject,
        "result_ordinal": result,
        "body_sha256": commitments.v2_object_hash(kind, schema, body).hex(),
        "body": body,
    }


@dataclass(frozen=True)
class _Export:
    """What one receipt's envelope is assembled from: the stored receipt, its V2 event, the
    identities and the grant (read in this order; each missing one refuses the export)."""

    receipt_id: str
    receipt: dict[str, Any]
    event: dict[str, Any]
    signed_body: dict[str, Any]
    meta: dict[str, Any]
    company: Any
    master: dict[str, Any]
    actor: dict[str, Any]
    hk: dict[str, Any]
    grant: dict[str, Any]
    grant_body: Any
    request_body: dict[str, Any]
    # of the V2 event's metadata
    evidence: list[dict[str, Any]]
    occurrences: dict[str, dict[str, Any]]  # by memory id
    decisions: dict[str, Any]  # its content_state


def _export(conn: Connection, receipt_ref: str) -> _Export:
    from aimos.recall.receipts import resolve_receipt_id

    receipt_id = resolve_receipt_id(conn, receipt_ref)
    r = q.receipt_row(conn, receipt_id)
    assert r is not None
    event = _v2_event(conn, r["event_id"])
    signed_body: dict[str, Any] = json_loads(event["signed_body"])
    meta: dict[str, Any] = signed_body["metadata"]
    company = r["company_id"]
    master = master_row(conn)
    actor = _epoch(conn, r["agent_id"], r["agent_valid_from"])
    hk = _epoch(conn, event["signer_agent_id"], event["signer_valid_from"])
    grant_row = q.grant_row(conn, r["grant_mutation_hash"])
    if grant_row is None:
        raise V2ReceiptUnavailableError("the recall's grant is missing")
    grant_body = json_loads(grant_row["signed_body"])
    request_body: dict[str, Any] = json_loads(r["request_body"])
    evidence: list[dict[str, Any]] = meta["evidence"]
    occurrences = {o["memory_id"]: o for o in meta["occurrences"]}
    decisions = meta["content_state"]
    return _Export(
        receipt_id,
        r,
        event,
        signed_body,
        meta,
        company,
        master,
        actor,
        hk,
        grant_row,
        grant_body,
        request_body,
        evidence,
        occurrences,
        decisions,
    )


def _identity_objects(conn: Connection, x: _Export) -> list[tuple[str, dict[str, Any]]]:
    """The trust anchor, and the actor's and the housekeeper's epochs and revocation states."""
    return [
        (
            "trust_anchor",
            {
                "schema": v2.OBJECT_SCHEMAS["trust_anchor"],
                "master_fingerprint": x.master["fingerprint"],
                "master_public_key_b64u": x.master["public_key_b64u"],
            },
        ),
        ("actor_identity_epoch", _epoch_body("actor_identity_epoch", x.company, x.actor)),
        (
            "actor_revocation_state",
            _revocation_body(conn, "actor_revocation_state", x.company, x.actor, x.event),
        ),
        ("housekeeper_identity_epoch", _epoch_body("housekeeper_identity_epoch", x.company, x.hk)),
        (
            "housekeeper_revocation_state",
            _revocation_body(conn, "housekeeper_revocation_state", x.company, x.hk, x.event),
        ),
    ]


def _grant_object(x: _Export) -> dict[str, Any]:
    grant = x.grant
    return {
        "schema": v2.OBJECT_SCHEMAS["effective_recall_grant"],
        "authority_kind": MASTER_GRANT,
        "company_id": grant["company_id"],
        "subject_agent_id": grant["subject_agent_id"],
        "subject_valid_from": iso_ms(grant["subject_valid_from"]),
        "allowed": bool(grant["allowed"]),
        "write_allowed": bool(grant["write_allowed"]),
        "clearance_ceiling": grant["clearance_ceiling"],
        "data_class_ceiling": grant["data_class_ceiling"],
        "master_fingerprint": grant["master_fingerprint"],
        "signed_body": x.grant_body,
        "content_hash": grant["content_hash"],
        "nonce": grant["nonce"],
        "ts_signed": grant["ts_signed"],
        "signature_b64u": grant["signature_b64u"],
        "prev_mutation_hash": grant["prev_mutation_hash"],
        "mutation_hash": grant["mutation_hash"],
    }


def _request_objects(x: _Export) -> list[tuple[str, dict[str, Any]]]:
    """The signed request and its request receipt."""
    r, actor, meta = x.receipt, x.actor, x.meta
    actor_binding = {
        "company_id": x.company,
        "actor_agent_id": actor["agent_id"],
        "actor_valid_from": iso_ms(actor["valid_from"]),
        "cert_fingerprint": actor["cert_fingerprint"],
    }
    request_common = {
        "request_sig_form": REQUEST_SIG_FORM,
        "signed_method": REQUEST_METHOD,
        "signed_path": PATH_RECALL,
        "nonce": r["request_nonce"],
        "ts_signed": r["request_ts"],
        "signature_b64u": r["request_signature_b64u"],
    }
    return [
        (
            "request_envelope",
            {
                "schema": v2.OBJECT_SCHEMAS["request_envelope"],
                **actor_binding,
                **request_common,
                "request_body": x.request_body,
                "request_body_hash": r["request_hash"],
                "outer_request_hash": r["request_hash"],
                "normalized_command": json_loads(r["command"]),
                "command_hash": r["command_hash"],
                "requested_clearance_level": x.request_body.get("clearance_level"),
                "requested_data_class": x.request_body.get("data_class"),
            },
        ),
        (
            "request_receipt",
            {
                "schema": v2.OBJECT_SCHEMAS["request_receipt"],
                **actor_binding,
                **request_common,
                "request_receipt_id": meta["request_receipt_id"],
                "request_hash": r["request_hash"],
                "signed_claims": None,
                "signed_claims_hash": None,
                "prev_mutation_hash": None,
                "mutation_hash": meta["request_receipt_mutation_hash"],
            },
        ),
    ]


def _decision_objects(x: _Export) -> list[tuple[str, dict[str, Any]]]:
    """The content-state projection, the epistemic decision, the final security closure and the
    return projection."""
    meta, decisions, evidence = x.meta, x.decisions, x.evidence
    return [
        (
            "content_state_projection",
            {
                "schema": v2.OBJECT_SCHEMAS["content_state_projection"],
                "native_decision_schema": CONTENT_KERNEL_SCHEMA,
                **decisions,
                "selected_occurrence_refs": [e["occurrence_ref"] for e in evidence],
            },
        ),
        (
            "epistemic_recall_decision",
            {
                "schema": v2.OBJECT_SCHEMAS["epistemic_recall_decision"],
                "decision_sha256": meta["epistemic_decision_sha256"],
                "selected_memory_ids": [e["memory_id"] for e in evidence],
            },
        ),
        (
            "final_security_closure",
            {
                "schema": v2.OBJECT_SCHEMAS["final_security_closure"],
                "native_decision_schema": SECURITY_CLOSURE_SCHEMA,
                "decision_sha256": meta["canary_final_security_closure_sha256"],
                "epistemic_decision_sha256": meta["epistemic_decision_sha256"],
                "state_view_root_sha256": decisions["state_view_root_sha256"],
                "occurrence_view_root_sha256": decisions["occurrence_view_root_sha256"],
                "return_path": meta["return_projection"]["return_path"],
                "selected_clean_memory_ids": [e["memory_id"] for e in evidence],
            },
        ),
        ("return_projection", meta["return_projection"]),
    ]


def _native_receipt_object(x: _Export) -> dict[str, Any]:
    """The native recall receipt: the V2 event's metadata and the signed event itself."""
    meta, event, evidence = x.meta, x.event, x.evidence
    return {
        "schema": v2.OBJECT_SCHEMAS["native_recall_receipt"],
        "merkle_schema": NATIVE_RECEIPT_SCHEMA,
        "command_hash": meta["command_hash"],
        "outer_request_hash": meta["outer_request_hash"],
        "authority_mutation_hash": meta["authority_mutation_hash"],
        "request_receipt_id": meta["request_receipt_id"],
        "request_receipt_mutation_hash": meta["request_receipt_mutation_hash"],
        "epistemic_decision_sha256": meta["epistemic_decision_sha256"],
        "canary_final_security_closure_sha256": meta["canary_final_security_closure_sha256"],
        "return_projection": meta["return_projection"],
        "return_projection_event_body_bound": True,
        "result_count": meta["result_count"],
        "evidence": evidence,
        "merkle_entries": _merkle_entries(meta, evidence),
        "merkle_root": meta["merkle_root"],
        "event_receipt": {
            "signed_body": x.signed_body,
            "content_hash": event["content_hash"],
            "prev_mutation_hash": event["prev_mutation_hash"],
            "nonce": event["nonce"],
            "ts_signed": event["ts_signed"],
            "mutation_hash": event["mutation_hash"],
            "signature_b64u": event["signature_b64u"],
            "signer_certificate": x.hk["certificate"],
        },
    }


def _memory_objects(x: _Export, entry: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The five objects of one disclosed memory (``entry``: its evidence entry), each body
    without its schema."""
    r, meta = x.receipt, x.meta
    mid, live = entry["memory_id"], entry["live_content_hash"]
    occ = x.occurrences[mid]
    native = _occurrence_native(
        company_id=x.company,
        occurrence_event_id=occ["occurrence_event_id"],
        memory_id=mid,
        live_content_hash=live,
        verified_agent=x.actor,  # its agent_id, valid_from, cert_fingerprint and identity_tier
        request={
            "nonce": r["request_nonce"],
            "ts_signed": r["request_ts"],
            "request_hash": r["request_hash"],
        },
        request_receipt_mutation_hash=meta["request_receipt_mutation_hash"],
        authorization_event_id=r["event_id"],
    )
    native["occurrence_commitment"] = occ["occurrence_commitment"]
    return [
        ("memory_state", {"memory_id": mid, "live_content_hash": live}),
        (
            "provenance_chain",
            {
                "memory_id": mid,
                "live_content_hash": live,
                "save_mutation_hash": entry["save_mutation_hash"],
                "binding_mutation_hash": entry["binding_mutation_hash"],
            },
        ),
        (
            "occurrence",
            {
                "memory_id": mid,
                "live_content_hash_hex": live,
                "occurrence_form": "v3",
                "native_schema": v2.OCCURRENCE_V3_SCHEMA,
                "native_body": native,
                "occurrence_ref": occ["occurrence_commitment"],
                "signature_b64u": occ["signature_b64u"],
                "signer_certificate": x.hk["certificate"],
            },
        ),
        (
            "epistemic_projection",
            {
                "memory_id": mid,
                "live_content_hash": live,
                "decision_sha256": meta["epistemic_decision_sha256"],
                "label": entry["label"],
            },
        ),
        ("receipt_evidence", dict(entry)),
    ]


def build_recall_envelope(conn: Connection, receipt_ref: str) -> dict[str, Any]:
    """The V2 recall-disclosure envelope of one aimos recall receipt (public material only)."""
    x = _export(conn, receipt_ref)
    singletons = [
        *_identity_objects(conn, x),
        ("effective_recall_grant", _grant_object(x)),
        *_request_objects(x),
        *_decision_objects(x),
        ("native_recall_receipt", _native_receipt_object(x)),
    ]
    objects = [_object(kind, body, None, None) for kind, body in singletons]
    evidence = x.evidence
    for ordinal, entry in enumerate(evidence):
        for kind, body in _memory_objects(x, entry):
            objects.append(
                _object(kind, {"schema": v2.OBJECT_SCHEMAS[kind], **body}, ordinal, entry["memory_id"])
            )
    for position, obj in enumerate(objects):
        obj["ordinal"] = position
    root = merkle_root([{f: obj[f] for f in v2.OBJECT_ROOT_FIELDS} for obj in objects])
    bundle_id = f"aimos-recall-{x.receipt_id}"
    fingerprint = x.master["fingerprint"]
    return {
        "format": dict(v2.FORMAT),
        "bundle_id": bundle_id,
        "company_id": x.company,
        "expected_master_fingerprint": fingerprint,
        "result_count": len(evidence),
        "object_count": len(objects),
        "object_root_sha256": root.hex(),
        "objects": objects,
        "bundle_sha256": commitments.v2_bundle_hash(
            bundle_id, x.company, bytes.fromhex(fingerprint), len(evidence), root
        ).hex(),
    }
