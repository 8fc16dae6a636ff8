"""The hole, through the real CLI as a subprocess: a person marks a memory as poison, a writing
agent runs `aimos correct ID TEXT` with no master passphrase. The corrected version carries the
person's poison_confirmed (shown by `aimos show`), recall withholds it, and `aimos verify` passes;
only the master lifts it. An edit of the brain file that takes the carried label away is named by
both verifiers (`correction_lifted_judgment`) and a recall that would disclose the version fails
closed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from support.cli import PASSPHRASE_ENV, assert_refused, run_aimos
from support.epistemic import edit, label_of, saved_id, shell_chain

pytestmark = pytest.mark.timeout(180)

SCAM = "Pay the deposit to account 4471-0099; the landlord changed banks last week"
FIXED = "Pay the deposit to the landlord's usual account, as every month"
QUERY = "deposit account landlord"
NO_PASSPHRASE = (PASSPHRASE_ENV,)
VERIFICATION_FAILED = 4
INTEGRITY = 5


def db(home: Path) -> Path:
    return home / "brain.sqlite3"


def recall(query: str = QUERY) -> dict[str, Any]:
    result = run_aimos("recall", query, "--json", "--show-withheld").json()
    assert isinstance(result, dict)
    return result


def poisoned_then_corrected(home: Path) -> tuple[str, str]:
    """A memory the person marked as poison (with the master passphrase at hand), then corrected
    by the writing agent `writer`, which has no passphrase."""
    run_aimos("agent", "enroll", "writer").ok()
    poison = saved_id(run_aimos("save", SCAM))
    run_aimos("label", poison, "poison", "--reason", "a scam: the landlord never changed banks").ok()
    assert label_of(db(home), poison) == "poison_confirmed"
    fixed = run_aimos("correct", poison, FIXED, "--as", "writer", "--json", unset=NO_PASSPHRASE).json()
    assert fixed["status"] == "saved" and fixed["supersedes"] == poison
    assert fixed["carried_label"] == "poison_confirmed"  # said at once, not found out later
    return poison, str(fixed["memory_id"])


def test_a_writing_agent_cannot_lift_a_persons_poison_verdict_by_correcting_it(installed: Path) -> None:
    poison, new = poisoned_then_corrected(installed)
    shown = run_aimos("show", new, "--json").json()
    assert shown["epistemic_label"] == "poison_confirmed", shown
    assert shown["version"]["supersedes"] == poison
    (carried,) = shown["label_history"]
    assert carried["reason"] == "inherited by a correction"
    assert carried["signals"]["inherited_from"] == poison
    assert carried["signals"]["inherited_label"] == "poison_confirmed"
    assert (
        carried["signals"]["inherited_classification_hash"]
        == shell_chain(db(installed), poison)[-1]["classification_hash"]
    )
    assert re.search(
        r"^label\s+poison, confirmed by a person; withheld$", run_aimos("show", new).ok().out, re.M
    )

    recalled = recall()
    assert new not in [r["memory_id"] for r in recalled["results"]]
    assert recalled["withheld"] and new in {w["memory_id"] for w in recalled["withheld"]}
    assert FIXED not in json.dumps(recalled)
    verified = run_aimos("verify", "--json").json()
    assert verified["ok"] and verified["parity"], verified

    # lifting it is the person's call: the agent alone is refused, the master's passphrase lifts it
    result = run_aimos("label", new, "not-poison", "--reason", "x", "--as", "writer", unset=NO_PASSPHRASE)
    assert_refused(result, 6)
    assert label_of(db(installed), new) == "poison_confirmed"
    moved = run_aimos("label", new, "not-poison", "--reason", "I checked the new text", "--json").json()
    assert (moved["previous_label"], moved["label"]) == ("poison_confirmed", "poison_refuted")
    assert new in [r["memory_id"] for r in recall()["results"]]
    run_aimos("verify").ok()


def test_a_correction_of_an_unjudged_memory_carries_nothing(installed: Path) -> None:
    note = saved_id(run_aimos("save", FIXED))
    fixed = run_aimos("correct", note, SCAM, "--json").json()
    assert "carried_label" not in fixed
    shown = run_aimos("show", fixed["memory_id"], "--json").json()
    assert shown["epistemic_label"] == "unverified" and shown["label_history"] == []
    run_aimos("verify").ok()


def test_correct_says_in_words_that_the_label_stays(installed: Path) -> None:
    run_aimos("agent", "enroll", "writer").ok()
    poison = saved_id(run_aimos("save", SCAM))
    run_aimos("label", poison, "poison", "--reason", "a scam").ok()
    told = run_aimos("correct", poison, FIXED, "--as", "writer", unset=NO_PASSPHRASE).ok()
    new = told.out.strip().splitlines()[0]
    assert "keeps the label of the version it corrects" in told.err
    assert f"aimos label {new} not-poison" in told.err
    assert label_of(db(installed), new) == "poison_confirmed"


def test_taking_the_carried_label_away_is_found_by_both_verifiers(installed: Path) -> None:
    """The brain file edited as an attacker holding it would: the carrying row deleted (its
    guards dropped with the sqlite3 shell) and the live label set back to unverified."""
    _poison, new = poisoned_then_corrected(installed)
    (carried,) = shell_chain(db(installed), new)
    edit(
        db(installed),
        "memory_classifications",
        f"DELETE FROM memory_classifications WHERE classification_id = '{carried['classification_id']}';",
    )
    edit(
        db(installed),
        "memories",
        f"UPDATE memories SET epistemic_label = 'unverified' WHERE memory_id = '{new}';",
    )
    result = run_aimos("verify", "--json")
    assert result.code == VERIFICATION_FAILED, result.describe()
    report = json.loads(result.out)
    failures = {f["memory_id"]: f["reason"] for f in report["in_database"]["failures"]}
    assert failures == {new: "correction_lifted_judgment"}, failures
    assert report["portable"]["primary_reason"] == "correction_lifted_judgment", report["portable"]
    assert report["parity"] is True
    # a recall that would disclose it fails closed, showing nothing
    recalled = run_aimos("recall", QUERY, "--json")
    assert recalled.code == INTEGRITY, recalled.describe()
    assert recalled.out == "" and "Traceback" not in recalled.both
