"""The hub's cryptography, pure: what the hub stores is sealed under the brain's content key, a
random 32-byte key only the devices hold (each in its keystore); a device that joins gets it
wrapped under a key derived from the master's seed, so the master passphrase is the only way in.

The content key has generations: `hub init` makes the first, and each device revocation a new one
(aimos/hub/generations.py), which the revoked device never gets. A device keeps every generation it was
given (a KeyRing), opens a record with the generation that sealed it and seals with its newest. A
box sealed under the first generation is a plain SecretBox, as every hub held before there were
generations; one sealed under a later generation begins with HUB_BOX_GENERATION and its number,
both bound into the key that seals it (a box changed to name another generation does not open).
The first generation also keys the hub's names of rows and devices, which never change.

Every key is derived for one use (BLAKE2b keyed by the parent key over a domain of
aimos/vocabulary.py): the records' box, the hub's name of a row (keyed, so the hub learns no id),
the wrap. Boxes are PyNaCl's SecretBox (XSalsa20-Poly1305): a record's nonce is derived from its
plaintext under its generation's key (KeyRing.seal), so a record sent again under the generation
it was first sent under is the same bytes; the wrap's is random. A generation wrapped for one
device is a SealedBox to the X25519 form of its housekeeper's Ed25519 key."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field

import nacl.exceptions
import nacl.public
import nacl.secret
import nacl.signing
import nacl.utils

from aimos.crypto.ed25519 import raw_from_spki
from aimos.crypto.encoding import b64u_decode, b64u_encode
from aimos.errors import EncodingError, PassphraseError, VerificationError
from aimos.vocabulary import (
    HUB_BOX_GENERATION,
    HUB_DEVICE_NAME,
    HUB_KEY_CHECK,
    HUB_KEY_RECIPIENT,
    HUB_KEY_WRAP,
    HUB_RECORD_BOX,
    HUB_RECORD_LINK,
    HUB_RECORD_NONCE,
    HUB_ROW_NAME,
)

KEY_BYTES = 32
FIRST = 1  # the generation `hub init` makes
_GENERATION_BYTES = 4


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


def header(generation: int) -> bytes:
    """What a box sealed under ``generation`` begins with (nothing for the first)."""
    if generation == FIRST:
        return b""
    return HUB_BOX_GENERATION + generation.to_bytes(_GENERATION_BYTES, "big")


def generation_of(box: bytes) -> int:
    """The generation a box says sealed it. (A first-generation box is random from its first
    byte: one that begins with HUB_BOX_GENERATION by chance, one in 2^64, would be refused.)"""
    end = len(HUB_BOX_GENERATION) + _GENERATION_BYTES
    if box.startswith(HUB_BOX_GENERATION) and len(box) >= end:
        return int.from_bytes(box[len(HUB_BOX_GENERATION) : end], "big")
    return FIRST


def _record_keys(content_key: bytes, generation: int) -> tuple[nacl.secret.SecretBox, bytes]:
    """The records' box and nonce key of one generation's key, each derived for its use alone with
    the generation's header bound in (a sync seals and opens thousands of records: derived once a
    generation, KeyRing)."""
    domain = header(generation)
    return (
        nacl.secret.SecretBox(derive(content_key, HUB_RECORD_BOX + domain)),
        derive(content_key, HUB_RECORD_NONCE + domain),
    )


def _seal(keys: tuple[nacl.secret.SecretBox, bytes], generation: int, plaintext: bytes) -> bytes:
    """The box of ``plaintext``, the same bytes each time: a device that sends a record again (the
    hub lost it) under the generation it first sent it under sends what the other devices already
    hold, so they see the same record.

    The nonce is BLAKE2b-192 of the plaintext keyed by its own key (derived from the generation's
    key for that use alone, never the box's): a synthetic nonce, as SIV modes make one.
    XSalsa20-Poly1305 is broken only when one (key, nonce) seals two different plaintexts (the
    keystream, and Poly1305's one-time key, used twice); here two plaintexts share a nonce under
    one generation only if they collide under a keyed 192-bit hash (about 2^96 boxes before that is
    even likely), so that never happens. What it gives away: two equal plaintexts make equal boxes
    under one generation, and no two records are equal (each names its device, its number and the
    record before it). Without the key the nonce says nothing of the plaintext (a keyed hash)."""
    sealer, nonce_key = keys
    nonce = hashlib.blake2b(plaintext, key=nonce_key, digest_size=nacl.secret.SecretBox.NONCE_SIZE).digest()
    return header(generation) + bytes(sealer.encrypt(plaintext, nonce))


def seal_record(content_key: bytes, plaintext: bytes, generation: int = FIRST) -> bytes:
    """``plaintext`` sealed under ``generation``'s key ``content_key`` (_seal)."""
    return _seal(_record_keys(content_key, generation), generation, plaintext)


@dataclass(frozen=True)
class KeyRing:
    """The content key's generations a device holds, by number (the first always among them).
    Its repr shows the numbers, never a key."""

    keys: Mapping[int, bytes] = field(repr=False)
    _boxes: dict[int, tuple[nacl.secret.SecretBox, bytes]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if FIRST not in self.keys or any(len(k) != KEY_BYTES for k in self.keys.values()):
            raise ValueError("a key ring holds the first generation, and keys of 32 bytes")
        object.__setattr__(self, "keys", dict(self.keys))

    def __repr__(self) -> str:
        return f"KeyRing(generations={sorted(self.keys)})"

    @property
    def first(self) -> bytes:
        """The first generation's key: it keys the hub's names of rows and devices."""
        return self.keys[FIRST]

    @property
    def newest(self) -> int:
        return max(self.keys)

    def add(self, generation: int, key: bytes) -> KeyRing:
        return KeyRing({**self.keys, generation: key})

    def _box(self, generation: int) -> tuple[nacl.secret.SecretBox, bytes]:
        found = self._boxes.get(generation)
        if found is None:
            found = self._boxes[generation] = _record_keys(self.keys[generation], generation)
        return found

    def seal(self, plaintext: bytes, generation: int | None = None) -> bytes:
        """Sealed under ``generation`` (a record sent again: the one it was first sent under), else
        the newest generation this device holds; the same bytes each time (_seal)."""
        generation = self.newest if generation is None else generation
        return _seal(self._box(generation), generation, plaintext)

    def open(self, box: bytes, name: str) -> bytes:
        """The record's plaintext. A box sealed under a generation this device does not hold, or
        changed on the hub (one byte, or made without the key), is refused naming the record."""
        generation = generation_of(box)
        if generation not in self.keys:
            raise VerificationError(
                f"hub record {name} is sealed under content key generation {generation}, which this "
                "device does not hold",
                "Nothing from this pull was applied. A device is given each new generation at its "
                "next sync (after its housekeeper key changed: once another device has synced since), "
                "so sync again later; a revoked device is given none.",
                reason="hub_record_unknown_generation",
            )
        try:
            return self._box(generation)[0].decrypt(box[len(header(generation)) :])
        except (nacl.exceptions.CryptoError, ValueError, TypeError):
            raise VerificationError(
                f"hub record {name} does not open with the brain's content key: it was changed on the hub"
                " or not written by a device of this brain",
                "Nothing from this pull was applied. Check who can write to the hub's database.",
                reason="hub_record_unopenable",
            ) from None

    def to_text(self) -> str:
        """As the keystore holds it: {"generation": key} (JSON)."""
        return json.dumps({str(g): b64u_encode(k) for g, k in sorted(self.keys.items())}, sort_keys=True)

    @classmethod
    def from_text(cls, text: str) -> KeyRing:
        """From the keystore's item: the JSON of to_text, or (an aimos before generations) the first
        generation's key alone."""
        try:
            if not text.lstrip().startswith("{"):
                return cls({FIRST: b64u_decode(text.strip())})
            return cls({int(g): b64u_decode(k) for g, k in json.loads(text).items()})
        except (ValueError, TypeError, AttributeError, EncodingError):
            raise EncodingError(
                "the keystore's hub content key item is damaged",
                "Join the brain again in a new AIMOS_HOME (`aimos hub join URL`).",
            ) from None


# --- a generation's key, wrapped for one device --------------------------------------------------
def key_check(key: bytes) -> str:
    """The commitment to a generation's key the master signs (it tells nothing of the key)."""
    return derive(key, HUB_KEY_CHECK).hex()


def recipient_name(first_key: bytes, public_key_b64u: str) -> str:
    """The hub's name of a housekeeper key a generation is wrapped to (keyed, as device names)."""
    digest = hashlib.blake2b(
        public_key_b64u.encode("ascii"), key=derive(first_key, HUB_KEY_RECIPIENT), digest_size=16
    )
    return "k-" + digest.hexdigest()


def wrap_for(public_key_b64u: str, key: bytes) -> bytes:
    """``key`` sealed to a housekeeper's key (its Ed25519 public key, as an epoch row holds it)."""
    verify_key = nacl.signing.VerifyKey(raw_from_spki(b64u_decode(public_key_b64u)))
    return bytes(nacl.public.SealedBox(verify_key.to_curve25519_public_key()).encrypt(key))


def unwrap_with(seed: bytes, wrapped: bytes) -> bytes | None:
    """What a wrap made by wrap_for holds, opened with the housekeeper's seed; None when it does not
    open with it (made for another key, or changed)."""
    secret = nacl.signing.SigningKey(seed).to_curve25519_private_key()
    try:
        return bytes(nacl.public.SealedBox(secret).decrypt(wrapped))
    except (nacl.exceptions.CryptoError, ValueError, TypeError):
        return None


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
