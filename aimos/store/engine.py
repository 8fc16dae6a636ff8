"""The engine's own steps that the rest of aimos asks for by name: a read-only open, the state of
a connection's transaction, secure_delete, the WAL's checkpoint, SQLite's integrity check, an
unsealed transaction and a savepoint always rolled back. Each runs the statement (or apsw flag,
or dbconfig) as the caller's code did: engine errors are not translated here (the callers that
tolerate them catch ``EngineError``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import apsw

from aimos.store.connection import Connection, EngineError


def open_read_only(path: Path, *, as_uri: bool = False) -> Connection:
    """A connection that cannot write the file at ``path`` (no pragmas, no functions, never
    migrated); with ``as_uri``, opened as the URI ``file:PATH?mode=ro``. Raises the engine's error
    (``EngineError``) when the file cannot be opened."""
    if as_uri:
        return Connection(f"file:{path}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    return Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)


def transaction_open(conn: Connection) -> bool:
    """True while the connection holds a read or write transaction (a statement left unfinished
    holds its snapshot of the brain)."""
    return bool(conn.txn_state() != apsw.SQLITE_TXN_NONE)


def skip_checkpoint_on_close(conn: Connection) -> None:
    """Close ``conn`` later without the checkpoint a last connection makes (the file it opened may
    have been replaced); a connection that cannot be told so is closed as it is."""
    with contextlib.suppress(EngineError):
        conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)


def set_secure_delete(conn: Connection, on: bool) -> None:
    """secure_delete on (the pages a write frees are zeroed) or off."""
    conn.execute(f"PRAGMA secure_delete = {'ON' if on else 'OFF'}")


def wal_checkpoint(conn: Connection, mode: str) -> tuple[int, int, int]:
    """``PRAGMA wal_checkpoint(mode)`` (PASSIVE or TRUNCATE): (busy, frames in the log, frames
    checkpointed)."""
    if mode not in ("PASSIVE", "TRUNCATE"):
        raise ValueError(f"unknown checkpoint mode {mode!r}")
    busy, log, done = conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchall()[0]
    return int(str(busy)), int(str(log)), int(str(done))


def single_file(conn: Connection) -> None:
    """Journal mode DELETE: the file needs no WAL beside it."""
    conn.execute("PRAGMA journal_mode = DELETE")


def integrity_check(conn: Connection) -> list[str]:
    """SQLite's integrity check: ``["ok"]`` for a sound file, else what it found."""
    return [str(r[0]) for r in conn.execute("PRAGMA integrity_check").fetchall()]


def row_count(conn: Connection, table: str) -> int:
    """The rows of ``table`` (a name of the code's own)."""
    return int(str(conn.execute(f'SELECT COUNT(*) FROM "{table}"').fetchall()[0][0]))


def rollback_if_open(conn: Connection) -> None:
    """Roll back a transaction the caller's code left open (BEGIN without its end)."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


@contextlib.contextmanager
def unsealed_transaction(conn: Connection) -> Iterator[Connection]:
    """BEGIN IMMEDIATE ... COMMIT with no seal of its own (a write that adds no sealed row, as
    redaction records applied to a copy are), rolled back when the block raises."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


@contextlib.contextmanager
def rolled_back(conn: Connection, name: str) -> Iterator[Connection]:
    """A savepoint inside the caller's transaction that is always rolled back: what the block
    writes is tried and then undone."""
    if not name.isidentifier():
        raise ValueError(f"not a savepoint name: {name!r}")
    conn.execute(f"SAVEPOINT {name}")
    try:
        yield conn
    finally:
        conn.execute(f"ROLLBACK TO {name}")
        conn.execute(f"RELEASE {name}")


@contextlib.contextmanager
def read_snapshot(conn: Connection) -> Iterator[None]:
    """The block over one read snapshot: a deferred transaction begun and committed around it,
    unless the caller is already inside one (then it is the caller's)."""
    own_snapshot = not conn.in_transaction
    if own_snapshot:
        conn.execute("BEGIN DEFERRED")
    try:
        yield
    finally:
        if own_snapshot:
            conn.execute("COMMIT")
