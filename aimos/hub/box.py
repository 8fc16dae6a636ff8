"""The hub's cryptography, pure: what the hub stores is sealed under the brain's content key, a
random 32-byte key only the devices hold (each in its keystore); a device that joins gets it
wrapped under a key derived from the master's seed, so the master passphrase is the only way in.

Every key is derived for one use (BLAKE2b keyed by the parent key over a domain of
aimos/vocabulary.py): the records' box, the hub's name of a row (keyed, so the hub learns no id),
the wrap. Boxes are PyNaCl's SecretBox (XSalsa20-Poly1305): a record's nonce is derived from its
plaintext (seal_record), so a record sent again is the same bytes; the wrap's is random."""

from __future__ import annotations

import functools
import hashlib

import nacl.exceptions
import nacl.secret
import nacl.utils

from aimos.errors import PassphraseError, VerificationError
from aimos.vocabulary import (
    HUB_DEVICE_NAME,
    HUB_KEY_WRAP,
    HUB_RECORD_BOX,
    HUB_RECORD_LINK,
    HUB_RECORD_NONCE,
    HUB_ROW_NAME,
)

KEY_BYTES = 32


def derive(parent: bytes, domain: bytes) -> bytes:
    """A 32-byte key for one use: BLAKE2b(domain) keyed by ``parent``."""
    if len(parent) != KEY_BYTES:
        raise ValueError("a parent key is 32 bytes")
    return hashlib.blake2b(domain, key=parent, digest_size=KEY_BYTES).digest()


def new_content_key() -> bytes:
    return nacl.utils.random(KEY_BYTES)


def wrap_content_key(master_seed: bytes, content_key: bytes) -> bytes:
    return bytes(nacl.secret.SecretBox(derive(master_seed, HUB_KEY_WRAP)).encrypt(content_key))


def unwrap_content_key(master_seed: bytes, wrapped: bytes) -> bytes:
    """The content key; a master that did not wrap it (another brain's, a damaged wrap) is refused."""
    try:
        key = nacl.secret.SecretBox(derive(master_seed, HUB_KEY_WRAP)).decrypt(wrapped)
    except (nacl.exceptions.CryptoError, ValueError, TypeError):
        raise PassphraseError(
            "the hub's content key does not open with this brain's master",
            "The hub holds another brain, or its key record was changed: check the URL.",
        ) from None
    if len(key) != KEY_BYTES:
        raise PassphraseError("the hub's content key is not 32 bytes")
    return key


def seal_record(content_key: bytes, plaintext: bytes) -> bytes:
    """The box of ``plaintext``, the same bytes each time: a device that sends a record again (the
    hub lost it) sends what the other devices already hold, so they see the same record.

    The nonce is BLAKE2b-192 of the plaintext keyed by its own key (derived for that use alone,
    never the box's): a synthetic nonce, as SIV modes make one. XSalsa20-Poly1305 is broken only
    when one (key, nonce) seals two different plaintexts (the keystream, and Poly1305's one-time
    key, used twice); here two plaintexts share a nonce only if they collide under a keyed 192-bit
    hash (about 2^96 boxes before that is even likely), so that never happens. What it gives away:
    two equal plaintexts make equal boxes, and no two records are equal (each names its device,
    its number and the record before it). Without the content key the nonce says nothing of the
    plaintext (a keyed hash)."""
    sealer, nonce_key = _record_keys(content_key)
    nonce = hashlib.blake2b(plaintext, key=nonce_key, digest_size=nacl.secret.SecretBox.NONCE_SIZE).digest()
    return bytes(sealer.encrypt(plaintext, nonce))


@functools.lru_cache(maxsize=2)
def _record_keys(content_key: bytes) -> tuple[nacl.secret.SecretBox, bytes]:
    """The records' box and nonce key of a content key (a sync seals and opens thousands of
    records under one: derived once)."""
    return nacl.secret.SecretBox(derive(content_key, HUB_RECORD_BOX)), derive(content_key, HUB_RECORD_NONCE)


def open_record(content_key: bytes, box: bytes, name: str) -> bytes:
    """The record's plaintext; a box changed on the hub (one byte, or made without the key) is
    refused naming the record."""
    try:
        return _record_keys(content_key)[0].decrypt(box)
    except (nacl.exceptions.CryptoError, ValueError, TypeError):
        raise VerificationError(
            f"hub record {name} does not open with the brain's content key: it was changed on the hub"
            " or not written by a device of this brain",
            "Nothing from this pull was applied. Check who can write to the hub's database.",
            reason="hub_record_unopenable",
        ) from None


def row_name(content_key: bytes, table: str, key_text: str) -> bytes:
    """The hub's name of a row (its table and primary key), keyed: equal rows have equal names, so
    a push that is sent twice adds nothing, and the hub learns no id."""
    data = table.encode("utf-8") + b"\x00" + key_text.encode("utf-8")
    return hashlib.blake2b(data, key=derive(content_key, HUB_ROW_NAME), digest_size=KEY_BYTES).digest()


GENESIS_LINK = "0" * 64


def record_link(box: bytes) -> str:
    """What the next record of the same device names as its predecessor: the hash of this box."""
    return hashlib.sha256(HUB_RECORD_LINK + box).hexdigest()


def device_name(content_key: bytes, device: str) -> str:
    """The hub's name of a device (keyed: the hub learns nothing of the device's id, which may
    derive from its host's name)."""
    return (
        "d-"
        + hashlib.blake2b(
            device.encode("utf-8"), key=derive(content_key, HUB_DEVICE_NAME), digest_size=16
        ).hexdigest()
    )
