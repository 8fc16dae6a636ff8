"""Plain words where internals leaked (issue 38 item 12), through the real CLI.

`aimos show` and `aimos verify-bundle` say a memory's weight history in words ("no outcomes yet",
"1 signed weight change"), not a verifier's status row (`default_empty_chain True 0 0`);
verify-bundle ends with one line, its verdict and what it counted, whatever the bundle; and a
count agrees with its noun everywhere ("1 memory", "1 event chain", "1 result", "1 untrusted memory
withheld"), with no "memory(s)" left in any string of aimos/.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from support.cli import run_aimos
from support.people_words import either_number_in

from aimos.plural import agree, plural

VERIFY_FAILED = 4
STATUS_WORDS = (
    "certified_chain",
    "default_empty_chain",
    "signed_initial_weight",
    "unattested_initial_weight",
)


def last_line(text: str) -> str:
    return text.rstrip("\n").rsplit("\n", 1)[-1]


def test_plural_agrees_with_the_count() -> None:
    assert [plural(n, "memory") for n in (0, 1, 2)] == ["0 memories", "1 memory", "2 memories"]
    assert plural(1, "event chain") == "1 event chain" and plural(3, "match") == "3 matches"
    assert plural(2, "key") == "2 keys" and plural(2, "Merkle leaf", "Merkle leaves") == "2 Merkle leaves"
    assert plural(12_000, "row", grouped=True) == "12,000 rows"
    assert [agree(n, "has", "have") for n in (0, 1, 5)] == ["have", "has", "have"]


def test_show_says_the_weight_history_in_words(installed: Path) -> None:
    memory = run_aimos("save", "The boiler is serviced every October").ok().out.strip()
    fresh = run_aimos("show", memory).ok()
    assert re.search(r"^verifies\s+yes: no outcomes yet$", fresh.out, re.M), fresh.describe()
    receipt = run_aimos("recall", "boiler serviced", "--json").json()["receipt"]["receipt_id"]
    run_aimos("feedback", memory, "--good", "--receipt", receipt).ok()
    moved = run_aimos("show", memory).ok()
    assert re.search(r"^verifies\s+yes: 1 signed weight change, 1 signature checked$", moved.out, re.M), (
        moved.describe()
    )
    for shown in (fresh, moved):
        assert not any(word in shown.out for word in STATUS_WORDS), shown.describe()
    # --json keeps the verifier's own words
    assert run_aimos("show", memory, "--json").json()["verification"]["status"] == "certified_chain"


def test_verify_bundle_rows_in_words_and_one_summary_line_last(installed: Path, tmp_path: Path) -> None:
    boiler = run_aimos("save", "The boiler is serviced every October").ok().out.strip()
    run_aimos("save", "Alice prefers tea over coffee").ok()
    receipt = run_aimos("recall", "boiler serviced", "--json").json()["receipt"]["receipt_id"]
    run_aimos("feedback", boiler, "--good", "--receipt", receipt).ok()
    bundle = tmp_path / "brain.json"
    run_aimos("export", "--cognitive", str(bundle)).ok()

    valid = run_aimos("verify-bundle", str(bundle)).ok()
    assert last_line(valid.out) == "valid: 2 memories, 1 signed weight change, 1 signature checked", (
        valid.describe()
    )
    (row,) = [line for line in valid.out.splitlines() if line.startswith(boiler[:8])]
    assert re.fullmatch(rf"{boiler[:8]}\s+yes\s+1 signed weight change\s+1\s+-", row), valid.describe()
    assert "no outcomes yet" in valid.out, valid.describe()
    assert not any(word in valid.out for word in (*STATUS_WORDS, "True", "False")), valid.describe()
    assert valid.out.count("valid") == 1, "the verdict is said once, last"

    # a bundle whose weight was edited: invalid, and the last line says so with its reason
    doc = json.loads(bundle.read_text())
    doc["memories"][0]["retrieval_weight_milli"] = 1999
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc))
    invalid = run_aimos("verify-bundle", str(edited))
    assert invalid.code == VERIFY_FAILED, invalid.describe()
    verdict = json.loads(run_aimos("verify-bundle", str(edited), "--json").out)
    assert last_line(invalid.out).startswith(f"invalid: {verdict['primary_reason']} ("), invalid.describe()
    assert "Traceback" not in invalid.both

    # a V2 recall envelope: the same last line
    (anchored,) = json.loads((installed / "config" / "anchors.json").read_text())["brains"].values()
    envelope = tmp_path / "recall.json"
    made = run_aimos("export-recall", receipt, "--output", str(envelope)).ok()
    assert "(1 result)" in made.err, made.describe()
    v2 = run_aimos(
        "verify-bundle", str(envelope), "--master-fingerprint", anchored["master_fingerprint"]
    ).ok()
    assert re.fullmatch(r"valid: \d+ signatures checked", last_line(v2.out)), v2.describe()


def test_counts_of_one_agree_with_their_nouns(installed: Path, tmp_path: Path) -> None:
    """A brain of one memory: every count of one is said in the singular."""
    memory = run_aimos("save", "The guest wifi is called Tangerine").ok().out.strip()
    verified = run_aimos("verify").ok()
    assert "1 memory, 1 event chain" in verified.out, verified.describe()
    vectors = re.search(r"^vectors\s+(\d) of 1 memory (has|have) one", verified.out, re.M)
    assert vectors and vectors.group(2) == agree(int(vectors.group(1)), "has", "have"), verified.describe()
    exported = run_aimos("export", "--cognitive", str(tmp_path / "one.json")).ok()
    assert "wrote 1 memory to" in exported.err, exported.describe()
    text = run_aimos("export", "--text", str(tmp_path / "one.jsonl")).ok()
    assert "wrote 1 memory (jsonl)" in text.err, text.describe()
    run_aimos("label", memory, "poison", "--reason", "planted").ok()
    withheld = run_aimos("recall", "what is the guest wifi called").ok()
    assert "1 untrusted memory withheld;" in withheld.err, withheld.describe()
    for said in (verified, exported, text, withheld):
        assert not either_number_in(said.both), said.describe()


def test_no_string_in_aimos_leaves_a_number_open() -> None:
    """No string of aimos/ says "memory(s)": a count goes through aimos.plural."""
    root = Path(__file__).resolve().parents[2] / "aimos"
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and either_number_in(node.value)
            ):
                found.append(f"{path.relative_to(root.parent)}:{node.lineno}: {node.value.strip()[:80]!r}")
    assert not found, "\n".join(found)
