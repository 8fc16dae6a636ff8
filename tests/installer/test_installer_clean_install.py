"""Clean-install qualification on Linux with the real Secret Service (SPEC section 11,
PROTOCOL-NOTES section 13 "Qualified result"): one real `aimos install --yes --keystore os
--service process` in a clean AIMOS_HOME, then the brain, the keychain, the housekeeper (killed
and restarted), `aimos verify`, a recall of the guide, the signed onboarding events and the
receipt, all looked at from outside.
"""

from __future__ import annotations

import json
import os
import re
import signal
import stat
from pathlib import Path
from typing import Any

import pytest
from support.installer import (
    BRAIN,
    GUIDES,
    Reaper,
    brain_id_of,
    event_signature_ok,
    keychain_usernames,
    pid_alive,
    query,
    read_pid_file,
    require_keychain,
    run_aimos,
    scalar,
    wait_for,
)

from aimos.identity.anchors import KEPT_ANCHOR_ITEM

pytestmark = [pytest.mark.timeout(180), pytest.mark.keychain]

FLAGS = ("--yes", "--keystore", "os", "--service", "process")


def status() -> dict[str, Any]:
    found: dict[str, Any] = run_aimos("housekeeper", "status", "--json").json()
    return found


def test_clean_install_qualification(aimos_home: Path, tmp_path: Path, reaper: Reaper) -> None:
    keyring = require_keychain()
    from aimos.installer.setup import plan_sha256, verify_install_receipt

    # the plan first: the same flags in this very home, and in another clean home
    dry_here = run_aimos("install", *FLAGS, "--dry-run", "--json").json()
    other_home = tmp_path / "other-home"
    other_home.mkdir(mode=0o700)
    dry_there = run_aimos(
        "install", *FLAGS, "--dry-run", "--json", env={"AIMOS_HOME": str(other_home)}
    ).json()
    assert not (aimos_home / BRAIN).exists(), "a dry run created the brain"

    installed = run_aimos("install", *FLAGS).ok()
    bid = brain_id_of(aimos_home)
    reaper.forget_keys_of(bid)
    reaper.watch(read_pid_file(aimos_home))
    home = aimos_home

    # --- what install printed: the master fingerprint (the trust anchor) and the next commands
    fingerprint = scalar(home, "SELECT fingerprint FROM master_identity")
    shown = re.search(r"master fingerprint: ([0-9a-f]{64})\b", installed.out)
    assert shown and shown.group(1) == fingerprint, installed.describe()
    assert "aimos recall" in installed.both and "aimos status" in installed.both, installed.describe()
    assert "keychain" in installed.out.lower(), installed.describe()
    anchors = json.loads((home / "config" / "anchors.json").read_text())
    assert anchors["brains"][bid]["master_fingerprint"] == fingerprint

    # --- the brain: 8 guide memories, exactly housekeeper + cli, one master, the grant
    stems = sorted(p.stem for p in GUIDES.glob("*.md"))
    assert len(stems) == 8, stems
    memories = query(
        home, "SELECT key, value, memory_type, scope, author_agent_id, clearance_level FROM memories"
    )
    assert len(memories) == 8, [m["key"] for m in memories]
    assert {m["memory_type"] for m in memories} == {"guide"}
    assert {m["scope"] for m in memories} == {"system"}
    assert {m["author_agent_id"] for m in memories} == {"housekeeper"}, (
        "guides must be saved as the housekeeper"
    )
    assert sorted(m["key"] for m in memories) == [f"guide:{s}" for s in stems]
    by_key = {m["key"]: m["value"] for m in memories}
    for stem in stems:
        assert by_key[f"guide:{stem}"] == (GUIDES / f"{stem}.md").read_text("utf-8"), stem

    epochs = query(home, "SELECT agent_id, role, key_ref FROM identity_epochs ORDER BY agent_id")
    assert [(e["agent_id"], e["role"]) for e in epochs] == [("cli", "agent"), ("housekeeper", "housekeeper")]
    assert scalar(home, "SELECT COUNT(*) FROM master_identity") == 1
    grants = query(
        home,
        "SELECT clearance_ceiling, data_class_ceiling, write_allowed, allowed, master_fingerprint"
        " FROM recall_grants WHERE subject_agent_id = 'cli'",
    )
    assert grants == [
        {
            "clearance_ceiling": 10,
            "data_class_ceiling": "confidential",
            "write_allowed": 1,
            "allowed": 1,
            "master_fingerprint": fingerprint,
        }
    ]
    assert scalar(home, "SELECT value FROM brain_meta WHERE key = 'keystore'") == "os"

    # --- the keychain: the master and one item per epoch, under aimos:<brain_id>; no key files
    service = f"aimos:{bid}"
    names = {"master", KEPT_ANCHOR_ITEM, *(e["key_ref"] for e in epochs)}  # + the kept freshness anchor
    assert all(e["key_ref"].startswith(f"{e['agent_id']}@") for e in epochs), epochs
    for name in names:
        assert keyring.get_password(service, name), f"no keychain item {name!r} for {service}"
    assert keychain_usernames(service) == names
    assert not (home / "state" / "keys").exists(), "an os-keystore install wrote key files"

    # --- the housekeeper: running, ready, 5 jobs; survives a SIGKILL and a restart
    first = status()
    assert (first["running"], first["ready"], first["jobs_registered"]) == (True, True, 5), first
    assert first["service"]["manager"] == "process", first
    pid = read_pid_file(home)
    assert pid and pid == first["pid"] and pid_alive(pid), (pid, first)
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not status()["running"], "status --json to say running false after SIGKILL")
    assert not pid_alive(pid)
    run_aimos("housekeeper", "start").ok()
    reaper.watch(read_pid_file(home))
    again = status()
    assert (again["running"], again["ready"], again["jobs_registered"]) == (True, True, 5), again
    assert again["pid"] != pid and pid_alive(again["pid"]), again

    # --- verify, and a recall that finds the guide on receipts
    run_aimos("verify").ok()
    recalled = run_aimos("recall", "how does aimos verify a recall", "--json").json()
    assert recalled["results"], recalled
    assert recalled["results"][0]["key"] == "guide:recall-and-receipts", [
        r["key"] for r in recalled["results"]
    ]

    # --- the signed onboarding events
    events = {}
    for operation in ("first_launch_onboarding_started", "first_launch_onboarding_terminal"):
        rows = query(
            home,
            "SELECT event_id, operation, signer_agent_id, signer_valid_from, signed_body, content_hash,"
            " nonce, ts_signed, signature_b64u FROM events WHERE operation = ?",
            (operation,),
        )
        assert len(rows) == 1, f"{operation}: {len(rows)} events"
        event = rows[0]
        assert event["signer_agent_id"] == "housekeeper", event
        assert event_signature_ok(home, event), f"the signature of {operation} does not verify"
        events[operation] = json.loads(event["signed_body"])["metadata"]
    assert events["first_launch_onboarding_terminal"]["status"] == "SUCCESS"

    # --- the receipt: 0600, its own hash verifies, and the plan hash is the dry run's
    receipt_file = home / "state" / "onboarding" / "first-launch-receipt.json"
    assert stat.S_IMODE(receipt_file.stat().st_mode) == 0o600
    receipt = json.loads(receipt_file.read_text())
    assert verify_install_receipt(receipt)
    tampered = {**receipt, "status": "FAILED"}
    assert not verify_install_receipt(tampered), "verify_install_receipt accepted a changed receipt"
    assert receipt["brain"]["brain_id"] == bid and receipt["master_fingerprint"] == fingerprint
    assert receipt["guides"]["count"] == 8
    assert receipt["agent"]["grant"]["clearance_ceiling"] == 10
    assert receipt["plan_sha256"] == dry_here["plan_sha256"], "install's plan differs from the dry run's"
    assert receipt["plan_sha256"] == events["first_launch_onboarding_started"]["plan_sha256"]
    assert receipt["plan_sha256"] == events["first_launch_onboarding_terminal"]["plan_sha256"]
    assert events["first_launch_onboarding_started"]["plan"] == dry_here["plan"]
    # another home: the same plan but for the brain path (the only place the home appears)
    there = dry_there["plan"]
    assert there["brain"]["path"] == str(other_home / BRAIN)
    assert dry_there["plan_sha256"] != dry_here["plan_sha256"]
    moved = {**there, "brain": {**there["brain"], "path": str(home / BRAIN)}}
    assert moved == dry_here["plan"]
    assert plan_sha256(moved) == receipt["plan_sha256"]
