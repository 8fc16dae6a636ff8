"""Keystore items moved safely: the master re-sealed under a new passphrase, and a brain's keys
copied from one keystore to the other. The signed records and the order of steps are in
``aimos.actions.keys``; here are the keystore operations and the rules that make a kill harmless.

Passphrase change. The master item is the commit point. The master is sealed under the new
passphrase into a second item (``master.next``), read back and unsealed with the new passphrase;
only then is the master item replaced in one step (the file keystore renames a temporary file over
it; the Secret Service replaces an item in one call), and the second item removed. A master unlock
reads the master item only, so at every moment exactly one passphrase opens the master: the old
one until the replace, the new one after it. A keychain whose replace is delete-then-add (macOS)
has a moment with no master item: then the staged item, fully written and checked before, is the
master (``identity.epochs.sealed_master``). ``settle_master`` tidies a change that was cut off:
a staged item beside a master item is discarded, a staged item alone becomes the master item.

Keystore move. Every item is copied into the other keystore and read back; a copy that fails
removes what this move wrote there and leaves the old keystore as it was. The brain switches
keystores in one sealed write transaction (a new ``keystore.N`` row of brain_meta), and only then
are the old items removed.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from aimos import paths
from aimos.crypto.ed25519 import KeyPair
from aimos.errors import BusyError, KeychainError
from aimos.identity.anchors import KEPT_ANCHOR_ITEM
from aimos.identity.devices import HUB_ITEMS
from aimos.identity.keystore import FileKeystore, Keystore
from aimos.identity.master import MASTER_ITEM, MASTER_PENDING_ITEM
from aimos.identity.passphrase import seal, unseal
from aimos.store.connection import Connection
from aimos.store.queries.identity import key_refs


def lock_path(brain_id: str) -> Path:
    return paths.state_dir() / f"keys-{brain_id}.lock"


@contextlib.contextmanager
def key_lock(brain_id: str) -> Iterator[None]:
    """One passphrase change or keystore move at a time per brain (an exclusive lock in the state
    dir, aimos.locks: released when the process ends, even by a kill)."""
    from aimos.locks import try_lock

    paths.ensure_private_dir(paths.state_dir())
    fd = os.open(lock_path(brain_id), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if not try_lock(fd):
            raise BusyError(
                "another passphrase change or keystore move is running for this brain",
                "Wait for it to finish, then try again.",
            )
        yield
    finally:
        os.close(fd)


# --- the master's passphrase ----------------------------------------------------------------
def settle_master(keystore: Keystore) -> str | None:
    """Finish what a cut-off passphrase change left: None when nothing was left, "discarded" when a
    staged item sat beside the master item (the change never switched), "completed" when only
    the staged item was left (the switch had begun in a delete-then-add keychain)."""
    pending = keystore.find(MASTER_PENDING_ITEM)
    if pending is None:
        return None
    if keystore.find(MASTER_ITEM) is not None:
        keystore.delete(MASTER_PENDING_ITEM)
        return "discarded"
    keystore.put(MASTER_ITEM, pending)
    if keystore.find(MASTER_ITEM) != pending:
        raise KeychainError(
            "the keystore did not return the master key as written",
            f"The master is still in the keystore item {MASTER_PENDING_ITEM!r}; try again.",
        )
    keystore.delete(MASTER_PENDING_ITEM)
    return "completed"


def stage_master(keystore: Keystore, master: KeyPair, new_passphrase: str) -> str:
    """Seal the master under the new passphrase into the staged item and check it: read back, it
    unseals with the new passphrase to this master. Returns the sealed text."""
    sealed = seal(master.seed, new_passphrase)
    keystore.replace(MASTER_PENDING_ITEM, sealed)
    back = keystore.find(MASTER_PENDING_ITEM)
    if back != sealed or KeyPair(unseal(back, new_passphrase)).fingerprint != master.fingerprint:
        keystore.delete(MASTER_PENDING_ITEM)
        raise KeychainError(
            "the keystore did not return the newly sealed master key as written",
            "Nothing was changed: the old passphrase still opens the master. Try again.",
        )
    return sealed


def switch_master(keystore: Keystore, sealed: str) -> None:
    """The commit point: the master item replaced by the staged one in one step, then read back."""
    keystore.replace(MASTER_ITEM, sealed)
    if keystore.find(MASTER_ITEM) != sealed:
        raise KeychainError(
            "the keystore did not return the master key as written",
            f"The master sealed with the new passphrase is kept in the item {MASTER_PENDING_ITEM!r}; "
            "check the keystore, then run `aimos passphrase change` again.",
        )


def drop_staged(keystore: Keystore) -> None:
    keystore.delete(MASTER_PENDING_ITEM)


# --- moving every item ------------------------------------------------------------------------
def brain_items(conn: Connection, keystore: Keystore) -> tuple[dict[str, str], list[str]]:
    """The brain's items the keystore holds (the master's, then each identity epoch's, by name ->
    secret, then the kept freshness anchor and a sync hub's URL and content key when there are),
    and the epochs' item names it does not hold (removed at revocation or rotation, or another
    device's)."""
    found = {MASTER_ITEM: keystore.get(MASTER_ITEM)}
    missing: list[str] = []
    for name in key_refs(conn):
        secret = keystore.find(name)
        if secret is None:
            missing.append(name)
        else:
            found[name] = secret
    for name in (KEPT_ANCHOR_ITEM, *HUB_ITEMS):  # the freshness anchor's copy; a hub's URL and key
        held = keystore.find(name)
        if held is not None:
            found[name] = held
    return found, missing


def copy_items(items: dict[str, str], target: Keystore, stale: list[str], written: list[str]) -> None:
    """Write every item into ``target`` and read each back; ``written`` collects the names written
    (so the caller can remove them again). Items of the brain that an earlier, interrupted move
    left in ``target`` are overwritten, or removed when the brain no longer holds them (``stale``)."""
    for name in (*stale, MASTER_PENDING_ITEM):
        target.delete(name)
    for name, secret in items.items():
        target.replace(name, secret)
        written.append(name)
        if target.find(name) != secret:
            raise KeychainError(
                f"the {target.kind} keystore returned the item {name!r} differently than it was written",
                "Nothing was moved: the brain keeps its keystore. Check the target keystore and try again.",
            )


def remove_items(keystore: Keystore, names: list[str]) -> list[str]:
    """Remove the named items; returns what could not be removed (names and why, no secret)."""
    problems = []
    for name in reversed(names):
        try:
            keystore.delete(name)
        except KeychainError as exc:
            problems.append(f"{name} ({exc.message})")
    if isinstance(keystore, FileKeystore):
        folder: Path = keystore.directory
        with contextlib.suppress(OSError):  # only an empty folder goes
            folder.rmdir()
    return problems
