"""The built distribution: wheel and sdist contents, and the wheel installed into a fresh venv.

One module-scoped build (`python -m build --wheel --sdist`, hatchling fetched from the package
index into an isolated build env) and one fresh venv with the wheel installed serve every test.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

import aimos

REPO = Path(__file__).resolve().parents[2]
GUIDES = REPO / "installer" / "guides"
# Under packaging/ in the repo, under installer/packaging/ in the wheel.
TEMPLATES = ("systemd/aimos-housekeeper.service.in", "launchd/org.aimos.housekeeper.plist.in")
COMMANDS = {"install", "save", "recall", "verify", "status"}

# Building and installing take a minute or two on a cold cache; the fixtures count towards the first
# test's timeout, so allow well beyond the suite default.
pytestmark = pytest.mark.timeout(1200)
BUILD_TIMEOUT = 480
PIP_TIMEOUT = 480


@dataclass
class Dists:
    wheel: Path
    sdist: Path


def _run(
    args: list[str], timeout: float, env: dict[str, str] | None = None, cwd: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, capture_output=True, text=True, timeout=timeout, check=False, env=env, cwd=cwd
    )


def _explain(proc: subprocess.CompletedProcess[str]) -> str:
    return f"{proc.args!r} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Dists:
    out = tmp_path_factory.mktemp("dist")
    proc = _run(
        [sys.executable, "-m", "build", "--wheel", "--sdist", "--outdir", str(out), str(REPO)], BUILD_TIMEOUT
    )
    assert proc.returncode == 0, _explain(proc)
    wheels = sorted(out.glob("*.whl"))
    sdists = sorted(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in out.iterdir())
    return Dists(wheel=wheels[0], sdist=sdists[0])


@pytest.fixture(scope="module")
def wheel_names(dists: Dists) -> set[str]:
    with zipfile.ZipFile(dists.wheel) as zf:
        return set(zf.namelist())


@pytest.fixture(scope="module")
def venv(dists: Dists, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("venv") / "venv"
    proc = _run([sys.executable, "-m", "venv", str(root)], PIP_TIMEOUT)
    assert proc.returncode == 0, _explain(proc)
    pip = [str(root / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    proc = _run([*pip, str(dists.wheel)], PIP_TIMEOUT)
    assert proc.returncode == 0, _explain(proc)
    return root


@pytest.fixture
def clean_env(tmp_path: Path) -> dict[str, str]:
    """Nothing from the test process's environment: no venv, no PYTHONPATH, no real brain."""
    home = tmp_path / "home"
    aimos_home = tmp_path / "aimos-home"
    home.mkdir()
    aimos_home.mkdir(mode=0o700)
    return {
        "PATH": os.pathsep.join(["/usr/bin", "/bin"]),
        "HOME": str(home),
        "AIMOS_HOME": str(aimos_home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "COLUMNS": "120",
    }


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
            name, source = f"installer/packaging/{template}", REPO / "packaging" / template
            assert name in wheel_names, f"{name} missing from {dists.wheel.name}"
            assert zf.read(name) == source.read_bytes(), f"{name} in the wheel differs from {source}"


def test_wheel_carries_every_installer_guide(wheel_names: set[str]) -> None:
    if not GUIDES.is_dir():
        pytest.fail(
            f"{GUIDES} does not exist: the installer's guide texts (markdown + manifest.json) are missing"
        )
    guides = _repo_files(GUIDES)
    assert guides, f"{GUIDES} holds no files"
    assert "installer/guides/manifest.json" in guides, f"no manifest.json in {GUIDES}"
    missing = sorted(guides - wheel_names)
    assert not missing, f"guide files missing from the wheel: {missing}"


def test_wheel_carries_the_sql_migrations(wheel_names: set[str]) -> None:
    migrations = {p.relative_to(REPO).as_posix() for p in (REPO / "aimos/store/migrations").glob("*.sql")}
    assert migrations, "no aimos/store/migrations/*.sql in the repo"
    missing = sorted(migrations - wheel_names)
    assert not missing, f"migrations missing from the wheel: {missing}"


def test_wheel_holds_only_the_three_packages_and_metadata(wheel_names: set[str]) -> None:
    tops = {name.split("/", 1)[0] for name in wheel_names}
    dist_info = {t for t in tops if t.endswith(".dist-info")}
    assert len(dist_info) == 1, sorted(tops)
    assert tops - dist_info == {"aimos", "installer", "purge"}, sorted(tops)
    assert not [n for n in wheel_names if "__pycache__" in n or n.endswith(".pyc")]


# (b) the sdist


def test_sdist_carries_packaging_and_tests(dists: Dists) -> None:
    with tarfile.open(dists.sdist) as tf:
        names = {name.split("/", 1)[1] for name in tf.getnames() if "/" in name}
    expected = _repo_files(REPO / "packaging") | {"tests/conftest.py", "tests/packaging/test_wheel.py"}
    missing = sorted(expected - names)
    assert not missing, f"missing from {dists.sdist.name}: {missing}"


# (c) and (d): the wheel installed into a fresh venv


def test_installed_aimos_prints_its_version(dists: Dists, venv: Path, clean_env: dict[str, str]) -> None:
    assert dists.wheel.name.startswith(f"aimos-{aimos.__version__}-"), dists.wheel.name
    proc = _run([str(venv / "bin" / "aimos"), "--version"], 60, env=clean_env, cwd=clean_env["HOME"])
    assert proc.returncode == 0, _explain(proc)
    words = proc.stdout.split()
    assert words and words[-1] == aimos.__version__, _explain(proc)


def test_installed_aimos_help_lists_the_main_commands(venv: Path, clean_env: dict[str, str]) -> None:
    proc = _run([str(venv / "bin" / "aimos"), "--help"], 60, env=clean_env, cwd=clean_env["HOME"])
    assert proc.returncode == 0, _explain(proc)
    # The first word of each line, past indentation and any box drawing: `verify-bundle` stays
    # `verify-bundle` and does not count as `verify`.
    listed = set(re.findall(r"^[^\w\n]*([a-z][a-z-]*)\s", proc.stdout, flags=re.MULTILINE))
    missing = sorted(COMMANDS - listed)
    assert not missing, f"--help does not list {missing}\n{proc.stdout}"


def test_installed_installer_module_is_aimos_own(venv: Path, clean_env: dict[str, str]) -> None:
    # `installer` is also a PyPI package; the one importable beside aimos must be aimos's, from the
    # wheel in this venv's site-packages (not the checkout: cwd is outside the repo).
    probe = (
        "import importlib.metadata, importlib.util, json, sysconfig\n"
        "import installer, aimos\n"
        "print(json.dumps({\n"
        "    'installer': installer.__file__,\n"
        "    'aimos': aimos.__file__,\n"
        "    'purelib': sysconfig.get_path('purelib'),\n"
        "    'setup': importlib.util.find_spec('installer.setup') is not None,\n"
        "    'owned': [str(f) for f in importlib.metadata.files('aimos') or []],\n"
        "}))\n"
    )
    proc = _run([str(venv / "bin" / "python"), "-c", probe], 60, env=clean_env, cwd=clean_env["HOME"])
    assert proc.returncode == 0, _explain(proc)
    found = json.loads(proc.stdout)
    purelib = Path(found["purelib"]).resolve()
    installer_file = Path(found["installer"]).resolve()
    assert Path(found["aimos"]).resolve().is_relative_to(purelib), found["aimos"]
    assert installer_file == purelib / "installer" / "__init__.py", f"{installer_file} is not in {purelib}"
    assert found["setup"], "installer.setup is not importable: this `installer` is not aimos's"
    assert (installer_file.parent / "setup.py").is_file()
    assert "installer/__init__.py" in found["owned"], "installer/__init__.py is not recorded as aimos's"
    assert (installer_file.parent / "packaging/systemd/aimos-housekeeper.service.in").is_file()
