"""Signed-request refusals the CLI cannot produce (it always signs fresh, now): in-process against a
real installed brain (the `brain` fixture of tests/conftest.py: real SQLite file, file keystore,
real keys). SPEC section 3: a replayed nonce, an expired or revoked epoch and a skew over 300 s are
each refused with their own error (exit 6), and the brain is left exactly as it was.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest

from aimos.actions.bodies import build_save_body
from aimos.errors import (
    ClockSkewError,
    EpochExpiredError,
    EpochRevokedError,
    ReplayError,
    SignatureError,
)
from aimos.exit_codes import exit_code_for
from aimos.identity.agents import revoke_agent, rotate_agent
from aimos.identity.epochs import load_signer
from aimos.identity.requests import sign_request
from aimos.memory.save import save
from aimos.vocabulary import PATH_SAVE

pytestmark = pytest.mark.timeout(60)

IDENTITY_EXIT = 6
TABLES = (
    "memories",
    "events",
    "memory_provenance",
    "memory_occurrences",
    "request_nonces",
    "identity_epochs",
    "recall_grants",
    "agent_revocations",
)


def counts(conn: Any) -> dict[str, int]:
    return {t: int(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchall()[0][0]) for t in TABLES}


def body(brain: Any, text: str) -> dict[str, Any]:
    return build_save_body(company_id="personal", value=text)


def refused(brain: Any, error: type[Exception], request: Any, now: int) -> Exception:
    before = counts(brain.conn)
    with pytest.raises(error) as caught:
        save(brain.conn, brain.housekeeper, request, now)
    assert exit_code_for(caught.value) == IDENTITY_EXIT
    assert caught.value.hint, "every refusal says what to do next"  # type: ignore[attr-defined]
    assert counts(brain.conn) == before, "a refused request changed the brain"
    return caught.value


def test_replayed_nonce_is_refused(brain: Any) -> None:
    now = brain.agent.valid_from + 5
    request = sign_request(brain.agent, body(brain, "said once"), PATH_SAVE, now)
    first = save(brain.conn, brain.housekeeper, request, now)
    assert first.status == "saved"
    exc = refused(brain, ReplayError, request, now + 1)
    assert "replay" in str(exc).lower()
    # the same nonce with another body is a replay too (and a bad signature first of all)
    forged = dataclasses.replace(request, body=body(brain, "said twice"))
    refused(brain, SignatureError, forged, now + 1)


def test_request_after_the_epoch_expired_is_refused(brain: Any) -> None:
    ts = brain.agent.valid_until + 60
    request = sign_request(brain.agent, body(brain, "said too late"), PATH_SAVE, ts)
    exc = refused(brain, EpochExpiredError, request, ts)
    assert "rotate" in exc.hint  # type: ignore[attr-defined]


def test_request_before_the_epoch_began_is_refused(brain: Any) -> None:
    ts = brain.agent.valid_from - 60
    request = sign_request(brain.agent, body(brain, "said too early"), PATH_SAVE, ts)
    refused(brain, EpochExpiredError, request, ts)


@pytest.mark.parametrize("skew", [-400, 400, -301, 301])
def test_skewed_request_is_refused(brain: Any, skew: int) -> None:
    # the brain's clock is well inside the epoch; the request says ts = now + skew
    now = brain.agent.valid_from + 1000
    request = sign_request(brain.agent, body(brain, f"said at skew {skew}"), PATH_SAVE, now + skew)
    exc = refused(brain, ClockSkewError, request, now)
    assert "300" in str(exc) or "300" in exc.hint  # type: ignore[attr-defined]


@pytest.mark.parametrize("skew", [-300, 300])
def test_skew_of_exactly_300_seconds_is_accepted(brain: Any, skew: int) -> None:
    now = brain.agent.valid_from + 1000
    request = sign_request(brain.agent, body(brain, f"said at skew {skew}"), PATH_SAVE, now + skew)
    assert save(brain.conn, brain.housekeeper, request, now).status == "saved"


def test_request_signed_at_or_after_the_revocation_is_refused(brain: Any) -> None:
    revoked_at = brain.agent.valid_from + 100
    # signed and delivered before the revocation: accepted
    on_time = sign_request(brain.agent, body(brain, "said before the revocation"), PATH_SAVE, revoked_at - 2)
    assert save(brain.conn, brain.housekeeper, on_time, revoked_at - 2).status == "saved"
    # signed before the revocation but delivered after it (a back-dated request): refused
    backdated = sign_request(brain.agent, body(brain, "back-dated"), PATH_SAVE, revoked_at - 1)
    revoke_agent(brain.conn, brain.master, brain.keystore, agent_id="cli", reason="test", now=revoked_at)
    refused(brain, EpochRevokedError, backdated, revoked_at)
    for ts in (revoked_at, revoked_at + 1):
        late = sign_request(brain.agent, body(brain, f"said at {ts}"), PATH_SAVE, ts)
        exc = refused(brain, EpochRevokedError, late, ts)
        assert "rotate" in exc.hint  # type: ignore[attr-defined]


def test_agent_can_save_right_after_a_rotation_in_the_same_second(brain: Any) -> None:
    """`aimos install` then `aimos agent rotate cli` then `aimos save` within one second.

    Epochs are keyed by whole seconds, so the rotated epoch starts one second after the install
    second. Loading the signer waits for that second (at most 2 s), so the save that follows
    is signed inside the new epoch and accepted.
    """
    now = brain.agent.valid_from  # the install second
    new_signer, _grant, revoked = rotate_agent(
        brain.conn, brain.master, brain.keystore, agent_id="cli", now=now
    )
    assert revoked
    assert new_signer.valid_from == now + 1
    signer = load_signer(brain.conn, brain.keystore, "cli", now)
    assert signer.valid_from == new_signer.valid_from
    assert time.time() >= signer.valid_from  # load_signer waited for the epoch to start
    signed_at = int(time.time())
    request = sign_request(signer, body(brain, "said right after the rotation"), PATH_SAVE, signed_at)
    result = save(brain.conn, brain.housekeeper, request, signed_at)
    assert result.status == "saved"
