"""Recall end to end, in real subprocesses with the file keystore:
install -> save -> recall finds the right memory first -> `receipt verify` passes -> a memory's
value is edited in the database file (sqlite3 shell, update trigger dropped) -> the next recall
that would disclose it fails closed (exit 5, names the memory, discloses nothing, records a
signed `recall_disclosure_failed` event) -> the earlier receipt no longer verifies (exit 4).
SPEC sections 1.3, 8 and 15.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.e2e import BRAIN, SQLITE3, UUID_RE, run_aimos, sqlite_rows

pytestmark = pytest.mark.timeout(180)

MEMORIES = {
    "coffee": "My coffee order is a flat white with oat milk",
    "dentist": "The dentist appointment is on Tuesday at 3pm with Dr. Okafor",
    "falcon": "Project falcon deadline moved to the end of March",
    "garden": "Water the tomato plants in the garden every second evening",
}


def save(text: str) -> str:
    result = run_aimos("save", text).ok()
    memory_id = result.out.strip()
    assert UUID_RE.match(memory_id), result.describe()
    return memory_id


def recall(query: str) -> dict[str, Any]:
    data: dict[str, Any] = run_aimos("recall", query, "--json").json()
    return data


def shell(brain: Path, sql: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SQLITE3, str(brain), sql], capture_output=True, text=True, timeout=30, check=False)


def count(brain: Path, table: str) -> int:
    return int(sqlite_rows(brain, f"SELECT COUNT(*) AS n FROM {table}")[0]["n"])


def test_recall_verify_tamper_fail_closed(aimos_home: Path, tmp_path: Path) -> None:
    installed = run_aimos("install", "--yes", "--no-guides", "--keystore", "file").ok()
    fingerprint = re.search(r"master fingerprint: ([0-9a-f]{64})\b", installed.out)
    assert fingerprint, installed.describe()
    brain = aimos_home / BRAIN
    ids = {name: save(text) for name, text in MEMORIES.items()}

    # recall finds the right memory first, and its receipt verifies
    data = recall("what is my coffee order?")
    assert data["results"][0]["memory_id"] == ids["coffee"], data["results"]
    assert data["results"][0]["value"] == MEMORIES["coffee"]
    receipt_id = data["receipt"]["receipt_id"]
    verified = run_aimos("receipt", "verify", receipt_id).ok()
    assert verified.out.strip().splitlines()[-1] == "valid", verified.describe()
    assert recall("when is the dentist appointment")["results"][0]["memory_id"] == ids["dentist"]
    exported = tmp_path / "receipt.json"
    exported.write_text(run_aimos("receipt", "show", receipt_id, "--json").ok().out, "utf-8")

    # edit the memory's value in the database file, past the append-only trigger(s)
    triggers = [
        r["name"]
        for r in sqlite_rows(
            brain,
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'memories'"
            " AND sql LIKE '%BEFORE UPDATE%'",
        )
    ]
    assert triggers, "memories has no update trigger to drop"
    drops = " ".join(f"DROP TRIGGER {name};" for name in triggers)
    edit = shell(
        brain,
        f"{drops} UPDATE memories SET value = 'My coffee order is a triple espresso'"
        f" WHERE memory_id = '{ids['coffee']}';",
    )
    assert edit.returncode == 0, edit.stderr
    assert sqlite_rows(brain, f"SELECT value FROM memories WHERE memory_id = '{ids['coffee']}'")[0][
        "value"
    ] == ("My coffee order is a triple espresso")
    receipts_before = count(brain, "recall_receipts")
    failures_before = len(_failure_events(brain, ids["coffee"]))

    # the next recall that would disclose it fails closed
    for extra in ((), ("--json",)):
        failed = run_aimos("recall", "what is my coffee order?", *extra)
        assert failed.code == 5, failed.describe()
        assert "Traceback" not in failed.both, failed.describe()
        assert failed.out == "", f"something was disclosed on stdout\n{failed.describe()}"
        assert ids["coffee"] in failed.err, failed.describe()
        assert "error:" in failed.err and "hint:" in failed.err, failed.describe()
        assert "espresso" not in failed.err and "flat white" not in failed.err, failed.describe()
    assert count(brain, "recall_receipts") == receipts_before, "a failed recall left a receipt"

    # ... and left a signed recall_disclosure_failed event naming the memory
    events = _failure_events(brain, ids["coffee"])
    assert len(events) == failures_before + 2, events
    for event in events:
        body = json.loads(event["signed_body"])
        assert body["operation"] == "recall_disclosure_failed"
        assert body["signer_agent_id"] == "housekeeper"
        assert body["subject_memory_id"] == ids["coffee"]
        assert body["metadata"]["memory_id"] == ids["coffee"]
        assert body["metadata"]["reason"], body
        assert "espresso" not in event["signed_body"] and "flat white" not in event["signed_body"]
        _assert_signed_by_housekeeper(brain, event)

    # a recall that does not touch the edited memory still works
    garden = recall("tomato plants garden")
    assert [r["memory_id"] for r in garden["results"]] == [ids["garden"]]

    # the earlier receipt no longer verifies in the brain, and says which check failed
    broken = run_aimos("receipt", "verify", receipt_id)
    assert broken.code == 4, broken.describe()
    assert "Traceback" not in broken.both, broken.describe()
    failed_checks = [line for line in broken.out.splitlines() if line.startswith("FAIL")]
    assert failed_checks and all(ids["coffee"] in line for line in failed_checks), broken.describe()
    assert ids["coffee"] in broken.err and "hint:" in broken.err, broken.describe()
    assert broken.out.strip().splitlines()[-1] == "invalid", broken.describe()
    as_json = run_aimos("receipt", "verify", receipt_id, "--json")
    assert as_json.code == 4, as_json.describe()
    report = json.loads(as_json.out)
    assert report["valid"] is False
    bad = [c for c in report["checks"] if not c["ok"]]
    assert len(bad) == 1 and ids["coffee"] in bad[0]["check"] and bad[0]["detail"], report

    # the exported file is a statement of what was disclosed then: it still verifies offline
    offline = run_aimos("receipt", "verify", str(exported), "--master-fingerprint", fingerprint.group(1))
    assert offline.code == 0, offline.describe()


def _failure_events(brain: Path, memory_id: str) -> list[dict[str, Any]]:
    return sqlite_rows(
        brain,
        "SELECT e.signed_body, e.nonce, e.ts_signed, e.signature_b64u, e.content_hash, i.public_key_b64u"
        " FROM events e JOIN identity_epochs i"
        " ON i.agent_id = e.signer_agent_id AND i.valid_from = e.signer_valid_from"
        f" WHERE e.operation = 'recall_disclosure_failed' AND e.subject_memory_id = '{memory_id}'"
        " ORDER BY e.rowid",
    )


def _assert_signed_by_housekeeper(brain: Path, event: dict[str, Any]) -> None:
    """The event's Ed25519 signature (payload form) verifies under the housekeeper's enrolled key."""
    import hashlib

    from aimos.crypto.ed25519 import verify
    from aimos.crypto.encoding import b64u_decode
    from aimos.crypto.messages import payload_message

    body_bytes = event["signed_body"].encode("utf-8")
    assert hashlib.sha256(body_bytes).hexdigest() == event["content_hash"]
    message = payload_message(None, event["nonce"], event["ts_signed"], body_bytes=body_bytes)
    assert verify(event["public_key_b64u"], message, b64u_decode(event["signature_b64u"])), event
    housekeepers = sqlite_rows(
        brain, "SELECT public_key_b64u FROM identity_epochs WHERE role = 'housekeeper'"
    )
    assert event["public_key_b64u"] in {h["public_key_b64u"] for h in housekeepers}
