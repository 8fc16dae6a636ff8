"""Every commitment of the PROTOCOL-NOTES section 3 catalogue that aimos produces.

Hashes are returned as raw 32 bytes; callers store lowercase hex. Weights enter every hash
path as integers q = round(1000 w) in 100..3000.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from aimos import vocabulary
from aimos.crypto.canonical import canonical_json
from aimos.crypto.encoding import (
    be32,
    be64,
    float4_be,
    framed,
    iso_ms,
    u16,
    u32,
    u64,
    uuid16,
)
from aimos.crypto.merkle import merkle_root
from aimos.errors import EncodingError
from aimos.vocabulary import HOUSEKEEPER

ZERO32 = bytes(32)
WEIGHT_MIN_MILLI = 100
WEIGHT_MAX_MILLI = 3000
LIVE_ROW_FIELDS = ("key", "value", "scope", "memory_type", "clearance_level", "data_class", "source")


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _check_hash(h: bytes, what: str) -> bytes:
    if len(h) != 32:
        raise EncodingError(f"{what} must be 32 bytes", reason="hash_length_invalid")
    return h


def _check_weight(q: int, what: str) -> None:
    if isinstance(q, bool) or not isinstance(q, int) or not WEIGHT_MIN_MILLI <= q <= WEIGHT_MAX_MILLI:
        raise EncodingError(f"{what} must be an integer in 100..3000", reason="weight_milli_invalid")


# --- provenance -----------------------------------------------------------------------------
def provenance_content_hash(body: Any) -> bytes:
    return sha256(canonical_json(body))


def provenance_mutation_hash(
    content_hash: bytes,
    prev_mutation_hash: bytes | None,
    nonce: str,
    ts: int,
    originated_at: int | None = None,
) -> bytes:
    """v1, no domain: content ‖ [prev, omitted at genesis] ‖ nonce ‖ decimal(ts) [‖ originated]."""
    parts = [_check_hash(content_hash, "content hash")]
    if prev_mutation_hash is not None:
        parts.append(_check_hash(prev_mutation_hash, "previous mutation hash"))
    parts += [nonce.encode("utf-8"), str(int(ts)).encode()]
    if originated_at is not None:
        parts.append(str(int(originated_at)).encode())
    return sha256(b"".join(parts))


def js_string(value: Any) -> str:
    """String(value) as JavaScript gives it, for the scalar values of a memory row."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return canonical_json(value).decode("ascii")
    return str(value)


def live_content_hash(row: Mapping[str, Any]) -> bytes:
    """H(canonicalJSON of the 7 live fields), every value a string (JS String) and null as ""."""
    projected = {f: js_string(row.get(f)) for f in LIVE_ROW_FIELDS}
    return sha256(canonical_json(projected))


# --- event ledger ---------------------------------------------------------------------------
def event_genesis_predecessor(company: str, signer_agent_id: str, signer_valid_from: int) -> bytes:
    return sha256(
        vocabulary.EVENT_GENESIS
        + company.encode("utf-8")
        + b"\x00"
        + signer_agent_id.encode("utf-8")
        + b"\x00"
        + iso_ms(signer_valid_from).encode("ascii")
    )


def event_link_hash(prev: bytes, content_hash: bytes, nonce: str, ts: int) -> bytes:
    return sha256(
        vocabulary.EVENT_LINK
        + _check_hash(prev, "previous event hash")
        + _check_hash(content_hash, "event content hash")
        + nonce.encode("utf-8")
        + str(int(ts)).encode()
    )


# --- grants, request receipts, revocations ---------------------------------------------------
def recall_authorization_mutation_hash(prev: bytes | None, content_hash: bytes, nonce: str, ts: int) -> bytes:
    return sha256(
        vocabulary.RECALL_AUTHORIZATION
        + (_check_hash(prev, "previous grant hash") if prev is not None else ZERO32)
        + _check_hash(content_hash, "grant content hash")
        + nonce.encode("utf-8")
        + str(int(ts)).encode()
    )


