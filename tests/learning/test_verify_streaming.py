"""`aimos verify` at scale: the in-database verifier walks the memories a batch at a time (read as
it goes, each batch's chains and save records checked together) and says how far it has got; the
portable verifier runs in a forked child on the other core while the brain checks run. Neither
changes a verdict: a walk in batches of two gives the very report one batch gives, an edited
memory in a later batch is named as before, and the forked child's verdict is the one computed
here, on an untouched bundle and on an edited one."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.cli import SQLITE3
from support.learning import put

from aimos.identity.master import master_row
from aimos.verify.brain import parity, verifier
from aimos.verify.brain.evidence import export_cognitive
from aimos.verify.brain.verifier import verify_brain
from aimos.verify.cognitive import verify_cognitive_bundle

pytestmark = pytest.mark.timeout(120)


def _edit_value(db: Path, memory_id: str) -> None:
    """What anyone with the file can do: drop the memories table's triggers, edit a value."""
    names = subprocess.run(
        [SQLITE3, str(db), "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'memories'"],
        capture_output=True, text=True, timeout=30, check=True,
    ).stdout.split()  # fmt: skip
    edit = "".join(f"DROP TRIGGER {n};" for n in names)
    edit += f"UPDATE memories SET value = value || '!' WHERE memory_id = '{memory_id}';"
    subprocess.run([SQLITE3, str(db), edit], capture_output=True, timeout=30, check=True)


def _walk(brain: Any, batch: int, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[tuple[int, int]]]:
    counts: list[tuple[int, int]] = []
    monkeypatch.setattr(verifier, "WALK_BATCH", batch)
    report = verify_brain(brain.conn, count=lambda done, total: counts.append((done, total)))
    return report, counts


def test_a_walk_in_small_batches_names_a_later_edit_as_one_batch_does(
    brain: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = sorted(put(brain, f"the lighthouse keeper's log, entry {i}") for i in range(5))
    _edit_value(Path(brain.home) / "brain.sqlite3", ids[4])  # in the third batch of two
    whole, whole_counts = _walk(brain, 500, monkeypatch)
    small, small_counts = _walk(brain, 2, monkeypatch)
    assert [r.__dict__ for r in small.records] == [r.__dict__ for r in whole.records]
    assert small.event_chains == whole.event_chains and small.corpus_proof_root == whole.corpus_proof_root
    failed = [(r.memory_id, r.reason) for r in small.records if not r.ok]
    assert failed == [(ids[4], "save_record_invalid")], failed
    assert whole_counts == [(5, 5)]
    assert small_counts == [(2, 5), (4, 5), (5, 5)]


# the forked run, in a process of its own: a thread an earlier test left running in this one (the
# MCP server's after-call worker lives as long as its process) would keep the fork from being taken
_FORKED_RUN = """
import json, sys, threading
from aimos.verify.brain import parity
bundle = json.loads(open(sys.argv[1]).read())
counts = []
threads = [t.name for t in threading.enumerate()]
run = parity.PortableRun(bundle, sys.argv[2], None, alone=True, count=lambda d, t: counts.append((d, t)))
forked = run._reader is not None
verdict = run.verdict()
print(json.dumps({"threads": threads, "forked": forked, "whole": repr(verdict), "verdict": verdict.verdict,
                  "reason": verdict.primary_reason, "counts": counts}))
"""


def test_the_forked_verifier_gives_the_verdict_computed_here(brain: Any, tmp_path: Path) -> None:
    for i in range(3):
        put(brain, f"the tide table for the harbour, week {i}")
    bundle = export_cognitive(brain.conn)
    fingerprint = master_row(brain.conn)["fingerprint"]
    edited = copy.deepcopy(bundle)
    signed = edited["event_streams"][0]["events"][-1]
    signed["signature"] = ("1" if signed["signature"][0] == "0" else "0") + signed["signature"][1:]
    assert (os.cpu_count() or 1) > 1, "this test runs where the fork is taken (Linux, two cores)"
    for document, verdict in (("untouched", "valid"), ("edited", "invalid")):
        given = bundle if document == "untouched" else edited
        here = verify_cognitive_bundle(given, expected_master_fingerprint=fingerprint)
        (tmp_path / "bundle.json").write_text(json.dumps(given))
        ran = subprocess.run(
            [sys.executable, "-c", _FORKED_RUN, str(tmp_path / "bundle.json"), fingerprint],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        forked = json.loads(ran.stdout)
        assert forked["threads"] == ["MainThread"] and forked["forked"], ("a child was forked", forked)
        assert forked["whole"] == repr(here), document  # the same verdict, field for field
        assert forked["verdict"] == verdict, (document, forked["reason"])
        assert forked["counts"] == [[3, 3]]  # the child's count of its last memory, told there


def test_a_child_that_dies_without_a_verdict_is_replaced_by_verifying_here(brain: Any) -> None:
    put(brain, "the ferry leaves at seven")
    bundle = export_cognitive(brain.conn)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # a child that dies at once, saying nothing
        os._exit(1)
    os.close(write_fd)
    assert parity._collect(pid, read_fd, None) is None
    run = parity.PortableRun(bundle, master_row(brain.conn)["fingerprint"], None, alone=False, count=None)
    assert run._reader is None
    assert run.verdict().verdict == "valid"
