"""`aimos redact`: remove one memory's text from the brain, keeping every proof about it.

The memory's signed record is verified first (its text is the last chance to check the save's
signature); then, in one sealed write, the master signs the redaction record, the text, the source
and (unless the person keeps it) the key leave the memory row and its save body, the housekeeper
records a `memory_redacted` event (no text in it), and the search indexes are rebuilt without
them. secure_delete is on for that write, so the pages
that held the text are zeroed, and the WAL is checkpointed and truncated after the commit. The
record is also kept outside the brain (``redactions-<brain id>.json`` beside anchors.json), so a
restore from an older backup re-applies it instead of bringing the text back.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aimos import paths
from aimos.actions.session import Brain, now
from aimos.crypto.ed25519 import KeyPair
from aimos.crypto.encoding import iso_ms
from aimos.errors import UsageError
from aimos.ledger.events import append_event
from aimos.memory.gates import refuse_secret_fields
from aimos.memory.redaction import redact_memory, redaction_of, redactions, travelling
from aimos.memory.versions import get_memory
from aimos.recall.candidates import FTS_TABLES, rebuild_indexes
from aimos.recall.disclosure import verify_for_disclosure
from aimos.store.connection import Connection, write_transaction
from aimos.store.engine import set_secure_delete, wal_checkpoint
from aimos.store.meta import brain_meta
from aimos.store.queries.actions import memory_record, newest_seal_seq, optimize_indexes, supersessions_of
from aimos.verify.kit.redaction import MAX_REASON_CHARS, notice, removed_fields
from aimos.vocabulary import MEMORY_REDACTED_OPERATION, REDACTIONS_FILE_SCHEMA


@dataclass(frozen=True)
class Redaction:
    memory_id: str
    redaction_id: str
    redacted_at: int
    reason: str
    event_id: str
    seal: int | None
    wal_truncated: bool
    other_versions: list[str]
    key_kept: bool

    @property
    def notice(self) -> str:
        return notice({"reason": self.reason}, iso_ms(self.redacted_at))


def notice_of(stored: dict[str, Any]) -> str:
    """The notice of a stored record (as ``redactions`` returns it)."""
    record = json.loads(stored["record_json"])
    return notice(record, iso_ms(int(record["redacted_at"])))


def key_kept(stored: dict[str, Any]) -> bool:
    """Did a stored record keep the memory's key (``--keep-key``, or a v1 record, which removed
    the text alone)?"""
    return "key" not in removed_fields(json.loads(stored["record_json"]))


def check_reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise UsageError("a redaction needs a reason", 'Say why: aimos redact ID --reason "..."')
    if len(reason) > MAX_REASON_CHARS:
        raise UsageError(f"the reason is longer than {MAX_REASON_CHARS} characters", "Shorten it.")
    refuse_secret_fields({"reason": reason}, outcome="nothing was redacted")
    return reason


def redactions_of(brain: Brain) -> list[dict[str, Any]]:
    """The brain's redaction records as stored (what is applied to its backups)."""
    return redactions(brain.conn)


def existing(brain: Brain, memory_ref: str) -> tuple[str, dict[str, Any] | None]:
    """The memory's full id and its redaction record, if it was redacted."""
    mid = get_memory(brain.conn, memory_ref)["memory_id"]
    return mid, redaction_of(brain.conn, mid)


def plan(brain: Brain, memory_ref: str) -> dict[str, Any]:
    """What the redaction would touch, checked before the passphrase is asked for: the memory,
    verified; refused when it is already redacted."""
    found = get_memory(brain.conn, memory_ref)
    memory = memory_record(brain.conn, found["memory_id"])
    assert memory is not None
    if redaction_of(brain.conn, memory["memory_id"]) is not None:
        raise UsageError(f"memory {memory['memory_id']} is already redacted", "Nothing was changed.")
    verify_for_disclosure(brain.conn, memory, allow_superseded=True)
    return memory


@dataclass
class Removed:
    """What a removing write did, once it is over: whether the WAL was truncated after it."""

    wal_truncated: bool = False


