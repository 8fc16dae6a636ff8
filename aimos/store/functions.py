"""SQL functions the writer registers for the insert triggers (all deterministic, no I/O).

A connection without them (the ``sqlite3`` shell) cannot append to the signed tables: the
triggers fail with "no such function".
"""

from __future__ import annotations

import functools
import hashlib
import struct
from typing import Any

from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json, json_loads, made_here
from aimos.crypto.certs import parse_certificate, verify_certificate
from aimos.crypto.ed25519 import fingerprint_of_b64u, verify
from aimos.crypto.encoding import b64u_decode, hex32, parse_iso_ms
from aimos.crypto.merkle import merkle_root
from aimos.errors import AimosError
from aimos.store.cells import event_body, inflate_bytes, provenance_body
from aimos.store.words import index_text
from aimos.verify.kit.inheritance import Predecessor, classifier_reason, correction_carries
from aimos.verify.kit.judgment import judgment_reason
from aimos.verify.kit.redaction import check_record
from aimos.vocabulary import BASIS_CLASSIFIER, UNVERIFIED


def index_text_sql(text: Any) -> str | None:
    """What the search indexes hold for a memory's text (aimos.store.words.index_text)."""
    return None if text is None else index_text(str(text))


def _bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if value is None:
        return b""
    return str(value).encode("utf-8")


def sha256_hex(value: Any) -> str:
    return hashlib.sha256(_bytes(value)).hexdigest()


def is_canonical(text: Any) -> int:
    if isinstance(text, str) and made_here(text):
        return 1  # a text canonical_json just wrote (canonical form is idempotent)
    try:
        return int(isinstance(text, str) and canonical_json(json_loads(text)).decode() == text)
    except (ValueError, AimosError):
        return 0


def is_utf8(value: Any) -> int:
    """1 when ``value`` (a TEXT cell cast to BLOB) is valid UTF-8; finds damage no read could decode."""
    if not isinstance(value, bytes):
        return 1
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return 0
    return 1


def _body_message(body_text: str, tail: list[bytes]) -> bytes:
    return b"\n".join([body_text.encode("utf-8"), *tail])


def payload_message_sql(body_text: str | None, nonce: str | None, ts: int | None) -> bytes | None:
    if body_text is None or nonce is None or ts is None:
        return None
    return _body_message(str(body_text), [str(nonce).encode(), str(int(ts)).encode()])


def request_message_sql(
    body_text: str | None, method: str | None, path: str | None, nonce: str | None, ts: int | None
) -> bytes | None:
    if body_text is None or method is None or path is None or nonce is None or ts is None:
        return None
    return _body_message(
        str(body_text),
        [str(method).upper().encode(), str(path).encode(), str(nonce).encode(), str(int(ts)).encode()],
    )


def ed25519_verify(public_key_b64u: Any, message: Any, signature_b64u: Any) -> int:
    try:
        if not isinstance(public_key_b64u, str) or not isinstance(signature_b64u, str):
            return 0
        return int(verify(public_key_b64u, _bytes(message), b64u_decode(signature_b64u)))
    except AimosError:
        return 0


def event_link(prev_hex: str, content_hex: str, nonce: str, ts: int) -> str | None:
    if nonce is None or ts is None:
        return None
    try:
        return commitments.event_link_hash(hex32(prev_hex), hex32(content_hex), nonce, ts).hex()
    except (AimosError, TypeError):
        return None


def event_genesis(company: str, agent_id: str, valid_from: int) -> str | None:
    if company is None or agent_id is None or valid_from is None:
        return None
    return commitments.event_genesis_predecessor(company, agent_id, int(valid_from)).hex()


def provenance_mutation(content_hex: str, prev_hex: str | None, nonce: str, ts: int) -> str | None:
    if nonce is None or ts is None:
        return None
    try:
        prev = hex32(prev_hex) if prev_hex is not None else None
        return commitments.provenance_mutation_hash(hex32(content_hex), prev, nonce, ts).hex()
    except (AimosError, TypeError):
        return None


