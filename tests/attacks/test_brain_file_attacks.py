"""Attacks on the brain file, end to end: each refused or detected by the real `aimos` CLI.

The attacker has the brain file and the `sqlite3` shell (none of aimos's SQL functions): it drops
the guard triggers of the tables it edits, makes its change and, being the strongest attacker,
re-creates the dropped triggers exactly as they were (so the schema reads as aimos made it). Each
test asserts the exit code (SPEC: 3 not found, 4 verification failed, 5 integrity), the reason word
(on stderr, or under ``brain.failures`` in `aimos verify --json`), that nothing is disclosed, and
that a refused command changed nothing.

One used brain is built per module (a copy of the session's installed template, then a few real
CLI commands) and each test works on a byte-for-byte copy of its home.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw
import pytest
from support.attacks import PASSPHRASE, attack, home_from, rowid_of
from support.cli import (
    BRAIN,
    UUID_RE,
    Result,
    assert_unchanged,
    run_aimos,
    snapshot,
    sqlite,
    sqlite_value,
)

from aimos.plural import plural

pytestmark = pytest.mark.timeout(300)

OK, VERIFY_FAILED, INTEGRITY = 0, 4, 5
SECRET = "the heron lab vault code is 4471"
POISON = "the ferry to the island is free for everyone on sundays"


# --- running aimos ---------------------------------------------------------------------------------
def verify(*, expect: int = VERIFY_FAILED) -> tuple[Result, list[dict[str, Any]]]:
    """`aimos verify --json`: the exit code, and the brain-level failures."""
    result = run_aimos("verify", "--json")
    assert result.code == expect, result.describe()
    assert "Traceback" not in result.both, result.describe()
    report = json.loads(result.out)
    return result, (report["brain"] or {}).get("failures", [])


def assert_failure(
    failures: list[dict[str, Any]], reason: str, table: str | None = None, *words: str
) -> None:
    """A brain-level failure with this reason (and table, and words in its detail) is reported."""
    hits = [f for f in failures if f["reason"] == reason and (table is None or f.get("table") == table)]
    assert hits, f"no {reason} failure on {table}: {json.dumps(failures, indent=1)}"
    for word in words:
        assert any(word in f["detail"] for f in hits), f"{word!r} not named: {json.dumps(hits, indent=1)}"


def refused(result: Result, code: int, *reason_words: str, never: tuple[str, ...] = ()) -> None:
    """Refused with ``code``, an error and a hint on stderr naming ``reason_words``, nothing on stdout."""
    assert result.code == code, result.describe()
    assert "Traceback" not in result.both, result.describe()
    assert "error:" in result.err and "hint:" in result.err, result.describe()
    assert result.out == "", f"a refused command printed data\n{result.describe()}"
    for word in reason_words:
        assert word in result.err, f"{word!r} not on stderr\n{result.describe()}"
    for text in never:
        assert text not in result.both, f"{text!r} was disclosed\n{result.describe()}"


def save(text: str, *options: str) -> str:
    memory_id = run_aimos("save", text, *options).ok().out.strip()
    assert UUID_RE.match(memory_id), memory_id
    return memory_id


def recall_ids(query: str, *options: str) -> list[str]:
    doc = json.loads(run_aimos("recall", query, "--json", *options).ok().out)
    return [r["memory_id"] for r in doc["results"]]


def checkpoint(home: Path) -> None:
    """Fold any WAL into the main file, so copying brain.sqlite3 copies the whole brain."""
    proc = sqlite(home / BRAIN, "PRAGMA wal_checkpoint(TRUNCATE);")
    assert proc.returncode == 0 and proc.stdout.startswith("0|"), proc.stdout + proc.stderr
    for suffix in ("-wal", "-shm"):
        Path(f"{home / BRAIN}{suffix}").unlink(missing_ok=True)


def put_back(home: Path, old: Path) -> None:
    """Put an older brain file in place of the brain, as someone with the files could."""
    for suffix in ("-wal", "-shm"):
        Path(f"{home / BRAIN}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(old, home / BRAIN)


# --- the used brain --------------------------------------------------------------------------------
@dataclass
class Used:
    home: Path
    ids: dict[str, str]
    stolen_keys: Path


@pytest.fixture(scope="module")
def used(brain_template: Any, tmp_path_factory: pytest.TempPathFactory) -> Used:
    """The session's installed brain, then: agents `lowbie` (clearance 2), `reader` (read-only)
    and `victim` (revoked); a clearance-9 secret; an otter note recalled by lowbie (its receipt) and
    given good feedback; a memory confirmed as poison; a save and a label after it; an owl note
    corrected."""
    root = tmp_path_factory.mktemp("brain-file-attacks")
    with home_from(brain_template(PASSPHRASE), root, PASSPHRASE) as home:
        ids: dict[str, str] = {}
        run_aimos("agent", "enroll", "lowbie", "--clearance", "2").ok()
        run_aimos("agent", "enroll", "reader", "--read-only").ok()
        run_aimos("agent", "enroll", "victim").ok()
        ids["victim_note"] = save("the victim agent wrote this before it was revoked", "--agent", "victim")
        # the key on the lost laptop: revoking deletes it from the keystore, the thief keeps a copy
        stolen = root / "stolen-keys"
        stolen.mkdir()
        for key in (home / "state" / "keys").rglob("victim@*"):
            shutil.copy2(key, stolen / key.name)
        assert list(stolen.iterdir())
        run_aimos("agent", "revoke", "victim", "--reason", "lost laptop").ok()
        ids["secret"] = save(SECRET, "--clearance", "9")
        ids["otter"] = save("the otter sleeps under the boathouse", "--clearance", "1")
        ids["lynx"] = save("the lynx enclosure is in zone four", "--clearance", "1")
        receipt = json.loads(run_aimos("recall", "otter boathouse", "--json", "--as", "lowbie").ok().out)
        assert [r["memory_id"] for r in receipt["results"]] == [ids["otter"]], receipt
        ids["receipt_lowbie"] = receipt["receipt"]["receipt_id"]
        run_aimos("feedback", ids["otter"], "--good", "--as", "lowbie").ok()
        ids["poison"] = save(POISON, "--source", "web:evil.example")
        run_aimos("label", ids["poison"], "poison", "--reason", "the ferry is never free").ok()
        ids["after"] = save("the badger sett is behind the old mill")
        # so that the poison's classification and its event are not the newest rows of their tables
        run_aimos("label", ids["after"], "dispute", "--reason", "the mill was pulled down").ok()
        ids["owl"] = save("the barn owl roosts in the grain loft")
        ids["owl_v2"] = (
            run_aimos("correct", ids["owl"], "the barn owl roosts in the hay loft").ok().out.strip()
        )
        assert UUID_RE.match(ids["owl_v2"])
        return Used(home, ids, stolen)


@pytest.fixture
def home(used: Used, aimos_home: Path, passphrase: str) -> Path:
    """AIMOS_HOME (exported) holding a byte-for-byte copy of the used brain's home."""
    assert passphrase == PASSPHRASE
    shutil.copytree(used.home, aimos_home, dirs_exist_ok=True)
    return aimos_home


