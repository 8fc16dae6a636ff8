"""Edits of the label chain made outside the writer (SPEC 1.1-1.3, 8, 9): the brain file is edited
with the real sqlite3 shell after dropping the append-only guards, then

- `aimos verify --json` exits 4, and BOTH the in-database failures and the portable verdict name
  the edited memory with the right reason; the corpus proof root differs from the untampered one;
- a recall that would disclose the memory fails closed: exit 5, the memory id and
  `label_chain:<reason>` on stderr, nothing on stdout.

The edited memory is the refuted poison (trusted, so a recall selects and verifies it): its chain
is unverified(450) -> poison_likely(800, retroactive) -> poison_refuted(1000, the person's).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.cli import Result, run_aimos
from support.epistemic import QUESTION, Labelled, edit, g_hash, label_of, shell, shell_chain, shell_rows

pytestmark = pytest.mark.timeout(120)

INTEGRITY = 5
VERIFICATION_FAILED = 4


def where(row: dict[str, Any]) -> str:
    return f"classification_id = '{row['classification_id']}'"


def tamper(lab: Labelled, name: str) -> str:
    """Apply one edit to the refuted memory's label chain; the reason both verifiers must give."""
    rows = shell_chain(lab.db, lab.refuted)
    assert [r["label"] for r in rows] == ["unverified", "poison_likely", "poison_refuted"]
    first, _, newest = rows
    mid = lab.refuted
    if name == "row-label":
        edit(
            lab.db,
            "memory_classifications",
            f"UPDATE memory_classifications SET label = 'supported' WHERE {where(newest)};",
        )
        return "epistemic_hash_invalid"
    if name == "row-confidence":
        edit(
            lab.db,
            "memory_classifications",
            f"UPDATE memory_classifications SET confidence_milli = 999 WHERE {where(newest)};",
        )
        return "epistemic_hash_invalid"
    if name == "projection-only":
        edit(
            lab.db,
            "memories",
            f"UPDATE memories SET epistemic_label = 'supported' WHERE memory_id = '{mid}';",
        )
        return "unbacked_projection"
    if name == "projection-raised-to-poison":  # would hide a trusted memory: recall checks what it withholds
        edit(
            lab.db,
            "memories",
            f"UPDATE memories SET epistemic_label = 'poison_confirmed' WHERE memory_id = '{mid}';",
        )
        return "unbacked_projection"
    if name == "delete-newest":
        edit(lab.db, "memory_classifications", f"DELETE FROM memory_classifications WHERE {where(newest)};")
        return "unbacked_projection"  # the live label (refuted) is no longer the newest row's
    if name == "delete-genesis":
        edit(lab.db, "memory_classifications", f"DELETE FROM memory_classifications WHERE {where(first)};")
        return "fork_or_disconnected_history"
    if name == "authority-repointed":
        (saved,) = shell_rows(
            lab.db,
            f"SELECT event_id FROM events WHERE operation = 'memory_saved' AND subject_memory_id = '{mid}'",
        )
        edit(
            lab.db,
            "memory_classifications",
            f"UPDATE memory_classifications SET authority_event_id = '{saved['event_id']}' WHERE {where(newest)};",
        )
        return "epistemic_authority_invalid"
    if name == "live-hash-with-recomputed-g":
        other = "cd" * 32
        g = g_hash(
            mid,
            newest["label"],
            newest["confidence_milli"],
            other,
            newest["authority_mutation_hash"],
            newest["prev_classification_hash"],
        )
        edit(
            lab.db,
            "memory_classifications",
            f"UPDATE memory_classifications SET live_content_hash = '{other}', classification_hash = '{g}'"
            f" WHERE {where(newest)};",
        )
        return "epistemic_live_content_mismatch"
    if name == "forged-label-with-recomputed-g":
        # a row whose g_j recomputes but whose label the signed event never said
        g = g_hash(
            mid,
            "supported",
            1000,
            newest["live_content_hash"],
            newest["authority_mutation_hash"],
            newest["prev_classification_hash"],
        )
        edit(
            lab.db,
            "memory_classifications",
            f"UPDATE memory_classifications SET label = 'supported', classification_hash = '{g}'"
            f" WHERE {where(newest)};",
        )
        shell(lab.db, f"UPDATE memories SET epistemic_label = 'supported' WHERE memory_id = '{mid}';")
        return "epistemic_authority_invalid"
    raise AssertionError(name)


