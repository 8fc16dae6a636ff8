"""The signed save, in-process on a real brain file: chains, gates, versions, refusals."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from typing import Any

import pytest
from support.cells import the_row

from aimos.actions.bodies import build_save_body
from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json
from aimos.crypto.ed25519 import verify
from aimos.crypto.encoding import b64u_decode
from aimos.crypto.messages import payload_message, request_message
from aimos.errors import (
    AimosError,
    GrantError,
    IntegrityError,
    SecretDetectedError,
    SignatureError,
    UsageError,
    ValueTooLargeError,
)
from aimos.exit_codes import ExitCode, exit_code_for
from aimos.identity import agents
from aimos.identity.epochs import load_signer
from aimos.identity.requests import sign_request
from aimos.memory.save import save
from aimos.memory.versions import head_of, list_memories, memory_detail, version_chain
from aimos.store.connection import one, rows, write_transaction
from aimos.vocabulary import PATH_RECALL, PATH_SAVE

COUNTED = (
    "memories",
    "memory_provenance",
    "events",
    "request_nonces",
    "memory_occurrences",
    "memory_supersessions",
)


def counts(conn: Any) -> dict[str, int]:
    return {t: the_row(conn, f"SELECT COUNT(*) AS n FROM {t}")["n"] for t in COUNTED}


def do_save(brain: Any, value: str, signer: Any = None, **fields: Any) -> Any:
    now = int(time.time())
    body = build_save_body(company_id="personal", value=value, **fields)
    return save(brain.conn, brain.housekeeper, sign_request(signer or brain.agent, body, PATH_SAVE, now), now)


def test_save_writes_signed_provenance_row_and_event(brain) -> None:  # type: ignore[no-untyped-def]
    result = do_save(brain, "Alice prefers tea", key="pref:drink")
    assert result.status == "saved"
    m = the_row(brain.conn, "SELECT * FROM memories WHERE memory_id = ?", (result.memory_id,))
    assert (m["retrieval_weight_milli"], m["epistemic_label"], m["quarantine"]) == (1000, "unverified", 0)
    assert m["live_content_hash"] == commitments.live_content_hash(m).hex()
    p = the_row(brain.conn, "SELECT * FROM memory_provenance WHERE memory_id = ?", (result.memory_id,))
    body = json.loads(p["body_json"])
    assert body["value"] == "Alice prefers tea"
    assert p["content_hash"] == commitments.sha256(canonical_json(body)).hex()
    assert (
        p["mutation_hash"]
        == commitments.provenance_mutation_hash(
            bytes.fromhex(p["content_hash"]), None, p["nonce"], p["ts_signed"]
        ).hex()
    )
    # the genesis node carries the agent's own request-form-3 signature
    assert verify(
        brain.agent.key.public_b64u,
        request_message(body, "POST", PATH_SAVE, p["nonce"], p["ts_signed"]),
        b64u_decode(p["signature_b64u"]),
    )
    from aimos.ledger.events import read_event

    stored = one(brain.conn, "SELECT * FROM events WHERE event_id = ?", (result.event_id,))
    assert (
        stored is not None and stored["signed_body"] == "" and stored["signed_body_deflated"]
    )  # (migration 16)
    ev = read_event(stored)
    evbody = json.loads(ev["signed_body"])
    assert ev["operation"] == "memory_saved" and evbody["metadata"]["memory_id"] == result.memory_id
    assert verify(
        brain.housekeeper.key.public_b64u,
        payload_message(evbody, ev["nonce"], ev["ts_signed"]),
        b64u_decode(ev["signature_b64u"]),
    )


def test_event_chain_links_per_signer_epoch(brain) -> None:  # type: ignore[no-untyped-def]
    for i in range(3):
        do_save(brain, f"memory number {i}")
    chain = rows(brain.conn, "SELECT * FROM events WHERE signer_agent_id = 'housekeeper' ORDER BY ledger_seq")
    assert [e["ledger_seq"] for e in chain] == list(range(1, len(chain) + 1))
    prev = commitments.event_genesis_predecessor(
        "personal", "housekeeper", brain.housekeeper.valid_from
    ).hex()
    for e in chain:
        assert e["prev_mutation_hash"] == prev
        assert (
            e["mutation_hash"]
            == commitments.event_link_hash(
                bytes.fromhex(prev), bytes.fromhex(e["content_hash"]), e["nonce"], e["ts_signed"]
            ).hex()
        )
        prev = e["mutation_hash"]


def test_forged_event_is_refused_by_the_trigger(brain) -> None:  # type: ignore[no-untyped-def]
    from aimos.crypto.ed25519 import KeyPair
    from aimos.identity.signer import Signer
    from aimos.ledger.events import append_event
    from aimos.store.connection import write_transaction

    impostor = Signer(
        "housekeeper",
        brain.housekeeper.valid_from,
        brain.housekeeper.valid_until,
        KeyPair.generate(),
        brain.housekeeper.certificate,
        brain.housekeeper.cert_fingerprint,
        "T1",
    )
    before = counts(brain.conn)
    with pytest.raises(IntegrityError, match="signature does not verify"):
        with write_transaction(brain.conn):
            append_event(
                brain.conn,
                impostor,
                operation="memory_saved",
                company_id="personal",
                metadata={},
                now=int(time.time()),
            )
    assert counts(brain.conn) == before


def test_duplicate_records_a_signed_occurrence(brain) -> None:  # type: ignore[no-untyped-def]
    first = do_save(brain, "same words")
    second = do_save(brain, "same words")
    third = do_save(brain, "same words")
    assert second.status == third.status == "duplicate"
    assert first.memory_id == second.memory_id == third.memory_id
    assert the_row(brain.conn, "SELECT COUNT(*) AS n FROM memories")["n"] == 1
    occ = rows(brain.conn, "SELECT * FROM memory_occurrences ORDER BY created_at, rowid")
    assert len(occ) == 2 and occ[1]["predecessor_commitment"] == occ[0]["commitment"]
    message = commitments.occurrence_v3_signature_message(bytes.fromhex(occ[0]["commitment"]))
    assert verify(brain.housekeeper.key.public_b64u, message, b64u_decode(occ[0]["signature_b64u"]))
    # a different field (the key) is different content
    assert do_save(brain, "same words", key="k").status == "saved"


def test_correct_makes_a_new_version_and_keeps_the_old(brain) -> None:  # type: ignore[no-untyped-def]
    v1 = do_save(brain, "the meeting is on Monday", key="meeting")
    v2 = do_save(brain, "the meeting is on Tuesday", key="meeting", supersedes=v1.memory_id)
    assert v2.supersedes == v1.memory_id
    assert head_of(brain.conn, v1.memory_id) == v2.memory_id
    assert version_chain(brain.conn, v1.memory_id) == [v1.memory_id, v2.memory_id]
    assert memory_detail(brain.conn, v1.memory_id)["version"]["state"] == "superseded"
    assert memory_detail(brain.conn, v2.memory_id)["version"]["state"] == "current"
    assert [m["memory_id"] for m in list_memories(brain.conn).memories] == [v2.memory_id]
    assert {m["memory_id"] for m in list_memories(brain.conn, include_history=True).memories} == {
        v1.memory_id,
        v2.memory_id,
    }
    with pytest.raises(UsageError, match="already corrected"):
        do_save(brain, "the meeting is on Wednesday", key="meeting", supersedes=v1.memory_id)
    with pytest.raises(UsageError, match="already exists"):
        do_save(brain, "the meeting is on Monday", key="meeting", supersedes=v2.memory_id)


def test_canary_is_retained_in_quarantine(brain) -> None:  # type: ignore[no-untyped-def]
    result = do_save(brain, "internal note SECRET-0A1B2C3D do not relay")
    assert result.status == "quarantined"
    m = the_row(brain.conn, "SELECT * FROM memories WHERE memory_id = ?", (result.memory_id,))
    assert (m["quarantine"], m["retrieval_weight_milli"]) == (1, 100)
    ops = [
        e["operation"]
        for e in rows(
            brain.conn, "SELECT operation FROM events WHERE subject_memory_id = ?", (result.memory_id,)
        )
    ]
    assert ops == ["memory_saved", "cognitive_initial_weight_attested", "canary_write_retained_quarantine"]
    baseline = one(brain.conn, "SELECT * FROM weight_baselines WHERE memory_id = ?", (result.memory_id,))
    assert baseline is not None and baseline["observed_weight_milli"] == 100


@pytest.mark.parametrize(
    ("fields", "error", "code"),
    [
        ({"clearance_level": 11}, GrantError, ExitCode.IDENTITY),
        ({"data_class": "restricted"}, GrantError, ExitCode.IDENTITY),
        ({"data_class": "top-secret"}, UsageError, ExitCode.USAGE),
        ({"clearance_level": 13}, UsageError, ExitCode.USAGE),
        ({"value": "  "}, UsageError, ExitCode.USAGE),
        ({"value": "x" * 1_048_600}, ValueTooLargeError, ExitCode.USAGE),
        ({"value": "aws AKIAIOSFODNN7EXAMPLE"}, SecretDetectedError, ExitCode.USAGE),
        ({"company_id": "other"}, GrantError, ExitCode.IDENTITY),
    ],
)
def test_refused_saves_change_nothing(  # type: ignore[no-untyped-def]
    brain, fields: dict[str, Any], error: type[AimosError], code: ExitCode
) -> None:
    do_save(brain, "something already there")
    before = counts(brain.conn)
    body = build_save_body(company_id="personal", value="ok text")
    body.update(fields)
    now = int(time.time())
    with pytest.raises(error) as err:
        save(brain.conn, brain.housekeeper, sign_request(brain.agent, body, PATH_SAVE, now), now)
    assert exit_code_for(err.value) == code
    assert err.value.hint
    assert counts(brain.conn) == before


def test_tampered_or_misdirected_requests_are_refused(brain) -> None:  # type: ignore[no-untyped-def]
    now = int(time.time())
    req = sign_request(brain.agent, build_save_body(company_id="personal", value="original"), PATH_SAVE, now)
    before = counts(brain.conn)
    tampered = replace(req, body={**req.body, "value": "altered"})
    with pytest.raises(SignatureError, match="does not verify"):
        save(brain.conn, brain.housekeeper, tampered, now)
    with pytest.raises(UsageError):
        save(brain.conn, brain.housekeeper, replace(req, path=PATH_RECALL), now)
    with pytest.raises(SignatureError, match="does not verify"):
        save(brain.conn, brain.housekeeper, replace(req, certificate=brain.housekeeper.certificate), now)
    assert counts(brain.conn) == before
    assert save(brain.conn, brain.housekeeper, req, now).status == "saved"


def test_read_only_grant_cannot_save(brain) -> None:  # type: ignore[no-untyped-def]
    now = int(time.time())
    agents.enroll_agent(
        brain.conn, brain.master, brain.keystore, agent_id="reader", now=now, write_allowed=False
    )
    reader = load_signer(brain.conn, brain.keystore, "reader", now)
    with pytest.raises(GrantError, match="read-only"):
        do_save(brain, "not allowed", signer=reader)


def test_revocation_refuses_every_request_delivered_after_it(brain) -> None:  # type: ignore[no-untyped-def]
    """A revoked epoch is refused from the revocation on, even for a request it signed earlier."""
    from aimos.errors import EpochRevokedError

    now = int(time.time())
    revoke_at = now + 5
    before_rev = sign_request(
        brain.agent, build_save_body(company_id="personal", value="early"), PATH_SAVE, now
    )
    at_rev = sign_request(
        brain.agent, build_save_body(company_id="personal", value="late"), PATH_SAVE, revoke_at
    )
    agents.revoke_agent(brain.conn, brain.master, brain.keystore, agent_id="cli", reason="t", now=revoke_at)
    before = counts(brain.conn)
    for request in (at_rev, before_rev):
        with pytest.raises(EpochRevokedError):
            save(brain.conn, brain.housekeeper, request, revoke_at)
    assert counts(brain.conn) == before


def test_the_system_scope_is_the_housekeepers_alone(brain) -> None:  # type: ignore[no-untyped-def]
    """The housekeeper signs saves only for scope system (the guide memories) and no agent may
    write there; the writer's trigger holds the same line as the Python check."""
    now = int(time.time())
    from aimos.identity.grants import issue_grant

    with write_transaction(brain.conn):
        issue_grant(
            brain.conn,
            brain.master,
            company_id="personal",
            agent_id="housekeeper",
            valid_from=brain.housekeeper.valid_from,
            clearance_ceiling=10,
            data_class_ceiling="public",
            write_allowed=True,
            now=now,
        )
    before = counts(brain.conn)
    by_agent = sign_request(
        brain.agent,
        build_save_body(company_id="personal", value="agent in system", scope="system"),
        PATH_SAVE,
        now,
    )
    with pytest.raises(GrantError, match="system scope"):
        save(brain.conn, brain.housekeeper, by_agent, now)
    personal = build_save_body(company_id="personal", value="housekeeper note", data_class="public")
    with pytest.raises(GrantError, match="system scope"):
        save(brain.conn, brain.housekeeper, sign_request(brain.housekeeper, personal, PATH_SAVE, now), now)
    recall_body = {"company_id": "personal", "query": "x"}
    with pytest.raises(SignatureError, match="not an enrolled agent"):
        from aimos.identity.requests import verify_request

        with write_transaction(brain.conn):
            verify_request(
                brain.conn,
                sign_request(brain.housekeeper, recall_body, PATH_RECALL, now),
                path=PATH_RECALL,
                now=now,
            )
    assert counts(brain.conn) == before
    system = build_save_body(
        company_id="personal",
        value="a guide",
        scope="system",
        memory_type="guide",
        data_class="public",
        clearance_level=10,
    )
    assert (
        save(
            brain.conn, brain.housekeeper, sign_request(brain.housekeeper, system, PATH_SAVE, now), now
        ).status
        == "saved"
    )


def test_the_writer_trigger_refuses_an_agent_save_in_the_system_scope(brain) -> None:  # type: ignore[no-untyped-def]
    """Bypass the Python check: the SAVE node's insert trigger (migration 4) still refuses."""
    import aimos.memory.save as save_module

    now = int(time.time())
    req = sign_request(
        brain.agent,
        build_save_body(company_id="personal", value="sneaky system", scope="system"),
        PATH_SAVE,
        now,
    )
    before = counts(brain.conn)
    original = save_module._check_grant
    save_module._check_grant = lambda verified, body: None
    try:
        with pytest.raises(Exception, match="system scope is the housekeeper"):
            save(brain.conn, brain.housekeeper, req, now)
    finally:
        save_module._check_grant = original
    assert counts(brain.conn) == before
