"""Devices of one brain for the hub tests: each an AIMOS_HOME of its own (two homes on one machine
are two devices), driven through the real `aimos` CLI in subprocesses (this folder is in
tests/conftest.py REAL_PROCESS_FOLDERS), and the hub seen from outside, as its database's owner.

Imported by the test modules of this folder as a plain module (this folder's conftest.py puts it on
sys.path). Nothing is mocked: the devices are real brains with the file keystore, the hub a real
PostgreSQL database (support.hub.PgCluster).

A pair (device A, which put the brain on the hub, and device B, which joined it) costs a few
seconds to make; `copy_pair` copies one (its homes, and its hub database through PostgreSQL's
CREATE DATABASE ... TEMPLATE, each device's hub URL pointed at the copy) in a fraction of that, so a
module makes its pair once and each test changes a copy of its own.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from aimos import paths
from aimos.store.postgres import TABLES
from support.cli import BRAIN, PASSPHRASE_ENV, Result, listing, run_aimos, sqlite, sqlite_value
from support.hub import PgCluster, unique_database_name

PASSPHRASE = "hub tests: a passphrase of the brain's master"
RECORDS = "aimos_hub_records"
HUB_TABLES = TABLES


def passphrase_file(folder: Path, passphrase: str = PASSPHRASE, name: str = "passphrase") -> Path:
    path = folder / name
    path.write_text(passphrase + "\n")
    path.chmod(0o600)
    return path


@dataclass
class Device:
    """One device: its AIMOS_HOME and the file AIMOS_PASSPHRASE_FILE names for it."""

    home: Path
    passphrase_file: Path

    def env(self) -> dict[str, str]:
        return {"AIMOS_HOME": str(self.home), PASSPHRASE_ENV: str(self.passphrase_file)}

    def run(self, *args: str, timeout: float = 120, env: dict[str, str] | None = None) -> Result:
        """`aimos ARGS` on this device (a real subprocess; ``env`` added to its environment), with
        the file keystore it was made with."""
        return run_aimos(*args, env={**self.env(), **(env or {})}, unset=("AIMOS_KEYSTORE",), timeout=timeout)

    @property
    def brain(self) -> Path:
        return self.home / BRAIN

    def brain_id(self) -> str:
        return sqlite_value(self.brain, "SELECT value FROM brain_meta WHERE key = 'brain_id'")

    def device_fp(self) -> str:
        return sqlite_value(self.brain, "SELECT value FROM brain_meta WHERE key = 'device_fp'")

    def content_key(self) -> bytes:
        """The brain's content key, from this device's file keystore."""
        from aimos.hub.device import content_key
        from aimos.identity.keystore import FileKeystore

        brain_id = self.brain_id()
        return content_key(FileKeystore(brain_id, self.home / "state" / "keys" / brain_id))

    def hub_name(self) -> str:
        """The keyed name the hub files this device's records under."""
        from aimos.hub.box import device_name

        return device_name(self.content_key(), self.device_fp())

    def keystore_item(self, name: str) -> Path:
        return self.home / "state" / "keys" / self.brain_id() / f"{name}.key"

    def hub_state(self) -> dict[str, Any]:
        return dict(json.loads((self.home / "state" / "hub" / f"{self.brain_id()}.json").read_text()))

    def save(self, text: str, *options: str) -> str:
        """`aimos save TEXT OPTIONS --json`: the new memory's id."""
        return str(self.run("save", text, *options, "--json").json()["memory_id"])

    def sync(self) -> dict[str, Any]:
        return dict(self.run("sync", "--json").json())

    def recall(self, query: str) -> dict[str, str]:
        """`aimos recall QUERY --json`: the memories it returned, id -> text."""
        found = self.run("recall", query, "--json").json()
        return {str(r["memory_id"]): str(r["value"]) for r in found["results"]}

    def verify(self) -> dict[str, Any]:
        return dict(self.run("verify", "--json").json())

    def query(self, sql: str) -> list[dict[str, Any]]:
        """``sql``'s rows in this device's brain, read with the real `sqlite3` shell."""
        found = sqlite(self.brain, sql, "-json")
        assert found.returncode == 0, f"sqlite3 {sql!r} failed: {found.stderr}"
        return list(json.loads(found.stdout)) if found.stdout.strip() else []

    def memory_ids(self) -> set[str]:
        listed = sqlite_value(self.brain, "SELECT group_concat(memory_id, ' ') FROM memories")
        return set(listed.split())

    def pulled_through(self) -> int:
        """The hub order number this device's pulls reached."""
        return int(sqlite_value(self.brain, "SELECT COALESCE(MAX(hub_seq), 0) FROM hub_pulls"))

    def point_at(self, url: str) -> None:
        """This device's hub is now ``url`` (its copy of the hub), in its keystore as `hub init` and
        `hub join` put it."""
        item = self.keystore_item("hub_url")
        assert item.is_file(), f"{self.home} is linked to no hub"
        item.write_text(url)


@contextmanager
def opened_brain(home: Path, env: dict[str, str]) -> Iterator[Any]:
    """The brain of the device at ``home`` opened in-process by aimos's own session (its keystore,
    its housekeeper sealing every write), ``env`` set meanwhile: what modified aimos code on the
    device would hold."""
    from aimos.actions.session import open_brain

    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with paths.using_home(home):
            brain = open_brain(write=True)
            try:
                yield brain
            finally:
                brain.conn.close()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def assert_verified_alike(*devices: Device) -> list[dict[str, Any]]:
    """`aimos verify --json` on each device: ok, with parity, over every memory it holds, and one
    corpus proof root on all of them (both verifiers, every device). The reports."""
    reports, roots = [], set()
    for device in devices:
        report = device.verify()
        assert report["ok"] is True and report["parity"] is True, (device.home.name, report)
        assert report["in_database"]["memories"] == len(device.memory_ids()), (device.home.name, report)
        roots |= {report["in_database"]["corpus_proof_root"], report["portable"]["corpus_proof_root"]}
        reports.append(report)
    assert len(roots) == 1, f"the devices' corpus proof roots differ: {roots}"
    return reports


