"""A signer: an identity epoch with its key in hand, as a writer signs with it; the key's
keystore item name, and an epoch's state at a moment (with the hint for a rotation)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aimos.crypto.ed25519 import KeyPair
from aimos.vocabulary import (
    HOUSEKEEPER,
)


@dataclass(frozen=True)
class Signer:
    """An identity epoch whose key is loaded: it can sign. ``repr`` hides the key."""

    agent_id: str
    valid_from: int
    valid_until: int
    key: KeyPair
    certificate: str
    cert_fingerprint: str
    identity_tier: str

    def __repr__(self) -> str:
        return f"Signer({self.agent_id}@{self.valid_from})"


def key_item_name(agent_id: str, valid_from: int) -> str:
    return f"{agent_id}@{valid_from}"


def epoch_state(epoch: dict[str, Any], now: int) -> str:
    if epoch["revoked_at"] is not None:  # revoked from the moment the revocation is recorded
        return "revoked"
    if now < epoch["valid_from"]:
        return "not_yet_valid"
    if now > epoch["valid_until"]:
        return "expired"
    return "active"


def rotation_hint(agent_id: str) -> str:
    """How to give this identity a new epoch: the housekeeper's own command, or the agent's."""
    if agent_id == HOUSEKEEPER:
        return "Run `aimos housekeeper rotate-key` to give the housekeeper a new key (master passphrase)."
    return f"Run `aimos agent rotate {agent_id}` to enrol a new epoch."
