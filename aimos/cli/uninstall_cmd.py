"""`aimos uninstall`: stop and remove the housekeeper's service and aimos's state files, keeping
the brain, its keys and backups (`aimos install` reuses them); `--purge` adds the purge ceremony.

Asks before it removes anything (`--yes` does not ask; without a terminal it must be given),
`--dry-run` says what would go and what stays, and a second run finds nothing to remove. The work
is `aimos.installer.uninstall`'s; the ceremony is `aimos purge`'s own (reached through cli.purge_cmds).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from aimos.cli.options import PASSPHRASE_FD, json_option
from aimos.cli.output import emit_json, out, say
from aimos.plural import plural


def register(app: typer.Typer) -> None:
    @app.command("uninstall")
    def uninstall_cmd(
        purge: bool = typer.Option(
            False,
            "--purge",
            help="Also destroy the brain, its keys and backups: runs the purge ceremony "
            "(master passphrase and its typed confirmation; a signed receipt).",
        ),
        dry_run: bool = typer.Option(
            False, "--dry-run", help="Say what would be removed and what stays; change nothing."
        ),
        yes: bool = typer.Option(
            False, "--yes", "-y", help="Do not ask before removing (the purge ceremony still asks its own)."
        ),
        passphrase_fd: int = PASSPHRASE_FD,
        json_out: bool = json_option(),
    ) -> None:
        """Remove the housekeeper; keep brain and keys.

        Stops the housekeeper and removes its service (systemd user unit, launchd agent or
        detached process) and aimos's state files: its pid, status and lock files, its log and
        the install and key-change locks. The brain, its keys, backups, anchors.json and the
        onboarding receipt stay, and `aimos install` reuses them. Asks first (--yes does not);
        --purge also destroys the brain through the purge ceremony."""
        from aimos.errors import UsageError
        from aimos.installer import uninstall as removal

        if passphrase_fd is not None and not purge:
            raise UsageError(
                "--passphrase-fd applies only with --purge; nothing was removed",
                "The uninstall itself needs no master passphrase; leave that option out, or add --purge.",
            )
        found = removal.plan()
        for problem in found.problems:
            say(f"note: {problem}")
        if purge and _has_something_to_purge(found):
            _purge(found, dry_run, passphrase_fd, json_out)
            return
        if purge:
            say(f"no brain at {found.brain_path}: nothing to purge")
        if dry_run or found.nothing_to_remove:
            _render(found, None, "dry_run" if dry_run else "nothing_to_remove", json_out)
            return
        if not yes:
            _confirm(found)
        _render(found, removal.uninstall(found), "uninstalled", json_out)


def _has_something_to_purge(found: Any) -> bool:
    from aimos.cli.purge_cmds import ceremony_pending

    return Path(found.brain_path).exists() or ceremony_pending()


def _service_words(service: dict[str, Any]) -> str:
    running = f", running as pid {service['pid']}" if service["running"] else ", not running"
    return f"the housekeeper service ({service['manager']}{running})"


def _confirm(found: Any) -> None:
    """Ask at the terminal; without one, --yes is needed. No (or Enter) removes nothing (exit 8)."""
    from aimos.errors import AbortedError, UsageError

    if not sys.stdin.isatty():
        raise UsageError(
            "aimos uninstall asks before it removes anything, and there is no terminal to ask at; "
            "nothing was removed",
            "Run `aimos uninstall --yes` (`aimos uninstall --dry-run` shows what it would remove).",
        )
    what = [_service_words(found.service)] if found.service else []
    if found.remove:
        what.append(plural(len(found.remove), "state file"))
    say(f"This removes {' and '.join(what)}; the brain, its keys and backups stay.")
    try:
        agreed = typer.confirm("Uninstall?", default=False, err=True)
    except typer.Abort:
        raise KeyboardInterrupt from None
    if not agreed:
        raise AbortedError("nothing was removed", "Run `aimos uninstall` again and answer y, or add --yes.")


def _render(found: Any, done: Any, status: str, json_out: bool, purged: dict[str, Any] | None = None) -> None:
    """The result: what was (or would be) stopped and removed, what stays and where, how to
    install again."""
    warnings = list(done.warnings) if done else []
    if json_out:
        emit_json(
            {
                "status": status,
                "dry_run": status == "dry_run",
                **found.to_json(),
                "service_stopped": bool(done and done.service_stopped),
                "removed": list(done.removed) if done else [],
                "warnings": warnings,
                "purge": purged,
            }
        )
        return
    if status == "dry_run":
        if found.service:
            out(f"would stop and remove {_service_words(found.service)}")
        _paths("would remove:", found.remove)
        if found.nothing_to_remove:
            out("nothing to remove")
    elif status == "nothing_to_remove":
        out("nothing to remove: no housekeeper service and no aimos state files here")
    else:
        if found.service:
            stopped = "stopped and removed" if done.service_stopped else "removed"
            out(f"{stopped} {_service_words(found.service)}")
        _paths("removed:", done.removed)
    if purged and purged.get("ceremony_id"):
        out(f"purged the brain, its keys and backups: ceremony {purged['ceremony_id']}")
        out(f"  receipt {purged['receipt']}")
    stays = "stays:" if status != "dry_run" else "stays (not touched):"
    width = max((len(k["what"]) for k in found.keep), default=0)
    if found.keep:
        out(stays)
        for kept in found.keep:
            out(f"  {kept['what']:<{width}}  {kept['where']}")
    for warning in warnings:
        say(f"warning: {warning}")
    _say_reinstall(found, purging=purged is not None)
    if status == "dry_run":
        say("dry run: nothing was changed")


def _say_reinstall(found: Any, *, purging: bool) -> None:
    if purging or not Path(found.brain_path).exists():
        say("To install aimos again, with a new brain: aimos install")
    else:
        say("To install again, reusing this brain and its keys: aimos install")


def _paths(title: str, items: list[str]) -> None:
    if items:
        out(title)
        for item in items:
            out(f"  {item}")


def _purge(found: Any, dry_run: bool, passphrase_fd: int | None, json_out: bool) -> None:
    """The uninstall, with the purge ceremony destroying the brain, its keys and backups. The
    housekeeper is stopped for the ceremony (it runs offline) and started again when the
    ceremony refuses (a wrong passphrase or confirmation): then nothing is removed."""
    from aimos.cli import purge_cmds
    from aimos.identity.passphrase import read_passphrase
    from aimos.installer import uninstall as removal

    if dry_run:
        inv = None if purge_cmds.ceremony_pending() else purge_cmds.inventory()
        found.keep = _kept_after_purge(found.keep)
        if json_out:
            _render(found, None, "dry_run", True, purged=inv.to_json() if inv else {"interrupted": True})
            return
        if found.service:
            out(f"would stop and remove {_service_words(found.service)}")
        _paths("would remove:", found.remove)
        if inv is None:
            out("would finish the interrupted purge ceremony (`aimos purge` shows it)")
        else:
            out("and the purge ceremony would destroy:")
            purge_cmds.print_inventory(inv)
            out(f"it asks for the master passphrase and for typing exactly: {inv.confirmation}")
        out("stays:")
        for kept in found.keep:
            out(f"  {kept['what']:<14}  {kept['where']}")
        _say_reinstall(found, purging=True)
        say("dry run: nothing was changed")
        return
    passphrase = read_passphrase(fd=passphrase_fd, purpose="purge this brain")
    stopped = removal.stop_housekeeper()  # the ceremony runs offline
    try:
        purged = purge_cmds.run_ceremony(passphrase)
    except BaseException:
        if stopped is not None and not purge_cmds.ceremony_pending():
            _start_again(removal)
        raise
    done = removal.uninstall(removal.plan())  # anything the ceremony left (it removes the service too)
    done.service_stopped = stopped is not None
    unit = [found.service["path"]] if found.service and found.service["path"] else []
    gone = [p for p in [*unit, *found.remove] if not Path(p).exists()]
    done.removed = list(dict.fromkeys([*gone, *done.removed]))
    after = removal.plan()
    found.keep = after.keep
    _render(found, done, "purged", json_out, purged=purged)


def _kept_after_purge(keep: list[dict[str, str]]) -> list[dict[str, str]]:
    """What a purge leaves: its signed intent and receipt, and the command log."""
    from aimos import paths

    receipts = {"what": "purge receipts", "where": str(paths.purge_receipts_dir())}
    return [receipts, *(k for k in keep if k["what"] == "command log")]


def _start_again(removal: Any) -> None:
    """The ceremony refused and removed nothing: the housekeeper stopped for it runs again."""
    from aimos.errors import AimosError

    try:
        again = removal.start_housekeeper_again()
    except AimosError as exc:
        say(f"warning: the housekeeper stopped for the ceremony could not be started again: {exc.message}")
        say("Start it with: aimos housekeeper start")
        return
    if again:
        say(f"the housekeeper, stopped for the ceremony, runs again (pid {again['pid']})")
