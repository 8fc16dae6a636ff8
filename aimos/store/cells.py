"""Reading a cell of the brain as text, whatever it holds, and texts stored deflated (pure but for
``memory_names``, which reads the memory ids a failure names)."""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from aimos.vocabulary import (
    MEMORY_SAVED_OPERATION,
    MUTATION_OUTCOME_OPERATION,
    OBSERVATION_RETAINED_OPERATION,
    RECALL_RECEIPT_OPERATION,
    REWEIGHT_EVENT,
    WEIGHT_ADJUSTED_OPERATION,
    WEIGHT_UNCHANGED_OPERATION,
)

if TYPE_CHECKING:
    import apsw


def text_of(value: object) -> str:
    """A cell read as ``CAST(x AS BLOB)`` (so damaged, non-UTF-8 text cannot fail to decode) as
    text for a message, with undecodable bytes replaced."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    return "" if value is None else str(value)


def memory_names(conn: apsw.Connection, rowids: Sequence[int], more: bool = False, shown: int = 5) -> str:
    """The memories at ``rowids`` by id for a message (a rowid with no memory by its rowid), the
    first ``shown`` of them, then "and more" (also when ``more``: the list was cut)."""
    named = []
    for rowid in rowids[:shown]:
        found = conn.execute(
            "SELECT CAST(memory_id AS BLOB) FROM main.memories WHERE rowid = ?", (rowid,)
        ).fetchall()
        named.append(text_of(found[0][0]) if found else f"rowid {rowid} (no memory)")
    return ", ".join(named) + (" and more" if more or len(rowids) > shown else "")


# --- a text stored deflated (migration 11) ------------------------------------------------------
# A recall's decision (its candidates, a few hundred bytes each) is stored deflated: about a sixth
# of its bytes. What is hashed, signed and sealed stays the text itself (the seals read it back
# through aimos_inflate), so the stored form can change without touching a proof.
# A stored text inflates to at most this, and to at most INFLATED_RATIO times its stored size: a
# decision of 200 candidates is about 40 KB and deflates about sixfold, so neither bound is near, and
# a crafted bomb costs a verification at most 64 times the bytes an attacker wrote.
INFLATED_LIMIT = 1024 * 1024
INFLATED_RATIO = 64


def deflate_text(text: str) -> bytes:
    """``text`` as stored deflated (zlib, level 6: a recall decision to about a sixth, 0.1 ms)."""
    return zlib.compress(text.encode("utf-8"), 6)


def inflate_bytes(data: object) -> bytes | None:
    """The UTF-8 text bytes ``data`` (as ``deflate_text`` stored them) inflate to; None when it is
    not one whole zlib stream, would inflate past ``INFLATED_LIMIT`` or ``INFLATED_RATIO`` times
    its size, or is not UTF-8 (so the seals' reading and ``stored_text`` agree)."""
    if not isinstance(data, bytes | bytearray | memoryview):
        return None
    return _inflate(bytes(data), zlib.decompressobj())


def _inflate(data: bytes, inflater: zlib._Decompress) -> bytes | None:
    """``inflate_bytes`` with the inflater given (one with a preset dictionary, or none)."""
    try:
        out = inflater.decompress(data, min(INFLATED_LIMIT, INFLATED_RATIO * len(data)) or 1)
    except zlib.error:
        return None
    if inflater.unconsumed_tail or not inflater.eof or inflater.unused_data:
        return None
    try:
        out.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return out


def stored_text(text: object, deflated: object) -> str | None:
    """The text a cell pair holds: ``text`` as is when nothing is stored ``deflated`` (every row
    before migration 11), else the deflated text beside an empty ``text``. None for any other
    pair (an edit made outside aimos), or deflated bytes that are not UTF-8 text."""
    if deflated is None:
        return text if isinstance(text, str) else None
    data = inflate_bytes(deflated) if text == "" else None
    return None if data is None else data.decode("utf-8")


# --- an event's signed body stored deflated (migration 14) ---------------------------------------
# A recall's `recall_receipt` events (the native one and its V2-shaped child) carry the evidence,
# hashes and occurrences of the recall: most of a recall's bytes, in canonical JSON whose keys and
# repeated hex deflate to about two fifths. Only these events are stored deflated; every other
# operation's body stays text (the SQL that reads their fields with json_extract reads it as is),
# and a body of another operation stored deflated reads as nothing, so the seals name the row.
DEFLATED_EVENT_OPERATIONS = frozenset({RECALL_RECEIPT_OPERATION})


def event_body(operation: object, text: object, deflated: object) -> str | bytes | None:
    """The signed body an ``events`` row stands for: ``text`` as is when nothing is stored
    ``deflated`` (every event before migration 14, every event of another operation since), else
    the deflated body beside an empty text, for a recall's event, or a save's or an outcome's
    against its operation's dictionary (``EVENT_DICTIONARY_OF``). None for any other triple.
    ``text`` may be given as its bytes (the seals read a damaged, non-UTF-8 body so), and then
    comes back as bytes. The SQL function ``aimos_event_body`` is this function."""
    if deflated is None:
        return text if isinstance(text, str | bytes) else None
    if text not in ("", b""):
        return None
    if operation in DICTIONARY_EVENT_OPERATIONS:
        return inflate_event_text(deflated, EVENT_DICTIONARY_OF[str(operation)])
    if operation not in DEFLATED_EVENT_OPERATIONS:
        return None
    data = inflate_bytes(deflated)
    return None if data is None else data.decode("utf-8")


# --- an event's signed body deflated against a preset dictionary (migration 16) -------------------
# A save's `memory_saved` event is about a kilobyte of canonical JSON: its keys and constant words
# are a third of it, and plain deflate keeps most of them (a stream that short has little to refer
# back to). Deflated against a preset dictionary of those keys and words it takes about 370 bytes.
# The dictionary is part of the stored form: a stream names it (zlib's FDICT flag and the dictionary's
# Adler-32 in its header), the reader accepts only the dictionary below, so it never changes: a
# better one is a new version (a new name, read beside this one). tests/vectors pins its bytes.
# The canonical body of each operation below, its keys in order, with the words every one holds.
EVENT_DICTIONARY_V1 = (
    b'"metadata":{"live_content_hash":"","memory_id":"","request_hash":"","retained_quarantine":false,'
    b'"save_mutation_hash":"","supersedes":null},"operation":"memory_saved","parent_event_id":null,'
    b'{"actor_agent_id":"housekeeper","actor_valid_from":"","cert_fingerprint":"",'
    b'"company_id":"personal","event_id":"","identity_tier":"T1","ledger_seq":,'
    b'"ledger_version":"aimos-ledger/v1","metadata":{'
    b'},"operation":"","parent_event_id":"","prev_mutation_hash":"","signer_agent_id":"housekeeper",'
    b'"signer_valid_from":".000Z","subject_memory_id":"","ts_signed":'
)
EVENT_DICTIONARY_V1_ID = zlib.adler32(EVENT_DICTIONARY_V1).to_bytes(4, "big")

# migration 17: an outcome's events (its evidence event and the terminal one: a transition, a signed
# no-op or an observation kept), 1.1 to 2.9 KB each, most of an outcome's bytes: their metadata keys,
# the signed valence row's and the constant words, the rarer operations' first, then the envelope's.
# Deflated against it the evidence event takes about 400 bytes, a terminal one 760 to 890.
EVENT_DICTIONARY_V2 = (
    b'"operation":"mutation_occurrence_observation_retained","operation":"cognitive_weight_unchanged",'
    b'"target_scope":"occurrence_observation","occurrence_ref":"","projection_appended":false,"weight_milli":'
    b'"projection_hash":"","provenance_mutation_hash":"","transition_hash":"",'
    b'"new_weight_milli":,"old_weight_milli":,'
    b'"metadata":{"live_content_hash":"","memory_id":"","occurrence_ref":"","outcome_id":"","receipt_id":"",'
    b'"request_hash":"","reward_sign":1,"target_scope":"principal_state"},"operation":"mutation_outcome_evidence_v2",'
    b'"metadata":{"agent_bad":,"agent_good":,"agent_share_new_milli":,"agent_share_old_milli":,"judge_valence":,'
    b'"memory_id":"","outcome_id":"",'
    b'"valence_row":{"body":{"cert_fingerprint":"","company_id":"personal","context_hash":null,"event_type":"VALENCE",'
    b'"evidence_schema":"hom.aimos.mutation-outcome-evidence/v2","identity_tier":"T1","memory_id":"",'
    b'"outcome_event_id":"","outcome_event_mutation_hash":"","outcome_id":"","recall_event_id":"",'
    b'"recall_event_mutation_hash":"","recall_merkle_root":"","reward_sign":-1,"security_closure_sha256":"",'
    b'"signer_agent_id":"housekeeper","signer_valid_from":".000Z","target_live_content_hash":"",'
    b'"target_occurrence_ref":"","target_scope":"principal_state","ts_signed":},"content_hash":"","nonce":"",'
    b'"prev_hash":null,"row_hash":"","signature_b64u":"","ts_signed":},"valence_row_hash":"",'
    b'"valence_rule":"aimos.valence-rule/v2","weight_bearing":true},"operation":"cognitive_weight_adjusted",'
    b'{"actor_agent_id":"housekeeper","actor_valid_from":"","cert_fingerprint":"",'
    b'"company_id":"personal","event_id":"","identity_tier":"T1","ledger_seq":,'
    b'"ledger_version":"aimos-ledger/v1","metadata":{'
    b'},"operation":"","parent_event_id":"","prev_mutation_hash":"","signer_agent_id":"housekeeper",'
    b'"signer_valid_from":".000Z","subject_memory_id":"","ts_signed":'
)
# Each operation stored so has one dictionary, the one its stream must name: a stream against
# another reads as nothing, so an operation has one stored form.
EVENT_DICTIONARY_OF: dict[str, bytes] = {
    MEMORY_SAVED_OPERATION: EVENT_DICTIONARY_V1,
    MUTATION_OUTCOME_OPERATION: EVENT_DICTIONARY_V2,
    WEIGHT_ADJUSTED_OPERATION: EVENT_DICTIONARY_V2,
    WEIGHT_UNCHANGED_OPERATION: EVENT_DICTIONARY_V2,
    OBSERVATION_RETAINED_OPERATION: EVENT_DICTIONARY_V2,
}
DICTIONARY_EVENT_OPERATIONS = frozenset(EVENT_DICTIONARY_OF)


def deflate_event_text(text: str, dictionary: bytes = EVENT_DICTIONARY_V1) -> bytes:
    """An event body as stored deflated against ``dictionary`` (its operation's in
    ``EVENT_DICTIONARY_OF``; level 6: a save's event to about 370 bytes in about 25 microseconds)."""
    packer = zlib.compressobj(6, zdict=dictionary)
    return packer.compress(text.encode("utf-8")) + packer.flush()


@lru_cache(maxsize=64)
def _inflate_event_text(data: bytes, dictionary: bytes) -> str | None:
    # a stream that names the dictionary (FDICT, its Adler-32) and nothing else
    if len(data) < 6 or not data[1] & 0x20 or data[2:6] != zlib.adler32(dictionary).to_bytes(4, "big"):
        return None
    out = _inflate(data, zlib.decompressobj(zdict=dictionary))
    return None if out is None else out.decode("utf-8")


def inflate_event_text(data: object, dictionary: bytes = EVENT_DICTIONARY_V1) -> str | None:
    """The body ``deflate_event_text`` stored; None for bytes that are not one whole zlib stream
    deflated against ``dictionary``, or past the limits of ``inflate_bytes``. Pure, so its answers
    are kept: an events insert trigger reads a body a dozen times."""
    if not isinstance(data, bytes | bytearray | memoryview):
        return None
    return _inflate_event_text(bytes(data), dictionary)


# --- a REWEIGHT provenance node's signed body, stored compactly (migration 18) --------------------
# An authorized transition signs a REWEIGHT node: about 480 bytes of canonical JSON whose keys and
# constant words are most of it. It is stored deflated against the preset dictionary below (its
# keys in canonical order, with the words every one holds), and without its memory id: the stored
# body holds `"memory_id":""` and the reader puts back the row's own memory_id column, so the body
# a row stands for always names the memory its row does (an edit of the column changes the signed
# body read back, and its content hash and signature no longer hold). A SAVE node stays text.
PROVENANCE_DICTIONARY_V1 = (
    b'{"company_id":"personal","event_type":"REWEIGHT","governor_flag":"SIGNED_VALENCE_REFERENCE_POINT",'
    b'"judge_valence":0.,"memory_id":"","new_weight":1.,"new_weight_milli":1,"old_weight":1.,'
    b'"old_weight_milli":1000,"outcome_id":"","reason":"outcome_evidence","ts_signed":17,'
    b'"valence_row_hash":"","valence_rule":"aimos.valence-rule/v2"}'
)
_MEMORY_ID_LEFT_OUT = '"memory_id":""'
COMPACT_PROVENANCE_TYPES = frozenset({REWEIGHT_EVENT})


def _memory_id_field(memory_id: str) -> str:
    return '"memory_id":' + json.dumps(memory_id, ensure_ascii=False)


def compact_provenance_body(text: str, memory_id: str) -> bytes:
    """A REWEIGHT node's canonical ``text`` as stored: without its memory id (which must be
    ``memory_id``, once), deflated against ``PROVENANCE_DICTIONARY_V1``. ValueError when
    ``provenance_body`` would not read ``text`` back from it."""
    field = _memory_id_field(memory_id)
    if text.count(field) != 1 or _MEMORY_ID_LEFT_OUT in text:
        raise ValueError("a REWEIGHT body must name its memory once")
    stored = deflate_event_text(text.replace(field, _MEMORY_ID_LEFT_OUT), PROVENANCE_DICTIONARY_V1)
    if provenance_body(REWEIGHT_EVENT, memory_id, "", stored) != text:
        raise ValueError("a REWEIGHT body does not read back from its stored form")
    return stored


def provenance_body(
    event_type: object, memory_id: object, text: object, deflated: object
) -> str | bytes | None:
    """The signed body a ``memory_provenance`` row stands for: ``text`` as is when nothing is
    stored ``deflated`` (every SAVE node, every REWEIGHT node before migration 18), else, for a
    REWEIGHT node, the deflated body beside an empty text with the row's ``memory_id`` put back.
    None for any other combination (an edit made outside aimos). ``text`` given as bytes comes
    back as bytes (the seals read it so). The SQL function ``aimos_provenance_body`` is this one."""
    if deflated is None:
        return text if isinstance(text, str | bytes) else None
    if text not in ("", b"") or event_type not in COMPACT_PROVENANCE_TYPES or not isinstance(memory_id, str):
        return None
    body = inflate_event_text(deflated, PROVENANCE_DICTIONARY_V1)
    if body is None or body.count(_MEMORY_ID_LEFT_OUT) != 1:
        return None
    return body.replace(_MEMORY_ID_LEFT_OUT, _memory_id_field(memory_id))
