"""Two devices of one brain save while offline, then sync through the hub (issue 39): each recalls the
other's memories, both pass `aimos verify` with parity and the same corpus proof root, a second sync
moves nothing, and the hub's tables hold none of what was saved or asked in the clear.

Everything through the real CLI in subprocesses (tests/hub is a real-process folder); the hub is read
as its database's owner would, with psycopg.
"""

from __future__ import annotations

import glob
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from support.cli import SNAPSHOT_TABLES, sqlite_value, table_counts
from support.hub_devices import (
    Device,
    Pair,
    assert_one_copy_each,
    assert_verified_alike,
    hub_cells,
    hub_records,
    passphrase_file,
)

pytestmark = pytest.mark.timeout(240)

# what each device saves while offline: text, a distinctive word of it, and the save's options
A_SAVES = (
    (
        "the cobalt heron nests under the Pelham reservoir bridge",
        "Pelham",
        ("--key", "place:heron-nest", "--source", "field-notebook:lakeshore"),
    ),
    ("quarterly invoice numbers start with the prefix ZEPHYRINE", "ZEPHYRINE", ()),
)
B_SAVES = (
    (
        "the violet turbine in hangar nine hums at midnight",
        "turbine",
        ("--key", "machine:turbine-hum", "--source", "maintenance-log:hangar-nine"),
    ),
    ("grandmother's marmalade recipe needs bitter Seville oranges", "marmalade", ()),
)
QUERIES = {"A": "violet turbine hangar", "B": "cobalt heron reservoir"}


def saved_offline(device: Device, saves: Any) -> dict[str, str]:
    return {device.save(text, *options): text for text, _word, options in saves}


def moved(done: dict[str, Any]) -> tuple[int, int]:
    return done["pushed"], done["pulled"]


def needles(saves: Any, ids: set[str]) -> dict[str, bytes]:
    """What must never be on the hub in the clear: each text, its distinctive word, its key and
    source, each query, and each memory id (as text, as hex, as its 16 bytes)."""
    found: dict[str, bytes] = {}
    for text, word, options in saves:
        found[f"text {text!r}"] = text.encode()
        found[f"word {word!r}"] = word.encode()
        for flag, value in zip(options[::2], options[1::2], strict=True):
            found[f"{flag} {value!r}"] = value.encode()
    for who, query in QUERIES.items():
        found[f"{who}'s query {query!r}"] = query.encode()
    for memory_id in ids:
        found[f"memory id {memory_id}"] = memory_id.encode()
        found[f"memory id {memory_id} as hex"] = uuid.UUID(memory_id).hex.encode()
        found[f"memory id {memory_id} as bytes"] = uuid.UUID(memory_id).bytes
    return found


def test_two_devices_save_offline_sync_and_recall_each_other(pair: Pair) -> None:
    a, b = pair.a, pair.b
    # both offline: no sync between these saves
    from_a = saved_offline(a, A_SAVES)
    from_b = saved_offline(b, B_SAVES)
    assert not set(from_a) & b.memory_ids() and not set(from_b) & a.memory_ids()

    first = [b.sync(), a.sync(), b.sync()]
    print("sync B, A, B (pushed, pulled):", [moved(d) for d in first])
    assert first[1]["memories"] == len(from_b), first  # A took in B's two memories
    assert first[2]["memories"] == len(from_a), first  # and B took in A's
    # a second sync on each: nothing to send, nothing to take, nothing sent twice
    assert moved(a.sync()) == (0, 0)
    assert moved(b.sync()) == (0, 0)
    assert a.memory_ids() == b.memory_ids() >= set(from_a) | set(from_b)
    assert table_counts(a.brain) == table_counts(b.brain), SNAPSHOT_TABLES
    assert_one_copy_each(pair.url)

    # each recalls the other's memory by its words
    on_a = a.recall(QUERIES["A"])
    on_b = b.recall(QUERIES["B"])
    b_turbine = next(i for i, t in from_b.items() if "turbine" in t)
    a_heron = next(i for i, t in from_a.items() if "heron" in t)
    assert on_a.get(b_turbine) == from_b[b_turbine], on_a
    assert on_b.get(a_heron) == from_a[a_heron], on_b

    # the recalls' receipts travel too; then both verifiers agree, on both devices, on one corpus
    a.sync(), b.sync(), a.sync()
    assert_verified_alike(a, b)
    assert table_counts(a.brain, ["memories", "recall_receipts"]) == table_counts(
        b.brain, ["memories", "recall_receipts"]
    )

    # the hub holds none of it in the clear
    ids = a.memory_ids()
    assert len(hub_records(pair.url)) > 4 * len(ids)
    cells = hub_cells(pair.url)
    clear = [
        f"{what} in {where}"
        for what, needle in needles(A_SAVES + B_SAVES, ids).items()
        for where, raw in cells
        if needle.lower() in raw.lower()
    ]
    assert clear == [], "the hub holds in the clear: " + "; ".join(clear)