def request_receipt_mutation_hash(
    prev: bytes | None,
    request_hash: bytes,
    claims_hash: bytes | None,
    signature: bytes,
    method: str,
    path: str,
    nonce: str,
    ts: int,
) -> bytes:
    if len(signature) != 64:
        raise EncodingError("signature must be 64 bytes", reason="signature_length_invalid")
    return sha256(
        vocabulary.REQUEST_RECEIPT
        + (_check_hash(prev, "previous receipt hash") if prev is not None else ZERO32)
        + _check_hash(request_hash, "request hash")
        + (_check_hash(claims_hash, "claims hash") if claims_hash is not None else ZERO32)
        + signature
        + method.encode("utf-8")
        + path.encode("utf-8")
        + nonce.encode("utf-8")
        + str(int(ts)).encode()
    )


def revocation_prior_identity_hash(agent_id: str, agent_valid_from: int, certificate: str) -> bytes:
    target_cert_hash = sha256(certificate.encode("ascii")).hex()
    return sha256(
        canonical_json(
            {
                "agent_id": agent_id,
                "agent_valid_from": iso_ms(agent_valid_from),
                "target_cert_hash": target_cert_hash,
            }
        )
    )


def agent_revocation_mutation_hash(
    prior_identity_hash: bytes, content_hash: bytes, signature: bytes
) -> bytes:
    if len(signature) != 64:
        raise EncodingError("signature must be 64 bytes", reason="signature_length_invalid")
    return sha256(
        vocabulary.AGENT_REVOCATION
        + _check_hash(prior_identity_hash, "prior identity hash")
        + _check_hash(content_hash, "revocation content hash")
        + signature
    )


def housekeeper_system_principal_hash(company_id: str, valid_from: int) -> bytes:
    return sha256(
        canonical_json(
            {
                "kind": "housekeeper_system_principal",
                "company_id": company_id,
                "agent_id": HOUSEKEEPER,
                "valid_from": iso_ms(valid_from),
            }
        )
    )


# --- cognitive weight -----------------------------------------------------------------------
def projection_hash(
    memory_id: str, old_milli: int, new_milli: int, sigma: bytes, prev: bytes | None
) -> bytes:
    """h_i over the 109-byte preimage `aimos.cwc/v1`."""
    preimage = (
        vocabulary.PROJECTION_CHAIN
        + uuid16(memory_id)
        + be64(old_milli)
        + be64(new_milli)
        + _check_hash(sigma, "REWEIGHT provenance mutation hash")
        + (_check_hash(prev, "previous projection hash") if prev is not None else ZERO32)
    )
    return sha256(preimage)


def _company_and_memory(company: str, memory_id: str) -> bytes:
    """be32(the company's UTF-8 length) || its UTF-8 || uuid16(memory id): what the transition
    commitment and the cognitive baseline hash open with, after their tag."""
    company_bytes = company.encode("utf-8")
    return be32(len(company_bytes)) + company_bytes + uuid16(memory_id)


def transition_commitment(
    company: str, memory_id: str, old_milli: int, new_milli: int, sigma: bytes
) -> bytes:
    """t_i `aimos.cognitive-transition/v2`; old != new, both in 100..3000."""
    _check_weight(old_milli, "old weight")
    _check_weight(new_milli, "new weight")
    if old_milli == new_milli:
        raise EncodingError("a transition must change the weight", reason="transition_noop")
    return sha256(
        vocabulary.TRANSITION_COMMITMENT
        + _company_and_memory(company, memory_id)
        + be64(old_milli)
        + be64(new_milli)
        + _check_hash(sigma, "REWEIGHT provenance mutation hash")
    )


def cognitive_baseline_hash(
    company: str,
    memory_id: str,
    event_id: str,
    event_mutation_hash: bytes,
    live_hash: bytes,
    observed_weight: float,
    weight_milli: int,
    observed_ts: int,
    signer_valid_from: int,
    cert_fingerprint: bytes,
) -> bytes:
    return sha256(
        vocabulary.COGNITIVE_BASELINE
        + _company_and_memory(company, memory_id)
        + uuid16(event_id)
        + _check_hash(event_mutation_hash, "event mutation hash")
        + _check_hash(live_hash, "live content hash")
        + float4_be(observed_weight)
        + be64(weight_milli)
        + be64(observed_ts)
        + be64(signer_valid_from)
        + _check_hash(cert_fingerprint, "certificate fingerprint")
    )


