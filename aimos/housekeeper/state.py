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
from aimos.errors import BusyError, ServiceError
from aimos.locks import try_lock
from aimos.vocabulary import HOUSEKEEPER


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


def _lock_holders() -> set[int] | None:
    """The pids holding a lock on the housekeeper's lock file as the kernel records them
    (/proc/locks, Linux: written by the kernel, not by whoever can write the state folder); None
    where the OS does not say, or says nothing of this file."""
    try:
        text = Path("/proc/locks").read_text("ascii", "replace")
        st = lock_path().stat()
    except OSError:
        return None
    inode = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    holders = set()
    for line in text.splitlines():
        parts = line.split()  # "1: FLOCK  ADVISORY  WRITE 2278 fe:00:2146754 0 EOF" ("->": waiting)
        if len(parts) >= 6 and parts[1] == "FLOCK" and parts[5] == inode and parts[4].isdigit():
            holders.add(int(parts[4]))
    return holders or None


def _runs_housekeeper(pid: int) -> bool:
    """Whether ``pid``'s command line is aimos's housekeeper (`... aimos housekeeper run`)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes().decode("utf-8", "replace")
        argv = raw.rstrip("\0").split("\0")  # NUL after each argument, the last one too
    except OSError:
        import subprocess

        try:
            shown = subprocess.run(
                ["ps", "-o", "command=", "-p", str(pid)],
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return False
        argv = shown.stdout.split()
    return "aimos" in " ".join(argv) and argv[-2:] == [HOUSEKEEPER, "run"]


def proven_pid() -> int | None:
    """The running housekeeper's pid, proven to be this home's housekeeper before anything signals
    it: the process the kernel says holds the housekeeper lock (Linux), else one whose command line
    is the housekeeper's. None when none runs or no pid is recorded. A pid file naming any other
    process (stale, or forged by someone who can write the state folder) is refused:
    ServiceError, and nothing is signalled."""
    pid = read_pid()
    if pid is None or not is_running():
        return None
    holders = _lock_holders()
    if (pid in holders) if holders is not None else _runs_housekeeper(pid):
        return pid
    raise ServiceError(
        f"{pid_path()} names pid {pid}, which is not the process holding this brain's housekeeper "
        "lock: nothing was signalled",
        f"Check what pid {pid} is; if the file is stale or was not written by aimos, remove it. "
        "`aimos housekeeper status` shows the housekeeper.",
    )


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


def require_offline(
    action: str, *, stop_hint: str, close_hint: str, housekeeper_may_run: bool = False
) -> None:
    """Refuse (BusyError) while the housekeeper runs or another process holds the brain open:
    what needs the brain to itself (a purge, a restore). With ``housekeeper_may_run`` a running
    housekeeper is not refused (the caller stops it, saying so, and checks again) and its own hold
    on the brain is not counted."""
    running = is_running()
    if running and not housekeeper_may_run:
        raise BusyError(f"the housekeeper is running (pid {read_pid()}); {action}", stop_hint)
    holders = brain_holders(paths.brain_path())
    if running:  # the housekeeper's own hold: the process holding its lock, where the kernel says
        housekeeper = _lock_holders() or {pid for pid in (read_pid(),) if pid is not None}
        holders = [pid for pid in holders if pid not in housekeeper]
    if holders:
        raise BusyError(
            f"other processes hold the brain open: pid {', '.join(map(str, holders))}", close_hint
        )
