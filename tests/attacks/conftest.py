"""Attacks by someone holding the brain file (or handing aimos a file): each test makes the attack
with the real `sqlite3` shell or a crafted file, runs the real `aimos` CLI (`run_aimos`), and
checks the refusal: its exit code, its closed reason, and that nothing was disclosed or changed.

Fixtures for the tamper harness: this folder on sys.path (`used_brain`, `tamper`,
`support.attacks`), the used brain built once per session, and the report printed at the end of
the run. `aimos_home`, `passphrase`, `installed` and `brain_template` come from tests/conftest.py;
the subprocess helpers from tests/support/cli.py."""

from __future__ import annotations

from typing import Any

import pytest
import support.tamper as tamper
from support.used_brain import UsedBrain, build_used_brain


@pytest.fixture(scope="session")
def used_brain(tmp_path_factory: pytest.TempPathFactory) -> UsedBrain:
    home = tmp_path_factory.mktemp("used-brain") / "home"
    home.mkdir(mode=0o700)
    return build_used_brain(home)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The harness's report (under pytest-xdist, tests/conftest.py prints the workers' instead)."""
    if hasattr(terminalreporter.config, "workeroutput"):
        return
    for text in tamper.REPORTS:
        terminalreporter.write_sep("=", "tamper harness report")
        terminalreporter.write(text)
