"""The recall pipeline in-process against a real installed brain (the `brain` fixture of
tests/conftest.py: real SQLite file, file keystore, real keys), for what the CLI cannot send:
request fields that try to raise the grant's ceilings, agents without a recall grant, and
queries handed to the pipeline exactly as typed. SPEC sections 3 and 8.
"""

from __future__ import annotations

import json
import time
from typing import Any

import apsw
import pytest

from aimos.actions.bodies import build_recall_body, build_save_body
from aimos.errors import GrantError
from aimos.exit_codes import exit_code_for
from aimos.identity.agents import enroll_agent
from aimos.identity.epochs import enrol_epoch
from aimos.identity.grants import issue_grant
from aimos.identity.requests import sign_request
from aimos.identity.signer import Signer
from aimos.memory.save import save
from aimos.recall.pipeline import RecallResult, recall
from aimos.recall.receipts import receipt_document, verify_receipt_in_brain
from aimos.store.connection import write_transaction
from aimos.store.meta import brain_meta
from aimos.verify.receipt import verdict
from aimos.vocabulary import PATH_RECALL, PATH_SAVE

pytestmark = pytest.mark.timeout(60)

IDENTITY_EXIT = 6
TABLES = ("recall_receipts", "request_nonces", "events", "memories")


def counts(conn: Any) -> dict[str, int]:
    return {t: int(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchall()[0][0]) for t in TABLES}


def now() -> int:
    return int(time.time())


def put(brain: Any, text: str, **fields: Any) -> str:
    body = build_save_body(company_id="personal", value=text, **fields)
    t = now()
    result = save(brain.conn, brain.housekeeper, sign_request(brain.agent, body, PATH_SAVE, t), t)
    assert result.status in ("saved", "quarantined"), result
    return result.memory_id


def ask(brain: Any, signer: Signer, query: str, **fields: Any) -> RecallResult:
    body = build_recall_body(query=query, **fields)
    t = now()
    return recall(brain.conn, brain.housekeeper, sign_request(signer, body, PATH_RECALL, t), t)


def result_ids(result: RecallResult) -> list[str]:
    return [r["memory_id"] for r in result.results]


def refused(brain: Any, signer: Signer, query: str, **fields: Any) -> GrantError:
    before = counts(brain.conn)
    with pytest.raises(GrantError) as caught:
        ask(brain, signer, query, **fields)
    assert exit_code_for(caught.value) == IDENTITY_EXIT
    assert caught.value.hint, "every refusal says what to do next"
    assert counts(brain.conn) == before, "a refused recall recorded something (receipt, nonce or event)"
    return caught.value


# --- the grant bounds the request; request fields can only narrow it ------------------------------
@pytest.mark.parametrize(
    "fields",
    [
        {"clearance_level": 11},
        {"clearance_level": 12},
        {"data_class": "restricted"},
        {"company_id": "someone-else"},
        {"clearance_level": 11, "data_class": "restricted"},
    ],
    ids=["clearance-11", "clearance-12", "restricted", "other-company", "both"],
)
def test_a_request_field_cannot_raise_the_grant(brain: Any, fields: dict[str, Any]) -> None:
    # the installed cli agent's grant: clearance <= 10, data class <= confidential, company personal
    put(brain, "ocelot habitat survey", clearance_level=10, data_class="confidential")
    refused(brain, brain.agent, "ocelot", **fields)


def test_a_low_grant_cannot_be_raised_by_the_request(brain: Any) -> None:
    t = now()
    low, _grant = enroll_agent(brain.conn, brain.master, brain.keystore, agent_id="low", now=t, clearance=3)
    secret = put(brain, "ocelot night patrol route", clearance_level=7)
    for level in (4, 7, 10):
        exc = refused(brain, low, "ocelot patrol", clearance_level=level)
        assert "3" in str(exc)
    # asking within the grant works and still never sees the clearance 7 memory
    result = ask(brain, low, "ocelot patrol route", clearance_level=3)
    assert secret not in json.dumps(result.to_json(show_withheld=True))