# --- epistemic chain ------------------------------------------------------------------------
def epistemic_classification_hash(
    memory_id: str,
    label: str,
    confidence_milli: int,
    live_hash: bytes,
    authority_event_mutation_hash: bytes,
    prev: bytes | None,
) -> bytes:
    if isinstance(confidence_milli, bool) or not 0 <= confidence_milli <= 1000:
        raise EncodingError("confidence must be an integer in 0..1000", reason="confidence_invalid")
    label_bytes = label.encode("utf-8")
    return sha256(
        vocabulary.EPISTEMIC_CHAIN
        + uuid16(memory_id)
        + be32(len(label_bytes))
        + label_bytes
        + be64(confidence_milli)
        + _check_hash(live_hash, "live content hash")
        + _check_hash(authority_event_mutation_hash, "authority event mutation hash")
        + (_check_hash(prev, "previous classification hash") if prev is not None else ZERO32)
    )


# --- corpus proof ---------------------------------------------------------------------------
def corpus_proof_root(records: Iterable[Mapping[str, Any]]) -> bytes:
    """Root over {memory_id, certification_status, ok, chain_length, sigs_verified, reason}."""
    rows = sorted(
        (
            {
                "memory_id": r["memory_id"],
                "certification_status": r["certification_status"],
                "ok": r["ok"],
                "chain_length": r["chain_length"],
                "sigs_verified": r["sigs_verified"],
                "reason": r["reason"],
            }
            for r in records
        ),
        key=lambda r: str(r["memory_id"]),
    )
    return sha256(vocabulary.CORPUS_PROOF + canonical_json(rows))


# --- V1 recall corpus ------------------------------------------------------------------------
def recall_corpus_root(intended_n: int, members: Sequence[Mapping[str, Any]]) -> bytes:
    """H(domain || be64(intended_n) || RFC 6962 root of [{ordinal, bundle_id, bundle_sha256}])."""
    if isinstance(intended_n, bool) or not isinstance(intended_n, int) or intended_n < 1:
        raise EncodingError("a recall corpus intends at least one bundle", reason="intended_n_invalid")
    summaries = [
        {"ordinal": m["ordinal"], "bundle_id": m["bundle_id"], "bundle_sha256": m["bundle_sha256"]}
        for m in members
    ]
    return sha256(vocabulary.RECALL_CORPUS + be64(intended_n) + merkle_root(summaries))


# --- occurrence v3 --------------------------------------------------------------------------
def _tlv(tag: int, value: bytes) -> bytes:
    return u16(tag) + u32(len(value)) + value


def occurrence_v3_commitment(
    *,
    company_id: str,
    occurrence_event_id: str,
    memory_id: str,
    event_type: str,
    live_hash: bytes,
    predecessor: bytes | None,
    agent_id: str,
    signer_valid_from_ms: int,
    cert_fingerprint: bytes,
    identity_tier: str,
    sig_form_version: int,
    nonce: bytes,
    ts_signed: int,
    signed_method: str,
    signed_path: str,
    request_body_hash: bytes,
    request_receipt_mutation_hash: bytes | None,
    authorization_event_id: str | None,
) -> bytes:
    """`hom.aimos.memory-occurrence/v3` TLV commitment (tags 1..21 in order)."""
    if sig_form_version != 3:
        raise EncodingError("occurrence sig_form_version must be 3", reason="occurrence_form_invalid")
    if not 16 <= len(nonce) <= 32:
        raise EncodingError("occurrence nonce must be 16..32 bytes", reason="occurrence_nonce_invalid")
    fields: Sequence[bytes] = (
        company_id.encode("utf-8"),
        uuid16(occurrence_event_id),
        uuid16(memory_id),
        event_type.upper().encode("utf-8"),
        _check_hash(live_hash, "live content hash"),
        b"\x01" if predecessor is not None else b"\x00",
        _check_hash(predecessor, "predecessor commitment") if predecessor is not None else b"",
        agent_id.encode("utf-8"),
        be64(signer_valid_from_ms),
        _check_hash(cert_fingerprint, "certificate fingerprint"),
        identity_tier.upper().encode("utf-8"),
        u16(sig_form_version),
        nonce,
        u64(ts_signed),
        signed_method.upper().encode("utf-8"),
        signed_path.encode("utf-8"),
        _check_hash(request_body_hash, "request body hash"),
        b"\x01" if request_receipt_mutation_hash is not None else b"\x00",
        (
            _check_hash(request_receipt_mutation_hash, "request receipt mutation hash")
            if request_receipt_mutation_hash is not None
            else b""
        ),
        b"\x01" if authorization_event_id is not None else b"\x00",
        uuid16(authorization_event_id) if authorization_event_id is not None else b"",
    )
    return sha256(vocabulary.OCCURRENCE_V3 + b"".join(_tlv(i + 1, v) for i, v in enumerate(fields)))


