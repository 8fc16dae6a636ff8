"""apsw connections to a brain: pragmas, migrations, the read-side authorizer, error mapping."""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import apsw

from aimos import paths
from aimos.errors import (
    BusyError,
    DamagedBrainError,
    IntegrityError,
    NotInstalledError,
    SchemaTooNewError,
    StoreError,
)
from aimos.store.functions import SQL_FUNCTIONS

DEFAULT_BUSY_TIMEOUT_MS = 10_000
_MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")

_DENIED_FOR_READERS = {
    apsw.SQLITE_DELETE,
    apsw.SQLITE_UPDATE,
    apsw.SQLITE_INSERT,
    apsw.SQLITE_ALTER_TABLE,
    apsw.SQLITE_DROP_INDEX,
    apsw.SQLITE_DROP_TABLE,
    apsw.SQLITE_DROP_TEMP_INDEX,
    apsw.SQLITE_DROP_TEMP_TABLE,
    apsw.SQLITE_DROP_TEMP_TRIGGER,
    apsw.SQLITE_DROP_TEMP_VIEW,
    apsw.SQLITE_DROP_TRIGGER,
    apsw.SQLITE_DROP_VIEW,
    apsw.SQLITE_DROP_VTABLE,
}


def migrations() -> list[tuple[int, str, str]]:
    """(version, name, sql) of every packaged migration, in order; numbered from 1 with no gap."""
    found = []
    for entry in resources.files("aimos.store.migrations").iterdir():
        match = _MIGRATION_NAME.fullmatch(entry.name)
        if match:
            found.append((int(match.group(1)), match.group(2), entry.read_text("utf-8")))
    found.sort()
    if [v for v, _, _ in found] != list(range(1, len(found) + 1)):
        raise StoreError("packaged migrations are not numbered 1..N without gaps")
    return found


def code_schema_version() -> int:
    return len(migrations())


def busy_timeout_ms() -> int:
    try:
        return int(os.environ.get("AIMOS_BUSY_TIMEOUT_MS", DEFAULT_BUSY_TIMEOUT_MS))
    except ValueError:
        return DEFAULT_BUSY_TIMEOUT_MS


@contextlib.contextmanager
def translate_errors() -> Iterator[None]:
    """Turn apsw errors into aimos errors with hints; no raw database error reaches a user."""
    try:
        yield
    except apsw.BusyError as exc:
        raise BusyError("the brain is busy: another process is writing to it") from exc
    except apsw.LockedError as exc:
        raise BusyError("the brain is locked by another connection") from exc
    except apsw.ConstraintError as exc:
        text = str(exc)
        match = re.search(r"aimos: (.*)$", text)
        if match:
            raise IntegrityError(f"refused by the brain: {match.group(1)}") from exc
        raise IntegrityError(f"refused by the brain: {text.split(': ', 1)[-1]}") from exc
    except apsw.AuthError as exc:
        raise IntegrityError(
            "refused: this connection may only read the brain",
            "Changes go through aimos commands, which sign them.",
        ) from exc
    except (apsw.NotADBError, apsw.CorruptError) as exc:
        raise StoreError(
            "the brain file is not a readable SQLite database",
            "Restore it from a backup in the brain's backups folder, or check AIMOS_HOME.",
        ) from exc
    except apsw.CantOpenError as exc:
        raise StoreError(
            "cannot open the brain file", "Check that AIMOS_HOME points to a writable folder."
        ) from exc


def _reader_authorizer(op: int, *_args: Any) -> int:
    return apsw.SQLITE_DENY if op in _DENIED_FOR_READERS else apsw.SQLITE_OK


def _configure(conn: apsw.Connection) -> None:
    conn.set_busy_timeout(busy_timeout_ms())
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = FULL")
    # REPLACE conflict resolution deletes rows; with recursive triggers on, those deletions fire
    # the BEFORE DELETE guards like any other delete.
    conn.execute("PRAGMA recursive_triggers = ON")


def schema_version(conn: apsw.Connection) -> int:
    value = conn.execute("PRAGMA user_version").fetchall()[0][0]
    return int(value) if isinstance(value, int) else 0


