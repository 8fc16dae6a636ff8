"""`aimos save | show | list | correct`."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import typer

from aimos.cli.options import AGENT_ALIAS, HISTORY, MEMORY_ID, json_option, signer_option
from aimos.cli.output import emit_json, first_line, line, out, say, table, when
from aimos.errors import UsageError
from aimos.vocabulary import DEFAULT_SAVE_DATA_CLASS

if TYPE_CHECKING:
    from aimos.memory.versions import MemoryDetail


def _read_text(text: str | None) -> str:
    if text is None or text == "-":
        if sys.stdin.isatty() and text is None:
            raise UsageError("no text to save", 'Give the text as an argument or on stdin: aimos save "..."')
        data = sys.stdin.buffer.read()
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError("stdin is not UTF-8 text", "Save text, not binary data.") from None
    return text


def _save(agent: str, memory: Any) -> Any:
    from aimos.actions.memory import save
    from aimos.actions.session import open_brain

    with open_brain(write=True) as brain:
        return save(brain, agent, memory)


def _report_save(result: Any, json_out: bool, carried: str | None = None) -> None:
    if json_out:
        emit_json({**result.to_json(), **({"carried_label": carried} if carried else {})})
        return
    if result.status == "forwarded":  # no id yet: the home saves it
        say(result.forwarded_words())
        return
    out(result.memory_id)
    if result.status == "duplicate":
        say(result.duplicate_words())
    elif result.status == "quarantined":
        say("saved in retained quarantine (weight 0.1): the text carries a canary marker")
    elif result.supersedes:
        say(f"saved as a new version of {result.supersedes}")
    if carried:
        from aimos.actions.labels import label_words

        say(
            f"it keeps the label of the version it corrects, {label_words(carried)}: a correction "
            f"does not clear it; a person does, with `aimos label {result.memory_id} not-poison "
            '--reason "..."` (and the master passphrase)'
        )


def _verified(conn: Any, detail: MemoryDetail) -> None:
    """Verify the memory in the brain (the in-database verifier on this one memory: its signed
    save, weight and label chains, replayed outcomes) before anything of it is shown; a failure
    raises VerificationError worded as the TUI's detail screen words it. On success ``detail``
    gets its label history and the verdict."""
    from aimos.errors import VerificationError
    from aimos.verify.brain.verifier import verify_brain
    from aimos.verify.chains.labels import label_history

    mid = detail["memory_id"]
    record = verify_brain(conn, mid).records[0]
    if not record.ok:
        why = f"{record.reason}" + (f" ({record.detail})" if record.detail else "")
        raise VerificationError(
            f"memory {mid} DOES NOT VERIFY: {why}; nothing of it is shown",
            "Its signed record no longer matches the brain: it may have been edited outside aimos. "
            "Run `aimos verify` for details and restore the brain from a backup (`aimos restore`).",
            reason=record.reason,
        )
    detail["label_history"] = label_history(conn, mid)
    detail["verification"] = {
        "ok": True,
        "status": record.certification_status,
        "chain_length": record.chain_length,
        "sigs_verified": record.sigs_verified,
    }


def save_cmd(
    text: str = typer.Argument(None, help="The memory text; '-' or nothing reads stdin."),
    key: str = typer.Option(None, "--key", help="An optional key, e.g. preference:editor."),
    memory_type: str = typer.Option("note", "--type", help="Memory type, e.g. note, fact, procedure."),
    scope: str = typer.Option("personal", "--scope", help="Scope of the memory."),
    clearance: int = typer.Option(5, "--clearance", help="Clearance level 0..12 (grant-bounded)."),
    data_class: str = typer.Option(
        DEFAULT_SAVE_DATA_CLASS, "--data-class", help="public|internal|confidential|restricted."
    ),
    source: str = typer.Option(
        None, "--source", help="Where the memory came from (default: cli, or cli:AGENT with --as)."
    ),
    agent: str = signer_option("the save"),
    json_out: bool = json_option(),
) -> None:
    """Save a memory through a signed request; prints its id."""
    from aimos.actions.memory import NewMemory

    value = _read_text(text)
    result = _save(
        agent,
        NewMemory(
            value=value,
            key=key,
            scope=scope,
            memory_type=memory_type,
            clearance=clearance,
            data_class=data_class,
            source=source,
        ),
    )
    _report_save(result, json_out)


def correct_cmd(
    memory_id: str = typer.Argument(..., help="The memory to correct (id or unique prefix)."),
    text: str = typer.Argument(None, help="The corrected text; '-' or nothing reads stdin."),
    source: str = typer.Option(
        None, "--source", help="Where the correction came from (default: cli, or cli:AGENT with --as)."
    ),
    agent: str = signer_option("the save"),
    json_out: bool = json_option(),
) -> None:
    """Save a new version of a memory; the old one is kept.

    The correction keeps the memory's key, type, scope and ceilings; its source and signer are
    its own. A correction of a memory labelled poison or disputed keeps that label: only a
    person's judgment (`aimos label`) lifts it."""
    from aimos.actions.memory import carried_label, correct
    from aimos.actions.session import open_brain

    value = _read_text(text)
    with open_brain(write=True) as brain:
        result = correct(brain, agent, memory_id, value, source)
        carried = carried_label(brain, result.memory_id) if result.memory_id else None
    _report_save(result, json_out, carried)