def occurrence_v3_signature_message(commitment: bytes) -> bytes:
    return vocabulary.OCCURRENCE_V3_SIGNATURE + _check_hash(commitment, "occurrence commitment")


# --- V2 portable evidence -------------------------------------------------------------------
def v2_object_hash(kind: str, schema: str, body: Any) -> bytes:
    body_bytes = canonical_json(body)
    return sha256(vocabulary.V2_OBJECT + framed(kind) + framed(schema) + u32(len(body_bytes)) + body_bytes)


def v2_bundle_hash(
    bundle_id: str, company_id: str, fingerprint: bytes, result_count: int, object_root: bytes
) -> bytes:
    return sha256(
        vocabulary.V2_BUNDLE
        + framed(bundle_id)
        + framed(company_id)
        + _check_hash(fingerprint, "master fingerprint")
        + u64(result_count)
        + _check_hash(object_root, "object root")
    )


# --- installer documents ----------------------------------------------------------------------
def guide_corpus_root(files: Iterable[Mapping[str, Any]]) -> bytes:
    """RFC 6962 root over the guide files' {path, sha256, bytes}, in path order."""
    entries = sorted(
        ({"path": f["path"], "sha256": f["sha256"], "bytes": f["bytes"]} for f in files),
        key=lambda e: str(e["path"]),
    )
    return merkle_root(entries)


def document_sha256(document: Mapping[str, Any], *, without: str | None = None) -> bytes:
    """SHA-256 of a document's canonical JSON, leaving out its own hash field (plans, receipts)."""
    return sha256(canonical_json({k: v for k, v in document.items() if k != without}))


# --- brain seals (aimos's own) ----------------------------------------------------------------
# Every retained row of every table is accounted for by a chain of housekeeper-signed seals, one
# per write transaction. A row hashes to H(BRAIN_ROW || framed table || be64 rowid || cells); a
# table's chain folds the hashes of each transaction's new rows (in rowid order) into its previous
# value; a seal binds the tables it changed (name, row count, highest rowid, chain) and the state
# root over every table, and links to the previous seal through H(seal hash || signature).
SEAL_NULL, SEAL_INTEGER, SEAL_REAL, SEAL_TEXT, SEAL_BLOB = 0, 1, 2, 3, 4


def seal_cell(value: Any, text: bool = False) -> bytes:
    """One cell: a type tag and its bytes. TEXT cells arrive as their raw bytes (``text=True``),
    so a damaged, non-UTF-8 text hashes instead of failing to decode."""
    if value is None:
        return b"\x00"
    if isinstance(value, bool):
        raise EncodingError("a cell is never a boolean", reason="seal_cell_invalid")
    if isinstance(value, int):
        return b"\x01" + be64(value)
    if isinstance(value, float):
        return b"\x02" + struct.pack(">d", value)
    if isinstance(value, str):
        value = value.encode("utf-8", "surrogatepass")
        text = True
    if isinstance(value, bytes | bytearray | memoryview):
        data = bytes(value)
        return (b"\x03" if text else b"\x04") + u32(len(data)) + data
    raise EncodingError(f"a cell of type {type(value).__name__}", reason="seal_cell_invalid")


def seal_row_hash(table: str, rowid: int, cells: Sequence[bytes]) -> bytes:
    """H(BRAIN_ROW || framed(table) || be64(rowid) || each encoded cell)."""
    return sha256(vocabulary.BRAIN_ROW + framed(table) + be64(rowid) + b"".join(cells))