def _refuse_newer(conn: apsw.Connection) -> None:
    """Refuse a brain whose schema version (PRAGMA user_version) disagrees with the migrations
    it records as applied (an edit made outside aimos: running migrations from it would re-run
    or skip some half-way), then one newer than this code. Reads only; changes nothing."""
    version = schema_version(conn)
    recorded = bool(
        conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
        ).fetchall()
    )
    applied = (
        [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
        if recorded
        else []
    )
    if version < 0 or recorded != (version > 0) or applied != list(range(1, version + 1)):
        if applied and applied == list(range(1, len(applied) + 1)):
            shown = f"1..{len(applied)}"
        else:
            shown = ", ".join(str(v) for v in applied[:8]) + (", ..." if len(applied) > 8 else "")
        raise DamagedBrainError(
            f"the brain's schema version (PRAGMA user_version = {version}) disagrees with the "
            f"migrations it records as applied ({shown or 'none'}): the file was changed outside "
            "aimos, so it is neither read nor migrated",
            "Nothing was changed. Restore the brain from a backup (the housekeeper keeps them in "
            f"{paths.data_dir() / 'backups'}), then run `aimos verify`.",
            reason="schema_version_mismatch",
        )
    if version > code_schema_version():
        raise SchemaTooNewError(
            f"this brain has schema version {version}, newer than this aimos understands "
            f"({code_schema_version()})"
        )


def register_functions(conn: apsw.Connection) -> None:
    for name, (fn, nargs) in SQL_FUNCTIONS.items():
        conn.create_scalar_function(name, fn, nargs, deterministic=True)


def _apply_migrations(conn: apsw.Connection) -> None:
    current = schema_version(conn)
    for version, name, sql in migrations():
        if version <= current:
            continue
        with conn:  # one transaction per migration
            conn.execute(sql)
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (version, name, int(time.time())),
            )
            conn.execute(f"PRAGMA user_version = {version}")


def _create_file(path: Path) -> None:
    paths.ensure_private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)


def open_writer(path: Path | None = None, *, create: bool = False) -> apsw.Connection:
    """The writer's connection: registered functions, WAL, synchronous=FULL, migrated."""
    path = path or paths.brain_path()
    if not path.exists():
        if not create:
            raise NotInstalledError(f"no brain at {path}")
        _create_file(path)
    with translate_errors():
        conn = apsw.Connection(str(path))
        _configure(conn)
        _refuse_newer(conn)
        register_functions(conn)
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchall()[0][0]
        if str(mode).lower() != "wal":
            raise StoreError("could not switch the brain to WAL mode")
        _apply_migrations(conn)
    return conn


def open_reader(path: Path | None = None) -> apsw.Connection:
    """A read-side connection: the authorizer denies every write, DROP and ALTER."""
    path = path or paths.brain_path()
    if not path.exists():
        raise NotInstalledError(f"no brain at {path}")
    with translate_errors():
        conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READWRITE)
        _configure(conn)
        _refuse_newer(conn)
        if schema_version(conn) == 0:
            raise NotInstalledError(f"the brain at {path} was never set up")
        register_functions(conn)  # verification re-computes hashes in SQL; writes stay denied
        conn.set_authorizer(_reader_authorizer)
    return conn


@contextlib.contextmanager
def write_transaction(conn: apsw.Connection) -> Iterator[apsw.Connection]:
    """BEGIN IMMEDIATE ... COMMIT; waits within the busy timeout, then fails with BusyError."""
    with translate_errors():
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")


def rows(conn: apsw.Connection, sql: str, params: Any = ()) -> list[dict[str, Any]]:
    """Run a query and return each row as a dict keyed by column name."""
    with translate_errors():
        cursor = conn.execute(sql, params)
        try:
            names = [d[0] for d in cursor.getdescription()]
        except apsw.ExecutionCompleteError:
            return []
        return [dict(zip(names, r, strict=True)) for r in cursor]


def one(conn: apsw.Connection, sql: str, params: Any = ()) -> dict[str, Any] | None:
    found = rows(conn, sql, params)
    return found[0] if found else None


_UUID_PREFIX = re.compile(r"[0-9a-f-]{4,36}")


def resolve_uuid_prefix(
    conn: apsw.Connection,
    ref: str,
    *,
    table: str,
    column: str,
    what: str,
    not_found: type[Exception],
    extra_where: str = "",
    extra_params: tuple[Any, ...] = (),
) -> str:
    """A full UUID from a full one or a unique prefix of at least 4 characters (case-insensitive).

    ``not_found`` (an AimosError subclass) is raised for a malformed or unknown id; an ambiguous
    prefix is a usage error."""
    from aimos.errors import UsageError

    ref = (ref or "").strip().lower()
    if not _UUID_PREFIX.fullmatch(ref):
        raise not_found(f"that is not a {what} id")
    found = rows(
        conn,
        f"SELECT {column} AS id FROM {table} WHERE {column} >= ? AND {column} < ?{extra_where} LIMIT 2",
        (ref, ref + "\U0010ffff", *extra_params),
    )
    if not found:
        raise not_found(f"no {what} with id {ref}")
    if len(found) > 1:
        raise UsageError(f"{what} id prefix {ref} is ambiguous", "Give more characters of the id.")
    return str(found[0]["id"])
