"""Redacted text in the brain's other copies: the backups that still hold it (every one aimos
recorded writing, wherever it is, and any other in the brain's backups folder), and the master's
redaction records applied to them (and re-applied to a brain restored from one).

A record is the master's and names the rows it changes with their seal row hashes, so applying
it to a copy needs no passphrase and no new seal: the copy's seals keep verifying (store/seals.py
swaps the row hashes back) and `aimos verify` of the copy still passes.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aimos import paths
from aimos.actions.redaction import reindex
from aimos.errors import AimosError
from aimos.housekeeper import backup_records
from aimos.housekeeper.jobs.nightly_dream import backup_files
from aimos.memory.redaction import apply_record, check_stored
from aimos.store.connection import Connection, EngineError, open_reader, open_writer
from aimos.store.engine import set_secure_delete, single_file, unsealed_transaction, wal_checkpoint
from aimos.store.queries.housekeeper import memories_with_text, redacted_memory_ids


def unredacted(conn: Connection, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Of these records, the ones whose memory this copy holds with its text still in it."""
    ids = [r["memory_id"] for r in records]
    if not ids:
        return []
    holding = memories_with_text(conn, ids)
    return [r for r in records if r["memory_id"] in holding]


NOT_OURS = "not the backup aimos wrote there (another brain, or another newest seal): left as it is"
MISSING = "missing: moved or deleted"


@dataclass(frozen=True)
class CopyState:
    """One backup as `aimos redact` found it: the memories of the records whose text it still
    holds (or that were removed from it now), or why it could not be reached."""

    path: Path
    memory_ids: list[str]
    unreached: str | None = None


def known_backups(brain_id: str) -> list[backup_records.Backup]:
    """Every backup of the brain aimos knows of: those it recorded writing, wherever they are,
    then any other file in the brain's backups folder (written before backups were recorded), and
    the brains `aimos restore` replaced and kept beside the brain."""
    found = {b.path: b for b in backup_records.recorded(brain_id)}
    for path in [*backup_files(), *paths.replaced_brains()]:
        resolved = path.resolve()
        if resolved not in found:
            found[resolved] = backup_records.Backup(resolved, None, None, recorded=False)
    return list(found.values())


def _why(exc: BaseException) -> str:
    return getattr(exc, "message", None) or getattr(exc, "strerror", None) or type(exc).__name__


def check_backup_copy(
    backup: backup_records.Backup, brain_id: str, records: list[dict[str, Any]]
) -> CopyState:
    """Which of ``records`` the backup still holds the text of, read-only. A recorded backup that
    is not there, cannot be read, or is not the one aimos wrote there (another brain id or newest
    seal than recorded) is unreached, and nothing more is read from it; an unrecorded file of the
    backups folder that cannot be read, or is another brain's, holds nothing of this brain's
    (`aimos restore --list` names what it is)."""
    path = backup.path
    if not path.exists():
        return CopyState(path, [], MISSING)
    try:
        with contextlib.closing(open_reader(path)) as conn:
            found_brain, seal = backup_records.seal_in(conn)
            if found_brain != brain_id or (backup.recorded and seal != backup.seal):
                return CopyState(path, [], NOT_OURS if backup.recorded else None)
            pending = unredacted(conn, records)
    except (AimosError, EngineError, OSError) as exc:
        return CopyState(path, [], f"unreadable ({_why(exc)})" if backup.recorded else None)
    return CopyState(path, [r["memory_id"] for r in pending])


def backups_holding(brain_id: str, records: list[dict[str, Any]]) -> list[CopyState]:
    """Each known backup that still holds the text of one of ``records``, or could not be read."""
    states = [check_backup_copy(b, brain_id, records) for b in known_backups(brain_id)]
    return [s for s in states if s.memory_ids or s.unreached]


def redact_backups(brain_id: str, records: list[dict[str, Any]]) -> list[CopyState]:
    """Apply ``records`` to every known backup that still holds their text: each one cleaned
    (with the memory ids redacted in it), or unreached with why."""
    done = []
    for state in backups_holding(brain_id, records):
        if state.unreached:
            done.append(state)
            continue
        try:
            done.append(CopyState(state.path, redact_copy(state.path, records)))
        except (AimosError, EngineError, OSError) as exc:
            done.append(CopyState(state.path, [], f"could not be written ({_why(exc)})"))
    return done


def apply_records(conn: Connection, records: list[dict[str, Any]]) -> list[str]:
    """Apply the records this copy still lacks (each checked against the copy's master first),
    rebuild its search indexes; call inside a transaction, with secure_delete on. Returns the
    memory ids redacted."""
    have = redacted_memory_ids(conn)
    done = []
    for stored in unredacted(conn, [r for r in records if r["memory_id"] not in have]):
        if check_stored(conn, stored) is None:
            apply_record(conn, stored)
            done.append(stored["memory_id"])
    if done:
        reindex(conn)
    return done


def redact_copy(path: Path, records: list[dict[str, Any]]) -> list[str]:
    """Apply the records to a backup file in place (one transaction, secure_delete on, the WAL
    checkpointed after and the file made single again: no WAL is left beside it)."""
    conn = open_writer(path)
    try:
        set_secure_delete(conn, True)
        with unsealed_transaction(conn):
            done = apply_records(conn, records)
        wal_checkpoint(conn, "TRUNCATE")
        single_file(conn)
    finally:
        conn.close()
    return done
