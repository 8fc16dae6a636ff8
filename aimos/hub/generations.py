"""The content key's generations: a new one when a device is revoked, so the revoked device cannot
read what the others push from then on (it keeps what it held: every record sealed before).

`aimos hub revoke` makes the new generation on the hub in the same step as the revocation (the hub
must answer, else nothing is revoked). It puts there: the key wrapped under the master (as the
first generation is: a device that joins later, with the passphrase, gets every generation), the
master's signed record of it (its number, a commitment to its key, and the hub's names of every
device revoked so far: the devices left out), and the key sealed to each other device's live
housekeeper key (box.wrap_for). A device picks up each generation wrapped to its housekeeper at
the start of its next sync, before it pushes, and keeps it in its keystore (the hub content key
item holds every generation); it accepts a key only when the master's record of that generation
commits to it, so neither the hub nor a device can slip in a key of its own.

A housekeeper key changed later (`aimos housekeeper rotate-key` forgets the old one) opens no wrap
made for the old key: every device, after each pull, seals each generation it holds to every live
housekeeper key that has none yet, unless the master's record left that key's device out. The
device whose key changed is given the generation by whichever other device syncs first after its
rotation reached the hub; until then its pulls are refused by name, and it seals with the newest
generation it holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from aimos.crypto.canonical import canonical_json, json_loads
from aimos.crypto.ed25519 import KeyPair
from aimos.crypto.ed25519 import verify as ed25519_verify
from aimos.errors import EpochRevokedError, PassphraseError
from aimos.hub import box
from aimos.identity.devices import HUB_CONTENT_KEY_ITEM, revoked_device
from aimos.identity.keystore import Keystore
from aimos.store.connection import Connection
from aimos.store.postgres import KeyRow
from aimos.store.queries import devices as queries
from aimos.vocabulary import HOUSEKEEPER, HUB_KEY_GENERATION_SCHEMA, HUB_KEY_GENERATION_SIGNATURE

MASTER = "master"  # the recipient of a generation's row that holds the master's wrap and record
LEFT_OUT = "hub_device_left_out"  # the reason a device's sync stops when a generation left it out


class KeyHub(Protocol):
    """What the generations need of a hub (aimos/store/postgres.py)."""

    def key_rows(self) -> list[KeyRow]: ...
    def add_generation(self, generation: int, made: list[KeyRow]) -> None: ...
    def add_wraps(self, made: list[KeyRow]) -> None: ...


# --- the master's record of a generation (pure) ----------------------------------------------------
def signed_message(body: str) -> bytes:
    """What the master signs of a generation's record: the domain, then its canonical JSON."""
    return HUB_KEY_GENERATION_SIGNATURE + body.encode("utf-8")


def generation_row(
    master: KeyPair, brain_id: str, generation: int, key: bytes, left_out: Iterable[str], now: int
) -> KeyRow:
    """The master's row of a new generation: its key wrapped under the master, and its record."""
    body = canonical_json(
        {
            "schema": HUB_KEY_GENERATION_SCHEMA,
            "brain_id": brain_id,
            "generation": generation,
            "key_check": box.key_check(key),
            "left_out": sorted(set(left_out)),
            "master_fingerprint": master.fingerprint,
            "made_at": now,
        }
    ).decode("utf-8")
    return KeyRow(
        generation, MASTER, box.wrap_content_key(master.seed, key), body, master.sign(signed_message(body))
    )


def records(found: Sequence[KeyRow], brain_id: str, master_public_key: str) -> dict[int, dict[str, Any]]:
    """The generations' records the master signed for this brain, by number (a row the master did
    not sign, or of another brain or number, is not one: the hub's owner may add rows)."""
    out: dict[int, dict[str, Any]] = {}
    for row in found:
        if row.recipient != MASTER or row.signed_body is None or row.signature is None:
            continue
        if not ed25519_verify(master_public_key, signed_message(row.signed_body), row.signature):
            continue
        try:
            doc = json_loads(row.signed_body, what="a key generation's record")
        except ValueError:
            continue
        if (
            isinstance(doc, dict)
            and doc.get("schema") == HUB_KEY_GENERATION_SCHEMA
            and doc.get("brain_id") == brain_id
            and doc.get("generation") == row.generation
            and isinstance(doc.get("left_out"), list)
        ):
            out[row.generation] = doc
    return out


def taken(
    ring: box.KeyRing,
    found: Sequence[KeyRow],
    signed: dict[int, dict[str, Any]],
    *,
    master_seed: bytes | None = None,
    housekeeper: KeyPair | None = None,
) -> box.KeyRing:
    """``ring`` with every generation of ``signed`` it lacks that a row of ``found`` opens (its
    master wrap with ``master_seed``, a wrap to ``housekeeper``) and whose record commits to it."""
    mine = None if housekeeper is None else box.recipient_name(ring.first, housekeeper.public_b64u)
    for generation, doc in sorted(signed.items()):
        if generation in ring.keys:
            continue
        for row in found:
            if row.generation != generation:
                continue
            key = None
            if row.recipient == MASTER and master_seed is not None:
                try:
                    key = box.unwrap_content_key(master_seed, row.wrapped)
                except PassphraseError:
                    key = None
            elif row.recipient == mine and housekeeper is not None:
                key = box.unwrap_with(housekeeper.seed, row.wrapped)
            if key is not None and box.key_check(key) == doc.get("key_check"):
                ring = ring.add(generation, key)
                break
    return ring


