"""Redaction of one memory's text by the master: the writer, and the reads that say a memory was
redacted. The record and its check are the kit's (aimos/verify/kit/redaction.py); migrations 8 and
13 allow exactly these two row changes once the record is in: the text, the source and (unless the
master keeps it) the key leave the memory row and its signed save body.

The writer runs inside the caller's write transaction (the action in aimos/actions/redaction.py
verifies the memory first, rebuilds the search indexes with secure_delete on and checkpoints the
WAL after the commit). ``apply_record`` puts an existing record into another copy of the same brain
(a backup, a restored brain): the record is the master's, so no passphrase is needed there.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from aimos.crypto.canonical import canonical_text, json_loads
from aimos.crypto.commitments import sha256
from aimos.crypto.ed25519 import KeyPair
from aimos.crypto.encoding import b64u_encode, iso_ms
from aimos.errors import IntegrityError, MemoryNotFoundError, UsageError
from aimos.store import vectors
from aimos.store.connection import Connection
from aimos.store.queries import memory_redaction as queries
from aimos.store.queries.memory_redaction import HeldMemory, SaveNode
from aimos.store.seals import TableShape, sealed_tables
from aimos.verify.kit.redaction import (
    REDACTED_TABLES,
    REMOVED_CELLS,
    REMOVED_FORMS,
    check_record,
    localized,
    notice,
    parse_record,
    record_id,
    record_message,
    redacted_body,
    removed_fields,
    row_swaps,
    signed_text,
)
from aimos.vocabulary import REDACTION_SCHEMA


def _row(conn: Connection, shape: TableShape, rowid: int) -> tuple[Any, ...]:
    found = queries.sealed_row(conn, shape, rowid)
    if found is None:
        raise IntegrityError(f"{shape.name} row {rowid} is missing")
    return found


def _swapped(shape: TableShape, row: tuple[Any, ...], cells: dict[str, Any]) -> tuple[Any, ...]:
    """The row as it will be with ``cells`` (column -> text) in place (cells as ``shape.select``
    reads them: text as UTF-8 bytes)."""
    names = [c for c, _ in shape.columns]
    swapped = list(row)
    for column, text in cells.items():
        swapped[1 + names.index(column)] = None if text is None else text.encode("utf-8")
    return tuple(swapped)


def redaction_of(conn: Connection, memory_id: str) -> dict[str, Any] | None:
    """The memory's redaction record (parsed) with its id, or None when its text is there."""
    found = queries.record_of(conn, memory_id)
    if found is None:
        return None
    record = parse_record(found["record_json"])
    if record is None:
        raise IntegrityError(
            f"memory {memory_id}'s redaction record is damaged",
            "Run `aimos verify`: the brain was changed outside aimos.",
        )
    return {**record, "redaction_id": found["redaction_id"]}


def redactions(conn: Connection) -> list[dict[str, Any]]:
    """Every stored record as stored (record text and signature), oldest first: what is kept
    outside the brain and re-applied to a backup or a restored brain."""
    return queries.stored_records(conn)


def redacted_ids(conn: Connection, memory_ids: list[str]) -> dict[str, dict[str, Any]]:
    """Of these memories, the redacted ones with their records."""
    if not memory_ids:
        return {}
    found = queries.records_of(conn, memory_ids)
    return {r["memory_id"]: record for r in found if (record := parse_record(r["record_json"])) is not None}


def _held(conn: Connection, memory_id: str) -> tuple[HeldMemory, SaveNode]:
    """The two rows that hold the memory's text: its row and its save provenance node."""
    memory = queries.held_memory(conn, memory_id)
    if memory is None:
        raise MemoryNotFoundError(f"no memory {memory_id}")
    save = queries.save_node(conn, memory["save_provenance_id"])
    if save is None:
        raise IntegrityError(f"memory {memory_id} has no save provenance node")
    return memory, save


def changed_cells(save_body_json: str, removed: tuple[str, ...]) -> tuple[dict[str, dict[str, Any]], str]:
    """What removing ``removed`` puts in each redacted table's row (column -> text), and the
    redacted save body's text (pure)."""
    body_text = canonical_text(redacted_body(json_loads(save_body_json), removed))
    cells: dict[str, dict[str, Any]] = {
        "memories": {f: REMOVED_CELLS[f] for f in removed},
        "memory_provenance": {"body_json": body_text},
    }
    return cells, body_text