def show_cmd(
    memory_id: str = MEMORY_ID,
    json_out: bool = json_option("the memory"),
) -> None:
    """Show one memory in full, verified first.

    Show one memory: value, fields, version chain, provenance and events.

    The memory's signed record is verified first (as the TUI and recall do): one that does
    not verify is not shown (exit 4, with the reason)."""
    from aimos.actions.session import open_brain
    from aimos.memory.versions import memory_detail

    with open_brain(write=False) as brain:
        detail = memory_detail(brain.conn, memory_id)
        _verified(brain.conn, detail)
    if json_out:
        emit_json(detail)
        return
    _print_detail(detail)


def _print_detail(detail: MemoryDetail) -> None:
    """`aimos show` in words: the text, its fields, provenance, events and label history."""
    from aimos.actions.labels import (
        event_words,
        judged_by,
        label_short,
        label_words,
        provenance_words,
        verified_words,
    )
    from aimos.memory.redaction import shown_text
    from aimos.memory.versions import CREATED_ELSEWHERE, originated

    v = detail["version"]
    first = originated(detail)
    created = [] if first is None else [("created", f"{when(first)} ({CREATED_ELSEWHERE})")]
    out(shown_text(detail))
    out("")
    fields = [
        ("id", detail["memory_id"]),
        ("key", detail["key"] or "-"),
        ("type", detail["memory_type"]),
        ("scope", detail["scope"]),
        ("clearance", str(detail["clearance_level"])),
        ("data class", detail["data_class"]),
        ("source", detail["source"]),
        ("company", detail["company_id"]),
        *created,
        ("saved by", f"{detail['author_agent_id']} at {when(detail['created_at'])}"),
        (
            "weight",
            f"{detail['weight']:.3f}" + (" (retained quarantine)" if detail["quarantine"] else ""),
        ),
        ("label", label_words(detail["epistemic_label"])),
        ("version", f"{v['number']} of {v['of']} ({v['state']})"),
        ("supersedes", v["supersedes"] or "-"),
        ("superseded by", v["superseded_by"] or "-"),
        ("live content hash", detail["live_content_hash"]),
        ("save mutation hash", detail["save_mutation_hash"]),
        ("occurrences", str(len(detail["occurrences"]))),
        ("verifies", f"yes: {verified_words(detail['verification'])}"),
    ]
    width = max(len(k) for k, _ in fields)
    for k, val in fields:
        out(f"{k.ljust(width)}  {line(val)}")  # a stored key or source cannot start a line
    out("")
    out("provenance:")
    for p in detail["provenance"]:
        out(
            f"  {provenance_words(p['event_type']):<14} signed by {p['signer_agent_id']}"
            f" (signature form {p['signature_form']})"
            f" at {when(p['ts_signed'])}  {p['mutation_hash'][:16]}…"
        )
    out("events:")
    for e in detail["events"]:
        out(
            f"  {event_words(e['operation']):<34} by {e['signer_agent_id']}, ledger #{e['ledger_seq']},"
            f" at {when(e['ts_signed'])}"
        )
    out("label history:" if detail["label_history"] else "label history: none (not judged since saved)")
    for h in detail["label_history"]:
        why = f": {h['reason']}" if h["reason"] else ""
        out(f"  {when(h['created_at'])}  {label_short(h['label']):<16}  {line(judged_by(h) + why)}")


def list_cmd(
    limit: int = typer.Option(
        None, "--limit", "-k", "-n", min=1, max=100_000, help="How many, newest first (default 20)."
    ),
    every: bool = typer.Option(False, "--all", help="Every memory that matches, however many."),
    memory_type: str = typer.Option(None, "--type", help="Only memories of this type, e.g. note, fact."),
    key: str = typer.Option(None, "--key", help="Only memories whose key starts with this, e.g. home:."),
    source: str = typer.Option(
        None, "--source", help="Only memories whose source starts with this, e.g. import, mcp:claude."
    ),
    label: str = typer.Option(
        None, "--label", help="Only memories with this label, e.g. 'not judged', disputed, poison."
    ),
    since: str = typer.Option(
        None, "--since", help="Only memories saved since a date (2025-03-01, UTC) or a span (7d, 12h)."
    ),
    history: bool = HISTORY,
    json_out: bool = json_option("the memories and their total"),
) -> None:
    """List memories, newest first.

    Current versions only, unless --history.

    Filters compose: every one given must match. Says how many match when it shows fewer, and
    how many of aimos's guides it left out when they are hidden (`aimos guides`)."""
    if every and limit is not None:
        raise UsageError("--all and --limit ask for different counts", "Give one of them.")
    given: dict[str, str | None] = {"--type": memory_type, "--key": key, "--source": source}
    _list(None if every else (limit or DEFAULT_LIST), history, json_out, given, label, since)


