"""`aimos uninstall`: stop and remove the housekeeper's service and aimos's own state files,
keeping the brain, its keys, backups and records, so `aimos install` reuses them.

What goes: the housekeeper's service (stopped first; the systemd unit or launchd plist and the
record of which manager runs it), its lock, pid and status files, its log, and the lock files of
`aimos install` and of a passphrase change or keystore move. What stays: the brain (with its WAL),
its keys (OS keychain items or the file keystore), backups and replaced brains, the record of the
backups aimos wrote, anchors.json with the freshness and redaction records beside it, the
onboarding receipt, purge receipts and the command log. Destroying the brain is the purge
ceremony's alone (`aimos uninstall --purge` runs it through the CLI; this package never imports
`purge`).

A housekeeper that cannot be stopped is reported (ServiceError) with nothing removed: it is never
killed here, since it may be in the middle of a job.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aimos import paths
from aimos.errors import AimosError, BusyError, HomeNotWritableError, ServiceError
from aimos.housekeeper import state

REINSTALL = "aimos install"


@dataclass
class UninstallPlan:
    """What is here now: the service to stop and remove, the files to remove, what stays."""

    brain_path: str
    brain_id: str | None
    service: dict[str, Any] | None  # manager, name, path (unit/plist), running, pid
    remove: list[str]  # files that exist now and go
    keep: list[dict[str, str]]  # what stays, and where
    problems: list[str] = field(default_factory=list)  # what could not be read (the brain, ...)

    @property
    def nothing_to_remove(self) -> bool:
        return self.service is None and not self.remove

    def to_json(self) -> dict[str, Any]:
        return {
            "brain_path": self.brain_path,
            "brain_id": self.brain_id,
            "service": self.service,
            "remove": self.remove,
            "keep": self.keep,
            "reinstall": REINSTALL,
        }


@dataclass
class UninstallResult:
    plan: UninstallPlan
    service_stopped: bool = False
    removed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _lock_files() -> list[Path]:
    """Locks other commands take in the state dir: an install's, a key change's (one per brain)."""
    folder = paths.state_dir()
    found = [folder / "install.lock"]
    if folder.is_dir():
        found += sorted(folder.glob("keys-*.lock"))
    return found


def _state_files() -> list[Path]:
    """aimos's own files for the housekeeper and the locks, which exist now (the service's unit
    file is the service's, removed with it)."""
    candidates = [
        state.pid_path(),
        state.status_path(),
        state.lock_path(),
        state.service_record_path(),
        state.log_path(),
        *_lock_files(),
    ]
    return [p for p in candidates if p.exists()]


def _brain_facts(brain: Path) -> tuple[str | None, str | None, str | None]:
    """(brain id, keystore kind, problem) read from the brain; None where it cannot be read."""
    from aimos.installer.setup import is_unfinished_install
    from aimos.store.connection import EngineError, open_reader
    from aimos.store.meta import brain_meta

    if not brain.exists():
        return None, None, None
    try:
        if is_unfinished_install(brain):
            return None, None, "the brain file holds no installed brain (an install that never finished)"
        conn = open_reader(brain)
        try:
            meta = brain_meta(conn)
        finally:
            conn.close()
    except (AimosError, EngineError) as exc:
        return None, None, f"the brain could not be read ({getattr(exc, 'message', exc)})"
    return meta.get("brain_id"), meta.get("keystore"), None


def _kept(brain: Path, brain_id: str | None, keystore: str | None) -> list[dict[str, str]]:
    keep: list[dict[str, str]] = []
    if brain.exists():
        keep.append({"what": "brain", "where": str(brain)})
    if brain_id and keystore == "os":
        from aimos.identity.keystore import service_name

        keep.append({"what": "keys", "where": f"OS keychain, service {service_name(brain_id)}"})
    elif brain_id and keystore == "file":
        keep.append({"what": "keys", "where": str(paths.keystore_dir(brain_id))})
    if brain.parent.is_dir():
        for replaced in sorted(brain.parent.glob(f"{brain.name}.replaced-*")):
            keep.append({"what": "replaced brain", "where": str(replaced)})
    extra = [
        ("backups", state.backups_dir()),
        ("trust anchor", paths.anchors_path()),
        ("view setting", paths.view_setting_path()),
        ("onboarding receipt", paths.state_dir() / "onboarding" / "first-launch-receipt.json"),
        ("purge receipts", paths.purge_receipts_dir()),
        ("command log", paths.log_dir() / "aimos.log"),
    ]
    if brain_id:
        from aimos.actions.redaction import outside_path
        from aimos.housekeeper.backup_records import records_path
        from aimos.store.freshness import freshness_path

        extra[2:2] = [
            ("newest-seal anchor", freshness_path(brain_id)),
            ("redaction records", outside_path(brain_id)),
            ("backup records", records_path(brain_id)),
        ]
    keep += [{"what": what, "where": str(where)} for what, where in extra if where.exists()]
    return keep


