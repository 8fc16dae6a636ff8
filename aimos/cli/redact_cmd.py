"""`aimos redact ID --reason TEXT`: remove one memory's text, source and key (unless --keep-key),
keeping every proof about it; `--backups` reaches every backup aimos recorded writing."""

from __future__ import annotations

from typing import Any

import typer

from aimos.cli.options import MEMORY_ID, PASSPHRASE_FD, json_option
from aimos.cli.output import emit_json, out, read_confirmation, say, when
from aimos.plural import agree, plural


def register(app: typer.Typer) -> None:
    @app.command("redact")
    def redact_cmd(
        memory_id: str = MEMORY_ID,
        reason: str = typer.Option(..., "--reason", help="Why the text must go (kept, signed, shown)."),
        backups: bool = typer.Option(
            False,
            "--backups",
            help="Also remove it from every backup aimos wrote that still holds it (exit 1 when one "
            "cannot be reached).",
        ),
        keep_key: bool = typer.Option(
            False,
            "--keep-key",
            help="Keep the memory's key (its text and source go); recall finds it by the key.",
        ),
        passphrase_fd: int = PASSPHRASE_FD,
        json_out: bool = json_option(),
    ) -> None:
        """Remove one memory's text from the brain for good.

        Remove one memory's text, source and key (unless --keep-key) from the brain for good:
        the master's passphrase and a typed confirmation. Its hashes, signatures, provenance,
        outcomes, labels and receipts stay and still verify; show, recall and the TUI say who
        redacted it, when and why."""
        from aimos.actions import redaction
        from aimos.actions.session import open_brain
        from aimos.errors import UsageError
        from aimos.exit_codes import ExitCode
        from aimos.housekeeper.redaction_copies import backups_holding, redact_backups
        from aimos.hub.device import hub_url, refuse_unpushed_redaction
        from aimos.hub.redactions import ON_A_SYNCED_BRAIN

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
                refuse_unpushed_redaction(brain.conn, brain.keystore, mid)
                memory = redaction.plan(brain, mid)
                expected = f"redact {mid[:8]}"
                what = "text and source (its key is kept)" if keep_key else "text, source and key"
                say(
                    f"memory {mid} ({memory['memory_type']}, key {memory['key'] or '-'}, saved "
                    f"{when(memory['created_at'])}): its {what} will be removed from the brain for good"
                )
                if read_confirmation(expected) != expected:
                    raise UsageError(
                        "the confirmation did not match; nothing was changed", f"Type `{expected}`."
                    )
                master = brain.master(passphrase_fd, "redact a memory")
                done = redaction.redact(brain, master, mid, reason, keep_key=keep_key)
            records = [r for r in redaction.redactions_of(brain) if r["memory_id"] == mid]
            brain_id = brain.meta["brain_id"]
            synced = hub_url(brain.keystore) is not None
        copies = redact_backups(brain_id, records) if backups else backups_holding(brain_id, records)
        unreached = [c for c in copies if c.unreached]
        result = {
            "memory_id": mid,
            "redaction_id": records[0]["redaction_id"],
            "notice": redaction.notice_of(records[0]),
            "key_kept": redaction.key_kept(records[0]),
            "event_id": done.event_id if done else None,
            "seal": done.seal if done else None,
            "wal_truncated": done.wal_truncated if done else None,
            "other_versions_with_text": done.other_versions if done else [],
            "backups_holding_text": [] if backups else [str(c.path) for c in copies if c.memory_ids],
            "backups_redacted": [str(c.path) for c in copies if backups and c.memory_ids],
            # recorded backups it could not check or clean: moved, deleted, unreadable, not aimos's
            "backups_unreached": [{"path": str(c.path), "why": c.unreached} for c in unreached],
            # a synced brain: what the other devices do, and what the hub keeps
            "other_devices": ON_A_SYNCED_BRAIN if synced else None,
            # the receipt: the master-signed record itself (no text), checkable against the master key
            "record_json": records[0]["record_json"],
            "signature_b64u": records[0]["signature_b64u"],
        }
        if json_out:
            emit_json(result)
        else:
            _print(mid, result, done, backups)
        if backups and unreached:
            raise typer.Exit(ExitCode.FAILURE)


def _print(mid: str, result: dict[str, Any], done: Any, backups: bool) -> None:
    out(f"memory {mid}: {result['notice']}")
    if done is not None:
        out(f"signed redaction record {done.redaction_id}; ledger event {done.event_id}; seal #{done.seal}")
        if not done.wal_truncated:
            say(
                "warning: another process holds the brain open, so its write-ahead log could not be "
                "truncated yet (stop the housekeeper and agents, then run `aimos verify` to checkpoint)"
            )
        for other in done.other_versions:
            say(f"note: version {other} of this memory still holds its own text; redact it too if needed")
    if result["other_devices"]:
        say(f"note: {result['other_devices']}")
    for path in result["backups_redacted"]:
        out(f"removed its text from backup {path}")
    holding = result["backups_holding_text"]
    if holding:
        say(
            f"warning: {plural(len(holding), 'backup')} still {agree(len(holding), 'holds', 'hold')}"
            " this memory's text ("
            + ", ".join(holding)
            + f"); `aimos redact {mid[:8]} --backups --reason ...` removes it there too"
        )
    for missed in result["backups_unreached"]:
        say(f"warning: backup {missed['path']} was not reached: {missed['why']}")
    if result["backups_unreached"]:
        say(
            "  aimos wrote these and cannot tell whether they still hold the text: put each back in its "
            f"place and run `aimos redact {mid[:8]} --backups --reason ...` again, or, if it is gone "
            "for good, `aimos backup forget PATH`"
        )
