"""Agent lifecycle over the brain: enrol (epoch + grant), rotate, revoke, list.

Each operation is one write transaction; a keystore item written for a transaction that
then fails is removed again, so nothing is left half-done.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from aimos.crypto.ed25519 import KeyPair
from aimos.crypto.encoding import iso_ms
from aimos.errors import KeychainError, UsageError
from aimos.identity.epochs import DAY, enrol_epoch, epochs, latest_epoch, load_signer, revoke_epoch
from aimos.identity.grants import current_grant, issue_grant
from aimos.identity.keystore import Keystore
from aimos.identity.signer import Signer, epoch_state, key_item_name
from aimos.identity.validators import check_agent_id
from aimos.store.connection import Connection, write_transaction
from aimos.store.meta import brain_meta
from aimos.vocabulary import (
    DEFAULT_GRANT_CLEARANCE,
    DEFAULT_GRANT_DATA_CLASS,
    DEFAULT_VALIDITY_DAYS,
    EXPIRY_WARNING_DAYS,
    HOUSEKEEPER,
    MAX_VALIDITY_DAYS,
    ROLE_AGENT,
)


def _sealer(conn: Connection, keystore: Keystore) -> Callable[[], Signer]:
    """The housekeeper, loaded from the keystore when the write has rows to seal."""
    return lambda: load_signer(conn, keystore, HOUSEKEEPER, int(time.time()))


# the reasons the master's grant records
ENROLMENT = "aimos agent enrolment"
ROTATION = "aimos agent rotation"
HOUSEKEEPER_ROTATION = "aimos housekeeper key rotation"


@dataclass(frozen=True)
class GrantTerms:
    """How long an agent's epoch lives and what the master's grant lets it do."""

    validity_days: int = DEFAULT_VALIDITY_DAYS
    clearance: int = DEFAULT_GRANT_CLEARANCE
    data_class: str = DEFAULT_GRANT_DATA_CLASS
    write_allowed: bool = True

    @classmethod
    def of(cls, grant: dict[str, Any] | None, validity_days: int) -> GrantTerms:
        """The terms of an existing grant (the defaults when there is none), for a new epoch."""
        if grant is None:
            return cls(validity_days)
        ceilings = grant["clearance_ceiling"], grant["data_class_ceiling"], bool(grant["write_allowed"])
        return cls(validity_days, *ceilings)


def _enrol_with_grant(
    conn: Connection,
    master: KeyPair,
    keystore: Keystore,
    agent_id: str,
    now: int,
    terms: GrantTerms,
    reason: str,
) -> tuple[Signer, dict[str, Any]]:
    meta = brain_meta(conn)
    signer = enrol_epoch(
        conn,
        master,
        keystore,
        agent_id=agent_id,
        role="agent",
        now=now,
        device_fp=meta["device_fp"],
        validity_days=terms.validity_days,
    )
    return signer, _grant_new_epoch(conn, master, keystore, signer, terms, reason, now)


def _grant_new_epoch(
    conn: Connection,
    master: KeyPair,
    keystore: Keystore,
    signer: Signer,
    terms: GrantTerms,
    reason: str,
    now: int,
) -> dict[str, Any]:
    """The master's grant for an epoch just enrolled; its key leaves the keystore if that fails."""
    try:
        return issue_grant(
            conn,
            master,
            company_id=brain_meta(conn)["company_id"],
            agent_id=signer.agent_id,
            valid_from=signer.valid_from,
            clearance_ceiling=terms.clearance,
            data_class_ceiling=terms.data_class,
            write_allowed=terms.write_allowed,
            now=now,
            reason=reason,
        )
    except BaseException:
        keystore.delete(key_item_name(signer.agent_id, signer.valid_from))
        raise


@contextmanager
def _transaction_keeping_new_keys(
    conn: Connection, keystore: Keystore, sealer: Callable[[], Signer] | None = None
) -> Iterator[list[Signer]]:
    """A write transaction (sealed by ``sealer``, default: the housekeeper); the keys of signers
    appended to the yielded list are removed from the keystore again if it does not commit."""
    created: list[Signer] = []
    try:
        with write_transaction(conn, sealer or _sealer(conn, keystore)):
            yield created
    except BaseException:
        for s in created:
            keystore.delete(key_item_name(s.agent_id, s.valid_from))
        raise


def enroll_agent(
    conn: Connection,
    master: KeyPair,
    keystore: Keystore,
    *,
    agent_id: str,
    now: int,
    validity_days: int = DEFAULT_VALIDITY_DAYS,
    clearance: int = DEFAULT_GRANT_CLEARANCE,
    data_class: str = DEFAULT_GRANT_DATA_CLASS,
    write_allowed: bool = True,
) -> tuple[Signer, dict[str, Any]]:
    check_agent_id(agent_id)
    if epochs(conn, agent_id):
        raise UsageError(
            f"agent {agent_id!r} is already enrolled",
            f"Use `aimos agent rotate {agent_id}` for a new epoch.",
        )
    with _transaction_keeping_new_keys(conn, keystore) as created:
        terms = GrantTerms(validity_days, clearance, data_class, write_allowed)
        signer, grant = _enrol_with_grant(conn, master, keystore, agent_id, now, terms, ENROLMENT)
        created.append(signer)
    return signer, grant


