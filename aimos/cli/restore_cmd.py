"""`aimos restore BACKUP`: go back to a backup, verified, with the master's signed record."""

from __future__ import annotations

import typer

from aimos.cli.options import ANCHORED_MASTER_FINGERPRINT, PASSPHRASE_FD
from aimos.cli.output import emit_json, out, say, table, when
from aimos.plural import plural


def register(app: typer.Typer) -> None:
    @app.command("restore")
    def restore_cmd(
        backup: str = typer.Argument(None, help="The backup: a path, or a file name from --list."),
        list_backups: bool = typer.Option(False, "--list", help="List the brain's backups and exit."),
        passphrase_fd: int = PASSPHRASE_FD,
        master_fingerprint: str = ANCHORED_MASTER_FINGERPRINT,
        json_out: bool = typer.Option(False, "--json", help="Print the signed record as JSON."),
    ) -> None:
        """Put a verified backup back in place of the brain.

        Put a backup back in place of the brain: verified first, signed by the master, the
        replaced brain kept beside it, and what it held beyond the backup said."""
        from aimos.actions.session import expected_master_fingerprint
        from aimos.errors import UsageError
        from aimos.housekeeper import restore as restoring
        from aimos.identity.passphrase import read_passphrase

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
        path = restoring.resolve_backup(backup)
        fingerprint = expected_master_fingerprint(master_fingerprint)
        restoring.check_offline()
        passphrase = read_passphrase(fd=passphrase_fd, purpose="restore the brain from a backup")
        record = restoring.restore(path, passphrase, fingerprint)
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
        say("Run `aimos verify` to check it, and `aimos housekeeper start` if you stopped the housekeeper.")
