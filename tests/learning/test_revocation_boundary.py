"""A revocation recorded in the same second as the agent's last accepted request: the request was
accepted while no revocation existed, so the revocation must fall after it (both verifiers keep
the memory valid and agree), and from the moment the revocation exists nothing more of that
epoch is accepted, whatever time its requests claim."""

from __future__ import annotations

import time
from typing import Any

import pytest

from aimos.actions.bodies import build_save_body
from aimos.actions.memory import save_and_classify
from aimos.errors import EpochRevokedError
from aimos.identity.agents import revoke_agent
from aimos.identity.requests import sign_request
from aimos.verify.brain.parity import verify_everything
from aimos.vocabulary import PATH_SAVE


def _save(brain: Any, text: str, ts: int) -> str:
    body = build_save_body(company_id="personal", value=text)
    return save_and_classify(
        brain.conn, brain.housekeeper, sign_request(brain.agent, body, PATH_SAVE, ts), ts
    ).memory_id


def test_a_save_in_the_second_of_the_revocation_still_verifies(brain: Any) -> None:
    now = max(int(time.time()), brain.agent.valid_from)
    _save(brain, "accepted just before the revocation, in the same second", now)
    record = revoke_agent(brain.conn, brain.master, brain.keystore, agent_id="cli", reason="test", now=now)
    assert record["revoked_at"] > now, "the revocation falls after every request it accepted"
    report = verify_everything(brain.conn, brain.master.fingerprint)
    assert report["ok"] and report["parity"], report["in_database"]["failures"]

    for ts in (now, record["revoked_at"] - 1):  # claiming a time before revoked_at: refused all the same
        with pytest.raises(EpochRevokedError):
            _save(brain, f"after the revocation exists, claiming {ts}", ts)
    report = verify_everything(brain.conn, brain.master.fingerprint)
    assert report["ok"] and report["parity"]


def test_a_request_signed_ahead_of_the_clock_moves_the_revocation_after_it(brain: Any) -> None:
    now = max(int(time.time()), brain.agent.valid_from)
    _save(brain, "signed two seconds ahead (within the allowed skew)", now + 2)
    record = revoke_agent(brain.conn, brain.master, brain.keystore, agent_id="cli", reason="test", now=now)
    assert record["revoked_at"] == now + 3
    report = verify_everything(brain.conn, brain.master.fingerprint)
    assert report["ok"] and report["parity"], report["in_database"]["failures"]
