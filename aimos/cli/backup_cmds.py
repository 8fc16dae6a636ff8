"""`aimos backup`: a verified copy of the brain now, `aimos backup list`, and `aimos backup forget`
for a backup aimos recorded writing that is gone for good."""

from __future__ import annotations

from typing import Any

import typer

from aimos.cli.options import json_option
from aimos.cli.output import emit_json, out, say, table, when
from aimos.plural import plural

backup_app = typer.Typer(
    help="Back the brain up now, or list and forget backups.\n\nBack the brain up now (verified after"
    " writing), list its backups, or forget a deleted one.",
    no_args_is_help=False,
    invoke_without_command=True,
)

TO_HELP = "The folder to write to (made 0700 when missing); default: the brain's backups folder."


@backup_app.callback()
def backup_cmd(
    ctx: typer.Context,
    to: str = typer.Option(None, "--to", help=TO_HELP),
    json_out: bool = json_option("the backup"),
) -> None:
    """Copy the brain now with SQLite's online backup (agents may keep working), then open the copy
    and verify it (SQLite's integrity check and the brain verifier); a copy that does not verify is
    removed (exit 5).
    Backups in the brain's own folder count among the 7 the nightly job keeps; restore one with
    `aimos restore FILE`."""
    if ctx.invoked_subcommand is not None:
        return
    import time
    from pathlib import Path

    from aimos.actions.session import require_brain
    from aimos.housekeeper.restore import backup_now

    require_brain()
    made = backup_now(int(time.time()), Path(to) if to else None)
    if json_out:
        emit_json(made)
        return
    out(f"backup   {made['path']}")
    held = plural(made["memories"], "memory")
    out(f"size     {made['bytes']:,} bytes, {held}, newest seal #{made['newest_seal']}")
    out("verified yes (integrity check, brain verifier)")
    say("It holds your memories in plain text, as the brain does: keep it as private as the brain.")


@backup_app.command("list")
def list_cmd(
    folder: str = typer.Option(None, "--in", help="A folder of backups; default: the brain's own."),
    json_out: bool = json_option("the list"),
) -> None:
    """List the backups, oldest first.

    The backups, oldest first: size, memories, and the newest signed seal each holds."""
    from pathlib import Path

    from aimos.actions.session import require_brain
    from aimos.housekeeper.restore import listing

    require_brain()
    found: list[dict[str, Any]] = listing(Path(folder).expanduser() if folder else None)
    if json_out:
        emit_json(found)
        return
    if not found:
        say("no backups yet: `aimos backup` makes one now (the nightly job makes one a day)")
        return
    out(
        table(
            ["backup", "bytes", "memories", "newest seal", "sealed"],
            [
                [
                    b["file"],
                    f"{b['bytes']:,}",
                    str(b.get("memories", b.get("error", "?"))),
                    str(b.get("newest_seal") or "-"),
                    when(b["sealed_at"]) if b.get("sealed_at") else "-",
                ]
                for b in found
            ],
        )
    )


@backup_app.command("forget")
def forget_cmd(
    path: str = typer.Argument(..., help="The backup file, as `aimos redact --backups` named it."),
) -> None:
    """Stop following a backup you deleted or replaced.

    Stop following a backup aimos wrote that you deleted (or replaced) for good. aimos records
    every backup it writes (the nightly ones and `--to DIR` ones), and `aimos redact --backups`
    names each one it cannot reach (exit 1) until it is back in its place or forgotten here."""
    import time
    from pathlib import Path

    from aimos.actions.session import open_brain
    from aimos.errors import NotFoundError
    from aimos.housekeeper import backup_records

    target = Path(path).expanduser().resolve()
    with open_brain(write=False) as brain:
        brain_id = brain.meta["brain_id"]
    if target not in {b.path for b in backup_records.recorded(brain_id)}:
        raise NotFoundError(
            f"no backup recorded at {target}", "Give the path `aimos redact --backups` named."
        )
    backup_records.record_gone(brain_id, target, int(time.time()), backup_records.FORGOTTEN)
    out(f"forgot backup {target}")
    if target.exists():
        say(
            f"note: {target} is still there; aimos no longer reaches it: delete it if it is a copy "
            "of the brain"
        )
