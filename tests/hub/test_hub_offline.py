"""The hub goes away (issue 39): stopped, then killed. `aimos sync` fails saying the hub could not be
used, `aimos hub status` says the last failure, and the devices keep working (save, recall); once the
hub is back, the next sync finishes and what was saved meanwhile reaches the other device.

A cluster of the test's own (`own_pg_cluster`), which the test stops, kills and starts; through the
real CLI in subprocesses.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.hub import PgCluster
from support.hub_devices import Device, Pair, make_pair

pytestmark = pytest.mark.timeout(240)


def hub_gone(d: Device) -> str:
    """`aimos sync` on ``d`` while the hub is down: exit 1, the reason, no traceback; returns the
    error line."""
    failed = d.run("sync")
    assert failed.code == 1, failed.describe()
    assert "Traceback" not in failed.both and failed.out == "", failed.describe()
    (line,) = [x for x in failed.err.splitlines() if x.startswith("error:")]
    assert "could not be used" in line, failed.describe()
    return line


def keeps_working(d: Device, text: str, query: str) -> str:
    """Saves ``text`` and recalls it with ``query`` while the hub is down; the memory's id."""
    memory = d.save(text)
    assert memory in d.recall(query), f"{query!r} did not recall {text!r} on {d.home}"
    return memory


def status_says(d: Device, error_line: str) -> None:
    shown = d.run("hub", "status").ok()
    reason = error_line.removeprefix("error: ")
    assert "last failure" in shown.out and reason in shown.out, shown.describe()
    assert "to pull       unknown: " in shown.out, shown.describe()
    found = d.run("hub", "status", "--json").json()
    assert found["last_error"]["message"] == reason and found["reachable"] is False, found


@pytest.mark.parametrize("outage", ["stopped", "killed"])
def test_devices_keep_working_while_the_hub_is_down_and_catch_up_after(
    own_pg_cluster: PgCluster, tmp_path: Path, outage: str
) -> None:
    cluster = own_pg_cluster
    pair: Pair = make_pair(tmp_path, cluster)
    a, b = pair.a, pair.b
    b.sync()
    assert b.run("hub", "status", "--json").json()["last_error"] is None

    with cluster.connect() as conn:
        conn.execute("CHECKPOINT")  # asynchronous commit (hub_support): what was pushed is kept
    if outage == "stopped":
        cluster.stop("fast")
    else:
        cluster.kill()

    on_a = keeps_working(a, "the lighthouse keeper logs the fog at dawn", "lighthouse fog")
    on_b = keeps_working(b, "the orchard ladder leans on the pear tree", "orchard ladder")
    for d in (a, b):
        line = hub_gone(d)
        status_says(d, line)
    assert on_b not in a.memory_ids() and on_a not in b.memory_ids()

    cluster.start()
    done = [a.sync(), b.sync(), a.sync()]
    assert done[0]["pushed"] > 0 and done[1]["memories"] == 1 and done[2]["memories"] == 1, done
    assert on_a in b.recall("lighthouse fog") and on_b in a.recall("orchard ladder")
    for d in (a, b):
        found = d.run("hub", "status", "--json").json()
        assert found["last_error"] is None and found["reachable"] is True and found["to_pull"] == 0, found