def install(home: Path, passphrase: Path) -> Device:
    device = Device(home, passphrase)
    device.run("install", "--yes", "--no-guides", "--keystore", "file", "--no-service").ok()
    return device


@dataclass
class Pair:
    """Device A (it ran `aimos hub init`, the home) and device B (it joined), and their hub."""

    a: Device
    b: Device
    database: str
    url: str


def make_pair(root: Path, cluster: PgCluster) -> Pair:
    """Install A, put its brain on a new hub database, join B: each step through the real CLI."""
    secret = passphrase_file(root)
    database = unique_database_name()
    url = cluster.create_database(database)
    a = install(root / "A", secret)
    a.run("hub", "init", url, "--json").ok()
    return Pair(a, join(root / "B", secret, url, a), database, url)


def join(home: Path, passphrase: Path, url: str, after: Device) -> Device:
    """A new device at ``home`` that joins the brain on ``url`` (`aimos hub join`), a second after
    the newest epoch ``after`` holds: a join in the same second as an epoch of another device was
    refused (test_hub_two_devices.py::test_a_device_joins_in_the_same_second_as_the_first_was_installed);
    every other test joins a second later, as a person would."""
    newest = int(sqlite_value(after.brain, "SELECT MAX(valid_from) FROM identity_epochs"))
    while time.time() < newest + 1:
        time.sleep(0.05)
    device = Device(home, passphrase)
    device.run("hub", "join", url, "--keystore", "file", "--json").ok()
    return device


def copy_pair(pair: Pair, root: Path, cluster: PgCluster) -> Pair:
    """A copy of ``pair``: both homes, and the hub's database, each device pointed at the copy."""
    database = unique_database_name()
    url = cluster.create_database(database, template=pair.database)
    root.mkdir(parents=True, exist_ok=True)
    secret = passphrase_file(root)
    devices = []
    for name, device in (("A", pair.a), ("B", pair.b)):
        shutil.copytree(device.home, root / name, symlinks=True)
        copied = Device(root / name, secret)
        copied.point_at(url)
        devices.append(copied)
    return Pair(devices[0], devices[1], database, url)


def nothing_left(home: Path) -> None:
    """No brain file, no keystore item, no anchors.json entry, no hub state in ``home``."""
    everything = listing(home)
    assert not [p for p in everything if p.startswith("brain.sqlite3")], everything
    assert not [p for p in everything if p.startswith("state/keys/") and p.endswith(".key")], everything
    assert not [p for p in everything if p.startswith("state/hub/") and p.endswith(".json")], everything
    anchors = home / "config" / "anchors.json"
    if anchors.exists():
        assert json.loads(anchors.read_text()).get("brains", {}) == {}, anchors.read_text()
    assert not [p for p in everything if p.startswith("config/freshness-")], everything


# --- the hub as its database's owner sees it --------------------------------------------------
def hub_query(url: str, query: str, params: Iterable[Any] | None = None) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(query, None if params is None else tuple(params)).fetchall()


def hub_records(url: str) -> list[dict[str, Any]]:
    """Every record on the hub, in order: seq, device, device_n, name, box."""
    return [
        {"seq": r[0], "device": r[1], "device_n": r[2], "name": bytes(r[3]), "box": bytes(r[4])}
        for r in hub_query(url, f"SELECT seq, device, device_n, name, box FROM {RECORDS} ORDER BY seq")
    ]


def hub_cells(url: str) -> list[tuple[str, bytes]]:
    """Every cell (but NULLs) of every column of every aimos_hub_* table, as bytes (bytea as stored,
    anything else as its text), named table.column."""
    columns = hub_query(
        url,
        "SELECT table_name, column_name, data_type FROM information_schema.columns"
        " WHERE table_schema = 'public' AND table_name LIKE 'aimos\\_hub\\_%' ORDER BY 1, ordinal_position",
    )
    assert {str(t) for t, _c, _d in columns} == set(HUB_TABLES), columns
    cells = []
    for table, column, data_type in columns:
        for (value,) in hub_query(url, f'SELECT "{column}" FROM "{table}" WHERE "{column}" IS NOT NULL'):
            raw = bytes(value) if data_type == "bytea" else str(value).encode()
            cells.append((f"{table}.{column}", raw))
    return cells


def as_owner(url: str, *statements: tuple[str, Iterable[Any]]) -> None:
    """Run ``statements`` as the hub database's owner, with the tables' guard triggers switched
    off first (what an owner may do: ALTER TABLE ... DISABLE TRIGGER USER)."""
    with psycopg.connect(url, autocommit=False) as conn:
        for table in HUB_TABLES:
            conn.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
        for query, params in statements:
            conn.execute(query, tuple(params))
        conn.commit()


def assert_one_copy_each(url: str) -> dict[str, int]:
    """No record on the hub twice: one record a name, and each device's numbers 1..N without a
    gap. Returns the records per device."""
    found = hub_records(url)
    names = [r["name"] for r in found]
    assert len(names) == len(set(names)), f"{len(names) - len(set(names))} hub records share a name"
    per_device: dict[str, list[int]] = {}
    for r in found:
        per_device.setdefault(r["device"], []).append(r["device_n"])
    for device, numbers in per_device.items():
        assert sorted(numbers) == list(range(1, len(numbers) + 1)), f"{device}: numbers {numbers}"
    return {device: len(numbers) for device, numbers in per_device.items()}
