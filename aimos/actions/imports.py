"""`aimos import`: memories from markdown notes, JSON/JSONL, ChatGPT and Claude exports, and
aimos's own text export, saved through the same signed save as `aimos save` (the secret gate, the
grant, the classifier and the detector), one write transaction per file.

First every file is read and parsed (a malformed one stops the import before anything is saved),
then each memory is planned: ``new``, ``exists`` (already in the brain or earlier in the import:
saving it again records a signed occurrence, not a copy) or ``refused`` (a secret, too large,
above the agent's grant, aimos's own guide, a poison label in its export, a creation time that is
no time or in the future) with the reason. A dry run stops there.

What an aimos export says of a memory beyond its fields: its creation time is kept, signed with
the save (``originated_at``); a doubt (label disputed) is carried as the importing agent's dispute
of the new memory (it lowers trust, which an agent may do alone); a label that raises trust
(supported, poison_refuted) and a weight are not carried, and are listed as not kept: a file
cannot make a memory more trusted than a new one (a person judges it again here, with the master
passphrase where `aimos label` asks for it).

The import saves each file's planned memories in one transaction: a file is in the brain whole or
not at all, and running the same import again after an interruption saves what is missing and
records occurrences of the rest.
"""

from __future__ import annotations

import os
import re
import stat
import struct
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import IO, Any

from aimos.actions.bodies import build_save_body
from aimos.actions.doctor import MIB, size_text
from aimos.actions.labels import label_short, label_words
from aimos.actions.memory import default_ceilings, save_all
from aimos.actions.session import Brain, now
from aimos.crypto import commitments
from aimos.errors import AimosError, ImportFormatError, NotFoundError, UsageError
from aimos.identity.epochs import latest_epoch
from aimos.identity.trusted import grant_excess, verified_grant
from aimos.memory import text_formats as formats
from aimos.memory.gates import refuse_secret_fields
from aimos.memory.save import validate_body
from aimos.memory.text_formats import AUTO, FOLDER_FORMAT, ImportFormat, Item, Parsed
from aimos.plural import agree, plural
from aimos.store.queries.actions import live_hash_here
from aimos.vocabulary import ADVERSE, CLI_AGENT, DISPUTED, SYSTEM_SCOPE, UNVERIFIED

# what a zip's conversations.json may be compressed with: zipfile unzips bzip2 and LZMA a whole
# read at a time, however large that makes it (a few hundred bytes of bzip2 are gigabytes)
READABLE_COMPRESSION = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
SKIPPED_DIRS = (".obsidian", ".trash", ".git")  # an Obsidian vault's settings, its bin, a repository


@dataclass
class Planned:
    item: Item
    status: str  # new | exists | refused
    reason: str | None = None
    body: dict[str, Any] | None = None
    note: str | None = None  # what happens to what its export says beyond its fields


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
            "disputed": sum(
                1 for f in self.files for p in f.planned if p.status == "new" and p.item.label == DISPUTED
            ),
        }


# --- reading ------------------------------------------------------------------------------------
# What one import reads, whatever its files say of themselves: counted as it is read (a zip's
# headers may lie about a member's size), refused at the first byte over, before it is parsed.
MAX_INFLATED = 512 * MIB  # a file, a zip's conversations.json unzipped, or a folder's notes together:
# a ChatGPT export of years of daily use holds some tens to a few hundred MB of conversations.json
# (108 MB for 2,653 conversations), a Claude export tens; parsing one takes several times that
MAX_ZIP_RATIO = 100  # and a zip's member unzips to at most 100 times its compressed size: JSON
# deflates 5 to 15 times, deflate's own limit is about 1,030 times, and a zip bomb is near it (the
# member's size, not the zip's: padding a zip, or the images of an export, do not raise the cap)
MAX_ZIP_DIRECTORY = 8 * MIB  # a zip's central directory (its list of files, read whole when it is
# opened, each entry several hundred bytes in memory): some 50,000 files of ordinary names
MAX_NOTES = 100_000  # markdown notes in one folder (a large vault holds some thousands)
READ_CHUNK = MIB
SIZE = re.compile(r"(\d{1,15}(?:\.\d{1,6})?)\s*(?:([kmgt])(?:i?b)?|b)?", re.IGNORECASE)
ZIP_END = struct.Struct("<4s4H2LH")  # the end of central directory record
ZIP64_LOCATOR = struct.Struct("<4sLQL")
ZIP64_END = struct.Struct("<4sQ2H2L4Q")


