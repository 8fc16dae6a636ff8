"""The schema in force, as the packaged migrations make it, and the check that a brain has exactly it.

Guard triggers dropped (and left dropped), an altered trigger or table, an extra table or trigger,
or a schema version that disagrees with the migrations recorded in the brain: each is named.

``schema.sql`` beside this file is that schema written out as one file (every table, index and
trigger in force after the last migration, grouped by table), so a reader finds every rule in one
place. It is generated, never edited: ``python -m aimos.store.schema --write`` regenerates it, and
tests/unit/store/test_schema_file.py fails while it differs from what the migrations make.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path
from typing import Any

import apsw

from aimos.store.connection import (
    migration_pragmas,
    migrations,
    register_functions,
    run_migration,
    schema_version,
)

SchemaObject = tuple[str, str, str | None]  # (type, table, sql)


def migrated_in_memory() -> apsw.Connection:
    """An empty in-memory database with every packaged migration applied (with aimos's SQL
    functions, which a migration refilling an index calls): the schema the code defines. The
    caller closes it."""
    conn = apsw.Connection(":memory:")
    register_functions(conn)
    for _version, _name, sql in migrations():
        with migration_pragmas(conn, sql):
            run_migration(conn, sql)
    return conn


@functools.cache
def expected_objects() -> dict[str, SchemaObject]:
    """Every schema object (table, index, trigger, view) the migrations create, by name."""
    conn = migrated_in_memory()
    try:
        return _objects(conn)
    finally:
        conn.close()


SCHEMA_FILE = Path(__file__).with_name("schema.sql")
REGENERATE = "python -m aimos.store.schema --write"
_KIND_ORDER = {"table": 0, "index": 1, "trigger": 2, "view": 3}


def schema_sql() -> str:
    """The text of ``schema.sql``: every object the migrations create, as SQLite stores its SQL, one
    statement per object ending with ``;``. Grouped by table (the tables in name order; each table,
    then its indexes, then its triggers, by name). Left out: SQLite's own automatic indexes (the
    table's UNIQUE and PRIMARY KEY make them) and the shadow tables a virtual table creates for
    itself; applying the file to an empty database makes exactly the migrated schema."""
    conn = migrated_in_memory()
    try:
        listed = conn.execute("PRAGMA main.table_list").fetchall()
        shadow = {str(name) for _schema, name, kind, *_rest in listed if kind == "shadow"}
        found = [
            (str(table), _KIND_ORDER[str(kind)], str(name), str(sql))
            for kind, name, table, sql in conn.execute(
                "SELECT type, name, tbl_name, sql FROM main.sqlite_master"
            )
            if sql is not None and name not in shadow
        ]
        names = [f"{version:04d}_{name}.sql" for version, name, _sql in migrations()]
    finally:
        conn.close()
    header = [
        "-- GENERATED FILE: do not edit. The aimos brain schema after every migration, in one file.",
        f"-- Made from aimos/store/migrations/{names[0]} .. {names[-1]} ({len(names)} migrations) applied in",
        "-- order to an empty database, then read back from sqlite_master (each statement as SQLite stores",
        "-- it). Applying this file to an empty database makes the same schema (user_version aside).",
        f"-- Regenerate: {REGENERATE}",
        "-- Order: tables by name; each table, then its indexes, then its triggers, by name. Not listed:",
        "-- SQLite's automatic indexes (from UNIQUE / PRIMARY KEY) and FTS5 shadow tables (made by their",
        "-- virtual table).",
    ]
    body = [f"{sql};" for _table, _kind, _name, sql in sorted(found)]
    return "\n".join(header) + "\n\n" + "\n\n".join(body) + "\n"


def schema_file_drift() -> str | None:
    """None when ``schema.sql`` is what the migrations make; otherwise what to do about it."""
    have = SCHEMA_FILE.read_text("utf-8") if SCHEMA_FILE.exists() else None
    if have == schema_sql():
        return None
    state = "is missing" if have is None else "differs from what the migrations make"
    return f"{SCHEMA_FILE} {state}: regenerate it with `{REGENERATE}`"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m aimos.store.schema", description="Write or check aimos/store/schema.sql."
    )
    parser.add_argument("--write", action="store_true", help="regenerate schema.sql from the migrations")
    parser.add_argument("--check", action="store_true", help="exit 1 when schema.sql is out of date")
    args = parser.parse_args(argv)
    if args.write:
        SCHEMA_FILE.write_text(schema_sql(), "utf-8")
        print(f"wrote {SCHEMA_FILE}")
        return 0
    if args.check:
        drift = schema_file_drift()
        print(drift or f"{SCHEMA_FILE} is up to date")
        return 1 if drift else 0
    sys.stdout.write(schema_sql())
    return 0


def _objects(conn: apsw.Connection) -> dict[str, SchemaObject]:
    return {
        str(name): (str(kind), str(table), None if sql is None else str(sql))
        for kind, name, table, sql in conn.execute("SELECT type, name, tbl_name, sql FROM main.sqlite_master")
    }


def _failure(reason: str, detail: str) -> dict[str, Any]:
    return {"check": "schema", "reason": reason, "detail": detail, "table": None}


def schema_failures(conn: apsw.Connection) -> list[dict[str, Any]]:
    """What differs between the brain's schema and the one the migrations make."""
    failures = []
    want, have = expected_objects(), _objects(conn)
    for name in sorted(want.keys() - have.keys()):
        failures.append(
            _failure("schema_object_missing", f"{want[name][0]} {name} is missing (dropped outside aimos)")
        )
    for name in sorted(have.keys() - want.keys()):
        failures.append(_failure("schema_object_unexpected", f"{have[name][0]} {name} is not aimos's"))
    for name in sorted(want.keys() & have.keys()):
        if want[name] != have[name]:
            failures.append(
                _failure("schema_object_altered", f"{want[name][0]} {name} differs from its definition")
            )
    packaged = [(v, n) for v, n, _ in migrations()]
    try:
        recorded = [
            (int(str(v)), bytes(n).decode("utf-8"))
            for v, n in conn.execute(
                "SELECT version, CAST(name AS BLOB) FROM schema_migrations ORDER BY rowid"
            )
        ]
    except (ValueError, TypeError, UnicodeDecodeError):
        recorded = []
    if recorded != packaged or schema_version(conn) != len(packaged):
        failures.append(
            _failure(
                "schema_version_mismatch",
                f"the brain says schema version {schema_version(conn)} with migrations "
                f"{[v for v, _ in recorded]}; this aimos has {len(packaged)}",
            )
        )
    return failures


if __name__ == "__main__":
    raise SystemExit(main())
