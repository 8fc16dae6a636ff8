"""Nightly dream (02:00 UTC): full verification with a signed corpus proof root and its outcome
(whether the brain verified, and why not; kept outside the brain too, so that a failure warns at
the person's next command: verify/brain/outcome.py), then an online backup of the brain with
SQLite's backup API, checked by opening it and verifying it, keeping the newest 7. Every backup
aimos writes, here or with `aimos backup [--to DIR]`, is recorded outside the brain
(housekeeper/backup_records.py), and so is each one retention removes.

The trust anchor for the portable verifier comes from anchors.json (outside the brain); a brain
without one is verified against its own master row and the event says so.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aimos import paths
from aimos.housekeeper import backup_records
from aimos.housekeeper.jobs.context import JobContext
from aimos.housekeeper.state import backups_dir
from aimos.identity.anchors import anchored_fingerprint
from aimos.identity.master import master_row
from aimos.ledger.events import append_event
from aimos.meaning.model import file_sha256
from aimos.store.connection import copy_brain, open_reader, write_transaction
from aimos.store.engine import integrity_check
from aimos.store.meta import brain_meta
from aimos.verify.brain import outcome as verify_outcome
from aimos.verify.brain.parity import verify_everything
from aimos.verify.brain.verifier import verify_brain
from aimos.vocabulary import CORPUS_ROOT_OPERATION

KEEP_BACKUPS = 7
BACKUP_PREFIX = "brain-"
BACKUP_SUFFIX = ".sqlite3"


def backup_files(folder: Path | None = None) -> list[Path]:
    """The brain's backups (in ``folder``, else the brain's backups folder), oldest first: names
    are brain-<UTC second>-<sequence>.sqlite3 with a zero-padded sequence, so they sort in the
    order they were made."""
    folder = folder or backups_dir()
    if not folder.exists():
        return []
    return sorted(
        p for p in folder.iterdir() if p.name.startswith(BACKUP_PREFIX) and p.name.endswith(BACKUP_SUFFIX)
    )


def _next_backup_name(folder: Path, now: int) -> Path:
    stamp = datetime.fromtimestamp(now, tz=UTC).strftime("%Y%m%dT%H%M%SZ")
    taken = [p.name for p in folder.glob(f"{BACKUP_PREFIX}{stamp}-*{BACKUP_SUFFIX}")]
    sequences = [
        int(n[len(BACKUP_PREFIX) + len(stamp) + 1 : -len(BACKUP_SUFFIX)] or 0)
        for n in taken
        if n[len(BACKUP_PREFIX) + len(stamp) + 1 : -len(BACKUP_SUFFIX)].isdigit()
    ]
    return folder / f"{BACKUP_PREFIX}{stamp}-{max(sequences, default=-1) + 1:04d}{BACKUP_SUFFIX}"


def online_backup(now: int, folder: Path | None = None) -> Path:
    """Copy the live brain with the backup API (one step: a consistent WAL snapshot) to a 0600 file
    in ``folder`` (else the brain's backups folder, made or tightened to 0700). A folder the person
    names is left as it is (a shared or sticky folder keeps its mode, a symlink's target too); only
    the folders made for it are 0700. The backup is recorded (its resolved path and newest seal)
    before it is returned; one that cannot be recorded is removed again, so no backup exists that
    `aimos redact --backups` does not know of."""
    if folder is None:
        folder = paths.ensure_private_dir(backups_dir())
    else:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    target = _next_backup_name(folder, now)
    partial = folder / f".{target.name}.{os.getpid()}.partial"
    source = open_reader(paths.brain_path())
    try:
        brain_id = brain_meta(source)["brain_id"]
        copy_brain(source, partial)
    finally:
        source.close()
    try:
        _, seal = backup_records.seal_of(partial)
        os.replace(partial, target)
        backup_records.record_written(brain_id, target, seal, now)
    except BaseException:
        partial.unlink(missing_ok=True)
        target.unlink(missing_ok=True)
        raise
    return target


def check_backup(path: Path) -> dict[str, Any]:
    """Open the backup read-only: SQLite's integrity check, then the in-database verifier."""
    conn = open_reader(path)
    try:
        integrity = integrity_check(conn)
        report = verify_brain(conn)
        return {
            "integrity": integrity == ["ok"],
            "verifies": report.ok,
            "memories": len(report.records),
            "corpus_proof_root": report.corpus_proof_root,
        }
    finally:
        conn.close()


def prune_backups(brain_id: str, now: int, keep: int = KEEP_BACKUPS) -> list[str]:
    """Keep the newest ``keep`` backups in the brain's backups folder (each one removed leaves
    the record of backups); also drop partial files a killed backup left behind."""
    for partial in backups_dir().glob(f".{BACKUP_PREFIX}*.partial"):
        partial.unlink(missing_ok=True)
    files = backup_files()
    removed = []
    for old in files[: max(0, len(files) - keep)]:
        old.unlink(missing_ok=True)
        backup_records.record_gone(brain_id, old, now, backup_records.PRUNED)
        removed.append(old.name)
    return removed


def run(ctx: JobContext) -> dict[str, Any]:
    started = time.perf_counter()
    anchor = anchored_fingerprint(ctx.brain_id)
    fingerprint = anchor or str(master_row(ctx.conn)["fingerprint"])
    if anchor is None:
        ctx.attention.append(
            "anchors.json holds no master fingerprint for this brain: it was verified against its "
            "own master key, which proves consistency, not that it is the brain you installed"
        )
    report = verify_everything(ctx.conn, fingerprint)
    verify_ms = round((time.perf_counter() - started) * 1000, 1)
    in_db, portable = report["in_database"], report["portable"]
    reasons = verify_outcome.failure_reasons(report)
    if not report["ok"]:
        ctx.attention.append(
            f"the brain does not verify ({verify_outcome.reasons_text(reasons)}): run `aimos verify`"
        )
    attested = {
        "run_id": ctx.run_id,
        "corpus_proof_root": in_db["corpus_proof_root"],
        "portable_corpus_proof_root": portable["corpus_proof_root"],
        "memories": in_db["memories"],
        "in_database_ok": in_db["ok"],
        "portable_verdict": portable["verdict"],
        "portable_primary_reason": portable["primary_reason"],
        "parity": report["parity"],
        # the whole outcome, the brain checks too (the search indexes, every row, the schema)
        "verified": report["ok"],
        "failure_reasons": reasons,
        "trust_anchor": "anchors.json" if anchor else "brain master row (no anchors.json entry)",
        "master_fingerprint": fingerprint,
    }
    with write_transaction(ctx.conn, ctx.housekeeper):
        event = append_event(
            ctx.conn,
            ctx.housekeeper,
            operation=CORPUS_ROOT_OPERATION,
            company_id=ctx.company_id,
            metadata=attested,
            now=ctx.now,
        )
    # where every command sees it: a failure warns at the person's next command
    verify_outcome.record(ctx.brain_id, report, verify_outcome.NIGHTLY, ctx.now)
    backup = online_backup(ctx.now)
    checked = check_backup(backup)
    removed: list[str] = []
    if not (checked["integrity"] and checked["verifies"]):
        ctx.attention.append(f"the backup {backup.name} does not verify; older backups are kept")
    elif not report["ok"]:
        ctx.attention.append("older backups are kept while the brain does not verify")
    else:  # retention only when tonight's brain and backup are both good
        removed = prune_backups(ctx.brain_id, ctx.now)
    return {
        "verified": report["ok"],
        "verify_ms": verify_ms,
        "corpus_proof_root": in_db["corpus_proof_root"],
        "corpus_root_event_id": event["event_id"],
        "backup": {
            "file": backup.name,
            "bytes": backup.stat().st_size,
            "sha256": file_sha256(backup),
            **checked,
        },
        "backups_kept": len(backup_files()),
        "backups_removed": removed,
    }
