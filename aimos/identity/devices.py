"""The devices of a brain synced through a hub (aimos/hub), and the home among them.

Every device writes its own saves, recalls and identities (each with keys only it holds); the
weight and label chains of every memory have one writer, the home's housekeeper, so they never
fork. After a save (whose own transaction may begin a memory's chains: a carried label, a
quarantine baseline), only the home appends to them: the agreement detector runs there alone,
and an outcome reported on another device travels to the home as its signed request
(hub_requests), which the home applies. The master names the home (hub_homes, migration 20);
each record names the one before it, so the homes form one chain too. A brain that never met a
hub names none, and is its own home."""

from __future__ import annotations

import uuid
from typing import Any

import apsw

from aimos.crypto.canonical import canonical_text
from aimos.crypto.ed25519 import KeyPair
from aimos.crypto.encoding import b64u_encode
from aimos.crypto.messages import new_nonce, payload_message
from aimos.identity.epochs import brain_meta
from aimos.identity.requests import VerifiedRequest
from aimos.store.connection import one
from aimos.vocabulary import HUB_HOME_SCHEMA

# the keystore items of a brain on a hub (aimos/hub/device.py): the hub's URL (it may hold a
# password) and the brain's content key; a keystore move carries them and a purge destroys them
HUB_URL_ITEM = "hub_url"
HUB_CONTENT_KEY_ITEM = "hub_content_key"
HUB_ITEMS = (HUB_URL_ITEM, HUB_CONTENT_KEY_ITEM)


def this_device(conn: apsw.Connection) -> str:
    return brain_meta(conn)["device_fp"]


def home(conn: apsw.Connection) -> dict[str, Any] | None:
    """The newest home record (None: no hub was ever set, and this device is the home)."""
    return one(conn, "SELECT home_id, device_fp, ts_signed FROM hub_homes ORDER BY rowid DESC LIMIT 1")


def is_home(conn: apsw.Connection) -> bool:
    """True when this device appends to the weight and label chains: no home was named, or the
    newest home record names this device."""
    found = home(conn)
    return found is None or found["device_fp"] == this_device(conn)


def keep_for_home(
    conn: apsw.Connection, verified: VerifiedRequest, now: int, master_signature: str | None = None
) -> None:
    """Keep a verified request whose work is the home's (its nonce not recorded here: the home
    records it when it applies the request), in hub_requests; the caller holds the write
    transaction."""
    req = verified.request
    conn.execute(
        "INSERT INTO hub_requests (request_id, device_fp, agent_id, agent_valid_from, signed_path, body,"
        " nonce, ts_signed, signature_b64u, received_at, master_signature_b64u)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            str(uuid.uuid4()),
            this_device(conn),
            verified.agent_id,
            verified.valid_from,
            req.path,
            verified.body_bytes.decode("utf-8"),
            req.nonce,
            req.ts,
            req.signature_b64u,
            now,
            master_signature,
        ),
    )


def revoked_device(conn: apsw.Connection, device_fp: str) -> bool:
    """True when the master revoked every epoch the device holds (`aimos hub revoke`)."""
    found = one(
        conn,
        "SELECT COUNT(*) AS epochs, COUNT(r.revocation_id) AS revoked FROM identity_epochs e"
        " LEFT JOIN agent_revocations r ON r.agent_id = e.agent_id AND r.agent_valid_from = e.valid_from"
        " WHERE e.device_fp = ?",
        (device_fp,),
    )
    return found is not None and found["epochs"] > 0 and found["epochs"] == found["revoked"]


def name_home(conn: apsw.Connection, master: KeyPair, device_fp: str, now: int) -> str:
    """Append the master's record naming ``device_fp`` the home (the caller holds the write
    transaction); its id."""
    previous = home(conn)
    body = {
        "schema": HUB_HOME_SCHEMA,
        "home_id": str(uuid.uuid4()),
        "brain_id": brain_meta(conn)["brain_id"],
        "device_fp": device_fp,
        "prev_home_id": previous["home_id"] if previous else None,
        "master_fingerprint": master.fingerprint,
        "ts_signed": now,
    }
    nonce = new_nonce()
    signature = master.sign(payload_message(body, nonce, now))
    conn.execute(
        "INSERT INTO hub_homes (home_id, device_fp, prev_home_id, signed_body, master_fingerprint, nonce,"
        " ts_signed, signature_b64u) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            body["home_id"],
            device_fp,
            body["prev_home_id"],
            canonical_text(body),
            master.fingerprint,
            nonce,
            now,
            b64u_encode(signature),
        ),
    )
    return str(body["home_id"])
