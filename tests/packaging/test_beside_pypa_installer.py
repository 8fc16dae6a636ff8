"""aimos installs next to PyPA's `installer` package, and survives its uninstall.

Both are pip-installed into one fresh venv, PyPA's `installer` (from the package index) first and
then the built wheel: installing aimos must not touch a file of `installer`, both must keep
working, and `pip uninstall installer` must leave aimos whole. (When aimos shipped a top-level
`installer` package, the wheel overwrote PyPA's files and the uninstall deleted aimos's.)
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from dist_support import Dists, check_installed_aimos, explain, make_venv, pip, probe, run

pytestmark = [pytest.mark.timeout(1200), pytest.mark.xdist_group("packaging")]  # one build of the dists

PYPA_PROBE = """
import importlib.metadata, json, sysconfig
import installer
from installer import install
from installer.sources import WheelFile
print(json.dumps({
    "purelib": sysconfig.get_path("purelib"),
    "installer": installer.__file__,
    "dist": importlib.metadata.distribution("installer").metadata["Name"],
}))
"""
GONE_PROBE = """
import importlib.util, json
print(json.dumps({"installer": importlib.util.find_spec("installer") is not None}))
"""


def _files(folder: Path) -> dict[str, str]:
    """sha256 of each file under ``folder`` (no bytecode), by path inside it."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def _purelib(venv: Path, env: dict[str, str]) -> Path:
    found = probe(venv, "import json, sysconfig; print(json.dumps({'p': sysconfig.get_path('purelib')}))", env)
    return Path(found["p"]).resolve()


def _check_pypa_installer(venv: Path, env: dict[str, str]) -> None:
    found = probe(venv, PYPA_PROBE, env)
    where = Path(found["installer"]).resolve()
    assert where == Path(found["purelib"]).resolve() / "installer" / "__init__.py", found
    assert "aimos" not in where.parts, f"`installer` is imported from aimos's files: {where}"
    assert found["dist"] == "installer", found
    proc = run([str(venv / "bin" / "python"), "-m", "installer", "--help"], 60, env=env, cwd=env["HOME"])
    assert proc.returncode == 0 and "usage" in proc.stdout.lower(), explain(proc)


def _check_aimos_runs(venv: Path, env: dict[str, str]) -> None:
    check_installed_aimos(venv, env)
    for command in ([str(venv / "bin" / "aimos"), "--help"], [str(venv / "bin" / "python"), "-m", "aimos", "--help"]):
        proc = run(command, 60, env=env, cwd=env["HOME"])
        assert proc.returncode == 0 and "install" in proc.stdout, explain(proc)


def test_aimos_and_pypa_installer_install_side_by_side(
    dists: Dists, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    venv = make_venv(tmp_path / "venv")
    proc = pip(venv, "install", "installer")
    assert proc.returncode == 0, (
        "pip could not install PyPA's `installer` from the package index; this test needs the index "
        "(it is not skipped without it)\n" + explain(proc)
    )
    pypa = _purelib(venv, clean_env) / "installer"
    pypa_files = _files(pypa)
    assert "__init__.py" in pypa_files and "sources.py" in pypa_files, sorted(pypa_files)

    proc = pip(venv, "install", str(dists.wheel))
    assert proc.returncode == 0, explain(proc)
    assert _files(pypa) == pypa_files, "installing aimos changed PyPA's `installer`"
    _check_pypa_installer(venv, clean_env)
    _check_aimos_runs(venv, clean_env)

    proc = pip(venv, "uninstall", "-y", "installer")
    assert proc.returncode == 0, explain(proc)
    assert probe(venv, GONE_PROBE, clean_env) == {"installer": False}, "`installer` is still importable"
    _check_aimos_runs(venv, clean_env)