CASES = [
    "row-label",
    "row-confidence",
    "projection-only",
    "projection-raised-to-poison",
    "delete-newest",
    "delete-genesis",
    "authority-repointed",
    "live-hash-with-recomputed-g",
    "forged-label-with-recomputed-g",
]


def verify(lab: Labelled) -> tuple[Result, dict[str, Any]]:
    result = run_aimos("verify", "--json", "--master-fingerprint", lab.master_fingerprint)
    assert "Traceback" not in result.both, result.describe()
    return result, json.loads(result.out)


def assert_fails_closed(lab: Labelled, memory_id: str, reason: str) -> None:
    result = run_aimos("recall", QUESTION, "--json")
    assert result.code == INTEGRITY, f"the edited label chain was not caught at recall\n{result.describe()}"
    assert result.out == "", f"something was disclosed\n{result.describe()}"
    # a label row deleted is a table holding fewer rows than its seal says: that check (at the
    # write's begin, or before ranking) refuses the recall before the memory's own chain is read
    per_memory = memory_id in result.err and f"label_chain:{reason}" in result.err
    per_table = "memory_classifications" in result.err and "changed outside aimos" in result.err
    assert per_memory or per_table, result.describe()
    assert "Traceback" not in result.both


def test_the_prepared_brain_verifies_and_recalls(labelled: Labelled) -> None:
    result, report = verify(labelled)
    assert result.code == 0 and report["ok"] and report["parity"]
    assert report["in_database"]["corpus_proof_root"] == labelled.root
    recalled = run_aimos("recall", QUESTION, "--json").json()
    assert [r["memory_id"] for r in recalled["results"]] == [labelled.refuted]
    assert recalled["withheld_count"] == 1


@pytest.mark.parametrize("name", CASES)
def test_a_label_chain_edit_is_detected_by_both_verifiers_and_fails_recall_closed(
    labelled: Labelled, name: str
) -> None:
    reason = tamper(labelled, name)
    result, report = verify(labelled)
    assert result.code == VERIFICATION_FAILED, result.describe()
    assert report["ok"] is False
    failures = {f["memory_id"]: f["reason"] for f in report["in_database"]["failures"]}
    assert failures == {labelled.refuted: reason}, failures
    assert report["portable"]["verdict"] == "invalid"
    assert report["portable"]["primary_reason"] == reason, report["portable"]
    assert report["in_database"]["corpus_proof_root"] != labelled.root
    assert report["portable"]["corpus_proof_root"] != labelled.root
    assert all(c["ok"] for c in report["in_database"]["event_chains"])  # only the label chain moved
    # trusted (recall would disclose it) or untrusted (recall would withhold it and sign the label
    # as its reason): either way the decision rests on the label, so recall fails closed
    assert_fails_closed(labelled, labelled.refuted, reason)


def test_recall_fail_closed_is_recorded(labelled: Labelled) -> None:
    reason = tamper(labelled, "projection-only")
    assert_fails_closed(labelled, labelled.refuted, reason)
    (event,) = shell_rows(
        labelled.db,
        "SELECT signed_body FROM events WHERE operation = 'recall_disclosure_failed'"
        f" AND subject_memory_id = '{labelled.refuted}'",
    )
    assert json.loads(event["signed_body"])["metadata"]["reason"] == f"label_chain:{reason}"


