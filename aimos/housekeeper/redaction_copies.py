"""Redacted text in the brain's other copies: the backups that still hold it, and the master's
redaction records applied to them (and re-applied to a brain restored from one).

A record is the master's and names the rows it changes with their seal row hashes, so applying
it to a copy needs no passphrase and no new seal: the copy's seals keep verifying (store/seals.py
swaps the row hashes back) and `aimos verify` of the copy still passes.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import apsw

from aimos.memory.redaction import apply_record, check_stored
from aimos.recall.candidates import FTS_TABLES, rebuild_indexes
from aimos.store.connection import open_reader, open_writer
from aimos.store.seals import REDACTIONS


def unredacted(conn: apsw.Connection, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Of these records, the ones whose memory this copy holds with its text still in it."""
    ids = [r["memory_id"] for r in records]
    if not ids:
        return []
    marks = ", ".join("?" * len(ids))
    holding = {
        str(mid)
        for (mid,) in conn.execute(
            f"SELECT memory_id FROM memories WHERE memory_id IN ({marks}) AND value != ''", tuple(ids)
        )
    }
    return [r for r in records if r["memory_id"] in holding]


def backups_holding(files: list[Path], records: list[dict[str, Any]]) -> list[tuple[Path, list[str]]]:
    """Each backup that still holds the text of a redacted memory, with those memory ids."""
    found = []
    for path in files:
        try:
            with contextlib.closing(open_reader(path)) as conn:
                pending = unredacted(conn, records)
        except Exception:  # noqa: S112 (an unreadable backup is reported by `aimos restore --list`)
            continue
        if pending:
            found.append((path, [r["memory_id"] for r in pending]))
    return found


def apply_records(conn: apsw.Connection, records: list[dict[str, Any]]) -> list[str]:
    """Apply the records this copy still lacks (each checked against the copy's master first),
    rebuild its search indexes; call inside a transaction, with secure_delete on. Returns the
    memory ids redacted."""
    have = {str(mid) for (mid,) in conn.execute(f"SELECT memory_id FROM {REDACTIONS}")}
    done = []
    for stored in unredacted(conn, [r for r in records if r["memory_id"] not in have]):
        if check_stored(conn, stored) is None:
            apply_record(conn, stored)
            done.append(stored["memory_id"])
    if done:
        rebuild_indexes(conn)
        for table in FTS_TABLES:
            conn.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
    return done


def redact_copy(path: Path, records: list[dict[str, Any]]) -> list[str]:
    """Apply the records to a backup file in place (one transaction, secure_delete on, the WAL
    checkpointed and truncated after)."""
    conn = open_writer(path)
    try:
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute("BEGIN IMMEDIATE")
        try:
            done = apply_records(conn, records)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return done
