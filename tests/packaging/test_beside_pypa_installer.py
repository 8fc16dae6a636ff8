"""aimos installs next to PyPA's `installer` package, and survives its uninstall.

Both are pip-installed into one fresh venv (the session's `shared_venv`, which test_wheel.py's
installed-aimos tests use too), PyPA's `installer` (from the package index) first and then the built
wheel: installing aimos must not touch a file of `installer`, both must keep
working, and `pip uninstall installer` must leave aimos whole. (When aimos shipped a top-level
`installer` package, the wheel overwrote PyPA's files and the uninstall deleted aimos's.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.dist import SharedVenv, check_installed_aimos, explain, pip, probe, run, tree_digests

pytestmark = pytest.mark.timeout(1200)

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
    for command in (
        [str(venv / "bin" / "aimos"), "--help"],
        [str(venv / "bin" / "python"), "-m", "aimos", "--help"],
    ):
        proc = run(command, 60, env=env, cwd=env["HOME"])
        assert proc.returncode == 0 and "install" in proc.stdout, explain(proc)


def test_aimos_and_pypa_installer_install_side_by_side(
    shared_venv: SharedVenv, clean_env: dict[str, str]
) -> None:
    """The session's venv had PyPA's `installer` installed first, then the wheel (conftest.py)."""
    venv, pypa, pypa_files = shared_venv.root, shared_venv.pypa_dir, shared_venv.pypa_files
    assert "__init__.py" in pypa_files and "sources.py" in pypa_files, sorted(pypa_files)
    assert tree_digests(pypa) == pypa_files, "installing aimos changed PyPA's `installer`"
    _check_pypa_installer(venv, clean_env)
    _check_aimos_runs(venv, clean_env)

    proc = pip(venv, "uninstall", "-y", "installer")
    assert proc.returncode == 0, explain(proc)
    assert probe(venv, GONE_PROBE, clean_env) == {"installer": False}, "`installer` is still importable"
    _check_aimos_runs(venv, clean_env)
