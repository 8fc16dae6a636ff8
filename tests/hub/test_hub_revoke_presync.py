"""`aimos hub revoke` syncs before it cuts, so the cut names the newest record of the device the
hub holds. A sync that fails there does not stop the revocation (a lost laptop is revoked now, its
cut then names what this device holds), and whatever made it fail is said with its fix, never as
an internal error: a damaged log of what this device pushed, or a state file that cannot be
written. A hub that does not answer refuses the revocation (its content key is replaced on the
hub in the same step), and nothing is revoked.

Through the real CLI in subprocesses, on a pair of devices (A, the home, and B).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from support.cli import table_counts
from support.hub import PgCluster
from support.hub_devices import Device, Pair, make_pair

pytestmark = pytest.mark.timeout(240)

REVOCATIONS = ["agent_revocations", "identity_epochs", "hub_cuts", "events"]


def damaged_push_log(a: Device) -> tuple[Path, str]:
    log = a.home / "state" / "hub" / f"{a.brain_id()}.pushed"
    assert log.is_file(), "A has pushed: its log is there"
    log.write_bytes(b"not the log of what this device pushed " * 64)
    return log, "Move it aside"


def state_file_taken(a: Device) -> tuple[Path, str]:
    state = a.home / "state" / "hub" / f"{a.brain_id()}.json"
    state.unlink()
    state.mkdir()  # (as root, only something else at its name stops a write)
    (state / "kept").write_text("something of the person's")
    return state, "could not be written"


FAULTS: dict[str, Callable[[Device], tuple[Path, str]]] = {
    "a-damaged-push-log": damaged_push_log,
    "a-state-file-that-cannot-be-written": state_file_taken,
}


def revocations(d: Device) -> dict[str, int]:
    return table_counts(d.brain, REVOCATIONS)


@pytest.mark.parametrize("fault", FAULTS)
def test_a_sync_first_that_fails_here_does_not_stop_a_revocation(
    pair: Pair, fault: str, tmp_path: Path
) -> None:
    a, b = pair.a, pair.b
    a.sync()
    path, fix_words = FAULTS[fault](a)
    before = revocations(a)
    done = a.run("hub", "revoke", b.device_fp(), "--reason", "laptop lost", "--json")
    print(done.describe())
    assert done.code == 0, done.describe()
    assert "Traceback" not in done.both and "internal error" not in done.both, done.describe()
    assert "could not sync first" in done.err and str(path) in done.err and fix_words in done.err, done.err
    assert done.json()["device"] == b.device_fp()
    listed = {d["device"]: d for d in a.run("hub", "devices", "--json").ok().json()}
    assert listed[b.device_fp()]["revoked"] is True, listed
    assert revocations(a)["hub_cuts"] == before["hub_cuts"] + 1

    synced = a.run("sync")
    print(synced.describe())
    assert synced.code == 1 and "Traceback" not in synced.both, synced.describe()
    assert "internal error" not in synced.err and str(path) in synced.err, synced.describe()


def test_a_revocation_with_the_hub_down_revokes_nothing_and_says_why(
    own_pg_cluster: PgCluster, tmp_path: Path
) -> None:
    pair = make_pair(tmp_path, own_pg_cluster)
    a, b = pair.a, pair.b
    a.sync()
    before = revocations(a)
    own_pg_cluster.stop()
    refused = a.run("hub", "revoke", b.device_fp(), "--reason", "laptop lost")
    print(refused.describe())
    assert refused.code == 1 and "Traceback" not in refused.both, refused.describe()
    assert "internal error" not in refused.err and "the hub could not be used" in refused.err, refused.err
    assert "nothing was revoked" in refused.err and "when the hub answers" in refused.err, refused.err
    assert revocations(a) == before
    own_pg_cluster.start()
    a.run("hub", "revoke", b.device_fp(), "--reason", "laptop lost").ok()
    assert revocations(a)["hub_cuts"] == before["hub_cuts"] + 1
