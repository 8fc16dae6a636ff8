"""A revocation replaces the brain's content key (issue 39, red team finding 4): `aimos hub revoke`
makes a new generation of the key on the hub, sealed to every other device's housekeeper key and
wrapped under the master, and the revoked device is given none of it. Three devices, A (the home),
B and C: A revokes C. B picks the new generation up at its next sync and A and B go on recalling
each other's new memories; C still opens what was pushed before, nothing after, and its sync says
it is revoked; a device D that joins afterwards with the passphrase reads everything. Then B's
housekeeper key changes before the next generation reaches it: its pull is refused by name until A
has synced and sealed the generation to B's new key. The hub holds none of it in the clear.

Through the real CLI in subprocesses, on a real PostgreSQL; one set of devices for the module, the
tests in order (as tests/hub/test_hub_revoke.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.cli import assert_refused, table_counts
from support.hub import PgCluster
from support.hub_devices import (
    Device,
    Pair,
    as_owner,
    assert_verified_alike,
    hub_cells,
    hub_query,
    hub_records,
    join,
    make_pair,
)

from aimos.hub import box, generations
from aimos.identity.keystore import FileKeystore

pytestmark = pytest.mark.timeout(400)

KEYS = "aimos_hub_keys"
OLDER = "the boiler's pressure valve was replaced in March"
SECRET_A = "the board approved the merger with Northwind on Friday"
SECRET_B = "the lawyers meet the Northwind founders in Porto next week"
LATER = "the new office lease starts on the first of October"
REVOCATIONS = ["agent_revocations", "identity_epochs", "events"]


@dataclass
class Devices:
    a: Device
    b: Device
    c: Device
    url: str
    root: Path
    d: Device | None = None


@pytest.fixture(scope="module")
def devices(pg_cluster: PgCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Devices]:
    root = tmp_path_factory.mktemp("rekey")
    pair = make_pair(root, pg_cluster)
    c = join(root / "C", pair.a.passphrase_file, pair.url, pair.b)
    for device in (pair.a, pair.b, c):
        device.sync()
    yield Devices(pair.a, pair.b, c, pair.url, root)
    pg_cluster.drop_database(pair.database)


def ring(device: Device) -> box.KeyRing:
    """The content key generations the device's file keystore holds."""
    brain_id = device.brain_id()
    return generations.held(FileKeystore(brain_id, device.home / "state" / "keys" / brain_id))


def housekeeper_keys(device: Device) -> list[str]:
    """The hub's names of every housekeeper key the device ever had."""
    found = device.query(
        f"SELECT public_key_b64u FROM identity_epochs WHERE agent_id = 'housekeeper'"
        f" AND device_fp = '{device.device_fp()}'"
    )
    first = ring(device).first
    return [box.recipient_name(first, r["public_key_b64u"]) for r in found]


def wrapped_to(url: str, generation: int) -> set[str]:
    return {
        str(r[0]) for r in hub_query(url, f"SELECT recipient FROM {KEYS} WHERE generation = %s", [generation])
    }


def test_a_revoked_device_reads_nothing_written_after_its_revocation(devices: Devices) -> None:
    a, b, c = devices.a, devices.b, devices.c
    older = a.save(OLDER)
    a.sync(), b.sync(), c.sync()
    assert older in c.memory_ids()

    revoked = a.run("hub", "revoke", c.device_fp(), "--reason", "laptop stolen").ok()
    assert "content key is replaced on the hub (generation 2)" in revoked.err, revoked.describe()
    assert ring(a).newest == 2
    # on the hub: the master's wrap and record, and A's and B's housekeeper keys; none for C
    recipients = wrapped_to(devices.url, 2)
    assert recipients == {generations.MASTER, *housekeeper_keys(a), *housekeeper_keys(b)}, recipients
    assert not recipients & set(housekeeper_keys(c))

    a.sync()
    on_b = b.sync()
    assert on_b["content_key_generation"] == 2 and ring(b).newest == 2, on_b
    from_a, from_b = a.save(SECRET_A), b.save(SECRET_B)
    b.sync(), a.sync(), b.sync()
    assert a.recall("Northwind founders Porto").get(from_b) == SECRET_B
    assert b.recall("merger with Northwind").get(from_a) == SECRET_A
    assert {box.generation_of(r["box"]) for r in hub_records(devices.url)[-4:]} == {2}

    # C: its sync says it is revoked and takes nothing; its keys open every record from before
    # the revocation and none after
    held = table_counts(c.brain, REVOCATIONS)
    refused = c.run("sync")
    assert_refused(refused, 6, "aimos hub join")
    assert "the master revoked this device" in refused.err and "generation 2" in refused.err
    assert table_counts(c.brain, REVOCATIONS) == held
    assert not {from_a, from_b} & c.memory_ids()
    stolen = ring(c)
    assert set(stolen.keys) == {1}
    boxes = [r["box"] for r in hub_records(devices.url)]
    opened = [bx for bx in boxes if box.generation_of(bx) in stolen.keys]
    assert len(opened) < len(boxes) and all(stolen.open(bx, "x") for bx in opened)

    # a device that joins now, with the passphrase, is given every generation and reads everything
    d = join(devices.root / "D", a.passphrase_file, devices.url, b)
    devices.d = d
    assert set(ring(d).keys) == {1, 2}
    assert d.recall("merger with Northwind").get(from_a) == SECRET_A
    assert d.recall("Northwind founders Porto").get(from_b) == SECRET_B
    assert d.recall("boiler pressure valve").get(older) == OLDER
    a.sync(), b.sync()
    assert_verified_alike(a, b, d)
    _a_device_whose_housekeeper_key_changed_is_given_the_next_generation(devices)

    # the hub holds none of it in the clear, its key table included
    cells = hub_cells(devices.url)
    assert any(where.startswith(KEYS) for where, _raw in cells)
    for needle in (OLDER, SECRET_A, SECRET_B, "Northwind"):
        assert not [w for w, raw in cells if needle.encode().lower() in raw.lower()], needle


