"""`aimos restore BACKUP`: go back to a backup, verified, with the master's signed record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from aimos.cli.options import ANCHORED_MASTER_FINGERPRINT, PASSPHRASE_FD, json_option
from aimos.cli.output import ask, emit_json, out, say, table, when
from aimos.plural import plural


def register(app: typer.Typer) -> None:
    @app.command("restore")
    def restore_cmd(
        backup: str = typer.Argument(None, help="The backup: a path, or a file name from --list."),
        list_backups: bool = typer.Option(False, "--list", help="List the brain's backups and exit."),
        passphrase_fd: int = PASSPHRASE_FD,
        master_fingerprint: str = ANCHORED_MASTER_FINGERPRINT,
        yes: bool = typer.Option(
            False, "--yes", "-y", help="Do not ask before dropping memories saved since the backup."
        ),
        json_out: bool = json_option("the signed record"),
    ) -> None:
        """Put a verified backup back in place of the brain.

        The backup is verified first, the restore signed by the master, the replaced brain kept
        beside it, and what it held beyond the backup said. Memories saved since the backup are
        named and asked about first (--yes does not ask; without a terminal it must be given). A
        running housekeeper is stopped for the restore and started again after it."""
        from aimos.actions.session import expected_master_fingerprint
        from aimos.errors import UsageError
        from aimos.housekeeper import restore as restoring
        from aimos.identity.passphrase import read_passphrase
        from aimos.installer.service import Paused

        if list_backups:
            found = restoring.listing()
            if json_out:
                emit_json(found)
                return
            if not found:
                say("no backups yet: the nightly job (aimos housekeeper run-job nightly-dream) makes them")
                return
            out(
                table(
                    ["backup", "newest seal", "sealed", "memories"],
                    [
                        [
                            b["file"],
                            str(b.get("newest_seal") or "-"),
                            when(b["sealed_at"]) if b.get("sealed_at") else "-",
                            str(b.get("memories", b.get("error", "?"))),
                        ]
                        for b in found
                    ],
                )
            )
            return
        if backup is None:
            raise UsageError("name the backup to restore", "`aimos restore --list` lists them.")
        _refuse_on_a_synced_brain()
        path = restoring.resolve_backup(backup)
        fingerprint = expected_master_fingerprint(master_fingerprint)
        restoring.check_offline(housekeeper_may_run=True)  # stopped below, once nothing refuses
        passphrase = read_passphrase(fd=passphrase_fd, purpose="restore the brain from a backup")
        dropped = restoring.dropped_memories(path)
        if dropped and not yes:
            agree_to_drop(path, dropped)
        paused = Paused("the restore", say)
        paused.stop()
        before = _brain_file()
        try:
            record = restoring.restore(
                path, passphrase, fingerprint, may_drop={m["memory_id"] for m in dropped}
            )
        except BaseException:
            # the restore may fail after the backup took the brain's place (its anchors written
            # after the swap): say which of the two is the brain now
            if _brain_file() != before:
                say(
                    "warning: the restore failed after the backup took the brain's place: the brain is"
                    " the backup now; run `aimos verify` (and the restore again if it fails)"
                )
                paused.start_again()
            else:
                paused.start_again("the restore did not finish, so the brain is as it was: ")
            raise
        paused.start_again()
        if json_out:
            emit_json(record)
            return
        seal = record["backup_seal"]
        out(f"restored the brain from {path.name}" + (f" (its newest seal #{seal['seq']})" if seal else ""))
        out(f"lost since then: {restoring.describe_lost(record['lost'])}")
        for agent in record["lost"].get("revocations_undone", []):
            say(
                f"warning: the revocation of agent {agent} was after this backup, so its key is valid again; "
                f"revoke it again with `aimos agent revoke {agent}` (or rotate it)"
            )
        if record["housekeeper_key_rotated"]:
            out(
                "the housekeeper has a new key in the restored brain (the backup's was rotated or revoked "
                "since, or is gone from the keystore); the backup's is revoked"
            )
        if record["replaced_brain_kept_at"]:
            out(f"the replaced brain is kept at {record['replaced_brain_kept_at']}")
        out(f"signed restore record {record['restore_id']}; newest seal now #{record['newest_seal']}")
        if record.get("redactions_reapplied"):
            out(
                f"redacted again: {plural(len(record['redactions_reapplied']), 'memory text')} the master"
                " redacted "
                "after this backup was made (" + ", ".join(record["redactions_reapplied"]) + ")"
            )
        say("Run `aimos verify` to check it.")


SHOWN = 10  # memories named by the question before a restore drops them


def agree_to_drop(backup: Path, dropped: list[dict[str, Any]]) -> None:
    """Name the memories a restore would drop (how many; the first SHOWN by id, key and first
    line) and ask at the terminal; without one, --yes is needed. No (or Enter) changes nothing."""
    from aimos.memory.redaction import shown_text
    from aimos.terminal import first_line

    n = len(dropped)
    memories = f"{n} memor{'y' if n == 1 else 'ies'}"
    say(f"restoring {backup.name} drops {memories} saved since it was made:")
    for m in dropped[:SHOWN]:
        say(f"  {m['memory_id']}  key {first_line(m['key']) or '-'}  {first_line(shown_text(m))[:80]}")
    if n > SHOWN:
        say(f"  and {n - SHOWN} more")
    ask(
        f"Restore and drop {'it' if n == 1 else 'them'}?",
        no_terminal=f"the restore would drop {memories} saved since the backup, and there is no "
        "terminal to ask at; nothing was changed",
        yes_hint="Add --yes to restore and drop them (`aimos export` keeps a copy of them first).",
    )


def _brain_file() -> tuple[int, int] | None:
    """Which file is the brain now (its device and inode): a restore puts another in its place."""
    from aimos import paths

    try:
        found = paths.brain_path().stat()
    except OSError:
        return None
    return (found.st_dev, found.st_ino)


def _refuse_on_a_synced_brain() -> None:
    """A brain synced through a hub is not put back from a backup: what this device pushed since
    the backup is on the hub and on every other device, and a restored brain would write over it
    (the same record numbers, its event chains forked). Joining again pulls everything back."""
    from aimos import paths
    from aimos.errors import UsageError
    from aimos.installer.setup import installed_brain_id

    brain_id = installed_brain_id()
    if brain_id is not None and paths.hub_state_path(brain_id).exists():
        raise UsageError(
            "this brain syncs through a hub: a backup put back here would fork what this device "
            "already pushed to the others: nothing was changed",
            "Join the brain again in a new AIMOS_HOME (`aimos hub join URL`): it pulls everything the "
            "hub holds.",
        )
