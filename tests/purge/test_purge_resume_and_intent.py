"""The purge ceremony resumes from its signed intent wherever it is run from, stops at a damaged
intent before removing more, and never leaves a partial intent file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.cli import BRAIN
from support.purge import CONFIRM, purge_live, verify_receipt

from aimos.errors import IntegrityError


class Killed(KeyboardInterrupt):
    pass


def _kill_after(step: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from aimos.purge import ceremony

    def seam(name: str) -> None:
        if name == step:
            raise Killed(name)

    monkeypatch.setattr(ceremony, "after_step", seam)


def test_a_relative_receipt_file_still_resumes_from_another_directory(
    installed: Path, passphrase: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aimos.purge import ceremony

    first = tmp_path / "first"
    first.mkdir()
    monkeypatch.chdir(first)
    _kill_after("brain", monkeypatch)
    with pytest.raises(Killed):
        ceremony.start(passphrase, lambda e: e, recreate=False, receipt_file=Path("mine.json"))
    (journal,) = ceremony.interrupted()
    assert Path(journal["intent_path"]).is_absolute() and Path(journal["receipt_path"]).is_absolute()
    monkeypatch.setattr(ceremony, "after_step", lambda name: None)
    monkeypatch.chdir(tmp_path)  # elsewhere now
    result = purge_live()
    assert result.code == 0, result.describe()
    receipt = first / "mine.json"
    fingerprint = json.loads(receipt.read_text())["body"]["actor"]["fingerprint"]
    assert verify_receipt(receipt, fingerprint).code == 0
    assert not ceremony.interrupted()


def test_a_damaged_intent_stops_the_resume_before_anything_more_is_removed(
    installed: Path, passphrase: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aimos.purge import ceremony

    _kill_after("intent", monkeypatch)
    with pytest.raises(Killed):
        ceremony.start(passphrase, lambda e: e, recreate=False, receipt_file=None)
    (journal,) = ceremony.interrupted()
    Path(journal["intent_path"]).write_text("")  # torn or tampered
    monkeypatch.setattr(ceremony, "after_step", lambda name: None)
    with pytest.raises(IntegrityError, match="no valid signed intent"):
        ceremony.start(passphrase, lambda e: e, recreate=False, receipt_file=None)
    assert (installed / BRAIN).exists(), "the brain must not be removed without a valid intent"
    assert ceremony.interrupted(), "the journal stays"
    cli = purge_live()
    assert cli.code == 5 and "Restore the intent file" in cli.err and "Traceback" not in cli.both


def test_no_partial_intent_file_is_left_and_the_intent_is_whole(
    installed: Path, passphrase: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aimos.purge import ceremony

    _kill_after("intent", monkeypatch)
    with pytest.raises(Killed):
        ceremony.start(passphrase, lambda e: e, recreate=False, receipt_file=None)
    (journal,) = ceremony.interrupted()
    folder = Path(journal["intent_path"]).parent
    assert not [p for p in folder.iterdir() if p.name.endswith(".partial")]
    assert (
        json.loads(Path(journal["intent_path"]).read_text())["body"]["ceremony_id"] == journal["ceremony_id"]
    )
    assert os.stat(journal["intent_path"]).st_mode & 0o777 == 0o600
    monkeypatch.setattr(ceremony, "after_step", lambda name: None)
    assert purge_live(confirmation=CONFIRM).code == 0