def grant_mutation(prev_hex: str | None, content_hex: str, nonce: str, ts: int) -> str | None:
    if nonce is None or ts is None:
        return None
    try:
        prev = hex32(prev_hex) if prev_hex is not None else None
        return commitments.recall_authorization_mutation_hash(prev, hex32(content_hex), nonce, ts).hex()
    except (AimosError, TypeError):
        return None


def live_content_hash_sql(*fields: Any) -> str | None:
    row = dict(zip(commitments.LIVE_ROW_FIELDS, fields, strict=True))
    return commitments.live_content_hash(row).hex()


@functools.lru_cache(maxsize=1024)  # a pure function of its arguments, asked once per row in a scan
def certificate_matches(
    certificate: str,
    master_public_key: str | None,
    agent_id: str,
    pubkey: str,
    valid_from: int,
    valid_until: int,
) -> int:
    if master_public_key is None:
        return 0
    try:
        cert = parse_certificate(certificate)
        verify_certificate(cert, master_public_key)
    except AimosError:
        return 0
    return int(
        cert.agent_id == agent_id
        and cert.pubkey == pubkey
        and cert.valid_from == valid_from
        and cert.valid_until == valid_until
    )


def fingerprint(public_key_b64u: Any) -> str | None:
    try:
        return fingerprint_of_b64u(str(public_key_b64u))
    except AimosError:
        return None


def iso_seconds(text: Any) -> int | None:
    try:
        return parse_iso_ms(str(text))
    except AimosError:
        return None


def revocation_prior(agent_id: str, valid_from: int, certificate: str) -> str | None:
    try:
        return commitments.revocation_prior_identity_hash(agent_id, int(valid_from), certificate).hex()
    except (AimosError, TypeError, UnicodeEncodeError):
        return None


def revocation_mutation(prior_hex: str, content_hex: str, signature_b64u: str) -> str | None:
    try:
        return commitments.agent_revocation_mutation_hash(
            hex32(prior_hex), hex32(content_hex), b64u_decode(signature_b64u)
        ).hex()
    except (AimosError, TypeError):
        return None


def merkle_root_sql(entries_json: str) -> str | None:
    try:
        entries = json_loads(entries_json)
        if not isinstance(entries, list):
            return None
        return merkle_root(entries).hex()
    except (ValueError, AimosError):
        return None


def projection_hash_sql(
    memory_id: str, old: int, new: int, sigma_hex: str, prev_hex: str | None
) -> str | None:
    try:
        prev = hex32(prev_hex) if prev_hex is not None else None
        return commitments.projection_hash(memory_id, int(old), int(new), hex32(sigma_hex), prev).hex()
    except (AimosError, TypeError, ValueError):
        return None


def transition_hash_sql(company: str, memory_id: str, old: int, new: int, sigma_hex: str) -> str | None:
    try:
        return commitments.transition_commitment(
            company, memory_id, int(old), int(new), hex32(sigma_hex)
        ).hex()
    except (AimosError, TypeError, ValueError):
        return None


def baseline_hash_sql(
    company: str,
    memory_id: str,
    event_id: str,
    event_mh: str,
    live: str,
    float4_hex: str,
    milli: int,
    observed_at: int,
    signer_valid_from: int,
    cert_fp: str,
) -> str | None:
    try:
        observed = struct.unpack(">f", bytes.fromhex(float4_hex))[0]
        return commitments.cognitive_baseline_hash(
            company,
            memory_id,
            event_id,
            hex32(event_mh),
            hex32(live),
            observed,
            int(milli),
            int(observed_at),
            int(signer_valid_from),
            hex32(cert_fp),
        ).hex()
    except (AimosError, TypeError, ValueError, struct.error):
        return None


def occurrence_message(commitment_hex: str) -> bytes | None:
    try:
        return commitments.occurrence_v3_signature_message(hex32(commitment_hex))
    except (AimosError, TypeError):
        return None


