"""`aimos passphrase change` and `aimos keystore move`: the steps in their order, and the
housekeeper-signed events that record them (after the master passphrase was checked).

Why a kill at any step is harmless is in ``aimos.identity.keymoves``. In short: a passphrase
change commits when the master item is replaced in one step, so exactly one passphrase opens
the master at every moment; a keystore move commits when the brain records the new keystore in
a sealed write transaction, before which the brain's items in the old keystore are untouched and
after which those in the new one are complete and checked. The signed event of a passphrase
change follows its commit (a kill between the two leaves the change without its event); that of
a move is in the commit's own transaction.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from aimos.actions.session import Brain, now
from aimos.crypto.ed25519 import KeyPair
from aimos.errors import AimosError, UsageError
from aimos.identity import keymoves
from aimos.identity.keystore import open_keystore, require_os_keychain
from aimos.identity.passphrase import check_new_passphrase
from aimos.ledger.events import append_event
from aimos.store.connection import write_transaction
from aimos.store.meta import brain_meta, record_keystore_kind
from aimos.vocabulary import KEYSTORE_KINDS, KEYSTORE_MOVED_OPERATION, MASTER_PASSPHRASE_CHANGED_OPERATION

PASSPHRASE_STEPS = ("staged", "switched", "cleaned")
MOVE_STEPS = ("copied", "switched", "removed")


def after_step(name: str) -> None:
    """Called after each step of a passphrase change or a keystore move (names above). A seam for
    the kill tests, which replace it in the `aimos` subprocess; it does nothing in normal use."""


@dataclass
class PassphraseChange:
    master_fingerprint: str
    keystore: str
    settled: str | None  # what an earlier, cut-off change had left: "discarded" or "completed"
    event_id: str | None
    record_problem: str | None = None  # the change is done, but its event could not be written

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class KeystoreMove:
    source: str
    target: str
    target_detail: str
    items: list[str]
    not_kept: list[str]  # epochs whose secret the old keystore no longer held (revoked, rotated away)
    recorded_as: str
    event_id: str
    left_behind: list[str] = field(default_factory=list)  # old items that could not be removed

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def change_passphrase(brain: Brain, old: str, new: str) -> PassphraseChange:
    """Re-seal the master under ``new``; ``old`` must open it. Nothing changes when it does not."""
    check_new_passphrase(new)
    if new == old:
        raise UsageError("the new passphrase is the current one", "Choose a different new passphrase.")
    keystore = brain.keystore
    with keymoves.key_lock(brain.meta["brain_id"]):
        settled = keymoves.settle_master(keystore)
        master = brain.master_with(old)
        sealed = keymoves.stage_master(keystore, master, new)
        after_step("staged")
        keymoves.switch_master(keystore, sealed)
        after_step("switched")
        keymoves.drop_staged(keystore)
        after_step("cleaned")
    result = PassphraseChange(master.fingerprint, keystore.kind, settled, None)
    try:
        with write_transaction(brain.conn):
            event = append_event(
                brain.conn,
                brain.housekeeper(),
                operation=MASTER_PASSPHRASE_CHANGED_OPERATION,
                company_id=brain.company_id,
                metadata={"master_fingerprint": master.fingerprint, "keystore": keystore.kind},
                now=now(),
            )
        result.event_id = str(event["event_id"])
    except AimosError as exc:
        result.record_problem = f"{exc.message} ({exc.hint})"
    return result


def check_move(brain: Brain, target_kind: str) -> None:
    """Refuse a move before anything is asked for: an unknown or the current keystore, or an OS
    keychain (the source or the target) that is locked or does not answer."""
    if target_kind not in KEYSTORE_KINDS:
        raise UsageError(f"unknown keystore {target_kind!r}", "Use --to os or --to file.")
    if target_kind == brain.keystore.kind:
        raise UsageError(
            f"this brain's keys are already in the {brain.keystore.describe()}", "Nothing to move."
        )
    if "os" in (brain.keystore.kind, target_kind):
        require_os_keychain()


def move_keystore(brain: Brain, master: KeyPair, target_kind: str) -> KeystoreMove:
    """Copy every item of the brain to the ``target_kind`` keystore and check it, switch the brain
    to it, then remove the old items. A failure before the switch removes what was written."""
    check_move(brain, target_kind)
    source = brain.keystore
    brain_id = brain.meta["brain_id"]
    target = open_keystore(target_kind, brain_id)
    with keymoves.key_lock(brain_id):
        keymoves.settle_master(source)
        items, missing = keymoves.brain_items(brain.conn, source)
        written: list[str] = []
        try:
            keymoves.copy_items(items, target, missing, written)
            after_step("copied")
            with write_transaction(brain.conn):
                recorded = record_keystore_kind(brain.conn, target_kind)
                event = append_event(
                    brain.conn,
                    brain.housekeeper(),
                    operation=KEYSTORE_MOVED_OPERATION,
                    company_id=brain.company_id,
                    metadata={
                        "from": source.kind,
                        "to": target_kind,
                        "items": len(items),
                        "brain_meta_key": recorded,
                        "master_fingerprint": master.fingerprint,
                    },
                    now=now(),
                )
        except BaseException as exc:
            _roll_back(brain, target, written, exc)
            raise
        brain.meta = brain_meta(brain.conn)
        brain.keystore = target
        after_step("switched")
        left = keymoves.remove_items(source, list(items))
        after_step("removed")
    return KeystoreMove(
        source.kind,
        target_kind,
        target.describe(),
        list(items),
        missing,
        recorded,
        str(event["event_id"]),
        left,
    )


def _roll_back(brain: Brain, target: Any, written: list[str], exc: BaseException) -> None:
    """Remove what the move wrote to the target, unless the brain already records the target (a
    failure after the commit): then the copies are the brain's keys and stay."""
    try:
        switched = brain_meta(brain.conn)["keystore"] == target.kind
    except Exception:  # cannot tell: keeping copies is safe, removing them might not be
        switched = True
    if switched:
        return
    problems = keymoves.remove_items(target, written)
    if isinstance(exc, AimosError):
        exc.message += "; nothing was moved, the brain keeps its keystore"
        if problems:
            exc.message += f" (copies not removed from the {target.kind} keystore: {', '.join(problems)})"
