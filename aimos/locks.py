"""Advisory file locks a process holds for as long as it lives (the OS drops them when it ends, even
by a kill): the one home for the platform difference, so no module imports a POSIX-only module at
import time.

POSIX uses `flock`; Windows uses `msvcrt.locking` on the file's first byte, which has no shared
mode (a shared probe takes the exclusive lock for an instant). Only Linux is tested here.
"""

from __future__ import annotations

import sys


def try_lock(fd: int, *, shared: bool = False) -> bool:
    """Take the lock on the open file ``fd`` without waiting: True when taken, False when another
    process holds it. Closing ``fd`` releases it."""
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