def register(app: typer.Typer) -> None:
    app.command("save", context_settings=AGENT_ALIAS)(save_cmd)
    app.command("correct", context_settings=AGENT_ALIAS)(correct_cmd)
    app.command("show")(show_cmd)
    app.command("list")(list_cmd)


def _list(
    limit: int | None,
    history: bool,
    json_out: bool,
    given: dict[str, str | None],
    label: str | None,
    since: str | None,
) -> None:
    """`aimos list` once its counts are settled: the filters checked before the brain is opened."""
    from aimos.actions.guides import view
    from aimos.actions.session import now, open_brain
    from aimos.memory.versions import list_memories

    filters = _list_filters({**given, "--label": label}, since, now())
    seen = view()
    if seen.problem:
        say(seen.problem)
    with open_brain(write=False) as brain:
        found = list_memories(
            brain.conn, limit=limit, include_history=history, hide_guides=seen.guides_hidden, **filters
        )
        no_such_type = _no_such_type(brain.conn, given["--type"], found.total)
    if json_out:
        emit_json(
            {
                "memories": found.memories,
                "total": found.total,
                "guides_hidden": found.guides_hidden,
                "filters": filters,
            }
        )
        return
    _print_listed(found.memories)
    _say_what_is_left(found, bool(filters), no_such_type)


def _print_listed(memories: list[dict[str, Any]]) -> None:
    from aimos.actions.labels import label_short
    from aimos.memory.redaction import shown_text
    from aimos.memory.versions import created_time

    if not memories:
        return
    out(
        table(
            ["id", "key", "type", "weight", "label", "created", "text"],
            [
                [
                    m["memory_id"][:8],
                    "-" if m["key"] is None else first_line(m["key"], KEY_WIDTH),
                    m["memory_type"],
                    f"{m['retrieval_weight_milli'] / 1000:.3f}",
                    label_short(m["epistemic_label"]),
                    when(created_time(m)),
                    first_line(shown_text(m)),
                ]
                for m in memories
            ],
        )
    )


DEFAULT_LIST = 20
KEY_WIDTH = 24  # a key's characters in the list's key column
_NO_FILTER = "{option} takes some text: leave it out to list every memory"


def _list_filters(given: dict[str, str | None], since: str | None, at: int) -> dict[str, Any]:
    """The filters as `browse` takes them (protocol label, Unix time); a usage error for a bad
    one, before the brain is opened."""
    from aimos.actions.labels import label_named
    from aimos.memory.versions import since_of

    for option, value in given.items():
        if value is not None and not value.strip():
            raise UsageError(f"{option} is empty", _NO_FILTER.format(option=option))
    label = given["--label"]
    chosen = {
        "memory_type": given["--type"],
        "key": given["--key"],
        "source": given["--source"],
        "label": None if label is None else label_named(label),
        "since": None if since is None else since_of(since, at),
    }
    return {k: v for k, v in chosen.items() if v is not None}


def _no_such_type(conn: Any, memory_type: str | None, total: int) -> str | None:
    """What to say when --type names no type in the brain (a typo, likely): the types there."""
    from aimos.memory.versions import distinct_values

    if memory_type is None or total:
        return None
    types = distinct_values(conn, "memory_type")
    if memory_type in types:
        return None
    return f"no memory has type {memory_type!r}; the types in this brain: {', '.join(types) or 'none'}"


def _say_what_is_left(found: Any, filtered: bool, no_such_type: str | None) -> None:
    """After the table, on stderr: how many more match, what nothing matched, guides left out."""
    shown = len(found.memories)
    what = "matching memories" if filtered else "memories"
    if found.total > shown:
        say(f"{shown:,} of {found.total:,} {what} (--limit N, --all)")
    elif no_such_type is not None:
        say(no_such_type)
    elif not found.total and filtered:
        say("no memory matches these filters")
    elif not found.total and not found.guides_hidden:
        say('The brain has no memories yet: aimos save "..."')
    if found.guides_hidden:
        from aimos.actions.guides import hidden_note

        say(hidden_note(found.guides_hidden))
