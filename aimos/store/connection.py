"""apsw connections to a brain: pragmas, migrations, the read-side authorizer, error mapping."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import time
import weakref
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar, overload

import apsw

from aimos import paths
from aimos.errors import (
    AimosError,
    BusyError,
    DamagedBrainError,
    IntegrityError,
    NotFoundError,
    NotInstalledError,
    SchemaTooNewError,
    StoreError,
    UsageError,
)
from aimos.store.functions import SQL_FUNCTIONS

# The one name of a brain connection outside the store: the rest of aimos annotates with it and
# never imports apsw (tests/architecture holds it).
Connection = apsw.Connection

# The engine's own error class, for the few readers that report on a damaged brain and go on
# whatever the engine raised (doctor, parity, restore): they name it through the store. Everything
# else meets the engine's errors as aimos errors, translated once (translate_errors).
EngineError = apsw.Error

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


@functools.cache
def _migration_files() -> tuple[tuple[int, str, Any], ...]:
    """(version, name, file) of every packaged migration, in order, numbered from 1 with no gap;
    listed once per process, each file read only when asked for (a brain of this code's schema
    reads none of them)."""
    import aimos.store.migrations as package

    folder: Any = Path(package.__file__).parent
    if not folder.is_dir():  # a package inside an archive
        from importlib import resources

        folder = resources.files(package)
    found = []
    for entry in folder.iterdir():
        match = _MIGRATION_NAME.fullmatch(entry.name)
        if match:
            found.append((int(match.group(1)), match.group(2), entry))
    found.sort(key=lambda item: item[0])
    if [v for v, _, _ in found] != list(range(1, len(found) + 1)):
        raise StoreError("packaged migrations are not numbered 1..N without gaps")
    return tuple(found)


def migrations() -> list[tuple[int, str, str]]:
    """(version, name, sql) of every packaged migration, in order; numbered from 1 with no gap."""
    return [(version, name, entry.read_text("utf-8")) for version, name, entry in _migration_files()]


def code_schema_version() -> int:
    return len(_migration_files())


def busy_timeout_ms() -> int:
    try:
        return int(os.environ.get("AIMOS_BUSY_TIMEOUT_MS", DEFAULT_BUSY_TIMEOUT_MS))
    except ValueError:
        return DEFAULT_BUSY_TIMEOUT_MS


TEXT_NOT_UTF8 = "text_not_utf8"
JSON_NOT_VALID = "record_not_json"


def damaged_text(conn: apsw.Connection, limit: int = 3) -> list[str]:
    """Where the brain holds TEXT that is not valid UTF-8 (which aimos never writes and no read
    can decode): up to ``limit`` cells as ``table.column (memory ID)`` or ``(row N)``. Every cell
    is read as a BLOB, so the search itself cannot fail on what it looks for."""
    found: list[str] = []
    tables = [
        str(r[0])
        for r in conn.execute(
            "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table'"
            " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
        )
    ]
    for table in tables:
        info = conn.execute("SELECT name, pk FROM pragma_table_info(?)", (table,)).fetchall()
        columns = [str(name) for name, _ in info]
        keys = [str(name) for name, pk in info if pk]
        # name the row by its memory, else its one-column primary key, else its rowid
        key = "memory_id" if "memory_id" in columns else keys[0] if len(keys) == 1 else None
        quoted = [f'"{c}"' for c in columns]
        ident = f'CAST("{key}" AS BLOB)' if key else "NULL"
        checks = [f"(typeof({q}) = 'text' AND NOT aimos_is_utf8(CAST({q} AS BLOB)))" for q in quoted]
        try:
            bad = conn.execute(
                f'SELECT rowid, {ident}, {", ".join(checks)} FROM "{table}" WHERE {" OR ".join(checks)}'
                f" LIMIT {limit}"
            ).fetchall()
        except apsw.Error:  # a table without rowid: none of aimos's own
            continue
        for rowid, ident_value, *flags in bad:
            whose = f"row {rowid}"
            if isinstance(ident_value, bytes):
                with contextlib.suppress(UnicodeDecodeError):
                    label = "memory" if key == "memory_id" else str(key)
                    whose = f"{label} {ident_value.decode('utf-8')}"
            found += [f"{table}.{c} ({whose})" for c, flag in zip(columns, flags, strict=True) if flag]
            if len(found) >= limit:
                return found[:limit]
    return found


def damaged_text_error(conn: apsw.Connection | None) -> DamagedBrainError:
    """The error for a read that met text that is not valid UTF-8, naming the damaged cells when
    the connection is at hand (``exc.where``), else pointing to `aimos verify`."""
    where: list[str] = []
    if conn is not None:
        with contextlib.suppress(apsw.Error, UnicodeDecodeError):
            where = damaged_text(conn)
    if where:
        message = (
            f"the brain holds text that is not valid UTF-8 in {', '.join(where)}: it was changed "
            "outside aimos or is damaged, and is not shown or trusted"
        )
    else:
        message = (
            "the brain holds text that is not valid UTF-8: a record was changed outside aimos or is "
            "damaged, and is not shown or trusted (`aimos verify` names it)"
        )
    return DamagedBrainError(message, restore_hint(), reason=TEXT_NOT_UTF8, where=tuple(where))


def restore_hint() -> str:
    return (
        "Nothing was changed. Restore the brain from a backup with `aimos restore BACKUP` "
        f"(`aimos restore --list`; the housekeeper keeps them in {paths.data_dir() / 'backups'})."
    )


def unreadable_text(exc: BaseException | None) -> bool:
    """True for a read that met text it could not decode (not UTF-8, or JSON that SQLite's JSON
    functions refuse) and does not yet say where it is."""
    if isinstance(exc, DamagedBrainError):
        return exc.reason in (TEXT_NOT_UTF8, JSON_NOT_VALID) and not exc.where
    return isinstance(exc, UnicodeDecodeError)


def cannot_open_error(path: Path | None = None) -> StoreError:
    """The brain file could not be opened at all: not damage but its path or permissions, named
    (when ``path``, the file opened, is known) with what to do."""
    if path is None:
        return StoreError("cannot open the brain file", "Check that AIMOS_HOME points to a writable folder.")
    if path.is_dir():
        return StoreError(
            f"cannot open the brain file: {path} is a folder, not a file",
            "Move that folder out of the way, or set AIMOS_HOME to the home that holds the brain.",
        )
    if not path.exists():
        return StoreError(
            f"cannot open the brain file: {path} is not there (a link to nothing, or removed)",
            "Check that AIMOS_HOME points to the home that holds the brain, or put the brain file back.",
        )
    if not os.access(path, os.R_OK | os.W_OK):
        return StoreError(
            f"cannot open the brain file: no permission to read and write {path}",
            "Make it readable and writable by your user (its owner, mode 0600), or choose another"
            " AIMOS_HOME.",
        )
    if not os.access(path.parent, os.W_OK | os.X_OK):
        return StoreError(
            f"cannot open the brain file: no permission to write in its folder {path.parent} "
            "(the brain's -wal and -shm files live beside it)",
            "Make the folder writable by your user (its owner, mode 0700), or choose another AIMOS_HOME.",
        )
    return StoreError(
        f"cannot open the brain file {path}", "Check that AIMOS_HOME points to a writable folder."
    )


def engine_error_name(exc: BaseException) -> str:
    """The name of what was raised, for a report of an error nobody foresaw: an engine error the
    store translated (translate_errors) is named as the engine named it."""
    raised = exc.__cause__ if isinstance(exc, AimosError) and exc.__cause__ is not None else exc
    return type(raised).__name__


@contextlib.contextmanager
def translate_errors(conn: apsw.Connection | None = None, *, path: Path | None = None) -> Iterator[None]:
    """Turn apsw errors into aimos errors with hints; no raw database error reaches a user (the
    CLI, the TUI and the MCP server all say these words).

    Text that is not valid UTF-8 (which apsw cannot decode) is damage, not a bug: exit 5, naming
    the damaged cells when ``conn`` is given. ``path``: the brain file being opened, named when it
    cannot be opened at all (a folder in its place, no permission)."""
    try:
        yield
    except UnicodeDecodeError as exc:
        raise damaged_text_error(conn) from exc
    except apsw.SQLError as exc:
        # SQL's JSON functions over a record aimos wrote as canonical JSON: only an edit made
        # outside aimos (or damage) makes one malformed; most often it is text that is not UTF-8
        if "malformed JSON" not in str(exc):
            raise
        located = damaged_text_error(conn)
        if located.where:
            raise located from exc
        raise DamagedBrainError(
            "the brain holds a record that is not valid JSON where aimos keeps signed JSON: it was "
            "changed outside aimos or is damaged, and is not shown or trusted",
            restore_hint(),
            reason=JSON_NOT_VALID,
        ) from exc
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
    except apsw.NotADBError as exc:
        raise StoreError(
            "the brain file is not a readable SQLite database",
            "Restore it from a backup in the brain's backups folder, or check AIMOS_HOME.",
        ) from exc
    except apsw.CorruptError as exc:  # a database, damaged: most often a search index alone
        raise StoreError(
            "the brain file, or one of its search indexes, is damaged",
            "If only searches by words fail, `aimos index rebuild` rebuilds the search indexes (they"
            " hold nothing else). Otherwise run `aimos verify` and restore from a backup in the"
            " brain's backups folder.",
        ) from exc
    except apsw.CantOpenError as exc:
        raise cannot_open_error(path) from exc


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


def _refuse_newer(conn: apsw.Connection, *, verifying: bool = False) -> None:
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
    mismatch = version < 0 or recorded != (version > 0) or applied != list(range(1, version + 1))
    # a verifier may look at a brain whose schema is this code's (nothing would be migrated) but
    # whose migration records were edited: the verifier's own checks name those rows
    if mismatch and not (verifying and version == code_schema_version()):
        if applied and applied == list(range(1, len(applied) + 1)):
            shown = f"1..{len(applied)}"
        else:
            shown = ", ".join(str(v) for v in applied[:8]) + (", ..." if len(applied) > 8 else "")
        raise DamagedBrainError(
            f"the brain's schema version (PRAGMA user_version = {version}) disagrees with the "
            f"migrations it records as applied ({shown or 'none'}): the file was changed outside "
            "aimos, so it is neither read nor migrated",
            restore_hint(),
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


# The first line of a migration that rebuilds a table (SQLite changes a table's constraints only
# by making it again): it runs with foreign keys off and the legacy rename (which leaves the other
# tables' triggers naming the table alone), and every foreign key is checked before it commits.
REBUILDS_TABLE = "-- aimos-migration: rebuilds-table"


@contextlib.contextmanager
def migration_pragmas(conn: apsw.Connection, sql: str) -> Iterator[None]:
    """The settings a migration runs under (outside its transaction: SQLite ignores them inside)."""
    rebuild = sql.startswith(REBUILDS_TABLE)
    if rebuild:
        keys_on = conn.execute("PRAGMA foreign_keys").fetchall()[0][0]
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("PRAGMA legacy_alter_table = ON")
    try:
        yield
    finally:
        if rebuild:
            conn.execute("PRAGMA legacy_alter_table = OFF")
            conn.execute(f"PRAGMA foreign_keys = {'ON' if keys_on else 'OFF'}")


def run_migration(conn: apsw.Connection, sql: str) -> None:
    """One migration's SQL, inside the caller's transaction (and migration_pragmas)."""
    conn.execute(sql)
    if sql.startswith(REBUILDS_TABLE):
        broken = conn.execute("PRAGMA foreign_key_check").fetchall()
        if broken:
            raise StoreError(
                f"a migration that rebuilds a table left {len(broken)} foreign keys unmatched "
                f"(the first in {broken[0][0]}): nothing was changed",
                "Report it: the brain is as it was.",
            )


def _apply_migrations(conn: apsw.Connection) -> None:
    current = schema_version(conn)
    for version, name, entry in _migration_files():
        if version <= current:
            continue
        sql = entry.read_text("utf-8")
        with migration_pragmas(conn, sql), conn:  # one transaction per migration
            run_migration(conn, sql)
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (version, name, int(time.time())),
            )
            conn.execute(f"PRAGMA user_version = {version}")


def _create_file(path: Path) -> None:
    paths.ensure_private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)


def open_writer(
    path: Path | None = None, *, create: bool = False, verifying: bool = False
) -> apsw.Connection:
    """The writer's connection: registered functions, WAL, synchronous=FULL, migrated."""
    path = path or paths.brain_path()
    if not path.exists():
        if not create:
            raise NotInstalledError(f"no brain at {path}")
        _create_file(path)
    with translate_errors(path=path):
        conn = apsw.Connection(str(path))
        _configure(conn)
        _refuse_newer(conn, verifying=verifying)
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
    with translate_errors(path=path):
        conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READWRITE)
        _configure(conn)
        _refuse_newer(conn)
        if schema_version(conn) == 0:
            raise NotInstalledError(f"the brain at {path} was never set up")
        register_functions(conn)  # verification re-computes hashes in SQL; writes stay denied
        conn.set_authorizer(_reader_authorizer)
    return conn


