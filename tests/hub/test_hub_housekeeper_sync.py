"""The housekeeper's sync job (issue 39, item 3; aimos/housekeeper/jobs/sync.py): with a hub set, the
housekeeper syncs on its own schedule (AIMOS_SYNC_SECONDS, every 2 s here). A memory another device
saves and syncs reaches this device without anyone running `aimos sync`; with the hub stopped the
job logs that it could not run and `aimos hub status` says why, and once the hub is back the job
syncs again by itself; and once the hub's owner deleted its newest record, the job says what it
did about it (read the hub again, or sent that record again).

The housekeeper is the real `aimos housekeeper start` (a detached `aimos housekeeper run`) on device
B, stopped with `aimos housekeeper stop` (and killed, if it is still there, when the test ends); a
cluster of the test's own (`own_pg_cluster`), which the test stops and starts.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.hub import PgCluster
from support.hub_devices import RECORDS, Device, as_owner, make_pair
from support.process import kill_housekeeper, pid_alive, read_pid_file, wait_for

pytestmark = pytest.mark.timeout(300)

EVERY = {"AIMOS_SYNC_SECONDS": "2"}
ARRIVES_WITHIN = 90.0  # seconds: the job runs every 2 s; the machine may be busy


def log_of(device: Device) -> str:
    path = device.home / "logs" / "housekeeper.log"
    return path.read_text("utf-8", errors="replace") if path.exists() else ""


def arrives(device: Device, memory: str, what: str) -> None:
    wait_for(lambda: memory in device.memory_ids(), what, timeout=ARRIVES_WITHIN, every=0.5)


def test_the_housekeeper_syncs_on_its_own_and_retries_after_the_hub_was_down(
    own_pg_cluster: PgCluster, tmp_path: Path
) -> None:
    cluster = own_pg_cluster
    pair = make_pair(tmp_path, cluster)
    a, b = pair.a, pair.b
    started = b.run("housekeeper", "start", env=EVERY).ok()
    pid = read_pid_file(b.home)
    assert pid and pid_alive(pid), started.describe()
    try:
        first = a.save("the harbour ferry timetable changes on the first of June")
        a.sync()
        arrives(b, first, "A's memory to reach B by the housekeeper's sync")
        # the job logs its line once the sync it ran is over, a moment after the memory arrived
        wait_for(lambda: "hub-sync: pushed" in log_of(b), "the job's line in the log", timeout=30, every=0.2)
        assert b.run("hub", "status", "--json").json()["last_error"] is None

        with cluster.connect() as conn:
            conn.execute("CHECKPOINT")  # asynchronous commit (hub_support): what was pushed is kept
        cluster.stop("fast")
        failed = wait_for(
            lambda: [x for x in log_of(b).splitlines() if "hub-sync could not run" in x],
            "the housekeeper to log that the sync could not run",
            timeout=ARRIVES_WITHIN,
            every=0.5,
        )
        assert "could not be used" in failed[0], failed
        status = b.run("hub", "status", "--json").json()
        assert status["reachable"] is False and "could not be used" in status["last_error"]["message"], status
        shown = b.run("hub", "status").ok().out
        assert "last failure" in shown and status["last_error"]["message"] in shown, shown
        second = a.save("the lighthouse lamp was replaced with an LED array in April")  # A works offline

        cluster.start()
        a.sync()
        arrives(b, second, "A's memory to reach B once the hub is back, with no `aimos sync` on B")
        wait_for(
            lambda: b.run("hub", "status", "--json").json()["last_error"] is None,
            "B's status to clear the failure after the job synced again",
            timeout=ARRIVES_WITHIN,
            every=0.5,
        )
        as_owner(pair.url, (f"DELETE FROM {RECORDS} WHERE seq = (SELECT MAX(seq) FROM {RECORDS})", ()))
        wait_for(
            lambda: "hub-sync: the hub " in log_of(b),
            "the housekeeper to log that the hub lost a record and what it did",
            timeout=ARRIVES_WITHIN,
            every=0.5,
        )
        assert pid_alive(pid) and read_pid_file(b.home) == pid  # one housekeeper did all of it
        assert "Traceback" not in log_of(b), log_of(b)
    finally:
        stopped = b.run("housekeeper", "stop")
        kill_housekeeper(read_pid_file(b.home) or pid)
    assert stopped.code == 0, stopped.describe()
    b.run("verify").ok()
