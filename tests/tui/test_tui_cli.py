"""`aimos tui` through the real CLI in a subprocess: it refuses, with the exit codes of SPEC
section 15 and a hint, when there is no terminal (2), no brain (3) or no such enrolled agent (3);
in a real pseudo-terminal it starts, paints the memories screen and quits on q."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from support.cli import assert_refused, run_aimos, snapshot
from support.tui import cli_save


def test_refuses_without_a_terminal_with_exit_2(installed: Path) -> None:
    before = snapshot(installed)
    result = run_aimos("tui")  # stdin is /dev/null, stdout a pipe
    assert_refused(result, 2, "interactive terminal")
    assert "needs a terminal" in result.err
    result = run_aimos("tui", input="q\n")  # a pipe on stdin is not a terminal either
    assert_refused(result, 2, "terminal")
    assert snapshot(installed).counts == before.counts


def test_refuses_when_no_brain_is_installed_with_exit_3(aimos_home: Path) -> None:
    result = run_aimos("tui")
    assert_refused(result, 3, "aimos install")
    assert str(aimos_home / "brain.sqlite3") in result.err
    assert not (aimos_home / "brain.sqlite3").exists(), "nothing is created"


def test_refuses_an_agent_that_is_not_enrolled_with_exit_3(installed: Path) -> None:
    result = run_aimos("tui", "--as", "nobody")
    assert_refused(result, 3, "aimos agent")
    assert "'nobody' is not enrolled" in result.err


def test_refuses_a_reserved_or_malformed_agent_id_with_exit_2(installed: Path) -> None:
    assert_refused(run_aimos("tui", "--as", "housekeeper"), 2)
    assert_refused(run_aimos("tui", "--as", "not an id!"), 2)


def _read_until(fd: int, proc: subprocess.Popen[bytes], wanted: bytes, timeout: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and wanted not in seen and proc.poll() is None:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:
                break
    return seen


def in_a_terminal(argv: list[str], wait_for: bytes, key: bytes) -> tuple[int, bytes, bytes]:
    """Run ``argv`` in a real 80x24 pseudo-terminal, wait until it has drawn ``wait_for``, press
    ``key``, and read until it exits: (exit code, what it drew first, what came after the key)."""
    primary, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = dict(os.environ, TERM="xterm-256color", COLUMNS="80", LINES="24")
    env.pop("TEXTUAL", None)
    env.pop("AIMOS_DEBUG", None)
    proc = subprocess.Popen(
        argv,
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        env=env,
        close_fds=True,
        start_new_session=True,
    )
    os.close(secondary)
    try:
        painted = _read_until(primary, proc, wait_for, timeout=30)
        assert wait_for in painted, f"not drawn:\n{painted[-2000:]!r}"
        os.write(primary, key)
        rest = _read_until(primary, proc, b"never printed", timeout=30)  # drained until it exits
        code = proc.wait(timeout=5)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        os.close(primary)
    return code, painted, rest


def test_starts_in_a_real_terminal_and_quits_on_q(installed: Path) -> None:
    memory = cli_save("The boiler is serviced every October")
    code, painted, rest = in_a_terminal([sys.executable, "-m", "aimos", "tui"], memory[:8].encode(), b"q")
    assert code == 0, (painted + rest)[-2000:]
    assert b"Traceback" not in painted + rest


BROKEN_APP = """
import sys
from aimos.tui.app import AimosApp

class Broken(AimosApp):  # a bug in an action, to see what reaches the person at the terminal
    def action_help(self) -> None:
        secret_local = "do-not-show-this-local"
        raise RuntimeError(secret_local)

app = Broken()
app.run()
sys.exit(app.return_code or 0)
"""


def test_an_internal_error_ends_the_app_with_one_line_and_no_locals(installed: Path) -> None:
    memory = cli_save("The boiler is serviced every October")
    code, painted, rest = in_a_terminal([sys.executable, "-c", BROKEN_APP], memory[:8].encode(), b"?")
    assert code == 1
    assert b"internal error in aimos tui (RuntimeError)" in rest, rest[-2000:]
    assert b"Traceback" not in rest and b"do-not-show-this-local" not in painted + rest
