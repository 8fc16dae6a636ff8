"""Reserved identities through the real CLI: the housekeeper and the person's own agent `cli` are
never revoked (exit 2, nothing changed, the command to use instead), and `aimos housekeeper
rotate-key` gives the housekeeper a new key (master passphrase) after which saves, recalls, the
verifiers, recall exports, outcomes and the housekeeper's jobs all go on; it also brings back a
brain whose housekeeper an older aimos revoked.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from support.cli import (
    PASSPHRASE_ENV,
    UUID_RE,
    assert_refused,
    assert_unchanged,
    parse_json,
    run_aimos,
    run_aimos_with_passphrase_fd,
    snapshot,
)

pytestmark = pytest.mark.timeout(300)

USAGE, IDENTITY, VERIFICATION_FAILED = 2, 6, 4


def _saved(text: str) -> str:
    result = run_aimos("save", text).ok()
    assert UUID_RE.match(result.out.strip()), result.describe()
    return result.out.strip()


def _recall(query: str) -> dict[str, Any]:
    found: dict[str, Any] = parse_json(run_aimos("recall", query, "--json"))
    return found


def _housekeepers() -> list[dict[str, Any]]:
    agents = parse_json(run_aimos("agent", "list", "--json"))
    return [a for a in agents if a["agent_id"] == "housekeeper"]


def _verified() -> dict[str, Any]:
    report: dict[str, Any] = parse_json(run_aimos("verify", "--json"))
    assert report["ok"], report
    assert report["in_database"]["ok"] and report["portable"]["verdict"] == "valid", report
    assert report["parity"] and report["brain"]["ok"], report
    return report


def _export_and_verify_recall(receipt_id: str, target: Path, fingerprint: str) -> None:
    run_aimos("export-recall", receipt_id, "-o", str(target)).ok()
    checked = parse_json(
        run_aimos("verify-bundle", str(target), "--master-fingerprint", fingerprint, "--json")
    )
    assert checked["verdict"] == "valid", checked


def _next_second() -> None:
    """Epochs and revocations are whole seconds: let the clock move past the last one."""
    time.sleep(1.05 - time.time() % 1)


# --- revoking a reserved identity is refused -------------------------------------------------------
@pytest.mark.parametrize(
    ("agent", "instead"),
    [("housekeeper", "aimos housekeeper rotate-key"), ("cli", "aimos agent rotate cli")],
)
def test_revoking_a_reserved_identity_is_refused_before_the_passphrase(
    installed: Path, agent: str, instead: str
) -> None:
    before = snapshot(installed)
    # no passphrase anywhere: the refusal comes before it is asked for
    result = run_aimos("agent", "revoke", agent, unset=(PASSPHRASE_ENV,))
    assert_refused(result, USAGE, instead)
    assert_unchanged(installed, before)
    assert [e["state"] for e in _housekeepers()] == ["active"]
    _saved("the brain still saves after the refused revocation")


def test_agent_rotate_of_the_housekeeper_names_its_own_command(installed: Path) -> None:
    before = snapshot(installed)
    assert_refused(run_aimos("agent", "rotate", "housekeeper"), USAGE, "aimos housekeeper rotate-key")
    assert_unchanged(installed, before)


def test_rotate_key_without_the_master_passphrase_is_refused(installed: Path, tmp_path: Path) -> None:
    wrong = tmp_path / "wrong-passphrase"
    wrong.write_text("not the master passphrase\n")
    wrong.chmod(0o600)
    before = snapshot(installed)
    result = run_aimos("housekeeper", "rotate-key", env={PASSPHRASE_ENV: str(wrong)})
    assert_refused(result, IDENTITY)
    assert_unchanged(installed, before)
    # no passphrase at all (no TTY, no fd, no file): refused too, nothing changed
    assert run_aimos("housekeeper", "rotate-key", unset=(PASSPHRASE_ENV,)).code != 0
    assert_unchanged(installed, before)


# --- rotate-key, and the brain goes on -------------------------------------------------------------
def test_rotate_key_then_everything_verifies(installed: Path, passphrase: str, tmp_path: Path) -> None:
    fingerprint = parse_json(run_aimos("status", "--json"))["master_fingerprint"]
    otter = _saved("the otter sleeps under the boathouse")
    before_receipt = _recall("otter boathouse")["receipt"]["receipt_id"]
    old = _housekeepers()
    _next_second()

    rotated = parse_json(run_aimos_with_passphrase_fd(passphrase, "housekeeper", "rotate-key", "--json"))
    assert rotated["previous_epoch_revoked"] is True
    assert rotated["previous_valid_from"] == old[0]["valid_from"]
    assert rotated["valid_from"] > old[0]["valid_from"]
    assert passphrase not in json.dumps(rotated)
    epochs = _housekeepers()
    assert [e["state"] for e in epochs] == ["revoked", "active"], epochs
    assert epochs[1]["cert_fingerprint"] == rotated["cert_fingerprint"] != old[0]["cert_fingerprint"]

    heron = _saved("the heron fishes at dawn by the boathouse")
    recalled = _recall("heron boathouse")
    assert heron in {r["memory_id"] for r in recalled["results"]}
    moved = run_aimos("feedback", heron, "--good").ok()
    assert "weight" in moved.out
    run_aimos("feedback", otter, "--good").ok()  # its recall was before the rotation
    _verified()

    # recall exports before and after the rotation verify offline, each under its own epoch
    _export_and_verify_recall(before_receipt, tmp_path / "before.json", fingerprint)
    _export_and_verify_recall(recalled["receipt"]["receipt_id"], tmp_path / "after.json", fingerprint)
    run_aimos("receipt", "verify", before_receipt).ok()
    for job in ("heartbeat", "bottleneck-scan", "nightly-dream"):
        assert parse_json(run_aimos("housekeeper", "run-job", job, "--json"))["status"] == "SUCCESS"
    _verified()

    # and again: a second rotation revokes the second epoch, the first stays revoked
    _next_second()
    parse_json(run_aimos_with_passphrase_fd(passphrase, "housekeeper", "rotate-key", "--json"))
    assert [e["state"] for e in _housekeepers()] == ["revoked", "revoked", "active"]
    _saved("the third housekeeper epoch seals this one")
    _verified()


# --- a brain whose housekeeper an older aimos revoked ----------------------------------------------
def _revoke_housekeeper_as_older_aimos(passphrase: str) -> None:
    """What `aimos agent revoke housekeeper` did before it was refused: a master-signed revocation
    of the housekeeper's epoch, written (and sealed) by the housekeeper itself."""
    from aimos.actions.session import open_brain
    from aimos.identity.epochs import latest_epoch, revoke_epoch
    from aimos.store.connection import write_transaction
    from aimos.vocabulary import HOUSEKEEPER

    with open_brain(write=True) as brain:
        master = brain.master_with(passphrase)
        epoch = latest_epoch(brain.conn, HOUSEKEEPER)
        with write_transaction(brain.conn, brain.housekeeper()):
            revoke_epoch(
                brain.conn,
                master,
                company_id=brain.company_id,
                agent_id=HOUSEKEEPER,
                valid_from=epoch["valid_from"],
                reason="revoked by the owner",
                now=int(time.time()),
            )
        brain.keystore.delete(epoch["key_ref"])  # as the old revoke did


