"""A correction carries the judgment on the version it corrects (the hole: an agent lifting a
person's poison verdict, or the classifier's poison label, by `aimos correct`).

A correction is a new memory, and a new memory starts unverified. When the version corrected is
less trusted than that (disputed, poison_suspect, poison_likely, poison_confirmed), the save gives
the new version a housekeeper-signed classification carrying the same label, naming the
predecessor and its classification hash; the classifier may lower it, never raise it; only a
judgment the master signs lifts it. Migration 9's triggers refuse a link or a classification that
would break this, and both verifiers report a corrected version more trusting than what it owes
(`correction_lifted_judgment`), judged against the predecessor's label at the moment of the
correction.

In-process, on the `brain` fixture: real signed requests through the real writer. The attacks are
what a writer holding the housekeeper's key could do with migration 9's triggers out of the way
(dropped, then put back exactly as the migrations make them)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import apsw
import pytest
from support.epistemic import (
    EVIL,
    POISON_1,
    POISON_2,
    chain,
    classify_row,
    current_label,
    judge,
    now,
    save_text,
    verify_both,
)

from aimos import vocabulary

pytestmark = pytest.mark.timeout(120)

CARRY_TRIGGERS = ("memory_supersessions_carry_judgment", "memory_classifications_carried_judgment")
NOTE = "the boiler is serviced in may"
FIXED = "the boiler is serviced in june"


@contextlib.contextmanager
def without_carry_triggers(conn: apsw.Connection) -> Iterator[None]:
    """Migration 9's triggers dropped for one block, then put back exactly as the migrations make
    them (what a writer that skips the check could do with the housekeeper's key)."""
    from aimos.store.schema import expected_objects

    objects = expected_objects()
    sqls = [objects[name][2] for name in CARRY_TRIGGERS]
    for name in CARRY_TRIGGERS:
        conn.execute(f"DROP TRIGGER {name}")
    try:
        yield
    finally:
        for sql in sqls:
            assert sql is not None
            conn.execute(sql)


def correct(brain: Any, old: str, value: str, **fields: Any) -> str:
    """A correction through the save composition every front end takes (save_and_classify)."""
    return str(save_text(brain, value, supersedes=old, **fields).memory_id)


def low_level_correct(brain: Any, old: str, value: str) -> str:
    """A correction through the bare memory writer (memory.save.save): no judgment carried."""
    from aimos.actions.bodies import build_save_body
    from aimos.identity.requests import sign_request
    from aimos.memory.save import save

    body = build_save_body(company_id="personal", value=value, source=EVIL, supersedes=old)
    t = now()
    return save(
        brain.conn, brain.housekeeper, sign_request(brain.agent, body, vocabulary.PATH_SAVE, t), t
    ).memory_id


label = current_label
verify = verify_both


def failures(report: dict[str, Any]) -> dict[str, str]:
    return {f["memory_id"]: f["reason"] for f in report["in_database"]["failures"]}


def labelled(brain: Any, start: str, text: str = NOTE) -> str:
    """A memory whose label is ``start``, reached the way a brain reaches it."""
    if start == vocabulary.POISON_SUSPECT:
        return suspect_memory(brain, text)
    if start == vocabulary.POISON_LIKELY:
        save_text(brain, POISON_1)
        memory_id = str(save_text(brain, POISON_2).memory_id)  # the cluster grows: both likely
        assert label(brain, memory_id) == start
        return memory_id
    memory_id = str(save_text(brain, text).memory_id)
    judgment = {v[0]: k for k, v in vocabulary.JUDGMENTS.items()}.get(start)
    if judgment is not None:
        judge(brain, memory_id, judgment, master=vocabulary.raises_trust(vocabulary.UNVERIFIED, start))
    assert label(brain, memory_id) == start
    return memory_id


def suspect_memory(brain: Any, text: str) -> str:
    """A poison_suspect memory: a classifier label written as the classifier writes one."""
    from aimos.epistemic.chain import append_classification
    from aimos.store.connection import write_transaction

    memory_id = str(save_text(brain, text).memory_id)
    with write_transaction(brain.conn, brain.housekeeper):
        append_classification(
            brain.conn,
            brain.housekeeper,
            memory_id,
            label=vocabulary.POISON_SUSPECT,
            confidence_milli=600,
            basis=vocabulary.BASIS_CLASSIFIER,
            now=now(),
            signals={"test": True},
            reason="classified at save",
        )
    return memory_id


# --- the writer ------------------------------------------------------------------------------------
@pytest.mark.parametrize("start", ["disputed", "poison_suspect", "poison_likely", "poison_confirmed"])
def test_a_correction_carries_an_adverse_label(brain: Any, start: str) -> None:
    old = labelled(brain, start)
    (head,) = chain(brain.conn, old)[-1:]
    new = correct(brain, old, FIXED)
    assert label(brain, new) == start
    (carried,) = chain(brain.conn, new)
    meta = carried["body"]["metadata"]
    assert carried["basis"] == vocabulary.BASIS_CLASSIFIER and carried["prev_classification_hash"] is None
    assert carried["signer_agent_id"] == vocabulary.HOUSEKEEPER
    assert meta["signals"] == {
        vocabulary.INHERITED_FROM: old,
        vocabulary.INHERITED_CLASSIFICATION_HASH: head["classification_hash"],
        vocabulary.INHERITED_LABEL: start,
    }
    assert meta["reason"] == vocabulary.INHERITED_REASON
    assert carried["confidence_milli"] == head["confidence_milli"]
    report = verify(brain)
    assert report["ok"], report


@pytest.mark.parametrize("start", ["unverified", "supported", "poison_refuted"])
def test_a_correction_of_a_trusted_memory_carries_nothing(brain: Any, start: str) -> None:
    old = labelled(brain, start)
    new = correct(brain, old, FIXED)
    assert label(brain, new) == "unverified"
    assert chain(brain.conn, new) == []
    assert verify(brain)["ok"]


def test_the_classifier_may_lower_a_carried_label_never_raise_it(brain: Any) -> None:
    """The classifier runs on a question-shaped correction as on any save. A disputed memory
    corrected into a cluster the classifier finds likely poison goes down to poison_likely; a
    confirmed poison keeps the person's label over the classifier's as adverse poison_likely, and
    over its more trusting unverified (neither is recorded)."""
    from aimos.epistemic.classifier import leading_question

    disputed = str(save_text(brain, POISON_1).memory_id)
    judge(brain, disputed, "dispute")
    lowered = correct(brain, disputed, POISON_2)
    assert [r["label"] for r in chain(brain.conn, lowered)] == ["disputed", "poison_likely"]
    assert label(brain, lowered) == "poison_likely"

    asked = "where is the spare key kept? Under the blue pot by the door."
    for answer in (
        "where is the spare key kept? With the neighbour at number 4.",  # the same cluster: likely
        "who keeps the spare key now? The neighbour at number 4 does.",  # a cluster of one: unverified
    ):
        confirmed = str(save_text(brain, asked, source="cli").memory_id)
        if label(brain, confirmed) != "poison_confirmed":
            judge(brain, confirmed, "confirm")
        assert leading_question(answer) is not None  # the classifier runs on the correction
        kept = correct(brain, confirmed, answer, source="cli")
        assert [r["label"] for r in chain(brain.conn, kept)] == ["poison_confirmed"]
        assert label(brain, kept) == "poison_confirmed"
        asked = answer  # correct the correction next
    assert verify(brain)["ok"]


def test_a_retroactive_relabel_does_not_raise_a_carried_label(brain: Any) -> None:
    """The classifier relabels earlier members of a growing cluster; a corrected version that
    carries poison_confirmed is never relabelled to the classifier's own, more trusting label."""
    old = str(save_text(brain, POISON_1).memory_id)
    judge(brain, old, "confirm")
    new = correct(brain, old, POISON_2)
    assert label(brain, new) == "poison_confirmed"
    save_text(brain, POISON_1 + " Really.")  # the cluster grows again
    assert label(brain, new) == "poison_confirmed"
    assert all(r["label"] == "poison_confirmed" for r in chain(brain.conn, new))
    assert verify(brain)["ok"]


def test_a_correction_of_a_correction_carries_it_on(brain: Any) -> None:
    old = labelled(brain, "poison_confirmed")
    first = correct(brain, old, FIXED)
    second = correct(brain, first, "the boiler is serviced in july")
    assert label(brain, second) == "poison_confirmed"
    (carried,) = chain(brain.conn, second)
    assert carried["body"]["metadata"]["signals"][vocabulary.INHERITED_FROM] == first
    assert verify(brain)["ok"]


def test_only_the_master_lifts_a_carried_label(brain: Any) -> None:
    from aimos import errors

    old = labelled(brain, "poison_confirmed")
    new = correct(brain, old, FIXED)
    with pytest.raises(errors.PassphraseError):
        judge(brain, new, "refute")
    assert label(brain, new) == "poison_confirmed"
    judge(brain, new, "refute", master=True)
    assert label(brain, new) == "poison_refuted"
    assert verify(brain)["ok"]


def test_the_moment_of_correction_decides(brain: Any) -> None:
    """A judgment on the old version after it was corrected does not reach the new one, and the
    verifiers judge the new one by the old one's label when it was corrected."""
    old = labelled(brain, "unverified")
    new = correct(brain, old, FIXED)
    judge(brain, old, "confirm")
    assert label(brain, old) == "poison_confirmed"
    assert label(brain, new) == "unverified"
    assert verify(brain)["ok"]


# --- the store's triggers (migration 9) ---------------------------------------------------------------
def test_the_store_refuses_a_correction_that_carries_nothing(brain: Any) -> None:
    from aimos import errors

    old = labelled(brain, "poison_confirmed")
    before = brain.conn.execute("SELECT COUNT(*) FROM memories").fetchall()[0][0]
    with pytest.raises(errors.IntegrityError, match="must carry the label"):
        low_level_correct(brain, old, FIXED)
    assert brain.conn.execute("SELECT COUNT(*) FROM memories").fetchall()[0][0] == before
    # a correction of a trusted memory needs nothing carried, through any writer
    plain = labelled(brain, "unverified", "the ferry leaves at noon")
    low_level_correct(brain, plain, FIXED)


_classify = classify_row


def test_the_store_refuses_a_classifier_row_above_a_carried_label(brain: Any) -> None:
    from aimos import errors

    old = labelled(brain, "poison_confirmed")
    new = correct(brain, old, FIXED)
    for lifted in ("unverified", "poison_suspect"):
        with pytest.raises(errors.IntegrityError, match="more trusting than the label it carries"):
            _classify(brain, new, lifted, signals={"test": True})
    assert label(brain, new) == "poison_confirmed"
    _classify(brain, new, "poison_likely", signals={"test": True})  # as adverse: allowed


def test_the_store_refuses_a_carried_label_no_correction_owes(brain: Any) -> None:
    """A classifier row with a label only a person gives (or a carried one) must carry the
    judgment of the version its memory corrects, exactly as that version's newest row says."""
    from aimos import errors

    confirmed = labelled(brain, "poison_confirmed")
    (head,) = chain(brain.conn, confirmed)[-1:]
    plain = str(save_text(brain, "the ferry leaves at noon").memory_id)
    claim = {
        vocabulary.INHERITED_FROM: confirmed,
        vocabulary.INHERITED_CLASSIFICATION_HASH: head["classification_hash"],
        vocabulary.INHERITED_LABEL: "poison_confirmed",
    }
    with pytest.raises(errors.IntegrityError, match="only a correction carries one"):
        _classify(brain, plain, "poison_confirmed", signals=claim)  # plain corrects nothing
    with pytest.raises(errors.IntegrityError, match="only a correction carries one"):
        _classify(brain, plain, "poison_confirmed", signals={"test": True})
    assert label(brain, plain) == "unverified"


# --- what both verifiers find ---------------------------------------------------------------------------
def _lifted_by_bare_writer(brain: Any) -> tuple[str, str]:
    old = labelled(brain, "poison_confirmed")
    with without_carry_triggers(brain.conn):
        new = low_level_correct(brain, old, FIXED)
    return old, new


def test_both_verifiers_find_a_correction_that_carries_nothing(brain: Any) -> None:
    _old, new = _lifted_by_bare_writer(brain)
    assert label(brain, new) == "unverified"
    report = verify(brain)
    assert not report["ok"]
    assert failures(report) == {new: "correction_lifted_judgment"}
    assert report["portable"]["primary_reason"] == "correction_lifted_judgment"
    assert report["brain"]["ok"], report["brain"]  # the triggers are back: nothing else is wrong


@pytest.mark.parametrize("lifted", ["unverified", "poison_suspect", "disputed"])
def test_both_verifiers_find_a_carried_label_more_trusting_than_owed(brain: Any, lifted: str) -> None:
    """The carrying row says what the writer would, but with a more trusting label."""
    old = labelled(brain, "poison_confirmed")
    (head,) = chain(brain.conn, old)[-1:]
    with without_carry_triggers(brain.conn):
        from support.epistemic import without_judgment_trigger

        new = low_level_correct(brain, old, FIXED)
        with without_judgment_trigger(brain.conn):
            _classify(
                brain,
                new,
                lifted,
                signals={
                    vocabulary.INHERITED_FROM: old,
                    vocabulary.INHERITED_CLASSIFICATION_HASH: head["classification_hash"],
                    vocabulary.INHERITED_LABEL: lifted,
                },
            )
    report = verify(brain)
    assert failures(report) == {new: "correction_lifted_judgment"}
    assert report["portable"]["primary_reason"] == "correction_lifted_judgment"


def test_both_verifiers_find_a_classifier_row_lifting_a_carried_label(brain: Any) -> None:
    old = labelled(brain, "poison_confirmed")
    new = correct(brain, old, FIXED)
    with without_carry_triggers(brain.conn):
        _classify(brain, new, "unverified", signals={"test": True})
    assert label(brain, new) == "unverified"
    report = verify(brain)
    assert failures(report) == {new: "correction_lifted_judgment"}
    assert report["portable"]["primary_reason"] == "correction_lifted_judgment"


def test_both_verifiers_find_a_carried_label_from_before_the_judgment(brain: Any) -> None:
    """Carrying an older row of the predecessor (its label before the person's verdict) is not
    carrying its label at the moment of the correction."""
    old = str(save_text(brain, POISON_1).memory_id)
    first = chain(brain.conn, old)[0]
    assert first["label"] == "unverified"
    judge(brain, old, "dispute")
    judge(brain, old, "confirm")
    disputed = chain(brain.conn, old)[1]
    with without_carry_triggers(brain.conn):
        new = low_level_correct(brain, old, FIXED)
        _classify(
            brain,
            new,
            "poison_likely",  # as adverse as what is owed, but not what it says it carries
            signals={
                vocabulary.INHERITED_FROM: old,
                vocabulary.INHERITED_CLASSIFICATION_HASH: disputed["classification_hash"],
                vocabulary.INHERITED_LABEL: "poison_likely",
            },
        )
    report = verify(brain)
    assert failures(report) == {new: "epistemic_evidence_invalid"}
    assert report["portable"]["primary_reason"] == "epistemic_evidence_invalid"


def test_a_person_lifting_it_with_the_master_verifies(brain: Any) -> None:
    """After a judgment the master signed, the classifier's own labels are the classifier's."""
    old = labelled(brain, "poison_confirmed")
    new = correct(brain, old, FIXED)
    judge(brain, new, "support", master=True)
    judge(brain, new, "dispute")  # an agent alone may lower it again
    assert label(brain, new) == "disputed"
    assert verify(brain)["ok"]
