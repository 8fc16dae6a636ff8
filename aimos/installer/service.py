"""Register, start and stop the housekeeper as a user service.

Where a user service manager answers, the housekeeper is a systemd user unit (Linux) or a
launchd agent (macOS), rendered from the templates in `packaging/` (shipped in the wheel as
`aimos/installer/packaging/`); elsewhere (a container, no user session) it is a detached process with
a pid file. What was chosen is recorded in the state dir, so `aimos housekeeper start|stop` and a
rollback use the same manager.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import escape

from aimos import paths
from aimos.errors import AimosError, BusyError, NotFoundError, ServiceError, UsageError
from aimos.housekeeper import state
from aimos.housekeeper.runs import pid_alive
from aimos.vocabulary import HOUSEKEEPER, HOUSEKEEPER_SERVICE_SCHEMA

if TYPE_CHECKING:
    from aimos.actions.doctor import Check

MANAGERS = ("systemd", "launchd", "process")
SERVICE_CHOICES = ("auto", *MANAGERS, "none")
READY_TIMEOUT_SECONDS = 30.0
STOP_TIMEOUT_SECONDS = 150.0
# what decides where the brain is (and its keystore), passed to the service as absolute paths
ENV_PASSED = ("AIMOS_HOME", "AIMOS_KEYSTORE", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME")
ENV_PATHS = ("AIMOS_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME")


def templates_dir() -> Path:
    """`aimos/installer/packaging` inside an installed wheel; `packaging/` at the root of a checkout,
    two levels above this folder. (Above an installed wheel's `aimos/` is site-packages, where a
    `packaging` is the PyPA library: it has no systemd/ folder and is passed over.)"""
    here = Path(__file__).resolve().parent
    for candidate in (here / "packaging", here.parent.parent / "packaging"):
        if (candidate / "systemd").is_dir():
            return candidate
    raise ServiceError(
        "the service templates (packaging/) are missing from this aimos installation",
        "Reinstall aimos, or install with --no-service.",
    )


@dataclass
class ServiceRecord:
    manager: str
    name: str  # the unit name, launchd label or "process"
    path: str | None  # the unit or plist file written, if any

    def to_json(self) -> dict[str, Any]:
        return {"schema": HOUSEKEEPER_SERVICE_SCHEMA, **self.__dict__}


def read_record() -> ServiceRecord | None:
    """The service `register` recorded; one naming a unit, job or file aimos does not write (the
    record edited, or copied from elsewhere) is refused: uninstall would disable and delete it."""
    data = state.read_service_record()
    if data is None:
        return None
    record = ServiceRecord(str(data["manager"]), str(data.get("name", data["manager"])), data.get("path"))
    if not _recorded_as_written(record):
        raise ServiceError(
            f"the service record {state.service_record_path()} names {record.manager} {record.name!r} at "
            f"{record.path!r}, which aimos does not write",
            "It was changed outside aimos: remove that service by hand if it is aimos's, then delete "
            "the record.",
        )
    return record


def _recorded_as_written(record: ServiceRecord) -> bool:
    """Whether ``record`` is one `register` writes: its manager's name pattern, at its manager's place."""
    if record.manager == "process":
        return record.path is None
    if record.manager == "systemd":
        where = _systemd_dir() / record.name
        named = re.fullmatch(r"aimos-housekeeper-[0-9a-f]{8}\.service", record.name) is not None
    elif record.manager == "launchd":
        where = Path.home() / "Library" / "LaunchAgents" / f"{record.name}.plist"
        named = re.fullmatch(r"org\.aimos\.housekeeper\.[0-9a-f]{8}", record.name) is not None
    else:
        return False
    return named and (record.path is None or Path(str(record.path)) == where)


def _write_record(record: ServiceRecord) -> None:
    paths.write_private_file(
        state.service_record_path(), (json.dumps(record.to_json(), indent=2) + "\n").encode()
    )


def _run(argv: list[str], timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess(argv, 127, "", str(exc))


def systemd_user_available() -> bool:
    if not sys.platform.startswith("linux") or shutil.which("systemctl") is None:
        return False
    done = _run(["systemctl", "--user", "is-system-running"], timeout=10)
    return done.stdout.strip() in ("running", "degraded", "starting")


def detect_manager() -> str:
    if sys.platform == "darwin" and shutil.which("launchctl"):
        return "launchd"
    if systemd_user_available():
        return "systemd"
    return "process"


def choose_manager(choice: str) -> str | None:
    """The manager for ``--service CHOICE``; None for none."""
    if choice not in SERVICE_CHOICES:
        raise UsageError(
            f"unknown service choice {choice!r}", f"Use --service {' | '.join(SERVICE_CHOICES)}."
        )
    if choice == "none":
        return None
    if choice == "auto":
        return detect_manager()
    if choice == "systemd" and not systemd_user_available():
        raise UsageError(
            "no systemd user session answers here",
            "Use --service process (a detached process) or --no-service.",
        )
    if choice == "launchd" and sys.platform != "darwin":
        raise UsageError("launchd exists only on macOS", "Use --service auto.")
    return choice


def command() -> list[str]:
    return [sys.executable, "-m", "aimos", HOUSEKEEPER, "run"]


def _environment() -> dict[str, str]:
    env = {k: os.environ[k] for k in ENV_PASSED if os.environ.get(k)}
    for k in ENV_PATHS:  # the service runs in another working directory: no relative paths
        if k in env:
            env[k] = str(Path(env[k]).expanduser().absolute())
    return env


def systemd_quote(word: str) -> str:
    """One word of an ExecStart= line: double-quoted, with backslash, quote, $ and % escaped."""
    escaped = word.replace("\\", "\\\\").replace('"', '\\"').replace("$", "$$").replace("%", "%%")
    return f'"{escaped}"'


def _unit_name(brain_id: str) -> str:
    return f"aimos-housekeeper-{brain_id[:8]}.service"


def _label(brain_id: str) -> str:
    return f"org.aimos.housekeeper.{brain_id[:8]}"


def render_systemd_unit(brain_id: str) -> str:
    def systemd_escape(value: str) -> str:
        return value.replace("%", "%%")

    def quoted(value: str) -> str:  # inside Environment="...": backslash and quote escaped
        return systemd_escape(value).replace("\\", "\\\\").replace('"', '\\"')

    env = "\n".join(f'Environment="{quoted(k)}={quoted(v)}"' for k, v in _environment().items())
    template = Template((templates_dir() / "systemd" / "aimos-housekeeper.service.in").read_text("utf-8"))
    return template.substitute(
        description=f"aimos housekeeper for brain {brain_id}",
        exec_start=" ".join(systemd_quote(word) for word in command()),
        environment=env,
        working_directory=systemd_escape(str(paths.data_dir())),
    )


def render_launchd_plist(brain_id: str) -> str:
    indent = " " * 8
    arguments = "\n".join(f"{indent}<string>{escape(a)}</string>" for a in command())
    env = "\n".join(
        f"{indent}<key>{escape(k)}</key>\n{indent}<string>{escape(v)}</string>"
        for k, v in _environment().items()
    )
    log = str(state.log_path())
    template = Template((templates_dir() / "launchd" / "org.aimos.housekeeper.plist.in").read_text("utf-8"))
    return template.substitute(
        label=escape(_label(brain_id)),
        program_arguments=arguments,
        environment=env,
        working_directory=escape(str(paths.data_dir())),
        stdout_path=escape(log),
        stderr_path=escape(log),
    )


def _systemd_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "systemd" / "user"


def _check(done: subprocess.CompletedProcess[str], what: str) -> None:
    if done.returncode != 0:
        raise ServiceError(
            f"{what} failed: {(done.stderr or done.stdout).strip()[:300]}",
            "Install with --service process (a detached process) or --no-service, "
            "then start it with `aimos housekeeper start`.",
        )


def _write_unit_file(path: Path, text: str) -> None:
    """Write a unit or plist 0600 atomically without tightening the user's own folder's mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, text.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def register(brain_id: str, manager: str) -> ServiceRecord:
    """Write the unit (or plist) for this brain and record the manager; starts nothing. The
    record is written first, so an undo finds the unit even when enabling it failed."""
    paths.ensure_private_dir(paths.log_dir())
    if manager == "systemd":
        unit = _systemd_dir() / _unit_name(brain_id)
        record = ServiceRecord("systemd", unit.name, str(unit))
        _write_record(record)
        _write_unit_file(unit, render_systemd_unit(brain_id))
        _check(_run(["systemctl", "--user", "daemon-reload"]), "systemctl --user daemon-reload")
        _check(_run(["systemctl", "--user", "enable", unit.name]), f"systemctl --user enable {unit.name}")
    elif manager == "launchd":
        plist = Path.home() / "Library" / "LaunchAgents" / f"{_label(brain_id)}.plist"
        record = ServiceRecord("launchd", _label(brain_id), str(plist))
        _write_record(record)
        _write_unit_file(plist, render_launchd_plist(brain_id))
    else:
        record = ServiceRecord("process", "process", None)
        _write_record(record)
    return record


