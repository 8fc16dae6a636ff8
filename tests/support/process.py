"""Processes in tests: poll with a deadline, tell a live housekeeper from a dead or zombie pid."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def wait_for(condition: Callable[[], T], what: str, timeout: float = 30.0, every: float = 0.05) -> T:
    """Poll ``condition`` until it returns something truthy; fail naming ``what`` at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


def pid_alive(pid: int | None) -> bool:
    """A running process (a zombie nobody reaped yet counts as dead: it holds no lock, runs no job)."""
    if not pid:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def is_housekeeper(pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"housekeeper" in cmdline and b"run" in cmdline


def read_pid_file(home: Path) -> int | None:
    try:
        return int((home / "state" / "housekeeper.pid").read_text().strip())
    except (OSError, ValueError):
        return None


def kill_housekeeper(pid: int | None) -> None:
    if pid and pid_alive(pid) and is_housekeeper(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
