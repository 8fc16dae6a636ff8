"""Fixtures for the packaging tests: `dists`, one build of the wheel and sdist for the whole session
(test_wheel.py and test_beside_pypa_installer.py both install it), and `clean_env`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dist_support import Dists, build_dists, clean_environment


@pytest.fixture(scope="session")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Dists:
    return build_dists(tmp_path_factory.mktemp("dist"))


@pytest.fixture
def clean_env(tmp_path: Path) -> dict[str, str]:
    return clean_environment(tmp_path)
