"""Verification covers every stored byte: every edit of every cell and every deletion of every row of a used
brain, made outside aimos with the guards dropped and re-created, is detected by `aimos verify`
with a named reason; the untouched copy passes; when the in-database verifier fails, the whole
verdict fails (which cases only one verifier noticed is recorded in the report, not asserted).

One test per (table, column) loops over the table's rows (an edit of the cell, and NULL where the
column allows it); one test per table for deleting each row, and one per FTS5 index for editing
and deleting its rows, and one per table for moving each row to the
end of the write order (its rowid, which the seals hash with the row).

An edit the table's own constraints refuse for every plausible value (a UNIQUE partial index, a
CHECK, a STRICT type) cannot be made by an attacker who leaves the schema as it was: such a case
counts as detected ("blocked by the schema") and is listed in the report; so does an edit of the
memories' vectors (derived, unsealed) that leaves a state aimos itself makes and remakes, checked
on the attacked copy by `tamper.remade_state` (the newest vector deleted, the generation count
changed). The used brain's vectors are those its recalls made; verify checks their form here (the
recompute by the model is tests/attacks/test_vector_attacks.py's, through the CLI). All the
cases run once, in a pool of workers, when the first test needs them (`tamper_run`); the report
(what was not detected, grouped by table) is printed at the end of the run.

The tables and columns are the code's (its migrations run on an empty in-memory database), and
`test_the_used_brain_has_the_code_schema_and_rows_in_every_table` checks that the used brain has
exactly that schema and at least one row in every table, so no column goes untested.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
import support.tamper as tamper
from support.tamper import (
    CONTROL,
    DELETE,
    EDIT,
    FTS_DELETE,
    FTS_EDIT,
    MOVE,
    UNTOUCHED,
    Outcome,
    code_schema,
    plan,
    read_schema,
    report,
    run_cases,
)
from support.used_brain import UsedBrain

pytestmark = pytest.mark.timeout(900)  # on one xdist worker (tests/conftest.py XDIST_GROUPS)

SCHEMA = code_schema()
TABLES = list(SCHEMA.tables)
ROWID_IS_A_COLUMN = {t for t, cols in SCHEMA.tables.items() if [c.type for c in cols if c.pk] == ["INTEGER"]}
# The one column nothing binds (COVERAGE.md: cache, checked by nothing, and
# tests/architecture/test_coverage_map.py holds it the only one): when a migration was applied.
# The migration log is bound by the schema check rather than the seals, since the migrations write
# it before any writer holds the housekeeper's key; an edit of this time changes nothing aimos or a
# verifier decides on. Its version and name columns stay in the test.
UNBOUND = {("schema_migrations", "applied_at")}
EDIT_GROUPS = [(EDIT, t, c) for t, c in SCHEMA.column_pairs() if (t, c) not in UNBOUND]
DELETE_GROUPS = [(DELETE, t) for t in TABLES]
# Moving a row in write order (its rowid): the seals hash each row's rowid, so this is detected too.
# seal_heads is left out: a cache keyed by table name, whose row order carries nothing (its
# contents are checked against the newest seal's signed state root, and its edits are tested above).
# memory_redactions too: its records are bound by the master's signatures and the rows each one
# names, not by the seals (a backup and a restored brain take the same record), so their order
# carries nothing; every edit and deletion of a record is tested above.
UNORDERED = {"seal_heads", "memory_redactions"}
MOVE_GROUPS = [(MOVE, t) for t in TABLES if t not in ROWID_IS_A_COLUMN and t not in UNORDERED]
CONTROL_GROUPS = [(CONTROL, t) for t in TABLES]
FTS_GROUPS = [(kind, t) for t in SCHEMA.fts for kind in (FTS_EDIT, FTS_DELETE)]


def ids(group: tuple[str, ...]) -> str:
    return ".".join(group[1:]) if group[0] == EDIT else group[1]


@pytest.fixture(scope="session")
def tamper_run(
    request: pytest.FixtureRequest, used_brain: UsedBrain, tmp_path_factory: pytest.TempPathFactory
) -> dict[tuple[str, ...], list[Outcome]]:
    """Every case the selected tests need, run once: outcomes by test group."""
    wanted = {(UNTOUCHED, "")}
    for item in request.session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if isinstance(params.get("group"), tuple):  # not the NOTSET of an empty parametrization
            wanted.add(tuple(params["group"]))
    cases = [c for c in plan(used_brain.db, read_schema_of(used_brain.db)) if c.group in wanted]
    jobs = tamper.default_jobs()
    mode = os.environ.get("AIMOS_TAMPER_ATTACKER", "recreate")
    started = time.perf_counter()
    outcomes = run_cases(used_brain.home, tmp_path_factory.mktemp("tamper-copies"), cases, jobs, mode)
    text = report(outcomes, time.perf_counter() - started, jobs, mode)
    target = Path(
        os.environ.get("AIMOS_TAMPER_REPORT") or tmp_path_factory.getbasetemp() / "tamper-report.txt"
    )
    target.write_text(text, "utf-8")
    tamper.REPORTS.append(text.split("\nEVERY CASE NOT DETECTED:")[0] + f"\n(full list in {target})\n")
    by_group: dict[tuple[str, ...], list[Outcome]] = {}
    for o in outcomes:
        by_group.setdefault(o.case.group, []).append(o)
    return by_group


def read_schema_of(db: Path) -> Any:
    import apsw

    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return read_schema(conn)
    finally:
        conn.close()


def assert_all_detected(outcomes: list[Outcome], what: str) -> None:
    assert outcomes, f"no case for {what}: the used brain has no row to tamper with"
    for o in outcomes:
        if o.in_database_ok is False:
            assert o.ok is False, f"the in-database verifier failed but the verdict is ok: {o.describe()}"
    missed = [o for o in outcomes if not o.detected]
    assert not missed, (
        f"{len(missed)} of {len(outcomes)} tamperings of {what} are not detected with a named reason:\n"
        + "\n".join(f"  {o.describe()}" for o in missed)
    )


def test_the_used_brain_has_the_code_schema_and_rows_in_every_table(used_brain: UsedBrain) -> None:
    import apsw

    live = read_schema_of(used_brain.db)
    assert live.tables == SCHEMA.tables and live.fts == SCHEMA.fts, "the brain's schema is not the code's"
    conn = apsw.Connection(str(used_brain.db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        empty = [
            t
            for t in (*TABLES, *SCHEMA.fts)
            if conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchall()[0][0] == 0
        ]
    finally:
        conn.close()
    assert not empty, f"the used brain has no rows in {empty}: their columns would go untested"


def test_the_untouched_copy_verifies(tamper_run: dict[tuple[str, ...], list[Outcome]]) -> None:
    (outcome,) = tamper_run[(UNTOUCHED, "")]
    assert outcome.error is None and outcome.ok, outcome.describe()
    assert outcome.in_database_ok and outcome.portable_verdict == "valid", outcome.describe()


@pytest.mark.parametrize("group", CONTROL_GROUPS, ids=ids)
def test_guards_dropped_and_recreated_without_an_edit_still_verify(
    group: tuple[str, ...], tamper_run: dict[tuple[str, ...], list[Outcome]]
) -> None:
    """The harness's control: re-creating the dropped triggers leaves nothing a verifier could
    (rightly) object to, so what the other tests detect is the edit, not the attacker's method."""
    (outcome,) = tamper_run[group]
    assert outcome.error is None and outcome.ok, outcome.describe()


