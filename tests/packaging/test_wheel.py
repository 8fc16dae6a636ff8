"""The built distribution: wheel and sdist contents, and the wheel installed into a fresh venv.

One build for the session (`dists`, tests/packaging/conftest.py) and one fresh venv with the wheel
installed serve every test.
"""

from __future__ import annotations

import re
import tarfile
import zipfile
from pathlib import Path

import pytest
from support.dist import REPO, Dists, SharedVenv, check_installed_aimos, explain, run

import aimos

GUIDES = REPO / "aimos" / "installer" / "guides"
# Under packaging/ in the repo, under aimos/installer/packaging/ in the wheel.
TEMPLATES = ("systemd/aimos-housekeeper.service.in", "launchd/org.aimos.housekeeper.plist.in")
COMMANDS = {"install", "save", "recall", "verify", "status"}

# Building and installing take a minute or two on a cold cache; the fixtures count towards the first
# test's timeout, so allow well beyond the suite default.
pytestmark = pytest.mark.timeout(1200)


@pytest.fixture(scope="module")
def wheel_names(dists: Dists) -> set[str]:
    with zipfile.ZipFile(dists.wheel) as zf:
        return set(zf.namelist())


@pytest.fixture(scope="module")
def venv(shared_venv: SharedVenv) -> Path:
    """The session's fresh venv with the wheel installed (beside PyPA's `installer`, which
    test_beside_pypa_installer.py may have uninstalled by now: either way aimos must run)."""
    return shared_venv.root


def _repo_files(folder: Path) -> set[str]:
    return {
        p.relative_to(REPO).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }


# (a) the wheel


def test_wheel_carries_the_service_templates_unchanged(dists: Dists, wheel_names: set[str]) -> None:
    with zipfile.ZipFile(dists.wheel) as zf:
        for template in TEMPLATES:
            name, source = f"aimos/installer/packaging/{template}", REPO / "packaging" / template
            assert name in wheel_names, f"{name} missing from {dists.wheel.name}"
            assert zf.read(name) == source.read_bytes(), f"{name} in the wheel differs from {source}"


def test_wheel_carries_every_installer_guide(wheel_names: set[str]) -> None:
    if not GUIDES.is_dir():
        pytest.fail(
            f"{GUIDES} does not exist: the installer's guide texts (markdown + manifest.json) are missing"
        )
    guides = _repo_files(GUIDES)
    assert guides, f"{GUIDES} holds no files"
    assert "aimos/installer/guides/manifest.json" in guides, f"no manifest.json in {GUIDES}"
    missing = sorted(guides - wheel_names)
    assert not missing, f"guide files missing from the wheel: {missing}"


def test_wheel_carries_the_sql_migrations(wheel_names: set[str]) -> None:
    migrations = {p.relative_to(REPO).as_posix() for p in (REPO / "aimos/store/migrations").glob("*.sql")}
    assert migrations, "no aimos/store/migrations/*.sql in the repo"
    missing = sorted(migrations - wheel_names)
    assert not missing, f"migrations missing from the wheel: {missing}"


def test_wheel_carries_the_meaning_probe(wheel_names: set[str]) -> None:
    """`aimos eval meaning` reads its probe from the installed package."""
    assert "aimos/eval/data/meaning-probe.json" in wheel_names


def test_wheel_holds_only_aimos_and_metadata(wheel_names: set[str]) -> None:
    """One import root: a top-level `installer` (or `purge`) would share site-packages/installer/ with
    PyPA's `installer`, each install overwriting and each uninstall deleting the other's files."""
    tops = {name.split("/", 1)[0] for name in wheel_names}
    dist_info = {t for t in tops if t.endswith(".dist-info")}
    assert len(dist_info) == 1, sorted(tops)
    assert tops - dist_info == {"aimos"}, sorted(tops)
    assert not [n for n in wheel_names if "__pycache__" in n or n.endswith(".pyc")]


# (b) the sdist


def test_sdist_carries_packaging_tests_and_docs(dists: Dists) -> None:
    with tarfile.open(dists.sdist) as tf:
        names = {name.split("/", 1)[1] for name in tf.getnames() if "/" in name}
    expected = _repo_files(REPO / "packaging") | _repo_files(REPO / "docs")
    expected |= {"README.md", "tests/conftest.py", "tests/packaging/test_wheel.py"}  # the README links docs/
    missing = sorted(expected - names)
    assert not missing, f"missing from {dists.sdist.name}: {missing}"


# (c) and (d): the wheel installed into a fresh venv


def test_installed_aimos_prints_its_version(dists: Dists, venv: Path, clean_env: dict[str, str]) -> None:
    assert dists.wheel.name.startswith(f"aimos-{aimos.__version__}-"), dists.wheel.name
    proc = run([str(venv / "bin" / "aimos"), "--version"], 60, env=clean_env, cwd=clean_env["HOME"])
    assert proc.returncode == 0, explain(proc)
    words = proc.stdout.split()
    assert words and words[-1] == aimos.__version__, explain(proc)


def test_installed_aimos_help_lists_the_main_commands(venv: Path, clean_env: dict[str, str]) -> None:
    proc = run([str(venv / "bin" / "aimos"), "--help"], 60, env=clean_env, cwd=clean_env["HOME"])
    assert proc.returncode == 0, explain(proc)
    # The first word of each line, past indentation and any box drawing: `verify-bundle` stays
    # `verify-bundle` and does not count as `verify`.
    listed = set(re.findall(r"^[^\w\n]*([a-z][a-z-]*)\s", proc.stdout, flags=re.MULTILINE))
    missing = sorted(COMMANDS - listed)
    assert not missing, f"--help does not list {missing}\n{proc.stdout}"


def test_installed_aimos_brings_its_installer_and_purge_inside_it(
    venv: Path, clean_env: dict[str, str]
) -> None:
    check_installed_aimos(venv, clean_env)
