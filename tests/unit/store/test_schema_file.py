"""aimos/store/schema.sql is the schema the migrations make, written out as one file: it never
drifts from them, and applying it to an empty database makes exactly the migrated schema."""

from __future__ import annotations

import apsw

from aimos.store.schema import (
    REGENERATE,
    SCHEMA_FILE,
    _objects,
    expected_objects,
    schema_file_drift,
    schema_sql,
)


def test_schema_file_is_what_the_migrations_make() -> None:
    drift = schema_file_drift()
    assert drift is None, drift


def test_a_stale_schema_file_names_the_regenerate_command(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import aimos.store.schema as schema

    monkeypatch.setattr(schema, "schema_sql", lambda: SCHEMA_FILE.read_text("utf-8") + "-- a new rule\n")
    drift = schema.schema_file_drift()
    assert drift is not None and REGENERATE in drift


def test_schema_file_applied_to_an_empty_database_makes_the_migrated_schema() -> None:
    conn = apsw.Connection(":memory:")
    try:
        conn.execute(SCHEMA_FILE.read_text("utf-8"))
        assert _objects(conn) == expected_objects()
    finally:
        conn.close()


def test_schema_file_holds_each_rule_once_as_it_stands_now() -> None:
    text = schema_sql()
    assert text.startswith("-- GENERATED FILE") and REGENERATE in text.split("\n\n", 1)[0]
    # memories_no_update is defined three times across the migrations; the file has the last one
    assert text.count("CREATE TRIGGER memories_no_update") == 1
    assert "the live label may only follow a signed classification" in text
    assert schema_sql() == text  # deterministic
