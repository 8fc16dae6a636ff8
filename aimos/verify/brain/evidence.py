"""Export a brain's cognitive evidence as `hom.aimos.mutmem-cognitive-evidence/v1` (the reference's
bundle format, PROTOCOL-NOTES section 6): master identity, event streams, every memory with its
weight projections and their REWEIGHT provenance (with the signer's identity), and the in-database
verifier's own per-memory records, so a portable verifier can re-derive and compare them."""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any, cast

from aimos.crypto.canonical import json_loads
from aimos.crypto.encoding import b64u_decode
from aimos.identity.master import master_row
from aimos.ledger.events import read_event
from aimos.store.connection import Connection
from aimos.store.meta import brain_meta
from aimos.store.queries import verification as q
from aimos.store.queries.ledger import provenance_body_sql
from aimos.store.queries.memory import WeightBaselineRow
from aimos.verify.brain.verifier import Report, verify_brain
from aimos.vocabulary import COGNITIVE_EVIDENCE_SCHEMA, HOUSEKEEPER, REWEIGHT_EVENT

FORMAT = {
    "schema": COGNITIVE_EVIDENCE_SCHEMA,
    "version": 1,
    "authority": "descriptive_only",
    "binary_encoding": "lowercase_hex",
    "time_encoding": "unix_seconds",
}


def float4_hex(milli: int) -> str:
    return struct.pack(">f", milli / 1000).hex()


def _hex_sig(b64u: str) -> str:
    return b64u_decode(b64u).hex()


def _revocation(epoch: Mapping[str, Any]) -> dict[str, Any] | None:
    """The master-signed revocation of the epoch as the portable verifier checks it, or None."""
    if epoch.get("revocation_body") is None:
        return None
    body = json_loads(epoch["revocation_body"])
    return {
        "agent_id": epoch["agent_id"],
        "agent_valid_from": epoch["valid_from"],
        "master_fingerprint": epoch["revocation_master_fingerprint"],
        "target_cert_hash": body.get("target_cert_hash") if isinstance(body, dict) else None,
        "prior_identity_hash": epoch["revocation_prior_identity_hash"],
        "signed_body": body,
        "content_hash": epoch["revocation_content_hash"],
        "mutation_hash": epoch["revocation_mutation_hash"],
        "ts_signed": epoch["revocation_ts_signed"],
        "nonce": epoch["revocation_nonce"],
        "signature": _hex_sig(epoch["revocation_signature_b64u"]),
    }


def _identity(epoch: Mapping[str, Any]) -> dict[str, Any]:
    revocation = _revocation(epoch)
    return {
        "agent_id": epoch["agent_id"],
        "pubkey_b64u": epoch["public_key_b64u"],
        "certificate_b64u": epoch["certificate"],
        "device_fingerprint": epoch["device_fp"],
        "valid_from": epoch["valid_from"],
        "valid_until": epoch["valid_until"],
        "revocation": revocation,
    }


def export_cognitive(
    conn: Connection, *, memory_id: str | None = None, report: Report | None = None
) -> dict[str, Any]:
    """The bundle; ``report`` is the in-database verifier's, when the caller already ran it on
    the same snapshot (`aimos verify`), so it is not run twice."""
    evidence = cognitive_evidence(conn, memory_id)
    return with_sql_records(evidence, report if report is not None else verify_brain(conn, memory_id))


def with_sql_records(evidence: dict[str, Any], report: Report) -> dict[str, Any]:
    """The bundle: ``evidence`` (cognitive_evidence) with the in-database verifier's own records
    of the same snapshot."""
    return {
        **evidence,
        "sql_records": [
            {
                "memory_id": r.memory_id,
                "certification_status": r.certification_status,
                "ok": r.ok,
                "chain_length": r.chain_length,
                "signatures_verified": r.sigs_verified,
                "reason": r.reason,
            }
            for r in report.records
        ],
    }


Epochs = dict[tuple[str, int], q.EpochWithRevocation]  # (agent id, valid from) -> the epoch


