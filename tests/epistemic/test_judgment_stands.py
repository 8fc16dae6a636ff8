"""A person's judgment stands against the classifier (migration 10).

The writers never label a memory a person has judged; the hole was below them: a writer holding the
housekeeper's key could append a classifier row after the judgment (a poison_confirmed lifted back
to unverified, a person's supported buried as poison_likely) and both verifiers accepted it. Now
the store refuses such a row, and with the trigger out of the way (dropped, then put back as the
migrations make it) both verifiers report `classifier_overruled_judgment`. A person judging again
still works, and a later save growing the cluster leaves the judged memory alone.

In-process, on the `brain` fixture: real signed requests through the real writer."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import apsw
import pytest
from support.epistemic import (
    POISON_1,
    POISON_2,
    POISON_3,
    classify_row,
    current_label,
    judge,
    save_text,
    verify_both,
)

from aimos import errors, vocabulary

pytestmark = pytest.mark.timeout(120)

TRIGGER = "memory_classifications_judgment_stands"


@contextlib.contextmanager
def without_trigger(conn: apsw.Connection) -> Iterator[None]:
    from aimos.store.schema import expected_objects

    sql = expected_objects()[TRIGGER][2]
    conn.execute(f"DROP TRIGGER {TRIGGER}")
    try:
        yield
    finally:
        assert sql is not None
        conn.execute(sql)


def classify(brain: Any, memory_id: str, label: str) -> None:
    confidence = 0 if label == vocabulary.UNVERIFIED else 800
    classify_row(brain, memory_id, label, confidence_milli=confidence, signals={"test": True})


label = current_label
verify = verify_both


@pytest.mark.parametrize(
    ("judgment", "master", "overrule"),
    [
        ("confirm", False, "unverified"),
        ("support", True, "poison_likely"),
        ("refute", True, "poison_suspect"),
    ],
)
def test_the_store_refuses_a_classifier_row_after_a_judgment(
    brain: Any, judgment: str, master: bool, overrule: str
) -> None:
    memory_id = str(save_text(brain, "the spare key is under the blue flowerpot").memory_id)
    judge(brain, memory_id, judgment, master=master)
    judged = label(brain, memory_id)
    with pytest.raises(errors.IntegrityError, match="a person judged this memory"):
        classify(brain, memory_id, overrule)
    assert label(brain, memory_id) == judged  # nothing half-written
    assert verify(brain)["ok"] is True


def test_both_verifiers_find_a_classifier_row_that_lifts_a_judgment(brain: Any) -> None:
    memory_id = str(save_text(brain, "the spare key is under the blue flowerpot").memory_id)
    judge(brain, memory_id, "confirm")  # poison_confirmed: an agent may lower trust alone
    with without_trigger(brain.conn):
        classify(brain, memory_id, vocabulary.UNVERIFIED)
    assert label(brain, memory_id) == vocabulary.UNVERIFIED
    report = verify(brain)
    found = {f["memory_id"]: f["reason"] for f in report["in_database"]["failures"]}
    assert found == {memory_id: "classifier_overruled_judgment"}
    assert report["portable"]["primary_reason"] == "classifier_overruled_judgment"


def test_a_judged_memory_is_left_alone_when_its_cluster_grows_and_a_person_may_judge_again(
    brain: Any,
) -> None:
    first = str(save_text(brain, POISON_1).memory_id)
    judge(brain, first, "refute", master=True)  # the person says it is not poison
    assert label(brain, first) == "poison_refuted"
    save_text(brain, POISON_2)
    save_text(brain, POISON_3)  # the cluster grows: the reference kernel relabels its members
    assert label(brain, first) == "poison_refuted"
    judge(brain, first, "confirm")  # the person changes their mind: a judgment, not the classifier
    assert label(brain, first) == "poison_confirmed"
    assert verify(brain)["ok"] is True