def epistemic_hash_sql(
    memory_id: str, label: str, confidence: int, live_hex: str, event_hex: str, prev_hex: str | None
) -> str | None:
    try:
        prev = hex32(prev_hex) if prev_hex is not None else None
        return commitments.epistemic_classification_hash(
            memory_id, label, int(confidence), hex32(live_hex), hex32(event_hex), prev
        ).hex()
    except (AimosError, TypeError, ValueError):
        return None


def _blob32(value: Any) -> bytes | None:
    return value if isinstance(value, bytes) and len(value) == 32 else None


def seal_hash_sql(
    seq: Any, sealed_at: Any, signer_valid_from: Any, prev_link: Any, state_root: Any, changes: Any
) -> bytes | None:
    prev, root = _blob32(prev_link), _blob32(state_root)
    if prev is None or root is None or not isinstance(changes, bytes):
        return None
    if not all(isinstance(v, int) for v in (seq, sealed_at, signer_valid_from)):
        return None
    try:
        commitments.decode_seal_changes(changes)
        return commitments.seal_hash(seq, sealed_at, signer_valid_from, prev, root, changes)
    except (AimosError, struct.error):
        return None


def seal_link_sql(seal: Any, signature: Any) -> bytes | None:
    if _blob32(seal) is None or not isinstance(signature, bytes):
        return None
    return commitments.seal_link(seal, signature)


def seal_genesis_sql(brain_id: Any) -> bytes | None:
    if not isinstance(brain_id, str) or not brain_id:
        return None
    return commitments.seal_genesis_link(brain_id)


def ed25519_verify_blob(public_key_b64u: Any, message: Any, signature: Any) -> int:
    """As aimos_ed25519_verify, for a raw 64-byte signature."""
    try:
        if not isinstance(public_key_b64u, str) or not isinstance(signature, bytes):
            return 0
        return int(verify(public_key_b64u, _bytes(message), signature))
    except AimosError:
        return 0


def judgment_ok(signed_body: Any, memory_id: Any, previous_label: Any, master_public_key: Any) -> int:
    """1 when the judgment in a classification event's signed body is authorized under the current
    judgment rule (aimos/verify/kit/judgment.py, the verifiers' own check)."""
    try:
        meta = json_loads(str(signed_body)).get("metadata")
    except (AimosError, ValueError, AttributeError):
        return 0
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in (memory_id, previous_label)):
        return 0
    reason = judgment_reason(
        meta, str(memory_id), str(previous_label), str(master_public_key or ""), current_rule_only=True
    )
    return int(reason is None)


def redaction_ok(
    record_json: Any,
    signature_b64u: Any,
    memory_id: Any,
    company_id: Any,
    created_at: Any,
    redaction_id: Any,
    master_public_key: Any,
    master_fingerprint: Any,
) -> int:
    """1 when a redaction record is signed by this brain's master and binds the columns stored
    beside it (aimos/verify/kit/redaction.py, the verifiers' own check)."""
    if not isinstance(master_public_key, str) or not isinstance(master_fingerprint, str):
        return 0
    if not all(isinstance(v, str) for v in (memory_id, company_id, redaction_id)) or not isinstance(
        created_at, int
    ):
        return 0
    reason, _ = check_record(
        record_json,
        signature_b64u,
        master_public_key,
        master_fingerprint,
        memory_id=memory_id,
        company_id=company_id,
        created_at=created_at,
        redaction_id=redaction_id,
    )
    return int(reason is None)


def _signed_meta(signed_body: Any) -> dict[str, Any] | None:
    try:
        body = json_loads(str(signed_body))
    except (AimosError, ValueError):
        return None
    meta = body.get("metadata") if isinstance(body, dict) else None
    return meta if isinstance(meta, dict) else None


def _predecessor(old_id: Any, old_label: Any, old_hash: Any) -> Predecessor | None:
    if not isinstance(old_id, str):
        return None
    label = old_label if isinstance(old_label, str) else UNVERIFIED
    return Predecessor(old_id, label, old_hash if isinstance(old_hash, str) else None)