def cognitive_evidence(conn: Connection, memory_id: str | None = None) -> dict[str, Any]:
    """Everything of the bundle but the in-database verifier's records (with_sql_records adds
    them): read without a verdict, so it can be read while the verifier's signatures are checked."""
    meta = brain_meta(conn)
    master = master_row(conn)
    epochs: Epochs = {(e["agent_id"], e["valid_from"]): e for e in q.epochs_with_revocations(conn)}
    event_streams = _event_streams(conn, epochs)
    projections = _projections(conn, epochs)
    baselines = {b["memory_id"]: b for b in q.weight_baselines(conn)}
    labels = _labels(conn)
    memories = [
        _memory(m, baselines.get(m["memory_id"]), projections, labels, epochs)
        for m in q.memories_in_order(conn, memory_id)
    ]
    return {
        "format": dict(FORMAT),
        "company_id": meta["company_id"],
        "master_identity": {
            "public_key_b64u": master["public_key_b64u"],
            "fingerprint": master["fingerprint"],
        },
        "event_streams": event_streams,
        "memories": memories,
    }


def _event_streams(conn: Connection, epochs: Epochs) -> list[dict[str, Any]]:
    """Every signer epoch's events, in chain order, each stream with its signer's identity."""
    streams: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for ev in q.events_in_chain_order(conn):
        body = json_loads(read_event(ev)["signed_body"])
        streams.setdefault((ev["signer_agent_id"], ev["signer_valid_from"]), []).append(_event(ev, body))
    return [
        {
            "signer_agent_id": a,
            "signer_valid_from": vf,
            "identity": _identity(epochs[(a, vf)]) if (a, vf) in epochs else None,
            "events": evs,
        }
        for (a, vf), evs in streams.items()
    ]


def _event(ev: dict[str, Any], body: Any) -> dict[str, Any]:
    """One event of a stream: its row and its signed ``body``."""
    return {
        "event_id": ev["event_id"],
        "company_id": ev["company_id"],
        "signer_agent_id": ev["signer_agent_id"],
        "signer_valid_from": ev["signer_valid_from"],
        "certificate_fingerprint": body.get("cert_fingerprint"),
        "identity_tier": body.get("identity_tier"),
        "operation": ev["operation"],
        "subject_agent_id": body.get("subject_agent_id"),
        "authority_kind": body.get("authority_kind"),
        "key": body.get("key"),
        "metadata": body.get("metadata"),
        "parent_event_id": body.get("parent_event_id"),
        "ledger_sequence": ev["ledger_seq"],
        "previous_mutation_hash": ev["prev_mutation_hash"],
        "content_hash": ev["content_hash"],
        "mutation_hash": ev["mutation_hash"],
        "signed_at": ev["ts_signed"],
        "nonce": ev["nonce"],
        "signature": _hex_sig(ev["signature_b64u"]),
        "proof_required": True,
        "ledger_version": 1,
        "signed_body": body,
    }


def _projections(conn: Connection, epochs: Epochs) -> dict[str, list[dict[str, Any]]]:
    """Every memory's weight projections in write order, each with its REWEIGHT node."""
    projections: dict[str, list[dict[str, Any]]] = {}
    for w in q.projections_with_provenance(conn, provenance_body_sql(conn, "p")):
        epoch = epochs.get((w["signer_agent_id"], w["signer_valid_from"]))
        projections.setdefault(w["memory_id"], []).append(_projection(w, epoch))
    return projections


