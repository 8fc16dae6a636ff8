"""A brain the release of schema version 11 made, holding text in many scripts
(tests/fixtures/brain-v11, made by that release's code), migrates to indexes that read every
language (migration 12, aimos.store.words):
- before, its index did not find `東京` in `東京タワーに行った` (the fixture is what the old code made);
- `aimos verify` on it runs the migration, and every check passes, the index check included (it
  rebuilds both indexes from the memories, as `aimos index rebuild` would, and compares every token
  with what the migration wrote: the migration's one-pass context windows are the trigger's);
- after, each memory is found by its word, in both indexes, and no row outside the indexes changed.
tests/fixtures/brain-v11/make.py says how the fixture was made, and by which release.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import apsw
import pytest
from support.cli import run_aimos, unpack_brain_fixture

from aimos.recall.candidates import index_failures
from aimos.recall.text import query_terms
from aimos.store.search import fts_match

pytestmark = pytest.mark.timeout(300)

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "brain-v11"
MEMORIES = json.loads((FIXTURE / "memories.json").read_text("utf-8"))
DERIVED = ("memory_fts", "memory_context_fts")  # the search indexes' own tables


def _unpack(home: Path) -> Path:
    """The fixture brain and its public files in ``home`` (AIMOS_HOME); returns the brain's path."""
    return unpack_brain_fixture(FIXTURE, home)


def _read(brain: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    conn = apsw.Connection(str(brain), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [tuple(r) for r in conn.execute(sql, params)]
    finally:
        conn.close()


def _found(brain: Path, table: str, word: str) -> set[int]:
    match = fts_match(query_terms(word))
    return {int(r[0]) for r in _read(brain, f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (match,))}


def _rowids(brain: Path) -> dict[str, int]:
    return {str(v): int(r) for r, v in _read(brain, "SELECT rowid, value FROM memories")}


def _columns(brain: Path) -> dict[str, list[str]]:
    """Each table's columns (but the derived indexes' and the migration log's)."""
    return {
        str(t): [str(r[1]) for r in _read(brain, f'PRAGMA table_info("{t}")')]
        for (t,) in _read(brain, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        if not str(t).startswith(DERIVED) and t != "schema_migrations"
    }


def _content(brain: Path, columns: dict[str, list[str]]) -> dict[str, str]:
    """A digest of every row of each table, over the given columns (a later migration may add
    columns: the rows hold what they held in the columns they had)."""
    out = {}
    for table, cols in columns.items():
        listed = ", ".join(f'"{c}"' for c in cols)
        try:
            rows = _read(brain, f'SELECT rowid, {listed} FROM "{table}" ORDER BY rowid')
        except apsw.SQLError:  # WITHOUT ROWID
            rows = sorted(_read(brain, f'SELECT {listed} FROM "{table}"'), key=repr)
        out[table] = hashlib.sha256(repr(rows).encode()).hexdigest()
    return out


def test_the_fixture_is_a_schema_11_brain_whose_index_missed_these_words(aimos_home: Path) -> None:
    brain = _unpack(aimos_home)
    assert _read(brain, "PRAGMA user_version") == [(11,)]
    rowids = _rowids(brain)
    assert len(rowids) == len(MEMORIES) == 16
    tokyo = rowids["東京タワーに行った"]
    assert tokyo not in _found(brain, "memory_fts", "東京")
    assert rowids["The spare key is under the blue flowerpot"] in _found(brain, "memory_fts", "flowerpot")


def test_it_migrates_then_every_memory_is_found_by_its_word(aimos_home: Path) -> None:
    brain = _unpack(aimos_home)
    columns = _columns(brain)
    before = _content(brain, columns)

    verified = run_aimos("verify", "--json", timeout=240)
    assert verified.code == 0, verified.describe()
    assert verified.json()["ok"] is True

    from aimos.store.connection import code_schema_version

    assert _read(brain, "PRAGMA user_version") == [(code_schema_version(),)]
    assert index_failures(str(brain)) == []
    rowids = _rowids(brain)
    missed = [
        m["found_by"] for m in MEMORIES if rowids[m["text"]] not in _found(brain, "memory_fts", m["found_by"])
    ]
    assert not missed, missed
    turns = [m for m in MEMORIES if m["memory_type"] == "dialog_turn"]
    missed = [
        m["found_by"]
        for m in turns
        if rowids[m["text"]] not in _found(brain, "memory_context_fts", m["found_by"])
    ]
    assert not missed, missed
    # a turn's context holds its neighbours: the turn after "新幹線" is found by it there too
    shinkansen = _found(brain, "memory_context_fts", "新幹線")
    assert {rowids["はい、新幹線で行きます"], rowids["駅の近くのホテルを予約しました"]} <= shinkansen
    # nothing but the derived indexes (and the migration log) changed; the release's events keep
    # their bodies as text (migration 14 stores only the events written after it deflated)
    assert _content(brain, columns) == before
    assert _read(brain, "SELECT COUNT(*) FROM events WHERE signed_body_deflated IS NOT NULL") == [(0,)]
