"""Append-only by default: every table of the migrated schema refuses UPDATE and DELETE unless it is
on the short, justified list of mutable tables below. A table added by a later migration without
guards makes these tests fail until it gets them (or a reasoned entry here).

The guards are exercised for real: on an in-memory migrated schema with one row in every guarded
table (changing each column in turn, then deleting the row), and on an installed brain with the
rows aimos writes (a save, a recall) through the writer's own connection."""

from __future__ import annotations

import time
from typing import Any

import apsw
import pytest

from aimos.errors import IntegrityError
from aimos.store.connection import rows, write_transaction
from aimos.store.functions import SQL_FUNCTIONS
from aimos.store.schema import migrated_in_memory

# Tables aimos itself updates or deletes rows of; every other table must refuse both.
MUTABLE: dict[str, str] = {
    # The newest (row count, highest rowid, chain) per table, kept so a write need not replay every
    # seal: store/seals.py moves each head forward on every write (UPDATE). It is a cache, checked
    # against the newest seal's signed state root whenever it is used; its own guards still refuse a
    # DELETE, an insert or update from a connection without the writer's functions, and a head moved
    # backward (tested below).
    "seal_heads": "seal cache moved forward by the writer",
    # The FTS5 search indexes (migration 2): contentless indexes derived from the memories table,
    # never a source of truth. memories_index_insert deletes and re-inserts the previous turn's
    # context row, and `aimos index rebuild` (recall/candidates.rebuild_indexes) rewrites them;
    # SQLite cannot put triggers on a virtual table, and FTS5 writes its own shadow tables.
    "memory_fts": "derived search index (virtual table)",
    "memory_fts_config": "FTS5 shadow table of memory_fts",
    "memory_fts_data": "FTS5 shadow table of memory_fts",
    "memory_fts_docsize": "FTS5 shadow table of memory_fts",
    "memory_fts_idx": "FTS5 shadow table of memory_fts",
    "memory_context_fts": "derived search index of conversation context (virtual table)",
    "memory_context_fts_config": "FTS5 shadow table of memory_context_fts",
    "memory_context_fts_data": "FTS5 shadow table of memory_context_fts",
    "memory_context_fts_docsize": "FTS5 shadow table of memory_context_fts",
    "memory_context_fts_idx": "FTS5 shadow table of memory_context_fts",
    # The memories' vectors (migration 19): derived from the memories like the search indexes, not
    # sealed; a vector is replaced when the embedding model changes and removed when the master
    # redacts its memory (store/vectors.py), and the generation counts those changes.
    "memory_vectors": "derived vectors of the memories (remade, removed by a redaction)",
    "memory_vectors_generation": "counter of replaced or removed vectors (updated by triggers)",
    # fts5vocab over memory_fts: a read-only view of its term counts; it holds no rows of its own.
    "memory_fts_vocab": "read-only fts5vocab view of memory_fts",
}


def _tables(conn: apsw.Connection) -> list[str]:
    return sorted(
        str(name)
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    )


def _guarded() -> list[str]:
    conn = migrated_in_memory()
    try:
        return [t for t in _tables(conn) if t not in MUTABLE]
    finally:
        conn.close()


GUARDED = _guarded()


def test_the_mutable_list_names_only_tables_that_exist() -> None:
    conn = migrated_in_memory()
    try:
        assert set(MUTABLE) <= set(_tables(conn)), set(MUTABLE) - set(_tables(conn))
    finally:
        conn.close()
    assert len(GUARDED) >= 20  # the retained tables: the list is not swallowing them


def test_every_table_not_listed_as_mutable_has_update_and_delete_guards() -> None:
    conn = migrated_in_memory()
    try:
        triggers = list(conn.execute("SELECT tbl_name, sql FROM sqlite_master WHERE type = 'trigger'"))
    finally:
        conn.close()
    for table in GUARDED:
        sqls = [" ".join(str(sql).upper().split()) for tbl, sql in triggers if tbl == table]
        assert any("BEFORE UPDATE ON" in s and "RAISE(ABORT" in s for s in sqls), (
            f"{table} has no BEFORE UPDATE guard: add one, or list it in MUTABLE with the reason"
        )
        assert any("BEFORE DELETE ON" in s and "RAISE(ABORT" in s for s in sqls), (
            f"{table} has no BEFORE DELETE guard: add one, or list it in MUTABLE with the reason"
        )


# A value of each STRICT column type, and a different one (TEXT values are JSON, so the indexes over
# json_extract accept them).
_VALUES = {
    "INTEGER": (1, 2),
    "TEXT": ("{}", '{"x": 1}'),
    "BLOB": (b"\0" * 64, b"\1" * 64),
    "REAL": (1.0, 2.0),
}