def unregister() -> list[str]:
    """Stop the housekeeper if it runs and remove what `register` wrote (best effort, complete).

    Returns what the service manager refused (``systemctl ... failed: ...``), empty when all
    went through; the unit file and the record are removed either way."""
    record = read_record()
    if state.is_running():
        try:
            stop()
        except AimosError:
            _kill_pid(signal.SIGKILL)
    problems: list[str] = []

    def run(argv: list[str], timeout: float = 30.0) -> None:
        done = _run(argv, timeout)
        if done.returncode != 0:
            problems.append(f"{' '.join(argv)} failed: {(done.stderr or done.stdout).strip()[:300]}")

    # also when nothing holds the lock: a unit in a restart loop, or a job launchd keeps alive
    if record is not None and record.manager == "systemd":
        run(["systemctl", "--user", "disable", "--now", record.name], timeout=STOP_TIMEOUT_SECONDS)
        if record.path:
            Path(record.path).unlink(missing_ok=True)
        run(["systemctl", "--user", "daemon-reload"])
    elif record is not None and record.manager == "launchd":
        # bootout of a job launchd no longer knows (it was never loaded, or a reboot) says so: not a problem
        _run(["launchctl", "bootout", f"gui/{os.getuid()}/{record.name}"], timeout=STOP_TIMEOUT_SECONDS)
        if record.path:
            Path(record.path).unlink(missing_ok=True)
    state.service_record_path().unlink(missing_ok=True)
    return problems


