"""A device's side of a hub: linking this brain to one (`aimos hub init`), syncing (`aimos sync`,
the housekeeper's sync job), what waits each way (`aimos hub status`), and the home of the chains.

The hub's URL (it may hold a password) and the brain's content key live in the keystore, beside
the brain's other secrets; what this device sent and when it last synced is in a state file
outside the brain (state/hub/<brain id>.json, 0600), which a lost or stale copy only makes resend
rows the hub already holds (it keeps one of each).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw

from aimos import paths
from aimos.crypto.canonical import canonical_text
from aimos.crypto.ed25519 import KeyPair
from aimos.crypto.encoding import b64u_decode, b64u_encode
from aimos.crypto.messages import new_nonce, payload_message
from aimos.errors import AimosError, NotFoundError, UsageError
from aimos.hub import box, sync
from aimos.hub.postgres import BrainKeys, PostgresHub, masked
from aimos.identity.epochs import brain_meta, master_row, sealed_master
from aimos.identity.keystore import Keystore
from aimos.store.connection import one, rows, write_transaction
from aimos.store.seals import head_seal
from aimos.vocabulary import HUB_HOME_SCHEMA

URL_ITEM = "hub_url"
CONTENT_KEY_ITEM = "hub_content_key"


# --- the link's secrets and state -----------------------------------------------------------------
def hub_url(keystore: Keystore) -> str | None:
    return keystore.find(URL_ITEM)


def content_key(keystore: Keystore) -> bytes:
    return b64u_decode(keystore.get(CONTENT_KEY_ITEM))


def state_path(brain_id: str) -> Path:
    return paths.state_dir() / "hub" / f"{brain_id}.json"


def read_state(brain_id: str) -> dict[str, Any]:
    try:
        doc = json.loads(paths.read_at_most(state_path(brain_id)))
    except (OSError, ValueError, RecursionError):
        return {}
    return doc if isinstance(doc, dict) else {}


def write_state(brain_id: str, **changes: Any) -> None:
    doc = {**read_state(brain_id), **changes}
    paths.write_private_file(
        state_path(brain_id), (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()
    )


def linked_url(keystore: Keystore) -> str:
    url = hub_url(keystore)
    if url is None:
        raise NotFoundError(
            "this brain is not linked to a hub",
            "Link it from this device (`aimos hub init URL`), or join one (`aimos hub join URL`).",
        )
    return url


# --- the home of the chains ----------------------------------------------------------------
def home(conn: apsw.Connection) -> dict[str, Any] | None:
    """The newest home record (None: no hub was ever set, and this device is the home)."""
    return one(conn, "SELECT home_id, device_fp, ts_signed FROM hub_homes ORDER BY rowid DESC LIMIT 1")


def is_home(conn: apsw.Connection) -> bool:
    """True when this device writes the weight and label chains: no home was named (a brain that
    never met a hub), or the newest home record names this device."""
    found = home(conn)
    return found is None or found["device_fp"] == brain_meta(conn).get("device_fp")


def name_home(conn: apsw.Connection, master: KeyPair, device_fp: str, now: int) -> str:
    """Append the master's record naming ``device_fp`` the home (the caller holds the write
    transaction)."""
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


# --- linking a brain to a hub ----------------------------------------------------------------
@dataclass(frozen=True)
class About:
    """What a joining device needs to make its brain, sealed under the content key on the hub."""

    company_id: str
    brain_name: str
    master_created_at: int

    def sealed(self, key: bytes) -> bytes:
        return box.seal_record(key, json.dumps(self.__dict__, sort_keys=True).encode("utf-8"))

    @classmethod
    def opened(cls, key: bytes, sealed: bytes) -> About:
        doc = json.loads(box.open_record(key, sealed, "about the brain"))
        return cls(str(doc["company_id"]), str(doc["brain_name"]), int(doc["master_created_at"]))


def init(
    conn: apsw.Connection,
    keystore: Keystore,
    master: KeyPair,
    housekeeper: Any,
    url: str,
    now: int,
    told: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Create the hub's tables (if the database has none), put this brain's keys on it, name this
    device the home, and push every row the brain holds."""
    if hub_url(keystore) is not None:
        raise UsageError(
            f"this brain is already linked to a hub ({masked(linked_url(keystore))})",
            "Sync with it: `aimos sync`.",
        )
    meta = brain_meta(conn)
    key = box.new_content_key()
    master_info = master_row(conn)
    keys = BrainKeys(
        brain_id=meta["brain_id"],
        master_fingerprint=master.fingerprint,
        master_public_key=master.public_b64u,
        sealed_master=sealed_master(keystore),
        wrapped_key=box.wrap_content_key(master.seed, key),
        sealed_about=About(
            meta["company_id"], meta.get("brain_name", ""), int(master_info["created_at"])
        ).sealed(key),
    )
    with PostgresHub(url, meta["brain_id"]) as hub:
        hub.create_schema()
        hub.add_brain(keys)
        keystore.put(CONTENT_KEY_ITEM, b64u_encode(key))
        keystore.put(URL_ITEM, url)
        if home(conn) is None:
            with write_transaction(conn, housekeeper):
                name_home(conn, master, meta["device_fp"], now)
        pushed = sync.push(conn, hub, key, meta["device_fp"], 0, told)
    write_state(meta["brain_id"], pushed_through_seal=pushed.through_seal, last_sync=now, last_error=None)
    return {
        "brain_id": meta["brain_id"],
        "url": masked(url),
        "records": pushed.records,
        "bytes": pushed.bytes_sent,
    }


