"""Ed25519 through PyNaCl, SPKI DER public keys and fingerprints."""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey

from aimos.crypto.encoding import b64u_decode, b64u_encode
from aimos.errors import EncodingError

SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")
SIGNATURE_BYTES = 64


def spki_der(raw_public_key: bytes) -> bytes:
    if len(raw_public_key) != 32:
        raise EncodingError("Ed25519 public keys are 32 bytes", reason="public_key_invalid")
    return SPKI_PREFIX + raw_public_key


def raw_from_spki(der: bytes) -> bytes:
    if len(der) != 44 or not der.startswith(SPKI_PREFIX):
        raise EncodingError("not an Ed25519 SPKI DER public key", reason="public_key_invalid")
    return der[len(SPKI_PREFIX) :]


def fingerprint_of_der(der: bytes) -> str:
    return hashlib.sha256(der).hexdigest()


def public_key_b64u(raw_public_key: bytes) -> str:
    return b64u_encode(spki_der(raw_public_key))


def fingerprint_of_b64u(public_key: str) -> str:
    return fingerprint_of_der(b64u_decode(public_key))


@dataclass(frozen=True)
class KeyPair:
    """An Ed25519 key held in memory. ``repr`` never shows the seed."""

    seed: bytes
    _signing_key: SigningKey = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.seed) != 32:
            raise EncodingError("Ed25519 seeds are 32 bytes", reason="seed_invalid")
        object.__setattr__(self, "_signing_key", SigningKey(self.seed))

    def __repr__(self) -> str:
        return f"KeyPair(fingerprint={self.fingerprint})"

    @classmethod
    def generate(cls) -> KeyPair:
        return cls(bytes(SigningKey.generate()))

    @property
    def _signing(self) -> SigningKey:
        return self._signing_key

    @property
    def raw_public(self) -> bytes:
        return bytes(self._signing.verify_key)

    @property
    def public_b64u(self) -> str:
        return public_key_b64u(self.raw_public)

    @property
    def fingerprint(self) -> str:
        return fingerprint_of_der(spki_der(self.raw_public))

    def sign(self, message: bytes) -> bytes:
        signature = bytes(self._signing.sign(message).signature)
        _VERIFIED.add(self.raw_public, message, signature)
        return signature


class _VerifiedSignatures:
    """A bounded in-process memory of (public key, message digest, signature) triples known to be
    valid: ones this process verified or made itself. Re-checking the same bytes (the writer's
    triggers re-verify what the save path just verified or signed; whole-brain verification
    meets each memory_saved event in the event chain and again in the memory's disclosure check)
    is then a lookup. Only a valid signature ever enters, and the key is the SHA-256 of the exact
    bytes, so the answer is unchanged. Oldest first out past the limit."""

    def __init__(self, limit: int = 4096) -> None:
        self._entries: OrderedDict[bytes, None] = OrderedDict()  # O(1) from either end
        self._lock = threading.Lock()  # start_in_parallel adds from several threads
        self.limit = limit

    @staticmethod
    def _key(raw_public: bytes, message: bytes, signature: bytes) -> bytes:
        return hashlib.sha256(raw_public + hashlib.sha256(message).digest() + signature).digest()

    def add(self, raw_public: bytes, message: bytes, signature: bytes) -> None:
        key = self._key(raw_public, message, signature)
        with self._lock:
            self._entries[key] = None
            self._entries.move_to_end(key)  # newest last
            while len(self._entries) > self.limit:
                self._entries.popitem(last=False)

    def keep_newest(self, n: int) -> None:
        with self._lock:
            while len(self._entries) > n:
                self._entries.popitem(last=False)

    def __contains__(self, triple: tuple[bytes, bytes, bytes]) -> bool:
        return self._key(*triple) in self._entries


_VERIFIED = _VerifiedSignatures()
_USUAL_LIMIT = _VERIFIED.limit
WHOLE_BRAIN_SIGNATURES = 400_000  # about 70 MB when full, for the length of one verification
_WIDENED: list[int] = []  # the limits of the remembering() blocks open now, in any thread


@contextmanager
def remembering(limit: int) -> Iterator[None]:
    """Remember up to ``limit`` valid signatures for the length of the block (a whole-brain
    verification meets most of them more than once), then shrink back. Blocks may nest or
    overlap across threads: the memory holds the largest limit of those still open."""
    with _VERIFIED._lock:
        _WIDENED.append(limit)
        _VERIFIED.limit = max([_USUAL_LIMIT, *_WIDENED])
    try:
        yield
    finally:
        with _VERIFIED._lock:
            _WIDENED.remove(limit)
            _VERIFIED.limit = max([_USUAL_LIMIT, *_WIDENED])
        _VERIFIED.keep_newest(_VERIFIED.limit)


def start_in_parallel(
    triples: Iterable[tuple[str, bytes, bytes]], workers: int | None = None
) -> Callable[[], int]:
    """Start checking many (public key b64u, message, signature) triples on ``workers`` threads
    (libsodium releases the GIL: two threads check about 1.9 times as many a second on two
    cores), each valid one remembered as verify() does, so the checks that own them are lookups.
    The caller goes on meanwhile (its Python work and libsodium's share the cores); the function
    returned waits for the threads and says how many were valid. Nothing else: a failure is
    found again, and named, by its own check."""
    items = list(triples)
    workers = max(1, min(workers or os.cpu_count() or 1, 4))
    chunks = [items[i::workers] for i in range(workers)]

    def run(chunk: list[tuple[str, bytes, bytes]]) -> int:
        return sum(verify(key, message, signature) for key, message, signature in chunk)

    if workers == 1 or len(items) < 64:
        done = run(items)
        return lambda: done
    from concurrent.futures import ThreadPoolExecutor  # here: a command that signs needs no pool

    pool = ThreadPoolExecutor(workers, thread_name_prefix="aimos-verify")
    futures = [pool.submit(run, chunk) for chunk in chunks]

    def wait() -> int:
        pool.shutdown(wait=True)  # every thread gone when this returns (a fork after sees none)
        return sum(future.result() for future in futures)

    return wait


def verify(public_key_b64u_or_raw: str | bytes, message: bytes, signature: bytes) -> bool:
    """True when ``signature`` is a valid Ed25519 signature of ``message``; never raises."""
    try:
        if isinstance(public_key_b64u_or_raw, str):
            raw = raw_from_spki(b64u_decode(public_key_b64u_or_raw))
        else:
            raw = public_key_b64u_or_raw
        if len(signature) != SIGNATURE_BYTES:
            return False
        if (raw, message, signature) in _VERIFIED:
            return True
        VerifyKey(raw).verify(message, signature)
        _VERIFIED.add(raw, message, signature)
        return True
    except (BadSignatureError, EncodingError, ValueError, TypeError):
        return False
    except Exception:  # nacl raises its own CryptoError subclasses on malformed points
        return False