@pytest.fixture
def ids(used: Used) -> dict[str, str]:
    return used.ids


@pytest.fixture(scope="module")
def other_brain(brain_template: Any, used: Used) -> Path:
    """Another install's home (another brain, another master, another housekeeper)."""
    home: Path = brain_template("another install's passphrase")
    return home


# --- 1. a grant raised -----------------------------------------------------------------------------
def test_raised_clearance_ceiling_refuses_the_recall_and_fails_verify(
    home: Path, ids: dict[str, str]
) -> None:
    assert SECRET not in run_aimos("recall", "heron lab vault code", "--as", "lowbie").ok().both
    attack(
        home,
        "UPDATE recall_grants SET clearance_ceiling = 10 WHERE subject_agent_id = 'lowbie'",
        "recall_grants",
    )
    before = snapshot(home)
    result = run_aimos("recall", "heron lab vault code", "--as", "lowbie")
    refused(result, INTEGRITY, "recall_grants", never=(SECRET, ids["secret"]))
    assert_unchanged(home, before)
    _, failures = verify()
    assert_failure(failures, "row_altered", "recall_grants")
    # the receipt lowbie got before the edit is still the signed receipt it was
    receipt = json.loads(run_aimos("receipt", "verify", ids["receipt_lowbie"], "--json").ok().out)
    assert receipt["valid"] is True and all(c["ok"] for c in receipt["checks"]), receipt


def test_raised_write_allowed_refuses_the_save(home: Path) -> None:
    refused(run_aimos("save", "a read-only agent may not write this", "--agent", "reader"), 6)
    attack(
        home, "UPDATE recall_grants SET write_allowed = 1 WHERE subject_agent_id = 'reader'", "recall_grants"
    )
    before = snapshot(home)
    result = run_aimos("save", "a read-only agent may not write this", "--agent", "reader")
    refused(result, INTEGRITY, "recall_grants")
    assert_unchanged(home, before)
    _, failures = verify()
    assert_failure(failures, "row_altered", "recall_grants")