# --- truncation: rows deleted AND the projection rolled back to what remains ------------------------
@pytest.mark.parametrize("name", ["wipe-poison-chain", "truncate-to-genesis"])
def test_truncating_a_label_chain_and_rolling_back_the_projection_is_detected(
    labelled: Labelled, name: str
) -> None:
    """SPEC 1.1 and 1.3: no classification row is ever deleted, and an edit outside the writer is
    detected by both verifiers. The deleted rows' signed `memory_epistemic_classified` events stay
    in the housekeeper's ledger (each names the memory, its label and its predecessor g), so a
    chain cut back (and its projection rolled back to match) must not verify; here it turns a
    withheld poison into a disclosed, `unverified` memory. (The weight chain's analogue is caught:
    tests/learning/test_verifier.py::test_truncating_the_newest_transition_is_detected.)"""
    if name == "wipe-poison-chain":
        target = labelled.likely  # poison_likely(800), one row
        edit(
            labelled.db,
            "memory_classifications",
            f"DELETE FROM memory_classifications WHERE memory_id = '{target}';",
        )
    else:
        target = labelled.refuted  # keep only the genesis row, unverified(450)
        keep = shell_chain(labelled.db, target)[0]
        edit(
            labelled.db,
            "memory_classifications",
            f"DELETE FROM memory_classifications WHERE memory_id = '{target}'"
            f" AND classification_id <> '{keep['classification_id']}';",
        )
    edit(
        labelled.db,
        "memories",
        f"UPDATE memories SET epistemic_label = 'unverified' WHERE memory_id = '{target}';",
    )
    orphaned = shell_rows(
        labelled.db,
        "SELECT e.event_id FROM events e WHERE e.operation = 'memory_epistemic_classified'"
        f" AND e.subject_memory_id = '{target}' AND NOT EXISTS (SELECT 1 FROM memory_classifications c"
        " WHERE c.authority_event_id = e.event_id)",
    )
    assert orphaned, "the signed classification events of the deleted rows are still in the ledger"
    result, report = verify(labelled)
    recalled = run_aimos("recall", QUESTION, "--json")
    disclosed = recalled.code == 0 and target in [r["memory_id"] for r in json.loads(recalled.out)["results"]]
    failures = {f["memory_id"] for f in report["in_database"]["failures"]}
    assert (
        result.code == VERIFICATION_FAILED
        and target in failures
        and report["portable"]["verdict"] == "invalid"
    ), (
        f"{len(orphaned)} signed classification(s) of {target} were deleted and its label rolled back to "
        f"'unverified', yet `aimos verify` exits {result.code} (in-database failures {failures}, portable "
        f"{report['portable']['verdict']}, corpus root {'UNCHANGED' if report['in_database']['corpus_proof_root'] == labelled.root else 'changed'}); "
        f"recall {'DISCLOSES it' if disclosed else 'does not disclose it'}"
    )
    assert not disclosed


def test_a_basis_edit_is_detected(labelled: Labelled) -> None:
    """`basis` (classifier | explicit) is bound by the signed authority event (the insert trigger
    checks `$.metadata.basis`) and the writer relies on it: the classifier never relabels a
    memory whose newest row is a person's (`explicit`) judgment. Editing the column outside the
    writer must be detected (SPEC 1.3); otherwise the next save of a cluster member silently
    overrules the person's refutation with a freshly signed, valid classifier row."""
    newest = shell_chain(labelled.db, labelled.refuted)[-1]
    assert (newest["label"], newest["basis"]) == ("poison_refuted", "explicit")
    edit(
        labelled.db,
        "memory_classifications",
        f"UPDATE memory_classifications SET basis = 'classifier' WHERE {where(newest)};",
    )
    result, report = verify(labelled)
    failures = {f["memory_id"]: f["reason"] for f in report["in_database"]["failures"]}
    saved = run_aimos(
        "save", "--source", "web:evil.example", QUESTION + ".Season 4 of Chicago Fire is made of 24 episodes."
    )
    after = label_of(labelled.db, labelled.refuted)
    assert (
        result.code == VERIFICATION_FAILED
        and failures.get(labelled.refuted) == "epistemic_authority_invalid"
        and (report["portable"]["primary_reason"] == "epistemic_authority_invalid")
    ), (
        f"the person's refutation row of {labelled.refuted} was re-labelled basis='classifier' outside the "
        f"writer, yet `aimos verify` exits {result.code} (in-database failures {failures}, portable "
        f"{report['portable']['verdict']}/{report['portable']['primary_reason']}); the next save "
        f"(exit {saved.code}) then moved the person's poison_refuted to {after!r}"
    )
