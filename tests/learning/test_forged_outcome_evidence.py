"""Outcome evidence aimos did not make is refused or found: copied outcome rows, a forged weight
chain (recall fails closed), a deleted REWEIGHT node (the verifier names it, it does not crash), and
outcomes from an agent that did not make the recall or may not write."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import apsw
import pytest
from support.cells import the_row

from aimos.actions.bodies import build_outcome_body, build_recall_body, build_save_body
from aimos.errors import GrantError, IntegrityError
from aimos.exit_codes import exit_code_for
from aimos.identity import agents
from aimos.identity.epochs import load_signer
from aimos.identity.requests import sign_request
from aimos.learning.outcomes import record_outcome
from aimos.memory.save import save
from aimos.recall.pipeline import recall
from aimos.store.connection import write_transaction
from aimos.verify.brain.verifier import verify_brain
from aimos.vocabulary import PATH_OUTCOME, PATH_RECALL, PATH_SAVE

pytestmark = pytest.mark.timeout(300)


def _now() -> int:
    import time

    return int(time.time())


def _setup(brain: Any) -> tuple[str, str]:
    t = _now()
    mid = save(
        brain.conn,
        brain.housekeeper,
        sign_request(
            brain.agent, build_save_body(company_id="personal", value="zebra crossing at dawn"), PATH_SAVE, t
        ),
        t,
    ).memory_id
    got = recall(
        brain.conn,
        brain.housekeeper,
        sign_request(brain.agent, build_recall_body(query="zebra dawn"), PATH_RECALL, t),
        t,
    )
    return mid, got.receipt["receipt_id"]


def _feedback(brain: Any, signer: Any, mid: str, receipt: str, outcome: str = "good") -> Any:
    t = _now()
    body = build_outcome_body(memory_id=mid, receipt_id=receipt, outcome=outcome)
    return record_outcome(brain.conn, brain.housekeeper, sign_request(signer, body, PATH_OUTCOME, t), t)


def test_copied_outcome_rows_are_refused(brain: Any) -> None:
    mid, receipt = _setup(brain)
    _feedback(brain, brain.agent, mid, receipt)
    row = the_row(brain.conn, "SELECT * FROM outcomes WHERE memory_id = ?", (mid,))
    forged = dict(row, outcome_id="00000000-0000-4000-8000-00000000abcd")
    with pytest.raises(IntegrityError):
        with write_transaction(brain.conn):
            brain.conn.execute(
                f"INSERT INTO outcomes ({', '.join(forged)}) VALUES ({', '.join('?' * len(forged))})",
                tuple(forged.values()),
            )
    assert the_row(brain.conn, "SELECT COUNT(*) AS n FROM outcomes")["n"] == 1


def test_forged_weight_chain_fails_recall_closed(brain: Any, tmp_path: Path) -> None:
    mid, receipt = _setup(brain)
    _feedback(brain, brain.agent, mid, receipt)
    raw = apsw.Connection(str(brain.home / "brain.sqlite3"))  # no registered functions: an outside edit
    raw.execute("PRAGMA foreign_keys = OFF")
    raw.execute("DROP TRIGGER weight_projections_verify_insert")
    raw.execute("DROP TRIGGER weight_projections_seal_aware")
    raw.execute("DROP TRIGGER memories_no_update")
    raw.execute("DROP INDEX weight_projections_no_fork")
    head = raw.execute("SELECT * FROM weight_projections").fetchall()[0]
    raw.execute(
        "INSERT INTO weight_projections VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            "00000000-0000-4000-8000-0000000000f1",
            head[1],
            mid,
            "00000000-0000-4000-8000-0000000000f2",
            1165,
            2900,
            "aa" * 32,
            head[8],
            "bb" * 32,
            "cc" * 32,
            "AAAA",
            head[11],
            head[12],
        ),
    )
    raw.execute("UPDATE memories SET retrieval_weight_milli = 2900 WHERE memory_id = ?", (mid,))
    raw.close()
    t = _now()
    with pytest.raises(IntegrityError) as err:
        recall(
            brain.conn,
            brain.housekeeper,
            sign_request(brain.agent, build_recall_body(query="zebra dawn"), PATH_RECALL, t),
            t,
        )
    assert exit_code_for(err.value) == 5 and mid in err.value.message
    assert not verify_brain(brain.conn).ok


def test_verifier_survives_a_deleted_reweight_node(brain: Any) -> None:
    mid, receipt = _setup(brain)
    _feedback(brain, brain.agent, mid, receipt)
    raw = apsw.Connection(str(brain.home / "brain.sqlite3"))
    raw.execute("PRAGMA foreign_keys = OFF")
    raw.execute("DROP TRIGGER memory_provenance_no_delete")
    raw.execute("DELETE FROM memory_provenance WHERE event_type = 'REWEIGHT'")
    raw.close()
    record = next(r for r in verify_brain(brain.conn).records if r.memory_id == mid)
    assert not record.ok and record.reason == "provenance_binding_invalid"


def test_outcomes_bind_to_the_recalling_agent_and_a_writable_grant(brain: Any) -> None:
    mid, receipt = _setup(brain)
    now = _now()
    agents.enroll_agent(
        brain.conn, brain.master, brain.keystore, agent_id="low", now=now, clearance=2, data_class="public"
    )
    agents.enroll_agent(brain.conn, brain.master, brain.keystore, agent_id="ro", now=now, write_allowed=False)
    for agent_id in ("low", "ro"):
        signer = load_signer(brain.conn, brain.keystore, agent_id, now)
        with pytest.raises(GrantError):
            _feedback(brain, signer, mid, receipt)
    assert the_row(brain.conn, "SELECT COUNT(*) AS n FROM outcomes")["n"] == 0
