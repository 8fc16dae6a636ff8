"""`aimos import`: memories from markdown notes, JSON/JSONL, ChatGPT and Claude exports, and
aimos's own text export, saved through the same signed save as `aimos save` (the secret gate, the
grant, the classifier and the detector), one write transaction per file.

First every file is read and parsed (a malformed one stops the import before anything is saved),
then each memory is planned: ``new``, ``exists`` (already in the brain or earlier in the import:
saving it again records a signed occurrence, not a copy) or ``refused`` (a secret, too large,
above the agent's grant, aimos's own guide, an adverse label in its export) with the reason. A dry
run stops there. The import saves each file's planned memories in one transaction: a file is in
the brain whole or not at all, and running the same import again after an interruption saves what
is missing and records occurrences of the rest.
"""

from __future__ import annotations

import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import Any

from aimos.actions.bodies import build_save_body
from aimos.actions.memory import default_ceilings, save_all
from aimos.actions.session import Brain
from aimos.crypto import commitments
from aimos.errors import AimosError, ImportFormatError, NotFoundError, UsageError
from aimos.identity.epochs import latest_epoch
from aimos.identity.trusted import grant_excess, verified_grant
from aimos.memory import text_formats as formats
from aimos.memory.gates import refuse_secret_fields
from aimos.memory.save import validate_body
from aimos.memory.text_formats import Item, Parsed
from aimos.vocabulary import ADVERSE, CLI_AGENT, SYSTEM_SCOPE

FORMATS = ("auto", "markdown", "json", "jsonl", "chatgpt", "claude")
MARKDOWN_SUFFIXES = (".md", ".markdown")
READABLE_COMPRESSION = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)
MAX_ZIPPED_BYTES = 4 << 30  # what a zip's conversations.json may unzip to (an export of years is far less)
SKIPPED_DIRS = (".obsidian", ".trash", ".git")  # an Obsidian vault's settings, its bin, a repository


@dataclass
class Planned:
    item: Item
    status: str  # new | exists | refused
    reason: str | None = None
    body: dict[str, Any] | None = None


@dataclass
class FilePlan:
    name: str  # the file as shown: relative to the folder imported
    parsed: Parsed
    planned: list[Planned] = field(default_factory=list)


@dataclass
class ImportPlan:
    root: str
    files: list[FilePlan]
    files_saved: int = 0  # files whose transaction committed (run counts them as it goes)

    def count(self) -> Counter[str]:
        return Counter(p.status for f in self.files for p in f.planned)

    def summary(self) -> dict[str, Any]:
        counts = self.count()
        return {
            "path": self.root,
            "files": len(self.files),
            "formats": sorted({f.parsed.format for f in self.files}),
            "new": counts["new"],
            "exists": counts["exists"],
            "refused": [
                {"where": p.item.where, "reason": p.reason}
                for f in self.files
                for p in f.planned
                if p.status == "refused"
            ],
            "empty": sum(f.parsed.empty for f in self.files),
            "fields_not_kept": sorted(set().union(*(f.parsed.not_kept for f in self.files))),
        }


