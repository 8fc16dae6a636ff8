"""A restore that fails says which brain is in place: one that failed before the swap left the
brain as it was; one that failed after it (writing the anchors: a full disk, Ctrl-C) left the
backup in the brain's place, and must not say "as it was". In process, so the failure can be made
to happen at that exact step; the CLI entry point is the real one."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import run_aimos

from aimos.cli.app import main
from aimos.housekeeper import restore as restoring

pytestmark = pytest.mark.timeout(180)


def test_a_restore_failing_after_the_swap_says_the_backup_is_the_brain_now(
    installed: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_aimos("save", "written before the backup").ok()
    backup = str(run_aimos("backup", "--json").json()["path"])
    run_aimos("save", "written after the backup").ok()
    inode = (installed / "brain.sqlite3").stat().st_ino

    def disk_full(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(restoring, "_anchor_restored", disk_full)
    with pytest.raises(SystemExit) as ended:
        main(["restore", backup, "--yes"])
    err = capsys.readouterr().err
    assert ended.value.code != 0, err
    assert (installed / "brain.sqlite3").stat().st_ino != inode  # the backup took the brain's place
    assert "the brain is the backup now; run `aimos verify`" in err, err
    assert "as it was" not in err and "nothing was changed" not in err, err