def _one_row_everywhere() -> tuple[apsw.Connection, dict[str, list[tuple[str, str]]]]:
    """A migrated in-memory schema holding one row in every guarded table: the insert checks (they
    need the writer's functions and signed rows), the rows an insert adds elsewhere (a memory's
    detection queue row) and CHECK constraints are set aside for the fixture; the UPDATE and
    DELETE guards are exactly the migrations'."""
    conn = migrated_in_memory()
    for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'trigger'"
        " AND (sql LIKE '%BEFORE INSERT%' OR sql LIKE '%AFTER INSERT%')"
    ).fetchall():
        conn.execute(f'DROP TRIGGER "{name}"')
    conn.execute("PRAGMA ignore_check_constraints = ON")
    columns: dict[str, list[tuple[str, str]]] = {}
    for table in GUARDED:
        cols = [(str(c[1]), str(c[2]).upper()) for c in conn.execute(f'PRAGMA table_info("{table}")')]
        columns[table] = cols
        conn.execute(
            f'INSERT INTO "{table}" ({", ".join(c for c, _ in cols)}) VALUES ({", ".join("?" * len(cols))})',
            tuple(_VALUES[kind][0] for _, kind in cols),
        )
    return conn, columns


@pytest.mark.parametrize("table", GUARDED)
def test_every_column_of_a_guarded_table_refuses_an_update_and_the_row_refuses_a_delete(table: str) -> None:
    conn, columns = _one_row_everywhere()
    try:
        before = conn.execute(f'SELECT * FROM "{table}"').fetchall()
        assert len(before) == 1
        for column, kind in columns[table]:
            with pytest.raises(apsw.ConstraintError, match="aimos: "):
                conn.execute(f'UPDATE "{table}" SET "{column}" = ?', (_VALUES[kind][1],))
        with pytest.raises(apsw.ConstraintError, match="aimos: "):
            conn.execute(f'DELETE FROM "{table}"')
        assert conn.execute(f'SELECT * FROM "{table}"').fetchall() == before
    finally:
        conn.close()


def _present(*_args: Any) -> str:
    return "present"


def test_seal_heads_refuses_a_delete_and_a_move_backward() -> None:
    conn, _ = _one_row_everywhere()
    try:
        conn.execute("INSERT INTO seal_heads VALUES ('memories', 2, 2, ?, 5)", (b"\0" * 32,))
        with pytest.raises(apsw.ConstraintError, match="only move forward"):
            conn.execute("DELETE FROM seal_heads")
        # without the writer's functions no head moves at all
        for name, (_fn, nargs) in SQL_FUNCTIONS.items():  # as a plain SQLite connection has them
            conn.create_scalar_function(name, None, nargs)
        with pytest.raises(apsw.SQLError, match="no such function"):
            conn.execute("UPDATE seal_heads SET row_count = 3, max_rowid = 3, seq = 6")
        conn.create_scalar_function("aimos_sha256_hex", _present, 1)  # as the writer has it
        for backward in (
            "row_count = 1, seq = 6",  # fewer rows
            "max_rowid = 1, seq = 6",  # a lower rowid
            "row_count = 3, max_rowid = 3",  # not a newer seal
            "table_name = 'events', seq = 6",  # another table's head
        ):
            with pytest.raises(apsw.ConstraintError, match="only forward"):
                conn.execute(f"UPDATE seal_heads SET {backward}")
        conn.execute("UPDATE seal_heads SET row_count = 3, max_rowid = 3, seq = 6")
        assert conn.execute("SELECT row_count, seq FROM seal_heads").fetchall() == [(3, 6)]
    finally:
        conn.close()


def test_an_installed_brain_refuses_updates_and_deletes_of_its_rows(brain: Any) -> None:
    """Through the writer's own connection (its functions registered, inside a write transaction),
    every guarded table that holds rows after a save and a recall refuses to change or lose one."""
    from aimos.actions.bodies import build_recall_body, build_save_body
    from aimos.identity.requests import sign_request
    from aimos.memory.save import save
    from aimos.recall.pipeline import recall
    from aimos.vocabulary import PATH_RECALL, PATH_SAVE

    now = int(time.time())
    save(
        brain.conn,
        brain.housekeeper,
        sign_request(
            brain.agent,
            build_save_body(company_id="personal", value="the ferry leaves at noon"),
            PATH_SAVE,
            now,
        ),
        now,
    )
    recall(
        brain.conn,
        brain.housekeeper,
        sign_request(brain.agent, build_recall_body(query="when does the ferry leave"), PATH_RECALL, now),
        now,
    )
    exercised = []
    for table in GUARDED:
        before = rows(brain.conn, f'SELECT rowid AS r, * FROM "{table}" ORDER BY rowid')
        if not before:
            continue
        exercised.append(table)
        cols = [str(c[1]) for c in brain.conn.execute(f'PRAGMA table_info("{table}")')]
        changed = ", ".join(
            f'"{c}" = CASE typeof("{c}") WHEN \'integer\' THEN "{c}" + 1 '
            f"WHEN 'text' THEN \"{c}\" || 'x' ELSE \"{c}\" END"
            for c in cols
        )
        for sql in (f'UPDATE "{table}" SET {changed}', f'DELETE FROM "{table}"'):
            with pytest.raises(IntegrityError, match="refused by the brain"):
                with write_transaction(brain.conn):
                    brain.conn.execute(sql)
        assert rows(brain.conn, f'SELECT rowid AS r, * FROM "{table}" ORDER BY rowid') == before, table
    assert {
        "memories",
        "events",
        "memory_provenance",
        "identity_epochs",
        "brain_seals",
        "recall_receipts",
        "request_nonces",
    } <= set(exercised), exercised
