"""Fixtures for the packaging tests: `dists`, one build of the wheel and sdist for the whole session;
`shared_venv`, one fresh venv with PyPA's `installer` and then the wheel installed (test_wheel.py and
test_beside_pypa_installer.py both run aimos from it); and `clean_env`."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.dist import Dists, SharedVenv, build_dists, clean_environment, make_shared_venv


@pytest.fixture(scope="session")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Dists:
    return build_dists(tmp_path_factory.mktemp("dist"))


@pytest.fixture
def clean_env(tmp_path: Path) -> dict[str, str]:
    return clean_environment(tmp_path)


@pytest.fixture(scope="session")
def shared_venv(dists: Dists, tmp_path_factory: pytest.TempPathFactory) -> SharedVenv:
    root = tmp_path_factory.mktemp("venv")
    return make_shared_venv(root / "venv", dists.wheel, clean_environment(root))
