"""`aimos feedback ID --good|--bad [--receipt RID] [--occurrence] [--as AGENT] [--json]` as a real
subprocess on a brain installed with the file keystore (SPEC sections 6 and 15): the weight move it
prints, its JSON, `aimos show`, and bad input refused with its exit code, an `error:` and a `hint:`
line, no traceback and nothing changed. Weights follow valence rule 2: one outcome per agent and
recall moves a weight (more about the same recall are kept with no weight authority), so each
outcome meant to move one follows a recall of its own.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from support.cli import (
    BRAIN,
    HEX64_RE,
    UUID_RE,
    Result,
    assert_refused,
    assert_unchanged,
    parse_json,
    run_aimos,
    snapshot,
    table_counts,
)

pytestmark = pytest.mark.timeout(120)

USAGE, NOT_FOUND = 2, 3
LEARNING_TABLES = (
    "outcomes",
    "weight_projections",
    "memory_provenance",
    "events",
    "request_nonces",
    "memories",
)


def save(text: str) -> str:
    result = run_aimos("save", text).ok()
    memory_id = result.out.strip()
    assert UUID_RE.match(memory_id), result.describe()
    return memory_id


def recall_receipt(query: str, *memory_ids: str) -> str:
    doc = parse_json(run_aimos("recall", query, "--json"))
    disclosed = {r["memory_id"] for r in doc["results"]}
    assert set(memory_ids) <= disclosed, doc
    return str(doc["receipt"]["receipt_id"])


def shown_weight(memory_id: str) -> str:
    result = run_aimos("show", memory_id).ok()
    match = re.search(r"^weight\s+(\S+)", result.out, re.MULTILINE)
    assert match, result.describe()
    return match.group(1)


def learning_counts(home: Path) -> dict[str, int]:
    return table_counts(home / BRAIN, LEARNING_TABLES)


@pytest.fixture
def recalled(installed: Path) -> tuple[str, str]:
    """(memory id, receipt id) of a memory a real `aimos recall` disclosed."""
    mid = save("The heron colony nests by the east lake")
    save("Herons eat fish and frogs")
    return mid, recall_receipt("heron colony", mid)


def test_feedback_good_prints_the_weight_move(installed: Path, recalled: tuple[str, str]) -> None:
    mid, _ = recalled
    before = learning_counts(installed)
    result = run_aimos("feedback", mid, "--good").ok()
    assert result.out.strip() == "weight 1.000 -> 1.165", result.describe()
    assert "signed transition" in result.err
    assert shown_weight(mid) == "1.165"
    after = learning_counts(installed)
    assert after["outcomes"] == before["outcomes"] + 1
    assert after["weight_projections"] == before["weight_projections"] + 1
    assert after["memory_provenance"] == before["memory_provenance"] + 1


def test_feedback_bad_then_good_then_noop(installed: Path, recalled: tuple[str, str]) -> None:
    mid, _ = recalled
    assert run_aimos("feedback", mid, "--bad").ok().out.strip() == "weight 1.000 -> 0.859"
    assert shown_weight(mid) == "0.859"
    recall_receipt("heron colony", mid)  # the next outcome is about a recall of its own
    noop = run_aimos("feedback", mid, "--good").ok()  # sum 0: the quantized weight does not move
    assert noop.out.strip() == "weight stays 0.859", noop.describe()
    assert "signed no-op" in noop.err and "balanced" in noop.err
    assert shown_weight(mid) == "0.859"
    recall_receipt("heron colony", mid)
    assert run_aimos("feedback", mid, "--good").ok().out.strip() == "weight 0.859 -> 1.000"


def test_feedback_bad_after_two_goods_says_why_the_weight_still_rose(
    installed: Path, recalled: tuple[str, str]
) -> None:
    mid, _ = recalled
    assert run_aimos("feedback", mid, "--good").ok().out.strip() == "weight 1.000 -> 1.165"
    recall_receipt("heron colony", mid)
    assert run_aimos("feedback", mid, "--good").ok().out.strip() == "weight 1.165 -> 1.413"
    recall_receipt("heron colony", mid)
    bad = run_aimos("feedback", mid, "--bad").ok()
    # the agent's balance is +1 after the bad: j = tanh(1), the weight rises by e^(0.2 tanh 1)
    assert bad.out.strip() == "weight 1.413 -> 1.645", bad.describe()
    assert "still net positive" in bad.err, bad.describe()
    assert "+1 (2 good, 1 bad)" in bad.err
    assert shown_weight(mid) == "1.645"


def test_twelve_bad_reports_about_one_recall_move_the_weight_once(
    installed: Path, recalled: tuple[str, str]
) -> None:
    mid, receipt = recalled
    first = run_aimos("feedback", mid, "--bad", "--receipt", receipt).ok()
    assert first.out.strip() == "weight 1.000 -> 0.859", first.describe()
    before = learning_counts(installed)
    for _ in range(11):
        doc: dict[str, Any] = parse_json(run_aimos("feedback", mid, "--bad", "--receipt", receipt, "--json"))
        moved = (doc["terminal"], doc["old_weight_milli"], doc["new_weight_milli"])
        assert moved == ("signed_noop", 859, 859)
        assert doc["weight_bearing"] is False and doc["receipt_id"] == receipt
        assert (doc["projection_hash"], doc["transition_hash"]) == (None, None)
        assert "no weight authority" in doc["why"]
    again = run_aimos("feedback", mid, "--bad", "--receipt", receipt).ok()  # the 13th, in words
    assert again.out.strip() == "weight stays 0.859", again.describe()
    assert "no weight authority" in again.err and "recall it again" in again.err
    after = learning_counts(installed)
    # every report kept as a signed outcome row, none with a transition
    assert after["outcomes"] == before["outcomes"] + 12
    assert after["weight_projections"] == before["weight_projections"]
    assert after["memory_provenance"] == before["memory_provenance"]
    assert shown_weight(mid) == "0.859"
    verified = parse_json(run_aimos("verify", "--json"))
    assert verified["ok"] is True and verified["parity"] is True, verified
    assert verified["in_database"]["ok"] is True and verified["portable"]["verdict"] == "valid"
    assert verified["in_database"]["corpus_proof_root"] == verified["portable"]["corpus_proof_root"]


def test_feedback_json(installed: Path, recalled: tuple[str, str]) -> None:
    mid, receipt = recalled
    doc: dict[str, Any] = parse_json(run_aimos("feedback", mid, "--good", "--json"))
    assert doc["memory_id"] == mid and doc["receipt_id"] == receipt
    assert (doc["terminal"], doc["old_weight_milli"], doc["new_weight_milli"]) == (
        "authorized_transition",
        1000,
        1165,
    )
    assert HEX64_RE.match(doc["projection_hash"]) and HEX64_RE.match(doc["transition_hash"])
    assert UUID_RE.match(doc["outcome_id"]) and UUID_RE.match(doc["event_id"])
    assert (doc["weight_bearing"], doc["valence_rule"], doc["reward_sign"]) == (
        True,
        "aimos.valence-rule/v2",
        1,
    )
    assert (doc["agent_id"], doc["agent_good"], doc["agent_bad"]) == ("cli", 1, 0)
    assert (doc["share_old_milli"], doc["share_new_milli"]) == (1000, 1165)
    assert doc["why"] == (
        "good recorded; the weight rises: cli's evidence on this memory is +1 (1 good, 0 bad)"
    )
    later = recall_receipt("heron colony", mid)  # a recall of its own for the second outcome
    again: dict[str, Any] = parse_json(run_aimos("feedback", mid, "--good", "--json"))
    assert again["receipt_id"] == later
    assert (again["old_weight_milli"], again["new_weight_milli"]) == (1165, 1413)
    assert (again["agent_good"], again["share_new_milli"]) == (2, 1413)
    assert shown_weight(mid) == "1.413"


def test_feedback_with_an_explicit_receipt_and_a_prefix(installed: Path, recalled: tuple[str, str]) -> None:
    mid, receipt = recalled
    later = recall_receipt("heron colony east lake", mid)
    assert later != receipt
    doc = parse_json(run_aimos("feedback", mid[:8], "--bad", "--receipt", receipt, "--json"))
    assert doc["memory_id"] == mid and doc["receipt_id"] == receipt
    default = parse_json(run_aimos("feedback", mid, "--bad", "--json"))
    assert default["receipt_id"] == later, "without --receipt the newest disclosing receipt is used"


def test_feedback_occurrence_keeps_the_weight(installed: Path, recalled: tuple[str, str]) -> None:
    mid, _ = recalled
    before = learning_counts(installed)
    result = run_aimos("feedback", mid, "--good", "--occurrence").ok()
    assert result.out.strip() == "weight stays 1.000", result.describe()
    assert "occurrence" in result.err
    after = learning_counts(installed)
    assert after["outcomes"] == before["outcomes"] + 1
    assert after["weight_projections"] == before["weight_projections"]
    assert shown_weight(mid) == "1.000"


# --- bad input: refused, nothing changed -----------------------------------------------------------------
def refused(home: Path, args: tuple[str, ...], code: int, *hint_words: str) -> Result:
    before = snapshot(home)
    counts = learning_counts(home)
    result = run_aimos(*args)
    assert_refused(result, code, *hint_words)
    assert learning_counts(home) == counts
    assert_unchanged(home, before)
    return result


def test_feedback_on_an_unknown_id(installed: Path, recalled: tuple[str, str]) -> None:
    refused(installed, ("feedback", "00000000-0000-4000-8000-000000000000", "--good"), NOT_FOUND)
    refused(installed, ("feedback", "ffffffff", "--bad"), NOT_FOUND)


def test_feedback_on_a_never_recalled_memory(installed: Path, recalled: tuple[str, str]) -> None:
    never = save("The attic window sticks in damp weather")
    result = refused(installed, ("feedback", never, "--good"), NOT_FOUND, "recall")
    assert never in result.err
    assert shown_weight(never) == "1.000"


@pytest.mark.parametrize(
    "flags", [("--good", "--bad"), (), ("--bad", "--good", "--json")], ids=["both", "neither", "both-json"]
)
def test_feedback_needs_exactly_one_of_good_or_bad(
    installed: Path, recalled: tuple[str, str], flags: tuple[str, ...]
) -> None:
    mid, _ = recalled
    refused(installed, ("feedback", mid, *flags), USAGE, "--good", "--bad")


def test_feedback_with_an_unknown_receipt(installed: Path, recalled: tuple[str, str]) -> None:
    mid, _ = recalled
    refused(
        installed, ("feedback", mid, "--good", "--receipt", "0123abcd-0000-4000-8000-000000000000"), NOT_FOUND
    )


def test_feedback_with_a_receipt_that_did_not_disclose_the_memory(
    installed: Path, recalled: tuple[str, str]
) -> None:
    mid, _ = recalled
    other = save("The quarterly budget review is on thursday")
    receipt = recall_receipt("quarterly budget", other)
    result = refused(installed, ("feedback", mid, "--good", "--receipt", receipt), NOT_FOUND)
    assert mid in result.err


def test_feedback_as_an_unknown_agent(installed: Path, recalled: tuple[str, str]) -> None:
    mid, _ = recalled
    before = learning_counts(installed)
    result = run_aimos("feedback", mid, "--good", "--as", "nobody")
    assert result.code != 0 and "Traceback" not in result.both, result.describe()
    assert "error:" in result.err and "hint:" in result.err
    assert learning_counts(installed) == before
