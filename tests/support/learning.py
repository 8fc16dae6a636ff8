"""Helpers for the outcome and reweighting tests (SPEC section 6, PROTOCOL-NOTES sections 3, 7, 8).

Imported by the test modules of this folder as a plain module (tests/ is not a package; pytest puts
this folder on sys.path). Nothing here mocks aimos: saves, recalls and outcomes are real signed
requests through the real writer on a real brain.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw

from aimos.actions.bodies import build_outcome_body, build_recall_body, build_save_body
from aimos.identity.requests import SignedRequest, sign_request
from aimos.identity.signer import Signer
from aimos.learning.outcomes import OutcomeResult, record_outcome
from aimos.ledger.events import read_event, read_provenance
from aimos.memory.save import save
from aimos.recall.pipeline import RecallResult, recall
from aimos.store.connection import one, rows
from aimos.verify.kit.valence import WeightLedger
from aimos.vocabulary import PATH_OUTCOME, PATH_RECALL, PATH_SAVE, VALENCE_RULE_V2
from support.cells import cell_int

PASSPHRASE = "correct horse battery staple"
CANARY = "SECRET-0A1B2C3D"

# The tables whose row counts a refused outcome must leave alone.
OUTCOME_TABLES = ("outcomes", "weight_projections", "memory_provenance", "events", "request_nonces")


def now() -> int:
    return int(time.time())


def put(brain: Any, text: str, **fields: Any) -> str:
    """Save ``text`` as the brain's `cli` agent; the new memory's id."""
    body = build_save_body(company_id="personal", value=text, **fields)
    t = now()
    result = save(brain.conn, brain.housekeeper, sign_request(brain.agent, body, PATH_SAVE, t), t)
    assert result.status in ("saved", "quarantined"), result
    return result.memory_id


def ask(brain: Any, query: str, *, limit: int = 20, signer: Signer | None = None) -> RecallResult:
    body = build_recall_body(query=query, limit=limit)
    t = now()
    return recall(brain.conn, brain.housekeeper, sign_request(signer or brain.agent, body, PATH_RECALL, t), t)


def disclosing_receipt(brain: Any, query: str, *memory_ids: str, signer: Signer | None = None) -> str:
    """Recall ``query`` (as ``signer``, default the `cli` agent) and check the receipt disclosed every
    one of ``memory_ids``; its id."""
    result = ask(brain, query, signer=signer)
    disclosed = {r["memory_id"] for r in result.results}
    missing = set(memory_ids) - disclosed
    assert not missing, f"recall {query!r} did not disclose {missing}: {result.results}"
    return str(result.receipt["receipt_id"])


def outcome_request(
    brain: Any,
    memory_id: str,
    receipt_id: str,
    outcome: str = "good",
    *,
    scope: str = "principal_state",
    signer: Signer | None = None,
    t: int | None = None,
) -> SignedRequest:
    body = build_outcome_body(memory_id=memory_id, receipt_id=receipt_id, outcome=outcome, target_scope=scope)
    return sign_request(signer or brain.agent, body, PATH_OUTCOME, now() if t is None else t)


def give(
    brain: Any,
    memory_id: str,
    receipt_id: str,
    outcome: str = "good",
    *,
    scope: str = "principal_state",
    t: int | None = None,
    signer: Signer | None = None,
) -> OutcomeResult:
    """One signed outcome through the writer (signed by ``signer``, default the `cli` agent)."""
    stamp = now() if t is None else t
    request = outcome_request(brain, memory_id, receipt_id, outcome, scope=scope, t=stamp, signer=signer)
    return record_outcome(brain.conn, brain.housekeeper, request, stamp)


def give_anew(
    brain: Any,
    memory_id: str,
    query: str,
    outcome: str = "good",
    *,
    scope: str = "principal_state",
    t: int | None = None,
    signer: Signer | None = None,
) -> OutcomeResult:
    """Recall ``query`` anew (it must disclose ``memory_id``), then one outcome about that recall:
    under valence rule 2 only one principal outcome per agent, recall receipt and memory moves the
    weight, so every outcome meant to move it needs a recall of its own."""
    receipt = disclosing_receipt(brain, query, memory_id, signer=signer)
    return give(brain, memory_id, receipt, outcome, scope=scope, t=t, signer=signer)


def enrol(brain: Any, agent_id: str) -> Signer:
    """Enrol another agent (its own key and write grant) in the brain; its signer."""
    from aimos.identity.agents import enroll_agent

    signer, _grant = enroll_agent(brain.conn, brain.master, brain.keystore, agent_id=agent_id, now=now())
    return signer


def ledger_replay(conn: apsw.Connection, memory_id: str) -> WeightLedger:
    """The memory's principal outcomes as stored (agent, receipt, reward, in write order) replayed
    through rule 2 from the default weight: what the writer should have given."""
    ledger = WeightLedger(1000)
    for o in rows(
        conn,
        "SELECT agent_id, receipt_id, reward_sign FROM outcomes WHERE memory_id = ?"
        " AND target_scope = 'principal_state' ORDER BY rowid",
        (memory_id,),
    ):
        ledger.step(o["agent_id"], o["receipt_id"], int(o["reward_sign"]), VALENCE_RULE_V2)
    return ledger


def counts(conn: apsw.Connection, tables: Iterable[str] = OUTCOME_TABLES) -> dict[str, int]:
    return {t: cell_int(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchall()[0][0]) for t in tables}


def weight(conn: apsw.Connection, memory_id: str) -> int:
    row = one(conn, "SELECT retrieval_weight_milli FROM memories WHERE memory_id = ?", (memory_id,))
    assert row is not None, memory_id
    return int(row["retrieval_weight_milli"])


def projections(conn: apsw.Connection, memory_id: str) -> list[dict[str, Any]]:
    return rows(conn, "SELECT * FROM weight_projections WHERE memory_id = ? ORDER BY rowid", (memory_id,))


def reweight_nodes(conn: apsw.Connection, memory_id: str) -> list[dict[str, Any]]:
    """The memory's REWEIGHT nodes as the rows they stand for (their signed bodies as text)."""
    return [
        read_provenance(r)
        for r in rows(
            conn,
            "SELECT * FROM memory_provenance WHERE memory_id = ? AND event_type = 'REWEIGHT' ORDER BY rowid",
            (memory_id,),
        )
    ]