_SEALERS: weakref.WeakKeyDictionary[apsw.Connection, Any] = weakref.WeakKeyDictionary()


def seal_with(conn: apsw.Connection, source: Any) -> None:
    """Who seals this connection's writes when a write names no one: the housekeeper, as a
    ``Signer`` or a function returning one (loaded only when a write has rows to seal)."""
    _SEALERS[conn] = source


def sealer(conn: apsw.Connection) -> Any:
    """The Signer that seals this connection's writes (seal_with), loaded now; None when none
    was named."""
    source = _SEALERS.get(conn)
    return source() if callable(source) else source


@contextlib.contextmanager
def write_transaction(
    conn: apsw.Connection, seal: Any = None, *, check_anchor: bool = True
) -> Iterator[apsw.Connection]:
    """BEGIN IMMEDIATE ... seal ... COMMIT; waits within the busy timeout, then fails with BusyError.

    The transaction begins by checking the brain's seal chain (no row outside it) and ends with
    one housekeeper-signed seal over the rows it added (``seal``: a Signer or a function returning
    one; default: the connection's ``seal_with``); the newest seal is then anchored outside the
    brain (store/seals.py)."""
    from aimos.store import freshness, seals

    with translate_errors():
        conn.execute("BEGIN IMMEDIATE")
        try:
            with seals.costed("begin"):
                ctx = seals.begin(conn, check_anchor=check_anchor)
                if ctx.check_freshness and ctx.head is not None:
                    freshness.refuse_stale(conn, ctx.head)
            yield conn
            with seals.costed("seal"):
                seals.seal(conn, ctx, seal if seal is not None else _SEALERS.get(conn))
        except BaseException:
            seals.end(conn)
            conn.execute("ROLLBACK")
            raise
        seals.end(conn)
        conn.execute("COMMIT")
        seals.settled(conn)
    with seals.costed("anchor"):
        freshness.after_commit(conn, ctx)


