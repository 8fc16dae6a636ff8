"""`aimos redact ID --reason TEXT`: remove one memory's text, keeping every proof about it."""

from __future__ import annotations

import typer

from aimos.cli.options import PASSPHRASE_FD
from aimos.cli.output import emit_json, out, read_confirmation, say, when


def register(app: typer.Typer) -> None:
    @app.command("redact")
    def redact_cmd(
        memory_id: str = typer.Argument(..., help="Memory id or a unique prefix of it."),
        reason: str = typer.Option(..., "--reason", help="Why the text must go (kept, signed, shown)."),
        backups: bool = typer.Option(
            False, "--backups", help="Also remove the text from the brain's backups that still hold it."
        ),
        passphrase_fd: int = PASSPHRASE_FD,
        json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    ) -> None:
        """Remove one memory's text from the brain for good: the master's passphrase and a typed
        confirmation. Its hashes, signatures, provenance, outcomes, labels and receipts stay and
        still verify; show, recall and the TUI say who redacted it, when and why."""
        from aimos.actions import redaction
        from aimos.actions.session import open_brain
        from aimos.errors import UsageError
        from aimos.housekeeper.jobs.nightly_dream import backup_files
        from aimos.housekeeper.redaction_copies import backups_holding, redact_copy

        reason = redaction.check_reason(reason)
        done = None
        with open_brain(write=True) as brain:
            mid, record = redaction.existing(brain, memory_id)
            if record is not None and not backups:
                raise UsageError(
                    f"memory {mid} is already redacted ({record['reason']})",
                    f"Nothing was changed. `aimos redact {mid[:8]} --backups --reason ...` removes its "
                    "text from the backups that still hold it.",
                )
            if record is None:
                memory = redaction.plan(brain, mid)
                expected = f"redact {mid[:8]}"
                say(
                    f"memory {mid} ({memory['memory_type']}, key {memory['key'] or '-'}, saved "
                    f"{when(memory['created_at'])}): its text will be removed from the brain for good"
                )
                if read_confirmation(expected) != expected:
                    raise UsageError(
                        "the confirmation did not match; nothing was changed", f"Type `{expected}`."
                    )
                master = brain.master(passphrase_fd, "redact a memory")
                done = redaction.redact(brain, master, mid, reason)
            records = [r for r in redaction.redactions_of(brain) if r["memory_id"] == mid]
        holding = backups_holding(backup_files(), records)
        cleaned = [(p, redact_copy(p, records)) for p, _ in holding] if backups else []
        result = {
            "memory_id": mid,
            "redaction_id": records[0]["redaction_id"],
            "notice": redaction.notice_of(records[0]),
            "event_id": done.event_id if done else None,
            "seal": done.seal if done else None,
            "wal_truncated": done.wal_truncated if done else None,
            "other_versions_with_text": done.other_versions if done else [],
            "backups_holding_text": [] if backups else [str(p) for p, _ in holding],
            "backups_redacted": [str(p) for p, ids in cleaned if ids],
            # the receipt: the master-signed record itself (no text), checkable against the master key
            "record_json": records[0]["record_json"],
            "signature_b64u": records[0]["signature_b64u"],
        }
        if json_out:
            emit_json(result)
            return
        out(f"memory {mid}: {result['notice']}")
        if done is not None:
            out(
                f"signed redaction record {done.redaction_id}; ledger event {done.event_id}; "
                f"seal #{done.seal}"
            )
            if not done.wal_truncated:
                say(
                    "warning: another process holds the brain open, so its write-ahead log could not be "
                    "truncated yet (stop the housekeeper and agents, then run `aimos verify` to checkpoint)"
                )
            for other in done.other_versions:
                say(f"note: version {other} of this memory still holds its own text; redact it too if needed")
        for path in result["backups_redacted"]:
            out(f"removed its text from backup {path}")
        if result["backups_holding_text"]:
            say(
                f"warning: {len(holding)} backup(s) still hold this memory's text ("
                + ", ".join(p.name for p, _ in holding)
                + f"); `aimos redact {mid[:8]} --backups --reason ...` removes it there too"
            )
