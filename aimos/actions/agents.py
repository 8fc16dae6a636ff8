"""Agents: enrol, rotate, revoke and list identity epochs, each change signed by the master
(a master-issued epoch certificate, a master-signed grant or revocation)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aimos.actions.session import Brain, now
from aimos.crypto.ed25519 import KeyPair
from aimos.errors import UsageError
from aimos.identity import agents
from aimos.identity.agents import DueEpoch
from aimos.identity.epochs import latest_epoch
from aimos.identity.signer import Signer
from aimos.identity.trusted import check_identities
from aimos.identity.validators import check_agent_id, check_clearance, check_validity_days, data_class_rank
from aimos.memory.gates import refuse_secret_fields
from aimos.vocabulary import (
    AGENT_CLEARANCE_MAX,
    CLI_AGENT,
    DEFAULT_GRANT_CLEARANCE,
    DEFAULT_GRANT_DATA_CLASS,
    DEFAULT_VALIDITY_DAYS,
    EXPIRY_WARNING_DAYS,
    HOUSEKEEPER,
    MAX_VALIDITY_DAYS,
)


@dataclass(frozen=True)
class Enrolment:
    """A new agent and the grant the master signs for it."""

    agent_id: str
    validity_days: int = DEFAULT_VALIDITY_DAYS
    clearance: int = DEFAULT_GRANT_CLEARANCE
    data_class: str = DEFAULT_GRANT_DATA_CLASS
    write_allowed: bool = True

    def checked(self) -> Enrolment:
        """Itself, when every field is valid; else a usage error naming the field and the fix
        (before any passphrase is asked for)."""
        refuse_secret_fields({"agent id": self.agent_id}, outcome="no agent was enrolled")
        check_agent_id(self.agent_id)
        check_validity_days(self.validity_days)
        check_clearance(self.clearance, ceiling=AGENT_CLEARANCE_MAX)
        data_class_rank(self.data_class)
        return self

    def plan(self) -> dict[str, Any]:
        """What an enrolment would do (a dry run prints it)."""
        return {
            "add_agent": self.agent_id,
            "validity_days": self.validity_days,
            "clearance": self.clearance,
            "data_class": self.data_class,
            "write_allowed": self.write_allowed,
        }


def enroll(brain: Brain, master: KeyPair, enrolment: Enrolment) -> tuple[Signer, dict[str, Any]]:
    """The agent's first epoch and its master-signed grant."""
    e = enrolment.checked()
    return agents.enroll_agent(
        brain.conn,
        master,
        brain.keystore,
        agent_id=e.agent_id,
        now=now(),
        validity_days=e.validity_days,
        clearance=e.clearance,
        data_class=e.data_class,
        write_allowed=e.write_allowed,
    )


def rotate(
    brain: Brain, master: KeyPair, agent_id: str, validity_days: int | None
) -> tuple[Signer, dict[str, Any], bool]:
    """A new key and epoch with the same grant ceilings; the previous epoch is revoked."""
    check_rotatable(agent_id)
    return agents.rotate_agent(
        brain.conn, master, brain.keystore, agent_id=agent_id, now=now(), validity_days=validity_days
    )


def check_rotatable(agent_id: str) -> None:
    """The housekeeper's key is rotated by its own command, not as an agent's."""
    if agent_id == HOUSEKEEPER:
        raise UsageError(
            "the housekeeper is not an agent: `aimos agent rotate` does not rotate its key",
            "Run `aimos housekeeper rotate-key` (master passphrase).",
        )


def require_housekeeper(brain: Brain) -> None:
    """Before the passphrase is asked for: the brain's identities are what its seals say (one
    edited outside aimos is refused) and it has a housekeeper."""
    check_identities(brain.conn)
    latest_epoch(brain.conn, HOUSEKEEPER)


def rotate_housekeeper(brain: Brain, master: KeyPair) -> agents.HousekeeperRotation:
    """A new housekeeper epoch, master-certified, for a key that may have leaked; the previous
    epoch is revoked (unless it already was)."""
    return agents.rotate_housekeeper(brain.conn, master, brain.keystore, now=now())


def due(brain: Brain, within_days: int = EXPIRY_WARNING_DAYS) -> list[DueEpoch]:
    """The agents whose current epoch ends within ``within_days`` days (or has ended): what
    `aimos agent rotate --expiring` rotates (never the housekeeper, never a revoked agent)."""
    if not 0 <= within_days <= MAX_VALIDITY_DAYS:
        raise UsageError(
            f"--within {within_days} is out of range", f"Use --within 0..{MAX_VALIDITY_DAYS} days."
        )
    return agents.epochs_due(brain.conn, now(), within_days)


def expiry_warnings(brain: Brain, agent_id: str | None = None) -> list[str]:
    """The expiry warning of each agent (or of ``agent_id``) due within EXPIRY_WARNING_DAYS."""
    at = now()
    return [d.warning(at) for d in agents.epochs_due(brain.conn, at, agent_id=agent_id)]


def require_enrolled(brain: Brain, agent_id: str) -> None:
    """A usage error for an agent with no epoch (before the passphrase is asked for)."""
    latest_epoch(brain.conn, agent_id)


def check_revocable(agent_id: str) -> None:
    """A usage error, before the passphrase is asked for, for the identities no front end
    revokes: the housekeeper (it seals every write; its key is rotated instead) and the person's
    own CLI agent (rotated when its key leaked, never left without a key)."""
    agents.check_revocable(agent_id)
    if agent_id == CLI_AGENT:
        raise UsageError(
            "agent cli cannot be revoked: it is your own agent, the one the aimos command signs with",
            "If its key may have leaked, give it a new one: `aimos agent rotate cli` "
            "(the old key is revoked in the same step).",
        )


def require_revocable(brain: Brain, agent_id: str, reason: str | None = None) -> None:
    """Before the passphrase is asked for: the agent may be revoked and has an epoch to revoke,
    and the reason (kept in the signed record) holds no secret."""
    check_revocable(agent_id)
    if reason is not None:
        _refuse_secret_reason(reason)
    require_enrolled(brain, agent_id)


def _refuse_secret_reason(reason: str) -> None:
    refuse_secret_fields({"reason": reason}, outcome="nothing was revoked")


def revoke(brain: Brain, master: KeyPair, agent_id: str, reason: str) -> dict[str, Any]:
    """A master-signed revocation of the agent's current epoch (never the housekeeper's or cli's)."""
    check_revocable(agent_id)
    _refuse_secret_reason(reason)  # kept in the signed record
    keystore = brain.keystore
    return agents.revoke_agent(brain.conn, master, keystore, agent_id=agent_id, reason=reason, now=now())


def listing(brain: Brain) -> list[dict[str, Any]]:
    """Every identity epoch with its state and grant, read through the verified identities (a
    deleted revocation must not list a revoked agent as active)."""
    check_identities(brain.conn)
    return agents.agent_listing(brain.conn, now())