def _spawn_detached() -> int:
    paths.ensure_private_dir(paths.log_dir())
    log_fd = os.open(state.log_path(), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        proc = subprocess.Popen(
            command(),
            stdin=subprocess.DEVNULL,
            stdout=log_fd,
            stderr=log_fd,
            start_new_session=True,  # no controlling terminal: a closed shell does not stop it
            close_fds=True,
            cwd=str(paths.ensure_private_dir(paths.data_dir())),
            env={**os.environ, **_environment()},  # absolute paths: the working directory differs
        )
    finally:
        os.close(log_fd)
    return _wait_ready(lambda: proc.poll(), expected_pid=proc.pid)


def _log_tail(lines: int = 8) -> str:
    try:
        text = state.log_path().read_text("utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(text[-lines:])


def _wait_ready(exited: Any = None, expected_pid: int | None = None) -> int:
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        status = state.read_status()
        pid = state.read_pid()
        if (
            status
            and status.get("ready")
            and status.get("pid") == pid
            and (expected_pid is None or pid == expected_pid)
            and state.is_running()
        ):
            return int(pid) if pid is not None else 0
        if exited is not None and exited() is not None:
            raise ServiceError(
                f"the housekeeper exited at start: {_log_tail()}",
                f"See {state.log_path()}.",
            )
        time.sleep(0.05)
    raise ServiceError(
        f"the housekeeper did not report ready within {READY_TIMEOUT_SECONDS:.0f} s: {_log_tail()}",
        f"See {state.log_path()}; `aimos housekeeper run` shows it in the foreground.",
    )


def start() -> dict[str, Any]:
    """Start the housekeeper through its recorded manager; BUSY when it already runs."""
    if state.is_running():
        raise BusyError(
            f"the housekeeper is already running (pid {state.read_pid()})",
            "`aimos housekeeper status` shows its jobs; `aimos housekeeper stop` stops it.",
        )
    record = read_record() or ServiceRecord("process", "process", None)
    # A killed predecessor leaves its pid and a "ready" status behind; clear them, so readiness
    # can only be reported by the process started now.
    state.clear_process_files()
    state.status_path().unlink(missing_ok=True)
    if record.manager == "systemd":
        _check(_run(["systemctl", "--user", "start", record.name]), f"systemctl --user start {record.name}")
        pid = _wait_ready()
    elif record.manager == "launchd":
        domain = f"gui/{os.getuid()}"
        _run(["launchctl", "bootout", f"{domain}/{record.name}"])
        _check(_run(["launchctl", "bootstrap", domain, str(record.path)]), "launchctl bootstrap")
        pid = _wait_ready()
    else:
        pid = _spawn_detached()
    return {"manager": record.manager, "name": record.name, "pid": pid}


def _process_alive(pid: int) -> bool:
    """True while ``pid`` runs; a child of ours that exited is reaped here, and a zombie (dead,
    not yet reaped by another parent) counts as gone."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:
        pass  # not our child
    return pid_alive(pid)


def _kill_pid(sig: signal.Signals) -> int | None:
    """Signal the housekeeper, proven to be this home's (state.proven_pid: a pid file naming any
    other process is refused, nothing signalled)."""
    pid = state.proven_pid()
    if pid is not None:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return None
    return pid


def stop() -> dict[str, Any]:
    """Ask the running housekeeper to finish its job and exit; wait until its lock is free."""
    if not state.is_running():
        raise NotFoundError(
            "no housekeeper is running for this brain",
            "Start it with `aimos housekeeper start`; `aimos housekeeper status` shows its last runs.",
        )
    record = read_record() or ServiceRecord("process", "process", None)
    pid = state.proven_pid()  # a forged or stale pid file: refused before anything is stopped
    if record.manager == "systemd":
        _check(
            _run(["systemctl", "--user", "stop", record.name], timeout=STOP_TIMEOUT_SECONDS), "systemctl stop"
        )
    elif record.manager == "launchd":
        _run(["launchctl", "bootout", f"gui/{os.getuid()}/{record.name}"], timeout=STOP_TIMEOUT_SECONDS)
    else:
        _kill_pid(signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
    # the lock goes first, then the process finishes exiting: wait for both
    while state.is_running() or (pid is not None and _process_alive(pid)):
        if time.monotonic() > deadline:
            raise ServiceError(
                f"the housekeeper (pid {pid}) did not stop within {STOP_TIMEOUT_SECONDS:.0f} s",
                f"It may be in a long job; wait, or end it with `kill {pid}`.",
            )
        time.sleep(0.05)
    return {"manager": record.manager, "name": record.name, "pid": pid}


class Paused:
    """The housekeeper stopped for a command that needs the brain to itself (a restore, a purge),
    each step said through ``tell``: ``stop`` stops a running one (a housekeeper that cannot be
    stopped is refused, BusyError, with nothing changed), ``start_again`` starts it again when
    ``stop`` stopped it."""

    def __init__(self, action: str, tell: Callable[[str], None]) -> None:
        self.action = action
        self.tell = tell
        self.stopped = False

    def stop(self) -> None:
        if self.stopped or not state.is_running():
            return
        asked = False
        try:
            pid = state.proven_pid()  # a pid file naming another process: refused, nothing signalled
            shown = f" (pid {pid})" if pid else ""
            self.tell(f"stopping the housekeeper{shown} for {self.action}; its running job finishes first")
            asked = True
            stop()
        except AimosError as exc:
            if state.is_running():
                if not asked:
                    raise BusyError(
                        f"the housekeeper could not be stopped for {self.action}: {exc.message}; "
                        "nothing was changed",
                        exc.hint or "Stop it with `aimos housekeeper stop`, then run the command again.",
                    ) from None
                # asked to stop and not stopped in time: it may still stop after its running job
                raise BusyError(
                    f"the housekeeper did not stop in time for {self.action}: {exc.message}; the brain "
                    "was not touched, but the housekeeper was asked to stop and may yet do so",
                    "`aimos housekeeper status` says whether it runs; `aimos housekeeper start` starts it "
                    "again. Then run the command again.",
                ) from None
        self.stopped = True  # (or it ended by itself meanwhile: it is started again all the same)

    def start_again(self, because: str = "") -> None:
        """Start the housekeeper ``stop`` stopped (``because``: why, when the command failed)."""
        if not self.stopped:
            return
        self.stopped = False
        try:
            started = start()
        except AimosError as exc:
            self.tell(
                f"warning: {because}the housekeeper could not be started again: {exc.message}; "
                "start it with `aimos housekeeper start`"
            )
            return
        self.tell(f"{because}started the housekeeper again (pid {started['pid']})")


def service_check() -> Check:
    """`aimos doctor`'s look at the housekeeper's user service: registered, its unit or plist
    there, enabled and running. Reads only; starts nothing."""
    from aimos.actions.doctor import FAIL, OK, WARN, Check

    record = read_record()
    running = state.is_running()
    now = f"running (pid {state.read_pid()})" if running else "not running"
    start = "aimos housekeeper start" + (" after each boot" if running else "")
    if record is None:
        what = "no user service is registered (installed with --no-service, or uninstalled)"
        fix = "aimos install (registers and starts it, reusing the brain)"
        return Check("service", WARN, f"{what}, so it does not start again after a reboot; {now}", fix)
    if record.manager == "process":
        what = "a detached process: no user service manager answered at install"
        return Check("service", WARN, f"{what}, so it does not start again after a reboot; {now}", start)
    if record.path and not Path(record.path).exists():
        return Check(
            "service",
            FAIL,
            f"the {record.manager} service {record.name} is registered, but {record.path} is missing",
            f"rm {state.service_record_path()} && aimos housekeeper start (then it runs detached)",
        )
    if record.manager == "systemd":
        asked = [
            _run(["systemctl", "--user", question, record.name], timeout=10).stdout.strip()
            for question in ("is-enabled", "is-active")
        ]
        if asked[0] != "enabled":
            fix = f"systemctl --user enable {record.name}" + (
                "" if running else " && aimos housekeeper start"
            )
            return Check(
                "service", WARN, f"systemd user unit {record.name} is {asked[0] or 'unknown'}; {now}", fix
            )
        loaded = asked[1] == "active"
    else:
        loaded = _run(["launchctl", "print", f"gui/{os.getuid()}/{record.name}"], timeout=10).returncode == 0
    if not (loaded and running):
        return Check("service", WARN, f"{record.manager} service {record.name} is registered; {now}", start)
    return Check("service", OK, f"{record.manager} service {record.name} is registered and {now}")
