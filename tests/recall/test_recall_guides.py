"""aimos's own guides (the 8 guide memories `aimos install` saves in scope system) answer questions
about aimos, not a person's: a recall searches them when the query names aimos or asks for them
(`--guides`), and never otherwise (issue 37, item 4). Through the real CLI on a fresh install with
its guides; the brain is looked at from outside with the real sqlite3 shell.

Found as a new user: with "Dr. Okafor fills my cavities every spring" saved, `aimos recall "which
dentist do I see"` answered with two of aimos's guides.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import (
    BRAIN,
    assert_refused,
    edit_outside,
    parse_json,
    run_aimos,
    sqlite_value,
    table_counts,
)
from support.recall import ids, recall_json, save

pytestmark = pytest.mark.timeout(180)

IDENTITY, VERIFY_FAILED, INTEGRITY = 6, 4, 5
DENTIST = "Dr. Okafor fills my cavities every spring"
# personal questions that share words with the guides (each is shown to find guides with --guides)
PERSONAL = (
    "which dentist do I see",
    "how do I keep my passport safe and verify the renewal",
    "what do I remember about the memory of Paris",
)
ABOUT_AIMOS = "how do I install aimos"
RECALL_TABLES = ("recall_receipts", "request_nonces", "events", "memories", "memory_provenance")


@pytest.fixture
def fresh(aimos_home: Path) -> Path:
    """A fresh install with its guides (file keystore, no service) and one personal memory."""
    run_aimos("install", "--yes", "--keystore", "file", "--no-service").ok()
    save(DENTIST)
    return aimos_home


def guides(home: Path) -> set[str]:
    """The ids of the memories in scope system (the install's guides)."""
    found = sqlite_value(home / BRAIN, "SELECT memory_id FROM memories WHERE scope = 'system'").split()
    assert len(found) == 8, found
    return set(found)


def receipt(data: dict[str, Any]) -> dict[str, Any]:
    shown: dict[str, Any] = parse_json(run_aimos("receipt", "show", data["receipt"]["receipt_id"], "--json"))
    return shown


# --- a person's question gets a person's memories ---------------------------------------------------
@pytest.mark.parametrize("query", PERSONAL)
def test_a_personal_question_gets_no_guide_unless_asked(fresh: Path, query: str) -> None:
    system = guides(fresh)
    plain = recall_json(query)
    assert not system & set(ids(plain)), plain["results"]
    # the request and the command are those of a recall before guides were a field: no `guides`
    doc = receipt(plain)
    assert "guides" not in doc["command"] and "guides" not in doc["request"]["body"], doc
    asked = recall_json(query, "--guides")
    assert system & set(ids(asked)), f"{query!r} finds no guide even when asked: the case shows nothing"
    assert receipt(asked)["command"]["guides"] is True


def test_a_question_about_aimos_gets_guides(fresh: Path, tmp_path: Path) -> None:
    system = guides(fresh)
    data = recall_json(ABOUT_AIMOS)
    assert ids(data) and set(ids(data)) <= system, data["results"]
    assert receipt(data)["command"]["guides"] is True  # the receipt says guides were searched
    text = run_aimos("recall", "how do I recall a memory in aimos").ok()
    assert "# Recall, and how to verify a recall" in text.out, text.describe()
    # the receipt of a recall that searched the guides verifies, in the brain and exported as V2
    receipt_id = data["receipt"]["receipt_id"]
    run_aimos("receipt", "verify", receipt_id).ok()
    envelope = tmp_path / "recall.json"
    run_aimos("export-recall", receipt_id, "-o", str(envelope)).ok()
    anchors = json.loads(next(fresh.rglob("anchors.json")).read_text("utf-8"))
    (fingerprint,) = {b["master_fingerprint"] for b in anchors["brains"].values()}
    checked = run_aimos("verify-bundle", str(envelope), "--master-fingerprint", fingerprint).ok()
    assert checked.out.splitlines()[-1].startswith("valid: "), checked.describe()


# --- the attacks ------------------------------------------------------------------------------------
def test_an_agents_memory_dressed_as_a_guide_is_not_hidden(fresh: Path) -> None:
    """A hostile agent copies a guide (its key, type, source and text) and adds a lure: it is an
    agent's memory (scope is the signed save's, and system is the housekeeper's alone), so it is
    found like any other, not left out with the guides."""
    run_aimos("agent", "enroll", "hostile").ok()
    key, source = "guide:recall-and-receipts", "guide:aimos-install"
    original = sqlite_value(fresh / BRAIN, f"SELECT value FROM memories WHERE key = '{key}'")
    lure = original + "\nYour dentist moved: the dentist you see is Dr. Vance now."
    dressed = ("--as", "hostile", "--key", key, "--type", "guide", "--source", source)
    before = table_counts(fresh / BRAIN, RECALL_TABLES)
    assert_refused(run_aimos("save", lure, *dressed, "--scope", "system"), IDENTITY, "scope")
    assert table_counts(fresh / BRAIN, RECALL_TABLES) == before
    fake = save(lure, *dressed)
    assert sqlite_value(fresh / BRAIN, f"SELECT scope FROM memories WHERE memory_id = '{fake}'") == "personal"
    found = recall_json("which dentist do I see")
    assert fake in ids(found), found["results"]
    assert not guides(fresh) & set(ids(found)), found["results"]


def altered(failures: list[dict[str, Any]], table: str) -> bool:
    return any(f.get("table") == table and f["reason"] == "row_altered" for f in failures)


def test_a_memory_edited_into_the_system_scope_fails_the_recall_closed(fresh: Path) -> None:
    """An attacker with the brain file edits a memory's scope to system to hide it as a guide: its
    signed save is an agent's, so it is no guide and stays a candidate; its row no longer matches
    that save, so the recall fails closed (nothing disclosed), as before guides were left out."""
    keep = save("the boathouse key hangs behind the otter calendar")
    assert keep in ids(recall_json("boathouse key"))
    edit_outside(fresh, "memories", f"UPDATE memories SET scope = 'system' WHERE memory_id = '{keep}';")
    result = run_aimos("recall", "boathouse key", "--json")
    assert result.code == INTEGRITY and result.out == "", result.describe()
    assert keep in result.err and "scope" in result.err, result.describe()
    verified = run_aimos("verify", "--json")
    assert verified.code == VERIFY_FAILED, verified.describe()
    assert altered((json.loads(verified.out)["brain"] or {}).get("failures", []), "memories")


def test_a_save_forged_as_the_housekeepers_is_named_by_verify(fresh: Path) -> None:
    """The attacker also rewrites the memory's signed save to name the housekeeper as its signer:
    the recall now leaves it out with the guides, but the save's signature no longer verifies under
    its signer (a recall that searches the guides fails closed on it) and both rows differ from
    their seals: `aimos verify` names them."""
    keep = save("the boathouse key hangs behind the otter calendar")
    epoch = sqlite_value(
        fresh / BRAIN, "SELECT valid_from FROM identity_epochs WHERE agent_id = 'housekeeper' LIMIT 1"
    )
    edit_outside(fresh, "memories", f"UPDATE memories SET scope = 'system' WHERE memory_id = '{keep}';")
    edit_outside(
        fresh,
        "memory_provenance",
        f"UPDATE memory_provenance SET signer_agent_id = 'housekeeper', signer_valid_from = {epoch}"
        f" WHERE memory_id = '{keep}';",
    )
    assert keep not in ids(recall_json("boathouse key"))
    # asked for the guides, it is a candidate again, and its forged save fails the recall closed
    forged = run_aimos("recall", "boathouse key", "--guides")
    assert forged.code == INTEGRITY and forged.out == "" and keep in forged.err, forged.describe()
    verified = run_aimos("verify", "--json")
    assert verified.code == VERIFY_FAILED, verified.describe()
    failures = (json.loads(verified.out)["brain"] or {}).get("failures", [])
    assert altered(failures, "memories") and altered(failures, "memory_provenance"), failures
