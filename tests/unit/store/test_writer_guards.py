"""The triggers refuse rows that did not come through the writer's checks, even on the writer's
own connection (registered functions present): REPLACE deletions, revoked or ungranted signers,
columns that differ from their signed bodies."""

from __future__ import annotations

import time
from typing import Any

import pytest
from support.cells import the_row

from aimos.actions.bodies import build_save_body
from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_text
from aimos.crypto.encoding import b64u_encode
from aimos.crypto.messages import request_message
from aimos.errors import IntegrityError
from aimos.identity import agents
from aimos.identity.epochs import load_signer
from aimos.identity.requests import sign_request
from aimos.ledger.events import append_event
from aimos.memory.save import save
from aimos.store.connection import one, rows, translate_errors, write_transaction
from aimos.vocabulary import PATH_SAVE


def refused(conn: Any, sql: str, params: tuple[Any, ...] = ()) -> str:
    with pytest.raises(IntegrityError) as err:
        with write_transaction(conn):
            conn.execute(sql, params)
    return err.value.message


def test_insert_or_replace_cannot_delete_retained_rows(brain: Any) -> None:
    now = int(time.time())
    agents.enroll_agent(brain.conn, brain.master, brain.keystore, agent_id="alice", now=now)
    agents.revoke_agent(brain.conn, brain.master, brain.keystore, agent_id="alice", reason="t", now=now)
    message = refused(
        brain.conn, "INSERT OR REPLACE INTO brain_meta (key, value) VALUES ('company_id', 'evil')"
    )
    assert "append-only" in message
    rev = one(brain.conn, "SELECT * FROM agent_revocations WHERE agent_id = 'alice'")
    assert rev is not None
    cols = ", ".join(rev)
    refused(
        brain.conn,
        f"INSERT OR REPLACE INTO agent_revocations ({cols}) VALUES ({', '.join('?' * len(rev))})",
        tuple(rev.values()),
    )
    assert the_row(brain.conn, "SELECT value FROM brain_meta WHERE key = 'company_id'")["value"] == "personal"
    assert len(rows(brain.conn, "SELECT 1 FROM agent_revocations WHERE agent_id = 'alice'")) == 1


def _provenance_row(brain: Any, signer: Any, body: dict[str, Any], ts: int) -> dict[str, Any]:
    nonce = "forged-nonce-0000000000"
    sig = signer.key.sign(request_message(body, "POST", PATH_SAVE, nonce, ts))
    content = commitments.provenance_content_hash(body)
    return {
        "provenance_id": "00000000-0000-4000-8000-000000000001",
        "memory_id": "00000000-0000-4000-8000-000000000002",
        "company_id": "personal",
        "event_type": "SAVE",
        "body_json": canonical_text(body),
        "content_hash": content.hex(),
        "prev_mutation_hash": None,
        "mutation_hash": commitments.provenance_mutation_hash(content, None, nonce, ts).hex(),
        "nonce": nonce,
        "ts_signed": ts,
        "signature_b64u": b64u_encode(sig),
        "signature_form": 3,
        "signed_method": "POST",
        "signed_path": PATH_SAVE,
        "signer_agent_id": signer.agent_id,
        "signer_valid_from": signer.valid_from,
        "cert_fingerprint": signer.cert_fingerprint,
        "identity_tier": "T1",
        "is_genesis": 1,
        "backfilled": 0,
        "binding_schema_version": 2,
        "created_at": ts,
    }


def _insert(conn: Any, table: str, row: dict[str, Any]) -> str:
    return refused(
        conn,
        f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
        tuple(row.values()),
    )


def test_direct_provenance_rows_are_refused(brain: Any) -> None:
    now = int(time.time())
    body = build_save_body(company_id="personal", value="slipped in", clearance_level=5)
    # correctly signed, but no nonce was recorded by a verified request
    assert "nonce" in _insert(brain.conn, "memory_provenance", _provenance_row(brain, brain.agent, body, now))
    # a revoked signer is refused even with its nonce recorded
    agents.enroll_agent(brain.conn, brain.master, brain.keystore, agent_id="bob", now=now)
    bob = load_signer(brain.conn, brain.keystore, "bob", now)
    agents.revoke_agent(brain.conn, brain.master, brain.keystore, agent_id="bob", reason="t", now=now)
    row = _provenance_row(brain, bob, body, now)
    with write_transaction(brain.conn):
        brain.conn.execute(
            "INSERT INTO request_nonces VALUES (?,?,?,?,?,?,?)",
            ("bob", row["nonce"], bob.valid_from, now, PATH_SAVE, row["content_hash"], now),
        )
    assert "unrevoked" in _insert(brain.conn, "memory_provenance", row)
    # above the grant ceiling
    high = build_save_body(company_id="personal", value="too high", clearance_level=12)
    row = _provenance_row(brain, brain.agent, high, now)
    with write_transaction(brain.conn):
        brain.conn.execute(
            "INSERT INTO request_nonces VALUES (?,?,?,?,?,?,?)",
            ("cli", row["nonce"], brain.agent.valid_from, now, PATH_SAVE, row["content_hash"], now),
        )
    assert "grant" in _insert(brain.conn, "memory_provenance", row)


def test_only_the_housekeeper_signs_events(brain: Any) -> None:
    with pytest.raises(IntegrityError, match="housekeeper"):
        with write_transaction(brain.conn):
            append_event(
                brain.conn,
                brain.agent,
                operation="memory_saved",
                company_id="personal",
                metadata={},
                now=int(time.time()),
            )


def test_memory_rows_need_their_saved_event(brain: Any) -> None:
    saved = save(
        brain.conn,
        brain.housekeeper,
        sign_request(
            brain.agent, build_save_body(company_id="personal", value="real"), PATH_SAVE, int(time.time())
        ),
        int(time.time()),
    )
    m = the_row(brain.conn, "SELECT * FROM memories WHERE memory_id = ?", (saved.memory_id,))
    # the same content under a new id and company would need its own provenance and event
    m["memory_id"] = "00000000-0000-4000-8000-0000000000ff"
    assert "provenance" in _insert(brain.conn, "memories", m)


def test_revocation_and_grant_columns_are_bound_to_their_bodies(brain: Any) -> None:
    now = int(time.time())
    agents.enroll_agent(brain.conn, brain.master, brain.keystore, agent_id="bob", now=now)
    agents.revoke_agent(brain.conn, brain.master, brain.keystore, agent_id="bob", reason="t", now=now)
    rev = the_row(brain.conn, "SELECT * FROM agent_revocations WHERE agent_id = 'bob'")
    forged = dict(
        rev,
        revocation_id="00000000-0000-4000-8000-0000000000aa",
        agent_id="cli",
        agent_valid_from=brain.agent.valid_from,
        mutation_hash="00" * 32,
    )
    assert "differ" in _insert(brain.conn, "agent_revocations", forged)
    grant = the_row(brain.conn, "SELECT * FROM recall_grants WHERE subject_agent_id = 'cli'")
    rebound = dict(
        grant,
        grant_id="00000000-0000-4000-8000-0000000000bb",
        subject_agent_id="bob",
        mutation_hash="11" * 32,
    )
    _insert(brain.conn, "recall_grants", rebound)
    with translate_errors():
        assert (
            the_row(brain.conn, "SELECT COUNT(*) AS n FROM recall_grants WHERE subject_agent_id = 'bob'")["n"]
            == 1
        )
