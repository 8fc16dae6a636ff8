"""The housekeeper's signed proofs in a V2 mutation witness: the outcome and terminal events
(event-link mutation hash, payload form), the valence row (row hash) and the REWEIGHT provenance
(v1 mutation hash). Each proof is a table of (predicate, message) rows checked in order; the first
that does not hold (or raises) is the failure, and all end with the same signed tail: the content
hash, the link hash and the housekeeper's signature."""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from aimos.crypto import commitments
from aimos.crypto.ed25519 import verify
from aimos.crypto.messages import payload_message
from aimos.errors import AimosError
from aimos.verify import kit
from aimos.verify.v2.mutation_structure import Checked
from aimos.vocabulary import HOUSEKEEPER as HOUSEKEEPER
from aimos.vocabulary import REWEIGHT_EVENT, VALENCE_EVENT

Rows = tuple[tuple[Callable[[], bool], str], ...]

_RAISES = (AimosError, KeyError, TypeError, ValueError, AttributeError, OverflowError, struct.error)

EVENT_FIELDS_SIGNED = (
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


def _ms(value: object) -> int | None:
    return kit.parse_time(value, form="iso", unit="ms")


class Housekeeper:
    """The housekeeper epoch of the verified trust context: the signer of every proof."""

    def __init__(self, body: dict[str, Any]) -> None:
        self.agent_id: object = body.get("agent_id")
        self.valid_from_ms = _ms(body.get("valid_from"))
        self.valid_until_ms = _ms(body.get("valid_until"))
        self.cert_fingerprint: object = body.get("cert_fingerprint")
        self.public_key: object = body.get("public_key_b64u")
        self.certificate: object = body.get("certificate")
        self.company: object = body.get("company_id")

    def usable(self) -> bool:
        return (
            self.agent_id == HOUSEKEEPER
            and self.valid_from_ms is not None
            and self.valid_until_ms is not None
            and kit.is_hex64(self.cert_fingerprint)
            and kit.is_text(self.public_key)
            and kit.is_text(self.certificate)
        )

    def within(self, ts: int) -> bool:
        assert self.valid_from_ms is not None and self.valid_until_ms is not None
        return self.valid_from_ms <= ts * 1000 <= self.valid_until_ms

    def ts_ok(self, ts: object) -> bool:
        return kit.is_int(ts) and ts >= 0 and self.within(ts)

    def signs(self, proof: dict[str, Any], agent_field: str, from_field: str) -> bool:
        """The proof names this epoch (its end too, when it states one) as its signer."""
        from_ms = _ms(proof.get(from_field))
        until_field = from_field.replace("_from", "_until")
        return (
            proof.get(agent_field) == HOUSEKEEPER
            and from_ms is not None
            and from_ms == self.valid_from_ms
            and (until_field not in proof or _ms(proof[until_field]) == self.valid_until_ms)
            and proof.get("cert_fingerprint") == self.cert_fingerprint
            and proof.get("signer_public_key_b64u") == self.public_key
            and proof.get("signer_certificate") == self.certificate
        )


def first_failure(rows: Rows) -> str | None:
    """The message of the first row that does not hold (a row that raises does not hold)."""
    for predicate, message in rows:
        try:
            ok = predicate()
        except _RAISES:
            ok = False
        if not ok:
            return message
    return None


def signed_tail(
    proof: dict[str, Any],
    body: dict[str, Any],
    hk: Housekeeper,
    link: Callable[[bytes], bytes],
    hash_field: str,
    link_message: str,
) -> Rows:
    """The rows every proof ends with: ``content_hash = H(canonical body)``, ``hash_field`` equals
    ``link(content hash)`` (``link`` raises where it cannot hold), and the housekeeper's
    payload-form signature over the body."""

    def content_hash() -> str:
        return kit.canonical_sha256_hex(body)

    def link_holds() -> bool:
        return kit.is_text(proof["nonce"]) and link(bytes.fromhex(content_hash())).hex() == proof.get(
            hash_field
        )

    def signature_holds() -> bool:
        nonce, ts = proof.get("nonce"), proof.get("ts_signed")
        signature = kit.signature_bytes(proof.get("signature_b64u"))
        if not kit.is_text(nonce) or not kit.is_int(ts) or signature is None:
            return False
        return verify(str(hk.public_key), payload_message(body, nonce, ts), signature)

    return (
        (lambda: proof.get("content_hash") == content_hash(), "content_hash does not recompute"),
        (link_holds, link_message),
        (signature_holds, "the housekeeper signature does not verify"),
    )


def provenance_link(proof: dict[str, Any], prev_field: str) -> Callable[[bytes], bytes]:
    """The provenance-row hash over a content hash (the valence row and the REWEIGHT row)."""

    def link(content: bytes) -> bytes:
        prev = proof.get(prev_field)
        if prev is not None and not kit.is_hex64(prev):
            raise ValueError(f"{prev_field} is neither null nor 64-hex")
        ts: Any = proof.get("ts_signed")
        return commitments.provenance_mutation_hash(
            content, bytes.fromhex(prev) if prev is not None else None, proof["nonce"], ts
        )

    return link


def event_proof_failure(
    proof_value: Any, summary: dict[str, Any], hk: Housekeeper, company: str
) -> str | None:
    """Why a full signed event proof does not prove ``summary``; None when it does."""
    proof = kit.as_dict(proof_value)
    if proof is None:
        return "the event proof is not an object"
    body = kit.as_dict(proof.get("signed_body"))
    if body is None:
        return "signed_body is not an object"
    ts: Any = proof.get("ts_signed")

    def event_link(content: bytes) -> bytes:
        prev = proof["prev_mutation_hash"]
        link = commitments.event_link_hash(bytes.fromhex(prev), content, proof["nonce"], ts)
        if not kit.is_hex64(prev):
            raise ValueError("prev_mutation_hash is not lowercase 64-hex")
        return link

    return first_failure(
        (
            (
                lambda: (
                    kit.is_uuid(proof.get("event_id")) and proof.get("event_id") == summary.get("event_id")
                ),
                "event_id is not the bundle's",
            ),
            (
                lambda: all(
                    kit.same(proof.get(f), summary.get(f))
                    for f in ("operation", "parent_event_id", "mutation_hash")
                ),
                "operation, parent or mutation hash is not the bundle's",
            ),
            (
                lambda: (
                    kit.as_dict(proof.get("metadata")) is not None
                    and kit.same(proof.get("metadata"), summary.get("metadata"))
                ),
                "metadata is not the bundle's",
            ),
            (
                lambda: proof.get("proof_required") is True and kit.is_int(proof.get("ledger_version"), 1, 1),
                "not a proof-required ledger_version 1 event",
            ),
            (
                lambda: hk.signs(proof, "signer_agent_id", "signer_valid_from"),
                "the signer is not the trust context's housekeeper epoch",
            ),
            (lambda: proof.get("company_id") == company, "the event is for another company"),
            (
                lambda: (
                    all(kit.same(body.get(f), proof.get(f)) for f in EVENT_FIELDS_SIGNED)
                    and _ms(body.get("signer_valid_from")) == _ms(proof.get("signer_valid_from"))
                ),
                "signed_body does not match the proof's fields",
            ),
            (lambda: kit.is_int(proof.get("ledger_seq"), 1), "ledger_seq is not a positive integer"),
            (lambda: hk.ts_ok(ts), "ts_signed is outside the housekeeper epoch"),
            (lambda: _ms(proof.get("timestamp")) == ts * 1000, "timestamp is not ts_signed"),
            *signed_tail(
                proof, body, hk, event_link, "mutation_hash", "mutation_hash does not recompute (event link)"
            ),
        )
    )


def _body_of(proof_value: Any, what: str) -> tuple[dict[str, Any], dict[str, Any]] | str:
    """A provenance-row proof and its ``body_json``, or why it has none."""
    proof = kit.as_dict(proof_value)
    if proof is None:
        return f"the {what} proof is not an object"
    body = kit.as_dict(proof.get("body_json"))
    if body is None:
        return "body_json is not an object"
    return proof, body


def valence_proof_failure(proof_value: Any, checked: Checked, hk: Housekeeper) -> str | None:
    """Why the signed valence row does not prove the bundle's; None when it does."""
    found = _body_of(proof_value, "valence")
    if isinstance(found, str):
        return found
    proof, body = found
    summary = checked.valence
    ts: Any = proof.get("ts_signed")
    return first_failure(
        (
            (lambda: proof.get("proof_required") is True, "not a proof-required valence row"),
            (
                lambda: hk.signs(proof, "signer_agent_id", "signer_valid_from"),
                "the signer is not the trust context's housekeeper epoch",
            ),
            (
                lambda: (
                    proof.get("row_hash") == summary.get("row_hash")
                    and kit.same(proof.get("reward_sign"), summary.get("reward_sign"))
                ),
                "row hash or reward sign is not the bundle's",
            ),
            (lambda: kit.same(body, summary.get("body_json")), "body_json is not the bundle's"),
            (
                lambda: (
                    proof.get("memory_id") == checked.outcome["memory_id"]
                    and proof.get("company_id") == checked.company
                ),
                "the row is for another memory or company",
            ),
            (
                lambda: (
                    body.get("event_type") == VALENCE_EVENT
                    and body.get("company_id") == checked.company
                    and kit.same(body.get("reward_sign"), proof.get("reward_sign"))
                ),
                "the signed body is not this company's VALENCE row with this reward sign",
            ),
            (
                lambda: (
                    kit.same(body.get("ts_signed"), ts)
                    and body.get("cert_fingerprint") == proof.get("cert_fingerprint")
                    and body.get("signer_agent_id") == proof.get("signer_agent_id")
                    and ("identity_tier" not in body or body["identity_tier"] == proof.get("identity_tier"))
                    and (
                        "context_hash" not in proof
                        or kit.same(proof["context_hash"], body.get("context_hash"))
                    )
                    and _ms(body.get("signer_valid_from")) == _ms(proof.get("signer_valid_from"))
                ),
                "the signed body does not name the proof's signer and time",
            ),
            (lambda: hk.ts_ok(ts), "ts_signed is outside the housekeeper epoch"),
            *signed_tail(
                proof,
                body,
                hk,
                provenance_link(proof, "prev_hash"),
                "row_hash",
                "row_hash does not recompute",
            ),
        )
    )


def provenance_proof_failure(
    proof_value: Any, summary: dict[str, Any], checked: Checked, hk: Housekeeper
) -> str | None:
    """Why the signed REWEIGHT provenance row does not prove the bundle's; None when it does."""
    found = _body_of(proof_value, "provenance")
    if isinstance(found, str):
        return found
    proof, body = found
    ts: Any = proof.get("ts_signed")

    def body_names_signer() -> bool:
        # optional in the body; when named they must be the proof's
        return (
            ("cert_fingerprint" not in body or body["cert_fingerprint"] == proof.get("cert_fingerprint"))
            and ("signer_agent_id" not in body or body["signer_agent_id"] == proof.get("agent_id"))
            and (
                "signer_valid_from" not in body
                or _ms(body["signer_valid_from"]) == _ms(proof.get("agent_valid_from"))
            )
        )

    return first_failure(
        (
            (
                lambda: all(
                    kit.same(proof.get(f), summary.get(f))
                    for f in ("provenance_id", "memory_id", "event_type", "mutation_hash")
                ),
                "provenance id, memory, event type or mutation hash is not the bundle's",
            ),
            (lambda: kit.same(body, summary.get("body_json")), "body_json is not the bundle's"),
            (
                lambda: (
                    proof.get("event_type") == REWEIGHT_EVENT and body.get("event_type") == REWEIGHT_EVENT
                ),
                "not a REWEIGHT provenance row",
            ),
            (lambda: proof.get("backfilled") is False, "a backfilled row proves nothing"),
            (
                lambda: proof.get("is_genesis") is (proof.get("prev_mutation_hash") is None),
                "is_genesis contradicts prev_mutation_hash",
            ),
            (
                lambda: hk.signs(proof, "agent_id", "agent_valid_from"),
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
                    kit.is_int(proof.get("sig_form_version"), 1, 1)
                    and kit.is_int(proof.get("request_sig_form"), 1, 1)
                ),
                "not a payload-form (v1) provenance signature",
            ),
            (lambda: hk.ts_ok(ts), "ts_signed is outside the housekeeper epoch"),
            *signed_tail(
                proof,
                body,
                hk,
                provenance_link(proof, "prev_mutation_hash"),
                "mutation_hash",
                "mutation_hash does not recompute",
            ),
        )
    )