def _projection(w: q.ProjectionEvidence, epoch: q.EpochWithRevocation | None) -> dict[str, Any]:
    return {
        "projection_id": w["projection_id"],
        "company_id": w["company_id"],
        "memory_id": w["memory_id"],
        "old_weight_milli": w["old_weight_milli"],
        "new_weight_milli": w["new_weight_milli"],
        "old_weight_float4": float4_hex(w["old_weight_milli"]),
        "new_weight_float4": float4_hex(w["new_weight_milli"]),
        "provenance_mutation_hash": w["provenance_mutation_hash"],
        "previous_projection_hash": w["prev_projection_hash"],
        "projection_hash": w["projection_hash"],
        "transition_hash": w["transition_hash"],
        "transition_signature": _hex_sig(w["transition_signature_b64u"]),
        "provenance": {
            "provenance_id": w["provenance_id"],
            # None (a stored form that reads as nothing) fails here, as damage: parity reports it
            "body": json_loads(cast(str, w["body_json"])),
            "content_hash": w["content_hash"],
            "mutation_hash": w["provenance_mutation_hash"],
            "previous_mutation_hash": w["prev_mutation_hash"],
            "signed_at": w["ts_signed"],
            "nonce": w["nonce"],
            "signature": _hex_sig(w["signature_b64u"]),
            "event_type": REWEIGHT_EVENT,
            "binding_schema_version": w["binding_schema_version"],
            "signer_agent_id": w["signer_agent_id"],
            "signer_valid_from": w["signer_valid_from"],
            "certificate_fingerprint": w["cert_fingerprint"],
            "identity_tier": w["identity_tier"],
            "signature_form": 1,
            "request_signature_form": 1,
            "signed_method": None,
            "signed_path": None,
            "signed_claims": None,
            "is_genesis": bool(w["is_genesis"]),
            "backfilled": bool(w["backfilled"]),
            "memory_originated_at": None,
            "identity": _identity(epoch) if epoch else None,
        },
    }


def _labels(conn: Connection) -> dict[str, list[dict[str, Any]]]:
    """Every memory's epistemic label chain, in write order."""
    labels: dict[str, list[dict[str, Any]]] = {}
    for c in q.classifications_in_order(conn):
        labels.setdefault(c["memory_id"], []).append(
            {
                "label": c["label"],
                "confidence_milli": c["confidence_milli"],
                "basis": c["basis"],
                "live_content_hash": c["live_content_hash"],
                "authority_event_id": c["authority_event_id"],
                "authority_mutation_hash": c["authority_mutation_hash"],
                "previous_classification_hash": c["prev_classification_hash"],
                "classification_hash": c["classification_hash"],
            }
        )
    return labels


def _memory(
    m: dict[str, Any],
    b: WeightBaselineRow | None,
    projections: dict[str, list[dict[str, Any]]],
    labels: dict[str, list[dict[str, Any]]],
    epochs: Epochs,
) -> dict[str, Any]:
    """One memory of the bundle: its weight, its signed baseline ``b`` (if any), its projections
    and its label chain."""
    return {
        "memory_id": m["memory_id"],
        "company_id": m["company_id"],
        "content_hash": m["live_content_hash"],
        "retrieval_weight_milli": m["retrieval_weight_milli"],
        "retrieval_weight_float4": float4_hex(m["retrieval_weight_milli"]),
        "baseline": None if b is None else _baseline(b, epochs),
        "projections": projections.get(m["memory_id"], []),
        "epistemic": {"label": m["epistemic_label"], "chain": labels.get(m["memory_id"], [])},
    }


def _baseline(b: WeightBaselineRow, epochs: Epochs) -> dict[str, Any]:
    return {
        "company_id": b["company_id"],
        "memory_id": b["memory_id"],
        "live_content_hash": b["live_content_hash"],
        "observed_weight_float4": b["observed_weight_float4"],
        "observed_weight_milli": b["observed_weight_milli"],
        "observed_at": b["observed_at"],
        "attestation_reason": b["attestation_reason"],
        "historical_origin_claimed": False,
        "signer_agent_id": HOUSEKEEPER,
        "signer_valid_from": b["signer_valid_from"],
        "certificate_fingerprint": b["certificate_fingerprint"],
        "event_id": b["event_id"],
        "event_mutation_hash": b["event_mutation_hash"],
        "baseline_hash": b["baseline_hash"],
        "signature": _hex_sig(b["signature_b64u"]),
        "identity": _identity(epochs[(HOUSEKEEPER, b["signer_valid_from"])])
        if (HOUSEKEEPER, b["signer_valid_from"]) in epochs
        else None,
    }
