"""The attacker who owns the hub's database (issue 39): the tables' guards refuse UPDATE, DELETE and
TRUNCATE, but the owner can switch them off. Whatever the owner then does to the records (one byte
of a box, two records' order, a record replayed, one cut out of a device's chain, another brain's
box put in its place), the device that pulls them refuses the pull naming the hub record, and
applies nothing: `aimos sync` on a device that had joined before, and `aimos hub join` of a new
one (which leaves no brain behind).

Through the real CLI in subprocesses; the hub is changed with psycopg as its owner would.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from support.cli import assert_refused, assert_unchanged, snapshot
from support.hub import PgCluster, unique_database_name
from support.hub_devices import (
    HUB_TABLES,
    RECORDS,
    Device,
    Pair,
    as_owner,
    hub_query,
    hub_records,
    nothing_left,
)
from support.hub_devices import install as install_device
from support.hub_devices import passphrase_file as secret_file

pytestmark = pytest.mark.timeout(240)

NOTHING_APPLIED = "Nothing from this pull was applied"


@pytest.fixture(scope="module")
def made_pair(made_pair: Pair) -> Pair:
    """The folder's pair, then A saved three memories and pushed them: B has not pulled them yet."""
    for text in (
        "the pantry key hangs behind the blue clock",
        "Ines prefers window seats on trains",
        "the boiler service is due every October",
    ):
        made_pair.a.save(text)
    made_pair.a.sync()
    return made_pair


