"""A device the master cut keeps its hub login (red-team finding: a cut device's later records are
refused unread, but the record a pull read last of it was taken from them). The master revokes C on
A; C, with the hub's URL it still holds, appends records under its own hub name, one of them at a
record number far past its last (the hub takes any number). Every other device refuses them unread,
by name, and keeps of C only what it read: its record number and link of C stay those of C's last
record before the cut, in hub_pulls, in `aimos hub status` and in the heads record it signs for the
other devices (aimos/hub/heads.py). Its next sync starts after them (nothing refused twice, the hub
not said to have gone back), and a refused record the hub later holds with other bytes (restored
from an older copy, then appended again) is refused again, not taken for a fork that stops the pull.

Three devices (A, the home, B and C) through the real CLI in subprocesses; C's records are appended
with aimos's own hub client (aimos.store.postgres.PostgresHub), as modified aimos on C would.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.cli import sqlite_value
from support.hub import PgCluster
from support.hub_devices import Device, Pair, as_owner, hub_records, join, make_pair

from aimos.hub import box
from aimos.hub.heads import HEADS
from aimos.store.postgres import PostgresHub

pytestmark = pytest.mark.timeout(300)

FAR = 2**62  # a record number far past any C wrote: the hub takes it


@dataclass
class Trio:
    """A and B (``pair``), C, and the last record of C the cut accepts."""

    pair: Pair
    c: Device
    through: int


@pytest.fixture
def cut_trio(pg_cluster: PgCluster, tmp_path: Path) -> Iterator[Trio]:
    """A, B and C synced; C saved and synced; the master revoked C on A (its cut names C's newest
    record A held) and A and B synced that."""
    pair = make_pair(tmp_path, pg_cluster)
    c = join(tmp_path / "C", pair.a.passphrase_file, pair.url, pair.b)
    for device in (pair.a, pair.b, c):
        device.sync()
    c.save("the boat shed key hangs behind the fuse box")
    c.sync()
    pair.a.sync()
    revoked = pair.a.run("hub", "revoke", c.device_fp(), "--reason", "laptop sold", "--json").ok().json()
    for device in (pair.a, pair.b):
        device.sync()
    yield Trio(pair, c, int(revoked["through_record"]))
    pg_cluster.drop_database(pair.database)


def append_as_cut_device(trio: Trio, numbers: list[int]) -> dict[int, tuple[int, str]]:
    """C appends a box of random bytes at each record number in ``numbers`` under its own hub name,
    through its hub login: per number, the hub's order number and the record's link."""
    c_name = trio.c.hub_name()
    items = [(n, os.urandom(32), os.urandom(400)) for n in numbers]
    with PostgresHub(trio.pair.url, trio.c.brain_id()) as hub:
        hub.append(c_name, items)
    placed = {r["device_n"]: r["seq"] for r in hub_records(trio.pair.url) if r["device"] == c_name}
    return {n: (placed[n], box.record_link(sealed)) for n, _name, sealed in items}


def link_of(trio: Trio, device: Device, n: int) -> str:
    """The link of ``device``'s record ``n`` as the hub holds it."""
    [found] = [
        r for r in hub_records(trio.pair.url) if r["device"] == device.hub_name() and r["device_n"] == n
    ]
    return box.record_link(found["box"])


def pulled_of(device: Device, of: Device) -> list[tuple[int, str]]:
    """hub_pulls of device ``of`` on ``device``: (record number, link), in order."""
    found = sqlite_value(
        device.brain,
        "SELECT group_concat(device_n || ':' || record_hash, ' ') FROM"
        f" (SELECT device_n, record_hash FROM hub_pulls WHERE device = '{of.device_fp()}' ORDER BY seq)",
    )
    return [(int(n), link) for n, link in (entry.split(":") for entry in found.split())]


def heads_told(device: Device) -> dict[str, list[object]]:
    """What ``device``'s newest heads record says it pulled of each other device (its push log)."""
    log = device.home / "state" / "hub" / f"{device.brain_id()}.pushed"
    row = sqlite_value(log, f"SELECT row FROM pushed WHERE tbl = '{HEADS}' ORDER BY n DESC LIMIT 1")
    return dict(json.loads(json.loads(row)["heads"]))


def test_a_cut_devices_records_leave_its_head_where_the_cut_put_it(cut_trio: Trio) -> None:
    a, b, c = cut_trio.pair.a, cut_trio.pair.b, cut_trio.c
    through, c_fp = cut_trio.through, c.device_fp()
    honest = (through, link_of(cut_trio, c, through))
    appended = append_as_cut_device(cut_trio, [through + 1, FAR])
    print("cut through", through, "appended", appended)

    done = a.sync()
    print("A's sync:", done)
    for n, (seq, _link) in appended.items():
        assert any(r.startswith(f"hub record #{seq} (device {c_fp}, record {n})") for r in done["refused"]), (
            done
        )
    status = a.run("hub", "status", "--json").ok().json()
    print("A's status:", status["devices_pulled"], status["devices_refused_from"])
    assert status["devices_pulled"][c_fp] == through, status["devices_pulled"]
    assert status["devices_refused_from"][c_fp] == through + 1, status["devices_refused_from"]
    kept = pulled_of(a, c)
    assert not {link for _seq, link in appended.values()} & {link for _n, link in kept}, kept
    assert max(n for n, _link in kept) <= through + 1, kept

    a.save("the rain gauge was emptied on Sunday")  # A's next push ends with its heads record
    again = a.sync()
    assert again["refused"] == [] and again["hub_went_back"] is False, again
    told = heads_told(a)
    print("A's heads record:", told)
    assert told[c_fp] == [*honest], told

    on_b = b.sync()
    print("B's sync:", on_b)
    assert on_b["behind"] == [], on_b
    assert b.run("hub", "status", "--json").ok().json()["devices_pulled"][c_fp] == through


def test_a_refused_record_the_hub_holds_again_with_other_bytes_stops_no_pull(cut_trio: Trio) -> None:
    """The hub restored from a copy taken before C's record was appended, and C appends again at
    that number: A reads the hub again from the start and refuses the new record, as it refused
    the first; what A kept of C is what it read before the cut."""
    a, c = cut_trio.pair.a, cut_trio.c
    through, c_fp = cut_trio.through, c.device_fp()
    [(seq, first)] = append_as_cut_device(cut_trio, [through + 1]).values()
    assert a.sync()["refused"], "A refuses C's record"
    as_owner(cut_trio.pair.url, (f"DELETE FROM aimos_hub_records WHERE seq >= {seq}", ()))
    [(seq_again, other)] = append_as_cut_device(cut_trio, [through + 1]).values()
    assert other != first
    synced = a.run("sync", "--json")
    print("A's sync after the hub went back:", synced.describe())
    assert synced.code == 0, synced.describe()
    done = synced.json()
    assert done["hub_went_back"] is True, done
    assert any(
        r.startswith(f"hub record #{seq_again} (device {c_fp}, record {through + 1})")
        for r in done["refused"]
    )
    assert a.sync()["refused"] == []
    assert a.run("hub", "status", "--json").ok().json()["devices_pulled"][c_fp] == through
