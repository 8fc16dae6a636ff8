"""Attack: change the brain's schema version by hand (``PRAGMA user_version = N`` in the sqlite3
shell), so that it disagrees with the migrations the brain records as applied.

Before: ``internal error (SQLError)`` (aimos re-ran migrations from the forged version), a
cryptic ``refused by the brain: schema_migrations.version``, or the brain read as if sound.
Now every command refuses on open, before anything is read or migrated: exit 5, reason
``schema_version_mismatch``, the fix (restore from a backup), and the file is left exactly as
it was. A brain that is consistently newer than the code keeps its own error."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.attacks import INTEGRITY, assert_refused_closed, run_sql, save
from support.cli import BRAIN, assert_unchanged, run_aimos, snapshot, sqlite_value

from aimos.store.connection import code_schema_version

pytestmark = pytest.mark.timeout(120)

CODE = code_schema_version()
COMMANDS = (
    ("list",),
    ("show", "{memory}"),
    ("save", "a note written after the edit"),
    ("recall", "heron"),
    ("status",),
    ("verify",),
)


@pytest.mark.parametrize(
    "forged", [CODE - 1, 1, 0, -1, CODE + 1, 99], ids=["lower", "one", "zero", "negative", "next", "far"]
)
def test_a_hand_set_schema_version_is_refused_and_changes_nothing(installed: Path, forged: int) -> None:
    memory = save("The heron colony nests by the east lake")
    run_sql(installed, f"PRAGMA user_version = {forged}")
    before = snapshot(installed)
    for command in COMMANDS:
        result = run_aimos(*(a.format(memory=memory) for a in command))
        assert_refused_closed(
            result,
            INTEGRITY,
            f"PRAGMA user_version = {forged}",
            f"records as applied (1..{CODE})",
            never=("east lake",),
        )
        assert "Restore the brain from a backup" in result.err, result.describe()
    assert_unchanged(installed, before)
    assert sqlite_value(installed / BRAIN, "PRAGMA user_version") == str(forged)
    assert sqlite_value(installed / BRAIN, "SELECT COUNT(*) FROM schema_migrations") == str(CODE)


def test_a_deleted_migration_record_is_refused(installed: Path) -> None:
    """The other side of the same disagreement: the version stands, a record of it is gone."""
    run_sql(
        installed,
        f"DROP TRIGGER schema_migrations_no_delete; DELETE FROM schema_migrations WHERE version = {CODE}",
    )
    before = snapshot(installed)
    assert_refused_closed(
        run_aimos("save", "x"), INTEGRITY, f"PRAGMA user_version = {CODE}", f"(1..{CODE - 1})"
    )
    assert_unchanged(installed, before)
    # verify may look (the schema is this code's: nothing would be migrated) and names it
    verify = run_aimos("verify")
    assert verify.code == 4, verify.describe()
    assert "schema_version_mismatch" in verify.out and "internal error" not in verify.both
    assert_unchanged(installed, before)


def test_a_consistently_newer_brain_keeps_its_own_error(installed: Path) -> None:
    """Written by a newer aimos (its migrations recorded): not damage, so exit 1 and 'upgrade'."""
    run_sql(
        installed,
        "DROP TRIGGER schema_migrations_writer_only; DROP TRIGGER IF EXISTS schema_migrations_seal_aware;"
        f" INSERT INTO schema_migrations (version, name, applied_at) VALUES ({CODE + 1}, 'future', 0);"
        f" PRAGMA user_version = {CODE + 1}",
    )
    before = snapshot(installed)
    for command in (("list",), ("save", "x"), ("status",)):
        result = run_aimos(*command)
        assert result.code == 1, result.describe()
        assert f"schema version {CODE + 1}, newer than this aimos understands ({CODE})" in result.err
        assert "upgrade aimos" in result.err and "internal error" not in result.err
    assert_unchanged(installed, before)


def test_the_intact_brain_opens(installed: Path) -> None:
    assert sqlite_value(installed / BRAIN, "PRAGMA user_version") == str(CODE)
    run_aimos("list").ok()