@dataclass(frozen=True)
class Cap:
    """The most an import reads, in bytes, and what a refusal says of it: the cap (``named``)
    and how to raise it (``fix``)."""

    limit: int
    named: str
    fix: str

    def check(self, size: int, what: str) -> None:
        """Refuse ``what`` (``"NAME holds"``, ``"NAME unzips to"``) at ``size`` bytes over the cap."""
        if size > self.limit:
            raise UsageError(f"{what} over {self.named}; nothing was saved", self.fix)


def parse_size(text: str) -> int:
    """``--max-inflated``'s SIZE: bytes, or a number with K, M, G or T (KiB, MiB, GiB, TiB)."""
    m = SIZE.fullmatch(text.strip())
    scale = 1024 ** ("kmgt".index(m.group(2).lower()) + 1) if m and m.group(2) else 1
    size = int(float(m.group(1)) * scale) if m else 0
    if size < 1:
        raise UsageError(
            f"--max-inflated {text!r} is not a size", "Give bytes, or a number with K, M, G or T, e.g. 2G."
        )
    return size


def caps(max_inflated: str | None, zipped: int | None = None) -> Cap:
    """The cap on what one import reads: ``--max-inflated`` when given, else MAX_INFLATED and,
    for a zip member of ``zipped`` bytes compressed, MAX_ZIP_RATIO times that (the lower)."""
    if max_inflated is not None:
        size = parse_size(max_inflated)
        return Cap(
            size,
            f"{size_text(size)} (--max-inflated {max_inflated})",
            "Give a larger --max-inflated if you trust it.",
        )
    if zipped is not None and MAX_ZIP_RATIO * zipped < MAX_INFLATED:
        return Cap(
            MAX_ZIP_RATIO * zipped,
            f"{MAX_ZIP_RATIO} times its {size_text(zipped)} compressed (the zip bomb cap)",
            "If you trust the zip, import it with --max-inflated SIZE above what it unzips to (for example "
            "--max-inflated 2G; it replaces both caps), or unzip it and import its conversations.json.",
        )
    return Cap(
        MAX_INFLATED,
        f"{size_text(MAX_INFLATED)} (the import cap)",
        "If you trust it, import it with --max-inflated SIZE above its size (for example --max-inflated 2G).",
    )


def _read(stream: IO[bytes], cap: Cap, what: str, *, before: int = 0, keep: bool = True) -> bytearray:
    """``stream`` to its end, counted: refused once ``before`` and what it holds pass ``cap``;
    what it holds (nothing when not ``keep``)."""
    data = bytearray()
    size = before
    while chunk := stream.read(READ_CHUNK):
        size += len(chunk)
        cap.check(size, what)
        if keep:
            data += chunk
    return data


def _decode(data: bytearray, name: str) -> str:
    """The text of ``data``; ``data`` is emptied (only the text is kept while it is parsed)."""
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ImportFormatError(
            f"{name}:{line}: not UTF-8 text (byte {e.start})", "Save the file as UTF-8, then import again."
        ) from None
    data.clear()
    return text


