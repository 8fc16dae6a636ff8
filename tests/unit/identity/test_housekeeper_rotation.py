"""The housekeeper's key rotation in-process, and what an attacker holding a rotated-out key (or
able to write the brain file) cannot do with it: seal a write, sign an event, or slip in a
housekeeper epoch the master did not certify. Real SQLite, the real writer and both verifiers."""

from __future__ import annotations

import time
from typing import Any

import pytest
from support.cells import the_row

from aimos.crypto.certs import issue_certificate, parse_certificate, verify_certificate
from aimos.crypto.ed25519 import KeyPair
from aimos.crypto.encoding import b64u_encode
from aimos.errors import EpochRevokedError, IntegrityError, KeychainError, SealError, UsageError
from aimos.identity import agents, epochs
from aimos.identity.grants import current_grant, issue_grant
from aimos.identity.master import master_row
from aimos.identity.signer import Signer, key_item_name
from aimos.identity.trusted import check_identities
from aimos.ledger.events import append_event
from aimos.store import seals
from aimos.store.connection import open_writer, rows, seal_with, write_transaction
from aimos.verify.brain.parity import verify_everything
from aimos.verify.brain.verifier import verify_event_chains
from aimos.vocabulary import HOUSEKEEPER


def _counts(conn: Any) -> dict[str, int]:
    names = ("identity_epochs", "agent_revocations", "recall_grants", "events", "brain_seals")
    return {n: int(the_row(conn, f"SELECT COUNT(*) AS n FROM {n}")["n"]) for n in names}


def _rotate(brain: Any, now: int) -> agents.HousekeeperRotation:
    rotation = agents.rotate_housekeeper(brain.conn, brain.master, brain.keystore, now=now)
    seal_with(brain.conn, rotation.signer)  # the fixture's connection seals with the new key from now on
    return rotation


def _grant_again(brain: Any, sealer: Any, now: int, conn: Any = None) -> None:
    """A legitimate master-signed write (cli's grant issued again), sealed by ``sealer``, on
    ``conn`` (default: the brain's own connection)."""
    conn = conn or brain.conn
    epoch = epochs.latest_epoch(conn, "cli")
    with write_transaction(conn, sealer):
        issue_grant(
            conn,
            brain.master,
            company_id="personal",
            agent_id="cli",
            valid_from=epoch["valid_from"],
            clearance_ceiling=10,
            data_class_ceiling="confidential",
            write_allowed=True,
            now=now,
        )


def _current(brain: Any) -> Any:
    """The housekeeper's current epoch with its key, loaded afresh."""
    return epochs.load_signer(brain.conn, brain.keystore, HOUSEKEEPER, int(time.time()) + 1)


def _forge_with_old_key(
    brain: Any, old: Any, monkeypatch: pytest.MonkeyPatch, *, then_new_key: bool = False
) -> None:
    """A write sealed by the rotated-out key, from another connection, with the writer's guards
    against it patched away (and, if asked, a newer write sealed by the new key over it)."""
    attacker = open_writer()
    try:
        with monkeypatch.context() as patched:
            patched.setattr(seals, "housekeeper_revocation_rowid", lambda _conn, _valid_from: None)
            _grant_again(brain, old, int(time.time()) + 1, attacker)
            if then_new_key:
                _grant_again(brain, _current(brain), int(time.time()) + 1, attacker)
    finally:
        attacker.close()


def _verified(brain: Any) -> dict[str, Any]:
    return verify_everything(brain.conn, brain.master.fingerprint)


def test_rotation_is_master_certified_revokes_the_previous_epoch_and_keeps_the_grant(brain: Any) -> None:
    old = brain.housekeeper
    old_grant = current_grant(brain.conn, HOUSEKEEPER, old.valid_from)
    rotation = _rotate(brain, int(time.time()) + 1)

    assert rotation.revoked_now and rotation.previous["valid_from"] == old.valid_from
    new = rotation.signer
    assert new.valid_from > old.valid_from and new.key.public_b64u != old.key.public_b64u
    cert = parse_certificate(new.certificate)
    verify_certificate(cert, master_row(brain.conn)["public_key_b64u"], at=new.valid_from)
    assert cert.body["agent_id"] == HOUSEKEEPER and cert.body["pubkey"] == new.key.public_b64u
    states = [e["revoked_at"] is None for e in epochs.epochs(brain.conn, HOUSEKEEPER)]
    assert states == [False, True]
    grant = rotation.grant
    assert grant is not None and old_grant is not None
    same = ("clearance_ceiling", "data_class_ceiling", "write_allowed")
    assert [grant[k] for k in same] == [old_grant[k] for k in same]
    with pytest.raises(KeychainError):  # the rotated-out key left the keystore
        brain.keystore.get(key_item_name(HOUSEKEEPER, old.valid_from))
    assert (
        epochs.load_signer(brain.conn, brain.keystore, HOUSEKEEPER, new.valid_from).valid_from
        == new.valid_from
    )
    check_identities(brain.conn)
    result = _verified(brain)
    assert result["ok"] and result["parity"], result