@contextmanager
def removing(conn: Connection, housekeeper: Any) -> Iterator[Removed]:
    """One sealed write that removes text (the caller's redactions inside it): secure_delete on,
    so the pages that held the text are zeroed; the search indexes rebuilt without it before the
    commit; the WAL checkpointed and truncated after it; the records kept outside the brain."""
    done = Removed()
    set_secure_delete(conn, True)
    try:
        with write_transaction(conn, housekeeper):
            yield done
            reindex(conn)
        done.wal_truncated = checkpoint(conn)
    finally:
        set_secure_delete(conn, False)
    keep_outside(conn)


def reindex(conn: Connection) -> None:
    """Both search indexes rebuilt from the memories as they are now, and merged (no segment
    keeps a removed text's words)."""
    rebuild_indexes(conn)
    optimize_indexes(conn, FTS_TABLES)


def redact(
    brain: Brain, master: KeyPair, memory_ref: str, reason: str, *, keep_key: bool = False
) -> Redaction:
    reason = check_reason(reason)
    memory = plan(brain, memory_ref)
    conn, at = brain.conn, now()
    mid = memory["memory_id"]
    with removing(conn, brain.housekeeper) as removed:
        record = redact_memory(
            conn,
            master,
            brain_id=brain.meta["brain_id"],
            memory_id=mid,
            reason=reason,
            now=at,
            keep_key=keep_key,
        )
        event = redaction_event(conn, brain.housekeeper(), record, travelling(conn, mid), at)
    seal = newest_seal_seq(conn)
    return Redaction(
        mid,
        record["redaction_id"],
        at,
        reason,
        str(event["event_id"]),
        seal,
        removed.wal_truncated,
        other_versions(conn, mid),
        keep_key,
    )


def redaction_event(
    conn: Connection, housekeeper: Any, record: dict[str, Any], sent: dict[str, str], at: int
) -> dict[str, Any]:
    """The housekeeper's `memory_redacted` event of a record (ids and hashes, no text); ``sent``:
    the record's portable part and the master's signature, which travel with the event to the
    other devices of a synced brain (aimos/hub/redactions.py)."""
    return append_event(
        conn,
        housekeeper,
        operation=MEMORY_REDACTED_OPERATION,
        company_id=record["company_id"],
        metadata={
            "memory_id": record["memory_id"],
            "redaction_id": record["redaction_id"],
            "live_content_hash": record["live_content_hash"],
            "master_fingerprint": record["master_fingerprint"],
            **sent,
        },
        now=at,
    )


def checkpoint(conn: Connection) -> bool:
    """Copy the WAL into the brain and truncate it; False when a reader kept part of it (another
    process holds a snapshot: the text may stay in the WAL until its next checkpoint)."""
    busy, log, _done = wal_checkpoint(conn, "TRUNCATE")
    return busy == 0 and log in (0, -1)


def other_versions(conn: Connection, memory_id: str) -> list[str]:
    """The memory's other versions (its supersession chain both ways) whose text is still there."""
    seen, todo = {memory_id}, [memory_id]
    while todo:
        mid = todo.pop()
        for old, new in supersessions_of(conn, mid):
            for other in (old, new):
                if other not in seen:
                    seen.add(other)
                    todo.append(other)
    seen.discard(memory_id)
    return sorted(m for m in seen if redaction_of(conn, m) is None)


def outside_path(brain_id: str) -> Path:
    return paths.redactions_path(brain_id)


def keep_outside(conn: Connection) -> Path:
    """Write every redaction record of the brain (record and signature: no text) beside
    anchors.json, 0600, atomically."""
    brain_id = brain_meta(conn)["brain_id"]
    path = outside_path(brain_id)
    document = {"schema": REDACTIONS_FILE_SCHEMA, "brain_id": brain_id, "records": redactions(conn)}
    paths.write_private_file(path, json.dumps(document, sort_keys=True, indent=1).encode("utf-8"))
    return path


def kept_outside(brain_id: str) -> list[dict[str, Any]]:
    """The records kept beside anchors.json for this brain (empty when none or unreadable: each
    one is checked against the master before it is applied anywhere)."""
    try:
        document = json.loads(outside_path(brain_id).read_text("utf-8"))
    except (OSError, ValueError):
        return []
    found = document.get("records") if isinstance(document, dict) else None
    if not isinstance(found, list) or document.get("brain_id") != brain_id:
        return []
    fields = ("redaction_id", "memory_id", "record_json", "signature_b64u")
    return [r for r in found if isinstance(r, dict) and all(isinstance(r.get(f), str) for f in fields)]