# --- 2. a revocation deleted -----------------------------------------------------------------------
def test_deleted_revocation_refuses_the_revoked_agent(home: Path, used: Used) -> None:
    """The thief of a revoked agent's key puts the key back and deletes the revocation."""
    keys = next((home / "state" / "keys").iterdir())
    for key in used.stolen_keys.iterdir():
        shutil.copy2(key, keys / key.name)
    refused(run_aimos("save", "written by a revoked key", "--agent", "victim"), 6, "revoked")
    attack(home, "DELETE FROM agent_revocations WHERE agent_id = 'victim'", "agent_revocations")
    before = snapshot(home)
    refused(
        run_aimos("save", "written by a revoked key", "--agent", "victim"), INTEGRITY, "agent_revocations"
    )
    assert_unchanged(home, before)
    listed = run_aimos("agent", "list")
    assert listed.code == INTEGRITY and "agent_revocations" in listed.err, listed.describe()
    assert "Traceback" not in listed.both
    _, failures = verify()
    hits = [f for f in failures if f.get("table") == "agent_revocations"]
    assert {f["reason"] for f in hits} & {"row_missing", "row_unsealed", "row_altered"}, failures


# --- 3. a memory deleted ---------------------------------------------------------------------------
MEMORY_TABLES = (
    "memory_provenance",
    "memory_occurrences",
    "outcomes",
    "weight_projections",
    "weight_baselines",
    "memory_classifications",
    "epistemic_fingerprints",
)


@pytest.mark.parametrize("everything", [False, True], ids=["row-alone", "all-its-rows-but-events"])
def test_deleted_memory_is_named_by_verify(home: Path, ids: dict[str, str], everything: bool) -> None:
    mid = ids["lynx"]
    sql = f"DELETE FROM memories WHERE memory_id = '{mid}'"
    tables: tuple[str, ...] = ("memories",)
    if everything:
        rowid = rowid_of(home, mid)
        sql += "".join(f";\nDELETE FROM {t} WHERE memory_id = '{mid}'" for t in MEMORY_TABLES)
        sql += f";\nDELETE FROM memory_supersessions WHERE '{mid}' IN (old_memory_id, new_memory_id)"
        sql += f";\nDELETE FROM memory_fts WHERE rowid = {rowid}; DELETE FROM memory_context_fts WHERE rowid = {rowid}"
        tables += (*MEMORY_TABLES, "memory_supersessions")
    attack(home, sql, *tables)
    _, failures = verify()
    assert_failure(failures, "row_missing", "memories")
    assert "lynx" not in run_aimos("recall", "lynx enclosure zone").both


# --- 3b. a row deleted from the middle of its table: the next write, the portable check ------------
MISSING = "cognitive_evidence_memory_missing"


def delete_from_the_middle(home: Path, table: str, memory_id: str) -> None:
    """Delete ``table``'s rows for the memory; they are not its newest, so MAX(rowid) stays as sealed."""
    db = home / BRAIN
    where = f"memory_id = '{memory_id}'" if table == "memories" else f"subject_memory_id = '{memory_id}'"
    newest = int(sqlite_value(db, f"SELECT MAX(rowid) FROM {table}"))
    assert 0 < int(sqlite_value(db, f"SELECT MAX(rowid) FROM {table} WHERE {where}")) < newest
    attack(home, f"DELETE FROM {table} WHERE {where}", table)
    assert int(sqlite_value(db, f"SELECT MAX(rowid) FROM {table}")) == newest


@pytest.mark.parametrize("table", ["memories", "events"])
def test_row_deleted_from_the_middle_refuses_the_next_write(
    home: Path, ids: dict[str, str], table: str
) -> None:
    gone = int(
        sqlite_value(home / BRAIN, f"SELECT COUNT(*) FROM events WHERE subject_memory_id = '{ids['lynx']}'")
    )
    delete_from_the_middle(home, table, ids["lynx"])
    before = snapshot(home)
    result = run_aimos("save", "written after a row was deleted in the file")
    rows = 1 if table == "memories" else gone
    refused(result, INTEGRITY, f"table {table} holds", f"({plural(rows, 'sealed row')} gone)")
    assert_unchanged(home, before)
    refused(run_aimos("label", ids["otter"], "dispute", "--reason", "after the edit"), INTEGRITY, table)
    assert_unchanged(home, before)


def test_memory_deleted_from_the_middle_fails_its_exported_bundle(
    home: Path, ids: dict[str, str], tmp_path: Path
) -> None:
    """The bundle exported from the edited brain lacks the memory its events name: refused, by name."""
    mid = ids["lynx"]
    delete_from_the_middle(home, "memories", mid)
    bundle = tmp_path / "brain.json"
    run_aimos("export", "--cognitive", str(bundle)).ok()
    assert mid not in [m["memory_id"] for m in json.loads(bundle.read_text())["memories"]]
    result = run_aimos("verify-bundle", str(bundle), "--json")
    assert result.code == VERIFY_FAILED, result.describe()
    verdict = json.loads(result.out)
    assert verdict["verdict"] == "invalid" and verdict["primary_reason"] == MISSING, verdict
    assert verdict["detail"].startswith(f"memory {mid} is named by event "), verdict["detail"]
    human = run_aimos("verify-bundle", str(bundle))
    assert human.code == VERIFY_FAILED and "Traceback" not in human.both, human.describe()
    assert mid in human.out and MISSING in human.err and "--memory" in human.err, human.describe()
    # and `aimos verify` names it too, beside the seals' row_missing
    report = run_aimos("verify", "--json")
    assert report.code == VERIFY_FAILED, report.describe()
    portable = json.loads(report.out)["portable"]
    assert portable["primary_reason"] == MISSING and mid in portable["detail"], portable