def test_request_fields_narrow_the_scope(brain: Any) -> None:
    high = put(brain, "ocelot breeding program", clearance_level=7, data_class="confidential")
    low = put(brain, "ocelot breeding season", clearance_level=2, data_class="public")
    assert set(result_ids(ask(brain, brain.agent, "ocelot breeding"))) == {high, low}
    narrowed = ask(brain, brain.agent, "ocelot breeding", clearance_level=5)
    assert result_ids(narrowed) == [low]
    assert json.loads(narrowed.receipt["command"])["clearance_level"] == 5
    by_class = ask(brain, brain.agent, "ocelot breeding", data_class="public")
    assert result_ids(by_class) == [low]
    assert json.loads(by_class.receipt["command"])["data_class"] == "public"


def test_clearance_and_data_class_ceilings_hold_in_the_whole_receipt(brain: Any) -> None:
    t = now()
    low, _ = enroll_agent(brain.conn, brain.master, brain.keystore, agent_id="low", now=t, clearance=3)
    internal, _ = enroll_agent(
        brain.conn, brain.master, brain.keystore, agent_id="internal-only", now=t, data_class="internal"
    )
    c7 = put(brain, "pangolin scale export permit", clearance_level=7)
    conf = put(brain, "pangolin scale auction price", data_class="confidential", clearance_level=2)
    open_ = put(brain, "pangolin scale diet notes", clearance_level=2, data_class="internal")
    as_low = ask(brain, low, "pangolin scale")
    assert c7 not in result_ids(as_low) and open_ in result_ids(as_low)
    as_internal = ask(brain, internal, "pangolin scale")
    assert conf not in result_ids(as_internal) and open_ in result_ids(as_internal)
    # not even as a withheld id or a considered candidate
    for result, hidden in ((as_low, c7), (as_internal, conf)):
        doc = receipt_document(brain.conn, result.receipt["receipt_id"])
        assert hidden not in json.dumps(doc)
        assert hidden not in json.dumps(result.to_json(show_withheld=True))
        assert verdict(
            verify_receipt_in_brain(
                brain.conn, result.receipt["receipt_id"], expected_master_fingerprint=brain.master.fingerprint
            )
        )


# --- agents without a recall grant --------------------------------------------------------------
def _epoch_without_grant(brain: Any, agent_id: str, *, grant_allowed: bool | None) -> Signer:
    t = now()
    with write_transaction(brain.conn):
        meta = brain_meta(brain.conn)
        signer = enrol_epoch(
            brain.conn,
            brain.master,
            brain.keystore,
            agent_id=agent_id,
            role="agent",
            now=t,
            device_fp=meta["device_fp"],
        )
        if grant_allowed is not None:
            issue_grant(
                brain.conn,
                brain.master,
                company_id=meta["company_id"],
                agent_id=agent_id,
                valid_from=signer.valid_from,
                clearance_ceiling=10,
                data_class_ceiling="confidential",
                write_allowed=True,
                now=t,
                allowed=grant_allowed,
            )
    return signer


def test_an_epoch_without_a_grant_cannot_recall(brain: Any) -> None:
    put(brain, "capybara pool schedule")
    signer = _epoch_without_grant(brain, "nogrant", grant_allowed=None)
    exc = refused(brain, signer, "capybara")
    assert "grant" in str(exc).lower()


def test_a_grant_that_does_not_allow_recall_refuses_it(brain: Any) -> None:
    put(brain, "capybara pool schedule")
    signer = _epoch_without_grant(brain, "denied", grant_allowed=False)
    exc = refused(brain, signer, "capybara")
    assert "grant" in str(exc).lower()


def test_a_read_only_grant_still_recalls(brain: Any) -> None:
    mid = put(brain, "capybara pool schedule")
    t = now()
    reader, grant = enroll_agent(
        brain.conn, brain.master, brain.keystore, agent_id="reader", now=t, write_allowed=False
    )
    assert not grant["write_allowed"]
    before = counts(brain.conn)
    result = ask(brain, reader, "capybara pool")
    assert result_ids(result) == [mid]
    after = counts(brain.conn)
    assert after["recall_receipts"] == before["recall_receipts"] + 1
    assert after["request_nonces"] == before["request_nonces"] + 1
    row = brain.conn.execute(
        "SELECT agent_id FROM recall_receipts WHERE receipt_id = ?", (result.receipt["receipt_id"],)
    ).fetchall()
    assert row == [("reader",)]


