"""The devices of a brain synced through a hub (aimos/hub), and the home among them.

Every device writes its own saves, recalls and identities (each with keys only it holds); the
weight and label chains of every memory have one writer, the home's housekeeper, so they never
fork. After a save (whose own transaction may begin a memory's chains: a carried label, a
quarantine baseline), only the home appends to them: the agreement detector runs there alone,
and an outcome reported on another device travels to the home as its signed request
(hub_requests), which the home applies. The master names the home (hub_homes, migration 20);
each record names the one before it, so the homes form one chain too. A brain that never met a
hub names none, and is its own home. A new home takes over when the home before it hands over
(hub_handovers, migration 22): that device signs the handover when it learns of the move and
appends nothing after it, so the two never both write; a lost home is replaced by the master's
handover and a cut of its later records (hub_cuts, which a revocation writes too)."""

from __future__ import annotations

import uuid
from typing import Any

from aimos.crypto.canonical import canonical_text
from aimos.crypto.ed25519 import KeyPair
from aimos.crypto.encoding import b64u_encode
from aimos.crypto.messages import new_nonce, payload_message
from aimos.identity.requests import VerifiedRequest
from aimos.store.connection import Connection
from aimos.store.meta import brain_meta
from aimos.store.queries import devices as queries
from aimos.vocabulary import HUB_CUT_SCHEMA, HUB_HANDOVER_SCHEMA, HUB_HOME_SCHEMA

# the keystore items of a brain on a hub (aimos/hub/device.py): the hub's URL (it may hold a
# password) and the brain's content key; a keystore move carries them and a purge destroys them
HUB_URL_ITEM = "hub_url"
HUB_CONTENT_KEY_ITEM = "hub_content_key"
HUB_ITEMS = (HUB_URL_ITEM, HUB_CONTENT_KEY_ITEM)


def this_device(conn: Connection) -> str:
    return brain_meta(conn)["device_fp"]


def home(conn: Connection) -> queries.HomeRecord | None:
    """The home record in force (None: no hub was ever set, and this device is the home). The
    first home record is in force at once; a later one once the home before it handed over
    (hub_handovers: it stops appending at that record), or at once when it names the home in
    force again. Until then the home before it keeps writing the chains."""
    acting: queries.HomeInOrder | None = None
    for found in queries.home_records(conn):
        if acting is None or found["handed"] or found["device_fp"] == acting["device_fp"]:
            acting = found
    return acting


def newest_home(conn: Connection) -> queries.HomeRecord | None:
    """The newest home record, in force or waiting for the home before it to hand over."""
    return queries.newest_home_record(conn)


def waiting_home(conn: Connection) -> queries.HomeRecord | None:
    """The newest home record when it is not in force yet (the home in force has not handed over)."""
    newest, acting = newest_home(conn), home(conn)
    if newest is None or acting is None or newest["home_id"] == acting["home_id"]:
        return None
    return newest


def is_home(conn: Connection) -> bool:
    """True when this device appends to the weight and label chains: no home was named, or the
    home record in force names this device."""
    found = home(conn)
    return found is None or found["device_fp"] == this_device(conn)


def cuts(conn: Connection) -> dict[str, int]:
    """Per device cut by the master (hub_cuts), the last of its records accepted (the lowest when
    it was cut twice): every later one is refused, whatever time it claims."""
    return {str(r["device_fp"]): int(r["through_n"]) for r in queries.lowest_cuts(conn)}


def keep_for_home(
    conn: Connection, verified: VerifiedRequest, now: int, master_signature: str | None = None
) -> None:
    """Keep a verified request whose work is the home's (its nonce not recorded here: the home
    records it when it applies the request), in hub_requests; the caller holds the write
    transaction."""
    req = verified.request
    queries.insert_kept_request(
        conn,
        {
            "request_id": str(uuid.uuid4()),
            "device_fp": this_device(conn),
            "agent_id": verified.agent_id,
            "agent_valid_from": verified.valid_from,
            "signed_path": req.path,
            "body": verified.body_bytes.decode("utf-8"),
            "nonce": req.nonce,
            "ts_signed": req.ts,
            "signature_b64u": req.signature_b64u,
            "received_at": now,
            "master_signature_b64u": master_signature,
        },
    )


def revoked_device(conn: Connection, device_fp: str) -> bool:
    """True when the master revoked every epoch the device holds (`aimos hub revoke`)."""
    found = queries.epoch_counts(conn, device_fp)
    return found is not None and found["epochs"] > 0 and found["epochs"] == found["revoked"]


# --- the signed hub rows' bodies (pure: tests/vectors pins their bytes) ----------------------------
def sign_row(key: KeyPair, body: dict[str, Any], nonce: str, now: int) -> tuple[str, str]:
    """(canonical body, signature) of a signed hub row (payload message form)."""
    return canonical_text(body), b64u_encode(key.sign(payload_message(body, nonce, now)))