def plan() -> UninstallPlan:
    """What `aimos uninstall` would do here; changes nothing."""
    from aimos.installer import service

    brain = paths.brain_path()
    brain_id, keystore, problem = _brain_facts(brain)
    record = service.read_record()
    running = state.is_running()
    found: dict[str, Any] | None = None
    if record is not None or running:
        found = {
            "manager": record.manager if record else "process",
            "name": record.name if record else "process",
            "path": record.path if record and record.path and Path(record.path).exists() else None,
            "running": running,
            "pid": state.read_pid() if running else None,
        }
    return UninstallPlan(
        brain_path=str(brain),
        brain_id=brain_id,
        service=found,
        remove=[str(p) for p in _state_files()],
        keep=_kept(brain, brain_id, keystore),
        problems=[problem] if problem else [],
    )


def _refuse_while_busy() -> None:
    """An install or a key change running now holds its lock: its file must not go under it."""
    from aimos.locks import try_lock

    for lock in _lock_files():
        try:
            fd = os.open(lock, os.O_RDWR)
        except FileNotFoundError:
            continue
        try:
            if not try_lock(fd):
                what = (
                    "an `aimos install`"
                    if lock.name == "install.lock"
                    else "a passphrase change or keystore move"
                )
                raise BusyError(
                    f"{what} is running for this home (it holds {lock}); nothing was removed",
                    "Wait for it to finish, then run `aimos uninstall` again.",
                )
        finally:
            os.close(fd)


def stop_housekeeper() -> dict[str, Any] | None:
    """Stop a running housekeeper through its manager and wait until it is gone; None when none
    ran. One that will not stop is an error (ServiceError), never killed here."""
    from aimos.installer import service

    if not state.is_running():
        return None
    try:
        pid = state.proven_pid()
    except AimosError:
        pid = None  # the pid file names another process: never suggest killing it
    try:
        return service.stop()
    except AimosError as exc:
        if not state.is_running():  # it ended by itself meanwhile
            return {"pid": pid}
        shown = f" (pid {pid})" if pid else ""
        raise ServiceError(
            f"the housekeeper{shown} could not be stopped: {exc.message}; nothing was removed",
            (f"Stop it yourself (`kill {pid}`)" if pid else "Stop it yourself")
            + ", then run `aimos uninstall` again. `aimos housekeeper status` shows what it is doing.",
        ) from None


def start_housekeeper_again() -> dict[str, Any] | None:
    """Start the housekeeper after ``stop_housekeeper`` when what followed did not happen (a purge
    ceremony refused); None when it is running already or no service is registered."""
    from aimos.installer import service

    if state.is_running() or service.read_record() is None:
        return None
    return service.start()


def _remove(path: Path) -> bool:
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise HomeNotWritableError(
            f"aimos could not remove {path}: {exc.strerror or exc}",
            "Fix the folder's permissions, then run `aimos uninstall` again (what is removed stays removed).",
        ) from None
    return True


def uninstall(found: UninstallPlan) -> UninstallResult:
    """Stop the housekeeper, remove its service and the state files; the brain, keys, backups and
    records stay. Nothing is removed when the housekeeper cannot be stopped."""
    from aimos.installer import service

    result = UninstallResult(found)
    _refuse_while_busy()
    stopped = stop_housekeeper()
    result.service_stopped = stopped is not None
    record = service.read_record()
    written = [Path(record.path)] if record and record.path else []
    written.append(state.service_record_path())
    existed = [p for p in written if p.exists()]
    try:
        result.warnings += service.unregister()
    except OSError as exc:  # the unit file or the record would not go
        raise ServiceError(
            f"the housekeeper's service could not be removed: {exc.strerror or exc}",
            "Fix the folder's permissions, then run `aimos uninstall` again.",
        ) from None
    if state.is_running():  # a manager that started it again (it would also come back after a reboot)
        raise ServiceError(
            f"the housekeeper is running again (pid {state.read_pid()}) after it was stopped; "
            "its service may not be removed",
            "Check `aimos housekeeper status`; stop it with `aimos housekeeper stop`, then run "
            "`aimos uninstall` again.",
        )
    for path in existed:
        if path.exists():
            raise ServiceError(
                f"the housekeeper's service file {path} could not be removed",
                "Remove it by hand (for a systemd unit, then `systemctl --user daemon-reload`).",
            )
        result.removed.append(str(path))
    for path in _state_files():
        if _remove(path):
            result.removed.append(str(path))
    return result