def frozen_clock(at: int) -> dict[str, str]:
    """The environment that runs an `aimos` subprocess with its wall clock stopped at ``at`` (unix
    seconds), through libfaketime (which .ci/run installs); monotonic clocks stay real."""
    found = sorted(glob.glob("/usr/lib/*/faketime/libfaketimeMT.so.1"))
    if not found:
        pytest.fail("libfaketime is missing: `apt-get install faketime` (.ci/run installs it)", pytrace=False)
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))
    return {"LD_PRELOAD": found[0], "FAKETIME": stamp, "FAKETIME_DONT_FAKE_MONOTONIC": "1"}


def test_a_device_joins_in_the_same_second_as_the_first_was_installed(tmp_path: Path, hub_url: str) -> None:
    """A script installs one device, puts it on the hub and joins another at once, all in one
    second: the joining device's housekeeper and agent are epochs of their own all the same."""
    secret = passphrase_file(tmp_path)
    a, b = Device(tmp_path / "A", secret), Device(tmp_path / "B", secret)
    clock = frozen_clock(int(time.time()))
    a.run("install", "--yes", "--no-guides", "--keystore", "file", "--no-service", env=clock).ok()
    a.run("hub", "init", hub_url, env=clock).ok()
    joined = b.run("hub", "join", hub_url, "--keystore", "file", env=clock)
    assert joined.code == 0, joined.describe()
    a.run("sync", env=clock).ok()
    housekeepers = "SELECT COUNT(DISTINCT device_fp) FROM identity_epochs WHERE role = 'housekeeper'"
    for device in (a, b):
        assert sqlite_value(device.brain, housekeepers) == "2"
        assert device.run("verify", "--json", env=clock).json()["ok"] is True


def test_two_devices_enrol_an_agent_of_one_name_in_the_same_second_while_offline(pair: Pair) -> None:
    """A provisioning script enrols agent `worker` on every device at once, offline: after they
    sync, each device holds both devices' `worker` epochs, and both verify."""
    # a second after every epoch either device holds began (a join's epochs may start a few
    # seconds ahead, on the device's own residue of seconds: a frozen clock never reaches them)
    begun = max(
        int(sqlite_value(d.brain, "SELECT MAX(valid_from) FROM identity_epochs")) for d in (pair.a, pair.b)
    )
    clock = frozen_clock(max(int(time.time()), begun) + 1)
    for device in (pair.a, pair.b):
        device.run("agent", "enroll", "worker", env=clock).ok()
    for device in (pair.a, pair.b, pair.a):
        synced = device.run("sync")
        assert synced.code == 0, synced.describe()
    workers = "SELECT COUNT(*) FROM identity_epochs WHERE agent_id = 'worker'"
    for device in (pair.a, pair.b):
        assert sqlite_value(device.brain, workers) == "2"
        assert device.verify()["ok"] is True