def copy_brain(source: apsw.Connection, target: Path) -> None:
    """A consistent single-file copy of ``source`` (the backup API: one step over a WAL snapshot)
    in a new 0600 file ``target`` (journal mode DELETE, so it needs no WAL beside it). ``target``
    must not exist; it is removed again if the copy fails."""
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)
    try:
        destination = apsw.Connection(str(target))
        try:
            with destination.backup("main", source, "main") as backup:
                backup.step(-1)
            destination.execute("PRAGMA journal_mode = DELETE")
        finally:
            destination.close()
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    os.chmod(target, 0o600)


# A row's shape, a TypedDict of the query module's, when a caller names one (``row=``): only the
# checker reads it. Each row stays the plain dict the cursor gave, unchecked (nothing per row).
Row = TypeVar("Row", bound=Mapping[str, object])


@overload
def rows(conn: apsw.Connection, sql: str, params: Any = (), *, row: None = None) -> list[dict[str, Any]]: ...
@overload
def rows(conn: apsw.Connection, sql: str, params: Any = (), *, row: type[Row]) -> list[Row]: ...
def rows(conn: apsw.Connection, sql: str, params: Any = (), *, row: type[Any] | None = None) -> list[Any]:
    """Run a query and return each row as a dict keyed by column name (typed as ``row`` when
    given: the query's columns are the caller's word for it)."""
    with translate_errors(conn):
        cursor = conn.execute(sql, params)
        try:
            names = [d[0] for d in cursor.getdescription()]
        except apsw.ExecutionCompleteError:
            return []
        return [dict(zip(names, r, strict=True)) for r in cursor]