def _markdown_files(root: Path, cap: Cap) -> list[Path]:
    """The notes under ``root`` in path order (hidden files and folders, and symbolic links, left
    out), refused past MAX_NOTES or past ``cap`` together before any is read."""
    found: list[Path] = []
    size = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS]
        for name in files:
            path = Path(folder, name)
            if name.startswith(".") or path.suffix.lower() not in FOLDER_FORMAT.suffixes:
                continue
            try:
                info = path.lstat()
            except OSError:  # gone since the folder was listed: as if it never was
                continue
            if not stat.S_ISREG(info.st_mode):
                continue
            found.append(path)
            size += info.st_size
            if len(found) > MAX_NOTES:
                raise UsageError(
                    f"{root} holds over {MAX_NOTES:,} notes, more than one import reads; nothing was saved",
                    "Import its folders one at a time.",
                )
            cap.check(size, f"the notes in {root} hold")
    return sorted(found, key=lambda p: p.relative_to(root).parts)


def _parse_one(data: bytearray, name: str, fmt: ImportFormat, *, by_section: bool, key: str) -> Parsed:
    return fmt.read(_decode(data, name), name, key, by_section)


def _format_of(path: Path, fmt: str) -> ImportFormat:
    """The format named, or for ``auto`` the one the file's name says."""
    if fmt != AUTO:
        return formats.IMPORT_FORMAT[fmt]
    suffix = path.suffix.lower()
    found = formats.by_name(suffix)
    if found is None:
        raise UsageError(
            f"{path.name}: no import format for {suffix or 'a file without a suffix'}",
            f"Give --format {formats.FORMATS_IN_WORDS}.",
        )
    return found


def zip_directory_size(tail: bytes) -> int | None:
    """The size of the central directory a zip's end records give, found as Python's zipfile
    finds them in ``tail`` (the zip's last 64 KiB and 98 bytes, or all of it): the end record
    that ends the file, else the last one in its final 64 KiB and 22 bytes; the zip64 record's
    size when a zip64 locator and record come just before it. None without an end record."""
    window = len(tail) - min(len(tail), 0x10000 + ZIP_END.size)
    if tail.startswith(b"PK\x05\x06", len(tail) - ZIP_END.size) and tail.endswith(b"\0\0"):
        at = len(tail) - ZIP_END.size
    else:
        at = tail.rfind(b"PK\x05\x06", window)
        if at < 0 or len(tail) - at < ZIP_END.size:
            return None
    size: int = ZIP_END.unpack_from(tail, at)[5]
    locator = at - ZIP64_LOCATOR.size
    record = locator - ZIP64_END.size
    if record >= 0 and tail.startswith(b"PK\x06\x07", locator) and tail.startswith(b"PK\x06\x06", record):
        size = ZIP64_END.unpack_from(tail, record)[8]
    return size


def _from_zip(path: Path, max_inflated: str | None) -> tuple[bytearray, str]:
    """ChatGPT and Claude deliver their exports as a zip holding conversations.json: that member,
    unzipped within the cap (``caps``) before anything of it is kept."""
    unzip = "Unzip it and import its conversations.json."
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            handle.seek(max(size - 0x10000 - ZIP_END.size - ZIP64_LOCATOR.size - ZIP64_END.size, 0))
            directory = zip_directory_size(handle.read())
            if directory is not None and directory > MAX_ZIP_DIRECTORY:
                raise UsageError(
                    f"{path.name}: its list of files is over {size_text(MAX_ZIP_DIRECTORY)} (some 50,000 "
                    "files or more), more than an import reads; nothing was saved",
                    unzip,
                )
            with zipfile.ZipFile(handle) as archive:
                found = [
                    i for i in archive.infolist() if i.filename.rsplit("/", 1)[-1] == "conversations.json"
                ]
                if len(found) != 1:
                    raise UsageError(f"{path.name}: no single conversations.json in this zip", unzip)
                member = found[0]
                if member.flag_bits & 0x1 or member.compress_type not in READABLE_COMPRESSION:
                    raise UsageError(
                        f"{path.name}: its conversations.json is encrypted or compressed unusually", unzip
                    )
                shown = f"{path.name}/{member.filename}"
                # zipfile reads no more of the zip than the member's compressed size
                cap = caps(max_inflated, min(member.compress_size, size))
                cap.check(member.file_size, f"{shown} unzips to")  # as its headers say
                # then as it unzips: counted, and checked whole (its CRC) before a byte is kept
                for keep in (False, True):
                    with archive.open(member) as stream:
                        data = _read(stream, cap, f"{shown} unzips to", keep=keep)
                return data, shown
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as e:  # not a zip, a damaged one
        raise ImportFormatError(f"{path.name}: cannot read this zip ({type(e).__name__})", unzip) from None


