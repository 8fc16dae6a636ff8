"""The housekeeper process: `aimos housekeeper start|status|stop|run` through the real CLI, its
OS lock (one per brain, BUSY = exit 7 for a second one), SIGKILL and SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support.cli import assert_refused, run_aimos
from support.housekeeper import (
    JOB_NAMES,
    STARTED,
    TERMINAL,
    dead_pid,
    events,
    hk,
    pid_alive,
    read_pid_file,
    read_status_file,
    status_json,
    wait_for,
)

pytestmark = pytest.mark.timeout(120)


def lock_held() -> bool:
    from aimos.housekeeper.state import is_running

    return is_running()


def started_pid(reaper: Any) -> int:
    result = hk("start")
    result.ok()
    pid = read_pid_file(Path(os.environ["AIMOS_HOME"]))
    reaper.watch(pid)
    assert pid and pid_alive(pid), result.describe()
    assert f"pid {pid}" in result.out, result.describe()
    return pid


def assert_ready(pid: int) -> dict[str, Any]:
    report = status_json()
    assert report["running"] is True and report["ready"] is True, report
    assert report["pid"] == pid and report["jobs_registered"] == len(JOB_NAMES), report
    assert sorted(j["name"] for j in report["jobs"]) == sorted(JOB_NAMES)
    assert all(j["registered"] and j["next_run"] > time.time() for j in report["jobs"]), report
    return report


def assert_clean_log(home: Path) -> None:
    log = home / "logs" / "housekeeper.log"
    text = log.read_text()
    assert "ready: 5 jobs registered" in text and "Traceback" not in text, text


def assert_stopped() -> None:
    assert not lock_held()
    report = status_json()
    assert report["running"] is False and report["ready"] is False and report["pid"] is None, report
    assert report["jobs_registered"] == 0


def test_start_status_busy_stop(installed: Path, reaper: Any) -> None:
    assert_stopped()
    text = hk("status").ok().out
    assert "not running" in text and "0 of 5 registered" in text

    pid = started_pid(reaper)
    assert lock_held()
    assert_ready(pid)
    assert f"pid {pid}" in hk("status").ok().out

    again = hk("start")
    assert_refused(again, 7)
    assert f"pid {pid}" in again.err

    clock = time.monotonic()
    second = hk("run", timeout=30)
    assert time.monotonic() - clock < 20
    assert_refused(second, 7)
    assert f"pid {pid}" in second.err
    # the refused process left the running one's files alone
    assert read_pid_file(installed) == pid
    assert_ready(pid)

    stopped = hk("stop")
    stopped.ok()
    assert f"pid {pid}" in stopped.out
    wait_for(lambda: not pid_alive(pid), "the housekeeper process to exit")
    assert_stopped()
    assert read_pid_file(installed) is None
    status_file = read_status_file(installed)
    assert status_file is not None and status_file["running"] is False and status_file["pid"] == pid

    assert_refused(hk("stop"), 3, "aimos housekeeper start")
    assert run_aimos("verify").code == 0
    assert_clean_log(installed)


def test_sigkill_then_start_again(installed: Path, reaper: Any) -> None:
    pid = started_pid(reaper)
    assert_ready(pid)
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not pid_alive(pid), "the killed housekeeper to die")
    wait_for(lambda: not lock_held(), "the OS lock to be released")
    # its pid and status files are stale; status must not believe them
    assert read_pid_file(installed) == pid
    assert (read_status_file(installed) or {}).get("ready") is True
    assert_stopped()

    new_pid = started_pid(reaper)
    assert new_pid != pid
    assert_ready(new_pid)
    assert run_aimos("verify").code == 0
    hk("stop").ok()
    wait_for(lambda: not pid_alive(new_pid), "the second housekeeper to exit")
    assert_stopped()
    assert_clean_log(installed)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_foreground_run_exits_0_on_signal(installed: Path, reaper: Any, tmp_path: Path, sig: int) -> None:
    log = tmp_path / "run.log"
    with log.open("wb") as sink:
        proc = reaper.popen("housekeeper", "run", stdin=subprocess.DEVNULL, stdout=sink, stderr=sink)

    def ready() -> bool:
        status = read_status_file(installed)
        return bool(status and status.get("ready") and status.get("pid") == proc.pid and lock_held())

    wait_for(ready, "the foreground housekeeper to report ready")
    assert_ready(proc.pid)
    proc.send_signal(sig)
    assert proc.wait(timeout=60) == 0, log.read_text()
    text = log.read_text()
    assert "Traceback" not in text and "stopped" in text, text
    status = read_status_file(installed)
    assert status is not None and status["running"] is False and status["ready"] is False
    assert read_pid_file(installed) is None
    assert_stopped()


def test_signal_never_leaves_a_run_open(install_at: Any, reaper: Any, tmp_path: Path) -> None:
    """Stopped while its catch-up runs are queued or running: exit 0, and every run it started
    has its own terminal event (nothing for the next start to mark INTERRUPTED)."""
    from aimos.housekeeper.runs import reconcile_open_runs

    install_at(days_ago=10)  # five catch-up runs are owed
    home = Path(os.environ["AIMOS_HOME"])
    log = tmp_path / "run.log"
    with log.open("wb") as sink:
        proc = reaper.popen("housekeeper", "run", stdin=subprocess.DEVNULL, stdout=sink, stderr=sink)
    wait_for(lambda: events(home, STARTED), "the first catch-up run to start")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=90) == 0, log.read_text()
    started = {e["meta"]["run_id"] for e in events(home, STARTED)}
    finished = {e["meta"]["run_id"]: e["meta"]["status"] for e in events(home, TERMINAL)}
    assert started and started <= set(finished), log.read_text()
    assert "INTERRUPTED" not in finished.values()
    assert reconcile_open_runs() == []


def test_start_does_not_report_a_dead_predecessor_as_ready(
    installed: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """After a SIGKILL the pid file and a ready status file of the dead process remain. A new
    housekeeper takes the lock a moment before it writes its pid; `start` polling in that moment
    must not take the dead process's files as the new one's readiness."""
    from aimos.errors import ServiceError
    from aimos.housekeeper import state
    from aimos.installer import service

    gone = dead_pid()
    state.write_pid(gone)
    state.write_status({"pid": gone, "running": True, "ready": True, "jobs": []})
    # a new housekeeper: holds the lock, has not yet written its pid or status
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "print('locked', flush=True)\n"
            "time.sleep(60)\n",
            str(state.lock_path()),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        assert state.is_running()
        monkeypatch.setattr(service, "READY_TIMEOUT_SECONDS", 0.5)
        try:  # `start` waits for the pid of the process it spawned
            reported: object = service._wait_ready(lambda: None, expected_pid=holder.pid)
        except ServiceError:
            reported = None
        assert reported is None, (
            f"`start` reported the dead pid {gone} as the ready housekeeper "
            f"(status file: {json.dumps(state.read_status())})"
        )
    finally:
        holder.kill()
        holder.wait(timeout=30)


def test_start_clears_a_dead_predecessors_files_and_reports_the_new_pid(installed: Path) -> None:
    """The stale pid and "ready" status a SIGKILLed housekeeper leaves are removed before the new
    one starts, so the pid `start` reports is the live new process."""
    from aimos.housekeeper import state
    from aimos.installer import service

    gone = dead_pid()
    state.write_pid(gone)
    state.write_status({"pid": gone, "running": True, "ready": True, "jobs": []})
    started = service.start()
    try:
        assert started["pid"] != gone
        os.kill(started["pid"], 0)  # alive
        assert state.read_status()["pid"] == started["pid"]  # type: ignore[index]
    finally:
        service.stop()


def test_a_forged_pid_file_signals_nothing(installed: Path, reaper: Any) -> None:
    """Issue 35, item 4: someone who can write the state folder puts another process's pid in
    housekeeper.pid. `aimos housekeeper stop` and `aimos uninstall` must not signal it (they sent it
    SIGTERM, and uninstall then told the person to `kill` it): they refuse, say why, signal nothing,
    and the real housekeeper keeps running. Put back, the pid file works again."""
    from aimos.housekeeper import state

    pid = started_pid(reaper)
    assert_ready(pid)
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        state.pid_path().write_text(f"{victim.pid}\n")
        for args in (("housekeeper", "stop"), ("uninstall", "--yes")):
            refused = run_aimos(*args)
            assert refused.code != 0 and "Traceback" not in refused.both, refused.describe()
            assert "nothing was signalled" in refused.err, refused.describe()
            assert f"kill {victim.pid}" not in refused.both, refused.describe()
            time.sleep(0.3)  # a SIGTERM, had one been sent, has landed by now
            assert victim.poll() is None, f"{args}: the victim was signalled"
            assert pid_alive(pid) and lock_held(), f"{args}: the housekeeper was stopped"
        state.pid_path().write_text(f"{pid}\n")
        hk("stop").ok()
        wait_for(lambda: not pid_alive(pid), "the housekeeper process to exit")
        assert victim.poll() is None
    finally:
        victim.kill()
        victim.wait(timeout=30)


def test_where_the_kernel_does_not_say_the_command_line_must_be_the_housekeepers() -> None:
    """state.proven_pid's fallback (no /proc/locks entry, other systems): a process whose command
    line ends `aimos ... housekeeper run` passes, any other does not."""
    from aimos.housekeeper import state

    like = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)", "aimos", "housekeeper", "run"]
    )
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "housekeeper"])
    try:
        wait_for(lambda: Path(f"/proc/{like.pid}/cmdline").read_bytes().endswith(b"run\0"), "argv")
        assert state._runs_housekeeper(like.pid)
        assert not state._runs_housekeeper(other.pid)
        assert not state._runs_housekeeper(os.getpid())
    finally:
        for proc in (like, other):
            proc.kill()
            proc.wait(timeout=30)