# --- reading ------------------------------------------------------------------------------------
def _decode(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ImportFormatError(
            f"{name}:{line}: not UTF-8 text (byte {e.start})", "Save the file as UTF-8, then import again."
        ) from None


def _markdown_files(root: Path) -> list[Path]:
    found = []
    for path in sorted(root.rglob("*")):
        parts = path.relative_to(root).parts
        if any(p.startswith(".") for p in parts) or any(p in SKIPPED_DIRS for p in parts):
            continue
        if path.suffix.lower() in MARKDOWN_SUFFIXES and path.is_file() and not path.is_symlink():
            found.append(path)
    return found


def _parse_one(data: bytes, name: str, fmt: str, *, by_section: bool, key: str) -> Parsed:
    text = _decode(data, name)
    if fmt == "markdown":
        return formats.parse_markdown(text, name, f"import:markdown:{name}", key, by_section=by_section)
    not_it = ImportFormatError(
        f"{name}: this is not a {fmt} export",
        "Leave out --format, or name the file that export wrote (conversations.json). Nothing was saved.",
    )
    try:
        parsed = formats.parse_jsonl(text, name) if fmt == "jsonl" else formats.parse_json(text, name)
    except ImportFormatError as e:
        if fmt in ("chatgpt", "claude"):
            not_it.message = f"{not_it.message} ({e.message})"
            raise not_it from None
        raise
    if fmt in ("chatgpt", "claude") and parsed.format != fmt:
        raise not_it
    for item in parsed.items:
        item.source = item.source or f"import:{parsed.format}:{name}"
    return parsed


def _format_of(path: Path, fmt: str) -> str:
    if fmt != "auto":
        return fmt
    suffix = path.suffix.lower()
    if suffix in MARKDOWN_SUFFIXES:
        return "markdown"
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix in (".json", ".zip"):
        return "json"
    raise UsageError(
        f"{path.name}: no import format for {suffix or 'a file without a suffix'}",
        "Give --format markdown, json, jsonl, chatgpt or claude.",
    )


def _from_zip(path: Path) -> tuple[bytes, str]:
    """ChatGPT and Claude deliver their exports as a zip holding conversations.json."""
    unzip = "Unzip it and import its conversations.json."
    try:
        with zipfile.ZipFile(path) as archive:
            found = [i for i in archive.infolist() if i.filename.rsplit("/", 1)[-1] == "conversations.json"]
            if len(found) != 1:
                raise UsageError(f"{path.name}: no single conversations.json in this zip", unzip)
            member = found[0]
            if member.flag_bits & 0x1 or member.compress_type not in READABLE_COMPRESSION:
                raise UsageError(
                    f"{path.name}: its conversations.json is encrypted or compressed unusually", unzip
                )
            if member.file_size > MAX_ZIPPED_BYTES:
                raise UsageError(
                    f"{path.name}: its conversations.json is over {MAX_ZIPPED_BYTES >> 30} GiB unzipped",
                    unzip,
                )
            return archive.read(member), f"{path.name}/{member.filename}"
    except (zipfile.BadZipFile, OSError) as e:  # not a zip, a damaged one, one that cannot be read
        raise ImportFormatError(f"{path.name}: cannot read this zip ({type(e).__name__})", unzip) from None


def _read_bytes(path: Path, shown: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as e:
        raise UsageError(
            f"cannot read {shown}: {e.strerror or type(e).__name__}",
            "Check the file's permissions (or leave it out), then import again: nothing was saved.",
        ) from None


def read(path: Path, fmt: str = "auto", *, by_section: bool = False) -> list[FilePlan]:
    """Every file under ``path`` parsed, in order; nothing is saved."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown import format {fmt!r}", f"Use one of: {', '.join(FORMATS)}.")
    if not path.exists():
        raise NotFoundError(f"nothing to import at {path}", "Name a file or a folder of markdown notes.")
    path = path.resolve()
    if path.is_dir():
        if fmt not in ("auto", "markdown"):
            raise UsageError(f"{path} is a folder: only markdown notes are read from a folder")
        notes = _markdown_files(path)
        if not notes:
            raise NotFoundError(
                f"no markdown notes (*.md) in {path}", "Name the folder that holds your notes."
            )
        plans = []
        for note in notes:
            rel = note.relative_to(path)
            name = f"{path.name}/{rel.as_posix()}"
            key = rel.with_suffix("").as_posix()
            plans.append(
                FilePlan(
                    name,
                    _parse_one(_read_bytes(note, name), name, "markdown", by_section=by_section, key=key),
                )
            )
        return plans
    chosen = _format_of(path, fmt)
    if path.suffix.lower() == ".zip":
        data, name = _from_zip(path)
    else:
        data, name = _read_bytes(path, path.name), path.name
    return [FilePlan(name, _parse_one(data, name, chosen, by_section=by_section, key=path.stem))]


# --- planning -----------------------------------------------------------------------------------
def _refusal(grant: dict[str, Any] | None, body: dict[str, Any]) -> str | None:
    """Why ``body`` would not be saved (what the save path would refuse), or None."""
    if body["scope"] == SYSTEM_SCOPE:
        return "aimos's own guide memory (every brain has its own)"
    try:
        validate_body(body)
        refuse_secret_fields(body, outcome="left out")
    except AimosError as e:
        return e.message
    if grant is not None:
        if not grant["write_allowed"]:
            return "the agent's grant is read-only"
        excess = grant_excess(grant, body["clearance_level"], body["data_class"])
        if excess == "clearance":
            ceiling = grant["clearance_ceiling"]
            return f"clearance {body['clearance_level']} is above the agent's ceiling {ceiling}"
        if excess == "data_class":
            return (
                f"data class {body['data_class']} is above the agent's ceiling {grant['data_class_ceiling']}"
            )
    return None


def plan(
    brain: Brain,
    agent: str,
    files: list[FilePlan],
    *,
    include_flagged: bool = False,
    progress: Callable[[int, str], None] | None = None,
) -> ImportPlan:
    """Each memory of ``files`` as ``agent`` would save it: new, exists or refused (and why);
    ``progress(done, file)`` is told after each memory."""
    signer = brain.signer(agent)
    grant = verified_grant(
        brain.conn, signer.agent_id, latest_epoch(brain.conn, signer.agent_id)["valid_from"]
    )
    seen: set[str] = set()
    # the ceilings a memory gets when it names none: read (and the grant verified) once per kind
    ceilings = cache(partial(default_ceilings, brain, signer.agent_id))
    done = 0
    for f in files:
        for item in f.parsed.items:
            done += 1
            if progress is not None:
                progress(done, f.name)
            clearance, data_class = ceilings(item.clearance, item.data_class)
            body = build_save_body(
                company_id=brain.company_id,
                value=item.value,
                key=item.key,
                scope=item.scope or "personal",
                memory_type=item.memory_type,
                clearance_level=clearance,
                data_class=data_class,
                source=item.source,
            )
            if item.label in ADVERSE and not include_flagged:
                f.planned.append(Planned(item, "refused", f"labelled {item.label} in its export"))
                continue
            reason = _refusal(grant, body)
            if reason is not None:
                f.planned.append(Planned(item, "refused", reason))
                continue
            live = commitments.live_content_hash(body).hex()
            known = (
                live in seen
                or brain.conn.execute(
                    "SELECT 1 FROM memories WHERE company_id = ? AND live_content_hash = ?",
                    (brain.company_id, live),
                ).fetchone()
            )
            seen.add(live)
            f.planned.append(Planned(item, "exists" if known else "new", body=body))
    return ImportPlan(files[0].name.split("/")[0] if files else "", files)


def flagged_as_own(agent: str, include_flagged: bool) -> None:
    """Refuse --include-flagged as the person's own agent (cli): what it signs counts as the
    person's word, which the detector never labels and which clears other origins' labels."""
    if include_flagged and agent == CLI_AGENT:
        raise UsageError(
            "--include-flagged as your own agent (cli) would make memories another brain judged poison "
            "or disputed count as your own word",
            "Enrol an agent for imports (`aimos agent enroll importer`) and import with --as importer.",
        )


# --- saving -------------------------------------------------------------------------------------
def run(
    brain: Brain, agent: str, import_plan: ImportPlan, progress: Callable[[int, str], None]
) -> dict[str, Any]:
    """Save every planned memory, one transaction per file; the summary of what happened."""
    signer = brain.signer(agent)
    statuses: Counter[str] = Counter()
    done = 0
    for f in import_plan.files:
        bodies = [p.body for p in f.planned if p.body is not None]
        if not bodies:
            continue
        start = done

        def each(n: int, start: int = start, name: str = f.name) -> None:
            progress(start + n, name)

        try:
            results = save_all(brain, signer, bodies, each)
        except AimosError as e:
            saved_before = sum(statuses.values())
            e.message = f"{f.name}: {e.message}; nothing from this file was saved"
            e.hint = (
                f"{e.hint} {saved_before} memories from the files before it were saved: fix the file and "
                "import again (what is already saved is recorded as an occurrence, not copied)."
            )
            raise
        statuses.update(r.status for r in results)
        done += len(bodies)
        import_plan.files_saved += 1
    summary = import_plan.summary()
    summary.update(
        saved=statuses["saved"], quarantined=statuses["quarantined"], occurrences=statuses["duplicate"]
    )
    return summary