def _read_file(path: Path, shown: str, cap: Cap, before: int = 0) -> bytearray:
    """A file's bytes within ``cap`` (``before`` bytes already read under it): refused at once
    when its size says it is over, else as it is read (a device or a pipe says no size)."""
    try:
        with path.open("rb") as handle:
            cap.check(before + os.fstat(handle.fileno()).st_size, f"{shown} holds")
            return _read(handle, cap, f"{shown} holds", before=before)
    except OSError as e:
        raise UsageError(
            f"cannot read {shown}: {e.strerror or type(e).__name__}",
            "Check the file's permissions (or leave it out), then import again: nothing was saved.",
        ) from None


def read(
    path: Path, fmt: str = AUTO, *, by_section: bool = False, max_inflated: str | None = None
) -> list[FilePlan]:
    """Every file under ``path`` parsed, in order; nothing is saved. What is read is capped
    (``caps``: ``max_inflated``, e.g. "2G", else the defaults)."""
    if fmt not in formats.FORMAT_NAMES:
        raise UsageError(f"unknown import format {fmt!r}", f"Use one of: {', '.join(formats.FORMAT_NAMES)}.")
    cap = caps(max_inflated)  # a SIZE that is none is refused before anything is read
    if not path.exists():
        raise NotFoundError(f"nothing to import at {path}", "Name a file or a folder of markdown notes.")
    path = path.resolve()
    if path.is_dir():
        if fmt not in (AUTO, FOLDER_FORMAT.name):
            raise UsageError(f"{path} is a folder: only markdown notes are read from a folder")
        notes = _markdown_files(path, cap)
        if not notes:
            raise NotFoundError(
                f"no markdown notes (*.md) in {path}", "Name the folder that holds your notes."
            )
        plans = []
        read_so_far = 0
        for note in notes:
            rel = note.relative_to(path)
            name = f"{path.name}/{rel.as_posix()}"
            data = _read_file(note, name, cap, read_so_far)
            read_so_far += len(data)
            key = rel.with_suffix("").as_posix()
            plans.append(
                FilePlan(name, _parse_one(data, name, FOLDER_FORMAT, by_section=by_section, key=key))
            )
        return plans
    chosen = _format_of(path, fmt)
    if path.suffix.lower() == formats.ZIPPED:
        data, name = _from_zip(path, max_inflated)
    else:
        data, name = _read_file(path, path.name, cap), path.name
    return [FilePlan(name, _parse_one(data, name, chosen, by_section=by_section, key=path.stem))]


# --- planning -----------------------------------------------------------------------------------
# what an import does with the labels an aimos export gives: carried (unverified is every new
# memory's; a doubt as a note, the text's last line), left out unless --include-flagged (poison),
# or not carried (one that raises trust, or none aimos knows). A doubt is never carried as a signed
# dispute: a person's dispute shows a memory recall would otherwise withhold (a lure, a contested
# claim) and the detector never relabels what a person judged, so a file marking its plants
# "disputed" would have them shown. Imported not judged, the memory meets every rule a new one does.
CARRIED_LABELS = frozenset({UNVERIFIED, DISPUTED})
LEFT_OUT_LABELS = ADVERSE - {DISPUTED}
DOUBT_NOTE = "(doubted in the brain it came from: its aimos export labelled it disputed)"
# why a field of the input is not kept, where a person may wonder (every other one is not a field
# a memory has)
NOT_KEPT_WHY = {
    "label": "only a doubt is carried, as a note in the text: judge here with `aimos label`",
    "weight": "every memory starts at 1.000 here; feedback here moves it",
    "memory_id": "each memory gets a new id here",
}


