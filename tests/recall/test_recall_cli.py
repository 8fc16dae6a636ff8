"""`aimos recall`, `aimos receipt ...` and `aimos index rebuild` through the real CLI in
subprocesses, on a brain made by a real `aimos install --keystore file`; the brain is looked at
from outside with the real sqlite3 shell. SPEC sections 5, 8 and 15.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.cli import (
    BRAIN,
    UUID_RE,
    Result,
    assert_refused,
    assert_unchanged,
    parse_json,
    run_aimos,
    snapshot,
    sqlite,
    sqlite_value,
    table_counts,
)
from support.recall import ids, recall_json, save

pytestmark = pytest.mark.timeout(120)

USAGE, NOT_FOUND, VERIFICATION, IDENTITY = 2, 3, 4, 6
EMPTY_ROOT = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"  # SHA-256 of ""
RECALL_TABLES = ("recall_receipts", "request_nonces", "events", "memories")


def enroll(agent_id: str, *options: str) -> None:
    run_aimos("agent", "enroll", agent_id, *options).ok()


def receipts(home: Path) -> int:
    return table_counts(home / BRAIN, ("recall_receipts",))["recall_receipts"]


# --- the happy path ---------------------------------------------------------------------------
def test_a_recall_does_not_pad_with_memories_that_do_not_match(installed: Path) -> None:
    # as the guides do, the others share only "key" with the query, a word in most of the memories:
    # BM25 gives it a millionth of the weight of "spare"
    for text in (
        "every request an agent makes is signed with its key",
        "the master key never leaves this machine",
        "an agent's key is rotated every ninety days",
        "the keychain holds each key's secret half",
    ):
        save(text)
    key = save("the spare key is under the blue flowerpot by the back door")
    assert sqlite_value(installed / BRAIN, "SELECT COUNT(*) FROM memories") == "5"
    data = recall_json("where is the spare key")
    assert ids(data) == [key], data["results"]
    assert data["results"][0]["relevance"] == 1.0
    shown = run_aimos("recall", "where is the spare key").ok()
    assert len(shown.out.splitlines()) == 2, shown.describe()  # the header and the one memory
    nothing = run_aimos("recall", "zebra quasar").ok()
    assert nothing.out == "" and "abstains" in nothing.err, nothing.describe()


def test_recall_prints_results_and_the_receipt(installed: Path) -> None:
    coffee = save("My coffee order is a flat white with oat milk")
    save("The dentist appointment is on Tuesday at 3pm")
    save("Project falcon deadline moved to March")
    result = run_aimos("recall", "what is my coffee order").ok()
    lines = result.out.splitlines()
    assert lines[0].split() == ["#", "id", "match", "trust", "weight", "label", "memory"], result.describe()
    # the best match shows as 1.00, a memory nobody judged as "not judged" at trust 0.72
    assert lines[1].split()[:7] == ["1", coffee[:8], "1.00", "0.72", "1.000", "not", "judged"], (
        result.describe()
    )
    assert "flat white" in lines[1]
    found = re.search(r"receipt ([0-9a-f-]{36})\s+root ([0-9a-f]{64})", result.err)
    assert found, result.describe()
    data = recall_json("coffee order")
    assert ids(data)[0] == coffee
    receipt = data["receipt"]
    assert receipt["result_count"] == len(data["results"]) == len(receipt["evidence"])
    assert [e["memory_id"] for e in receipt["evidence"]] == ids(data)
    assert [e["ordinal"] for e in receipt["evidence"]] == list(range(len(data["results"])))
    assert receipts(installed) == 2
    run_aimos("receipt", "verify", found.group(1)).ok()
    run_aimos("receipt", "verify", receipt["receipt_id"]).ok()


# --- clearance and data-class ceilings -----------------------------------------------------------
def test_grant_ceilings_bound_what_a_recall_discloses(installed: Path) -> None:
    enroll("low", "--clearance", "3")
    enroll("pub", "--data-class", "internal")
    c7 = save("zebra launch codes stored in the vault", "--clearance", "7")
    conf = save("zebra merger plan for next year", "--clearance", "2", "--data-class", "confidential")
    seen = save("zebra feeding schedule", "--clearance", "2", "--data-class", "internal")
    hidden = {"low": (c7, "launch codes"), "pub": (conf, "merger plan")}
    for agent, (memory_id, words) in hidden.items():
        text = run_aimos("recall", "zebra launch codes merger plan feeding", "--as", agent).ok()
        assert memory_id[:8] not in text.both and words not in text.both, text.describe()
        assert seen[:8] in text.out, text.describe()
        data = recall_json("zebra launch codes merger plan feeding", "--as", agent, "--show-withheld")
        assert ids(data) and memory_id not in ids(data)
        assert memory_id not in json.dumps(data), "an out-of-grant memory appears in the receipt"
        assert data["receipt"]["evidence"] and all(
            e["memory_id"] != memory_id for e in data["receipt"]["evidence"]
        )
    # the cli agent's grant (clearance <= 10, confidential) sees all three
    assert set(ids(recall_json("zebra launch codes merger plan feeding"))) == {c7, conf, seen}


# --- bad input ------------------------------------------------------------------------------------
BAD_INPUT = [
    (("",), "aimos recall"),
    (("   ",), "aimos recall"),
    (("zebra", "-k", "0"), "-k"),
    (("zebra", "-k", "201"), "-k"),
    (("zebra", "--limit", "-3"), "-k"),
    (("zebra", "-k", "0", "--json"), "-k"),
]


def test_bad_recall_input_is_a_usage_error_that_changes_nothing(installed: Path) -> None:
    save("zebra feeding schedule")
    before = snapshot(installed)
    counts = table_counts(installed / BRAIN, RECALL_TABLES)
    for args, hint_word in BAD_INPUT:
        result = run_aimos("recall", *args)
        assert_refused(result, USAGE, hint_word)
    assert_unchanged(installed, before)
    assert table_counts(installed / BRAIN, RECALL_TABLES) == counts


def test_recall_by_a_revoked_epoch_is_refused(installed: Path) -> None:
    enroll("gone")
    save("zebra feeding schedule")
    run_aimos("recall", "zebra", "--as", "gone").ok()
    run_aimos("agent", "revoke", "gone").ok()
    before = snapshot(installed)
    counts = table_counts(installed / BRAIN, RECALL_TABLES)
    for extra in ((), ("--json",)):
        result = run_aimos("recall", "zebra", "--as", "gone", *extra)
        assert_refused(result, IDENTITY, "rotate")
        assert "revoked" in result.err, result.describe()
    assert_unchanged(installed, before)
    assert table_counts(installed / BRAIN, RECALL_TABLES) == counts


def test_recall_as_an_unknown_agent_is_refused(installed: Path) -> None:
    before = snapshot(installed)
    result = run_aimos("recall", "zebra", "--as", "nobody")
    assert_refused(result, NOT_FOUND, "agent")
    assert_unchanged(installed, before)


SYNTAX_QUERIES = ['"unbalanced', "NEAR(a b)", "a AND OR b", "(x", "col:value", "^start", "-x", "*", '"']


def test_fts_syntax_characters_are_searched_as_text(installed: Path) -> None:
    target = save("unbalanced start near value col x b")
    save("llamas graze on the hill")
    save("the ferry leaves at noon")
    for query in SYNTAX_QUERIES:
        # `--` ends the options, so a query that starts with '-' reaches aimos as text
        result = run_aimos("recall", "--json", "--", query)
        data = parse_json(result)
        assert "error" not in result.err.lower(), result.describe()
        if query in ("*", '"'):  # no words at all: nothing to search for, so aimos abstains
            assert data["results"] == [] and data["abstained"] is True, result.describe()
        else:
            assert ids(data) == [target], result.describe()
        assert UUID_RE.match(data["receipt"]["receipt_id"])


def test_unknown_receipt_id_is_not_found(installed: Path) -> None:
    before = snapshot(installed)
    missing = "7f3c2a10-0000-4000-8000-000000000000"
    for command in (
        ("receipt", "show", missing),
        ("receipt", "verify", missing),
        ("receipt", "show", "7f3c"),
    ):
        assert_refused(run_aimos(*command), NOT_FOUND, "aimos recall")
    assert_unchanged(installed, before)


# --- receipt files edited by hand ------------------------------------------------------------------
def _flip(text: str, at: int) -> str:
    """Change one base64url character of ``text`` in the middle (decodes to other bytes)."""
    return text[:at] + ("B" if text[at] != "B" else "C") + text[at + 1 :]


EDITS: dict[str, tuple[Callable[[dict[str, Any]], object], str]] = {
    "evidence score": (lambda d: d["evidence"][0].__setitem__("score", 0.999), "Merkle root recomputes"),
    "evidence memory id": (
        lambda d: d["evidence"][1].__setitem__("memory_id", d["evidence"][0]["memory_id"]),
        "Merkle root recomputes",
    ),
    "merkle root": (lambda d: d.__setitem__("merkle_root", "ab" * 32), "Merkle root recomputes"),
    "event signature": (
        lambda d: d["event"].__setitem__("signature_b64u", _flip(d["event"]["signature_b64u"], 20)),
        "housekeeper signature on the event verifies",
    ),
    "decision": (
        lambda d: d["decision"].__setitem__("selected_memory_ids", []),
        "decision hash recomputes",
    ),
    "request body": (
        lambda d: d["request"]["body"].__setitem__("limit", 50),
        "agent's signed recall request",
    ),
}


def test_receipt_file_edited_by_hand_fails_and_names_the_check(
    installed: Path, tmp_path: Path, master_fingerprint: str
) -> None:
    save("kestrel nest on the north tower")
    save("kestrel sightings logged in spring")
    data = recall_json("kestrel")
    assert len(data["results"]) == 2
    receipt_id = data["receipt"]["receipt_id"]
    exported = run_aimos("receipt", "show", receipt_id, "--json").ok().out
    original = tmp_path / "receipt.json"
    original.write_text(exported, "utf-8")
    # the untouched file verifies offline against the fingerprint install printed
    good = run_aimos("receipt", "verify", str(original), "--master-fingerprint", master_fingerprint).ok()
    assert good.out.strip().splitlines()[-1] == "valid", good.describe()
    # without --master-fingerprint the anchor install wrote (outside the brain) is used
    run_aimos("receipt", "verify", str(original)).ok()
    # a unique prefix of the id names the receipt too
    assert parse_json(run_aimos("receipt", "show", receipt_id[:8], "--json"))["receipt_id"] == receipt_id
    # a file that is not a receipt, or not there, is a usage error
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json", "utf-8")
    assert_refused(run_aimos("receipt", "verify", str(garbage)), USAGE, "receipt show")
    assert_refused(run_aimos("receipt", "verify", str(tmp_path / "missing.json")), USAGE)
    # ... and not against another one
    wrong = run_aimos("receipt", "verify", str(original), "--master-fingerprint", "0" * 64)
    _assert_fails_naming(wrong, "master key matches the expected fingerprint")
    for name, (edit, check) in EDITS.items():
        doc = json.loads(exported)
        edit(doc)
        edited = tmp_path / f"{name.replace(' ', '-')}.json"
        edited.write_text(json.dumps(doc, indent=2), "utf-8")
        result = run_aimos("receipt", "verify", str(edited), "--master-fingerprint", master_fingerprint)
        _assert_fails_naming(result, check, what=name)


def _assert_fails_naming(result: Result, check: str, *, what: str = "") -> None:
    assert result.code == VERIFICATION, f"{what}\n{result.describe()}"
    assert "Traceback" not in result.both, result.describe()
    failed = [line for line in result.out.splitlines() if line.startswith("FAIL")]
    assert any(check in line for line in failed), f"{what}: {check!r} not among failures\n{result.describe()}"
    assert "error: receipt does not verify" in result.err, result.describe()
    assert "hint:" in result.err, result.describe()
    assert result.out.strip().splitlines()[-1] == "invalid", result.describe()


# --- policy: canaries, version heads, abstention --------------------------------------------------
CANARY = "SECRET-0A1B2C3D"


def test_canary_memory_is_withheld_and_listed_without_content(installed: Path) -> None:
    canary = save(f"The walrus drawer hint is {CANARY} behind the walrus drawer")
    trusted = save("walrus facts: walruses have long tusks")
    plain = run_aimos("recall", "walrus").ok()
    assert CANARY not in plain.both and canary[:8] not in plain.out, plain.describe()
    assert trusted[:8] in plain.out and "withheld" in plain.err, plain.describe()
    data = recall_json("walrus")
    assert ids(data) == [trusted] and data["withheld_count"] == 1 and "withheld" not in data
    shown = run_aimos("recall", "walrus", "--show-withheld").ok()
    assert CANARY not in shown.both and "behind the" not in shown.both, shown.describe()
    listed = [line for line in shown.out.splitlines() if canary in line]
    assert len(listed) == 1, shown.describe()
    assert "untrusted" in shown.out and "kept in quarantine" in listed[0], shown.describe()
    full = run_aimos("recall", "walrus", "--show-withheld", "--json")
    assert CANARY not in full.out
    data = parse_json(full)
    assert data["withheld"] == [
        {"memory_id": canary, "label": "unverified", "reason": "retained_quarantine", "untrusted": True}
    ]
    assert canary not in [e["memory_id"] for e in data["receipt"]["evidence"]]
    # the receipt records the withheld id (not its content)
    doc = parse_json(run_aimos("receipt", "show", data["receipt"]["receipt_id"], "--json"))
    assert doc["decision"]["withheld"] == [{"memory_id": canary, "reason": "retained_quarantine"}]
    assert CANARY not in json.dumps(doc)


def test_only_version_heads_are_recalled_unless_history(installed: Path) -> None:
    old = save("The okapi enclosure is in zone four")
    new = run_aimos("correct", old, "The okapi enclosure is in zone five").ok().out.strip()
    assert UUID_RE.match(new) and new != old
    data = recall_json("okapi enclosure zone")
    assert ids(data) == [new]
    assert [e["version_state"] for e in data["receipt"]["evidence"]] == ["current"]
    text = run_aimos("recall", "okapi enclosure zone").ok()
    assert old[:8] not in text.out and "zone four" not in text.out, text.describe()
    history = recall_json("okapi enclosure zone", "--history")
    assert set(ids(history)) == {old, new}
    states = {e["memory_id"]: e["version_state"] for e in history["receipt"]["evidence"]}
    assert states == {old: "superseded", new: "current"}
    run_aimos("receipt", "verify", history["receipt"]["receipt_id"]).ok()


def test_a_query_matching_only_quarantined_memories_abstains(installed: Path) -> None:
    canary = save(f"tapir burrow marker {CANARY} near the tapir burrow")
    save("unrelated note about zebras")
    before = receipts(installed)
    result = run_aimos("recall", "tapir burrow").ok()
    assert result.out == "", result.describe()
    assert "abstain" in result.err.lower(), result.describe()
    data = recall_json("tapir burrow")
    assert data["results"] == [] and data["abstained"] is True
    assert data["withheld_count"] == 1
    receipt = data["receipt"]
    assert receipt["result_count"] == 0 and receipt["evidence"] == [] and receipt["merkle_root"] == EMPTY_ROOT
    assert receipts(installed) == before + 2
    doc = parse_json(run_aimos("receipt", "show", receipt["receipt_id"], "--json"))
    assert doc["decision"]["abstained"] is True
    assert doc["decision"]["withheld"] == [{"memory_id": canary, "reason": "retained_quarantine"}]
    run_aimos("receipt", "verify", receipt["receipt_id"]).ok()


# --- the indexes ------------------------------------------------------------------------------------
TURNS = [
    "Ann: we sat by the river",
    "Ben: I bought a lamp and a kite",
    "Ann: the kite had a long tail",
    "Ben: we took the train, I had a kite and bread",
    "Ann: back to the river",
    "Ben: cake on the train to the barn",
    "Ann: cake and bread by the river",
]
TURNS_S2 = ["Cat: the budget review is on Friday", "Dan: I will bring the budget slides and a lamp"]
NOTES = [
    "shopping list: milk eggs flour",
    "dentist on Tuesday",
    "call the plumber",
    "water the plants",
    "book the flights",
    "renew the passport",
    "pay the electricity bill",
    "pick up the dry cleaning",
    "return the library books",
    "buy a birthday card for Ann",
]
QUERIES = [
    "lamp tail",
    "kite bread",
    "river",
    "train to the barn",
    "what did Ann say about cake",
    "budget lamp",
]


def test_index_rebuild_leaves_recall_results_identical(installed: Path) -> None:
    for turn in TURNS:
        save(turn, "--type", "dialog_turn", "--source", "s1")
    for turn in TURNS_S2:
        save(turn, "--type", "dialog_turn", "--source", "s2")
    for note in NOTES:
        save(note)

    def results() -> list[list[tuple[str, float]]]:
        found = []
        for query in QUERIES:
            data = recall_json(query, "-k", "20")
            found.append([(r["value"], r["score"]) for r in data["results"]])
        return found

    before = results()
    assert all(before), before
    rebuilt = run_aimos("index", "rebuild").ok()
    assert f"{len(TURNS) + len(TURNS_S2) + len(NOTES)} memories" in rebuilt.out, rebuilt.describe()
    after = results()
    order = [
        f"{q!r}:\n  before {[v for v, _ in b]}\n  after  {[v for v, _ in a]}"
        for q, b, a in zip(QUERIES, before, after, strict=True)
        if [v for v, _ in b] != [v for v, _ in a]
    ]
    assert not order, "recall results changed with `aimos index rebuild`:\n" + "\n".join(order)
    scores = [
        f"{q!r}: before {b}\n  after {a}" for q, b, a in zip(QUERIES, before, after, strict=True) if b != a
    ]
    assert not scores, "recall scores changed with `aimos index rebuild`:\n" + "\n".join(scores)


def test_context_index_holds_conversation_turns_only(installed: Path) -> None:
    """Migration 2: memory_context_fts holds conversation turns; other memories are not in it
    (recall counts their own text instead), which is also what `aimos index rebuild` writes.
    Its per-document sizes (the docsize shadow table) are what BM25 counts as documents."""
    save("Ann: the kite had a long tail", "--type", "dialog_turn", "--source", "s1")
    save("call the plumber")
    save("Ben: I bought a lamp", "--type", "dialog_turn", "--source", "s1")
    save("water the plants")
    brain = installed / BRAIN

    def column(sql: str) -> list[str]:
        proc = sqlite(brain, sql)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.split()

    turns = column("SELECT rowid FROM memories WHERE memory_type = 'dialog_turn' ORDER BY rowid")
    indexed = "SELECT id FROM memory_context_fts_docsize ORDER BY id"
    assert column(indexed) == turns, "memory_context_fts has documents for memories that are not turns"
    run_aimos("index", "rebuild").ok()
    assert column(indexed) == turns


def test_index_tables_hold_no_text_as_the_sqlite3_shell_sees_them(installed: Path) -> None:
    value = "the vault word is zanzibarquux and the door code is on the blue card"
    save(value)
    brain = installed / BRAIN
    tables = sqlite(brain, "SELECT name FROM sqlite_master WHERE name LIKE 'memory%fts%' ORDER BY name")
    assert tables.returncode == 0, tables.stderr
    names = set(tables.stdout.split())
    assert {"memory_fts", "memory_context_fts"} <= names
    assert "memory_fts_content" not in names and "memory_context_fts_content" not in names, names
    # the whole text is in no shadow table of either index (only the memory row holds it)
    for name in sorted(n for n in names if n.endswith(("_data", "_idx", "_docsize", "_config"))):
        dump = sqlite(brain, f"SELECT * FROM {name}", "-quote")  # blobs as X'hex', text quoted
        assert dump.returncode == 0, dump.stderr
        assert name != "memory_fts_data" or dump.stdout.strip(), "the index is empty"
        assert value.encode().hex().upper() not in dump.stdout.upper(), name
        assert value not in dump.stdout, name
    # SELECT * FROM memory_fts: every text column is NULL (contentless)
    shell = sqlite(brain, "SELECT rowid, quote(text) FROM memory_fts")
    if shell.returncode == 0:
        rows = [line.split("|") for line in shell.stdout.splitlines()]
        assert rows and all(r[1] == "NULL" for r in rows), shell.stdout
    else:
        # the system sqlite3 predates contentless_delete (3.43) and cannot open the table at all
        assert "contentless_delete" in shell.stderr, shell.stderr
