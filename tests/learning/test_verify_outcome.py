"""The kept outcome of the newest full verification (verify/brain/outcome.py): the reason words
it keeps (never a memory's id or text), the newest of the two files, and the one warning line
every command ends with, whatever someone wrote into the notice file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.cli import run_aimos

from aimos.verify.brain import outcome as verify_outcome

MEMORY = "0b6f1f4e-4c55-4f55-9d7c-3a4f0c1d2e3f"


def report(**changes: Any) -> dict[str, Any]:
    """A full verification's report (the shape verify_everything returns) that passed."""
    base: dict[str, Any] = {
        "ok": True,
        "brain": {"ok": True, "failures": []},
        "in_database": {"ok": True, "failures": [], "event_chains": [{"ok": True, "reason": None}]},
        "portable": {"verdict": "valid", "primary_reason": None},
        "parity": True,
    }
    return base | changes


def test_failure_reasons_are_words_and_tables_each_once() -> None:
    failed = report(
        ok=False,
        brain={
            "ok": False,
            "failures": [
                {"reason": "search_index_mismatch", "table": "memory_fts", "detail": f"for {MEMORY}"},
                {"reason": "search_index_mismatch", "table": "memory_fts", "detail": "again"},
                {"reason": "schema_object_missing", "table": None, "detail": "memories_no_delete"},
            ],
        },
        in_database={
            "ok": False,
            "failures": [{"memory_id": MEMORY, "reason": "content_hash_mismatch", "detail": "the otter"}],
            "event_chains": [{"ok": False, "reason": "event_signature_invalid"}],
        },
        portable={"verdict": "invalid", "primary_reason": "content_hash_mismatch"},
        parity=False,
    )
    reasons = verify_outcome.failure_reasons(failed)
    assert reasons == [
        "search_index_mismatch in memory_fts",
        "schema_object_missing",
        "content_hash_mismatch",
        "event_signature_invalid",
        "verifiers_disagree",
    ]
    assert verify_outcome.reasons_text(reasons) == (
        "search_index_mismatch in memory_fts, schema_object_missing, content_hash_mismatch, "
        "event_signature_invalid and 1 more"
    )


def test_the_newest_outcome_is_kept_and_the_other_file_removed(aimos_home: Path) -> None:
    state = aimos_home / "state"
    failed = report(ok=False, brain={"ok": False, "failures": [{"reason": "row_altered", "table": "events"}]})
    verify_outcome.record("brain-a", failed, verify_outcome.NIGHTLY, at=100)
    assert sorted(p.name for p in state.iterdir()) == ["verify-failed.json"]
    assert (state / "verify-failed.json").stat().st_mode & 0o777 == 0o600
    assert verify_outcome.kept("brain-a") == {
        "brain_id": "brain-a",
        "at": 100,
        "by": "nightly",
        "ok": False,
        "reasons": ["row_altered in events"],
    }
    assert verify_outcome.kept("brain-b") is None  # another brain's outcome says nothing of this one
    line = verify_outcome.notice_line()
    assert line == (
        "warning: the nightly verify on 1970-01-01 00:01 UTC found the brain does not verify "
        "(row_altered in events): run `aimos verify` to see what differs"
    )
    verify_outcome.record("brain-a", report(), verify_outcome.CLI, at=200)
    assert sorted(p.name for p in state.iterdir()) == ["verify-passed.json"]
    assert verify_outcome.notice_line() is None
    assert verify_outcome.kept("brain-a")["ok"] is True  # type: ignore[index]


def test_a_notice_written_by_someone_else_still_warns_in_one_safe_line(aimos_home: Path) -> None:
    """Garbage, a forged 'by', an escape sequence in a reason, a huge file: one line each, with
    nothing read past 4 KiB and no control character reaching the terminal."""
    notice = aimos_home / "state" / "verify-failed.json"
    notice.parent.mkdir(mode=0o700)
    generic = f"warning: {notice} says the brain's newest full verify failed: run `aimos verify`"
    escape = {"brain_id": None, "at": 0, "by": "nightly", "ok": False, "reasons": ["\x1b]0;pwned\x07x"]}
    cases = {
        "not json {": generic,
        json.dumps({**escape, "by": "the master"}): generic,
        json.dumps({**escape, "reasons": ["x" * 5000]}): generic,
        json.dumps(escape): "found the brain does not verify (\\x1b]0;pwned\\x07x)",
    }
    for text, expected in cases.items():
        notice.write_text(text)
        result = run_aimos("list")  # no brain here: exit 3, and the warning after the error
        assert result.code == 3, result.describe()
        lines = result.err.splitlines()
        assert expected in lines[-1] and lines[-1].startswith("warning: "), result.describe()
        assert "\x1b" not in result.err and "\x07" not in result.err
        assert sum(1 for text in lines if text.startswith("warning:")) == 1
    assert "warning" not in run_aimos("--help").both  # the help path never looks
