"""COVERAGE.md names every column of every table a brain has, once, with how verify covers it.

The schema is read from a brain the migrations make (the live schema a fresh brain has); the map
must list each of its columns exactly once, in a row whose class is bound, derived or cache, and
nothing that is not there."""

from __future__ import annotations

import re
from pathlib import Path

from aimos.store.schema import migrated_in_memory
from aimos.store.seals import LIVE_PROJECTIONS, NOT_SEALED

MAP = Path(__file__).resolve().parents[2] / "COVERAGE.md"
CLASSES = {"bound", "derived", "cache"}


def live_columns() -> set[tuple[str, str]]:
    conn = migrated_in_memory()
    try:
        found = set()
        for schema, table, _kind, *_ in conn.execute("PRAGMA table_list"):
            if schema != "main" or table.startswith("sqlite_"):
                continue
            for _cid, column, *_ in conn.execute(f'PRAGMA table_info("{table}")'):
                found.add((table, column))
        return found
    finally:
        conn.close()


def map_rows() -> list[tuple[str, list[str], str, str, str]]:
    rows = []
    for line in MAP.read_text("utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or cells[0] in ("table", "") or set(cells[0]) <= {"-"}:
            continue
        table, columns, kind, bound_by, checked_by = cells
        rows.append((table, [c.strip() for c in columns.split(",")], kind, bound_by, checked_by))
    return rows


def test_every_column_is_in_the_map_once() -> None:
    listed: dict[tuple[str, str], int] = {}
    for table, columns, _kind, _by, _checked in map_rows():
        for column in columns:
            listed[(table, column)] = listed.get((table, column), 0) + 1
    live = live_columns()
    missing = sorted(live - listed.keys())
    gone = sorted(listed.keys() - live)
    twice = sorted(k for k, n in listed.items() if n > 1)
    assert not missing, f"columns with no row in COVERAGE.md: {missing}"
    assert not gone, f"COVERAGE.md lists columns the schema does not have: {gone}"
    assert not twice, f"columns listed more than once: {twice}"


def test_every_row_says_its_class_what_binds_it_and_what_checks_it() -> None:
    rows = map_rows()
    assert len(rows) > 20
    for table, _columns, kind, bound_by, checked_by in rows:
        assert kind in CLASSES, (table, kind)
        assert bound_by and checked_by, table
        if kind == "bound" and table not in NOT_SEALED:
            assert "brain seal" in bound_by, f"{table}: a bound row of an ordinary table is sealed"


def test_the_map_agrees_with_what_the_seals_leave_out() -> None:
    """The columns the row hash skips are exactly the ones the map calls derived in memories,
    and the seal chain's own tables are the ones it does not seal."""
    derived = {
        (t, c)
        for t, cols, kind, _b, _c in map_rows()
        if kind == "derived" and t in LIVE_PROJECTIONS
        for c in cols
    }
    assert derived == {(t, c) for t, cols in LIVE_PROJECTIONS.items() for c in cols}
    tables = {t for t, *_ in map_rows() if not re.search("fts", t)}
    sealed = {t for t, _cols, _k, by, _c in map_rows() if "brain seal" in by}
    assert tables - sealed == set(NOT_SEALED)


def test_the_only_column_nothing_binds_is_when_a_migration_was_applied() -> None:
    """A cache column that nothing checks is allowed once: schema_migrations.applied_at (the
    migration log is bound by the schema check, which has no use for the time). Another one is a
    hole in verification, not a cache."""
    unchecked = {
        (t, c)
        for t, cols, kind, _by, checked in map_rows()
        if kind == "cache" and checked == "-"
        for c in cols
    }
    assert unchecked == {("schema_migrations", "applied_at")}