# --- queries are text, whatever they contain -------------------------------------------------------
SYNTAX_QUERIES = ['"unbalanced', "NEAR(a b)", "a AND OR b", "(x", "col:value", "^start", "-x", "x NOT"]


def test_fts_syntax_in_queries_is_searched_as_text(brain: Any) -> None:
    mid = put(brain, "unbalanced start near value col x b")
    put(brain, "an unrelated memory about llamas")
    for query in SYNTAX_QUERIES:
        result = ask(brain, brain.agent, query)
        assert mid in result_ids(result), f"{query!r} did not find the memory"
    star = ask(brain, brain.agent, "*")
    assert star.results == [] and star.abstained


def test_a_refused_recall_leaves_no_partial_state(brain: Any) -> None:
    """A usage error found after the request was verified rolls the nonce back too."""
    from aimos.errors import UsageError

    before = counts(brain.conn)
    for query, limit in (("x", 0), ("x", 201), ("   ", 10)):
        body = build_recall_body(query=query, limit=limit)
        t = now()
        with pytest.raises(UsageError):
            recall(brain.conn, brain.housekeeper, sign_request(brain.agent, body, PATH_RECALL, t), t)
    assert counts(brain.conn) == before


@pytest.mark.parametrize("value", ["yes", "true", 1, 0, None, [], {"on": True}])
def test_a_guides_field_that_is_not_a_boolean_is_refused(brain: Any, value: Any) -> None:
    """The signed request's `guides` must be true or false: anything else is a usage error (exit 2)
    naming the field and the fix, and the recall records nothing (no receipt, nonce or event)."""
    from aimos.errors import UsageError

    put(brain, "the harbour ferry leaves at noon")
    before = counts(brain.conn)
    body = {**build_recall_body(query="harbour ferry"), "guides": value}
    t = now()
    with pytest.raises(UsageError) as caught:
        recall(brain.conn, brain.housekeeper, sign_request(brain.agent, body, PATH_RECALL, t), t)
    assert exit_code_for(caught.value) == 2
    assert "guides must be true or false" in str(caught.value) and caught.value.hint
    assert counts(brain.conn) == before


def test_the_guides_field_is_sent_only_when_true(brain: Any) -> None:
    """A recall that does not ask for the guides signs the body it always did, and its receipt's
    command is as before; one that asks says so in both."""
    mid = put(brain, "the harbour ferry leaves at noon")
    assert "guides" not in build_recall_body(query="harbour ferry")
    plain = ask(brain, brain.agent, "harbour ferry")
    asked = ask(brain, brain.agent, "harbour ferry", guides=True)
    assert result_ids(plain) == result_ids(asked) == [mid]
    plain_doc = receipt_document(brain.conn, plain.receipt["receipt_id"])
    asked_doc = receipt_document(brain.conn, asked.receipt["receipt_id"])
    assert "guides" not in plain_doc["request"]["body"] and "guides" not in plain_doc["command"]
    assert asked_doc["request"]["body"]["guides"] is True and asked_doc["command"]["guides"] is True
    for result in (plain, asked):
        checks = verify_receipt_in_brain(
            brain.conn, result.receipt["receipt_id"], expected_master_fingerprint=brain.master.fingerprint
        )
        assert verdict(checks), checks


def test_index_tables_hold_no_text(brain: Any) -> None:
    """Contentless FTS5: the text column reads back NULL (a second reader, plain apsw)."""
    put(brain, "the vault word is zanzibarquux", key="vault")
    reader = apsw.Connection(str(brain.home / "brain.sqlite3"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        for table in ("memory_fts", "memory_context_fts"):
            texts = [t for (t,) in reader.execute(f"SELECT text FROM {table}")]
            # notes are only in memory_fts; memory_context_fts holds conversation turns
            assert all(t is None for t in texts), (table, texts)
            assert texts or table == "memory_context_fts", table
        shadow = {
            n for (n,) in reader.execute("SELECT name FROM sqlite_master WHERE name LIKE 'memory%fts%'")
        }
        assert "memory_fts_content" not in shadow and "memory_context_fts_content" not in shadow
        # the index still finds it (by its terms), through the MATCH operator only
        hits = reader.execute("SELECT rowid FROM memory_fts WHERE memory_fts MATCH 'zanzibarquux'").fetchall()
        assert len(hits) == 1
    finally:
        reader.close()