def seal_row_content_hash(table: str, cells: Sequence[bytes]) -> bytes:
    """H(BRAIN_ROW_CONTENT || framed(table) || each encoded cell): a row without its rowid, the
    same on every device that holds it (a redaction record signed once for all of them names it)."""
    return sha256(vocabulary.BRAIN_ROW_CONTENT + framed(table) + b"".join(cells))


def seal_table_genesis(table: str) -> bytes:
    return sha256(vocabulary.BRAIN_TABLE + framed(table))


def seal_table_step(prev_chain: bytes, row_hashes: Sequence[bytes]) -> bytes:
    """A table's chain after more rows: each row hash folded in, in rowid order, as
    c' = H(c || row hash); so the chain of a whole table is recomputable from its rows alone."""
    chain = _check_hash(prev_chain, "table chain")
    for h in row_hashes:
        chain = sha256(chain + h)
    return chain


SealEntry = tuple[int, int, bytes]  # (row count, highest rowid, chain)


def seal_state_root(state: Mapping[str, SealEntry]) -> bytes:
    """H(BRAIN_STATE || for each table with rows, by name: framed name, be64 count, be64 max rowid,
    chain)."""
    parts = [vocabulary.BRAIN_STATE]
    for name in sorted(state):
        count, max_rowid, chain = state[name]
        parts.append(framed(name) + be64(count) + be64(max_rowid) + _check_hash(chain, "table chain"))
    return sha256(b"".join(parts))


def encode_seal_changes(changes: Mapping[str, SealEntry]) -> bytes:
    """The tables a seal changed, by name: u32 n, then per table framed name, be64 count,
    be64 max rowid, chain."""
    out = [u32(len(changes))]
    for name in sorted(changes):
        count, max_rowid, chain = changes[name]
        out.append(framed(name) + be64(count) + be64(max_rowid) + _check_hash(chain, "table chain"))
    return b"".join(out)


def decode_seal_changes(data: bytes) -> dict[str, SealEntry]:
    """The inverse of encode_seal_changes; malformed bytes raise EncodingError(seal_changes_invalid)."""
    bad = EncodingError("a seal's table changes do not decode", reason="seal_changes_invalid")
    try:
        (n,) = struct.unpack_from(">I", data, 0)
        at, out = 4, {}
        for _ in range(n):
            (length,) = struct.unpack_from(">I", data, at)
            name = data[at + 4 : at + 4 + length].decode("utf-8")
            at += 4 + length
            count, max_rowid = struct.unpack_from(">qq", data, at)
            chain = data[at + 16 : at + 48]
            at += 48
            if len(chain) != 32 or not name or name in out:
                raise bad
            out[name] = (count, max_rowid, chain)
    except (struct.error, UnicodeDecodeError) as exc:
        raise bad from exc
    if at != len(data) or list(out) != sorted(out):
        raise bad
    return out


def seal_genesis_link(brain_id: str) -> bytes:
    """The predecessor of a brain's first seal: H(BRAIN_SEAL_GENESIS || framed brain id)."""
    return sha256(vocabulary.BRAIN_SEAL_GENESIS + framed(brain_id))


def seal_hash(
    seq: int, sealed_at: int, signer_valid_from: int, prev_link: bytes, state_root: bytes, changes: bytes
) -> bytes:
    """H(BRAIN_SEAL || be64 seq || be64 sealed_at || be64 signer epoch || prev link || state root ||
    encoded changes): what the housekeeper signs."""
    return sha256(
        vocabulary.BRAIN_SEAL
        + be64(seq)
        + be64(sealed_at)
        + be64(signer_valid_from)
        + _check_hash(prev_link, "previous seal link")
        + _check_hash(state_root, "state root")
        + changes
    )


def seal_link(seal: bytes, signature: bytes) -> bytes:
    """What the next seal chains to: H(BRAIN_SEAL_LINK || seal hash || signature), so an edited
    signature of any seal breaks the chain, not only the newest one's."""
    return sha256(vocabulary.BRAIN_SEAL_LINK + _check_hash(seal, "seal hash") + signature)
