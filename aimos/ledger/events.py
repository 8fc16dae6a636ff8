"""Append signed events: ledger_seq from 1 per signer epoch, event-link mutation hashes.

The insert trigger re-checks the body, the chain position, the link hash and the signature,
so a row that did not come through here (or through an identical signer) is refused.
"""

from __future__ import annotations

import uuid
import weakref
from typing import Any

from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json
from aimos.crypto.encoding import b64u_encode, iso_ms
from aimos.crypto.messages import new_nonce, payload_message
from aimos.identity.signer import Signer
from aimos.store.cells import (
    DEFLATED_EVENT_OPERATIONS,
    DICTIONARY_EVENT_OPERATIONS,
    EVENT_DICTIONARY_OF,
    deflate_event_text,
    deflate_text,
    event_body,
    provenance_body,
)
from aimos.store.connection import Connection
from aimos.store.meta import meta_value
from aimos.store.queries import ledger as q

# The SQL that reads a stored body as signed lives in the store; re-exported here for the modules
# that still import it from the ledger (to be switched to aimos.store.queries.ledger).
from aimos.vocabulary import LEDGER_SCHEMA as LEDGER_VERSION


def chain_head(conn: Connection, signer: Signer, company_id: str) -> tuple[int, str]:
    """(last ledger_seq, its mutation hash) of the signer's chain; (0, genesis) when empty."""
    row = q.chain_head_row(conn, signer.agent_id, signer.valid_from)
    if row:
        return int(row["ledger_seq"]), str(row["mutation_hash"])
    genesis = commitments.event_genesis_predecessor(company_id, signer.agent_id, signer.valid_from)
    return 0, genesis.hex()


_COMPANY_BY_CONNECTION: weakref.WeakKeyDictionary[Connection, str] = weakref.WeakKeyDictionary()


def brain_company(conn: Connection) -> str:
    """The brain's company (brain_meta is append-only, so a connection may remember it)."""
    cached = _COMPANY_BY_CONNECTION.get(conn)
    if cached is None:
        value = meta_value(conn, "company_id")
        if value is None:
            return "personal"
        cached = _COMPANY_BY_CONNECTION[conn] = value
    return cached


def append_event(
    conn: Connection,
    signer: Signer,
    *,
    operation: str,
    company_id: str,
    metadata: dict[str, Any],
    now: int,
    actor_agent_id: str | None = None,
    actor_valid_from: int | None = None,
    subject_memory_id: str | None = None,
    parent_event_id: str | None = None,
    key: str | None = None,
) -> dict[str, Any]:
    """Sign and append one event; call inside a write transaction."""
    seq, prev = chain_head(conn, signer, brain_company(conn))
    event_id = str(uuid.uuid4())
    body = {
        "ledger_version": LEDGER_VERSION,
        "event_id": event_id,
        "company_id": company_id,
        "operation": operation,
        "actor_agent_id": actor_agent_id or signer.agent_id,
        "actor_valid_from": iso_ms(actor_valid_from if actor_valid_from is not None else signer.valid_from),
        "signer_agent_id": signer.agent_id,
        "signer_valid_from": iso_ms(signer.valid_from),
        "cert_fingerprint": signer.cert_fingerprint,
        "identity_tier": signer.identity_tier,
        "subject_memory_id": subject_memory_id,
        "parent_event_id": parent_event_id,
        "metadata": metadata,
        **({"key": key} if key is not None else {}),
        "ledger_seq": seq + 1,
        "prev_mutation_hash": prev,
        "ts_signed": now,
    }
    nonce = new_nonce()
    body_bytes = canonical_json(body)
    signature = signer.key.sign(payload_message(body, nonce, now, body_bytes=body_bytes))
    content = commitments.sha256(body_bytes)
    mutation = commitments.event_link_hash(bytes.fromhex(prev), content, nonce, now)
    record = {
        "event_id": event_id,
        "company_id": company_id,
        "operation": operation,
        "signer_agent_id": signer.agent_id,
        "signer_valid_from": signer.valid_from,
        "ledger_seq": seq + 1,
        "subject_memory_id": subject_memory_id,
        "signed_body": body_bytes.decode("utf-8"),
        "content_hash": content.hex(),
        "nonce": nonce,
        "ts_signed": now,
        "signature_b64u": b64u_encode(signature),
        "prev_mutation_hash": prev,
        "mutation_hash": mutation.hex(),
    }
    stored, text = dict(record), body_bytes.decode("utf-8")
    # stored once, deflated: a recall's (migration 14), a save's (migration 16) and an outcome's
    # (migration 17) against their operation's dictionary
    if operation in DEFLATED_EVENT_OPERATIONS:
        stored["signed_body"], stored["signed_body_deflated"] = "", deflate_text(text)
    elif operation in DICTIONARY_EVENT_OPERATIONS:
        packed = deflate_event_text(text, EVENT_DICTIONARY_OF[operation])
        stored["signed_body"], stored["signed_body_deflated"] = "", packed
    q.insert_event(conn, stored)
    return record


def read_event(row: dict[str, Any]) -> dict[str, Any]:
    """An events row read with ``SELECT *``, as the row it stands for: its signed body as signed
    (None when its stored form reads as nothing), without the storage column."""
    out = {k: v for k, v in row.items() if k != "signed_body_deflated"}
    out["signed_body"] = event_body(row["operation"], row["signed_body"], row.get("signed_body_deflated"))
    return out


def read_provenance(row: dict[str, Any]) -> dict[str, Any]:
    """A memory_provenance row read with ``SELECT *``, as the row it stands for: its signed body as
    signed (None when its stored form reads as nothing), without the storage column."""
    out = {k: v for k, v in row.items() if k != "body_deflated"}
    out["body_json"] = provenance_body(
        row["event_type"], row["memory_id"], row["body_json"], row.get("body_deflated")
    )
    return out
