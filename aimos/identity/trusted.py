"""Verified reads of who may do what: the identity rows as the seals bind them, the master as it is
anchored outside the brain, and each grant as the master signed it.

Every read that decides (a request's epoch, its revocation, its grant: save, recall, show, label,
feedback, MCP) goes through here first, so a grant edited outside aimos (a raised ceiling), a
revocation deleted, an epoch copied in from another brain or a swapped master key is refused at
once, not only found by `aimos verify` afterwards.
"""

from __future__ import annotations

import json
from typing import Any

from aimos.crypto.ed25519 import verify
from aimos.crypto.encoding import b64u_decode, parse_iso_ms
from aimos.errors import AimosError, IntegrityError
from aimos.identity.anchors import anchored_fingerprint
from aimos.identity.grants import current_grant
from aimos.identity.master import master_row
from aimos.identity.validators import data_class_rank
from aimos.store.connection import Connection
from aimos.store.functions import payload_message_sql
from aimos.store.meta import brain_meta
from aimos.store.seals import RESTORE_HINT, already_checked, check_tables, costed


def grant_excess(grant: dict[str, Any], clearance: int, data_class: str) -> str | None:
    """The one grant check (save, recall, show and label all ask it): None when the grant's
    ceilings cover a memory or request of this clearance and data class, else the ceiling it
    exceeds, "clearance" or "data_class" (an unknown data class is a usage error)."""
    if clearance > grant["clearance_ceiling"]:
        return "clearance"
    if data_class_rank(data_class) > data_class_rank(grant["data_class_ceiling"]):
        return "data_class"
    return None


def grant_covers(grant: dict[str, Any], clearance: int, data_class: str) -> bool:
    return grant_excess(grant, clearance, data_class) is None


IDENTITY_TABLES = ("master_identity", "identity_epochs", "recall_grants", "agent_revocations")
# grant columns and the signed body's fields they must equal
_GRANT_FIELDS = (
    "company_id",
    "subject_agent_id",
    "clearance_ceiling",
    "data_class_ceiling",
    "allowed",
    "write_allowed",
    "master_fingerprint",
    "reason",
    "prev_mutation_hash",
    "ts_signed",
)


def check_identities(conn: Connection) -> None:
    """The identity tables hold exactly what the brain's seals say, and the brain's master is the
    one anchors.json names for it (a brain it names no master for is refused until the person
    anchors it: `aimos anchor`). Raises IntegrityError (exit 5)."""
    with costed("identities"):
        _check_identities(conn)


def _check_identities(conn: Connection) -> None:
    if already_checked(conn, IDENTITY_TABLES):
        return  # checked by this connection, and no other has committed since
    check_tables(conn, IDENTITY_TABLES)
    check_anchored(conn, brain_meta(conn).get("brain_id"))


def check_anchored(conn: Connection, brain_id: str | None) -> None:
    """anchors.json names a master for this brain, and it is the brain's own: else IntegrityError
    (exit 5), ``brain_unanchored`` or ``master_not_anchored``."""
    anchored = anchored_fingerprint(brain_id) if brain_id else None
    if anchored is None:
        raise unanchored_error(brain_id)
    if master_row(conn)["fingerprint"] != anchored:
        raise IntegrityError(
            "the brain's master identity is not the one anchors.json names for this brain",
            RESTORE_HINT,
            reason="master_not_anchored",
        )


ANCHOR_HINT = (
    "If this brain is yours (moved here, or anchors.json was lost), run `aimos anchor`: it asks for "
    "the master passphrase and shows the master fingerprint to compare with the one install printed. "
    "Otherwise put your own brain file back."
)


def unanchored_error(brain_id: str | None) -> IntegrityError:
    """A brain this home holds no trust anchor for (no anchors.json, or no entry for its id): it was
    put here from elsewhere, or the anchor was lost. Nothing acts on it until the person anchors it."""
    return IntegrityError(
        f"this home holds no trust anchor for the brain it finds (brain {brain_id or 'without an id'}): "
        "anchors.json names no master for it, so no request is checked against a master you chose",
        ANCHOR_HINT,
        reason="brain_unanchored",
    )


def grant_reason(conn: Connection, grant: dict[str, Any]) -> str | None:
    """None when the grant row is what its master-signed body says; else the reason."""
    try:
        body = json.loads(grant["signed_body"])
        if not isinstance(body, dict):
            return "grant_body_invalid"
        for name in _GRANT_FIELDS:
            value = body.get(name)
            flag = name in ("allowed", "write_allowed")  # booleans signed, 0/1 stored
            if isinstance(value, bool) is not flag or (int(bool(value)) if flag else value) != grant[name]:
                return "grant_fields_differ"
        if parse_iso_ms(str(body.get("subject_valid_from"))) != grant["subject_valid_from"]:
            return "grant_fields_differ"
        master = master_row(conn)
        if master["fingerprint"] != grant["master_fingerprint"]:
            return "grant_signature_invalid"
        message = payload_message_sql(grant["signed_body"], grant["nonce"], grant["ts_signed"])
        if message is None or not verify(
            master["public_key_b64u"], message, b64u_decode(str(grant["signature_b64u"]))
        ):
            return "grant_signature_invalid"
    except (AimosError, ValueError, TypeError, KeyError, RecursionError):
        return "grant_body_invalid"
    return None


def verified_grant(conn: Connection, agent_id: str, valid_from: int) -> dict[str, Any] | None:
    """The epoch's current grant, re-checked against the master's signature before it decides."""
    grant = current_grant(conn, agent_id, valid_from)
    if grant is None:
        return None
    reason = grant_reason(conn, grant)
    if reason is not None:
        raise IntegrityError(
            f"agent {agent_id}'s grant does not verify ({reason}): it was changed outside aimos",
            RESTORE_HINT,
            reason=reason,
        )
    return grant