@pytest.mark.parametrize("group", EDIT_GROUPS, ids=ids)
def test_every_edit_of_the_column_is_detected(
    group: tuple[str, ...], tamper_run: dict[tuple[str, ...], list[Outcome]]
) -> None:
    assert_all_detected(tamper_run.get(group, []), f"{group[1]}.{group[2]}")


@pytest.mark.parametrize("group", DELETE_GROUPS, ids=ids)
def test_every_deleted_row_is_detected(
    group: tuple[str, ...], tamper_run: dict[tuple[str, ...], list[Outcome]]
) -> None:
    assert_all_detected(tamper_run.get(group, []), f"deleting a row of {group[1]}")


@pytest.mark.parametrize("group", MOVE_GROUPS, ids=ids)
def test_every_row_moved_in_write_order_is_detected(
    group: tuple[str, ...], tamper_run: dict[tuple[str, ...], list[Outcome]]
) -> None:
    assert_all_detected(tamper_run.get(group, []), f"moving a row of {group[1]} (its rowid)")


@pytest.mark.parametrize("group", FTS_GROUPS, ids=lambda g: f"{g[0]}-{g[1]}")
def test_every_search_index_edit_is_detected(
    group: tuple[str, ...], tamper_run: dict[tuple[str, ...], list[Outcome]]
) -> None:
    assert_all_detected(tamper_run.get(group, []), f"{group[0]} of {group[1]}")
