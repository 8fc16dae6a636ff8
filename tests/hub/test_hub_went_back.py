"""A hub that went back (issue 39, red-team finding 2): its owner deleted a device's newest records,
or its database was restored from a dump taken earlier (pg_dump, then pg_restore into the same
database: the records after the dump and the order numbers they took are gone). The devices repair
it: a device sends again, the same bytes, what the hub lost of its records, and a device whose last
pulled record is no longer there reads the hub again from the start, skipping what it holds; a
record that claims a number a device holds with other content (a fork) is refused by name. A
record goes back under the content key generation it was first sealed under (a revocation since
made a new one), and a device's heads record (what it pulled, which no table holds) as it was.

Through the real CLI (`aimos sync`, `aimos hub status`) in subprocesses, on a pair of devices (A,
the home, and B) of the folder's shared PostgreSQL cluster; the hub is changed as its owner would,
with psycopg and PostgreSQL's own pg_dump and pg_restore.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from support.cli import assert_refused, assert_unchanged, snapshot
from support.hub import PgCluster, find_pg_bin
from support.hub_devices import (
    RECORDS,
    Device,
    Pair,
    as_owner,
    assert_one_copy_each,
    assert_verified_alike,
    hub_records,
    join,
)

from aimos.exit_codes import ExitCode
from aimos.hub import box, generations, records
from aimos.hub.heads import HEADS
from aimos.identity.keystore import FileKeystore

pytestmark = pytest.mark.timeout(240)

NOTHING_APPLIED = "Nothing from this pull was applied"


def newest_seq(url: str) -> int:
    return max((r["seq"] for r in hub_records(url)), default=0)


def boxes_of(url: str, device: Device) -> dict[int, tuple[bytes, bytes]]:
    """The hub's records of ``device``: number -> (name, box)."""
    name = device.hub_name()
    return {r["device_n"]: (r["name"], r["box"]) for r in hub_records(url) if r["device"] == name}


def test_a_device_sends_again_the_records_the_hub_lost_and_the_other_skips_them(pair: Pair) -> None:
    a, b, url = pair.a, pair.b, pair.url
    kept = newest_seq(url)
    first = a.save("the spare key is under the blue flowerpot")
    a.sync()
    assert b.sync()["pulled"] > 0
    pushed = boxes_of(url, a)
    as_owner(url, (f"DELETE FROM {RECORDS} WHERE seq > %s", (kept,)))
    lost = len(pushed) - len(boxes_of(url, a))
    assert lost > 0

    # before any sync, each device's status says what the hub lost, and what the next sync does
    status_a = a.run("hub", "status").ok().out
    assert f"hub lost      {lost:,} records this device pushed" in status_a, status_a
    status_b = b.run("hub", "status").ok().out
    assert "hub went back it no longer holds the record this device pulled last" in status_b, status_b

    reread = b.run("sync").ok().err  # before A sent them again: B reads the hub again
    assert "the hub went back (it no longer held the record this device pulled last)" in reread, reread
    said = a.run("sync").ok().err
    assert f"the hub had lost {lost:,} records this device pushed" in said, said
    assert "sent them again, the same as before" in said, said
    assert boxes_of(url, a) == pushed, "the records sent again are not the bytes the hub held before"

    again = b.sync()  # A's records again: B holds each, with the same link
    assert (again["hub_went_back"], again["skipped"], again["applied"]) == (False, lost, 0), again
    second = a.save("the garage code is the year the house was built")
    a.sync()
    b.sync()
    assert {first, second} <= b.memory_ids()
    status = b.run("hub", "status", "--json").json()
    assert status["hub_went_back"] is False and status["last_repair"]["hub_went_back"], status
    assert_one_copy_each(url)
    assert_verified_alike(a, b)


def ring_of(device: Device) -> box.KeyRing:
    """The content key generations the device's file keystore holds."""
    brain_id = device.brain_id()
    return generations.held(FileKeystore(brain_id, device.home / "state" / "keys" / brain_id))


def test_records_sealed_under_two_generations_and_heads_records_go_back_the_same(
    pair: Pair, tmp_path: Path
) -> None:
    """A revocation between two pushes: the hub loses A's records of both content key generations,
    heads records among them; A sends each again under the generation it was first sealed under,
    the same bytes, and B (which pulled them) skips every one."""
    a, b, url = pair.a, pair.b, pair.url
    c = join(tmp_path / "C", a.passphrase_file, url, b)
    for device in (a, b, c):
        device.sync()
    kept = newest_seq(url)
    before = a.save("the spare key is under the blue flowerpot")
    a.sync()
    a.run("hub", "revoke", c.device_fp(), "--reason", "laptop stolen").ok()
    b.sync()
    after = a.save("the garage code is the year the house was built")
    a.sync()
    b.sync()
    keys = ring_of(a)
    assert keys.newest == 2
    pushed = boxes_of(url, a)
    lost = {n: cell for n, cell in pushed.items() if n > max(boxes_of_before(url, a, kept), default=0)}
    assert {box.generation_of(bx) for _name, bx in lost.values()} == {1, 2}, "not both generations"
    tables = {records.decode(keys.open(bx, "lost")[64:], "lost").table for _name, bx in lost.values()}
    assert HEADS in tables, tables

    as_owner(url, (f"DELETE FROM {RECORDS} WHERE seq > %s", (kept,)))
    assert b.sync()["hub_went_back"] is True  # before A sent them again: B reads the hub again
    done = a.sync()
    assert (done["resent"], done["resent_changed"]) == (len(lost), 0), done
    assert boxes_of(url, a) == pushed, "a record sent again is not the bytes the hub held before"
    again = b.sync()  # A's records again, both generations: B holds each, with the same link
    assert (again["hub_went_back"], again["skipped"], again["applied"]) == (False, len(lost), 0), again
    assert {before, after} <= b.memory_ids()
    assert_one_copy_each(url)
    assert_verified_alike(a, b)