@overload
def batches(
    conn: apsw.Connection, sql: str, params: Any = (), size: int = 500, *, row: None = None
) -> Iterator[list[dict[str, Any]]]: ...
@overload
def batches(
    conn: apsw.Connection, sql: str, params: Any = (), size: int = 500, *, row: type[Row]
) -> Iterator[list[Row]]: ...
def batches(
    conn: apsw.Connection, sql: str, params: Any = (), size: int = 500, *, row: type[Any] | None = None
) -> Iterator[list[Any]]:
    """``rows`` a batch of ``size`` at a time, read as they are needed: a walk over a whole table
    holds one batch, not the table."""
    with translate_errors(conn):
        cursor = conn.execute(sql, params)
        try:
            names = [d[0] for d in cursor.getdescription()]
        except apsw.ExecutionCompleteError:
            return
        batch: list[dict[str, Any]] = []
        for r in cursor:
            batch.append(dict(zip(names, r, strict=True)))
            if len(batch) == size:
                yield batch
                batch = []
        if batch:
            yield batch


def insert_sql(table: str, row: type) -> str:
    """The INSERT of one row of ``table`` by name (``:column``), the columns a row TypedDict's:
    built once, as a module constant, so the connection's statement cache serves each insert."""
    columns = tuple(row.__annotations__)
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(':' + c for c in columns)})"