def _signed(key: KeyPair, body: dict[str, Any], now: int) -> queries.SignedRow:
    """The canonical body, nonce, time and signature of a signed hub row, under a new nonce."""
    nonce = new_nonce()
    text, signature = sign_row(key, body, nonce, now)
    return {"signed_body": text, "nonce": nonce, "ts_signed": now, "signature_b64u": signature}


def _body(schema: str, brain_id: str, master: str | None, now: int, **fields: Any) -> dict[str, Any]:
    """A signed hub row's body: its own ``fields``, and what every one names (``master``: the
    master's fingerprint, or None for a row its device's housekeeper signs)."""
    return {"schema": schema, "brain_id": brain_id, **fields, "master_fingerprint": master, "ts_signed": now}


def home_body(
    brain_id: str, home_id: str, device_fp: str, prev_home_id: str | None, master_fingerprint: str, now: int
) -> dict[str, Any]:
    """The master's record naming ``device_fp`` the home after ``prev_home_id``."""
    return _body(
        HUB_HOME_SCHEMA,
        brain_id,
        master_fingerprint,
        now,
        home_id=home_id,
        device_fp=device_fp,
        prev_home_id=prev_home_id,
    )


def handover_body(
    brain_id: str,
    home_id: str,
    from_device: str,
    now: int,
    *,
    signer_valid_from: int | None = None,
    master_fingerprint: str | None = None,
) -> dict[str, Any]:
    """The record that puts the home record ``home_id`` in force: signed by the housekeeper epoch
    of ``from_device`` valid from ``signer_valid_from``, or by the master (exactly one given)."""
    return _body(
        HUB_HANDOVER_SCHEMA,
        brain_id,
        master_fingerprint,
        now,
        home_id=home_id,
        from_device=from_device,
        signer_valid_from=signer_valid_from,
    )


def cut_body(
    brain_id: str, cut_id: str, device_fp: str, through_n: int, why: str, master_fingerprint: str, now: int
) -> dict[str, Any]:
    """The master's record that ``device_fp``'s records after ``through_n`` are refused."""
    return _body(
        HUB_CUT_SCHEMA,
        brain_id,
        master_fingerprint,
        now,
        cut_id=cut_id,
        device_fp=device_fp,
        through_n=through_n,
        why=why,
    )


# --- writing them --------------------------------------------------------------------------------
def name_home(conn: Connection, master: KeyPair, device_fp: str, now: int) -> str:
    """Append the master's record naming ``device_fp`` the home (the caller holds the write
    transaction); its id. It is in force once the home before it hands over (`hand_over`)."""
    previous = newest_home(conn)
    body = home_body(
        brain_meta(conn)["brain_id"],
        str(uuid.uuid4()),
        device_fp,
        previous["home_id"] if previous else None,
        master.fingerprint,
        now,
    )
    queries.insert_home(
        conn,
        {
            "home_id": body["home_id"],
            "device_fp": device_fp,
            "prev_home_id": body["prev_home_id"],
            "master_fingerprint": master.fingerprint,
            **_signed(master, body, now),
        },
    )
    return str(body["home_id"])


def hand_over(
    conn: Connection,
    home_id: str,
    from_device: str,
    now: int,
    *,
    housekeeper: Any = None,
    master: KeyPair | None = None,
) -> None:
    """Put the home record ``home_id`` in force, ``from_device`` (the home in force) stopping
    there (the caller holds the write transaction): signed by that device's ``housekeeper`` (a
    Signer: this device, which learnt of the move), or by the ``master`` (a forced move: the old
    home is lost)."""
    body = handover_body(
        brain_meta(conn)["brain_id"],
        home_id,
        from_device,
        now,
        signer_valid_from=None if master is not None else int(housekeeper.valid_from),
        master_fingerprint=master.fingerprint if master is not None else None,
    )
    queries.insert_handover(
        conn,
        {
            "home_id": home_id,
            "from_device": body["from_device"],
            "signer_valid_from": body["signer_valid_from"],
            "master_fingerprint": body["master_fingerprint"],
            **_signed(master if master is not None else housekeeper.key, body, now),
        },
    )


def cut_device(conn: Connection, master: KeyPair, device_fp: str, through_n: int, why: str, now: int) -> None:
    """The master's record that ``device_fp``'s records after its number ``through_n`` are refused
    on every device (the caller holds the write transaction)."""
    body = cut_body(
        brain_meta(conn)["brain_id"], str(uuid.uuid4()), device_fp, through_n, why, master.fingerprint, now
    )
    queries.insert_cut(
        conn,
        {
            "cut_id": body["cut_id"],
            "device_fp": device_fp,
            "through_n": through_n,
            "why": why,
            "master_fingerprint": master.fingerprint,
            **_signed(master, body, now),
        },
    )