def events_of(conn: apsw.Connection, operation: str, memory_id: str) -> list[dict[str, Any]]:
    """The memory's ``operation`` events, each read as the row it stands for (its body as signed)."""
    found = rows(
        conn,
        "SELECT * FROM events WHERE operation = ? AND subject_memory_id = ? ORDER BY rowid",
        (operation, memory_id),
    )
    return [read_event(r) for r in found]


def principal_rewards(conn: apsw.Connection, memory_id: str) -> list[int]:
    return [
        int(r["reward_sign"])
        for r in rows(
            conn,
            "SELECT reward_sign FROM outcomes WHERE memory_id = ? AND target_scope = 'principal_state'"
            " ORDER BY created_at, rowid",
            (memory_id,),
        )
    ]


@dataclass
class FreshBrain:
    """An installed brain in its own temporary AIMOS_HOME (the shape of tests/conftest.py `brain`)."""

    home: Path
    conn: Any
    keystore: Any
    brain_id: str
    master: Any
    agent: Signer
    housekeeper: Signer


@contextlib.contextmanager
def fresh_brain() -> Iterator[FreshBrain]:
    """Install a brain in a new temporary AIMOS_HOME (for tests that need one per example,
    such as hypothesis tests, where a function-scoped fixture would be shared between examples)."""
    from aimos.identity.epochs import load_signer
    from aimos.identity.keystore import open_keystore
    from aimos.identity.master import unlock_master
    from aimos.installer.setup import InstallOptions, install
    from aimos.store.connection import open_writer, seal_with
    from aimos.vocabulary import HOUSEKEEPER

    saved = {k: os.environ.get(k) for k in ("AIMOS_HOME", "AIMOS_KEYSTORE")}
    with tempfile.TemporaryDirectory(prefix="aimos-learning-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir(mode=0o700)
        os.environ["AIMOS_HOME"] = str(home)
        os.environ.pop("AIMOS_KEYSTORE", None)
        conn = None
        try:
            t = now()
            result = install(InstallOptions(keystore="file", guides=False), PASSPHRASE, t)
            conn = open_writer()
            keystore = open_keystore("file", result.brain_id)
            master = unlock_master(conn, keystore, PASSPHRASE)
            agent = load_signer(conn, keystore, "cli", t)
            housekeeper = load_signer(conn, keystore, HOUSEKEEPER, t)
            seal_with(conn, housekeeper)
            yield FreshBrain(home, conn, keystore, result.brain_id, master, agent, housekeeper)
        finally:
            if conn is not None:
                conn.close()
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
