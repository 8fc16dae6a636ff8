"""The per-command log line names the command only: never arguments (memory text, ids)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aimos.cli import app


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["save", "my private memory text"], "aimos save exit=0"),
        (["agent", "revoke", "claude"], "aimos agent revoke exit=0"),
        (["show", "3f2a9c1e"], "aimos show exit=0"),
        (["agent", "--help"], "aimos agent exit=0"),
    ],
)
def test_log_line_has_no_arguments(aimos_home: Path, argv: list[str], expected: str) -> None:
    app._log(argv, 0, None)
    log = (aimos_home / "logs" / "aimos.log").read_text()
    assert log.strip().endswith(expected)
    assert "private" not in log and "claude" not in log and "3f2a9c1e" not in log
    assert (aimos_home / "logs" / "aimos.log").stat().st_mode & 0o777 == 0o600
