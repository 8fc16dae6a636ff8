"""Attack: JSON nested deeper than the canonical limit (32), in a file handed to a verifier or
in a record of the brain that a verifier reads.

Before: 1,000 levels made `aimos receipt verify FILE` and `aimos purge verify-receipt FILE` die
with ``internal error (RecursionError)``, exit 1. Now every JSON aimos reads to verify is
refused past depth 32 before it is parsed: exit 4, reason ``canonical_json_depth_limit`` (or the
command's existing closed reason for a malformed record of that kind)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from support.attacks import VERIFICATION_FAILED, assert_refused_closed, drop_guards, run_sql, save
from support.cli import BRAIN, run_aimos, sqlite_value

from aimos.crypto.canonical import JSONDepthError, canonical_json, json_loads
from aimos.errors import CanonicalJSONError
from aimos.store.cells import deflate_text
from aimos.vocabulary import CANONICAL_JSON_MAX_DEPTH as MAX_DEPTH

pytestmark = pytest.mark.timeout(120)

DEPTHS = [MAX_DEPTH + 2, 1000, 100_000]


def nested(levels: int) -> str:
    """An object whose innermost value sits ``levels`` deep (the root at depth 0)."""
    return '{"a":' * levels + "1" + "}" * levels


def fingerprint(home: Path) -> str:
    anchors = json.loads(next(home.rglob("anchors.json")).read_text("utf-8"))
    return str(next(iter(anchors["brains"].values()))["master_fingerprint"])


@pytest.mark.parametrize("levels", DEPTHS)
def test_receipt_verify_refuses_a_deep_file(installed: Path, tmp_path: Path, levels: int) -> None:
    path = tmp_path / "receipt.json"
    path.write_text(nested(levels))
    assert_refused_closed(
        run_aimos("receipt", "verify", str(path)), VERIFICATION_FAILED, "canonical_json_depth_limit"
    )


@pytest.mark.parametrize("levels", DEPTHS)
@pytest.mark.parametrize("which", ["receipt", "intent"])
def test_purge_verify_receipt_refuses_a_deep_file(
    installed: Path, tmp_path: Path, levels: int, which: str
) -> None:
    receipt, intent = tmp_path / "p.receipt.json", tmp_path / "p.intent.json"
    receipt.write_text(nested(levels) if which == "receipt" else "{}")
    intent.write_text(nested(levels) if which == "intent" else "{}")
    args = ("purge", "verify-receipt", str(receipt), "--master-fingerprint", fingerprint(installed))
    result = run_aimos(*args)
    assert result.code == VERIFICATION_FAILED, result.describe()
    assert "Traceback" not in result.both and "internal error" not in result.both, result.describe()
    assert f"{which}:canonical_json_depth_limit" in result.err, result.describe()
    verdict = json.loads(run_aimos(*args, "--json").out)
    assert verdict["valid"] is False and verdict["reason"] == f"{which}:canonical_json_depth_limit"


@pytest.mark.parametrize("levels", DEPTHS)
def test_verify_bundle_refuses_a_deep_file(installed: Path, tmp_path: Path, levels: int) -> None:
    path = tmp_path / "bundle.json"
    path.write_text(nested(levels))
    result = run_aimos("verify-bundle", str(path), "--json")
    assert result.code == VERIFICATION_FAILED, result.describe()
    assert "internal error" not in result.both
    assert json.loads(result.out)["primary_reason"] == "canonical_json_depth_limit"


def test_a_deep_save_body_in_the_brain_fails_verification(installed: Path) -> None:
    """The save's signed body replaced by deep JSON: show and verify say it does not verify (4),
    recall fails closed (5, the disclosure's closed reason); nothing of the memory is shown."""
    text = "The heron colony nests by the east lake"
    target = save(text)
    drop_guards(installed, "memory_provenance")
    run_sql(
        installed,
        f"UPDATE memory_provenance SET body_json = '{nested(1000)}' WHERE memory_id = '{target}'",
    )
    assert_refused_closed(
        run_aimos("show", target),
        VERIFICATION_FAILED,
        "DOES NOT VERIFY: save_record_invalid (save_provenance_body_invalid)",
        never=(text,),
    )
    assert_refused_closed(
        run_aimos("recall", "heron colony"), 5, "save_provenance_body_invalid", never=(text,)
    )
    verify = run_aimos("verify", "--json")
    assert verify.code == VERIFICATION_FAILED, verify.describe()
    failures = json.loads(verify.out)["in_database"]["failures"]
    assert [(f["memory_id"], f["detail"]) for f in failures] == [(target, "save_provenance_body_invalid")]


@pytest.mark.parametrize("column", ["evidence", "decision", "command", "request_body"])
def test_a_deep_receipt_record_in_the_brain_is_refused(installed: Path, column: str) -> None:
    save("herons eat fish and frogs")
    receipt = run_aimos("recall", "herons", "--json").json()["receipt"]["receipt_id"]
    drop_guards(installed, "recall_receipts")
    if column == "decision":  # stored deflated since migration 11: the attacker deflates it too,
        # with random spaces between the levels, so it is not refused first as a deflate bomb (a
        # stored text inflates to at most 64 times its size) but read, and refused for its depth
        rng = random.Random(7)
        spaced = "".join('{"a":' + " " * rng.randrange(4) for _ in range(1000)) + "1" + "}" * 1000
        run_sql(installed, f"UPDATE recall_receipts SET decision_deflated = X'{deflate_text(spaced).hex()}'")
    else:
        run_sql(installed, f"UPDATE recall_receipts SET {column} = '{nested(1000)}'")
    assert sqlite_value(installed / BRAIN, "SELECT COUNT(*) FROM recall_receipts") == "1"
    for args in (("receipt", "show", receipt), ("receipt", "verify", receipt)):
        assert_refused_closed(
            run_aimos(*args),
            VERIFICATION_FAILED,
            f"receipt {receipt}'s {column.replace('_', ' ')} is nested deeper than 32 levels",
            "canonical_json_depth_limit",
        )


# --- the limit is the canonical one, to the level ----------------------------------------------
def _canonical_ok(value: Any) -> bool:
    try:
        canonical_json(value)
    except CanonicalJSONError:
        return False
    return True


@pytest.mark.parametrize("levels", range(MAX_DEPTH - 2, MAX_DEPTH + 4))
@pytest.mark.parametrize("leaf", ["1", "[]", "{}", '"[[{"', "[[], {}]"])
def test_json_loads_refuses_exactly_what_canonical_json_refuses(levels: int, leaf: str) -> None:
    text = "[" * levels + leaf + "]" * levels
    value = json.loads(text)
    try:
        json_loads(text)
        refused = False
    except JSONDepthError as exc:
        refused = True
        assert exc.reason == "canonical_json_depth_limit"
        assert isinstance(exc, ValueError)
    assert refused == (not _canonical_ok(value))


def test_verify_bundle_refuses_a_deep_witness_or_trust_context(installed: Path, tmp_path: Path) -> None:
    """A V2 mutation bundle verified with a deep witness or trust context: exit 4 with the V2
    verifier's closed reason for an unreadable document of that kind."""
    target = save("herons eat fish and frogs")
    run_aimos("recall", "herons").ok()
    outcome = run_aimos("feedback", target, "--good", "--json").json()["outcome_id"]
    bundle = tmp_path / "o.json"
    run_aimos("export-outcome", outcome, "-o", str(bundle)).ok()
    deep = tmp_path / "deep.json"
    deep.write_text(nested(1000))
    witness, trust = f"{bundle}.witness.json", f"{bundle}.trust-context.json"
    base = ("verify-bundle", str(bundle), "--master-fingerprint", fingerprint(installed))
    assert (
        run_aimos(*base, "--witness", witness, "--trust-context", trust)
        .ok()
        .out.rstrip("\n")
        .rsplit("\n", 1)[-1]
        .startswith("valid: ")
    )
    for args, reason in (
        (
            ("--witness", str(deep), "--trust-context", trust),
            "MUTATION_CRYPTOGRAPHIC_WITNESS_COMMITMENT_INVALID",
        ),
        (("--witness", witness, "--trust-context", str(deep)), "ENVELOPE_COMMITMENT_INVALID"),
    ):
        result = run_aimos(*base, *args)
        assert result.code == VERIFICATION_FAILED, result.describe()
        assert "internal error" not in result.both and "Traceback" not in result.both
        assert f"the bundle is invalid: {reason}" in result.err, result.describe()
