"""Trust only goes up with the master (issue: authority that matches what people expect).

The labels are ordered by the trust recall gives them; a judgment that raises a memory's trust from
its current label needs the master's signature beside the agent's (the writer, the store's trigger
and both verifiers), one that keeps or lowers it needs only the agent's. The words a person types
(poison, not-poison, support, dispute) cannot be misread; the old ones are refused with the new."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest
from support.cli import PASSPHRASE_ENV, assert_refused, run_aimos
from support.epistemic import EVIL, POISON_1, POISON_2, counts, label_of, memory_row, now, save_text, saved_id

from aimos import vocabulary
from aimos.recall.policy import LABEL_TRUST

pytestmark = pytest.mark.timeout(180)

WATCHED = ("memory_classifications", "events", "request_nonces", "memories")


def db(home: Path) -> Path:
    return home / "brain.sqlite3"


def test_the_trust_order_is_the_order_recall_trusts_labels_in() -> None:
    """TRUST_RANK must agree with recall's multipliers: a higher rank never means less trust, and
    withheld labels rank below every disclosed one."""
    assert set(vocabulary.TRUST_RANK) == set(vocabulary.LABELS) == set(LABEL_TRUST)
    for a, b in itertools.permutations(vocabulary.LABELS, 2):
        (ta, wa), (tb, wb) = LABEL_TRUST[a], LABEL_TRUST[b]
        key_a, key_b = (not wa, ta), (not wb, tb)
        if key_a < key_b:
            assert vocabulary.TRUST_RANK[a] < vocabulary.TRUST_RANK[b], (a, b)
        if key_a == key_b:
            assert vocabulary.TRUST_RANK[a] == vocabulary.TRUST_RANK[b], (a, b)
    assert vocabulary.raises_trust(vocabulary.POISON_CONFIRMED, vocabulary.DISPUTED)
    assert not vocabulary.raises_trust(vocabulary.UNVERIFIED, vocabulary.DISPUTED)
    assert not vocabulary.raises_trust(vocabulary.SUPPORTED, vocabulary.POISON_REFUTED)


@pytest.mark.parametrize(
    ("start", "judgment"),
    list(
        itertools.product(
            ("unverified", "poison_likely", "poison_confirmed", "supported"), vocabulary.JUDGMENTS
        )
    ),
)
def test_the_writer_asks_for_the_master_exactly_when_trust_rises(
    brain: Any, start: str, judgment: str
) -> None:
    """Every (current label, judgment) pair: without the master the writer refuses exactly the
    judgments that raise trust, changing nothing; with the master every one is recorded."""
    from aimos import errors
    from aimos.actions.bodies import build_label_body
    from aimos.epistemic.chain import judge
    from aimos.identity.requests import sign_request
    from aimos.vocabulary import PATH_LABEL

    conn = brain.conn
    memory_id = save_text(
        brain, POISON_1 if start.startswith("poison") else "the boiler is serviced in may"
    ).memory_id
    if start == "poison_confirmed":
        body = build_label_body(company_id="personal", memory_id=memory_id, judgment="confirm", reason="seen")
        t = now()
        judge(conn, brain.housekeeper, sign_request(brain.agent, body, PATH_LABEL, t), t)
    elif start == "supported":
        body = build_label_body(company_id="personal", memory_id=memory_id, judgment="support", reason="mine")
        t = now()
        judge(conn, brain.housekeeper, sign_request(brain.agent, body, PATH_LABEL, t), t, master=brain.master)
    elif start == "poison_likely":
        save_text(brain, POISON_2)
    assert memory_row(conn, memory_id)["epistemic_label"] == start
    target = vocabulary.JUDGMENTS[judgment][0]
    body = build_label_body(company_id="personal", memory_id=memory_id, judgment=judgment, reason="why")
    t = now()
    request = sign_request(brain.agent, body, PATH_LABEL, t)
    if vocabulary.raises_trust(start, target):
        with pytest.raises(errors.PassphraseError, match="master"):
            judge(conn, brain.housekeeper, request, t)
        assert memory_row(conn, memory_id)["epistemic_label"] == start
        t = now()
        request = sign_request(brain.agent, body, PATH_LABEL, t)
        moved = judge(conn, brain.housekeeper, request, t, master=brain.master)
        assert moved.label == target
        assert "master_signature_b64u" in moved_evidence(conn, memory_id)
    else:
        moved = judge(conn, brain.housekeeper, request, t)
        assert moved.label == target
        assert "master_signature_b64u" not in moved_evidence(conn, memory_id)
    assert moved_evidence(conn, memory_id)["authority_rule"] == vocabulary.JUDGMENT_AUTHORITY_V2


def moved_evidence(conn: Any, memory_id: str) -> dict[str, Any]:
    from aimos.verify.chains.labels import label_history

    evidence = label_history(conn, memory_id)[-1]["evidence"]
    assert isinstance(evidence, dict)
    return evidence


def test_the_trigger_refuses_a_judgment_without_the_current_rule(brain: Any) -> None:
    """A housekeeper-signed explicit row whose evidence records no judgment rule (what an aimos
    from before this rule would write) is refused by the store, even one that lowers trust."""
    from aimos import errors
    from aimos.actions.bodies import build_label_body
    from aimos.epistemic.chain import append_classification
    from aimos.identity.requests import sign_request
    from aimos.store.connection import write_transaction
    from aimos.vocabulary import PATH_LABEL

    conn = brain.conn
    memory_id = save_text(brain, "the spare key is under the blue pot").memory_id
    t = now()
    body = build_label_body(company_id="personal", memory_id=memory_id, judgment="dispute", reason="moved")
    request = sign_request(brain.agent, body, PATH_LABEL, t)
    evidence = {"judgment": "dispute", "nonce": request.nonce, "ts": request.ts, "body": request.body}
    with pytest.raises(errors.IntegrityError, match="master"), write_transaction(conn):
        append_classification(
            conn,
            brain.housekeeper,
            memory_id,
            label="disputed",
            confidence_milli=800,
            basis="explicit",
            now=t,
            reason="moved",
            evidence=evidence,
        )
    assert memory_row(conn, memory_id)["epistemic_label"] == "unverified"


def test_a_judgment_under_the_first_rule_keeps_verifying(brain: Any) -> None:
    """A brain judged by an older aimos: an agent-only dispute of a suspected poison (allowed then,
    no rule recorded) still verifies in both verifiers; the same row under the current rule does
    not."""
    from support.epistemic import without_judgment_trigger

    from aimos.actions.bodies import build_label_body
    from aimos.epistemic.chain import append_classification
    from aimos.identity.requests import sign_request
    from aimos.store.connection import write_transaction
    from aimos.verify.brain.parity import verify_everything
    from aimos.vocabulary import PATH_LABEL

    conn = brain.conn
    old = save_text(brain, POISON_1).memory_id
    new = save_text(brain, POISON_2).memory_id
    assert memory_row(conn, old)["epistemic_label"] == "poison_likely"
    for memory_id, rule in ((old, {}), (new, {"authority_rule": vocabulary.JUDGMENT_AUTHORITY_V2})):
        t = now()
        body = build_label_body(company_id="personal", memory_id=memory_id, judgment="dispute", reason="x")
        request = sign_request(brain.agent, body, PATH_LABEL, t)
        evidence = {
            "judgment": "dispute",
            **rule,
            "nonce": request.nonce,
            "ts": request.ts,
            "body": request.body,
        }
        with without_judgment_trigger(conn), write_transaction(conn):
            append_classification(
                conn,
                brain.housekeeper,
                memory_id,
                label="disputed",
                confidence_milli=800,
                basis="explicit",
                now=t,
                reason="x",
                evidence=evidence,
            )
    report = verify_everything(conn, brain.master.fingerprint)
    failures = {f["memory_id"]: f["reason"] for f in report["in_database"]["failures"]}
    assert failures == {new: "epistemic_evidence_invalid"}
    assert report["portable"]["primary_reason"] == "epistemic_evidence_invalid"
    assert report["parity"] is True


def test_an_agent_alone_cannot_lift_a_persons_poison_verdict(installed: Path) -> None:
    """Through the real CLI: `label ID dispute --as lowbie` without the master passphrase on a
    confirmed poison exits 6 and changes nothing; with the passphrase it is recorded."""
    run_aimos("agent", "enroll", "lowbie").ok()
    poison = saved_id(run_aimos("save", "--source", EVIL, POISON_1))
    run_aimos("label", poison, "poison", "--reason", "a scam", "--as", "lowbie", unset=(PASSPHRASE_ENV,)).ok()
    assert label_of(db(installed), poison) == "poison_confirmed"
    before = counts(db(installed), *WATCHED)
    for word in ("dispute", "support", "not-poison"):
        result = run_aimos("label", poison, word, "--reason", "x", "--as", "lowbie", unset=(PASSPHRASE_ENV,))
        assert_refused(result, 6)
        assert "passphrase" in result.err.lower()
    assert counts(db(installed), *WATCHED) == before
    assert label_of(db(installed), poison) == "poison_confirmed"
    recalled = run_aimos("recall", "chicago fire season 4 episodes", "--json", "--show-withheld").json()
    assert poison in {w["memory_id"] for w in recalled["withheld"]}
    # with the master it is the person's call
    moved = run_aimos("label", poison, "dispute", "--reason", "I checked", "--as", "lowbie", "--json").json()
    assert (moved["previous_label"], moved["label"]) == ("poison_confirmed", "disputed")
    assert run_aimos("verify").ok()


def test_lowering_trust_needs_no_passphrase(installed: Path) -> None:
    note = saved_id(run_aimos("save", "the ferry leaves at noon"))
    env_free = (PASSPHRASE_ENV,)
    moved = run_aimos(
        "label", note, "dispute", "--reason", "timetable changed", "--json", unset=env_free
    ).json()
    assert (moved["previous_label"], moved["label"]) == ("unverified", "disputed")
    shown = run_aimos("show", note).ok().out
    assert "disputed" in shown


@pytest.mark.parametrize(("old", "new"), [("confirm", "poison"), ("refute", "not-poison")])
def test_the_old_judgment_words_are_refused_with_the_new_ones(installed: Path, old: str, new: str) -> None:
    note = saved_id(run_aimos("save", "confirmed: the dentist is on tuesday"))
    before = counts(db(installed), *WATCHED)
    result = run_aimos("label", note, old, "--reason", "confirmed, this is right")
    assert_refused(result, 2, new)
    assert counts(db(installed), *WATCHED) == before
    assert label_of(db(installed), note) == "unverified"


def test_show_says_the_label_in_plain_words(installed: Path) -> None:
    note = saved_id(run_aimos("save", "the dentist is on tuesday"))
    assert re.search(r"^label\s+not judged$", run_aimos("show", note).ok().out, re.M)
    run_aimos("label", note, "poison", "--reason", "planted").ok()
    shown = run_aimos("show", note).ok().out
    assert re.search(r"^label\s+poison, confirmed by a person; withheld$", shown, re.M), shown
    assert "poison_confirmed" not in shown and "unverified" not in shown, shown


def test_help_names_the_new_words() -> None:
    out = run_aimos("label", "--help", env={"COLUMNS": "200"}).ok().out
    for word in ("poison", "not-poison", "support", "dispute"):
        assert word in out
    assert "confirm" not in out and "refute" not in out