def test_bundle_edited_to_hold_no_memories_is_refused_by_name(
    home: Path, ids: dict[str, str], tmp_path: Path
) -> None:
    """Every memory taken out of a valid bundle, and the producer's records with them; the events
    (saves, outcomes, labels, receipts) stay."""
    bundle = tmp_path / "brain.json"
    run_aimos("export", "--cognitive", str(bundle)).ok()
    run_aimos("verify-bundle", str(bundle)).ok()
    doc = json.loads(bundle.read_text())
    held = [m["memory_id"] for m in doc["memories"]]
    assert set(ids.values()) - {ids["receipt_lowbie"]} <= set(held)
    doc["memories"], doc["sql_records"] = [], []
    edited = tmp_path / "emptied.json"
    edited.write_text(json.dumps(doc))
    result = run_aimos("verify-bundle", str(edited), "--json")
    assert result.code == VERIFY_FAILED, result.describe()
    verdict = json.loads(result.out)
    assert verdict["primary_reason"] == MISSING and verdict["records"] == [], verdict
    named = re.match(r"memory (\S+) is named by event (\S+) \(", verdict["detail"])
    assert named and named.group(1) in held, verdict["detail"]
    assert f"; {len(held) - 1} more missing memories" in verdict["detail"], verdict["detail"]


# --- 4. rollback -----------------------------------------------------------------------------------
def assert_rolled_back(home: Path) -> None:
    """verify: exit 4 with brain_rolled_back; status: the freshness line, then exit 5; a save: exit 5,
    nothing written."""
    _, failures = verify()
    assert_failure(failures, "brain_rolled_back")
    status = run_aimos("status")
    assert status.code == INTEGRITY, status.describe()
    assert re.search(r"^freshness\s+brain_rolled_back: ", status.out, re.M), status.describe()
    assert "brain_rolled_back" in status.err or "not the newest" in status.err, status.describe()
    before = snapshot(home)
    refused(run_aimos("save", "written on a rolled back brain"), INTEGRITY, "not the newest", "aimos restore")
    assert_unchanged(home, before)


def test_rollback_is_detected_and_restore_is_the_way_back(
    home: Path, ids: dict[str, str], tmp_path: Path
) -> None:
    run_aimos("housekeeper", "run-job", "nightly-dream").ok()
    backups = sorted((home / "backups").glob("brain-*.sqlite3"))
    assert len(backups) == 1, backups
    backup = backups[0]
    save("the kestrel nests on the church tower")
    checkpoint(home)
    old = tmp_path / "old.sqlite3"
    shutil.copyfile(home / BRAIN, old)
    run_aimos("agent", "revoke", "lowbie", "--reason", "left the team").ok()
    run_aimos("label", ids["otter"], "dispute", "--reason", "it moved to the mill").ok()
    newest = home / "newest.sqlite3"
    checkpoint(home)
    shutil.copyfile(home / BRAIN, newest)

    put_back(home, backup)  # the nightly backup copied over the brain by hand
    assert_rolled_back(home)
    put_back(home, old)  # an older copy of the brain put back
    assert_rolled_back(home)

    restored = run_aimos("restore", backup.name, "--yes")
    assert restored.code == OK, restored.describe()
    assert re.search(r"^lost since then: [1-9]\d* writes?: [1-9]\d* memor(y|ies)\b", restored.out, re.M), (
        restored.describe()
    )
    kept = re.search(r"^the replaced brain is kept at (.+)$", restored.out, re.M)
    assert kept and Path(kept.group(1)).is_file() and ".replaced-" in kept.group(1), restored.describe()
    assert (
        sqlite_value(Path(kept.group(1)), "SELECT COUNT(*) FROM memories WHERE value LIKE '%kestrel%'") == "1"
    )
    verify(expect=OK)
    assert run_aimos("status").code == OK
    save("the first save after the restore")
    verify(expect=OK)


