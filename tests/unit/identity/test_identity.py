"""Identity: passphrase sealing and sources, keystores, epochs, grants, revocation, rotation."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from support.cells import the_row

from aimos.crypto.certs import parse_certificate, verify_certificate
from aimos.errors import (
    AgentNotFoundError,
    EpochRevokedError,
    KeychainError,
    PassphraseError,
    PassphraseSourceError,
    UsageError,
)
from aimos.identity import agents, epochs, passphrase
from aimos.identity.grants import current_grant
from aimos.identity.keystore import FileKeystore, choose_keystore
from aimos.identity.master import master_row, unlock_master
from aimos.identity.signer import epoch_state
from aimos.identity.validators import check_agent_id
from aimos.store.connection import rows
from aimos.vocabulary import DEFAULT_VALIDITY_DAYS

PASS = "correct horse battery staple"


def test_seal_roundtrip_and_wrong_passphrase() -> None:
    secret = os.urandom(32)
    sealed = passphrase.seal(secret, PASS)
    assert secret.hex() not in sealed and PASS not in sealed
    assert passphrase.unseal(sealed, PASS) == secret
    with pytest.raises(PassphraseError, match="wrong master passphrase"):
        passphrase.unseal(sealed, PASS + "x")
    with pytest.raises(PassphraseError, match="damaged"):
        passphrase.unseal("{}", PASS)


def test_passphrase_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "p"
    f.write_text("from-file-pass\n")
    f.chmod(0o600)
    monkeypatch.setenv("AIMOS_PASSPHRASE_FILE", str(f))
    assert passphrase.read_passphrase() == "from-file-pass"
    f.chmod(0o644)
    with pytest.raises(PassphraseSourceError, match="readable by other users"):
        passphrase.read_passphrase()
    r, w = os.pipe()
    os.write(w, b"from-fd-passphrase\n")
    os.close(w)
    assert passphrase.read_passphrase(fd=r) == "from-fd-passphrase"
    os.close(r)
    monkeypatch.delenv("AIMOS_PASSPHRASE_FILE")
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    with pytest.raises(PassphraseSourceError):
        passphrase.read_passphrase()
    f.chmod(0o600)
    f.write_text("short\n")
    monkeypatch.setenv("AIMOS_PASSPHRASE_FILE", str(f))
    with pytest.raises(PassphraseError, match="shorter than 8"):
        passphrase.read_passphrase(confirm=True)


def test_file_keystore_modes_and_no_overwrite(tmp_path: Path) -> None:
    ks = FileKeystore("b", tmp_path / "keys")
    ks.put("agent@1", "s3cret")
    path = tmp_path / "keys" / "agent@1.key"
    assert path.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "keys").stat().st_mode & 0o777 == 0o700
    assert ks.get("agent@1") == "s3cret"
    with pytest.raises(KeychainError, match="already exists"):
        ks.put("agent@1", "other")
    path.chmod(0o644)
    with pytest.raises(KeychainError, match="readable by other users"):
        ks.get("agent@1")
    assert ks.delete("agent@1") and not ks.delete("agent@1")
    with pytest.raises(KeychainError) as err:
        ks.get("agent@1")
    assert "s3cret" not in str(err.value)
    with pytest.raises(UsageError):
        ks.put("../escape", "x")


def test_choose_keystore_explicit_file_and_bad_choice(aimos_home: Path) -> None:
    ks, note = choose_keystore("file", "brain-x")
    assert ks.kind == "file" and "file keystore" in note
    with pytest.raises(UsageError):
        choose_keystore("plaintext", "brain-x")


@pytest.mark.parametrize(
    "bad", ["", "cli\n", "has space", "x" * 65, "housekeeper", "aimos_flag_signer", "a/b"]
)
def test_agent_id_rules(bad: str) -> None:
    with pytest.raises(UsageError):
        check_agent_id(bad)


def test_agent_id_accepts_the_documented_alphabet() -> None:
    assert check_agent_id("Claude_code-2") == "Claude_code-2"
    assert check_agent_id("x" * 64) == "x" * 64


def test_install_records_master_housekeeper_agent_and_grant(brain) -> None:  # type: ignore[no-untyped-def]
    conn = brain.conn
    master = master_row(conn)
    assert master["fingerprint"] == brain.master.fingerprint
    listing = {e["agent_id"]: e for e in agents.agent_listing(conn, int(time.time()))}
    assert set(listing) == {"cli", "housekeeper"}
    assert listing["housekeeper"]["valid_until"].startswith("9999-12-31")
    for e in epochs.epochs(conn):
        cert = parse_certificate(e["certificate"])
        verify_certificate(cert, master["public_key_b64u"], at=e["valid_from"])
        assert cert.pubkey == e["public_key_b64u"]
    grant = current_grant(conn, "cli", brain.agent.valid_from)
    assert grant is not None
    assert (grant["clearance_ceiling"], grant["data_class_ceiling"], grant["write_allowed"]) == (
        10,
        "confidential",
        1,
    )
    assert brain.agent.valid_until - brain.agent.valid_from == DEFAULT_VALIDITY_DAYS * 86_400


def test_unlock_master_refuses_wrong_passphrase(brain) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(PassphraseError):
        unlock_master(brain.conn, brain.keystore, "not the passphrase")


def test_grant_ceilings_are_capped(brain) -> None:  # type: ignore[no-untyped-def]
    now = int(time.time())
    with pytest.raises(UsageError, match="clearance 11"):
        agents.enroll_agent(brain.conn, brain.master, brain.keystore, agent_id="a1", now=now, clearance=11)
    with pytest.raises(UsageError, match="data class"):
        agents.enroll_agent(
            brain.conn, brain.master, brain.keystore, agent_id="a1", now=now, data_class="secret"
        )
    with pytest.raises(UsageError, match="validity"):
        agents.enroll_agent(
            brain.conn, brain.master, brain.keystore, agent_id="a1", now=now, validity_days=366
        )
    assert epochs.epochs(brain.conn, "a1") == []
    assert not list((brain.home / "state" / "keys" / brain.brain_id).glob("a1@*"))


def test_enroll_rotate_revoke(brain) -> None:  # type: ignore[no-untyped-def]
    now = int(time.time())
    signer, _grant = agents.enroll_agent(
        brain.conn,
        brain.master,
        brain.keystore,
        agent_id="claude",
        now=now,
        validity_days=7,
        clearance=6,
        data_class="internal",
        write_allowed=False,
    )
    assert signer.valid_until - signer.valid_from == 7 * 86_400
    with pytest.raises(UsageError, match="already enrolled"):
        agents.enroll_agent(brain.conn, brain.master, brain.keystore, agent_id="claude", now=now)
    new, new_grant, revoked = agents.rotate_agent(
        brain.conn, brain.master, brain.keystore, agent_id="claude", now=now
    )
    assert revoked and new.valid_from > signer.valid_from
    assert (new_grant["clearance_ceiling"], new_grant["data_class_ceiling"], new_grant["write_allowed"]) == (
        6,
        "internal",
        0,
    )
    states = [epoch_state(e, now + 1) for e in epochs.epochs(brain.conn, "claude")]
    assert states == ["revoked", "active"]
    with pytest.raises(KeychainError):  # the rotated-out key left the keystore
        brain.keystore.get(f"claude@{signer.valid_from}")
    record = agents.revoke_agent(
        brain.conn, brain.master, brain.keystore, agent_id="claude", reason="lost laptop", now=now + 1
    )
    assert record["agent_id"] == "claude"
    with pytest.raises(EpochRevokedError):
        epochs.load_signer(brain.conn, brain.keystore, "claude", now + 2)
    with pytest.raises(UsageError, match="already revoked"):
        agents.revoke_agent(
            brain.conn, brain.master, brain.keystore, agent_id="claude", reason="again", now=now + 2
        )
    with pytest.raises(AgentNotFoundError):
        agents.revoke_agent(brain.conn, brain.master, brain.keystore, agent_id="nobody", reason="x", now=now)
    revs = rows(brain.conn, "SELECT signed_body FROM agent_revocations WHERE agent_id = 'claude'")
    assert len(revs) == 2 and all("REVOKE_AGENT_IDENTITY" in r["signed_body"] for r in revs)


def test_grant_and_revocation_bytes_verify(brain) -> None:  # type: ignore[no-untyped-def]
    """Grants and revocations recompute from their stored bytes and verify under the master."""
    import json

    from aimos.crypto import commitments
    from aimos.crypto.ed25519 import verify
    from aimos.crypto.encoding import b64u_decode
    from aimos.crypto.messages import payload_message

    now = int(time.time())
    agents.revoke_agent(brain.conn, brain.master, brain.keystore, agent_id="cli", reason="test", now=now)
    pub = master_row(brain.conn)["public_key_b64u"]
    grant = the_row(brain.conn, "SELECT * FROM recall_grants WHERE subject_agent_id = 'cli'")
    body = json.loads(grant["signed_body"])
    assert body["schema"] == "hom.aimos.recall-authorization/v1"
    assert verify(
        pub, payload_message(body, grant["nonce"], grant["ts_signed"]), b64u_decode(grant["signature_b64u"])
    )
    assert (
        commitments.recall_authorization_mutation_hash(
            None, bytes.fromhex(grant["content_hash"]), grant["nonce"], grant["ts_signed"]
        ).hex()
        == grant["mutation_hash"]
    )
    rev = the_row(brain.conn, "SELECT * FROM agent_revocations")
    rbody = json.loads(rev["signed_body"])
    sig = b64u_decode(rev["signature_b64u"])
    assert verify(pub, payload_message(rbody, rev["nonce"], rev["ts_signed"]), sig)
    assert (
        commitments.agent_revocation_mutation_hash(
            bytes.fromhex(rev["prior_identity_hash"]), bytes.fromhex(rev["content_hash"]), sig
        ).hex()
        == rev["mutation_hash"]
    )