def boxes_of_before(url: str, device: Device, seq: int) -> list[int]:
    """The numbers of ``device``'s records at or before the hub's order number ``seq``."""
    name = device.hub_name()
    return [r["device_n"] for r in hub_records(url) if r["device"] == name and r["seq"] <= seq]


def _dump(url: str, to: Path) -> None:
    done = subprocess.run(
        [str(find_pg_bin() / "pg_dump"), "--format=custom", f"--file={to}", f"--dbname={url}"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def _restore(cluster: PgCluster, database: str, url: str, dump: Path) -> None:
    """The hub's database dropped and made again from ``dump``: tables, guards and rows as they were."""
    cluster.drop_database(database)
    cluster.create_database(database)
    done = subprocess.run(
        [str(find_pg_bin() / "pg_restore"), "--no-owner", f"--dbname={url}", str(dump)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_a_hub_restored_from_an_older_dump_is_repaired_by_both_devices(
    pair: Pair, pg_cluster: PgCluster, tmp_path: Path
) -> None:
    a, b, url = pair.a, pair.b, pair.url
    dump = tmp_path / "hub.dump"
    _dump(url, dump)
    before_dump = newest_seq(url)
    from_a = a.save("the plumber's number is on the fridge")
    a.sync()
    from_b = b.save("the boiler was serviced in March")
    b.sync()
    a.sync()
    ahead = newest_seq(url)
    held = {"A": boxes_of(url, a), "B": boxes_of(url, b)}

    _restore(pg_cluster, pair.database, url, dump)
    assert newest_seq(url) == before_dump < ahead  # the order numbers went back too

    after_a = a.save("the water meter is behind the hall cupboard")
    done_a = a.sync()  # the record A pulled last (B's) is gone: A reads the hub again
    assert done_a["resent"] > 0 and done_a["resent_changed"] == 0 and done_a["hub_went_back"] is True, done_a
    done_b = b.sync()
    assert done_b["resent"] > 0 and done_b["resent_changed"] == 0, done_b
    assert after_a in b.memory_ids(), "B did not pull what A saved after the hub went back"
    done_a = a.sync()  # B's records sent again: A holds each
    assert (done_a["applied"], done_a["skipped"]) == (0, done_b["resent"]), done_a
    for name, device in (("A", a), ("B", b)):
        now = boxes_of(url, device)
        assert {n: now[n] for n in held[name]} == held[name], (
            f"{name}'s records came back other than they were"
        )
    assert {from_a, from_b, after_a} <= a.memory_ids() == b.memory_ids()
    status = a.run("hub", "status").ok().out
    repaired = [line for line in status.splitlines() if line.startswith("hub repaired")]
    assert repaired and "sent them again" in repaired[0] and "the hub went back" in repaired[0], status
    assert_one_copy_each(url)
    assert_verified_alike(a, b)


def _forged_again(device: Device, url: str) -> tuple[int, int]:
    """What modified aimos on ``device`` (its content key, its housekeeper's key) can do once the
    hub lost its newest record: write that number again with other content, signed, and push it.
    Returns (its order number, its record number)."""
    import apsw

    from aimos.hub import box, records
    from aimos.identity.epochs import load_signer
    from aimos.identity.keystore import FileKeystore
    from aimos.vocabulary import HOUSEKEEPER

    key, brain_id = device.content_key(), device.brain_id()
    newest = [r for r in hub_records(url) if r["device"] == device.hub_name()][-1]
    opened = box.KeyRing({box.FIRST: key}).open(newest["box"], "newest")
    record = records.decode(opened[64:], "newest")
    other = records.Record(
        record.device, record.n, record.prev, record.table, record.row, record.signer, record.seal + 1000
    )
    conn = apsw.Connection(str(device.brain), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        keys = FileKeystore(brain_id, device.home / "state" / "keys" / brain_id)
        signer = load_signer(conn, keys, HOUSEKEEPER, int(time.time()))
    finally:
        conn.close()
    plaintext = records.encode(other)
    sealed = box.seal_record(key, signer.key.sign(records.signed_message(plaintext)) + plaintext)
    as_owner(
        url,
        (f"DELETE FROM {RECORDS} WHERE seq = %s", (newest["seq"],)),
        (
            f"INSERT INTO {RECORDS} (brain_id, seq, device, device_n, name, box)"
            f" SELECT %s, MAX(seq) + 1, %s, %s, %s, %s FROM {RECORDS}",
            (brain_id, newest["device"], record.n, newest["name"], sealed),
        ),
    )
    return newest["seq"], record.n


def test_a_record_written_again_with_other_content_is_refused_by_name_as_a_fork(pair: Pair) -> None:
    a, b, url = pair.a, pair.b, pair.url
    a.save("the ladder is in the shed")
    a.sync()
    b.sync()
    seq, n = _forged_again(a, url)
    before = snapshot(b.home)
    refused = b.run("sync")
    assert_refused(refused, ExitCode.VERIFICATION_FAILED, NOTHING_APPLIED)
    assert f"(device {a.device_fp()}, record {n}) is not the record {n} of that device" in refused.err
    assert "a fork" in refused.err, refused.describe()
    assert_unchanged(b.home, before)
    assert "a fork" in b.run("hub", "status", "--json").json()["last_error"]["message"]
    pushed = a.run("sync")
    assert_refused(pushed, ExitCode.VERIFICATION_FAILED, "Nothing was pushed")
    assert f"the hub holds as record {n} of this device" in pushed.err, pushed.describe()
    assert [r["seq"] for r in hub_records(url) if r["device"] == a.hub_name()][-1] == seq
