"""`aimos backup` and `aimos backup list` through the real CLI: a copy made now with the online
backup API and verified after writing, 0600 in a 0700 folder, listed with its size, memories and
newest seal; a folder given with --to is made when missing. Refused and changing nothing: --to a
file; a damaged brain, whose copy does not verify (removed, exit 5)."""

from __future__ import annotations

import stat
from pathlib import Path

import apsw
import pytest
from support.cells import cell_int
from support.cli import assert_refused, run_aimos

pytestmark = pytest.mark.timeout(180)


def _memories(home: Path) -> int:
    conn = apsw.Connection(str(home / "brain.sqlite3"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return cell_int(conn.execute("SELECT COUNT(*) FROM memories").fetchall()[0][0])
    finally:
        conn.close()


def test_a_backup_now_is_verified_private_and_listed(stocked: Path, tmp_path: Path) -> None:
    made = run_aimos("backup", "--json")
    assert made.code == 0, made.describe()
    backup = made.json()
    path = Path(backup["path"])
    assert path.parent == stocked / "backups" and path.is_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert backup["verified"] is True and backup["memories"] == _memories(stocked)
    assert backup["newest_seal"] >= 1 and backup["bytes"] == path.stat().st_size
    listed = run_aimos("backup", "list", "--json").json()
    assert [b["file"] for b in listed] == [path.name]
    assert run_aimos("restore", "--list", "--json").json()[0]["file"] == path.name  # restorable

    elsewhere = tmp_path / "offsite" / "aimos"
    away = run_aimos("backup", "--to", str(elsewhere), "--json")
    assert away.code == 0, away.describe()
    assert Path(away.json()["path"]).parent == elsewhere
    assert stat.S_IMODE(elsewhere.stat().st_mode) == 0o700
    text = run_aimos("backup", "list", "--in", str(elsewhere))
    assert Path(away.json()["path"]).name in text.out and f"{_memories(stocked)}" in text.out
    assert [b["file"] for b in run_aimos("backup", "list", "--json").json()] == [path.name]


@pytest.mark.parametrize("mode", [0o1777, 0o2775, 0o755])
def test_a_folder_the_person_names_keeps_its_mode(stocked: Path, tmp_path: Path, mode: int) -> None:
    """Issue 35, item 8: `--to` an existing folder (a sticky shared one, a group share, a plain
    one; directly or through a symlink) leaves its mode as it was; the backup file is 0600, and a
    folder aimos makes on the way is 0700."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(mode)
    link = tmp_path / "link"
    link.symlink_to(shared)
    for target in (shared, link):
        made = run_aimos("backup", "--to", str(target), "--json")
        assert made.code == 0, made.describe()
        assert stat.S_IMODE(Path(made.json()["path"]).stat().st_mode) == 0o600
        assert stat.S_IMODE(shared.stat().st_mode) == mode, oct(shared.stat().st_mode)
    assert len(list(shared.glob("*.sqlite3"))) == 2
    deeper = shared / "aimos" / "nightly"
    assert run_aimos("backup", "--to", str(deeper)).code == 0
    # (in a setgid folder the folders made inherit the bit, as Linux does: still the owner's alone)
    assert stat.S_IMODE(deeper.stat().st_mode) & 0o777 == 0o700
    assert stat.S_IMODE((shared / "aimos").stat().st_mode) & 0o777 == 0o700
    assert stat.S_IMODE(shared.stat().st_mode) == mode


def test_a_file_is_no_folder_to_back_up_into(stocked: Path, tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("mine")
    refused = run_aimos("backup", "--to", str(target))
    assert_refused(refused, 2, "give --to a folder")
    assert "is not a folder" in refused.err
    assert target.read_text() == "mine"
    assert not (stocked / "backups").exists() or not list((stocked / "backups").iterdir())


def test_a_damaged_brain_gives_no_backup(stocked: Path) -> None:
    conn = apsw.Connection(str(stocked / "brain.sqlite3"))
    try:  # an attacker with the file: a guard dropped, a memory's text changed under its seal
        conn.execute("DROP TRIGGER memories_no_update")
        conn.execute("UPDATE memories SET value = 'tampered' WHERE rowid = 1")
    finally:
        conn.close()
    refused = run_aimos("backup")
    assert refused.code == 5, refused.describe()
    assert "did not verify" in refused.err and "aimos verify" in refused.err
    assert "Traceback" not in refused.both
    folder = stocked / "backups"
    assert not folder.exists() or not [p for p in folder.iterdir() if p.suffix == ".sqlite3"]


def test_no_brain_no_backup(aimos_home: Path) -> None:
    refused = run_aimos("backup")
    assert_refused(refused, 3, "aimos install")
    assert "no aimos brain" in refused.err
    assert not (aimos_home / "backups").exists()