def _a_device_whose_housekeeper_key_changed_is_given_the_next_generation(devices: Devices) -> None:
    """(Part of the test before it, which makes D: one test, so no worker runs it alone.)"""
    a, b, d = devices.a, devices.b, devices.d
    assert d is not None
    a.run("hub", "revoke", d.device_fp(), "--reason", "retired").ok()
    assert ring(a).newest == 3
    # generation 3 is sealed to B's housekeeper key, which B replaces before its next sync
    old_keys = set(housekeeper_keys(b))
    assert wrapped_to(devices.url, 3) & old_keys
    b.run("housekeeper", "rotate-key").ok()
    later = a.save(LATER)
    a.sync()
    before = b.memory_ids()
    refused = b.run("sync")
    assert_refused(refused, 4, "sync again")
    assert "is sealed under content key generation 3, which this device does not hold" in refused.err
    assert f"(device {a.device_fp()}, record" in refused.err, refused.describe()
    assert b.memory_ids() == before

    # A pulls B's new key and seals generation 3 to it; then B takes it and everything flows
    passed = a.sync()
    assert passed["keys_passed_on"] == 2, passed  # generations 2 and 3, to B's new key
    (new_key,) = set(housekeeper_keys(b)) - old_keys
    assert new_key in wrapped_to(devices.url, 3)
    assert b.sync()["content_key_generation"] == 3
    assert b.recall("office lease October").get(later) == LATER
    # the generations move with the keystore
    b.run("keystore", "move", "--to", "os").ok()
    again = a.save("the office plants are watered on Mondays")
    a.sync()
    assert b.sync()["content_key_generation"] == 3
    assert again in b.recall("office plants watered")
    assert_verified_alike(a, b)


def test_a_hub_made_before_key_generations_gets_their_table_with_its_guards(pair: Pair) -> None:
    """A hub whose schema has no key table (an aimos before generations made it) syncs as before,
    and the first revocation adds the table, append-only like the others."""
    a, b = pair.a, pair.b
    as_owner(pair.url, (f"DROP TABLE {KEYS}", ()))
    saved = a.save("the garden hose is coiled by the rain barrel")
    a.sync(), b.sync()
    assert saved in b.recall("garden hose rain barrel")
    a.run("hub", "revoke", b.device_fp(), "--reason", "sold").ok()
    assert len(wrapped_to(pair.url, 2)) == 2  # the master's row and A's own
    import psycopg

    with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
        hub_query(pair.url, f"UPDATE {KEYS} SET wrapped = wrapped")
    with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
        hub_query(pair.url, f"DELETE FROM {KEYS}")


def test_a_revocation_is_refused_while_the_hub_does_not_answer(pair: Pair, pg_cluster: PgCluster) -> None:
    a, b = pair.a, pair.b
    a.sync()  # A knows B
    a.point_at(pg_cluster.url_for("no_such_hub"))
    before = table_counts(a.brain, REVOCATIONS)
    refused = a.run("hub", "revoke", b.device_fp(), "--reason", "lost")
    assert_refused(refused, 1, "nothing was revoked", "hub answers")
    assert table_counts(a.brain, REVOCATIONS) == before
    assert set(ring(a).keys) == {1}
