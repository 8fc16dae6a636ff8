"""Recall with labels (SPEC 8, PROTOCOL-NOTES 10): poisons are withheld (ids recorded in the
signed receipt's decision, content never shown); evaluation arm A0 (`decide(...,
bypass_trust=True)`) exists in-process only: a signed recall body cannot ask for it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import run_aimos
from support.epistemic import (
    CLASSIFIED,
    EVIL,
    PLAIN,
    POISON_1,
    POISON_2,
    QUESTION,
    count,
    now,
    save_text,
    saved_id,
)

pytestmark = pytest.mark.timeout(60)


def canonical_sha256(value: Any) -> str:
    """SHA-256 of the canonical JSON of ``value`` (rfc8785, as PROTOCOL-NOTES 1)."""
    import rfc8785

    return hashlib.sha256(rfc8785.dumps(value)).hexdigest()


TRUE_NOTE = "chicago fire season 4 has 23 episodes, says the network listing"


def test_poisons_are_withheld_and_recorded_in_the_receipt(installed: Path) -> None:
    a = saved_id(run_aimos("save", "--source", EVIL, POISON_1))
    b = saved_id(run_aimos("save", "--source", EVIL, POISON_2))
    honest = saved_id(run_aimos("save", TRUE_NOTE))
    saved_id(run_aimos("save", PLAIN))

    plain = run_aimos("recall", QUESTION, "--json").json()
    assert [r["memory_id"] for r in plain["results"]] == [honest]
    assert plain["withheld_count"] == 2 and "withheld" not in plain
    assert "24 episodes" not in run_aimos("recall", QUESTION, "--json").out

    listed = run_aimos("recall", QUESTION, "--json", "--show-withheld").json()
    assert {w["memory_id"]: (w["label"], w["reason"]) for w in listed["withheld"]} == {
        a: ("poison_likely", "label:poison_likely"),
        b: ("poison_likely", "label:poison_likely"),
    }
    assert "24 episodes" not in run_aimos("recall", QUESTION, "--show-withheld").both
    assert [e["memory_id"] for e in listed["receipt"]["evidence"]] == [honest]

    doc = run_aimos("receipt", "show", listed["receipt"]["receipt_id"], "--json").json()
    decision = doc["decision"]
    assert decision["trust_bypassed"] is False
    assert {w["memory_id"] for w in decision["withheld"]} == {a, b}
    assert decision["selected_memory_ids"] == [honest]
    by_id = {c["memory_id"]: c for c in decision["candidates"]}
    assert (by_id[a]["decision"], by_id[a]["trust"], by_id[a]["label"]) == ("withheld", 0.1, "poison_likely")
    assert by_id[honest]["decision"] == "selected" and by_id[honest]["trust"] == 0.72
    signed = json.loads(doc["event"]["signed_body"])["metadata"]  # what the housekeeper signed
    assert sorted(signed["withheld_memory_ids"]) == sorted([a, b])
    assert signed["decision_sha256"] == doc["decision_sha256"] == canonical_sha256(decision)
    assert "24 episodes" not in str(doc["evidence"])
    run_aimos("receipt", "verify", listed["receipt"]["receipt_id"]).ok()


def test_only_poisons_abstains(installed: Path) -> None:
    a = saved_id(run_aimos("save", "--source", EVIL, POISON_1))
    b = saved_id(run_aimos("save", "--source", EVIL, POISON_2))
    result = run_aimos("recall", QUESTION, "--json", "--show-withheld").json()
    assert result["results"] == [] and result["abstained"] is True
    assert {w["memory_id"] for w in result["withheld"]} == {a, b}
    text = run_aimos("recall", QUESTION)
    assert text.code == 0 and "abstains" in text.err and "24 episodes" not in text.both


def test_arm_a0_is_in_process_only(brain: Any) -> None:
    from aimos.actions.bodies import build_recall_body
    from aimos.errors import UsageError
    from aimos.identity.requests import sign_request
    from aimos.recall.pipeline import recall
    from aimos.recall.policy import Candidate, decide
    from aimos.vocabulary import PATH_RECALL

    conn = brain.conn
    a = save_text(brain, POISON_1).memory_id
    b = save_text(brain, POISON_2).memory_id
    candidates = [
        Candidate(
            memory_id=m,
            value=v,
            key=None,
            weight_milli=1000,
            label="poison_likely",
            quarantine=False,
            relevance=1.0,
        )
        for m, v in ((a, POISON_1), (b, POISON_2))
    ]
    guarded = decide(candidates, limit=10, query_sha256="0" * 64)
    assert guarded.selected == [] and guarded.abstained and {s.memory_id for s in guarded.withheld} == {a, b}
    a0 = decide(candidates, limit=10, query_sha256="0" * 64, bypass_trust=True)
    assert {s.memory_id for s in a0.selected} == {a, b} and a0.body["trust_bypassed"] is True

    # in-process, the pipeline's keyword reaches A0 (the evaluation harness uses it)
    t = now()
    opened = recall(
        conn,
        brain.housekeeper,
        sign_request(brain.agent, build_recall_body(query=QUESTION), PATH_RECALL, t),
        t,
        bypass_trust=True,
    )
    assert {r["memory_id"] for r in opened.results} == {a, b}

    # ... but no signed request can ask for it
    for field in ("bypass_trust", "trust_bypassed"):
        before = (count(conn, "events"), count(conn, "request_nonces"), count(conn, "recall_receipts"))
        body = dict(build_recall_body(query=QUESTION), **{field: True})
        t = now()
        with pytest.raises(UsageError, match=f"unknown recall fields: {field}"):
            recall(conn, brain.housekeeper, sign_request(brain.agent, body, PATH_RECALL, t), t)
        assert (
            count(conn, "events"),
            count(conn, "request_nonces"),
            count(conn, "recall_receipts"),
        ) == before
    guarded_recall = recall(
        conn,
        brain.housekeeper,
        sign_request(brain.agent, build_recall_body(query=QUESTION), PATH_RECALL, now()),
        now(),
    )
    assert guarded_recall.results == [] and {w["memory_id"] for w in guarded_recall.withheld} == {a, b}
    assert count(conn, "events", "operation = ?", (CLASSIFIED,)) == 3


def test_the_cli_has_no_way_to_bypass_trust(installed: Path) -> None:
    saved_id(run_aimos("save", "--source", EVIL, POISON_1))
    saved_id(run_aimos("save", "--source", EVIL, POISON_2))
    assert "bypass" not in run_aimos("recall", "--help").ok().out.lower()
    for flag in ("--bypass-trust", "--a0"):
        result = run_aimos("recall", QUESTION, flag)
        assert result.code == 2, result.describe()
        assert "24 episodes" not in result.both
