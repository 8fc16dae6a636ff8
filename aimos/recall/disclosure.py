"""Disclosure verification: before a memory is shown, its signed record must still hold.

Checked per memory: the save provenance node (canonical body, content and mutation hashes, the
agent's request-form-3 signature under its epoch key, the epoch's master-issued certificate,
the epoch window and no revocation at signing time), the live content hash (recomputed from
the row and equal to the signed body's), the housekeeper's `memory_saved` event that binds
them (link hash and signature), and the version state. Any failure fails the recall closed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json, json_loads
from aimos.crypto.certs import CertificateCache, verify_certificate
from aimos.crypto.ed25519 import verify
from aimos.crypto.encoding import b64u_decode
from aimos.crypto.messages import payload_message, request_message
from aimos.errors import AimosError, DisclosureError
from aimos.identity.master import master_row
from aimos.ledger.events import read_event
from aimos.store.connection import Connection
from aimos.store.queries import recall as q
from aimos.store.seals import sealed_tables
from aimos.verify.chains.labels import label_chain_reasons
from aimos.verify.chains.weights import chain_reasons
from aimos.verify.kit.redaction import body_redacted, check_record, row_redacted
from aimos.vocabulary import HOUSEKEEPER, UNVERIFIED

_certs = CertificateCache()


@dataclass(frozen=True)
class Disclosed:
    memory_id: str
    live_content_hash: str
    save_mutation_hash: str
    binding_mutation_hash: str
    version_state: str


# the stored column a failed check names, by the reason (or its prefix before ":")
_COLUMNS = {
    "label_chain": "epistemic_label",
    "weight_chain": "retrieval_weight_milli",
    "quarantine_state_differs_from_signed_save": "quarantine",
    "company_differs_from_signed_save": "company_id",
    "live_content_hash_mismatch": "live_content_hash",
    "live_row_differs_from_signed_save": "key, value, scope, type, clearance, data class or source",
    "author_differs_from_signed_save": "author_agent_id",
    "created_at_differs_from_signed_event": "created_at",
}


# a batch's weight chain reasons and label chain reasons, by memory id
KnownChains = tuple[dict[str, tuple[str | None, int, int]], dict[str, tuple[str | None, int, str]]]


def _fail(memory_id: str, reason: str, column: str | None = None) -> DisclosureError:
    return DisclosureError(memory_id, reason, column=column or _COLUMNS.get(reason.split(":", 1)[0]))


def _live_fields_changed(memory: dict[str, Any], records: _Records) -> str | None:
    """The live fields of a row that differ from its signed save body, named (None when the body
    cannot be read: the checks after name that)."""
    p = records.provenance.get(memory["memory_id"])
    try:
        body = json_loads(p["body_json"]) if p is not None else None
    except (ValueError, AimosError):
        body = None
    if not isinstance(body, dict):
        return None
    changed = [
        f
        for f in commitments.LIVE_ROW_FIELDS
        if commitments.js_string(memory.get(f)) != commitments.js_string(body.get(f))
    ]
    return ", ".join(changed) or None


@dataclass
class _Records:
    """The signed records of a batch of memories, read with one query per table."""

    provenance: dict[str, dict[str, Any]]
    epochs: dict[tuple[str, int], q.SignerEpoch]
    events: dict[str, dict[str, Any]]
    links: dict[str, str]
    signed_successors: dict[str, str]
    chains: dict[str, tuple[str | None, int, int]]
    labels: dict[str, tuple[str | None, int, str]]
    # the redacted memories of the batch: (the record's failure or None, the parsed record)
    redactions: dict[str, tuple[str | None, dict[str, Any] | None]]
    # of those whose record signs the redacted row's cells (v3), the hash of the row's cells now
    redacted_cells: dict[str, bytes]

    @classmethod
    def load(
        cls, conn: Connection, memories: list[dict[str, Any]], known: KnownChains | None = None
    ) -> _Records:
        ids = [m["memory_id"] for m in memories]
        hashes = [m["save_mutation_hash"] for m in memories]
        provenance = {r["memory_id"]: r for r in q.provenance_by_mutation(conn, hashes)}
        epochs = {(r["agent_id"], r["valid_from"]): r for r in q.signer_epochs(conn)}
        # each body as signed (a save's is stored deflated: migration 16)
        events = {r["subject_memory_id"]: read_event(r) for r in q.saved_events(conn, ids)}
        links = q.supersession_links(conn, ids)
        successors = q.signed_successors(conn, ids)
        master = master_row(conn)
        redactions = {
            r["memory_id"]: check_record(
                r["record_json"],
                r["signature_b64u"],
                master["public_key_b64u"],
                master["fingerprint"],
                memory_id=r["memory_id"],
                company_id=r["company_id"],
                created_at=r["created_at"],
                redaction_id=r["redaction_id"],
            )
            for r in q.redactions_of(conn, ids)
        }
        chains, labels = known or (chain_reasons(conn, memories), label_chain_reasons(conn, memories))
        shape = sealed_tables(conn)["memories"]
        cells = {
            mid: shape.content_hash(row)
            for mid, (_reason, record) in redactions.items()
            if record is not None and "contents" in record
            for row in q.sealed_cells(conn, shape, mid)
        }
        return cls(provenance, epochs, events, links, successors, chains, labels, redactions, cells)


def verify_for_disclosure(conn: Connection, memory: dict[str, Any], *, allow_superseded: bool) -> Disclosed:
    return verify_many(conn, [memory], allow_superseded=allow_superseded)[0]


def verify_many(
    conn: Connection,
    memories: list[dict[str, Any]],
    *,
    allow_superseded: bool,
    known: KnownChains | None = None,
) -> list[Disclosed]:
    """Verify each memory (in order) before disclosure; the first failure raises. ``known``: the
    memories' weight and label chain reasons (weight_chain.chain_reasons,
    label_chain.label_chain_reasons) when the caller has just computed them on the same snapshot
    (the in-database verifier), so they are not computed twice."""
    if not memories:
        return []
    records = _Records.load(conn, memories, known)
    master_key = master_row(conn)["public_key_b64u"]
    return [_verify_one(m, records, master_key, allow_superseded) for m in memories]


def _redaction(mid: str, memory: dict[str, Any], records: _Records) -> dict[str, Any] | None:
    """The memory's redaction record when its text was removed; a record that does not verify, or
    a row that is not what it names, fails the memory."""
    found = records.redactions.get(mid)
    if found is None:
        return None
    reason, record = found
    if reason is not None or record is None:
        raise _fail(mid, "redaction_record_invalid")
    signed_cells = record["contents"][0]["after"] if "contents" in record else None
    if (
        not row_redacted(record, memory)
        or (signed_cells is not None and records.redacted_cells.get(mid, b"").hex() != signed_cells)
        or record["live_content_hash"] != memory["live_content_hash"]
        or record["save_mutation_hash"] != memory["save_mutation_hash"]
        or record["company_id"] != memory["company_id"]
    ):
        raise _fail(mid, "redacted_row_differs_from_record")
    return record


def _verify_one(  # noqa: C901, PLR0912, PLR0915 (one fail-closed check per stored field, in order)
    memory: dict[str, Any], records: _Records, master_key: str, allow_superseded: bool
) -> Disclosed:
    mid = memory["memory_id"]
    redaction = _redaction(mid, memory, records)
    live = memory["live_content_hash"] if redaction else commitments.live_content_hash(memory).hex()
    if live != memory["live_content_hash"]:
        raise _fail(mid, "live_content_hash_mismatch", _live_fields_changed(memory, records))
    p = records.provenance.get(mid)
    if p is None or p["event_type"] != "SAVE" or p["mutation_hash"] != memory["save_mutation_hash"]:
        raise _fail(mid, "save_provenance_missing")
    try:
        body = json_loads(p["body_json"])
        body_bytes = canonical_json(body)
    except (ValueError, AimosError):
        raise _fail(mid, "save_provenance_body_invalid") from None
    if body_bytes.decode("utf-8") != p["body_json"]:
        raise _fail(mid, "save_provenance_body_not_canonical")
    content = commitments.sha256(body_bytes)
    if redaction is not None:  # the master checked the removed bytes; the record carries their hash
        if (
            content.hex() != redaction["redacted_body_sha256"]
            or not body_redacted(redaction, body)
            or p["content_hash"] != redaction["save_content_hash"]
            or p["provenance_id"] != redaction["save_provenance_id"]
            or p["mutation_hash"] != redaction["save_mutation_hash"]
        ):
            raise _fail(mid, "redacted_save_differs_from_record")
        content = bytes.fromhex(p["content_hash"])
    elif content.hex() != p["content_hash"]:
        raise _fail(mid, "save_provenance_content_hash_mismatch")
    elif commitments.live_content_hash(body).hex() != live:
        raise _fail(mid, "live_row_differs_from_signed_save")
    mutation = commitments.provenance_mutation_hash(content, None, p["nonce"], p["ts_signed"]).hex()
    if mutation != p["mutation_hash"]:
        raise _fail(mid, "save_provenance_mutation_hash_mismatch")
    epoch = records.epochs.get((p["signer_agent_id"], p["signer_valid_from"]))
    if epoch is None or epoch["cert_fingerprint"] != p["cert_fingerprint"]:
        raise _fail(mid, "save_signer_epoch_missing")
    if not _certs.seen(epoch["cert_fingerprint"], master_key):
        try:
            cert = _certs.parse(epoch["certificate"])
            verify_certificate(cert, master_key)
        except AimosError:
            raise _fail(mid, "save_signer_certificate_invalid") from None
        if cert.pubkey != epoch["public_key_b64u"]:
            raise _fail(mid, "save_signer_certificate_invalid")
        _certs.add(epoch["cert_fingerprint"], master_key)
    if not epoch["valid_from"] <= p["ts_signed"] <= epoch["valid_until"]:
        raise _fail(mid, "save_signed_outside_epoch")
    if epoch["revoked_at"] is not None and epoch["revoked_at"] <= p["ts_signed"]:
        raise _fail(mid, "save_signer_revoked_before_signing")
    try:
        sig = b64u_decode(p["signature_b64u"])
    except AimosError:
        raise _fail(mid, "save_signature_invalid") from None
    message = request_message(
        body, p["signed_method"], p["signed_path"], p["nonce"], p["ts_signed"], body_bytes=body_bytes
    )
    if redaction is None and not verify(epoch["public_key_b64u"], message, sig):
        raise _fail(mid, "save_signature_invalid")
    event = records.events.get(mid)
    if event is None:
        raise _fail(mid, "memory_saved_event_missing")
    signer = records.epochs.get((event["signer_agent_id"], event["signer_valid_from"]))
    if event["signer_agent_id"] != HOUSEKEEPER:
        raise _fail(mid, "memory_saved_event_not_signed_by_housekeeper")
    try:
        ebody = json_loads(event["signed_body"] or "")  # None: a stored form that reads as nothing
        ebytes = canonical_json(ebody)
        esig = b64u_decode(event["signature_b64u"])
    except (ValueError, AimosError):
        raise _fail(mid, "memory_saved_event_invalid") from None
    meta = ebody.get("metadata") or {}
    if (
        meta.get("memory_id") != mid
        or meta.get("save_mutation_hash") != p["mutation_hash"]
        or meta.get("live_content_hash") != live
    ):
        raise _fail(mid, "memory_saved_event_binding_mismatch")
    econtent = commitments.sha256(ebytes)
    link = commitments.event_link_hash(
        bytes.fromhex(event["prev_mutation_hash"]), econtent, event["nonce"], event["ts_signed"]
    )
    if econtent.hex() != event["content_hash"] or link.hex() != event["mutation_hash"]:
        raise _fail(mid, "memory_saved_event_hash_mismatch")
    emessage = payload_message(ebody, event["nonce"], event["ts_signed"], body_bytes=ebytes)
    if signer is None or not verify(signer["public_key_b64u"], emessage, esig):
        raise _fail(mid, "memory_saved_event_signature_invalid")
    if bool(meta.get("retained_quarantine")) != bool(memory["quarantine"]):
        raise _fail(mid, "quarantine_state_differs_from_signed_save")
    # the row's own fields are what was signed: who saved it (the request's signer), where (the
    # company in the signed body), when (the housekeeper's memory_saved event)
    if (
        memory["author_agent_id"] != p["signer_agent_id"]
        or memory["author_valid_from"] != p["signer_valid_from"]
        or ebody.get("actor_agent_id") != p["signer_agent_id"]
    ):
        raise _fail(mid, "author_differs_from_signed_save")
    if not (memory["company_id"] == p["company_id"] == body.get("company_id") == event["company_id"]):
        raise _fail(mid, "company_differs_from_signed_save")
    if memory["save_provenance_id"] != p["provenance_id"] or p["memory_id"] != mid:
        raise _fail(mid, "save_provenance_missing")
    if not (memory["created_at"] == p["created_at"] == event["ts_signed"] == ebody.get("ts_signed")):
        raise _fail(mid, "created_at_differs_from_signed_event")
    chain_reason = records.chains.get(mid, (None, 0, 0))[0]
    if chain_reason is not None:
        raise _fail(mid, f"weight_chain:{chain_reason}")
    label_reason = records.labels.get(mid, (None, 0, UNVERIFIED))[0]
    if label_reason is not None:
        raise _fail(mid, f"label_chain:{label_reason}")
    linked = records.links.get(mid)
    if linked != records.signed_successors.get(mid):
        raise _fail(mid, "supersession_link_differs_from_signed_saves")
    if linked is not None and not allow_superseded:
        raise _fail(mid, "superseded_version_selected")
    state = "superseded" if linked is not None else "current"
    return Disclosed(mid, live, p["mutation_hash"], event["mutation_hash"], state)
