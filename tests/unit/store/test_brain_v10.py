"""A brain the release of schema version 10 made (tests/fixtures/brain-v10: every kind of row, built by
that release's code, with the SHA-256 of everything that release exported from it) migrates in place:

- `aimos verify` on it runs the newer migrations, then both verifiers and their parity pass, and the
  rows written before are exactly as they were;
- every export of it (the cognitive bundle, the V2 recall envelopes and mutation bundles, the receipt
  documents) is the same bytes as the release wrote;
- a migration killed halfway (the real migrations, in a real process, SIGKILLed inside the migration's
  transaction) leaves the old brain exactly as it was, and aimos migrates it at the next open.

tests/fixtures/brain-v10/make.py says how the fixture was made, and by which release.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import apsw
import pytest
from support.cli import run_aimos, unpack_brain_fixture

pytestmark = pytest.mark.timeout(300)

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "brain-v10"
FIXTURE_VERSION = 10


def _unpack(home: Path) -> Path:
    """The fixture brain and its public files in ``home`` (AIMOS_HOME); returns the brain's path."""
    return unpack_brain_fixture(FIXTURE, home)


def _read(brain: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = apsw.Connection(str(brain), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [tuple(r) for r in conn.execute(sql)]
    finally:
        conn.close()


def _schema(brain: Path) -> list[tuple[Any, ...]]:
    return sorted(_read(brain, "SELECT type, name, tbl_name, sql FROM sqlite_master"))


DERIVED = ("memory_fts", "memory_context_fts")  # the search indexes' own tables


def _tables(brain: Path) -> list[str]:
    return [
        str(r[0]) for r in _read(brain, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    ]


def _columns(brain: Path, table: str) -> list[str]:
    return [str(r[1]) for r in _read(brain, f'PRAGMA table_info("{table}")')]


def _content(brain: Path, columns: dict[str, list[str]]) -> dict[str, str]:
    """A digest of every row of each table, over the given columns (rowid first where there is one)."""
    out = {}
    for table, cols in columns.items():
        listed = ", ".join(f'"{c}"' for c in cols)
        try:
            found = _read(brain, f'SELECT rowid, {listed} FROM "{table}" ORDER BY rowid')
        except apsw.SQLError:  # WITHOUT ROWID (the FTS5 index's own tables)
            found = sorted(_read(brain, f'SELECT {listed} FROM "{table}"'), key=repr)
        out[table] = hashlib.sha256(repr(found).encode()).hexdigest()
    return out


def _version(brain: Path) -> int:
    return int(_read(brain, "PRAGMA user_version")[0][0])


def _exports(home: Path, out: Path) -> dict[str, str]:
    sys.path.insert(0, str(FIXTURE))
    try:
        from make import exports  # the same exports, as the fixture's maker wrote them
    finally:
        sys.path.remove(str(FIXTURE))
    out.mkdir()
    exported: dict[str, str] = exports(home, out)
    return exported


def test_the_fixture_is_a_brain_the_schema_10_release_made() -> None:
    with gzip.open(FIXTURE / "brain.sqlite3.gz", "rb") as f:
        assert f.read(16) == b"SQLite format 3\x00"
    recorded = json.loads((FIXTURE / "exports.json").read_text())
    assert "cognitive.json" in recorded
    assert sum(name.startswith("recall-") for name in recorded) >= 3
    assert sum(name.startswith("outcome-") and name.endswith("trust-context.json") for name in recorded) >= 5


def test_a_reader_of_the_unmigrated_brain_reads_its_receipts_and_seals(aimos_home: Path) -> None:
    """A read-side connection never migrates: the code reads a schema-10 brain as it is (no stored
    form applies before its column exists)."""
    from aimos.recall.receipts import receipt_document
    from aimos.store.connection import open_reader
    from aimos.store.seals import sealed_tables, verify_seals

    brain = _unpack(aimos_home)
    conn = open_reader(brain)
    try:
        assert _version(brain) == FIXTURE_VERSION
        assert sealed_tables(conn)["recall_receipts"].stored == ()
        receipts = [r[0] for r in conn.execute("SELECT receipt_id FROM recall_receipts")]
        assert len(receipts) == 3
        for receipt_id in receipts:
            doc = receipt_document(conn, receipt_id)
            assert doc["decision"]["selected_memory_ids"], receipt_id
        report = verify_seals(conn)
        assert report.failures == [] and report.rows > 0
    finally:
        conn.close()
    assert _version(brain) == FIXTURE_VERSION


def test_it_migrates_then_verifies_with_both_verifiers_and_parity(aimos_home: Path) -> None:
    from aimos.store.connection import code_schema_version

    brain = _unpack(aimos_home)
    assert _version(brain) == FIXTURE_VERSION
    assert code_schema_version() > FIXTURE_VERSION, "no migration after the fixture's: nothing is tested"
    before_schema = {t: _columns(brain, t) for t in _tables(brain)}
    before = _content(brain, {t: c for t, c in before_schema.items() if t != "schema_migrations"})
    deflated_before = "decision_deflated" in before_schema["recall_receipts"]

    verified = run_aimos("verify", "--json", timeout=240)
    assert verified.code == 0, verified.describe()
    report = verified.json()
    assert report["ok"] is True, report

    assert _version(brain) == code_schema_version()
    assert [r[0] for r in _read(brain, "SELECT version FROM schema_migrations ORDER BY version")] == list(
        range(1, code_schema_version() + 1)
    )
    # every row is exactly as it was, in every column it had (verify writes nothing; the migration
    # log has its new row). The search indexes are derived, and migration 12 refilled them: verify's
    # index check above rebuilt them from the memories and found them equal.
    after = _content(brain, {t: c for t, c in before_schema.items() if t != "schema_migrations"})
    changed = [t for t in before if before[t] != after[t] and not t.startswith(DERIVED)]
    assert not changed, changed
    assert not deflated_before
    stored = _read(brain, "SELECT length(decision) > 0, decision_deflated IS NULL FROM recall_receipts")
    assert stored and all(text and old for text, old in stored), "the release's receipts stay as they were"


def test_its_exports_are_the_same_bytes_after_the_migration(aimos_home: Path, tmp_path: Path) -> None:
    brain = _unpack(aimos_home)
    assert run_aimos("verify", timeout=240).code == 0  # migrates
    assert _version(brain) > FIXTURE_VERSION
    recorded = json.loads((FIXTURE / "exports.json").read_text())
    now = _exports(aimos_home, tmp_path / "exports")
    assert sorted(now) == sorted(recorded)
    differ = [name for name in recorded if now[name] != recorded[name]]
    assert not differ, f"exports that differ from the release's: {differ}"
    # and they still verify offline, against the master the fixture's anchors name
    anchors = json.loads((FIXTURE / "config" / "anchors.json").read_text())
    (master,) = [b["master_fingerprint"] for b in anchors["brains"].values()]
    out = tmp_path / "exports"
    checked = [run_aimos("verify-bundle", str(out / "cognitive.json"))]
    for name in sorted(recorded):
        path = str(out / name)
        if name.startswith("recall-"):
            checked.append(run_aimos("verify-bundle", path, "--master-fingerprint", master))
        elif name.startswith("outcome-") and name.count(".json") == 1:
            checked.append(
                run_aimos(
                    "verify-bundle",
                    path,
                    "--master-fingerprint",
                    master,
                    "--witness",
                    path + ".witness.json",
                    "--trust-context",
                    path + ".trust-context.json",
                )
            )
    assert len(checked) == 1 + sum(n.startswith("recall-") for n in recorded) + sum(
        n.startswith("outcome-") and n.count(".json") == 1 for n in recorded
    )
    failed = [c.describe() for c in checked if c.code != 0]
    assert not failed, failed


KILLER = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    import apsw
    from aimos.store import connection, functions

    at, first_new = sys.argv[2], int(sys.argv[3])
    # the first migration the brain has not had is the one killed
    files = connection._migration_files()
    older = files[: first_new - 1]
    version, name, entry = files[first_new - 1]
    sql = entry.read_text("utf-8")
    statements, part = [], ""
    for piece in sql.split(";"):  # whole statements (a trigger's body holds semicolons)
        part += piece + ";"
        if apsw.complete(part):
            statements.append(part)
            part = ""
    assert len(statements) >= 2, statements
    # the kill is one more statement inside the migration's transaction: after its first statement
    # ("middle") or after its last ("end"); the migration log's row and the commit never come
    cut = 1 if at == "middle" else len(statements)
    killed = "".join(statements[:cut]) + "\\nSELECT aimos_test_kill();\\n" + "".join(statements[cut:])
    class Text:
        def __init__(self, text):
            self.text = text

        def read_text(self, _encoding):
            return self.text

    connection._migration_files = lambda: (*older, (version, name, Text(killed)))  # nothing after it
    functions.SQL_FUNCTIONS["aimos_test_kill"] = (lambda: os.kill(os.getpid(), signal.SIGKILL), 0)
    connection.open_writer(Path(sys.argv[1]))
    print("not killed")
    """
)


@pytest.mark.parametrize("at", ["middle", "end"])
def test_a_migration_killed_halfway_leaves_the_old_brain_intact(
    aimos_home: Path, tmp_path: Path, at: str
) -> None:
    brain = _unpack(aimos_home)
    schema = _schema(brain)
    columns = {t: _columns(brain, t) for t in _tables(brain)}
    content = _content(brain, columns)
    script = tmp_path / "kill_during_migration.py"
    script.write_text(KILLER)

    done = subprocess.run(
        [sys.executable, str(script), str(brain), at, str(FIXTURE_VERSION + 1)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, (done.returncode, done.stdout, done.stderr)

    assert _version(brain) == FIXTURE_VERSION
    assert _schema(brain) == schema
    assert _content(brain, columns) == content
    assert _read(brain, "PRAGMA integrity_check") == [("ok",)]

    verified = run_aimos("verify", timeout=240)  # the next open migrates it, whole
    assert verified.code == 0, verified.describe()
    assert _version(brain) > FIXTURE_VERSION
