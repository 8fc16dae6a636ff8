"""A second `aimos install` on an installed brain changes nothing and says so (but for a missing
housekeeper service, which it sets up again); `--add-agent ID` enrols another agent with the
master passphrase, and needs an installed brain."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.installer import (
    BRAIN,
    CLI_LOG,
    PASSPHRASE_ENV,
    Reaper,
    all_table_counts,
    brain_id_of,
    query,
    read_pid_file,
    run_aimos,
    scalar,
    tree,
)


def agents() -> dict[str, dict[str, Any]]:
    return {a["agent_id"]: a for a in run_aimos("agent", "list", "--json").json()}


def test_second_install_changes_nothing(installed: Path) -> None:
    home = installed
    counts = all_table_counts(home)
    before = tree(home, ignore=CLI_LOG)
    assert BRAIN in before and "config/anchors.json" in before
    fingerprint = scalar(home, "SELECT fingerprint FROM master_identity")

    again = run_aimos("install", "--yes", "--keystore", "file").ok()
    assert "already installed" in again.out and "nothing was changed" in again.out, again.describe()
    assert fingerprint in again.out, again.describe()
    # other choices on the second run change nothing either (no new agent, no new grant)
    other = run_aimos(
        "install", "--yes", "--keystore", "file", "--agent-id", "zed", "--clearance", "3", "--json"
    ).json()
    assert other["status"] == "already_installed"
    assert other["brain_id"] == brain_id_of(home) and other["master_fingerprint"] == fingerprint
    # and a dry run on an installed brain neither installs nor changes anything
    run_aimos("install", "--yes", "--dry-run").ok()

    assert all_table_counts(home) == counts
    after = tree(home, ignore=CLI_LOG)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    assert after == before, f"a second install changed {changed}"
    assert not query(home, "SELECT agent_id FROM identity_epochs WHERE agent_id = 'zed'")


def test_add_agent_enrols_another_agent(installed: Path, tmp_path: Path) -> None:
    home = installed
    enrolled = run_aimos("install", "--add-agent", "bob", "--clearance", "4", "--data-class", "internal").ok()
    assert "Traceback" not in enrolled.both
    listed = agents()
    assert set(listed) == {"cli", "housekeeper", "bob"}, sorted(listed)
    bob = listed["bob"]
    assert bob["state"] == "active" and bob["role"] == "agent", bob
    assert bob["grant"] == {"clearance_ceiling": 4, "data_class_ceiling": "internal", "write_allowed": True}
    grant = query(
        home,
        "SELECT clearance_ceiling, data_class_ceiling, master_fingerprint FROM recall_grants"
        " WHERE subject_agent_id = 'bob'",
    )
    assert grant == [
        {
            "clearance_ceiling": 4,
            "data_class_ceiling": "internal",
            "master_fingerprint": scalar(home, "SELECT fingerprint FROM master_identity"),
        }
    ]
    # bob's key is in the brain's (file) keystore, and bob can sign a recall
    key_ref = scalar(home, "SELECT key_ref FROM identity_epochs WHERE agent_id = 'bob'")
    assert (home / "state" / "keys" / brain_id_of(home) / f"{key_ref}.key").is_file()
    recalled = run_aimos("recall", "anything at all", "--as", "bob", "--json").json()
    assert "receipt" in recalled, recalled

    # a wrong master passphrase enrols nobody (exit 6)
    counts = all_table_counts(home)
    wrong = tmp_path / "wrong-passphrase"
    wrong.write_text("not the master passphrase\n")
    wrong.chmod(0o600)
    refused = run_aimos("install", "--add-agent", "carol", env={PASSPHRASE_ENV: str(wrong)})
    assert refused.code == 6, refused.describe()
    assert "Traceback" not in refused.both and "passphrase" in refused.err.lower(), refused.describe()
    assert all_table_counts(home) == counts
    # a reserved id is refused as usage (exit 2)
    reserved = run_aimos("install", "--add-agent", "housekeeper")
    assert reserved.code == 2 and "reserved" in reserved.err, reserved.describe()
    assert all_table_counts(home) == counts
    assert "carol" not in agents()


def test_add_agent_on_a_clean_home_is_usage(aimos_home: Path) -> None:
    refused = run_aimos("install", "--add-agent", "bob")
    assert refused.code == 2, refused.describe()
    assert "Traceback" not in refused.both and refused.out == "", refused.describe()
    assert "installed brain" in refused.err and "aimos install" in refused.err, refused.describe()
    assert tree(aimos_home, ignore=CLI_LOG) == {}


def test_receipt_of_the_installed_brain_still_verifies(installed: Path) -> None:
    from aimos.installer.setup import verify_install_receipt

    run_aimos("install", "--yes").ok()
    receipt = json.loads((installed / "state" / "onboarding" / "first-launch-receipt.json").read_text())
    assert verify_install_receipt(receipt) and receipt["brain"]["brain_id"] == brain_id_of(installed)


def test_install_on_a_brain_without_a_service_starts_the_housekeeper(installed: Path, reaper: Reaper) -> None:
    """An installed brain with no housekeeper service (installed with --no-service, or after
    `aimos uninstall`): `aimos install --service process` reuses it as it is and registers and
    starts the housekeeper; the brain's identities and memories are not touched."""
    home = installed
    counts = {t: n for t, n in all_table_counts(home).items() if t in ("memories", "identity_epochs")}
    fingerprint = scalar(home, "SELECT fingerprint FROM master_identity")
    dry = run_aimos("install", "--yes", "--service", "process", "--dry-run", "--json").json()
    assert dry["status"] == "already_installed" and dry["would_register_service"] == "process", dry
    assert not (home / "state" / "housekeeper-service.json").exists()

    done = run_aimos("install", "--yes", "--service", "process", "--json", timeout=120).json()
    reaper.watch(read_pid_file(home))
    assert done["status"] == "reused" and done["master_fingerprint"] == fingerprint, done
    assert done["service"]["manager"] == "process" and done["service"]["pid"] == read_pid_file(home), done
    status = run_aimos("housekeeper", "status", "--json").json()
    assert (status["running"], status["ready"]) == (True, True), status
    assert {t: n for t, n in all_table_counts(home).items() if t in counts} == counts
    again = run_aimos("install", "--yes", "--service", "process", "--json").json()
    assert again["status"] == "already_installed" and again["service"] is None, again
    run_aimos("housekeeper", "stop", timeout=200).ok()
