"""Every test runs with AIMOS_HOME and the XDG user dirs in a temporary directory of its own
(tests/conftest.py, autouse), so no test can reach a real brain, config or keystore."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aimos import paths

SEEN: list[Path] = []
XDG = ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")


def _where_aimos_looks() -> list[Path]:
    return [
        paths.data_dir(),
        paths.config_dir(),
        paths.log_dir(),
        paths.state_dir(),
        paths.brain_path(),
        paths.anchors_path(),
        paths.purge_receipts_dir(),
        paths.keystore_dir("0123456789abcdef"),
    ]


@pytest.mark.parametrize("turn", [1, 2])
def test_each_test_has_its_own_aimos_home_under_the_temporary_directory(
    turn: int, isolated_home: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    base = tmp_path_factory.getbasetemp()
    home = Path(os.environ["AIMOS_HOME"])
    assert home == isolated_home and home.is_relative_to(base)
    assert all(Path(os.environ[name]).is_relative_to(base) for name in XDG)
    assert all(path.is_relative_to(home) for path in _where_aimos_looks())
    assert home not in SEEN  # not the one an earlier test had
    SEEN.append(home)


def test_without_aimos_home_the_user_dirs_are_temporary_too(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    monkeypatch.delenv("AIMOS_HOME")
    base = tmp_path_factory.getbasetemp()
    assert all(path.is_relative_to(base) for path in _where_aimos_looks())


def test_a_test_that_sets_its_own_home_keeps_it(aimos_home: Path, isolated_home: Path) -> None:
    assert os.environ["AIMOS_HOME"] == str(aimos_home) != str(isolated_home)
