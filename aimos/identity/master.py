"""The master identity: its key made and sealed in the keystore under the passphrase, its row,
and the key unlocked (checked against the row) for what only the master signs."""

from __future__ import annotations

import weakref
from typing import Any, cast

from aimos.crypto.ed25519 import KeyPair
from aimos.errors import (
    EncodingError,
    IdentityError,
    PassphraseError,
)
from aimos.identity.keystore import Keystore
from aimos.store.connection import Connection
from aimos.store.queries import identity as q

MASTER_ITEM = "master"


# the master sealed under a new passphrase while `aimos passphrase change` runs (identity/keymoves.py)
MASTER_PENDING_ITEM = "master.next"


# --- master -------------------------------------------------------------------------------
def create_master(conn: Connection, keystore: Keystore, passphrase: str, now: int) -> KeyPair:
    """Create the master key, seal it into the keystore and record its public key."""
    from aimos.identity.passphrase import seal  # (a command that only reads the master never loads it)

    master = KeyPair.generate()
    keystore.put(MASTER_ITEM, seal(master.seed, passphrase))
    q.insert_master(conn, master.fingerprint, master.public_b64u, now)
    return master


# The master identity is written once per brain and never changes (append-only, one row), so a
# connection may remember it.
_MASTER_BY_CONNECTION: weakref.WeakKeyDictionary[Connection, dict[str, Any]] = weakref.WeakKeyDictionary()


def master_row(conn: Connection) -> dict[str, Any]:
    cached = _MASTER_BY_CONNECTION.get(conn)
    if cached is not None:
        return dict(cached)
    row = q.master_identity(conn)
    if row is None:
        raise IdentityError("this brain has no master identity", "Run `aimos install`.")
    _MASTER_BY_CONNECTION[conn] = cast("dict[str, Any]", row)
    return dict(row)


def sealed_master(keystore: Keystore) -> str:
    """The sealed master key: the master item, or, when a passphrase change was cut off inside a
    keychain whose replace is delete-then-add (macOS), the item it had staged (identity/keymoves)."""
    sealed = keystore.find(MASTER_ITEM)
    if sealed is None:
        sealed = keystore.find(MASTER_PENDING_ITEM)
    return keystore.get(MASTER_ITEM) if sealed is None else sealed


def unlock_master(conn: Connection, keystore: Keystore, passphrase: str) -> KeyPair:
    from aimos.identity.passphrase import unseal

    seed = unseal(sealed_master(keystore), passphrase)
    try:
        master = KeyPair(seed)
    except EncodingError:
        raise PassphraseError("the sealed master key is damaged") from None
    if master.fingerprint != master_row(conn)["fingerprint"]:
        raise PassphraseError(
            "the keystore's master key is not this brain's master",
            "The keystore belongs to another brain: check AIMOS_HOME.",
        )
    return master
