"""Identity epochs: each enrolled with a master-issued certificate (its start on this device's slot
of seconds), read back, its signer loaded from the keystore, and revoked by the master."""

from __future__ import annotations

import time
import uuid
from typing import Any, cast

from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json, canonical_text
from aimos.crypto.certs import PERPETUAL_UNTIL, issue_certificate
from aimos.crypto.ed25519 import KeyPair
from aimos.crypto.encoding import b64u_decode, b64u_encode, iso_ms
from aimos.crypto.messages import new_nonce, payload_message
from aimos.errors import (
    AgentNotFoundError,
    EpochExpiredError,
    EpochRevokedError,
    IdentityError,
    UsageError,
)
from aimos.identity.keystore import Keystore
from aimos.identity.signer import Signer, epoch_state, key_item_name, rotation_hint
from aimos.identity.validators import check_agent_id, check_validity_days
from aimos.store import meta
from aimos.store.connection import Connection
from aimos.store.queries import identity as q
from aimos.store.queries.identity import EpochRow, RevocationRow
from aimos.vocabulary import (
    AGENT_REVOCATION_SCHEMA,
    DEFAULT_VALIDITY_DAYS,
    HOUSEKEEPER,
    REVOKE_AGENT_IDENTITY_EVENT,
)

DAY = 86_400
# A device of a brain synced through a hub (aimos/hub) starts its epochs on seconds of its own
# class modulo DEVICE_SLOTS (brain_meta "device_slot": 0 for the device that put the brain on the
# hub, the next free one for each device that joins): an epoch is keyed by agent id and start
# second, and two devices enrolling one agent id in the same second while apart would otherwise
# make two epochs under one key. A new epoch starts on the newest second of its class not after
# now (at most DEVICE_SLOTS - 1 seconds before it), or, right after another epoch of the agent,
# on the next one.
DEVICE_SLOTS = 4
DEVICE_SLOT_META = "device_slot"
NOT_YET_VALID_WAIT_SECONDS = DEVICE_SLOTS  # an epoch that starts a few seconds from now: waited for


# --- epochs -------------------------------------------------------------------------------
def _next_valid_from(conn: Connection, agent_id: str, now: int) -> int:
    last = q.newest_valid_from(conn, agent_id)
    slot = meta.meta_value(conn, DEVICE_SLOT_META)
    if slot is None:  # a brain on one device
        return now if last is None or last < now else last + 1
    start = now - (now - int(slot)) % DEVICE_SLOTS
    while last is not None and start <= last:
        start += DEVICE_SLOTS
    return start


def enrol_epoch(
    conn: Connection,
    master: KeyPair,
    keystore: Keystore,
    *,
    agent_id: str,
    role: str,
    now: int,
    device_fp: str,
    validity_days: int = DEFAULT_VALIDITY_DAYS,
) -> Signer:
    """Generate a key, store its secret, issue its certificate and record the epoch."""
    if role == "agent":
        check_agent_id(agent_id)
        check_validity_days(validity_days)
    valid_from = _next_valid_from(conn, agent_id, now)
    valid_until = PERPETUAL_UNTIL if role == HOUSEKEEPER else valid_from + validity_days * DAY
    key = KeyPair.generate()
    cert = issue_certificate(
        master,
        agent_id=agent_id,
        pubkey=key.public_b64u,
        device_fp=device_fp,
        valid_from=valid_from,
        valid_until=valid_until,
        issued_at=now,
    )
    item = key_item_name(agent_id, valid_from)
    keystore.put(item, b64u_encode(key.seed))
    tier = "T1"
    epoch: EpochRow = {
        "agent_id": agent_id,
        "valid_from": valid_from,
        "valid_until": valid_until,
        "role": role,
        "identity_tier": tier,
        "public_key_b64u": key.public_b64u,
        "key_fingerprint": key.fingerprint,
        "certificate": cert.text,
        "cert_fingerprint": cert.fingerprint,
        "device_fp": device_fp,
        "key_ref": item,
        "created_at": now,
    }
    q.insert_epoch(conn, epoch)
    return Signer(agent_id, valid_from, valid_until, key, cert.text, cert.fingerprint, tier)


def epochs(conn: Connection, agent_id: str | None = None) -> list[dict[str, Any]]:
    return cast("list[dict[str, Any]]", q.epochs_of(conn, agent_id))


def latest_epoch(conn: Connection, agent_id: str) -> dict[str, Any]:
    """The agent's newest epoch on this device: a brain synced through a hub holds every device's
    epochs (each device's agents and housekeeper sign with keys only that device holds), and a
    device signs with its own alone."""
    found = epochs(conn, agent_id)
    if not found:
        raise AgentNotFoundError(f"agent {agent_id!r} is not enrolled in this brain")
    device = meta.brain_meta(conn).get("device_fp")
    mine = [e for e in found if e["device_fp"] == device]
    if not mine:
        raise AgentNotFoundError(
            f"agent {agent_id!r} is enrolled on another device of this brain, not on this one",
            f"Enrol it on this device: `aimos agent enrol {agent_id}`.",
        )
    return mine[-1]