def _refusal(grant: dict[str, Any] | None, body: dict[str, Any], at: int) -> str | None:
    """Why ``body`` would not be saved at ``at`` (what the save path would refuse), or None."""
    if body["scope"] == SYSTEM_SCOPE:
        return "aimos's own guide memory (every brain has its own)"
    try:
        validate_body(body, signed_at=at)
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
    at = now()
    done = 0
    for f in files:
        for item in f.parsed.items:
            done += 1
            if progress is not None:
                progress(done, f.name)
            if item.problem is not None:
                f.planned.append(Planned(item, "refused", item.problem))
                continue
            clearance, data_class = ceilings(item.clearance, item.data_class)
            doubted = item.label == DISPUTED
            body = build_save_body(
                company_id=brain.company_id,
                value=f"{item.value}\n{DOUBT_NOTE}" if doubted else item.value,
                key=item.key,
                scope=item.scope or "personal",
                memory_type=item.memory_type,
                clearance_level=clearance,
                data_class=data_class,
                source=item.source,
                originated_at=item.originated,
            )
            if item.label in LEFT_OUT_LABELS and not include_flagged:
                flagged = f"labelled {label_short(item.label)} in its export"
                f.planned.append(Planned(item, "refused", flagged))
                continue
            reason = _refusal(grant, body, at)
            if reason is not None:
                f.planned.append(Planned(item, "refused", reason))
                continue
            if doubted and _here(brain, commitments.live_content_hash({**body, "value": item.value}).hex()):
                body = {**body, "value": item.value}  # its text is here already: an occurrence of it
            live = commitments.live_content_hash(body).hex()
            known = live in seen or _here(brain, live)
            seen.add(live)
            f.planned.append(Planned(item, "exists" if known else "new", body=body, note=_note(item, known)))
            if item.label is not None and item.label not in CARRIED_LABELS:
                f.parsed.not_kept.add("label")
    return ImportPlan(files[0].name.split("/")[0] if files else "", files)


def _here(brain: Brain, live: str) -> bool:
    """Whether a memory of this live content hash is in the brain already."""
    return live_hash_here(brain.conn, brain.company_id, live)


def _note(item: Item, known: object) -> str | None:
    """What becomes of the label an export gives a memory it imports (None: nothing to say)."""
    if item.label is None or item.label == UNVERIFIED:
        return None
    if item.label == DISPUTED:
        if known:
            return "doubted in its export; already here, where its label stays as it is"
        return "doubted in its export: imported not judged, the doubt noted as the text's last line"
    said = label_words(item.label)
    if item.label in LEFT_OUT_LABELS:
        return f"its label in the export ({said}) is not carried: aimos judges it afresh here"
    return f"its label in the export ({said}) is not carried: judge it here with `aimos label`"


def flagged_as_own(agent: str, include_flagged: bool) -> None:
    """Refuse --include-flagged as the person's own agent (cli): what it signs counts as the
    person's word, which the detector never labels and which clears other origins' labels."""
    if include_flagged and agent == CLI_AGENT:
        raise UsageError(
            "--include-flagged as your own agent (cli) would make memories another brain judged poison "
            "count as your own word",
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
                f"{e.hint} {plural(saved_before, 'memory')} from the files before it"
                f" {agree(saved_before, 'was', 'were')} saved: fix the file and "
                "import again (what is already saved is recorded as an occurrence, not copied)."
            )
            raise
        statuses.update(r.status for r in results)
        done += len(bodies)
        import_plan.files_saved += 1
    summary = import_plan.summary()
    summary.update(
        saved=statuses["saved"],
        quarantined=statuses["quarantined"],
        occurrences=statuses["duplicate"],
    )
    return summary