# --- 5. a lost WAL ---------------------------------------------------------------------------------
def test_lost_wal_with_acknowledged_saves_is_a_rollback(home: Path) -> None:
    """What is simulated: an agent process holds the brain open (so aimos, exiting, is not the last
    connection and leaves its commits in the WAL, unfolded), two saves are acknowledged, then the
    WAL and its index are lost (deleted, as a crash with a lost file would) and the holder goes
    away without folding the WAL it still has open into the brain (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE:
    a crashed process checkpoints nothing)."""
    checkpoint(home)
    holder = apsw.Connection(str(home / BRAIN))
    try:
        holder.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
        holder.execute("SELECT COUNT(*) FROM memories").fetchall()  # joins the WAL: aimos is not the last
        first = save("the first acknowledged save")
        second = save("the second acknowledged save")
        wal = Path(f"{home / BRAIN}-wal")
        assert wal.stat().st_size > 0, "the saves are not in the WAL: nothing would be lost"
        for suffix in ("-wal", "-shm"):
            Path(f"{home / BRAIN}{suffix}").unlink()
    finally:
        holder.close()
    assert not Path(f"{home / BRAIN}-wal").exists()
    found = sqlite_value(
        home / BRAIN, f"SELECT COUNT(*) FROM memories WHERE memory_id IN ('{first}', '{second}')"
    )
    assert found == "0", "the saves survived: the WAL loss was not simulated"
    assert_rolled_back(home)


# --- 6. one column of one row edited, per table ----------------------------------------------------
def flip_hex(column: str) -> str:
    """SQL: ``column`` (lowercase hex) with its first digit changed."""
    return f"(CASE WHEN substr({column}, 1, 1) = '0' THEN '1' ELSE '0' END || substr({column}, 2))"


EDITS = {
    "memories.created_at": (
        "memories",
        "UPDATE memories SET created_at = created_at + 1 WHERE memory_id = '{otter}'",
    ),
    "memories.author_agent_id": (
        "memories",
        "UPDATE memories SET author_agent_id = 'lowbie' WHERE memory_id = '{otter}'",
    ),
    "outcomes.created_at": (
        "outcomes",
        "UPDATE outcomes SET created_at = created_at - 1 WHERE memory_id = '{otter}'",
    ),
    "recall_receipts.merkle_root": (
        "recall_receipts",
        f"UPDATE recall_receipts SET merkle_root = {flip_hex('merkle_root')} WHERE receipt_id = '{{receipt_lowbie}}'",
    ),
    "request_nonces.request_hash": (
        "request_nonces",
        f"UPDATE request_nonces SET request_hash = {flip_hex('request_hash')}"
        " WHERE rowid = (SELECT MIN(rowid) FROM request_nonces WHERE agent_id = 'lowbie')",
    ),
    "identity_epochs.other_brains_housekeeper": (
        "identity_epochs",
        "INSERT INTO identity_epochs SELECT * FROM other.identity_epochs WHERE agent_id = 'housekeeper'",
    ),
    "identity_epochs.other_brains_agent": (
        "identity_epochs",
        "INSERT INTO identity_epochs SELECT * FROM other.identity_epochs WHERE agent_id = 'cli'",
    ),
    "memory_provenance.company_id": (
        "memory_provenance",
        "UPDATE memory_provenance SET company_id = 'personam' WHERE memory_id = '{otter}'",
    ),
    "brain_meta.brain_name": (
        "brain_meta",
        "UPDATE brain_meta SET value = value || 's' WHERE key = 'brain_name'",
    ),
}


@pytest.mark.parametrize("case", list(EDITS))
def test_one_column_edited_is_named_by_verify(
    home: Path, ids: dict[str, str], other_brain: Path, case: str
) -> None:
    table, sql = EDITS[case]
    before = f"ATTACH '{other_brain / BRAIN}' AS other" if "other." in sql else ""
    attack(home, sql.format(**ids), table, before=before)
    _, failures = verify()
    if sql.startswith("INSERT"):  # after the newest sealed row: beyond every seal
        assert_failure(failures, "row_unsealed", table)
    else:
        assert_failure(failures, "row_altered", table)
    if table == "identity_epochs":  # and a request refuses at once, even with the epoch's key at hand
        agent = "housekeeper" if "housekeeper" in case else "cli"
        ours = next((home / "state" / "keys").iterdir())
        for key in (other_brain / "state" / "keys").rglob(f"{agent}@*"):
            shutil.copy2(key, ours / key.name)
        refused(run_aimos("recall", "otter boathouse"), INTEGRITY, "identity_epochs")


