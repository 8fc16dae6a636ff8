"""Where a running housekeeper says so: its OS lock, pid file and status file (no APScheduler).

The lock (an exclusive lock on a file in the state dir, aimos.locks) is the truth: it is held exactly as
long as the housekeeper process lives, even after a SIGKILL, so a stale pid or status file never
makes a dead housekeeper look alive.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from aimos import paths
from aimos.errors import BusyError
from aimos.locks import try_lock


def lock_path() -> Path:
    return paths.state_dir() / "housekeeper.lock"


def pid_path() -> Path:
    return paths.state_dir() / "housekeeper.pid"


def status_path() -> Path:
    return paths.state_dir() / "housekeeper-status.json"


def log_path() -> Path:
    return paths.log_dir() / "housekeeper.log"


def backups_dir() -> Path:
    return paths.data_dir() / "backups"


class HousekeeperLock:
    """The exclusive lock one housekeeper holds for its whole life."""

    def __init__(self) -> None:
        self._fd: int | None = None

    def acquire(self) -> None:
        paths.ensure_private_dir(lock_path().parent)
        fd = os.open(lock_path(), os.O_RDWR | os.O_CREAT, 0o600)
        # a few tries: `is_running` in another process takes a shared lock for an instant
        for attempt in range(5):
            if try_lock(fd):
                break
            if attempt < 4:
                time.sleep(0.05)
        else:
            os.close(fd)
            pid = read_pid()
            raise BusyError(
                f"a housekeeper is already running for this brain{f' (pid {pid})' if pid else ''}",
                "There is one housekeeper per brain; see `aimos housekeeper status`, or stop it with "
                "`aimos housekeeper stop`.",
            ) from None
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def is_running() -> bool:
    """True while some process holds the housekeeper lock."""
    if not lock_path().exists():
        return False
    fd = os.open(lock_path(), os.O_RDONLY)
    try:
        return not try_lock(fd, shared=True)
    finally:
        os.close(fd)  # closing drops a lock we may have taken


def read_pid() -> int | None:
    try:
        return int(pid_path().read_text("ascii").strip())
    except (OSError, ValueError):
        return None


def write_pid(pid: int) -> None:
    paths.write_private_file(pid_path(), f"{pid}\n".encode("ascii"))


def read_status() -> dict[str, Any] | None:
    try:
        value = json.loads(status_path().read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def write_status(status: dict[str, Any]) -> None:
    paths.write_private_file(status_path(), (json.dumps(status, indent=2, sort_keys=True) + "\n").encode())


def clear_process_files() -> None:
    with contextlib.suppress(FileNotFoundError):
        pid_path().unlink()


@contextlib.contextmanager
def holding_lock() -> Iterator[HousekeeperLock]:
    lock = HousekeeperLock()
    lock.acquire()
    try:
        yield lock
    finally:
        lock.release()


def service_record_path() -> Path:
    """Which service manager runs this brain's housekeeper (written by the installer)."""
    return paths.state_dir() / "housekeeper-service.json"


def read_service_record() -> dict[str, Any] | None:
    try:
        value = json.loads(service_record_path().read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) and isinstance(value.get("manager"), str) else None


def brain_holders(brain: Path) -> list[int]:
    """Other processes with the brain (or its WAL) open, where /proc tells (Linux)."""
    real = os.path.realpath(brain)
    targets = {real, real + "-wal", real + "-shm"}
    holders = []
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            for fd in (entry / "fd").iterdir():
                if os.path.realpath(os.readlink(fd)) in targets:
                    holders.append(int(entry.name))
                    break
        except OSError:
            continue
    return sorted(holders)


def require_offline(action: str, *, stop_hint: str, close_hint: str) -> None:
    """Refuse (BusyError) while the housekeeper runs or another process holds the brain open:
    what needs the brain to itself (a purge, a restore)."""
    if is_running():
        raise BusyError(f"the housekeeper is running (pid {read_pid()}); {action}", stop_hint)
    holders = brain_holders(paths.brain_path())
    if holders:
        raise BusyError(
            f"other processes hold the brain open: pid {', '.join(map(str, holders))}", close_hint
        )
