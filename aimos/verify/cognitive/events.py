"""Signed events of a cognitive bundle: one event's proof, and one signer epoch's ledger stream
(identity epoch, genesis predecessor, links, certificate at each signing time, revocation)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json
from aimos.crypto.ed25519 import verify
from aimos.crypto.messages import payload_message
from aimos.errors import AimosError
from aimos.verify.cognitive import identity as ident
from aimos.verify.cognitive.reasons import _LEDGER_CERT, _LEDGER_PROOF, R
from aimos.verify.cognitive.results import EventStreamResult
from aimos.verify.kit import CheckFailed, fail, hex_bytes, is_int, same


@dataclass(frozen=True)
class IndexedEvent:
    event: Mapping[str, Any]
    verified: bool


def memories_named(event: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """The memories a signed event names, each with the field that names it: the memory the event
    is about (its body's ``subject_memory_id``, its metadata's ``memory_id``: a save, an outcome, a
    weight transition, a label, a redaction), the version a correction supersedes, and a recall
    receipt's disclosed (``evidence``) and withheld memories."""
    body, meta = event.get("signed_body"), event.get("metadata")
    named: list[tuple[object, str]] = []
    if isinstance(body, Mapping):
        named.append((body.get("subject_memory_id"), "subject_memory_id"))
    if isinstance(meta, Mapping):
        named += [(meta.get(k), f"metadata.{k}") for k in ("memory_id", "supersedes")]
        evidence, withheld = meta.get("evidence"), meta.get("withheld_memory_ids")
        if isinstance(evidence, list):
            named += [
                (e.get("memory_id"), f"metadata.evidence[{i}].memory_id")
                for i, e in enumerate(evidence)
                if isinstance(e, Mapping)
            ]
        if isinstance(withheld, list):
            named += [(m, f"metadata.withheld_memory_ids[{i}]") for i, m in enumerate(withheld)]
    for memory_id, where in named:
        if isinstance(memory_id, str) and memory_id:
            yield memory_id, where


def event_proof(event: Mapping[str, Any], pubkey: str) -> str | None:
    """The event's content hash, ledger-link mutation hash, field binding and signature: None, or
    the reason (composed by the caller with its ledger or baseline prefix)."""
    body = event.get("signed_body")
    if (
        not isinstance(body, dict)
        or event.get("proof_required") is not True
        or not same(event.get("ledger_version"), 1)
    ):
        return R.EVENT_PROOF_VERSION
    previous = hex_bytes(event.get("previous_mutation_hash"), 32)
    nonce, signed_at = event.get("nonce"), event.get("signed_at")
    if previous is None or not isinstance(nonce, str) or not is_int(signed_at, 1):
        return R.EVENT_PROOF_MALFORMED
    try:
        content = commitments.provenance_content_hash(body)
        mutation = commitments.event_link_hash(previous, content, nonce, signed_at)
        same_metadata = canonical_json(body.get("metadata")) == canonical_json(event.get("metadata"))
    except AimosError:
        return R.EVENT_PROOF_MALFORMED
    exact = (
        same(body.get("event_id"), event.get("event_id"))
        and same(body.get("company_id"), event.get("company_id"))
        and same(body.get("subject_agent_id"), event.get("subject_agent_id"))
        and same(body.get("signer_agent_id"), event.get("signer_agent_id"))
        and same(ident.epoch_of_iso(body.get("signer_valid_from")), event.get("signer_valid_from"))
        and same(body.get("cert_fingerprint"), event.get("certificate_fingerprint"))
        and same(body.get("identity_tier"), event.get("identity_tier"))
        and same(body.get("authority_kind"), event.get("authority_kind"))
        and same(body.get("operation"), event.get("operation"))
        and same(body.get("key"), event.get("key"))
        and same_metadata
        and same(body.get("parent_event_id"), event.get("parent_event_id"))
        and same(body.get("ledger_seq"), event.get("ledger_sequence"))
        and body.get("prev_mutation_hash") == previous.hex()
        and same(body.get("ts_signed"), signed_at)
        and hex_bytes(event.get("content_hash"), 32) == content
        and hex_bytes(event.get("mutation_hash"), 32) == mutation
    )
    if not exact:
        return R.EVENT_PROOF_HASH_MISMATCH
    signature = hex_bytes(event.get("signature"), 64)
    if signature is None:
        return R.EVENT_PROOF_MALFORMED
    if not nonce:
        return R.MALFORMED_INPUT
    if not verify(pubkey, payload_message(body, nonce, signed_at), signature):
        return R.SIG_INVALID
    return None