def carried_ok(signed_body: Any, label: Any, old_id: Any, old_label: Any, old_hash: Any, owed: Any) -> int:
    """1 when a classification of basis classifier with ``label`` may stand on a memory
    correcting ``old_id`` (whose newest classification is ``old_label``, ``old_hash``; all None for
    no correction) that carries ``owed`` (aimos/verify/kit/inheritance.py, the verifiers' own
    check). A row its authority event does not bind is left to the classification's own insert
    trigger, which refuses it with its own words."""
    meta = _signed_meta(signed_body)
    if meta is None or meta.get("label") != label or meta.get("basis") != BASIS_CLASSIFIER:
        return 1
    reason = classifier_reason(
        meta, _predecessor(old_id, old_label, old_hash), owed if isinstance(owed, str) else None
    )
    return int(reason is None)


def correction_ok(head_signed_body: Any, old_id: Any, old_label: Any, old_hash: Any) -> int:
    """1 when a new version may be linked to ``old_id``: it owes nothing, or its newest
    classification (``head_signed_body``, its event's signed body) carries the old version's label."""
    predecessor = _predecessor(old_id, old_label, old_hash)
    if predecessor is None:
        return 0
    head = _signed_meta(head_signed_body) if head_signed_body is not None else None
    return int(correction_carries(head, predecessor))


def seal_aware() -> int:
    """Registered only by writers that seal their transactions (migration 6)."""
    return 1


# A trigger reads the same event body, message or time several times per row (once per check):
# these pure functions of their arguments answer a repeat from memory.
_repeated = functools.lru_cache(maxsize=16, typed=True)

# name -> (function, number of arguments)
SQL_FUNCTIONS: dict[str, tuple[Any, int]] = {
    "aimos_sha256_hex": (sha256_hex, 1),
    "aimos_is_canonical": (is_canonical, 1),
    "aimos_inflate": (inflate_bytes, 1),  # a stored deflated text's bytes (the seals hash those)
    "aimos_event_body": (_repeated(event_body), 3),  # the signed body an events row stands for (migration 14)
    # the signed body a memory_provenance row stands for (migration 18)
    "aimos_provenance_body": (_repeated(provenance_body), 4),
    "aimos_index_text": (index_text_sql, 1),  # what the search indexes hold for a text
    "aimos_payload_message": (_repeated(payload_message_sql), 3),
    "aimos_request_message": (_repeated(request_message_sql), 5),
    "aimos_ed25519_verify": (ed25519_verify, 3),
    "aimos_event_link": (event_link, 4),
    "aimos_event_genesis": (event_genesis, 3),
    "aimos_provenance_mutation": (provenance_mutation, 4),
    "aimos_grant_mutation": (grant_mutation, 4),
    "aimos_live_content_hash": (live_content_hash_sql, 7),
    "aimos_certificate_matches": (certificate_matches, 6),
    "aimos_occurrence_message": (occurrence_message, 1),
    "aimos_fingerprint": (fingerprint, 1),
    "aimos_iso_seconds": (_repeated(iso_seconds), 1),
    "aimos_redaction_ok": (redaction_ok, 8),
    "aimos_merkle_root": (merkle_root_sql, 1),
    "aimos_projection_hash": (projection_hash_sql, 5),
    "aimos_transition_hash": (transition_hash_sql, 5),
    "aimos_baseline_hash": (baseline_hash_sql, 10),
    "aimos_revocation_prior": (revocation_prior, 3),
    "aimos_revocation_mutation": (revocation_mutation, 3),
    "aimos_epistemic_hash": (epistemic_hash_sql, 6),
    "aimos_seal_hash": (seal_hash_sql, 6),
    "aimos_seal_link": (seal_link_sql, 2),
    "aimos_seal_genesis": (seal_genesis_sql, 1),
    "aimos_ed25519_verify_blob": (ed25519_verify_blob, 3),
    "aimos_seal_aware": (seal_aware, 0),
    "aimos_judgment_ok": (judgment_ok, 4),
    "aimos_carried_ok": (carried_ok, 6),
    "aimos_correction_ok": (correction_ok, 4),
    "aimos_is_utf8": (is_utf8, 1),
}
