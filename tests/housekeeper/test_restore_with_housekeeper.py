"""`aimos restore` with a real running housekeeper, through the real CLI (issue 38, item 5): it is
stopped for the restore (said so) and started again after it; memories saved since the backup
are named and asked about (a pseudo-terminal), refused without a terminal unless --yes, and a
housekeeper that cannot be stopped, or a restore that fails after stopping it, changes nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support.cli import PASSPHRASE_ENV, Result, assert_refused, run_aimos
from support.housekeeper import hk, is_housekeeper, pid_alive, query, read_pid_file, wait_for
from support.installer import PtySession

pytestmark = pytest.mark.timeout(180)

LINE = "master passphrase read from {} (AIMOS_PASSPHRASE_FILE)"
BEFORE = ("restore-hk:kept", "The lighthouse keeper logs the tide at six")
AFTER = (
    ("restore-hk:late", "The harbour master moved the pilot boat to berth 4\nsecond line, not shown"),
    (None, "Buy rope for the dinghy before the spring tide"),
)


def start_housekeeper(reaper: Any) -> int:
    started = hk("start", "--json").json()
    reaper.watch(started["pid"])
    assert pid_alive(started["pid"]) and is_housekeeper(started["pid"]), started
    return int(started["pid"])


def save(key: str | None, text: str) -> str:
    return run_aimos("save", *(("--key", key) if key else ()), text).ok().out.strip()


def backup_now() -> str:
    return str(run_aimos("backup", "--json").json()["path"])


def memory_ids(home: Path) -> list[str]:
    return [r["memory_id"] for r in query(home, "SELECT memory_id FROM memories ORDER BY rowid")]


def restores(home: Path) -> int:
    return int(query(home, "SELECT COUNT(*) AS n FROM brain_restores")[0]["n"])


def replaced(home: Path) -> list[Path]:
    return sorted(home.glob("brain.sqlite3.replaced-*"))


def with_late_memories(installed: Path) -> tuple[str, str, list[str]]:
    """A memory, a backup, then two memories after it: (kept id, backup path, late ids)."""
    kept = save(*BEFORE)
    backup = backup_now()
    late = [save(key, text) for key, text in AFTER]
    return kept, backup, late


def assert_untouched(home: Path, ids: list[str], pid: int) -> None:
    """No restore happened: every memory is there, no record, no replaced brain; and the
    housekeeper was not stopped (the same process runs)."""
    assert memory_ids(home) == ids
    assert restores(home) == 0 and replaced(home) == []
    assert read_pid_file(home) == pid and pid_alive(pid), "the housekeeper was stopped"


def assert_names_the_late_memories(text: str, late: list[str]) -> None:
    assert "drops 2 memories saved since it was made" in text, text
    for mid, (key, body) in zip(late, AFTER, strict=True):
        row = next(line for line in text.splitlines() if mid in line)
        assert f"key {key or '-'}" in row and body.split("\n")[0] in row, row
    assert "second line, not shown" not in text, "more than the first line was shown"


def assert_restarted(result: Result, home: Path, old_pid: int, reaper: Any) -> int:
    assert f"stopping the housekeeper (pid {old_pid}) for the restore" in result.err, result.describe()
    new_pid = read_pid_file(home)
    assert new_pid and new_pid != old_pid, result.describe()
    reaper.watch(new_pid)
    assert f"started the housekeeper again (pid {new_pid})" in result.err, result.describe()
    assert not pid_alive(old_pid) and pid_alive(new_pid) and is_housekeeper(new_pid)
    status = hk("status", "--json").json()
    assert status["running"] and status["pid"] == new_pid, status
    return new_pid


def test_restore_stops_the_housekeeper_restores_and_starts_it_again(installed: Path, reaper: Any) -> None:
    kept = save(*BEFORE)
    backup = backup_now()
    pid = start_housekeeper(reaper)
    result = run_aimos("restore", backup).ok()
    assert "restored the brain from" in result.out, result.describe()
    assert "drops" not in result.err, "nothing was saved since the backup: nothing to ask"
    assert_restarted(result, installed, pid, reaper)
    assert restores(installed) == 1 and memory_ids(installed) == [kept]
    assert "if you stopped the housekeeper" not in result.err


def test_without_a_terminal_a_restore_that_drops_memories_is_refused_unless_yes(
    installed: Path, reaper: Any
) -> None:
    kept, backup, late = with_late_memories(installed)
    pid = start_housekeeper(reaper)
    ids = memory_ids(installed)
    refused = run_aimos("restore", backup)
    assert_refused(refused, 2, "--yes")
    assert "would drop 2 memories" in refused.err and "nothing was changed" in refused.err
    assert_names_the_late_memories(refused.err, late)
    assert "stopping the housekeeper" not in refused.err
    assert_untouched(installed, ids, pid)

    done = run_aimos("restore", backup, "--yes").ok()
    assert "drops" not in done.err, "--yes does not ask"
    assert_restarted(done, installed, pid, reaper)
    assert memory_ids(installed) == [kept] and restores(installed) == 1
    assert "lost since then" in done.out and "2 memories" in done.out, done.describe()
    lost = next(line for line in done.out.splitlines() if line.startswith("lost since then"))
    for table in ("detection_queue", "memory_provenance", "request_nonces"):
        assert table not in lost, f"a table's name in what a person reads: {lost}"
    assert "other records" in lost, lost


def interactive_restore(backup: str) -> PtySession:
    return PtySession(["restore", backup], dict(os.environ))


def test_the_question_names_the_memories_and_no_changes_nothing(installed: Path, reaper: Any) -> None:
    _kept, backup, late = with_late_memories(installed)
    pid = start_housekeeper(reaper)
    ids = memory_ids(installed)
    session = interactive_restore(backup)
    try:
        shown = session.expect(r"Restore and drop them\? \[y/N\]")
        assert_names_the_late_memories(shown.replace("\r\n", "\n"), late)
        session.send("n")
        code = session.wait()
    finally:
        session.close()
    assert code == 8, session.buffer
    assert "you answered no: nothing was changed" in session.buffer
    assert "Run it again and answer y. Add --yes" in session.buffer.replace("\r\n", " "), session.buffer
    assert_untouched(installed, ids, pid)


def test_the_question_answered_yes_restores(installed: Path, reaper: Any) -> None:
    kept, backup, _late = with_late_memories(installed)
    pid = start_housekeeper(reaper)
    session = interactive_restore(backup)
    try:
        session.expect(r"Restore and drop them\? \[y/N\]")
        session.send("y")
        session.expect("restored the brain from")
        code = session.wait()
    finally:
        session.close()
    assert code == 0, session.buffer
    assert memory_ids(installed) == [kept] and restores(installed) == 1
    new_pid = read_pid_file(installed)
    reaper.watch(new_pid)
    assert (
        new_pid != pid
        and pid_alive(new_pid)
        and f"started the housekeeper again (pid {new_pid})" in (session.buffer)
    )


def test_the_question_names_ten_and_counts_the_rest(installed: Path) -> None:
    backup = backup_now()
    late = [save(f"restore-hk:n{n}", f"note number {n} saved after the backup") for n in range(12)]
    refused = run_aimos("restore", backup)
    assert_refused(refused, 2, "--yes")
    assert "drops 12 memories" in refused.err and "would drop 12 memories" in refused.err
    named = [mid for mid in late if mid in refused.err]
    assert named == late[:10], "the ten oldest are named, oldest first"
    assert "and 2 more" in refused.err, refused.describe()


def test_a_restore_that_fails_after_stopping_starts_the_housekeeper_again(
    installed: Path, reaper: Any, tmp_path: Path
) -> None:
    kept = save(*BEFORE)
    backup = backup_now()
    late = save("restore-hk:late", "written after the backup")
    pid = start_housekeeper(reaper)
    wrong = tmp_path / "wrong-passphrase"
    wrong.write_text("not the master passphrase\n")
    wrong.chmod(0o600)
    failed = run_aimos("restore", backup, "--yes", env={PASSPHRASE_ENV: str(wrong)})
    assert_refused(failed, 6)
    assert f"stopping the housekeeper (pid {pid})" in failed.err, failed.describe()
    new_pid = read_pid_file(installed)
    reaper.watch(new_pid)
    assert new_pid != pid and pid_alive(new_pid), failed.describe()
    assert (
        f"the restore did not finish, so the brain is as it was: started the housekeeper again (pid {new_pid})"
        in failed.err
    ), failed.describe()
    assert str(wrong) in failed.err, "the wrong passphrase names its file"
    assert memory_ids(installed) == [kept, late] and restores(installed) == 0 and replaced(installed) == []
    assert not list(installed.glob(".brain.sqlite3.restore-*")), "the restore's copy is left"


def test_a_housekeeper_that_cannot_be_stopped_refuses_the_restore(installed: Path, reaper: Any) -> None:
    """A pid file naming another process (stale, or written by someone who can write the state
    folder): nothing is signalled, the restore is refused (exit 7), nothing changes."""
    save(*BEFORE)
    backup = backup_now()
    pid = start_housekeeper(reaper)
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        (installed / "state" / "housekeeper.pid").write_text(f"{bystander.pid}\n")
        ids = memory_ids(installed)
        refused = run_aimos("restore", backup, "--yes")
        assert_refused(refused, 7)
        assert "could not be stopped for the restore" in refused.err, refused.describe()
        assert "nothing was signalled" in refused.err and "nothing was changed" in refused.err
        assert "started the housekeeper again" not in refused.err
        time.sleep(0.2)
        assert bystander.poll() is None, "the restore signalled a process that is not the housekeeper"
        assert pid_alive(pid) and is_housekeeper(pid), "the housekeeper was stopped"
        assert memory_ids(installed) == ids and restores(installed) == 0 and replaced(installed) == []
    finally:
        bystander.kill()
        bystander.wait()
        (installed / "state" / "housekeeper.pid").write_text(f"{pid}\n")


def test_a_memory_saved_after_the_question_refuses_the_restore(installed: Path, passphrase: str) -> None:
    """The list the person agreed to is checked again inside the restore, against the verified
    copy: a memory saved after the question (or one an altered backup claims to hold) is not
    dropped unasked."""
    from aimos.errors import AbortedError
    from aimos.housekeeper import restore as restoring

    _kept, backup, late = with_late_memories(installed)
    agreed = {m["memory_id"] for m in restoring.dropped_memories(Path(backup))}
    assert agreed == set(late)
    extra = save("restore-hk:later", "saved after the person agreed")
    ids = memory_ids(installed)
    fingerprint = json.loads((installed / "config" / "anchors.json").read_text())
    (entry,) = fingerprint["brains"].values()
    with pytest.raises(AbortedError, match="1 more memory was saved since you agreed"):
        restoring.restore(Path(backup), passphrase, entry["master_fingerprint"], may_drop=agreed)
    assert memory_ids(installed) == ids and extra in ids
    assert restores(installed) == 0 and replaced(installed) == []
    wait_for(lambda: not list(installed.glob(".brain.sqlite3.restore-*")), "the copy to be removed", 5)
