"""The SQL of aimos/mcp: the server's one statement of its own, moving the WAL into the brain file
after a call's answer."""

from __future__ import annotations

from aimos.store.connection import Connection


def move_wal_into_file(conn: Connection) -> None:
    """A passive checkpoint: the WAL's pages copied into the brain file as far as no reader holds
    them back, so the file alone is the whole brain while the server waits."""
    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