def verify_event_stream(
    stream: object, index: int, company: str, master: ident.Master, seen: dict[str, IndexedEvent]
) -> tuple[EventStreamResult, str | None]:
    """One signer epoch's ledger; every event with an id is added to ``seen`` (with whether its
    stream verified). Returns the result and a detail for a failure."""
    where = f"event_streams[{index}]"
    agent = str(stream.get("signer_agent_id", "")) if isinstance(stream, dict) else ""
    valid_from = stream.get("signer_valid_from") if isinstance(stream, dict) else None
    events = stream.get("events") if isinstance(stream, dict) else None
    count = len(events) if isinstance(events, list) else 0
    added: list[str] = []
    try:
        _check_event_stream(stream, where, company, master)
        reason, detail = None, None
    except CheckFailed as exc:
        reason, detail = exc.reason, exc.detail
    if isinstance(events, list):
        for k, event in enumerate(events):
            event_id = event.get("event_id") if isinstance(event, dict) else None
            if not isinstance(event_id, str) or not event_id:
                continue
            if event_id in seen:
                if reason is None:
                    reason, detail = R.EVENT_DUPLICATE, f"{where}.events[{k}]: event id {event_id} repeats"
                continue
            seen[event_id] = IndexedEvent(event, verified=False)
            added.append(event_id)
    if reason is None:
        for event_id in added:
            seen[event_id] = IndexedEvent(seen[event_id].event, verified=True)
    result = EventStreamResult(
        signer_agent_id=agent,
        signer_valid_from=valid_from if is_int(valid_from) else None,
        event_count=count,
        valid=reason is None,
        reason=reason,
    )
    return result, detail


def _check_event_stream(stream: object, where: str, company: str, master: ident.Master) -> None:
    if not isinstance(stream, dict):
        fail(R.EVENT_STREAM_INVALID, f"{where}: not an object")
    identity = ident.decode_identity(stream.get("identity"), f"{where}.identity")
    if stream.get("signer_agent_id") != identity.agent_id or not same(
        stream.get("signer_valid_from"), identity.valid_from
    ):
        fail(R.EVENT_IDENTITY_MISMATCH, f"{where}: the stream's signer is not its identity's")
    events = stream.get("events")
    if not isinstance(events, list):
        fail(R.EVENT_STREAM_INVALID, f"{where}: events is not a list")
    for k, event in enumerate(events):
        if not isinstance(event, dict) or not is_int(event.get("signed_at"), 1):
            fail(R.EVENT_INVALID, f"{where}.events[{k}]: not an event with integer signed_at")
        epoch = ident.identity_epoch(identity, master, event["signed_at"])
        if (
            event.get("company_id") != company
            or event.get("signer_agent_id") != identity.agent_id
            or not same(event.get("signer_valid_from"), identity.valid_from)
            or epoch
        ):
            fail(
                R.EVENT_IDENTITY_EPOCH_INVALID,
                f"{where}.events[{k}]: signer epoch cannot sign it ({epoch or 'company or signer differs'})",
            )
    previous = commitments.event_genesis_predecessor(company, identity.agent_id, identity.valid_from)
    ids: set[str] = set()
    for k, event in enumerate(events):
        at = f"{where}.events[{k}]"
        signed_at: int = event["signed_at"]
        if (
            not same(event.get("ledger_sequence"), k + 1)
            or hex_bytes(event.get("previous_mutation_hash"), 32) != previous
        ):
            fail(R.LEDGER_CHAIN_LINK_INVALID, f"{at}: does not link to its predecessor")
        cert = ident.parse_cert(identity.certificate)
        if (
            isinstance(cert, str)
            or not same(cert.body.get("agent_id"), identity.agent_id)
            or not same(cert.body.get("pubkey"), identity.pubkey)
            or event.get("certificate_fingerprint") != identity.certificate_fingerprint
        ):
            fail(R.LEDGER_IDENTITY_MISMATCH, f"{at}: certificate is not the signer's")
        key = ident.authority(cert, identity, master)
        if key is None:
            fail(R.LEDGER_CERTIFICATE_ISSUER_INVALID, f"{at}: certificate issuer is not trusted")
        cert_reason = ident.cert_valid_at(cert, key, signed_at)
        if cert_reason is not None:
            fail(_LEDGER_CERT[cert_reason], f"{at}: {cert_reason}")
        revocation = identity.revocation
        if (
            revocation is not None
            and is_int(revocation.get("ts_signed"))
            and revocation["ts_signed"] <= signed_at
        ):
            fail(R.LEDGER_SIGNER_REVOKED, f"{at}: signer was revoked")
        proof_reason = event_proof(event, identity.pubkey)
        if proof_reason is not None:
            fail(_LEDGER_PROOF[proof_reason], f"{at}: {proof_reason}")
        event_id = event.get("event_id")
        if not isinstance(event_id, str) or not event_id or event_id in ids:
            fail(R.EVENT_DUPLICATE, f"{at}: missing or repeated event id")
        ids.add(event_id)
        previous = bytes.fromhex(event["mutation_hash"])