def row_change(
    shape: TableShape, row: tuple[Any, ...], cells: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One row (as ``shape.select`` reads it) with ``cells`` put in (pure): its seal row hash
    before and after (this brain's, bound to its rowid) and the hash of its cells alone before and
    after (the same on every device)."""
    after = _swapped(shape, row, cells)
    swap = {
        "table": shape.name,
        "rowid": int(row[0]),
        "before": shape.row_hash(row).hex(),
        "after": shape.row_hash(after).hex(),
    }
    content = {
        "table": shape.name,
        "before": shape.content_hash(row).hex(),
        "after": shape.content_hash(after).hex(),
    }
    return swap, content


def _swaps(
    conn: Connection, memory: HeldMemory, save: SaveNode, removed: tuple[str, ...]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    """What removing ``removed`` changes here: each row's seal row hash before and after (``rows``,
    this brain's), the hash of its cells alone before and after (``contents``, the same on every
    device), and the redacted save body."""
    cells, body_text = changed_cells(save["body_json"], removed)
    shapes = sealed_tables(conn)
    rowids = {"memories": int(memory["rowid"]), "memory_provenance": int(save["rowid"])}
    swaps, contents = [], []
    for table in REDACTED_TABLES:
        swap, content = row_change(shapes[table], _row(conn, shapes[table], rowids[table]), cells[table])
        swaps.append(swap)
        contents.append(content)
    return swaps, contents, body_text


def portable_body(
    memory: Mapping[str, Any],
    save: Mapping[str, Any],
    removed: tuple[str, ...],
    contents: list[dict[str, Any]],
    body_text: str,
    *,
    brain_id: str,
    reason: str,
    now: int,
    master_fingerprint: str,
) -> dict[str, Any]:
    """The portable part of a v3 record (pure): what the master signs, the same for every device."""
    return {
        "schema": REDACTION_SCHEMA,
        "removed": list(removed),
        "brain_id": brain_id,
        "company_id": memory["company_id"],
        "memory_id": memory["memory_id"],
        "live_content_hash": memory["live_content_hash"],
        "save_provenance_id": memory["save_provenance_id"],
        "save_content_hash": save["content_hash"],
        "save_mutation_hash": save["mutation_hash"],
        "redacted_body_sha256": sha256(body_text.encode("utf-8")).hex(),
        "contents": contents,
        "reason": reason,
        "redacted_at": now,
        "master_fingerprint": master_fingerprint,
    }


def portable_record(
    conn: Connection,
    *,
    brain_id: str,
    memory_id: str,
    reason: str,
    now: int,
    master_fingerprint: str,
    keep_key: bool = False,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """What the master signs to redact the memory (the record's portable part, the same for every
    device of the brain) and this brain's rows (its rowids and seal row hashes)."""
    memory, save = _held(conn, memory_id)
    removed = REMOVED_FORMS[1] if keep_key else REMOVED_FORMS[0]
    swaps, contents, body_text = _swaps(conn, memory, save, removed)
    portable = portable_body(
        memory,
        save,
        removed,
        contents,
        body_text,
        brain_id=brain_id,
        reason=reason,
        now=now,
        master_fingerprint=master_fingerprint,
    )
    return portable, swaps


def redact_memory(
    conn: Connection,
    master: KeyPair,
    *,
    brain_id: str,
    memory_id: str,
    reason: str,
    now: int,
    keep_key: bool = False,
) -> dict[str, Any]:
    """Sign the record, store it, then remove the text, the source and (unless ``keep_key``) the
    key from the memory row and its save body. Call inside a write transaction, after the
    memory's signed record was verified. The master signs the record's portable part (all but this
    brain's rowids), so every device of a synced brain applies the same record
    (``localized_record``)."""
    if redaction_of(conn, memory_id) is not None:
        raise UsageError(f"memory {memory_id} is already redacted", "Nothing was changed.")
    portable, swaps = portable_record(
        conn,
        brain_id=brain_id,
        memory_id=memory_id,
        reason=reason,
        now=now,
        master_fingerprint=master.fingerprint,
        keep_key=keep_key,
    )
    text = canonical_text(portable)
    stored = {
        "redaction_id": record_id(text),
        "memory_id": memory_id,
        "record_json": localized(portable, swaps),
        "signature_b64u": b64u_encode(master.sign(record_message(text))),
    }
    apply_record(conn, stored)
    return {**portable, "rows": swaps, "redaction_id": stored["redaction_id"]}


def portable_part(stored: Mapping[str, Any]) -> dict[str, str] | None:
    """What travels of a stored record to the other devices of a synced brain: its portable part
    and the master's signature (None for a v1 or v2 record, bound to this brain's rowids)."""
    record = parse_record(stored["record_json"])
    if record is None or record["schema"] != REDACTION_SCHEMA:
        return None
    return {"record": signed_text(stored["record_json"], record), "signature_b64u": stored["signature_b64u"]}


def travelling(conn: Connection, memory_id: str) -> dict[str, str]:
    """The event fields that carry the memory's redaction record to the other devices of a synced
    brain (``redaction_record``, ``redaction_signature_b64u``); none for a v1 or v2 record."""
    found = queries.record_of(conn, memory_id)
    part = None if found is None else portable_part(found)
    return (
        {}
        if part is None
        else {"redaction_record": part["record"], "redaction_signature_b64u": part["signature_b64u"]}
    )


def localized_record(conn: Connection, portable_text: str, signature_b64u: str) -> dict[str, Any]:
    """The master's record another device sent (its portable part and signature) as this brain
    stores it: checked against this brain's master and its memory, with this brain's rows added.
    A record the master did not sign, of another brain, or of a memory that differs here is
    refused naming the memory (IntegrityError); a memory this brain does not hold:
    MemoryNotFoundError."""
    master = queries.master_key(conn)
    assert master is not None  # a brain without its master opens nowhere
    _reason, record = check_record(
        portable_text, signature_b64u, master["public_key_b64u"], master["fingerprint"], portable=True
    )
    if record is None:
        raise IntegrityError(
            "the redaction record is not signed by this brain's master (or is no redaction record)",
            "Nothing was redacted. Only the master redacts: a device that sends such a record is "
            "misbehaving; revoke it (`aimos hub revoke DEVICE`).",
            reason="redaction_not_the_masters",
        )
    brain = queries.brain_id(conn)
    mid = record["memory_id"]
    if brain is None or record["brain_id"] != brain:
        raise IntegrityError(
            f"the redaction record of memory {mid} is another brain's",
            "Nothing was redacted.",
            reason="redaction_record_of_another_brain",
        )
    memory, save = _held(conn, mid)
    swaps, contents, _body = _swaps(conn, memory, save, removed_fields(record))
    if (
        memory["live_content_hash"] != record["live_content_hash"]
        or memory["save_provenance_id"] != record["save_provenance_id"]
        or memory["save_mutation_hash"] != record["save_mutation_hash"]
        or save["content_hash"] != record["save_content_hash"]
        or contents != record["contents"]
    ):
        raise IntegrityError(
            f"memory {mid} here is not the memory the master's redaction record names",
            "Nothing was redacted. Run `aimos verify` on this device.",
            reason="redaction_record_differs",
        )
    return {
        "redaction_id": record_id(portable_text),
        "memory_id": mid,
        "record_json": localized(record, swaps),
        "signature_b64u": signature_b64u,
    }


def apply_record(conn: Connection, stored: Mapping[str, Any]) -> None:
    """Store one record (as ``redactions`` returns it) and remove the text it names; the two rows
    must then hash to exactly what the record says. Call inside a transaction."""
    record = parse_record(stored["record_json"])
    if record is None:
        raise IntegrityError("a redaction record is damaged", "Nothing was changed.")
    queries.insert_record(
        conn,
        {
            "redaction_id": stored["redaction_id"],
            "memory_id": record["memory_id"],
            "company_id": record["company_id"],
            "record_json": stored["record_json"],
            "signature_b64u": stored["signature_b64u"],
            "created_at": record["redacted_at"],
        },
    )
    save_body = queries.save_body(conn, record["save_provenance_id"])
    assert save_body is not None  # the insert trigger checked it exists
    removed = removed_fields(record)
    body_text = canonical_text(redacted_body(json_loads(save_body), removed))
    cells = {f: REMOVED_CELLS[f] for f in removed}
    queries.remove_text(conn, record["memory_id"], cells, body_text, record["save_provenance_id"])
    # its vector was made of the text: gone with it (`aimos index rebuild` makes it empty: store/vectors)
    for rowid in queries.rowids_of(conn, record["memory_id"]):
        vectors.remove(conn, rowid)
    shapes = sealed_tables(conn)
    for swap in row_swaps(record):
        shape = shapes[swap.table]
        row = _row(conn, shape, swap.rowid)
        if not swap.stands_for(shape.row_hash(row), partial(shape.content_hash, row)):
            raise IntegrityError(
                f"after redaction, {swap.table} row {swap.rowid} is not the row the record names",
                "Nothing was changed. Run `aimos verify`.",
            )


def check_stored(conn: Connection, stored: Mapping[str, Any]) -> str | None:
    """None when a stored record (from ``redactions``) verifies under this brain's master."""
    master = queries.master_key(conn)
    if master is None:
        return "no master identity"
    reason, record = check_record(
        stored["record_json"], stored["signature_b64u"], master["public_key_b64u"], master["fingerprint"]
    )
    brain = queries.brain_id(conn)
    if record is not None and (brain is None or record["brain_id"] != brain):
        return "redaction_record_of_another_brain"  # the seal check would refuse it too
    return reason


def redaction_notices(conn: Connection, memory_ids: list[str]) -> dict[str, str]:
    """Of these memories, the redacted ones with their ``redacted`` notice."""
    found = redacted_ids(conn, memory_ids)
    return {mid: notice(record, iso_ms(int(record["redacted_at"]))) for mid, record in found.items()}


def mark_redacted(conn: Connection, memories: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give each memory read its ``redacted`` notice (None when its text is there); returns them."""
    notices = redaction_notices(conn, [m["memory_id"] for m in memories])
    for m in memories:
        m["redacted"] = notices.get(m["memory_id"])
    return memories


def shown_text(memory: Mapping[str, Any]) -> str:
    """The text a person sees: the memory's value, or its redaction notice in brackets."""
    redacted = memory.get("redacted")
    return f"[{redacted}]" if redacted else str(memory["value"])
