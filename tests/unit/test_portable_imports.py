"""Every module of aimos (its installer and purge packages too) imports on a machine without
`fcntl` (Windows): the POSIX-only lock lives behind aimos.locks, imported only when a lock is
taken. A real subprocess, where our own code's `import fcntl` raises before anything of aimos
loads (a library that guards the import by platform, as the MCP SDK does, keeps its guard)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import builtins, importlib, pkgutil, sys
    real_import = builtins.__import__

    def guarded(name, globals=None, locals=None, fromlist=(), level=0):
        # `import fcntl` from our own code raises, as on Windows; libraries that guard it by
        # platform (the MCP SDK does) are left to their guard
        importer = (globals or {}).get("__name__", "")
        if name == "fcntl" and importer.split(".")[0] == "aimos":
            raise ImportError(f"fcntl imported by {importer}")
        return real_import(name, globals, locals, fromlist, level)

    builtins.__import__ = guarded
    sys.modules.pop("fcntl", None)
    failed, count = [], 0
    root = importlib.import_module("aimos")
    for info in pkgutil.walk_packages(root.__path__, "aimos."):
        if info.name.endswith("__main__"):
            continue  # running the CLI is not importing it
        count += 1
        try:
            importlib.import_module(info.name)
        except ImportError as exc:
            failed.append(f"{info.name}: {exc}")
    print(count)
    print("\\n".join(failed))
    """
)


def test_every_module_imports_without_fcntl() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    count, *failed = done.stdout.splitlines()
    assert int(count) > 150  # the walk saw the whole package, not an empty path
    assert [f for f in failed if f] == []


def test_a_lock_is_exclusive_between_processes(tmp_path: Path) -> None:
    """aimos.locks on this platform: a second process cannot take a lock the first holds, and a
    shared probe fails while it is held and succeeds after."""
    lock = tmp_path / "x.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, sys, time; from aimos.locks import try_lock;"
            f"fd = os.open({str(lock)!r}, os.O_RDWR | os.O_CREAT, 0o600);"
            "print(try_lock(fd), flush=True); sys.stdin.readline()",
        ],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "True"
        import os

        from aimos.locks import try_lock

        fd = os.open(lock, os.O_RDWR)
        try:
            assert try_lock(fd) is False
            assert try_lock(fd, shared=True) is False
        finally:
            os.close(fd)
    finally:
        holder.communicate("\n", timeout=30)
    fd = os.open(lock, os.O_RDWR)
    try:
        assert try_lock(fd, shared=True) is True
    finally:
        os.close(fd)
