"""`aimos import`: bring memories in from markdown notes, JSON/JSONL, ChatGPT and Claude exports,
and aimos's own text export."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from aimos.cli.options import AGENT_ALIAS, json_option, signer_option
from aimos.cli.output import emit_json, first_line, line, out, phase_progress, say, table
from aimos.exit_codes import ExitCode
from aimos.memory.text_formats import AUTO, AUTO_DESCRIPTION, FORMATS_IN_WORDS
from aimos.plural import agree, plural

FORMAT_HELP = f"{AUTO} ({AUTO_DESCRIPTION}), {FORMATS_IN_WORDS}."


def _files(n: int) -> str:
    return "1 file" if n == 1 else f"{n} files"


def _listing(what: str, found: list[tuple[str, str]], limit: int = 20) -> None:
    for where, why in found[:limit]:
        say(f"  {what} {line(where)}: {line(why)}")
    if len(found) > limit:
        say(f"  ... and {len(found) - limit} more (--json lists them all)")


def _refusals(summary: dict[str, Any]) -> None:
    _listing("left out", [(r["where"], r["reason"]) for r in summary["refused"]])


def _kept_or_not(summary: dict[str, Any], import_plan: Any) -> None:
    """What becomes of the labels an export gives, and every field of the input the import does
    not keep (and why, where a person may wonder)."""
    from aimos.actions.imports import NOT_KEPT_WHY

    notes = [(p.item.where, p.note) for f in import_plan.files for p in f.planned if p.note and p.body]
    _listing("note", notes)
    if summary["fields_not_kept"]:
        say(f"  fields not kept: {', '.join(summary['fields_not_kept'])}")
        for field in summary["fields_not_kept"]:
            if field in NOT_KEPT_WHY:
                say(f"    {field}: {NOT_KEPT_WHY[field]}")


def _dry_run(import_plan: Any, json_out: bool) -> None:
    rows = [
        {
            "where": p.item.where,
            "status": p.status,
            "type": p.item.memory_type,
            "key": None if p.status == "refused" else p.item.key,
            "reason": p.reason,
            "note": p.note,
            "originated_at": p.item.originated,
            # a refused memory's text (and key) may hold the secret it was refused for: never shown
            "text": None if p.status == "refused" else p.item.value,
        }
        for f in import_plan.files
        for p in f.planned
    ]
    summary = import_plan.summary()
    if json_out:
        emit_json({"dry_run": True, "summary": summary, "memories": rows})
        return
    if rows:
        out(
            table(
                ["status", "where", "type", "key", "text"],
                [
                    [
                        r["status"],
                        r["where"],
                        r["type"],
                        first_line(r["key"] or "-", 30),
                        first_line(r["text"] or "(not shown)", 50),
                    ]
                    for r in rows
                ],
            )
        )
    say(
        f"dry run: would save {plural(summary['new'], 'new memory')} and record"
        f" {plural(summary['exists'], 'occurrence')} of memories already there;"
        f" {len(summary['refused'])} left out; nothing was saved"
    )
    _refusals(summary)
    _kept_or_not(summary, import_plan)


def register(app: typer.Typer) -> None:
    @app.command("import", context_settings=AGENT_ALIAS)
    def import_cmd(
        path: str = typer.Argument(
            ..., help="A folder of markdown notes, or a .md, .json, .jsonl or .zip file."
        ),
        fmt: str = typer.Option(AUTO, "--format", help=FORMAT_HELP),
        by_section: bool = typer.Option(
            False, "--by-section", help="Markdown: one memory per heading (# and ##), not per note."
        ),
        dry_run: bool = typer.Option(False, "--dry-run", help="Print what would be saved; save nothing."),
        include_flagged: bool = typer.Option(
            False,
            "--include-flagged",
            help="Also import memories an aimos export marks poison (judged afresh here); not as cli, "
            "your own word: enrol an agent for imports and use --as. A doubted (disputed) one is "
            "always imported, with a dispute.",
        ),
        agent: str = signer_option("the saves"),
        max_inflated: str = typer.Option(
            None,
            "--max-inflated",
            metavar="SIZE",
            help="The most the import reads, unzipped (e.g. 2G): by default 512M, and from a zip at most "
            "100 times the compressed size; a SIZE given replaces both caps.",
        ),
        json_out: bool = json_option("the summary"),
    ) -> None:
        """Import notes, JSON files and chat exports.

        Import memories through signed saves (the secret gate, the grant and the classifier, as
        `aimos save`): each note, memory or chat message one memory; each file in one transaction.

        Re-importing records occurrences, not copies. A malformed file stops the import before
        anything is saved, naming the file and line, and so does a file or zip that holds more than
        --max-inflated (a zip bomb)."""
        from aimos.actions import imports
        from aimos.actions.session import open_brain, require_brain

        require_brain()
        imports.flagged_as_own(agent, include_flagged)
        files = imports.read(  # before the brain opens
            Path(path).expanduser(), fmt, by_section=by_section, max_inflated=max_inflated
        )
        with open_brain(write=not dry_run) as brain:
            items = max(sum(len(f.parsed.items) for f in files), 1)
            checking = phase_progress(items, "checking")
            import_plan = imports.plan(
                brain, agent, files, include_flagged=include_flagged, progress=checking
            )
            checking(items, "")
            if dry_run:
                _dry_run(import_plan, json_out)
                return
            total = sum(1 for f in import_plan.files for p in f.planned if p.body is not None)
            progress = phase_progress(max(total, 1), "importing")
            try:
                summary = imports.run(brain, agent, import_plan, progress)
            except KeyboardInterrupt:
                progress(max(total, 1), "")
                say(
                    f"interrupted: {import_plan.files_saved} of {plural(len(import_plan.files), 'file')}"
                    f" {agree(import_plan.files_saved, 'was', 'were')} saved "
                    "whole, "
                    "the one being saved was not; import again to finish (what is saved is recorded as an "
                    "occurrence, not copied)"
                )
                raise typer.Exit(ExitCode.INTERRUPTED) from None
            finally:
                progress(max(total, 1), "")  # the line goes before any summary or error
        if json_out:
            emit_json(summary)
            return
        say(
            f"imported {summary['path']} ({', '.join(summary['formats'])},"
            f" {plural(summary['files'], 'file')}): "
            f"{summary['saved'] + summary['quarantined']} saved ({summary['quarantined']} quarantined), "
            f"{summary['occurrences']} already there (occurrences recorded), "
            f"{len(summary['refused'])} left out"
        )
        _refusals(summary)
        if summary["empty"]:
            say(f"  {plural(summary['empty'], 'note or message', 'notes or messages')} had no text")
        _kept_or_not(summary, import_plan)