def test_revoking_the_housekeeper_is_refused_in_the_domain(brain: Any) -> None:
    before = _counts(brain.conn)
    with pytest.raises(UsageError, match="cannot be revoked") as refused:
        agents.revoke_agent(
            brain.conn, brain.master, brain.keystore, agent_id=HOUSEKEEPER, reason="x", now=int(time.time())
        )
    assert "aimos housekeeper rotate-key" in str(refused.value.hint)
    assert _counts(brain.conn) == before


def test_a_process_holding_the_old_key_cannot_seal_after_the_rotation(brain: Any) -> None:
    old = brain.housekeeper
    _rotate(brain, int(time.time()) + 1)
    before = _counts(brain.conn)
    with pytest.raises(EpochRevokedError, match="rotated"):
        _grant_again(brain, old, int(time.time()) + 1)
    assert _counts(brain.conn) == before
    _grant_again(brain, _current(brain), int(time.time()) + 1)  # the new key seals it
    assert _verified(brain)["ok"]


def test_a_seal_by_the_old_key_after_the_rotation_is_rejected(
    brain: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attacker has the rotated-out key and writes the file with an aimos whose writer does
    not check it (the guard patched away), from a connection of its own: the next write and
    `aimos verify` both reject it."""
    old = brain.housekeeper
    _rotate(brain, int(time.time()) + 1)
    _forge_with_old_key(brain, old, monkeypatch)
    head = seals.head_seal(brain.conn)
    assert head is not None and head.signer_valid_from == old.valid_from

    with pytest.raises(SealError) as refused:
        _grant_again(brain, _current(brain), int(time.time()) + 1)
    assert refused.value.reason == "brain_seal_signer_revoked"
    with pytest.raises(SealError):
        check_identities(brain.conn)
    failures = seals.verify_seals(brain.conn).failures
    assert [f["reason"] for f in failures] == ["brain_seal_signer_revoked"], failures
    result = _verified(brain)
    assert not result["ok"] and not result["brain"]["ok"]


def test_an_older_seal_by_a_revoked_epoch_is_named_too(brain: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not only the newest seal: one deep in the chain, made by the old key after its revocation
    was sealed, is found by verify even when newer seals follow it."""
    old = brain.housekeeper
    _rotate(brain, int(time.time()) + 1)
    _forge_with_old_key(brain, old, monkeypatch, then_new_key=True)
    reasons = [f["reason"] for f in seals.verify_seals(brain.conn).failures]
    assert reasons == ["brain_seal_signer_revoked"], reasons


def test_an_event_the_old_key_signs_after_the_rotation_is_refused_and_rejected_by_both_verifiers(
    brain: Any,
) -> None:
    old = brain.housekeeper
    rotation = _rotate(brain, int(time.time()) + 1)
    revoked_at = epochs.revocation_at(brain.conn, HOUSEKEEPER, old.valid_from)
    assert revoked_at is not None
    later = revoked_at + 1

    def forge() -> None:
        with write_transaction(brain.conn, rotation.signer):
            append_event(
                brain.conn, old, operation="heartbeat", company_id="personal", metadata={}, now=later
            )

    before = _counts(brain.conn)
    with pytest.raises(Exception, match="unrevoked"):  # the writer's trigger refuses it
        forge()
    assert _counts(brain.conn) == before

    # past the trigger (dropped and put back), with the new key sealing it: both verifiers refuse
    _without_trigger(brain.conn, "events_verify_insert", forge)
    chains = {c["signer_valid_from"]: c for c in verify_event_chains(brain.conn)}
    assert chains[old.valid_from]["reason"] == "event_signer_revoked", chains
    result = _verified(brain)
    assert not result["in_database"]["ok"]
    assert result["portable"]["verdict"] == "invalid"
    assert result["portable"]["primary_reason"] == "cognitive_evidence_event_identity_epoch_invalid"


def test_a_housekeeper_epoch_the_master_did_not_certify_is_not_accepted(brain: Any) -> None:
    """An attacker without the master key adds a housekeeper epoch of their own (self-certified)
    and seals with it: the next write, the identity checks and verify all refuse it."""
    forged = KeyPair.generate()
    valid_from = int(time.time()) + 1
    cert = issue_certificate(
        forged,
        agent_id=HOUSEKEEPER,
        pubkey=forged.public_b64u,
        device_fp="attacker",
        valid_from=valid_from,
        valid_until=valid_from + 86_400,
        issued_at=valid_from,
    )
    brain.keystore.put(key_item_name(HOUSEKEEPER, valid_from), b64u_encode(forged.seed))
    signer = Signer(HOUSEKEEPER, valid_from, valid_from + 86_400, forged, cert.text, cert.fingerprint, "T1")

    attacker = open_writer()  # the attacker's own connection to the brain file

    def forge() -> None:
        with write_transaction(attacker, signer):
            _insert_epoch(attacker, signer, forged)

    before = _counts(brain.conn)
    try:
        with pytest.raises(IntegrityError, match="not issued by the master"):  # the writer's trigger
            forge()
        assert _counts(brain.conn) == before
        _without_trigger(attacker, "identity_epochs_verify_insert", forge)  # past it, by hand
    finally:
        attacker.close()
    with pytest.raises(SealError) as refused:
        _grant_again(brain, signer, valid_from)
    assert refused.value.reason == "brain_seal_signature_invalid"
    with pytest.raises(SealError):
        check_identities(brain.conn)
    reasons = {f["reason"] for f in seals.verify_seals(brain.conn).failures}
    assert "brain_seal_signature_invalid" in reasons
    # nor is it written over by a rotation: a brain changed outside aimos is restored, not sealed on
    with pytest.raises(SealError):
        agents.rotate_housekeeper(brain.conn, brain.master, brain.keystore, now=valid_from + 1)


def _insert_epoch(conn: Any, signer: Signer, key: KeyPair) -> None:
    conn.execute(
        "INSERT INTO identity_epochs (agent_id, valid_from, valid_until, role, identity_tier,"
        " public_key_b64u, key_fingerprint, certificate, cert_fingerprint, device_fp, key_ref,"
        " created_at) VALUES (?, ?, ?, 'housekeeper', 'T1', ?, ?, ?, ?, 'attacker', ?, ?)",
        (
            HOUSEKEEPER,
            signer.valid_from,
            signer.valid_until,
            key.public_b64u,
            key.fingerprint,
            signer.certificate,
            signer.cert_fingerprint,
            key_item_name(HOUSEKEEPER, signer.valid_from),
            signer.valid_from,
        ),
    )


def _without_trigger(conn: Any, name: str, write: Any) -> None:
    """Run ``write`` with trigger ``name`` dropped, then put the trigger back as it was."""
    (sql,) = (r["sql"] for r in rows(conn, "SELECT sql FROM sqlite_master WHERE name = ?", (name,)))
    conn.execute(f"DROP TRIGGER {name}")
    try:
        write()
    finally:
        conn.execute(sql)


def test_an_open_session_takes_the_new_key_after_a_rotation_elsewhere(brain: Any) -> None:
    """A TUI or an MCP server keeps its session open while `aimos housekeeper rotate-key` runs in
    another process: its next write is sealed with the new key, not refused."""
    from aimos.actions.memory import NewMemory, save
    from aimos.actions.session import open_brain

    with open_brain(write=True) as session:
        assert session.housekeeper().valid_from == brain.housekeeper.valid_from
        rotation = _rotate(brain, int(time.time()) + 1)
        time.sleep(max(0.0, rotation.signer.valid_from - time.time()))
        save(session, "cli", NewMemory("saved by a session opened before the rotation"))
        assert session.housekeeper().valid_from == rotation.signer.valid_from
    head = seals.head_seal(brain.conn)
    assert head is not None and head.signer_valid_from == rotation.signer.valid_from
    assert _verified(brain)["ok"]
