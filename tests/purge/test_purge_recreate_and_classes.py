"""`aimos purge --live --recreate` leaves an empty, fully migrated brain an install can use; and
every table of the schema has an explicit purge class (so a future migration must map its own)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.cli import BRAIN, run_aimos
from support.purge import (
    FINGERPRINT_RE,
    MIGRATIONS,
    brain_id_of,
    purge_files,
    purge_live,
    read_only,
    row_counts,
    scalar,
    tables,
    verify_receipt,
)

pytestmark = pytest.mark.timeout(60)

# FTS5 keeps a structure record in these shadow tables even when the index is empty
FTS_STRUCTURE = re.compile(r"_fts_(data|config)$")


def migration_files() -> list[Path]:
    found = sorted(MIGRATIONS.glob("*.sql"))
    assert found, f"no migrations in {MIGRATIONS}"
    return found


def test_recreate_leaves_an_empty_migrated_brain_that_installs(installed: Path) -> None:
    home = installed
    old_id = brain_id_of(home)
    run_aimos("save", "--key", "purge-recreate:x", "Recreated brains start with nothing 6610").ok()
    assert row_counts(home / BRAIN)["memories"] == 1
    done = json.loads(purge_live("--recreate", "--json").ok().out)

    brain = home / BRAIN
    assert brain.exists(), "--recreate left no brain"
    migrations = len(migration_files())
    assert scalar(brain, "SELECT COUNT(*) FROM schema_migrations") == migrations
    assert scalar(brain, "PRAGMA user_version") == migrations
    counts = row_counts(brain)
    not_empty = {
        t: n for t, n in counts.items() if n and t != "schema_migrations" and not FTS_STRUCTURE.search(t)
    }
    assert not not_empty, f"tables not empty after --recreate: {not_empty}"
    with read_only(brain) as conn:
        for name, virtual in tables(brain):
            if virtual and not name.endswith("_vocab"):
                assert conn.execute(f'SELECT COUNT(*) FROM "{name}"').fetchall()[0][0] == 0, name
    assert counts["master_identity"] == 0 and counts["brain_meta"] == 0
    assert not (home / "state" / "keys" / old_id).exists()
    assert not (home / "config" / "anchors.json").exists()

    receipt = json.loads(Path(done["receipt"]).read_text())["body"]
    assert receipt["postcondition"] == {
        "mode": "reinitialized_empty",
        "database_present": True,
        "empty_verified": True,
        "migration_count": migrations,
    }
    assert receipt["migration_count"] == migrations
    intent = json.loads(Path(done["intent"]).read_text())["body"]
    assert intent["planned_postcondition"] == "reinitialized_empty"
    verify_receipt(done["receipt"], done["master_fingerprint"]).ok()

    # no master identity: `aimos install` installs over it, with a new master
    installed_again = run_aimos("install", "--yes", "--no-guides", "--keystore", "file").ok()
    fingerprint = FINGERPRINT_RE.search(installed_again.out)
    assert fingerprint and fingerprint.group(1) != done["master_fingerprint"], installed_again.describe()
    assert brain_id_of(home) != old_id
    assert row_counts(brain)["memories"] == 0
    run_aimos("verify").ok()
    # the old ceremony's receipt stays, and still verifies with the old master's fingerprint
    assert [p.name for p in purge_files(home)["receipt"]] == [Path(done["receipt"]).name]
    verify_receipt(done["receipt"], done["master_fingerprint"]).ok()


def check_mapped(names: set[str], where: str) -> None:
    from aimos.purge.inventory import CLASSES, TABLE_CLASSES

    unmapped = sorted(names - set(TABLE_CLASSES))
    assert not unmapped, f"{where}: tables with no explicit purge class: {unmapped}"
    wrong = {t: TABLE_CLASSES[t] for t in names if TABLE_CLASSES[t] not in CLASSES}
    assert not wrong, f"{where}: tables mapped to no known class: {wrong}"


def test_every_table_of_an_installed_brain_has_a_class(installed: Path) -> None:
    from aimos.purge.inventory import CLASSES, SENSITIVE_TABLES, TABLE_CLASSES

    assert CLASSES == (
        "memory_and_index",
        "cryptographic_proof",
        "credential_reference",
        "identity_and_execution",
        "operational_projection",
    )
    names = {name for name, _ in tables(installed / BRAIN)}
    assert len(names) > 20
    check_mapped(names, "installed brain")
    stale = sorted(set(TABLE_CLASSES) - names)
    assert not stale, f"TABLE_CLASSES maps tables the schema does not have: {stale}"
    missing = sorted(set(SENSITIVE_TABLES) - names)
    assert not missing, f"SENSITIVE_TABLES names tables the schema does not have: {missing}"


def test_a_brain_with_every_migration_adds_no_unmapped_table(aimos_home: Path) -> None:
    """The migrations alone (no install) and each CREATE TABLE in their SQL: all mapped."""
    from aimos.store.connection import code_schema_version, open_writer, schema_version

    path = aimos_home / "migrated.sqlite3"
    conn = open_writer(path, create=True)
    try:
        assert schema_version(conn) == code_schema_version() == len(migration_files())
    finally:
        conn.close()
    check_mapped({name for name, _ in tables(path)}, "migrated brain")

    create = re.compile(
        r"CREATE\s+(?:VIRTUAL\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?[\"`\[]?(\w+)", re.IGNORECASE
    )
    # a table a migration makes under a passing name and renames (a rebuild) is the renamed one
    renamed = re.compile(r"ALTER\s+TABLE\s+(\w+)\s+RENAME\s+TO\s+(\w+)", re.IGNORECASE)
    declared: dict[str, set[str]] = {}
    for f in migration_files():
        sql = f.read_text("utf-8")
        passing = {old for old, _new in renamed.findall(sql)}
        declared[f.name] = set(create.findall(sql)) - passing | {new for _old, new in renamed.findall(sql)}
    assert declared["0001_initial.sql"], "the regex found no table in the first migration"
    for name, found in declared.items():
        check_mapped(found, name)
