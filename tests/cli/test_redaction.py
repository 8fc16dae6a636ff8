"""`aimos redact` through the real CLI: the text (with its key and source) leaves the brain file,
its WAL and its search indexes; every proof stays and both verifiers, parity and the seals pass;
show, list, recall, MCP-style JSON and receipts say who redacted it; a backup taken before is
reported and can be cleaned; a restore from an older backup redacts again; and the attacks: a wrong confirmation or passphrase
changes nothing, a deleted, forged or edited record or a text put back fails verification.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.cli import (
    BRAIN,
    UUID_RE,
    assert_unchanged,
    indexed_terms,
    parse_json,
    run_aimos,
    snapshot,
    sqlite,
    sqlite_value,
)

pytestmark = pytest.mark.timeout(300)

USAGE, VERIFICATION_FAILED, PASSPHRASE = 2, 4, 6
TOKEN = "quokkamarmalade"  # one word, so the search index holds it as a term
SECRET_TEXT = f"The spare key hides under the blue flowerpot by the {TOKEN} shed"


def _save(text: str, *args: str) -> str:
    result = run_aimos("save", text, *args).ok()
    assert UUID_RE.match(result.out.strip()), result.describe()
    return result.out.strip()


def _redact(mid: str, reason: str = "where the key is", *args: str, confirm: str | None = None) -> Any:
    typed = f"redact {mid[:8]}" if confirm is None else confirm
    return run_aimos("redact", mid[:8], "--reason", reason, *args, input=typed + "\n")


def _verified() -> dict[str, Any]:
    report: dict[str, Any] = parse_json(run_aimos("verify", "--json"))
    assert report["ok"], report
    assert report["in_database"]["ok"] and report["portable"]["verdict"] == "valid", report
    assert report["parity"] and report["brain"]["ok"], report
    return report


def _bytes_of(home: Path) -> bytes:
    data = b""
    for suffix in ("", "-wal", "-shm"):
        path = home / f"{BRAIN}{suffix}"
        if path.exists():
            data += path.read_bytes()
    return data


def _indexed_terms(home: Path) -> set[str]:
    terms = indexed_terms(home / BRAIN)
    assert "spare" in terms  # the other memories' words are there
    return terms


def test_redaction_end_to_end(installed: Path) -> None:
    home = installed
    turns = [
        _save(text, "--type", "dialog_turn", "--source", "chat-with-ana", "--key", "garden")
        for text in (
            "Ana asked where we keep the spare key",
            SECRET_TEXT,
            "Ana said thanks, she will water them",
        )
    ]
    mid = turns[1]
    recalled = parse_json(run_aimos("recall", "spare key flowerpot", "--json"))
    assert mid in [r["memory_id"] for r in recalled["results"]]
    receipt = recalled["receipt"]["receipt_id"]
    run_aimos("feedback", mid[:8], "--good", "--receipt", receipt).ok()
    run_aimos("housekeeper", "run-job", "nightly-dream").ok()  # a backup that holds the text
    assert TOKEN.encode() in _bytes_of(home)
    assert [t for t in _indexed_terms(home) if t.startswith(TOKEN[:12])]  # stemmed, it is there

    done = _redact(mid)
    assert done.code == 0, done.describe()
    assert f"memory {mid}: redacted by the master at " in done.out and "where the key is" in done.out
    assert "signed redaction record" in done.out
    assert "1 backup still holds this memory's text" in done.err, done.describe()
    assert TOKEN not in done.both

    # gone from the brain file, its WAL and both search indexes
    assert TOKEN.encode() not in _bytes_of(home)
    assert not [t for t in _indexed_terms(home) if t.startswith(TOKEN[:12])]
    assert sqlite_value(home / BRAIN, f"SELECT value FROM memories WHERE memory_id = '{mid}'") == ""
    # the neighbouring turns keep their own text and context
    assert (
        sqlite_value(
            home / BRAIN,
            f"SELECT COUNT(*) FROM memories WHERE memory_id = '{turns[2]}' AND value LIKE '%water them%'",
        )
        == "1"
    )

    report = _verified()
    assert report["in_database"]["memories"] >= 3
    run_aimos("receipt", "verify", receipt).ok()

    shown = run_aimos("show", mid[:8]).ok()
    assert shown.out.splitlines()[0].startswith("[redacted by the master at ")
    detail = parse_json(run_aimos("show", mid[:8], "--json"))
    assert detail["value"] == "" and detail["redacted"].startswith("redacted by the master at ")
    assert detail["live_content_hash"] and detail["save_mutation_hash"]  # the proofs stay
    listed = run_aimos("list").ok()
    assert "[redacted by the master" in listed.out
    # its key went with its text (tests/cli/test_redaction_reach.py: --keep-key keeps it); the
    # other turns keep theirs
    again = [r["memory_id"] for r in parse_json(run_aimos("recall", "garden", "--json"))["results"]]
    assert mid not in again and {turns[0], turns[2]} & set(again), again
    assert not [
        r for r in parse_json(run_aimos("recall", TOKEN, "--json"))["results"] if r["memory_id"] == mid
    ]

    # the ledger records it, without the text
    events = sqlite(
        home / BRAIN, "SELECT signed_body FROM events WHERE operation = 'memory_redacted'", "-readonly"
    )
    body = json.loads(events.stdout.strip())
    assert body["metadata"]["memory_id"] == mid and TOKEN not in events.stdout

    # the backup: reported, then cleaned in place, and still a valid brain to restore
    backup = sorted((home / "backups").glob("brain-*.sqlite3"))[0]
    assert TOKEN.encode() in backup.read_bytes()
    cleaned = _redact(mid, "where the key is", "--backups")
    assert cleaned.code == 0, cleaned.describe()
    assert f"removed its text from backup {backup}" in cleaned.out
    assert TOKEN.encode() not in backup.read_bytes()
    assert not Path(f"{backup}-wal").exists() or TOKEN.encode() not in Path(f"{backup}-wal").read_bytes()
    restored = run_aimos("restore", backup.name, "--json").json()
    assert restored["redactions_reapplied"] == []  # the backup already holds the redaction
    assert TOKEN.encode() not in _bytes_of(home)
    _verified()


def test_a_restore_from_an_older_backup_redacts_again(installed: Path) -> None:
    home = installed
    mid = _save(SECRET_TEXT, "--key", "spare-key")
    run_aimos("housekeeper", "run-job", "nightly-dream").ok()
    backup = sorted((home / "backups").glob("brain-*.sqlite3"))[0]
    assert _redact(mid).code == 0
    restored = run_aimos("restore", backup.name)
    assert restored.code == 0, restored.describe()
    assert (
        f"redacted again: 1 memory text the master redacted after this backup was made ({mid})"
        in restored.out
    )
    assert TOKEN.encode() not in _bytes_of(home)
    assert parse_json(run_aimos("show", mid[:8], "--json"))["redacted"]
    _verified()
    # the records kept outside the brain hold no text
    kept = list(home.rglob("redactions-*.json"))
    assert len(kept) == 1 and mid in kept[0].read_text() and TOKEN not in kept[0].read_text()
    assert kept[0].stat().st_mode & 0o077 == 0


def test_refusals_change_nothing(installed: Path, tmp_path: Path) -> None:
    home = installed
    mid = _save(SECRET_TEXT)
    before = snapshot(home)

    wrong = _redact(mid, confirm="redact yes")
    assert wrong.code == USAGE and "confirmation did not match" in wrong.err, wrong.describe()
    assert_unchanged(home, before)

    bad_pass = tmp_path / "wrong"
    bad_pass.write_text("not the passphrase at all\n")
    bad_pass.chmod(0o600)
    wrong_pass = run_aimos(
        "redact",
        mid[:8],
        "--reason",
        "x",
        input=f"redact {mid[:8]}\n",
        env={"AIMOS_PASSPHRASE_FILE": str(bad_pass)},
    )
    assert wrong_pass.code == PASSPHRASE and "wrong master passphrase" in wrong_pass.err, (
        wrong_pass.describe()
    )
    assert_unchanged(home, before)

    for reason in ("", "   "):
        empty = _redact(mid, reason)
        assert empty.code == USAGE and "needs a reason" in empty.err, empty.describe()
    gated = _redact(mid, "password: hunter2-lighthouse")
    assert gated.code == USAGE and "secret" in gated.err and "hunter2" not in gated.both, gated.describe()
    unknown = run_aimos("redact", "ffffffff", "--reason", "x", input="redact ffffffff\n")
    assert unknown.code != 0 and "Traceback" not in unknown.both
    assert_unchanged(home, before)
    assert TOKEN.encode() in _bytes_of(home)

    assert _redact(mid).code == 0
    twice = _redact(mid)
    assert twice.code == USAGE and "already redacted" in twice.err, twice.describe()


def _raw(home: Path, sql: str) -> None:
    """Edit the brain as an attacker with the file would: the sqlite3 shell, triggers dropped."""
    result = sqlite(home / BRAIN, sql)
    assert result.returncode == 0, result.stderr


def _changed_with_its_hash(home: Path, mid: str, column: str, value: int) -> str:
    """SQL that sets the redacted memory's ``column`` and puts the changed row's seal row hash in
    its record's rows, as `after` (computed with aimos's own seal shapes, as an attacker can)."""
    import apsw

    from aimos.crypto.canonical import canonical_text, json_loads
    from aimos.store.seals import sealed_tables

    conn = apsw.Connection(str(home / BRAIN), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        shape = sealed_tables(conn)["memories"]
        (row,) = conn.execute(shape.select() + " WHERE memory_id = ?", (mid,)).fetchall()
        changed = list(row)
        changed[1 + [c for c, _ in shape.columns].index(column)] = value
        ((text,),) = conn.execute("SELECT record_json FROM memory_redactions WHERE memory_id = ?", (mid,))
    finally:
        conn.close()
    record = json_loads(text)
    assert changed != list(row) and record["rows"][0]["after"] == shape.row_hash(tuple(row)).hex()
    record["rows"][0]["after"] = shape.row_hash(tuple(changed)).hex()
    return (
        f" UPDATE memories SET {column} = {value} WHERE memory_id = '{mid}';"
        f" UPDATE memory_redactions SET record_json = '{canonical_text(record)}' WHERE memory_id = '{mid}';"
    )


def _verify_fails(*reasons: str) -> dict[str, Any]:
    result = run_aimos("verify", "--json")
    assert result.code == VERIFICATION_FAILED, result.describe()
    report: dict[str, Any] = json.loads(result.out)
    text = json.dumps(report)
    assert any(r in text for r in reasons), (reasons, text[:3000])
    return report


@pytest.mark.parametrize(
    "attack",
    [
        "delete the record",
        "forge the reason",
        "put the text back",
        "put the key back",
        "redact without the master",
        "change the redacted row and its rows' hashes",
    ],
)
def test_attacks_on_a_redaction_are_found(installed: Path, attack: str) -> None:
    home = installed
    mid = _save(SECRET_TEXT, "--key", "spare")
    other = _save("The boiler is serviced every October by Dana")
    if attack != "redact without the master":
        assert _redact(mid).code == 0
    run_aimos("verify").ok()
    drop = (
        "DROP TRIGGER memory_redactions_no_delete; DROP TRIGGER memory_redactions_no_update;"
        " DROP TRIGGER memories_no_update; DROP TRIGGER memory_provenance_no_update;"
        " DROP TRIGGER memory_redactions_verify_insert;"
    )
    if attack == "delete the record":
        _raw(home, drop + " DELETE FROM memory_redactions;")
        _verify_fails("row_altered")
    elif attack == "forge the reason":
        _raw(
            home,
            drop + " UPDATE memory_redactions SET record_json = replace(record_json, 'where the key is',"
            " 'nothing to see');",
        )
        _verify_fails("redaction_record_invalid")
    elif attack == "put the text back":
        _raw(home, drop + f" UPDATE memories SET value = 'The spare key is gone' WHERE memory_id = '{mid}';")
        _verify_fails("row_altered", "redacted_row_differs_from_record")
    elif attack == "put the key back":
        _raw(home, drop + f" UPDATE memories SET key = 'spare' WHERE memory_id = '{mid}';")
        _verify_fails("row_altered", "redacted_row_differs_from_record")
    elif attack == "change the redacted row and its rows' hashes":
        # the record's rows (rowids, seal row hashes) are the brain's own, outside the master's
        # signature (v3): the attacker changes the redacted row and writes its new hash there
        _raw(home, drop + _changed_with_its_hash(home, mid, "clearance_level", 11))
        _verify_fails("row_altered")
    else:  # an agent with the file empties another memory and copies in no valid record
        _raw(home, drop + f" UPDATE memories SET value = '' WHERE memory_id = '{other}';")
        _verify_fails("row_altered", "live_content_hash_mismatch")
    shown = run_aimos("show", mid[:8])
    assert shown.code != 0 or attack == "redact without the master", shown.describe()


def test_the_redacted_brain_copied_elsewhere_still_verifies_and_holds_no_text(
    installed: Path, tmp_path: Path
) -> None:
    home = installed
    mid = _save(SECRET_TEXT)
    assert _redact(mid).code == 0
    copy = tmp_path / "copy.sqlite3"
    shutil.copyfile(home / BRAIN, copy)
    assert TOKEN.encode() not in copy.read_bytes()
    assert int(sqlite_value(copy, "SELECT COUNT(*) FROM memory_redactions")) == 1


def test_a_record_of_another_brain_is_not_applied(installed: Path) -> None:
    """A redaction record copied from another brain (even one signed by this brain's master) is
    not applied to a copy: check_stored names the brain it belongs to."""
    from aimos.memory.redaction import check_stored, redactions
    from aimos.store.connection import open_reader

    mid = _save(SECRET_TEXT)
    assert _redact(mid).code == 0
    conn = open_reader(installed / BRAIN)
    try:
        stored = redactions(conn)[0]
        assert check_stored(conn, stored) is None
        record = json.loads(stored["record_json"])
        other = {**stored, "record_json": json.dumps({**record, "brain_id": "another"}, sort_keys=True)}
        assert check_stored(conn, other) is not None
    finally:
        conn.close()
