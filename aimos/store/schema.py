"""The schema in force, as the packaged migrations make it, and the check that a brain has exactly it.

Guard triggers dropped (and left dropped), an altered trigger or table, an extra table or trigger,
or a schema version that disagrees with the migrations recorded in the brain: each is named.
"""

from __future__ import annotations

import functools
from typing import Any

import apsw

from aimos.store.connection import migrations, schema_version

SchemaObject = tuple[str, str, str | None]  # (type, table, sql)


def migrated_in_memory() -> apsw.Connection:
    """An empty in-memory database with every packaged migration applied (creating a trigger
    needs none of its functions): the schema the code defines. The caller closes it."""
    conn = apsw.Connection(":memory:")
    for _version, _name, sql in migrations():
        conn.execute(sql)
    return conn


@functools.cache
def expected_objects() -> dict[str, SchemaObject]:
    """Every schema object (table, index, trigger, view) the migrations create, by name."""
    conn = migrated_in_memory()
    try:
        return _objects(conn)
    finally:
        conn.close()


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
