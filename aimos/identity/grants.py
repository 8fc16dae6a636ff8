"""Master-signed grants: what an agent epoch may read and write (clearance, data class, write),
issued and read back."""

from __future__ import annotations

import uuid
from typing import Any, cast

from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_text
from aimos.crypto.ed25519 import KeyPair
from aimos.crypto.encoding import b64u_encode, iso_ms
from aimos.crypto.messages import new_nonce, payload_message
from aimos.identity.validators import check_clearance, data_class_rank
from aimos.store.connection import Connection
from aimos.store.queries import identity as q
from aimos.store.queries.identity import GrantRow
from aimos.vocabulary import (
    AGENT_CLEARANCE_MAX,
    CLEARANCE_MAX,
    HOUSEKEEPER,
    RECALL_AUTHORIZATION_SCHEMA,
)


# --- grants -------------------------------------------------------------------------------
def issue_grant(
    conn: Connection,
    master: KeyPair,
    *,
    company_id: str,
    agent_id: str,
    valid_from: int,
    clearance_ceiling: int,
    data_class_ceiling: str,
    write_allowed: bool,
    now: int,
    reason: str = "aimos recall and write authority",
    allowed: bool = True,
) -> dict[str, Any]:
    """A master-signed grant (`hom.aimos.recall-authorization/v1`) for one agent epoch."""
    cap = CLEARANCE_MAX if agent_id == HOUSEKEEPER else AGENT_CLEARANCE_MAX
    check_clearance(clearance_ceiling, ceiling=cap)
    data_class_rank(data_class_ceiling)
    prev_hash = q.newest_grant_hash(conn, agent_id, valid_from)
    master_fp = master.fingerprint
    body = {
        "schema": RECALL_AUTHORIZATION_SCHEMA,
        "company_id": company_id,
        "subject_agent_id": agent_id,
        "subject_valid_from": iso_ms(valid_from),
        "allowed": bool(allowed),
        "write_allowed": bool(write_allowed),
        "clearance_ceiling": clearance_ceiling,
        "data_class_ceiling": data_class_ceiling,
        "master_fingerprint": master_fp,
        "reason": reason,
        "prev_mutation_hash": prev_hash,
        "ts_signed": now,
    }
    nonce = new_nonce()
    signature = master.sign(payload_message(body, nonce, now))
    content = commitments.provenance_content_hash(body)
    mutation = commitments.recall_authorization_mutation_hash(
        bytes.fromhex(prev_hash) if prev_hash else None, content, nonce, now
    )
    grant: GrantRow = {
        "grant_id": str(uuid.uuid4()),
        "company_id": company_id,
        "subject_agent_id": agent_id,
        "subject_valid_from": valid_from,
        "allowed": int(allowed),
        "write_allowed": int(write_allowed),
        "clearance_ceiling": clearance_ceiling,
        "data_class_ceiling": data_class_ceiling,
        "reason": reason,
        "master_fingerprint": master_fp,
        "signed_body": canonical_text(body),
        "content_hash": content.hex(),
        "nonce": nonce,
        "ts_signed": now,
        "signature_b64u": b64u_encode(signature),
        "prev_mutation_hash": prev_hash,
        "mutation_hash": mutation.hex(),
    }
    q.insert_grant(conn, grant)
    return cast("dict[str, Any]", grant)


def current_grant(conn: Connection, agent_id: str, valid_from: int) -> dict[str, Any] | None:
    return cast("dict[str, Any] | None", q.current_grant(conn, agent_id, valid_from))