def rotate_agent(
    conn: Connection,
    master: KeyPair,
    keystore: Keystore,
    *,
    agent_id: str,
    now: int,
    validity_days: int | None = None,
) -> tuple[Signer, dict[str, Any], bool]:
    """New epoch with the previous grant's ceilings; the previous epoch is revoked if still live.

    Returns (new signer, new grant, whether the previous epoch was revoked now).
    """
    previous = latest_epoch(conn, agent_id)
    old_grant = current_grant(conn, agent_id, previous["valid_from"])
    days = validity_days or max(1, (previous["valid_until"] - previous["valid_from"]) // DAY)
    revoked_now = False
    with _transaction_keeping_new_keys(conn, keystore) as created:
        if previous["revoked_at"] is None and epoch_state(previous, now) != "expired":
            revoke_epoch(
                conn,
                master,
                company_id=brain_meta(conn)["company_id"],
                agent_id=agent_id,
                valid_from=previous["valid_from"],
                reason="rotated",
                now=now,
            )
            revoked_now = True
        terms = GrantTerms.of(old_grant, min(days, MAX_VALIDITY_DAYS))
        signer, grant = _enrol_with_grant(conn, master, keystore, agent_id, now, terms, ROTATION)
        created.append(signer)
    if revoked_now:
        _forget_key(keystore, previous["key_ref"])
    return signer, grant, revoked_now


def _forget_key(keystore: Keystore, item: str) -> None:
    """Remove a revoked epoch's secret. The revocation is already committed, so a keystore that
    refuses only leaves a dead key behind: say so, do not fail the command."""
    try:
        keystore.delete(item)
    except KeychainError as exc:
        import sys

        from aimos.terminal import visible

        sys.stderr.write(
            visible(f"warning: the revoked key was not removed from the keystore: {exc.message}\n")
        )
        if exc.hint:
            sys.stderr.write(visible(f"hint: {exc.hint}\n"))


@dataclass(frozen=True)
class HousekeeperRotation:
    """A new housekeeper epoch: its signer, its grant (None when the previous epoch had none),
    whether the previous epoch was revoked by this rotation (else it already was) and the
    previous epoch's row."""

    signer: Signer
    grant: dict[str, Any] | None
    revoked_now: bool
    previous: dict[str, Any]


def rotate_housekeeper_in_transaction(
    conn: Connection, master: KeyPair, keystore: Keystore, *, now: int
) -> HousekeeperRotation:
    """Inside a write transaction the caller seals with the new signer (so the previous epoch
    signs nothing after its revocation, and a brain whose housekeeper is already revoked needs
    nothing of the revoked key): the master revokes the previous epoch unless it already is,
    certifies a new key and grants it the previous epoch's ceilings. The caller removes the new
    key from the keystore if the transaction does not commit."""
    previous = latest_epoch(conn, HOUSEKEEPER)
    old_grant = current_grant(conn, HOUSEKEEPER, previous["valid_from"])
    meta = brain_meta(conn)
    revoked_now = previous["revoked_at"] is None
    if revoked_now:
        revoke_epoch(
            conn,
            master,
            company_id=meta["company_id"],
            agent_id=HOUSEKEEPER,
            valid_from=previous["valid_from"],
            reason="rotated",
            now=now,
        )
    signer = enrol_epoch(
        conn, master, keystore, agent_id=HOUSEKEEPER, role=HOUSEKEEPER, now=now, device_fp=meta["device_fp"]
    )
    grant = None
    if old_grant is not None:  # validity does not apply: a housekeeper epoch is perpetual
        terms = GrantTerms.of(old_grant, DEFAULT_VALIDITY_DAYS)
        grant = _grant_new_epoch(conn, master, keystore, signer, terms, HOUSEKEEPER_ROTATION, now)
    return HousekeeperRotation(signer, grant, revoked_now, previous)


def rotate_housekeeper(
    conn: Connection, master: KeyPair, keystore: Keystore, *, now: int
) -> HousekeeperRotation:
    """`aimos housekeeper rotate-key`: a new housekeeper epoch for a key that may have leaked, in
    one write sealed by the new key; the previous epoch is revoked (an aimos before this command
    let `aimos agent revoke` revoke it, which stopped every write: this brings such a brain
    back). Evidence the previous epoch signed before stays verifiable under its certificate."""
    done: list[HousekeeperRotation] = []
    with _transaction_keeping_new_keys(conn, keystore, lambda: done[0].signer) as created:
        rotation = rotate_housekeeper_in_transaction(conn, master, keystore, now=now)
        done.append(rotation)
        created.append(rotation.signer)
    _forget_key(keystore, rotation.previous["key_ref"])  # revoked now or before: it has no use
    return rotation


def check_revocable(agent_id: str) -> None:
    """The housekeeper is never revoked on its own: every write is sealed by it, so revoking it
    without a successor stops the brain. Its key is replaced with `aimos housekeeper rotate-key`."""
    if agent_id == HOUSEKEEPER:
        raise UsageError(
            "the housekeeper cannot be revoked: every write of the brain is sealed with its key",
            "If its key may have leaked, give it a new one: `aimos housekeeper rotate-key` "
            "(the old key is revoked in the same step).",
        )


def revoke_agent(
    conn: Connection, master: KeyPair, keystore: Keystore, *, agent_id: str, reason: str, now: int
) -> dict[str, Any]:
    """Revoke the agent's newest epoch; its secret is then removed from the keystore."""
    check_revocable(agent_id)
    epoch = latest_epoch(conn, agent_id)
    with write_transaction(conn, _sealer(conn, keystore)):
        record = revoke_epoch(
            conn,
            master,
            company_id=brain_meta(conn)["company_id"],
            agent_id=agent_id,
            valid_from=epoch["valid_from"],
            reason=reason,
            now=now,
        )
    _forget_key(keystore, epoch["key_ref"])
    return record


def agent_listing(conn: Connection, now: int) -> list[dict[str, Any]]:
    out = []
    for e in epochs(conn):
        grant = current_grant(conn, e["agent_id"], e["valid_from"]) if e["role"] == "agent" else None
        out.append(
            {
                "agent_id": e["agent_id"],
                "role": e["role"],
                "valid_from": iso_ms(e["valid_from"]),
                "valid_until": iso_ms(e["valid_until"]),
                "state": epoch_state(e, now),
                "revoked_at": iso_ms(e["revoked_at"]) if e["revoked_at"] is not None else None,
                "key_fingerprint": e["key_fingerprint"],
                "cert_fingerprint": e["cert_fingerprint"],
                "grant": None
                if grant is None
                else {
                    "clearance_ceiling": grant["clearance_ceiling"],
                    "data_class_ceiling": grant["data_class_ceiling"],
                    "write_allowed": bool(grant["write_allowed"]),
                },
            }
        )
    return out


# --- expiry ---------------------------------------------------------------------------------
def due_for_rotation(valid_until: int, now: int, within_days: int = EXPIRY_WARNING_DAYS) -> bool:
    """Whether an epoch ending at ``valid_until`` ends within ``within_days`` days of ``now`` (or
    has ended): the one test behind every expiry warning and `aimos agent rotate --expiring`."""
    return valid_until - now <= within_days * DAY


def _in_words(seconds: int) -> str:
    if seconds >= DAY:
        days = round(seconds / DAY)
        return f"in {days} day{'s' if days != 1 else ''}"
    if seconds >= 3600:
        return f"in {seconds // 3600} h"
    return "within the hour"


@dataclass(frozen=True)
class DueEpoch:
    """An agent whose current epoch ends soon (or has ended): it needs a rotation."""

    agent_id: str
    valid_until: int

    def ended(self, now: int) -> bool:
        return self.valid_until < now

    def ends(self, now: int) -> str:
        """The agent and when its epoch ends: "agent cli's epoch expires in 6 days (...)"."""
        left = self.valid_until - now
        until = iso_ms(self.valid_until)
        when = f"expired at {until}" if left < 0 else f"expires {_in_words(left)} ({until})"
        return f"agent {self.agent_id}'s epoch {when}"

    def warning(self, now: int) -> str:
        """The one line every front end shows for it (CLI stderr, TUI status screen, MCP results):
        the agent, when its epoch ends, and the fix."""
        return (
            f"warning: {self.ends(now)}: "
            f"run `aimos agent rotate {self.agent_id}` or `aimos agent rotate --expiring`"
        )


def epochs_due(
    conn: Connection, now: int, within_days: int = EXPIRY_WARNING_DAYS, *, agent_id: str | None = None
) -> list[DueEpoch]:
    """Each agent (of all, or ``agent_id``) whose current epoch ends within ``within_days`` days
    of ``now`` or has ended, by agent id. The housekeeper's epoch does not end; an agent whose
    current epoch was revoked is not due (its owner stopped it on purpose)."""
    current: dict[str, dict[str, Any]] = {}
    for e in epochs(conn, agent_id):  # oldest first: the last one seen is the agent's current
        current[e["agent_id"]] = e
    return [
        DueEpoch(e["agent_id"], e["valid_until"])
        for e in current.values()
        if e["role"] == ROLE_AGENT
        and e["revoked_at"] is None
        and due_for_rotation(e["valid_until"], now, within_days)
    ]