# --- 7. the search index ---------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["deleted", "injected"])
def test_search_index_edit_is_named_and_rebuilt(
    home: Path, ids: dict[str, str], how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIMOS_MEANING", "off")  # recall by words alone: what the index edit hides
    otter, lynx = rowid_of(home, ids["otter"]), rowid_of(home, ids["lynx"])
    if how == "deleted":  # the otter vanishes from recall
        attack(home, f"DELETE FROM memory_fts WHERE rowid = {otter}")
        assert ids["otter"] not in recall_ids("otter boathouse")
        named = ids["otter"]
    else:  # the lynx note answers for the otter
        attack(home, f"INSERT INTO memory_fts (rowid, text) VALUES ({lynx}, 'otter boathouse otter')")
        named = ids["lynx"]
    result, failures = verify()
    assert_failure(failures, "search_index_mismatch", "memory_fts", named)
    assert "aimos index rebuild" in result.err and "warning:" not in result.err, result.describe()
    rebuilt = run_aimos("index", "rebuild").ok()  # the next command still says what verify found
    assert "warning: `aimos verify` on " in rebuilt.err, rebuilt.describe()
    assert "(search_index_mismatch in memory_fts)" in rebuilt.err, rebuilt.describe()
    verify(expect=OK)
    assert recall_ids("otter boathouse")[:1] == [ids["otter"]]


NIGHTLY_WARNING = (
    "warning: the nightly verify on {day} found the brain does not verify (search_index_mismatch in "
    "memory_fts): run `aimos verify` to see what differs"
)


def test_search_index_edit_found_at_night_reaches_the_next_command(
    home: Path, ids: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No request re-checks the search indexes: a memory's index row deleted, recall no longer finds
    it and nothing says so. The nightly job's full verification finds it, and from then on every
    command ends with one warning on stderr (stdout, JSON included, untouched), `aimos status` shows
    the verify FAILED and `aimos doctor` fails it (exit 5), until a repair verifies."""
    monkeypatch.setenv("AIMOS_MEANING", "off")  # recall by words alone: what the index edit hides
    otter = rowid_of(home, ids["otter"])
    attack(home, f"DELETE FROM memory_fts WHERE rowid = {otter}")
    assert ids["otter"] not in recall_ids("otter boathouse")  # hidden, and no request notices
    assert "warning" not in run_aimos("list").ok().err

    run = run_aimos("housekeeper", "run-job", "nightly-dream", "--json").ok().json()
    assert run["status"] == "ATTENTION" and run["result"]["verified"] is False, run
    day = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(run["started_at"]))
    warning = NIGHTLY_WARNING.format(day=day)
    listed = run_aimos("list", "--json").ok()
    assert listed.err.splitlines() == [warning], listed.describe()
    assert {m["memory_id"] for m in json.loads(listed.out)["memories"]} >= {ids["otter"]}  # stdout still JSON
    recalled = run_aimos("recall", "lynx enclosure").ok()
    assert recalled.err.splitlines()[-1] == warning, recalled.describe()
    notice = home / "state" / "verify-failed.json"  # what the warning comes from: no memory in it
    assert notice.stat().st_mode & 0o777 == 0o600
    assert ids["otter"] not in notice.read_text() and "otter" not in notice.read_text()

    status = run_aimos("status").ok()
    assert f"verify       FAILED: {warning[len('warning: ') :]}" in status.out, status.describe()
    assert json.loads(run_aimos("status", "--json").ok().out)["last_verify"]["ok"] is False
    doctor = run_aimos("doctor")
    assert doctor.code == INTEGRITY, doctor.describe()
    failed = [text for text in doctor.out.splitlines() if text.startswith("fail  verify")]
    assert len(failed) == 1 and "search_index_mismatch in memory_fts" in failed[0], doctor.describe()
    assert "fix: aimos verify" in doctor.out, doctor.describe()

    # a verify against a fingerprint given by hand, not the anchored one, keeps no outcome
    other = run_aimos("verify", "--master-fingerprint", "0" * 64)
    assert other.code == VERIFY_FAILED, other.describe()
    assert json.loads(notice.read_text())["by"] == "nightly"
    # a repair the nightly job has not seen yet: `aimos verify` passing clears it
    run_aimos("index", "rebuild").ok()
    result, _ = verify(expect=OK)
    assert "warning" not in result.err, result.describe()
    assert not notice.exists()
    assert "warning" not in run_aimos("list").ok().err
    status = run_aimos("status").ok()
    assert "verify       ok: `aimos verify` on " in status.out, status.describe()
    doctor = run_aimos("doctor")
    assert any(text.startswith("ok    verify") for text in doctor.out.splitlines()), doctor.describe()
    assert doctor.code == OK, doctor.describe()
    assert recall_ids("otter boathouse")[:1] == [ids["otter"]]


# --- 8. guard triggers ------------------------------------------------------------------------------
def test_dropped_guard_triggers_are_named(home: Path) -> None:
    attack(home, "SELECT 1", "memories", "agent_revocations", recreate=False)
    _, failures = verify()
    for name in ("memories_no_delete", "memories_no_update", "agent_revocations_no_delete"):
        assert_failure(failures, "schema_object_missing", None, name)


@pytest.mark.parametrize(
    "sql",
    [
        "REPLACE INTO epistemic_fingerprints (memory_id, company_id, fingerprint, created_at)"
        " VALUES ('{after}', 'personal', 'forged', 1)",
        "REPLACE INTO memory_supersessions (old_memory_id, new_memory_id, company_id, binding_mutation_hash,"
        " created_at) SELECT old_memory_id, '{lynx}', company_id, binding_mutation_hash, created_at"
        " FROM memory_supersessions WHERE old_memory_id = '{owl}'",
        "INSERT INTO memory_supersessions (old_memory_id, new_memory_id, company_id, binding_mutation_hash,"
        " created_at) VALUES ('{lynx}', '{otter}', 'personal', 'ab', 1)",
    ],
    ids=["replace-fingerprint", "replace-supersession", "insert-supersession"],
)
def test_plain_connection_cannot_append(home: Path, ids: dict[str, str], sql: str) -> None:
    before = snapshot(home)
    proc = sqlite(home / BRAIN, sql.format(**ids))
    assert proc.returncode != 0 and "no such function" in proc.stderr, proc.stdout + proc.stderr
    # the sqlite3 shell (3.40) leaves an empty WAL and its index behind; the brain is as it was
    wal = Path(f"{home / BRAIN}-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    after = snapshot(home)
    assert (after.counts, after.brain_sha256) == (before.counts, before.brain_sha256)
    verify(expect=OK)


# --- 9. a label taken back -------------------------------------------------------------------------
def unconfirm(home: Path, ids: dict[str, str], how: str) -> None:
    """Take back the poison confirmation and reset the memory's label to what it was before.
    ``deleted``: its classification row and its event deleted (neither is the newest of its table).
    ``moved``: both moved to another memory (the victim's note), so every table keeps its row count."""
    poison, other = ids["poison"], ids["victim_note"]
    if how == "deleted":
        sql = (
            "DELETE FROM events WHERE event_id = (SELECT authority_event_id FROM memory_classifications"
            f" WHERE memory_id = '{poison}' ORDER BY rowid DESC LIMIT 1);\n"
            "DELETE FROM memory_classifications WHERE rowid = (SELECT MAX(rowid) FROM memory_classifications"
            f" WHERE memory_id = '{poison}')"
        )
    else:
        sql = (
            f"UPDATE events SET subject_memory_id = '{other}' WHERE event_id = (SELECT authority_event_id"
            f" FROM memory_classifications WHERE memory_id = '{poison}' ORDER BY rowid DESC LIMIT 1);\n"
            f"UPDATE memory_classifications SET memory_id = '{other}' WHERE rowid = (SELECT MAX(rowid)"
            f" FROM memory_classifications WHERE memory_id = '{poison}')"
        )
    sql += f";\nUPDATE memories SET epistemic_label = 'unverified' WHERE memory_id = '{poison}'"
    attack(home, sql, "events", "memory_classifications", "memories")


@pytest.mark.parametrize("how", ["deleted", "moved"])
def test_confirmed_poison_relabelled_in_the_file_is_named_by_verify(
    home: Path, ids: dict[str, str], how: str
) -> None:
    unconfirm(home, ids, how)
    _, failures = verify()
    reason = "row_missing" if how == "deleted" else "row_altered"
    assert_failure(failures, reason, "memory_classifications")
    assert_failure(failures, reason, "events")


@pytest.mark.parametrize("how", ["deleted", "moved"])
def test_confirmed_poison_relabelled_in_the_file_fails_the_recall_closed(
    home: Path, ids: dict[str, str], how: str
) -> None:
    assert ids["poison"] not in run_aimos("recall", "ferry island free sundays").ok().out
    unconfirm(home, ids, how)
    before = snapshot(home)
    result = run_aimos("recall", "ferry island free sundays")
    # fails closed: the poison's text is not disclosed (an integrity error may name its id, SPEC 8)
    refused(result, INTEGRITY, never=(POISON,))
    after = snapshot(home)
    grown = {t: n - before.counts.get(t, 0) for t, n in after.counts.items() if n != before.counts.get(t, 0)}
    # nothing but, when the per-memory check caught it, the signed recall_disclosure_failed event
    assert grown in ({}, {"events": 1}), grown


# --- 10. the seal chain ----------------------------------------------------------------------------
SEAL_EDITS = {
    "newest-seal-deleted": (
        "brain_seals",
        "DELETE FROM brain_seals WHERE seq = (SELECT MAX(seq) FROM brain_seals)",
        {"seal_heads_mismatch", "brain_rolled_back"},
    ),
    "newest-signature-edited": (
        "brain_seals",
        "UPDATE brain_seals SET signature = (SELECT signature FROM brain_seals WHERE seq = 1)"
        " WHERE seq = (SELECT MAX(seq) FROM brain_seals)",
        {"brain_seal_signature_invalid"},
    ),
    "older-signature-edited": (
        "brain_seals",
        "UPDATE brain_seals SET signature = (SELECT signature FROM brain_seals WHERE seq = 1) WHERE seq = 3",
        {"seal_chain_break"},
    ),
    "seal-heads-chain-edited": (
        "seal_heads",
        "UPDATE seal_heads SET chain = (SELECT chain FROM seal_heads WHERE table_name = 'events')"
        " WHERE table_name = 'memories'",
        {"seal_heads_mismatch"},
    ),
    "seal-heads-max-rowid-raised": (
        "seal_heads",
        "UPDATE seal_heads SET max_rowid = max_rowid + 1, row_count = row_count + 1 WHERE table_name = 'memories'",
        {"seal_heads_mismatch"},
    ),
}


@pytest.mark.parametrize("case", list(SEAL_EDITS))
def test_seal_chain_edits_fail_verify(home: Path, case: str) -> None:
    table, sql, reasons = SEAL_EDITS[case]
    attack(home, sql, table)
    _, failures = verify()
    assert {f["reason"] for f in failures} & reasons, failures


@pytest.mark.parametrize("case", [c for c in SEAL_EDITS if not c.startswith("older")])
def test_seal_chain_edits_refuse_writes(home: Path, case: str) -> None:
    table, sql, reasons = SEAL_EDITS[case]
    attack(home, sql, table)
    before = snapshot(home)
    result = run_aimos("save", "written over a broken seal chain")
    refused(result, INTEGRITY)
    assert any(r in result.err for r in reasons), result.describe()
    assert_unchanged(home, before)


def test_an_older_seal_edited_stays_found_after_more_writes(home: Path) -> None:
    """A write checks the newest seal and the link to the one before it, not the whole chain (that
    is verify's walk): an older seal's edited signature does not stop a save, whose seal still
    signs the true state (the seal heads), and verify keeps naming the break afterwards."""
    table, sql, reasons = SEAL_EDITS["older-signature-edited"]
    attack(home, sql, table)
    save("written over an older broken link")
    _, failures = verify()
    assert {f["reason"] for f in failures} & reasons, failures


def test_the_seal_before_the_newest_is_checked_by_every_write(home: Path) -> None:
    attack(
        home,
        "UPDATE brain_seals SET signature = (SELECT signature FROM brain_seals WHERE seq = 1)"
        " WHERE seq = (SELECT MAX(seq) - 1 FROM brain_seals)",
        "brain_seals",
    )
    before = snapshot(home)
    result = run_aimos("save", "written over a broken last link")
    refused(result, INTEGRITY)
    assert "seal_chain_break" in result.err, result.describe()
    assert_unchanged(home, before)


# --- 11. the positive control ----------------------------------------------------------------------
def next_second() -> None:
    start = int(time.time())
    while int(time.time()) == start:
        time.sleep(0.05)


def test_untouched_brain_verifies_after_every_normal_command(home: Path, ids: dict[str, str]) -> None:
    run_aimos("housekeeper", "run-job", "nightly-dream").ok()
    backup = sorted((home / "backups").glob("brain-*.sqlite3"))[-1]
    kite = save("the red kite circles over the ridge")
    kite2 = run_aimos("correct", kite, "the red kite circles over the north ridge").ok().out.strip()
    assert recall_ids("red kite ridge") == [kite2]
    run_aimos("feedback", kite2, "--bad").ok()
    run_aimos("label", kite2, "support", "--reason", "seen it twice").ok()
    run_aimos("label", ids["lynx"], "dispute", "--reason", "the zones were renumbered").ok()
    run_aimos("agent", "enroll", "scout", "--clearance", "4").ok()
    next_second()
    run_aimos("agent", "rotate", "scout").ok()
    next_second()
    save("the scout saw a hare at dawn", "--agent", "scout", "--clearance", "3")
    run_aimos("agent", "revoke", "scout").ok()
    run_aimos("agent", "list").ok()
    verify(expect=OK)
    assert run_aimos("status").code == OK
    restored = run_aimos("restore", backup.name, "--yes")
    assert restored.code == OK, restored.describe()
    verify(expect=OK)
    save("the first save after the restore")
    run_aimos("agent", "list").ok()
    assert run_aimos("status").code == OK
    verify(expect=OK)


def test_injected_epoch_without_its_key_is_refused_as_integrity(home: Path, other_brain: Path) -> None:
    attack(
        home,
        "INSERT INTO identity_epochs SELECT * FROM other.identity_epochs WHERE agent_id = 'housekeeper'",
        "identity_epochs",
        before=f"ATTACH '{other_brain / BRAIN}' AS other",
    )
    before = snapshot(home)
    refused(run_aimos("recall", "otter boathouse"), INTEGRITY, "identity_epochs")
    assert_unchanged(home, before)
