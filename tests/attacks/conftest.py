"""Fixtures for the tamper harness: this folder on sys.path (`used_brain`, `tamper`), the used
brain built once per session, and the report printed at the end of the run."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tamper
from used_brain import UsedBrain, build_used_brain


@pytest.fixture(scope="session")
def used_brain(tmp_path_factory: pytest.TempPathFactory) -> UsedBrain:
    home = tmp_path_factory.mktemp("used-brain") / "home"
    home.mkdir(mode=0o700)
    return build_used_brain(home)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for text in tamper.REPORTS:
        terminalreporter.write_sep("=", "tamper harness report")
        terminalreporter.write(text)
