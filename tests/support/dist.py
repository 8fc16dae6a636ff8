"""The built distribution for the packaging tests: one build of the wheel and sdist, fresh venvs,
and subprocesses run with their output kept for the failure message."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
BUILD_TIMEOUT = 480
PIP_TIMEOUT = 480


@dataclass
class Dists:
    wheel: Path
    sdist: Path


def run(
    args: list[str], timeout: float, env: dict[str, str] | None = None, cwd: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, capture_output=True, text=True, timeout=timeout, check=False, env=env, cwd=cwd
    )


def explain(proc: subprocess.CompletedProcess[str]) -> str:
    return f"{proc.args!r} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"


def build_dists(out: Path) -> Dists:
    """`python -m build --wheel --sdist` of the repository into ``out`` (hatchling is fetched from
    the package index into an isolated build env)."""
    proc = run(
        [sys.executable, "-m", "build", "--wheel", "--sdist", "--outdir", str(out), str(REPO)], BUILD_TIMEOUT
    )
    assert proc.returncode == 0, explain(proc)
    wheels = sorted(out.glob("*.whl"))
    sdists = sorted(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in out.iterdir())
    return Dists(wheel=wheels[0], sdist=sdists[0])


@dataclass
class SharedVenv:
    """One fresh venv for the session's installed-aimos tests: PyPA's `installer` installed from the
    package index first (``pypa_files``: its files' digests then), then the built wheel."""

    root: Path
    pypa_dir: Path
    pypa_files: dict[str, str]


def tree_digests(folder: Path) -> dict[str, str]:
    """sha256 of each file under ``folder`` (no bytecode), by path inside it."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def make_shared_venv(root: Path, wheel: Path, env: dict[str, str]) -> SharedVenv:
    venv = make_venv(root)
    proc = pip(venv, "install", "installer")
    assert proc.returncode == 0, (
        "pip could not install PyPA's `installer` from the package index; the packaging tests need "
        "the index (they are not skipped without it)\n" + explain(proc)
    )
    found = probe(
        venv, "import json, sysconfig; print(json.dumps({'p': sysconfig.get_path('purelib')}))", env
    )
    pypa_dir = Path(found["p"]).resolve() / "installer"
    pypa_files = tree_digests(pypa_dir)
    proc = pip(venv, "install", str(wheel))
    assert proc.returncode == 0, explain(proc)
    return SharedVenv(venv, pypa_dir, pypa_files)


def make_venv(root: Path) -> Path:
    """A fresh venv at ``root`` (with pip, without anything of the test process)."""
    proc = run([sys.executable, "-m", "venv", str(root)], PIP_TIMEOUT)
    assert proc.returncode == 0, explain(proc)
    return root


def pip(venv: Path, command: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m pip <command> <args>` in ``venv``, quietly."""
    python = str(venv / "bin" / "python")
    return run([python, "-m", "pip", command, "--disable-pip-version-check", "-q", *args], PIP_TIMEOUT)


def clean_environment(tmp_path: Path) -> dict[str, str]:
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


def probe(venv: Path, code: str, env: dict[str, str]) -> dict[str, Any]:
    """The JSON that ``code`` prints, run by ``venv``'s python from ``env``'s HOME (outside the
    checkout, so nothing is imported from it)."""
    proc = run([str(venv / "bin" / "python"), "-c", code], 60, env=env, cwd=env["HOME"])
    assert proc.returncode == 0, explain(proc)
    found: dict[str, Any] = json.loads(proc.stdout)
    return found


AIMOS_PROBE = """
import importlib.metadata, json, sysconfig
import aimos.installer.service, aimos.installer.setup, aimos.purge.ceremony
print(json.dumps({
    "purelib": sysconfig.get_path("purelib"),
    "setup": aimos.installer.setup.__file__,
    "ceremony": aimos.purge.ceremony.__file__,
    "templates": str(aimos.installer.service.templates_dir()),
    "owned": [str(f) for f in importlib.metadata.files("aimos") or []],
}))
"""


def check_installed_aimos(venv: Path, env: dict[str, str]) -> None:
    """aimos's installer and purge import from the wheel in ``venv``'s site-packages, the service
    templates are found inside it, and aimos owns no file outside aimos/, its metadata and its
    script (no top-level `installer` or `purge`)."""
    found = probe(venv, AIMOS_PROBE, env)
    aimos_dir = Path(found["purelib"]).resolve() / "aimos"
    assert Path(found["setup"]).resolve() == aimos_dir / "installer" / "setup.py", found
    assert Path(found["ceremony"]).resolve() == aimos_dir / "purge" / "ceremony.py", found
    assert Path(found["templates"]).resolve() == aimos_dir / "installer" / "packaging", found
    owned: list[str] = found["owned"]
    assert "aimos/installer/__init__.py" in owned and "aimos/purge/__init__.py" in owned, owned
    outside = [f for f in owned if f.split("/", 1)[0] != "aimos" and ".dist-info/" not in f]
    assert all(f.endswith("/bin/aimos") for f in outside), f"aimos installs files outside aimos/: {outside}"


def _unit_settings(text: str) -> dict[str, dict[str, list[str]]]:
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        assert current is not None, f"setting outside a section: {line!r}"
        key, sep, value = line.partition("=")
        assert sep, f"not a Key=Value line: {line!r}"
        current.setdefault(key, []).append(value)
    return sections
