"""Failure injection: an install that fails at any step removes exactly what that run created.

`aimos.installer.setup.after_step` (the seam for this) is replaced to raise an AimosError at one chosen
step, after checking that the run's artefacts up to that step really exist (so the rollback has
something to undo). Afterwards: no brain file (nor -wal/-shm), no anchors entry, no keystore
items of the brain (asked of Secret Service itself for "os"), no housekeeper alive, no service,
status, pid or receipt file, and the AIMOS_HOME tree byte-for-byte as before (a home that already
held another brain's anchors.json, which must survive untouched). The error names the step.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from support.installer import (
    BRAIN,
    CLI_LOG,
    Reaper,
    assert_tree_unchanged,
    is_housekeeper,
    keychain_usernames,
    pid_alive,
    require_keychain,
    tree,
    wait_for,
)

import aimos.installer.setup as setup
from aimos.errors import AimosError
from aimos.identity.anchors import KEPT_ANCHOR_ITEM
from aimos.identity.keystore import choose_keystore

pytestmark = pytest.mark.timeout(120)

# the anchors before the guides: each guide is saved through a request checked against them
REQUIRED_STEPS = ("enrol_identities", "write_anchors", "ingest_guides", "start_housekeeper", "finish")
OTHER_BRAIN = "00000000-0000-4000-8000-000000000000"


def test_the_steps_the_rollback_tests_name_exist() -> None:
    assert set(REQUIRED_STEPS) <= set(setup.STEPS), setup.STEPS
    assert setup.STEPS[0] == "check_guides" and setup.STEPS[-1] == "finish", setup.STEPS
    # the order the artefact checks below rely on
    order = [setup.STEPS.index(s) for s in ("create_brain", *REQUIRED_STEPS)]
    assert order == sorted(order), setup.STEPS


def _reached(step: str, later_than: str) -> bool:
    return setup.STEPS.index(step) >= setup.STEPS.index(later_than)


def _keystore_items(home: Path, kind: str, brain_id: str) -> set[str]:
    if kind == "os":
        return keychain_usernames(f"aimos:{brain_id}")
    folder = home / "state" / "keys" / brain_id
    return {p.name.removesuffix(".key") for p in folder.glob("*.key")} if folder.exists() else set()


@pytest.mark.parametrize("step", setup.STEPS)
def test_failure_at_step_leaves_nothing(
    step: str,
    keystore: str,
    aimos_home: Path,
    passphrase: str,
    reaper: Reaper,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from aimos.housekeeper import state
    from aimos.identity.anchors import add_anchor, read_anchors

    if keystore == "os":
        require_keychain()
    home = aimos_home
    # a home that already holds something of its own: another brain's trust anchor
    add_anchor(OTHER_BRAIN, {"master_fingerprint": "ab" * 32, "brain_path": "/elsewhere/brain.sqlite3"})
    before = tree(home)
    probe_items = keychain_usernames("aimos:probe") if keystore == "os" else set()

    chosen: dict[str, str] = {}
    real_choose = choose_keystore  # what setup calls

    def spy_choose(choice: str | None, brain_id: str) -> Any:
        chosen["brain_id"] = brain_id
        reaper.forget_keys_of(brain_id)
        return real_choose(choice, brain_id)

    seen: dict[str, Any] = {}

    def fail_at(name: str) -> None:
        if name != step:
            return
        bid = chosen.get("brain_id")
        seen["brain"] = (home / BRAIN).exists()
        seen["items"] = _keystore_items(home, keystore, bid) if bid else set()
        seen["anchored"] = bid in read_anchors()["brains"] if bid else False
        seen["pid"] = state.read_pid()
        reaper.watch(seen["pid"])
        seen["running"] = state.is_running()
        seen["alive"] = pid_alive(seen["pid"]) and is_housekeeper(seen["pid"] or 0)
        seen["receipt"] = setup.receipt_path().exists()
        raise AimosError("injected failure for the rollback test")

    monkeypatch.setattr(setup, "choose_keystore", spy_choose)
    monkeypatch.setattr(setup, "after_step", fail_at)

    with pytest.raises(AimosError) as caught:
        setup.install(
            setup.InstallOptions(keystore=keystore, service="process"), passphrase, int(time.time())
        )
    alive_on_return = pid_alive(seen.get("pid"))
    if seen.get("pid"):  # let a straggler finish before the home is compared (the verdict is below)
        wait_for(lambda: not pid_alive(seen["pid"]), f"housekeeper pid {seen['pid']} to exit", timeout=15)
    message = caught.value.message
    assert f"step {step}" in message, message
    assert "injected failure for the rollback test" in message, message
    assert "could not undo" not in message, message

    # the run had really made what a failure at this step must undo
    assert seen, f"after_step was never called for {step}"
    bid = chosen.get("brain_id")
    if step != "check_guides":  # the keystore (and the brain id) is chosen by the step after it
        assert bid, "the keystore was not chosen before the failure"
    if _reached(step, "create_brain"):
        assert seen["brain"], "the brain file did not exist when the failure was injected"
    if _reached(step, "enrol_identities"):
        keys = seen["items"] - {KEPT_ANCHOR_ITEM}  # the kept anchor follows the install's commit
        assert "master" in keys and len(keys) == 3, seen["items"]
        assert (KEPT_ANCHOR_ITEM in seen["items"]) is _reached(step, "start_housekeeper"), seen["items"]
    if _reached(step, "write_anchors"):
        assert seen["anchored"], "the anchors entry did not exist when the failure was injected"
    if _reached(step, "start_housekeeper"):
        assert seen["running"] and seen["alive"], f"no housekeeper ran when the failure was injected: {seen}"
    if _reached(step, "finish"):
        assert seen["receipt"], "the receipt did not exist when the failure was injected"

    # ... and nothing of it is left
    for suffix in ("", "-wal", "-shm", "-journal"):
        assert not Path(str(home / BRAIN) + suffix).exists(), f"{BRAIN}{suffix} left behind"
    if bid:
        assert _keystore_items(home, keystore, bid) == set(), "keystore items left behind"
        assert bid not in read_anchors()["brains"], "the anchors entry was left behind"
    if keystore == "os":
        assert keychain_usernames("aimos:probe") == probe_items, "the keychain probe item was left behind"
    assert not state.is_running(), "a housekeeper still holds the lock"
    for leftover in (
        state.pid_path(),
        state.status_path(),
        state.lock_path(),
        state.service_record_path(),
        setup.receipt_path(),
    ):
        assert not leftover.exists(), f"{leftover} left behind"
    assert json.loads((home / "config" / "anchors.json").read_text())["brains"].keys() == {OTHER_BRAIN}
    # the command log line a housekeeper writes as its process ends is the CLI's own log, not the run's
    assert_tree_unchanged(home, before, ignore=CLI_LOG)
    assert not alive_on_return, (
        f"install() returned from its rollback while the housekeeper it started (pid {seen['pid']}) "
        "was still running"
    )