def test_a_housekeeper_revoked_by_an_older_aimos_is_recovered_by_rotate_key(
    installed: Path, passphrase: str
) -> None:
    _saved("saved before the housekeeper was revoked")
    _recall("housekeeper revoked")
    _next_second()
    _revoke_housekeeper_as_older_aimos(passphrase)

    before = snapshot(installed)
    stuck = run_aimos("save", "saved while the housekeeper is revoked")
    assert_refused(stuck, IDENTITY, "aimos housekeeper rotate-key")
    job = run_aimos("housekeeper", "run-job", "heartbeat")
    assert job.code == IDENTITY and "aimos housekeeper rotate-key" in job.err, job.describe()
    assert_unchanged(installed, before)
    _verified()  # what the brain holds still verifies, the revocation included

    rotated = parse_json(run_aimos("housekeeper", "rotate-key", "--json"))
    assert rotated["previous_epoch_revoked"] is False  # it already was: not revoked twice
    assert [e["state"] for e in _housekeepers()] == ["revoked", "active"]
    saved = _saved("saved after the recovery")
    assert saved in {r["memory_id"] for r in _recall("recovery")["results"]}
    assert parse_json(run_aimos("housekeeper", "run-job", "heartbeat", "--json"))["status"] == "SUCCESS"
    _verified()
