"""Revoking a device (issue 39, item 6): three devices of one brain, A (the home), B and C. The
master revokes B on A (`aimos hub revoke`); B, before it hears of it, saves and syncs: its push goes
out, but its own sync then fails saying the master revoked it. C and A refuse what B signed after
its revocation, each by name, and apply the rest (C's new memory reaches A); A still verifies.
Revoking the home, this device, or a device already revoked is refused and changes nothing.

Through the real CLI in subprocesses; one set of three devices for the module (the refusals first,
which change nothing, then the revocation).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from support.cli import assert_refused, table_counts
from support.hub import PgCluster
from support.hub_devices import Device, assert_verified_alike, hub_records, join, make_pair

pytestmark = pytest.mark.timeout(300)

REVOCATIONS = ["agent_revocations", "identity_epochs", "events"]


@dataclass
class Trio:
    a: Device
    b: Device
    c: Device
    url: str

    def all(self) -> tuple[Device, Device, Device]:
        return self.a, self.b, self.c


@pytest.fixture(scope="module")
def trio(pg_cluster: PgCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Trio]:
    root = tmp_path_factory.mktemp("trio")
    pair = make_pair(root, pg_cluster)
    c = join(root / "C", pair.a.passphrase_file, pair.url, pair.b)
    for device in (pair.a, pair.b, c):  # each device holds every device's epochs
        device.sync()
    yield Trio(pair.a, pair.b, c, pair.url)
    pg_cluster.drop_database(pair.database)


def short(device: Device) -> str:
    """The start of a device's id, as a person types it from `aimos hub devices`."""
    return device.device_fp().removeprefix("aimos-device:")[:10]


def test_devices_are_listed_and_the_home_and_this_device_cannot_be_revoked(trio: Trio) -> None:
    a, b, c = trio.all()
    listed = a.run("hub", "devices").ok().out.splitlines()
    assert len(listed) == 3, listed
    (mine,) = [line for line in listed if line.startswith(a.device_fp())]
    assert "(this device, home)" in mine, listed
    (theirs,) = [line for line in listed if line.startswith(b.device_fp())]
    assert "home" not in theirs and "this device" not in theirs and "revoked" not in theirs, listed
    on_c = {d["device"]: d for d in c.run("hub", "devices", "--json").json()}
    assert set(on_c) == {a.device_fp(), b.device_fp(), c.device_fp()}, on_c
    assert on_c[c.device_fp()]["this_device"] and on_c[a.device_fp()]["home"], on_c

    before = [table_counts(d.brain, REVOCATIONS) for d in (a, c)]
    itself = a.run("hub", "revoke", short(a), "--reason", "lost")
    assert_refused(itself, 2, "another device", "nothing was revoked")
    assert "that is this device" in itself.err, itself.describe()
    home = c.run("hub", "revoke", short(a), "--reason", "lost")
    assert_refused(home, 2, "aimos hub home", "nothing was revoked")
    assert "is the home" in home.err, home.describe()
    unknown = a.run("hub", "revoke", "0000000000", "--reason", "lost")
    assert_refused(unknown, 3, "aimos hub devices")
    assert [table_counts(d.brain, REVOCATIONS) for d in (a, c)] == before


def test_a_revoked_device_is_refused_everywhere_after_the_next_sync(trio: Trio) -> None:
    a, b, c = trio.all()
    done = a.run("hub", "revoke", short(b), "--reason", "lost").ok()
    assert f"revoked {b.device_fp()}" in done.err, done.describe()
    a.sync()

    # B has not heard: it saves, and its sync pushes that, then fails on its own revocation
    late_words = "the greenhouse thermostat was set to nineteen degrees by the lodger"
    late = b.save(late_words)
    hub_before = sum(1 for r in hub_records(trio.url) if r["device"] == b.hub_name())
    held = table_counts(b.brain, REVOCATIONS)
    failed = b.run("sync")
    assert failed.code == 6 and "Traceback" not in failed.both, failed.describe()
    assert "the master revoked this device" in failed.err, failed.describe()
    assert table_counts(b.brain, REVOCATIONS) == held  # nothing of the pull was applied
    assert sum(1 for r in hub_records(trio.url) if r["device"] == b.hub_name()) > hub_before
    assert "the master revoked this device" in b.run("hub", "status").ok().out

    fresh_words = "the canal lock keeper retires at the end of the season"
    fresh = c.save(fresh_words)
    on_c = c.sync()
    assert any("its device is revoked" in r and b.device_fp() in r for r in on_c["refused"]), on_c

    synced = a.run("sync").ok()
    refused = [line for line in synced.err.splitlines() if line.startswith("refused hub record #")]
    assert refused and all(b.device_fp() in r and "its device is revoked" in r for r in refused), (
        synced.describe()
    )
    assert fresh in a.memory_ids() and late not in a.memory_ids()
    assert fresh in a.recall("canal lock keeper")
    recalled = a.recall("greenhouse thermostat lodger")
    assert late not in recalled and late_words not in recalled.values(), recalled
    assert late not in c.memory_ids()
    status = a.run("hub", "status", "--json").json()
    assert b.device_fp() in status["devices_refused_from"], status
    # the next sync meets B's records no more
    assert a.sync()["refused"] == []
    assert_verified_alike(a, c)

    listed = {d["device"]: d for d in a.run("hub", "devices", "--json").json()}
    assert listed[b.device_fp()]["revoked"] is True and not listed[c.device_fp()]["revoked"], listed
    before = table_counts(a.brain, REVOCATIONS)
    again = a.run("hub", "revoke", short(b), "--reason", "lost")
    assert_refused(again, 2)
    assert "already revoked" in again.err, again.describe()
    assert table_counts(a.brain, REVOCATIONS) == before
