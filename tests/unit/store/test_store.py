"""The store: migrations, pragmas, append-only triggers, writer-only inserts, the read authorizer.

That every table not listed as mutable refuses UPDATE and DELETE: test_append_only.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.cells import cell_int, the_row

from aimos.errors import DamagedBrainError, IntegrityError, NotInstalledError, SchemaTooNewError
from aimos.store import connection as store
from aimos.store.functions import SQL_FUNCTIONS, is_canonical, payload_message_sql, request_message_sql

RETAINED = (
    "brain_meta",
    "master_identity",
    "identity_epochs",
    "recall_grants",
    "agent_revocations",
    "request_nonces",
    "memory_provenance",
    "memories",
    "memory_supersessions",
    "memory_occurrences",
    "events",
    "schema_migrations",
)


def sqlite_shell(db: Path, sql: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sqlite3", str(db), sql], capture_output=True, text=True, check=False)


def test_new_brain_is_migrated_wal_full_and_private(aimos_home: Path) -> None:
    conn = store.open_writer(create=True)
    try:
        assert store.schema_version(conn) == store.code_schema_version() >= 1
        assert conn.execute("PRAGMA journal_mode").fetchall()[0][0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchall()[0][0] == 2  # FULL
        assert cell_int(conn.execute("PRAGMA busy_timeout").fetchall()[0][0]) > 0
        names = {r["name"] for r in store.rows(conn, "SELECT name FROM sqlite_master WHERE type='table'")}
        assert set(RETAINED) <= names
    finally:
        conn.close()
    brain = aimos_home / "brain.sqlite3"
    assert brain.stat().st_mode & 0o777 == 0o600
    assert aimos_home.stat().st_mode & 0o777 == 0o700


def test_missing_brain_is_not_installed(aimos_home: Path) -> None:
    with pytest.raises(NotInstalledError):
        store.open_writer()
    with pytest.raises(NotInstalledError):
        store.open_reader()


def test_newer_schema_is_refused(aimos_home: Path) -> None:
    store.open_writer(create=True).close()
    db = aimos_home / "brain.sqlite3"
    newer = store.code_schema_version() + 1
    assert (
        sqlite_shell(
            db,
            "DROP TRIGGER schema_migrations_writer_only; DROP TRIGGER IF EXISTS schema_migrations_seal_aware; INSERT INTO schema_migrations"
            f" (version, name, applied_at) VALUES ({newer}, 'from_a_newer_aimos', 0);"
            f" PRAGMA user_version = {newer}",
        ).returncode
        == 0
    )
    with pytest.raises(SchemaTooNewError) as err:
        store.open_writer()
    assert "upgrade" in err.value.hint
    with pytest.raises(SchemaTooNewError):
        store.open_reader()


@pytest.mark.parametrize("forged", [-1, 0, 1, 99])
def test_a_schema_version_that_disagrees_with_the_migrations_is_damage(aimos_home: Path, forged: int) -> None:
    store.open_writer(create=True).close()
    db = aimos_home / "brain.sqlite3"
    assert sqlite_shell(db, f"PRAGMA user_version = {forged}").returncode == 0
    for opener in (store.open_writer, store.open_reader):
        with pytest.raises(DamagedBrainError) as err:
            opener()
        assert err.value.reason == "schema_version_mismatch"
        assert "backup" in err.value.hint
    assert sqlite_shell(db, "PRAGMA user_version").stdout.strip() == str(forged)


def test_reader_authorizer_denies_writes(brain) -> None:  # type: ignore[no-untyped-def]
    reader = store.open_reader()
    try:
        for sql in (
            "DELETE FROM memories",
            "UPDATE memories SET value = 'x'",
            "INSERT INTO brain_meta (key, value) VALUES ('a', 'b')",
            "DROP TABLE memories",
            "ALTER TABLE memories ADD COLUMN x TEXT",
            "DROP TRIGGER memories_no_update",
        ):
            with pytest.raises(IntegrityError):
                with store.translate_errors():
                    reader.execute(sql)
        assert store.one(reader, "SELECT COUNT(*) AS n FROM memories") is not None
    finally:
        reader.close()


def test_sqlite_shell_cannot_edit_or_append(brain) -> None:  # type: ignore[no-untyped-def]
    import time

    from aimos.actions.bodies import build_save_body
    from aimos.identity.requests import sign_request
    from aimos.memory.save import save
    from aimos.vocabulary import PATH_SAVE

    now = int(time.time())
    saved = save(
        brain.conn,
        brain.housekeeper,
        sign_request(brain.agent, build_save_body(company_id="personal", value="kept"), PATH_SAVE, now),
        now,
    )
    db = brain.home / "brain.sqlite3"
    before = sqlite_shell(db, "SELECT value, retrieval_weight_milli FROM memories").stdout
    attempts = {
        "UPDATE memories SET value = 'edited'": "append-only",
        "UPDATE memories SET retrieval_weight_milli = 3000": "signed, authorized transition",
        "DELETE FROM memories": "never deleted",
        "UPDATE events SET operation = 'x'": "append-only",
        "DELETE FROM events": "append-only",
        "DELETE FROM memory_provenance": "append-only",
        "UPDATE identity_epochs SET valid_until = 0": "append-only",
        "DELETE FROM recall_grants": "append-only",
        "DELETE FROM identity_epochs": "append-only",
        "UPDATE recall_grants SET clearance_ceiling = 12": "append-only",
        "INSERT INTO brain_meta (key, value) VALUES ('x', 'y')": "no such function",
        "INSERT INTO request_nonces VALUES ('a','b',1,1,'p','h',1)": "no such function",
        "INSERT INTO master_identity VALUES ('f', 'k', 1)": "",
        f"INSERT INTO memory_supersessions VALUES ('{saved.memory_id}', '{saved.memory_id}', 'personal', 'x', 1)": "",
        "UPDATE schema_migrations SET version = 9": "append-only",
    }
    for sql, expected in attempts.items():
        result = sqlite_shell(db, sql)
        assert result.returncode != 0, sql
        assert expected in result.stderr, (sql, result.stderr)
    assert sqlite_shell(db, "SELECT value, retrieval_weight_milli FROM memories").stdout == before


def test_registered_functions_match_the_kernel() -> None:
    from aimos.crypto.canonical import canonical_text
    from aimos.crypto.messages import payload_message, request_message

    body = {"b": [1, 2.5, "é"], "a": None}
    text = canonical_text(body)
    assert is_canonical(text) == 1
    assert is_canonical('{"b":1, "a":2}') == 0
    assert is_canonical("not json") == 0
    assert payload_message_sql(text, "n", 5) == payload_message(body, "n", 5)
    assert request_message_sql(text, "post", "/aimos/save", "n", 5) == request_message(
        body, "POST", "/aimos/save", "n", 5
    )
    assert all(name.startswith("aimos_") for name in SQL_FUNCTIONS)


def test_write_transaction_rolls_back_on_error(brain) -> None:  # type: ignore[no-untyped-def]
    count = the_row(brain.conn, "SELECT COUNT(*) AS n FROM brain_meta")["n"]
    with pytest.raises(RuntimeError):
        with store.write_transaction(brain.conn):
            brain.conn.execute("INSERT INTO brain_meta (key, value) VALUES ('tmp', 'x')")
            raise RuntimeError("boom")
    assert the_row(brain.conn, "SELECT COUNT(*) AS n FROM brain_meta")["n"] == count


def test_busy_brain_fails_with_busy_error(brain, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from aimos.errors import BusyError

    monkeypatch.setenv("AIMOS_BUSY_TIMEOUT_MS", "50")
    holder = store.open_writer()
    waiter = store.open_writer()
    try:
        holder.execute("BEGIN IMMEDIATE")
        with pytest.raises(BusyError) as err:
            with store.write_transaction(waiter):
                pass
        assert "try again" in err.value.hint
        holder.execute("ROLLBACK")
        with store.write_transaction(waiter):  # free again: the waiter gets in
            pass
    finally:
        holder.close()
        waiter.close()