@pytest.fixture(scope="module")
def foreign_box(pg_cluster: PgCluster, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A record's box from another brain, on another hub database (the same schema)."""
    root = tmp_path_factory.mktemp("foreign")
    other = install_device(root / "other", secret_file(root))
    other.save("a memory of another brain altogether")
    database = unique_database_name()
    url = pg_cluster.create_database(database)
    try:
        other.run("hub", "init", url).ok()
        return bytes(hub_records(url)[-1]["box"])
    finally:
        pg_cluster.drop_database(database)


def unseen(pair: Pair) -> list[dict[str, Any]]:
    """A's records B has not pulled: A's three saves."""
    through, a = pair.b.pulled_through(), pair.a.hub_name()
    found = [r for r in hub_records(pair.url) if r["seq"] > through and r["device"] == a]
    assert len(found) >= 12, found
    return found


# Each tamper changes the hub as its owner and returns the order number of the record a device must
# refuse first.
def flip_a_byte(pair: Pair, _foreign: Callable[[], bytes]) -> int:
    target = unseen(pair)[6]["seq"]
    as_owner(
        pair.url,
        (f"UPDATE {RECORDS} SET box = set_byte(box, 40, get_byte(box, 40) # 1) WHERE seq = %s", (target,)),
    )
    return int(target)


def swap_two(pair: Pair, _foreign: Callable[[], bytes]) -> int:
    records = unseen(pair)
    first, second = records[2]["seq"], records[5]["seq"]
    swap = f"UPDATE {RECORDS} SET seq = %s WHERE seq = %s"
    as_owner(pair.url, (swap, (10**9, first)), (swap, (first, second)), (swap, (second, 10**9)))
    return int(first)


def replay_old(pair: Pair, _foreign: Callable[[], bytes]) -> int:
    """A copy of a record every device already holds, under a new order number and the device's
    next record number (and a name of its own: the hub keeps one of each name)."""
    old = hub_records(pair.url)[1]
    return _insert_copy(pair, old, claimed_n=None, name=os.urandom(32))


def replay_same_number(pair: Pair, _foreign: Callable[[], bytes]) -> int:
    """The same, claiming the copied record's own number and name (the owner drops the unique
    constraints that forbid it)."""
    old = unseen(pair)[3]
    constraints = hub_query(
        pair.url,
        "SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'u'",
        (RECORDS,),
    )
    assert len(constraints) == 2, constraints
    as_owner(pair.url, *((f"ALTER TABLE {RECORDS} DROP CONSTRAINT {name}", ()) for (name,) in constraints))
    return _insert_copy(pair, old, claimed_n=old["device_n"], name=old["name"])


def _insert_copy(pair: Pair, old: dict[str, Any], claimed_n: int | None, name: bytes) -> int:
    ((seq, newest),) = hub_query(
        pair.url,
        f"SELECT MAX(seq), MAX(device_n) FILTER (WHERE device = %s) FROM {RECORDS}",
        (old["device"],),
    )
    as_owner(
        pair.url,
        (
            f"INSERT INTO {RECORDS} (brain_id, seq, device, device_n, name, box)"
            f" SELECT brain_id, %s, device, %s, %s, box FROM {RECORDS} WHERE seq = %s",
            (seq + 1, claimed_n or newest + 1, name, old["seq"]),
        ),
    )
    return int(seq) + 1


def cut_one_out(pair: Pair, _foreign: Callable[[], bytes]) -> int:
    records = unseen(pair)
    as_owner(pair.url, (f"DELETE FROM {RECORDS} WHERE seq = %s", (records[6]["seq"],)))
    return int(records[7]["seq"])


def another_brains_box(pair: Pair, foreign: Callable[[], bytes]) -> int:
    target = unseen(pair)[6]["seq"]
    as_owner(pair.url, (f"UPDATE {RECORDS} SET box = %s WHERE seq = %s", (foreign(), target)))
    return int(target)


UNOPENABLE = "does not open with the brain's content key"
OUT_OF_CHAIN = "(cut, reordered or spliced)"
MISFILED = "is filed on the hub under another device or number than it says"
# how the owner changes the hub -> what the refusal says of the record (the first check that sees
# it: the box's seal, the record's filing, the device's chain of records)
TAMPERS: dict[str, tuple[Callable[[Pair, Callable[[], bytes]], int], str]] = {
    "one-byte-of-a-box": (flip_a_byte, UNOPENABLE),
    "two-records-swapped": (swap_two, OUT_OF_CHAIN),
    "an-old-record-replayed": (replay_old, MISFILED),
    "a-record-replayed-under-its-own-number": (replay_same_number, OUT_OF_CHAIN),
    "a-record-cut-out": (cut_one_out, OUT_OF_CHAIN),
    "another-brains-box": (another_brains_box, UNOPENABLE),
}


def tamper(pair: Pair, how: str, request: pytest.FixtureRequest) -> tuple[int, str]:
    change, why = TAMPERS[how]
    return change(pair, lambda: request.getfixturevalue("foreign_box")), why


@pytest.mark.parametrize("how", TAMPERS)
def test_sync_refuses_a_tampered_hub_by_record_and_applies_nothing(
    pair: Pair, how: str, request: pytest.FixtureRequest
) -> None:
    b = pair.b
    before = snapshot(b.home)
    record, why = tamper(pair, how, request)
    refused = b.run("sync")
    print(how, "->", refused.code, refused.err)
    assert refused.code in (4, 5), refused.describe()
    assert_refused(refused, refused.code, NOTHING_APPLIED)
    assert f"hub record #{record} " in refused.err and why in refused.err, refused.describe()
    assert_unchanged(b.home, before)
    status = b.run("hub", "status", "--json").json()
    assert f"hub record #{record} " in status["last_error"]["message"], status


@pytest.mark.parametrize("how", TAMPERS)
def test_join_refuses_a_tampered_hub_by_record_and_leaves_no_brain(
    pair: Pair, how: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    record, why = tamper(pair, how, request)
    c = Device(tmp_path / "C", pair.a.passphrase_file)
    refused = c.run("hub", "join", pair.url, "--keystore", "file")
    print(how, "->", refused.code, refused.err)
    assert refused.code in (4, 5), refused.describe()
    assert_refused(refused, refused.code, NOTHING_APPLIED)
    assert f"join failed: hub record #{record} " in refused.err and why in refused.err, refused.describe()
    nothing_left(c.home)


GUARDED = {
    "UPDATE": "UPDATE {table} SET {column} = {column}",
    "DELETE": "DELETE FROM {table}",
    "TRUNCATE": "TRUNCATE {table} CASCADE",
}
COLUMNS = {
    "aimos_hub_meta": "value",
    "aimos_hub_brains": "sealed_about",
    "aimos_hub_masters": "sealed_master",
    RECORDS: "box",
    "aimos_hub_keys": "wrapped",
}


@pytest.mark.parametrize("table", HUB_TABLES)
@pytest.mark.parametrize("statement", GUARDED)
def test_the_hub_refuses_updates_deletes_and_truncates_while_its_guards_stand(
    pair: Pair, table: str, statement: str
) -> None:
    if table == "aimos_hub_keys":  # it holds rows once a device was revoked (a new content key)
        pair.a.run("hub", "revoke", pair.b.device_fp(), "--reason", "retired").ok()
    counted = f"SELECT COUNT(*) FROM {table}"
    before = hub_query(pair.url, counted), hub_records(pair.url)
    with psycopg.connect(pair.url, autocommit=True) as conn, pytest.raises(psycopg.Error) as refused:
        conn.execute(GUARDED[statement].format(table=table, column=COLUMNS[table]))
    assert f"aimos: {table} is append-only" in str(refused.value), refused.value
    assert (hub_query(pair.url, counted), hub_records(pair.url)) == before
    assert before[0][0][0] >= 1
