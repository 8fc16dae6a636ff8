"""`aimos redact` reaches every copy aimos made and every field that names the memory: a backup
written with `aimos backup --to DIR` is recorded (outside the brain) and cleaned by `redact
--backups` like the nightly ones; a recorded backup that was moved, deleted or replaced is named
(exit 1) and `aimos backup forget` drops it; the memory's key and source leave the brain, its
backups and both search indexes with its text (`--keep-key` keeps the key), so recalling the key's
words no longer finds it; and the seals, both verifiers and a restore from an older backup agree.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.cli import BRAIN, UUID_RE, indexed_terms, parse_json, run_aimos, sqlite, sqlite_value

pytestmark = pytest.mark.timeout(300)

FAILURE = 1
KEY = "quokka wifi"
SOURCE = "zanzibar-trip-notes"
TEXT = "The router sits behind the bookshelf; its sticker names the network marsupialnet"
# what must not be left anywhere: a word of the key, of the source and of the text
TRACES = (b"quokka", b"zanzibar", b"marsupialnet")


def _save(text: str = TEXT, key: str = KEY, source: str = SOURCE) -> str:
    result = run_aimos("save", text, "--key", key, "--source", source).ok()
    assert UUID_RE.match(result.out.strip()), result.describe()
    return result.out.strip()


def _redact(mid: str, *args: str) -> Any:
    return run_aimos("redact", mid[:8], "--reason", "the wifi note", *args, input=f"redact {mid[:8]}\n")


def _backup_to(folder: Path) -> Path:
    made = parse_json(run_aimos("backup", "--to", str(folder), "--json"))
    return Path(made["path"]).resolve()


def _file_bytes(path: Path) -> bytes:
    """The file with its WAL and shared-memory files, as an attacker with the folder reads them."""
    data = b""
    for suffix in ("", "-wal", "-shm", "-journal"):
        side = Path(f"{path}{suffix}")
        if side.exists():
            data += side.read_bytes()
    return data


def _traces(path: Path) -> list[bytes]:
    data = _file_bytes(path)
    return [t for t in TRACES if t in data]


def _verified() -> None:
    report = parse_json(run_aimos("verify", "--json"))
    assert report["ok"] and report["in_database"]["ok"], report
    assert report["portable"]["verdict"] == "valid" and report["parity"] and report["brain"]["ok"], report


def _recalled(query: str) -> list[str]:
    return [r["memory_id"] for r in parse_json(run_aimos("recall", query, "--json"))["results"]]


def test_a_backup_written_to_another_folder_is_redacted_too(installed: Path, tmp_path: Path) -> None:
    home = installed
    mid = _save()
    elsewhere = _backup_to(tmp_path / "usb-stick")
    assert elsewhere.parent == (tmp_path / "usb-stick").resolve()
    assert _traces(elsewhere) == list(TRACES)

    done = _redact(mid)
    assert done.code == 0, done.describe()
    # named as still holding the text, though it is not in the brain's backups folder
    assert "1 backup still holds this memory's text" in done.err and str(elsewhere) in done.err, (
        done.describe()
    )
    assert _traces(home / BRAIN) == []

    cleaned = parse_json(_redact(mid, "--backups", "--json"))
    assert cleaned["backups_redacted"] == [str(elsewhere)], cleaned
    assert cleaned["backups_unreached"] == [], cleaned
    assert _traces(elsewhere) == [], "the backup written with --to still holds the text, key or source"

    # the cleaned backup is still a brain that verifies: restored, it holds no trace either
    restored = run_aimos("restore", str(elsewhere), "--yes", "--json").json()
    assert restored["redactions_reapplied"] == []
    assert _traces(home / BRAIN) == []
    _verified()


def test_the_key_and_source_leave_the_brain_and_both_indexes(installed: Path) -> None:
    home = installed
    mid = _save()
    turn = _save("We talked about the trip", key="quokka wifi chat", source="cli")
    run_aimos("housekeeper", "run-job", "nightly-dream").ok()  # a backup in the brain's own folder
    assert mid in _recalled(KEY)
    assert {"quokka", "wifi"} <= indexed_terms(home / BRAIN)

    assert _redact(mid).code == 0
    detail = parse_json(run_aimos("show", mid[:8], "--json"))
    assert detail["value"] == "" and detail["key"] is None and detail["source"] == "", detail
    assert detail["redacted"].endswith("the wifi note")
    # recall of the key's words no longer finds it (the other memory with those words still is)
    found = _recalled(KEY)
    assert mid not in found and turn in found, found
    assert {"quokka", "wifi"} <= indexed_terms(home / BRAIN)  # the other memory's key
    body = json.loads(
        sqlite_value(
            home / BRAIN,
            "SELECT body_json FROM memory_provenance p JOIN memories m"
            f" ON m.save_provenance_id = p.provenance_id WHERE m.memory_id = '{mid}'",
        )
    )
    assert body["value"] is None and body["key"] is None and body["source"] is None, body
    _verified()

    # the nightly backup is cleaned of all three, and still verifies as a restorable brain
    nightly = sorted((home / "backups").glob("brain-*.sqlite3"))[0]
    assert b"marsupialnet" in _file_bytes(nightly)
    assert _redact(mid, "--backups").code == 0
    assert _traces(nightly) == [b"quokka"]  # the other memory's key
    assert (
        sqlite_value(
            nightly,
            f"SELECT COUNT(*) FROM memories WHERE memory_id = '{mid}' AND key IS NULL"
            " AND source = '' AND value = ''",
        )
        == "1"
    )
    run_aimos("restore", nightly.name, "--yes").ok()
    _verified()


def test_keep_key_keeps_the_key_alone(installed: Path) -> None:
    home = installed
    mid = _save()
    done = parse_json(_redact(mid, "--keep-key", "--json"))
    assert done["key_kept"] is True, done
    detail = parse_json(run_aimos("show", mid[:8], "--json"))
    assert detail["value"] == "" and detail["key"] == KEY and detail["source"] == "", detail
    data = _file_bytes(home / BRAIN)
    assert b"marsupialnet" not in data and b"zanzibar" not in data and b"quokka" in data
    # the key still finds it, as a redacted memory; the text's words do not
    hit = next(r for r in parse_json(run_aimos("recall", KEY, "--json"))["results"] if r["memory_id"] == mid)
    assert hit["value"] == "" and hit["redacted"]
    assert "[redacted by the master" in run_aimos("recall", KEY).ok().out
    assert mid not in _recalled("marsupialnet")
    _verified()


def test_the_guards_allow_only_what_the_record_removes(installed: Path) -> None:
    """Without the master's record no key or source may change (migration 13's triggers, the
    file edited with the sqlite3 shell, triggers in place); a --keep-key record lets the key stay
    and nothing else."""
    home = installed
    kept = _save()
    other = _save("The boiler is serviced every October by Dana", key="boiler", source="cli")
    assert _redact(kept, "--keep-key").code == 0
    attempts = {
        f"UPDATE memories SET key = NULL WHERE memory_id = '{kept}'": "only the master's redaction removes a key",
        f"UPDATE memories SET key = NULL WHERE memory_id = '{other}'": "only the master's redaction removes a key",
        f"UPDATE memories SET source = '' WHERE memory_id = '{other}'": "removes a source",
        f"UPDATE memories SET source = 'elsewhere' WHERE memory_id = '{kept}'": "removes a source",
        "UPDATE memory_provenance SET body_json = json_replace(body_json, '$.key', json('null'))"
        f" WHERE memory_id = '{kept}' AND event_type = 'SAVE'": "append-only",
    }
    for sql, expected in attempts.items():
        refused = sqlite(home / BRAIN, sql)
        assert refused.returncode != 0 and expected in refused.stderr, (sql, refused.stderr)
    assert sqlite_value(home / BRAIN, f"SELECT key FROM memories WHERE memory_id = '{kept}'") == KEY
    _verified()


def test_a_restore_from_an_older_backup_removes_the_key_again(installed: Path, tmp_path: Path) -> None:
    home = installed
    mid = _save()
    older = _backup_to(tmp_path / "before")
    assert _redact(mid).code == 0
    # a copy of the older backup that `redact --backups` never reached: restore redacts it again
    shutil.copyfile(older, tmp_path / "copy.sqlite3")
    restored = run_aimos("restore", str(tmp_path / "copy.sqlite3"), "--yes")
    assert restored.code == 0, restored.describe()
    assert f"({mid})" in restored.out
    assert _traces(home / BRAIN) == []
    assert mid not in _recalled(KEY)
    _verified()


def test_a_brain_restored_from_an_older_backup_knows_the_later_ones(installed: Path, tmp_path: Path) -> None:
    """The record of backups is kept outside the brain: after a restore from an older backup, a
    backup written after that one is still reached."""
    mid = _save()
    older = _backup_to(tmp_path / "monday")
    _save("The boiler is serviced every October by Dana", key="boiler", source="cli")
    later = _backup_to(tmp_path / "friday")
    run_aimos("restore", str(older), "--yes").ok()
    [replaced] = installed.glob(f"{BRAIN}.replaced-*[0-9]Z")  # the brain the restore kept beside it
    cleaned = parse_json(_redact(mid, "--backups", "--json"))
    assert sorted(cleaned["backups_redacted"]) == sorted([str(older), str(later), str(replaced)]), cleaned
    assert _traces(older) == [] and _traces(later) == [] and _traces(replaced) == []
    _verified()


def test_a_moved_deleted_or_replaced_backup_is_named(installed: Path, tmp_path: Path) -> None:
    home = installed
    mid = _save()
    moved = _backup_to(tmp_path / "one")
    deleted = _backup_to(tmp_path / "two")
    replaced = _backup_to(tmp_path / "three")
    kept = _backup_to(tmp_path / "four")
    shutil.move(moved, tmp_path / "moved-away.sqlite3")
    deleted.unlink()
    _save("The boiler is serviced every October by Dana", key="boiler", source="cli")
    # another copy of the brain (a later state, not the backup aimos wrote there) in its place
    later = _backup_to(tmp_path / "five")
    shutil.copyfile(later, replaced)
    replaced_bytes = replaced.read_bytes()

    done = _redact(mid, "--backups")
    assert done.code == FAILURE, done.describe()
    assert f"removed its text from backup {kept}" in done.out, done.describe()
    for path in (moved, deleted, replaced):
        assert str(path) in done.err, (path, done.describe())
    assert "missing" in done.err and "not the backup aimos wrote" in done.err, done.describe()
    assert replaced.read_bytes() == replaced_bytes  # not aimos's file: left as it is
    assert _traces(kept) == [] and _traces(later) == []
    assert _traces(home / BRAIN) == []  # the brain itself is redacted whatever the backups

    as_json = parse_json_failure(_redact(mid, "--backups", "--json"))
    unreached = {u["path"]: u["why"] for u in as_json["backups_unreached"]}
    assert set(unreached) == {str(moved), str(deleted), str(replaced)}, as_json

    # the person says which are gone for good; the rest they put back, and the run is clean
    for path in (deleted, replaced):
        run_aimos("backup", "forget", str(path)).ok()
    shutil.move(tmp_path / "moved-away.sqlite3", moved)
    again = _redact(mid, "--backups")
    assert again.code == 0, again.describe()
    assert f"removed its text from backup {moved}" in again.out
    assert _traces(moved) == []
    unknown = run_aimos("backup", "forget", str(tmp_path / "never-made.sqlite3"))
    assert unknown.code == 3 and "no backup recorded at" in unknown.err, unknown.describe()


def parse_json_failure(result: Any) -> dict[str, Any]:
    """The JSON a command printed before it exited 1."""
    assert result.code == FAILURE, result.describe()
    document: dict[str, Any] = json.loads(result.out)
    return document


def test_the_record_of_backups_is_private_and_holds_no_text(installed: Path, tmp_path: Path) -> None:
    home = installed
    _save()
    elsewhere = _backup_to(tmp_path / "usb-stick")
    run_aimos("housekeeper", "run-job", "nightly-dream").ok()
    found = list(home.glob("backups-*.jsonl"))
    assert len(found) == 1, sorted(p.name for p in home.iterdir())
    ledger = found[0]
    assert ledger.stat().st_mode & 0o777 == 0o600
    text = ledger.read_text()
    assert not [t for t in TRACES if t.decode() in text]
    entries = [json.loads(line) for line in text.splitlines() if line.strip()]
    paths = [e["path"] for e in entries]
    nightly = sorted((home / "backups").glob("brain-*.sqlite3"))[0]
    assert paths == [str(elsewhere), str(nightly.resolve())], entries
    assert all(e["seal"]["seq"] >= 1 and len(e["seal"]["link"]) == 64 for e in entries), entries


def test_the_brain_a_restore_replaced_is_reached_like_a_backup(installed: Path, tmp_path: Path) -> None:
    """`aimos restore` keeps the brain it replaced beside the brain (brain.sqlite3.replaced-<time>):
    a copy holding the text, which redact did not name and --backups did not clean."""
    home = installed
    mid = _save()
    older = _backup_to(tmp_path / "older")
    _save("a later memory the restore drops", "later", "later-notes")
    run_aimos("restore", str(older), "--yes").ok()
    [replaced] = sorted(p for p in home.glob(f"{BRAIN}.replaced-*") if not p.name.endswith(("-wal", "-shm")))
    assert _traces(replaced) == list(TRACES)
    done = _redact(mid)
    assert done.code == 0, done.describe()
    assert str(replaced) in done.err, done.describe()  # named as still holding the text
    cleaned = parse_json(_redact(mid, "--backups", "--json"))
    assert str(replaced) in cleaned["backups_redacted"], cleaned
    assert _traces(replaced) == [], "the replaced brain still holds the text, key or source"