def left_out_at(signed: dict[int, dict[str, Any]], first_key: bytes, device: str) -> int | None:
    """The first generation whose record leaves ``device`` out (None: none does)."""
    name = box.device_name(first_key, device)
    return next((g for g, doc in sorted(signed.items()) if name in doc["left_out"]), None)


# --- the keystore ------------------------------------------------------------------------------
def held(keystore: Keystore) -> box.KeyRing:
    return box.KeyRing.from_text(keystore.get(HUB_CONTENT_KEY_ITEM))


def keep(keystore: Keystore, ring: box.KeyRing) -> box.KeyRing:
    """Every generation of ``ring`` kept in the keystore with those it held (none is ever lost)."""
    before = held(keystore)
    merged = box.KeyRing({**ring.keys, **before.keys})
    if merged.keys != before.keys:
        keystore.replace(HUB_CONTENT_KEY_ITEM, merged.to_text())
    return merged


# --- on a device -------------------------------------------------------------------------------
def _live_housekeepers(conn: Connection) -> list[tuple[str, str]]:
    """(device, public key) of every housekeeper epoch not revoked."""
    return [(str(r["device_fp"]), str(r["public_key_b64u"])) for r in queries.live_keys(conn, HOUSEKEEPER)]


def _wraps(
    conn: Connection,
    first_key: bytes,
    generation: int,
    key: bytes,
    left_out: Iterable[str],
    have: set[tuple[int, str]],
) -> list[KeyRow]:
    """``key`` sealed to every live housekeeper key without a wrap of ``generation`` in ``have``,
    but those of devices ``left_out`` (the hub's names) or revoked."""
    out = set(left_out)
    made = []
    for device, public_key in _live_housekeepers(conn):
        recipient = box.recipient_name(first_key, public_key)
        if box.device_name(first_key, device) in out or (generation, recipient) in have:
            continue
        if revoked_device(conn, device):
            continue
        have.add((generation, recipient))
        made.append(KeyRow(generation, recipient, box.wrap_for(public_key, key)))
    return made


@dataclass(frozen=True)
class PickedUp:
    ring: box.KeyRing
    found: list[KeyRow]
    signed: dict[int, dict[str, Any]]
    left_out_at: int | None


def pick_up(
    hub: KeyHub, keystore: Keystore, brain_id: str, master_public_key: str, device: str, housekeeper: KeyPair
) -> PickedUp:
    """The generations on the hub this device's housekeeper was given, added to its keystore."""
    found = hub.key_rows()
    signed = records(found, brain_id, master_public_key)
    ring = held(keystore)
    got = taken(ring, found, signed, housekeeper=housekeeper)
    if got.keys != ring.keys:
        got = keep(keystore, got)
    return PickedUp(got, found, signed, left_out_at(signed, got.first, device))


def refuse_if_left_out(picked: PickedUp) -> None:
    if picked.left_out_at is not None:
        raise EpochRevokedError(
            f"the master revoked this device from another one: the brain's content key generation "
            f"{picked.left_out_at} was made without it, so it cannot read what the other devices "
            "write from then on, and they refuse what it writes",
            "If it is yours, join the brain again in a new AIMOS_HOME (`aimos hub join URL`, with "
            "the master passphrase).",
            reason=LEFT_OUT,
        )


def pass_on(conn: Connection, hub: KeyHub, picked: PickedUp) -> int:
    """Each generation this device holds (after the first) sealed to every live housekeeper key
    that has no wrap of it yet (a device whose key changed, one that joined meanwhile), but those
    its record leaves out; how many wraps were added."""
    have = {(r.generation, r.recipient) for r in picked.found}
    made = []
    for generation, doc in sorted(picked.signed.items()):
        if generation in picked.ring.keys:
            key = picked.ring.keys[generation]
            made += _wraps(conn, picked.ring.first, generation, key, doc["left_out"], have)
    if made:
        hub.add_wraps(made)
    return len(made)


def rekey(conn: Connection, hub: KeyHub, keystore: Keystore, master: KeyPair, brain_id: str, now: int) -> int:
    """A new generation on the hub, left out of which is every device this brain holds revoked
    (the caller's revocation included) and every device an earlier generation left out; kept in
    the keystore. Its number."""
    found = hub.key_rows()
    signed = records(found, brain_id, master.public_b64u)
    ring = taken(held(keystore), found, signed, master_seed=master.seed)
    devices = queries.device_fps(conn)
    left_out = {name for doc in signed.values() for name in doc["left_out"]}
    left_out |= {box.device_name(ring.first, d) for d in devices if revoked_device(conn, d)}
    generation = max([r.generation for r in found], default=box.FIRST) + 1
    key = box.new_content_key()
    made = [generation_row(master, brain_id, generation, key, left_out, now)]
    made += _wraps(conn, ring.first, generation, key, left_out, set())
    hub.add_generation(generation, made)
    keep(keystore, ring.add(generation, key))
    return generation
