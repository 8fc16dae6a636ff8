"""The record of every backup aimos writes (the nightly job's, `aimos backup`'s, `--to DIR`'s), so
that `aimos redact --backups` can reach each one wherever it was written.

One JSON-lines file beside the brain, ``backups-<brain id>.jsonl`` (0600, no text in it): a line
per backup written (its absolute, resolved path, the newest seal it holds, when) and a line per
backup that left (retention removed it, it did not verify, or the person said it is gone). The
record is kept outside the brain because a brain restored from an older backup must still know
the backups written after that backup, and because a backup must not hold the record of itself.

The newest seal identifies a backup: a redaction applied to it changes its bytes but adds no seal,
and a file with another brain id or another newest seal at that path is not the backup aimos
wrote there (it is left as it is, and named).

Each line is appended with one write to a file opened for appending: a line of the housekeeper's
nightly job and one of `aimos backup` in another process never overwrite each other, and a line a
crash tore is skipped when read (the next line starts on a line of its own).
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aimos import paths
from aimos.errors import HomeNotWritableError, StoreError
from aimos.store import seals
from aimos.store.connection import Connection, open_reader
from aimos.store.meta import brain_meta
from aimos.vocabulary import BACKUPS_FILE_SCHEMA

WRITTEN = "written"
GONE = "gone"
# why a backup left the record
PRUNED = "pruned"  # the nightly job's retention removed it
NOT_VERIFIED = "not_verified"  # `aimos backup` removed a copy that did not verify
FORGOTTEN = "forgotten"  # the person said it is gone (`aimos backup forget PATH`)


@dataclass(frozen=True)
class Backup:
    """A backup aimos knows of: ``seal`` is the newest seal it held when written ({seq, link};
    None for a brain not sealed yet); ``recorded`` is False for a file found in the brain's
    backups folder that no line names (written before this record was kept)."""

    path: Path
    seal: dict[str, Any] | None
    written_at: int | None
    recorded: bool = True


def records_path(brain_id: str) -> Path:
    return paths.data_dir() / f"backups-{brain_id}.jsonl"


def seal_in(conn: Connection) -> tuple[str | None, dict[str, Any] | None]:
    """The brain id and the newest seal ({seq, link}, or None) of an open backup."""
    head = seals.head_seal(conn)
    return brain_meta(conn).get("brain_id"), None if head is None else {
        "seq": head.seq,
        "link": head.link.hex(),
    }


def seal_of(path: Path) -> tuple[str | None, dict[str, Any] | None]:
    """The brain id and the newest seal of a backup file, read-only."""
    with contextlib.closing(open_reader(path)) as conn:
        return seal_in(conn)


def record_written(brain_id: str, path: Path, seal: dict[str, Any] | None, at: int) -> None:
    _append(brain_id, {"event": WRITTEN, "path": str(path.resolve()), "seal": seal, "at": at})


def record_gone(brain_id: str, path: Path, at: int, why: str) -> None:
    _append(brain_id, {"event": GONE, "path": str(path.resolve()), "why": why, "at": at})


def recorded(brain_id: str) -> list[Backup]:
    """The backups the record names that have not left it, in the order they were written."""
    path = records_path(brain_id)
    try:
        text = path.read_bytes().decode("utf-8", "replace")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StoreError(
            f"cannot read the record of this brain's backups at {path} ({exc.strerror})",
            "Give it back to your user with mode 0600, then run the command again.",
        ) from None
    found: dict[str, Backup] = {}
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line a crash tore, or a blank one
        if not isinstance(entry, dict) or entry.get("schema") != BACKUPS_FILE_SCHEMA:
            continue
        where = entry.get("path")
        if not isinstance(where, str) or not os.path.isabs(where):
            continue
        if entry.get("event") == GONE:
            found.pop(where, None)
        elif entry.get("event") == WRITTEN:
            seal = entry.get("seal")
            at = entry.get("at")
            found.pop(where, None)  # written again at the same path: the newest write counts
            found[where] = Backup(
                Path(where), seal if isinstance(seal, dict) else None, at if isinstance(at, int) else None
            )
    return list(found.values())


def _append(brain_id: str, entry: dict[str, Any]) -> None:
    path = records_path(brain_id)
    line = json.dumps({"schema": BACKUPS_FILE_SCHEMA, **entry}, sort_keys=True).encode("utf-8") + b"\n"
    try:
        if not path.parent.is_dir():
            paths.ensure_private_dir(path.parent)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line  # the last line was torn by a crash: start on a line of its own
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise HomeNotWritableError(
            f"cannot write the record of this brain's backups at {path} ({exc.strerror})"
        ) from None