def epoch_at(conn: Connection, agent_id: str, valid_from: int) -> dict[str, Any] | None:
    """The identity epoch row of ``agent_id`` starting at ``valid_from``, if there is one."""
    return cast("dict[str, Any] | None", q.epoch_row(conn, agent_id, valid_from))


def load_signer(conn: Connection, keystore: Keystore, agent_id: str, now: int) -> Signer:
    """The agent's newest epoch with its key; refuses a revoked or expired one with the fix."""
    epoch = latest_epoch(conn, agent_id)
    state = epoch_state(epoch, now)
    if state == "revoked":
        who = "the housekeeper" if agent_id == HOUSEKEEPER else f"agent {agent_id}"
        raise EpochRevokedError(
            f"{who}'s current epoch (valid from {iso_ms(epoch['valid_from'])}) "
            f"was revoked at {iso_ms(epoch['revoked_at'])}",
            rotation_hint(agent_id),
        )
    if state == "expired":
        raise EpochExpiredError(
            f"agent {agent_id}'s current epoch expired at {iso_ms(epoch['valid_until'])}",
            f"Run `aimos agent rotate {agent_id}` (or `aimos agent rotate --expiring`) to enrol a new epoch.",
        )
    if state == "not_yet_valid":
        # Epochs are keyed by whole seconds, so a rotation in the same second as the previous
        # epoch's start begins one second later: wait for it rather than sign outside it.
        wait = epoch["valid_from"] - time.time()
        if wait > NOT_YET_VALID_WAIT_SECONDS:
            raise EpochExpiredError(
                f"agent {agent_id}'s current epoch is not valid before {iso_ms(epoch['valid_from'])}",
                "Check the system clock.",
            )
        if wait > 0:
            time.sleep(wait)
    seed = b64u_decode(keystore.get(epoch["key_ref"]))
    key = KeyPair(seed)
    if key.public_b64u != epoch["public_key_b64u"]:
        raise IdentityError(
            f"the keystore's key for {agent_id!r} does not match its enrolled epoch",
            "The keystore belongs to another brain: check AIMOS_HOME.",
        )
    return Signer(
        agent_id,
        epoch["valid_from"],
        epoch["valid_until"],
        key,
        epoch["certificate"],
        epoch["cert_fingerprint"],
        epoch["identity_tier"],
    )


# --- revocation ---------------------------------------------------------------------------
def revoke_epoch(
    conn: Connection,
    master: KeyPair,
    *,
    company_id: str,
    agent_id: str,
    valid_from: int,
    reason: str,
    now: int,
) -> dict[str, Any]:
    """A master-signed revocation (`hom.aimos.agent-revocation/v1`) of one epoch."""
    certificate = q.epoch_certificate(conn, agent_id, valid_from)
    if certificate is None:
        raise AgentNotFoundError(f"agent {agent_id!r} has no epoch valid from {valid_from}")
    if q.is_revoked(conn, agent_id, valid_from):
        raise UsageError(
            f"agent {agent_id}'s epoch valid from {iso_ms(valid_from)} is already revoked",
            f"Run `aimos agent rotate {agent_id}` for a new epoch.",
        )
    # Timestamps are whole seconds: a request this epoch signed in this very second was accepted
    # before the revocation existed, and every verifier reads "revoked_at <= ts_signed" as signed
    # after it. The revocation therefore falls after the newest thing the epoch signed; requests
    # stop at once all the same, because from now on any recorded revocation refuses them.
    newest = q.newest_signed_by(conn, agent_id, valid_from)
    if newest is not None:
        now = max(now, newest + 1)
    prior = commitments.revocation_prior_identity_hash(agent_id, valid_from, certificate)
    body = {
        "schema": AGENT_REVOCATION_SCHEMA,
        "event_type": REVOKE_AGENT_IDENTITY_EVENT,
        "company_id": company_id,
        "agent_id": agent_id,
        "agent_valid_from": iso_ms(valid_from),
        "target_cert_hash": commitments.sha256(certificate.encode("ascii")).hex(),
        "revoked_at": iso_ms(now),
        "reason": reason,
        "master_fingerprint": master.fingerprint,
        "ts_signed": now,
    }
    nonce = new_nonce()
    signature = master.sign(payload_message(body, nonce, now))
    content = commitments.sha256(canonical_json(body))
    mutation = commitments.agent_revocation_mutation_hash(prior, content, signature)
    record: RevocationRow = {
        "revocation_id": str(uuid.uuid4()),
        "company_id": company_id,
        "agent_id": agent_id,
        "agent_valid_from": valid_from,
        "revoked_at": now,
        "reason": reason,
        "master_fingerprint": master.fingerprint,
        "signed_body": canonical_text(body),
        "content_hash": content.hex(),
        "nonce": nonce,
        "ts_signed": now,
        "signature_b64u": b64u_encode(signature),
        "prior_identity_hash": prior.hex(),
        "mutation_hash": mutation.hex(),
    }
    q.insert_revocation(conn, record)
    return cast("dict[str, Any]", record)


def revocation_at(conn: Connection, agent_id: str, valid_from: int) -> int | None:
    return q.revoked_at(conn, agent_id, valid_from)