# --- syncing ---------------------------------------------------------------------------------
def run_sync(
    conn: apsw.Connection,
    keystore: Keystore,
    housekeeper: Any,
    told: Callable[[str, int], None] | None = None,
) -> dict[str, Any]:
    """Push what the hub lacks, then pull what this device lacks. A failure is recorded in the
    state file (`aimos hub status` says it) and raised."""
    meta = brain_meta(conn)
    brain_id, device = meta["brain_id"], meta["device_fp"]
    url = linked_url(keystore)
    key = content_key(keystore)
    state = read_state(brain_id)
    started = time.time()
    try:
        with PostgresHub(url, brain_id) as hub:
            pushed = sync.push(
                conn,
                hub,
                key,
                device,
                int(state.get("pushed_through_seal", 0)),
                (lambda n: told("pushed", n)) if told else None,
            )
            write_state(brain_id, pushed_through_seal=pushed.through_seal)
            pulled = sync.pull(
                conn, hub, key, device, housekeeper, (lambda n: told("pulled", n)) if told else None
            )
    except AimosError as exc:
        write_state(brain_id, last_error={"at": int(time.time()), "message": exc.message})
        raise
    head = head_seal(conn)
    if pulled.records and head is not None and head.seq == pushed.through_seal + 1:
        write_state(brain_id, pushed_through_seal=head.seq)  # the pull's own seal: nothing of ours
    write_state(brain_id, last_sync=int(time.time()), last_error=None)
    return {
        "url": masked(url),
        "pushed": pushed.records,
        "pulled": pulled.records,
        "applied": pulled.applied,
        "memories": len(pulled.memories),
        "seconds": round(time.time() - started, 3),
    }


def status(conn: apsw.Connection, keystore: Keystore) -> dict[str, Any]:
    """What waits each way and when the last sync ran (the hub asked when it answers)."""
    meta = brain_meta(conn)
    brain_id, device = meta["brain_id"], meta["device_fp"]
    url = linked_url(keystore)
    state = read_state(brain_id)
    through, heads = sync.pulled_heads(conn)
    found = home(conn)
    out: dict[str, Any] = {
        "url": masked(url),
        "brain_id": brain_id,
        "device": device,
        "home": found["device_fp"] if found else device,
        "this_device_is_home": is_home(conn),
        "last_sync": state.get("last_sync"),
        "last_error": state.get("last_error"),
        "pulled_through": through,
        "devices_pulled": {d: n for d, (n, _link) in sorted(heads.items())},
    }
    pending = sum(1 for _ in _unsent(conn, int(state.get("pushed_through_seal", 0))))
    out["to_push_at_most"] = pending
    try:
        with PostgresHub(url, brain_id) as hub:
            counts = hub.counts()
        out["hub"] = counts
        out["to_pull"] = max(0, int(counts["newest_seq"]) - through)
        out["reachable"] = True
    except AimosError as exc:
        out["reachable"] = False
        out["unreachable_because"] = exc.message
    return out


def _unsent(conn: apsw.Connection, after_seal: int) -> Any:
    from aimos.hub.records import written_after

    return written_after(conn, after_seal)


def devices(conn: apsw.Connection) -> list[dict[str, Any]]:
    """Every device this brain has seen: its housekeeper epochs and agents."""
    return rows(
        conn,
        "SELECT device_fp, MIN(created_at) AS since,"
        " group_concat(DISTINCT CASE WHEN role = 'agent' THEN agent_id END) AS agents"
        " FROM identity_epochs GROUP BY device_fp ORDER BY since",
    )