def insert(conn: apsw.Connection, table: str, row: dict[str, Any]) -> None:
    """INSERT one row given as column -> value (the table and column names are the code's own)."""
    columns = ", ".join(row)
    conn.execute(f"INSERT INTO {table} ({columns}) VALUES ({', '.join('?' * len(row))})", tuple(row.values()))


@overload
def one(conn: apsw.Connection, sql: str, params: Any = (), *, row: None = None) -> dict[str, Any] | None: ...
@overload
def one(conn: apsw.Connection, sql: str, params: Any = (), *, row: type[Row]) -> Row | None: ...
def one(conn: apsw.Connection, sql: str, params: Any = (), *, row: type[Any] | None = None) -> Any:
    """The first row ``rows`` reads (typed as ``row`` when given), or None."""
    found = rows(conn, sql, params)
    return found[0] if found else None


_UUID_PREFIX = re.compile(r"[0-9a-f-]{1,36}")
ID_PREFIX_MIN = 4  # the shortest prefix that names an id


def a_or_an(word: str) -> str:
    """``word`` with its indefinite article: "a memory", "an outcome"."""
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def resolve_uuid_prefix(
    conn: apsw.Connection,
    ref: str,
    *,
    table: str,
    column: str,
    what: str,
    not_found: type[NotFoundError],
    extra_where: str = "",
    extra_params: tuple[Any, ...] = (),
) -> str:
    """A full UUID from a full one or a unique prefix of at least ID_PREFIX_MIN characters
    (case-insensitive); the one resolver of memory, receipt and outcome ids.

    ``not_found`` is raised for a malformed or unknown id; a prefix too short or ambiguous is a
    usage error. No message names an id the caller did not give."""
    ref = (ref or "").strip().lower()
    if not _UUID_PREFIX.fullmatch(ref):
        raise not_found(f"that is not {a_or_an(what)} id")
    if len(ref) < ID_PREFIX_MIN:
        raise UsageError(
            f"{what} id prefix {ref} is too short",
            f"Give at least {ID_PREFIX_MIN} characters of the {what} id. {not_found.default_hint}",
        )
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
