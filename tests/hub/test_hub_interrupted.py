"""`kill -9` of `aimos sync` at random points (issue 39): whatever the kill cut (the push between two
of its hub transactions, the pull before its commit, the state file after either), the next sync
completes, and at the end both devices hold the same memories, every one once, the hub holds each
row once (each device's records numbered 1..N without a gap), and `aimos verify` passes on both.

A fixed seed draws the delays; they are printed, with what each kill left (run with -s to see).
Through the real CLI: each sync is a real `python -m aimos sync` process, killed with SIGKILL.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from support.cli import SNAPSHOT_TABLES, table_counts
from support.hub_devices import RECORDS, Device, Pair, assert_one_copy_each

pytestmark = pytest.mark.timeout(300)

SEED = 39
TRIES = 4
PER_TRY = 300  # memories A imports before each try: 1,200 records, two of a push's hub transactions
DELAYS = (0.25, 1.1)  # seconds after the start: the process's start-up, then its push and its pull


def start_sync(d: Device) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "aimos", "sync"],
        env={**os.environ, **d.env()},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def kill(proc: subprocess.Popen[bytes]) -> str:
    """SIGKILL the sync (unless it already ended); what became of it."""
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    _out, err = proc.communicate(timeout=60)
    if proc.returncode == -signal.SIGKILL:
        return "killed"
    assert proc.returncode == 0, err.decode()
    return "finished before the kill"


def hub_count(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        return int(conn.execute(f"SELECT COUNT(*) FROM {RECORDS}").fetchone()[0])  # type: ignore[index]


def kill_after(d: Device, url: str, delay: float) -> str:
    hub_before, pulled_before = hub_count(url), d.pulled_through()
    proc = start_sync(d)
    time.sleep(delay)
    fate = kill(proc)
    return (
        f"{fate}; hub records {hub_before} -> {hub_count(url)}, "
        f"pulled through {pulled_before} -> {d.pulled_through()}"
    )


def kill_once_the_hub_grew(d: Device, url: str) -> str:
    """Kill the sync as soon as its first push transaction is on the hub (a push of more than one
    transaction's records is cut in the middle)."""
    before = hub_count(url)
    proc = start_sync(d)
    with psycopg.connect(url, autocommit=True) as conn:
        while proc.poll() is None:
            (now,) = conn.execute(f"SELECT COUNT(*) FROM {RECORDS}").fetchone()  # type: ignore[misc]
            if now > before:
                break
            time.sleep(0.002)
    fate = kill(proc)
    return f"{fate} once the hub grew; hub records {before} -> {hub_count(url)}"


def import_notes(d: Device, folder: Path, batch: int) -> int:
    notes = folder / f"notes-{batch}.jsonl"
    notes.write_text(
        "".join(
            json.dumps({"text": f"batch {batch} note {i}: the tide table for pier {i * 7919 + batch}"}) + "\n"
            for i in range(PER_TRY)
        )
    )
    return int(d.run("import", str(notes), "--json").json()["saved"])


def test_syncs_killed_at_random_points_lose_nothing_and_send_nothing_twice(
    made_pair: Pair, tmp_path: Path
) -> None:
    a, b, url = made_pair.a, made_pair.b, made_pair.url
    rng = random.Random(SEED)
    expected = len(a.memory_ids() | b.memory_ids())
    print(f"\nseed {SEED}, delays drawn from {DELAYS} s")
    for attempt in range(TRIES):
        expected += import_notes(a, tmp_path, attempt)
        b.save(f"B's note of try {attempt}: the ferry leaves at {attempt + 6} o'clock")
        expected += 1
        for d, name in ((a, "A"), (b, "B")):
            if attempt == 0 and d is a:
                print(f"try {attempt} {name}: {kill_once_the_hub_grew(d, url)}")
            else:
                delay = round(rng.uniform(*DELAYS), 3)
                print(f"try {attempt} {name}: kill -9 after {delay} s: {kill_after(d, url, delay)}")
            d.sync()  # the next sync completes

    for d in (a, b, a):
        d.sync()
    assert len(a.memory_ids()) == expected, (len(a.memory_ids()), expected)
    assert a.memory_ids() == b.memory_ids()
    assert table_counts(a.brain) == table_counts(b.brain), SNAPSHOT_TABLES
    per_device = assert_one_copy_each(url)
    print("hub records per device:", per_device)
    roots = set()
    for d in (a, b):
        report = d.verify()
        assert report["ok"] is True and report["parity"] is True, report
        roots.add(report["in_database"]["corpus_proof_root"])
    assert len(roots) == 1, roots
