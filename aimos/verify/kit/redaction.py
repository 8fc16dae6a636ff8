"""A redaction record: the master's signed word that one memory's text was removed from the brain
(pure, no I/O). The writer builds it, the store's trigger, the seal check and both verifiers read
it with these functions.

Redaction is the one exception to "nothing is deleted": the memory's value, its source and (unless
the master keeps it) its key leave the brain (its row, its signed save body, the search indexes),
every proof about it stays. What can no longer be recomputed from the removed bytes (the save's
content hash, its signature, the seal row hashes of the two rows that held the text) the record
carries, signed by the master, who checked them when the text was still there:

- ``removed`` (schema v2): the fields removed, ``["key", "source", "value"]`` or, the key kept,
  ``["source", "value"]``; a v1 record (before v2) removed the value alone and has no such field.
  A removed field holds REMOVED_CELLS in the memory row and null in the save body;
- ``live_content_hash``, ``save_content_hash``, ``save_mutation_hash``: the memory's signed
  identity, unchanged; the stored save body now hashes to ``redacted_body_sha256`` (the body with
  the removed fields set to null, still canonical JSON);
- ``rows``: for the memory row and its save provenance row, the seal row hash before and after
  the text was removed: the seal chain keeps verifying with ``before`` in place of a row that
  hashes to exactly ``after`` (any other change to that row still breaks it).

A v3 record is signed once for every device of a synced brain, whose rowids differ: the master
signs the record without ``rows`` (its portable part, which travels to the other devices) and
with ``contents``: for the same two rows, the hash of their cells without the rowid before and
after (seal_row_content_hash). Each device stores the portable part with its own ``rows`` added;
a device's ``before`` is bound by its own seal chain (only the row hash sealed there makes the
chain verify), and a row stands in for it only when it hashes, cells alone, to exactly the signed
``after``. Its id is the hash of the portable part, the same on every device.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from aimos.crypto.canonical import canonical_json, json_loads
from aimos.crypto.commitments import sha256
from aimos.crypto.ed25519 import verify
from aimos.crypto.encoding import b64u_decode
from aimos.errors import AimosError
from aimos.vocabulary import MEMORY_REDACTION, REDACTION_SCHEMA, REDACTION_V1_SCHEMA, REDACTION_V2_SCHEMA

# what a redacted memory row holds as its value, and its save body as "value"
REDACTED_VALUE: Final = ""
# what each field a redaction removes holds afterwards in the memory row (in the save body: null)
REMOVED_CELLS: Final = {"key": None, "source": "", "value": REDACTED_VALUE}
# the fields a v2 record may remove (sorted): all three, or all but the key the master kept
REMOVED_FORMS: Final = (("key", "source", "value"), ("source", "value"))
V1_REMOVED: Final = ("value",)
REDACTED_TABLES: Final = ("memories", "memory_provenance")
RECORD_FIELDS: Final = frozenset(
    {
        "schema",
        "brain_id",
        "company_id",
        "memory_id",
        "live_content_hash",
        "save_provenance_id",
        "save_content_hash",
        "save_mutation_hash",
        "redacted_body_sha256",
        "rows",
        "reason",
        "redacted_at",
        "master_fingerprint",
    }
)
RECORD_FIELDS_BY_SCHEMA: Final = {
    REDACTION_V1_SCHEMA: RECORD_FIELDS,
    REDACTION_V2_SCHEMA: RECORD_FIELDS | {"removed"},
    REDACTION_SCHEMA: RECORD_FIELDS | {"removed", "contents"},
}
# what the master signs of a v3 record, and what travels to the other devices: all but the rows
PORTABLE_FIELDS: Final = RECORD_FIELDS_BY_SCHEMA[REDACTION_SCHEMA] - {"rows"}
RECORD_INVALID: Final = "redaction_record_invalid"
MAX_REASON_CHARS: Final = 500


@dataclass(frozen=True)
class RowSwap:
    """One row the redaction changed: its seal row hash before and after (and, for a v3 record,
    the signed hash of its cells after, without the rowid)."""

    table: str
    rowid: int
    before: bytes
    after: bytes
    content_after: bytes | None = None

    def stands_for(self, row_hash: bytes, content_hash: Callable[[], bytes]) -> bool:
        """Does a row hashing to ``row_hash`` (its cells alone: ``content_hash()``) stand for the
        row hashing to ``before``?"""
        return row_hash == self.after and (self.content_after is None or content_hash() == self.content_after)


def removed_fields(record: Mapping[str, Any]) -> tuple[str, ...]:
    """The memory's fields a parsed record removed (a v1 record: the value alone)."""
    removed = record.get("removed")
    return tuple(removed) if isinstance(removed, list) else V1_REMOVED


def redacted_body(body: Mapping[str, Any], removed: tuple[str, ...] = V1_REMOVED) -> dict[str, Any]:
    """The save body as stored after redaction: the value null, and each other removed field the
    body holds null too (a field the body does not hold stays absent)."""
    return {**body, "value": None, **{f: None for f in removed if f in body}}


def row_redacted(record: Mapping[str, Any], row: Mapping[str, Any]) -> bool:
    """Does the memory row hold exactly REMOVED_CELLS in every field the record removed?"""
    return all(row.get(f) == REMOVED_CELLS[f] for f in removed_fields(record))


def body_redacted(record: Mapping[str, Any], body: Mapping[str, Any]) -> bool:
    """Does the stored save body hold null in every field the record removed?"""
    return all(body.get(f) is None for f in removed_fields(record))


def signed_text(record_text: str, record: Mapping[str, Any]) -> str:
    """What the master signed of a parsed record: its text; of a v3 record, its portable part."""
    if record.get("schema") != REDACTION_SCHEMA:
        return record_text
    return canonical_json({k: v for k, v in record.items() if k != "rows"}).decode("utf-8")


def localized(portable: Mapping[str, Any], rows: list[dict[str, Any]]) -> str:
    """A v3 record as one device stores it: the portable part with this device's rows."""
    return canonical_json({**portable, "rows": rows}).decode("utf-8")


def record_message(record_text: str | bytes) -> bytes:
    """What the master signs: the domain, then the record's canonical JSON bytes."""
    data = record_text.encode("utf-8") if isinstance(record_text, str) else bytes(record_text)
    return MEMORY_REDACTION + data


def record_id(record_text: str | bytes) -> str:
    """The record's id: SHA-256 of its canonical bytes, hex."""
    data = record_text.encode("utf-8") if isinstance(record_text, str) else bytes(record_text)
    return sha256(data).hex()


def _hex64(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def _pairs(value: object, keys: frozenset[str]) -> list[dict[str, Any]] | None:
    """One {table, before, after, ...} a redacted table, in order; before and after hex hashes
    that differ."""
    if not isinstance(value, list) or len(value) != len(REDACTED_TABLES):
        return None
    for item, table in zip(value, REDACTED_TABLES, strict=True):
        if not isinstance(item, dict) or set(item) != keys or item["table"] != table:
            return None
        if not (_hex64(item["before"]) and _hex64(item["after"])) or item["before"] == item["after"]:
            return None
    return value


def _rows(value: object, contents: object = None) -> list[RowSwap] | None:
    items = _pairs(value, frozenset({"table", "rowid", "before", "after"}))
    if items is None:
        return None
    afters: list[bytes | None] = [None] * len(items)
    if contents is not None:
        signed = _pairs(contents, frozenset({"table", "before", "after"}))
        if signed is None:
            return None
        afters = [bytes.fromhex(c["after"]) for c in signed]
    swaps = []
    for item, content_after in zip(items, afters, strict=True):
        rowid = item["rowid"]
        if not isinstance(rowid, int) or isinstance(rowid, bool) or rowid < 1:
            return None
        before, after = bytes.fromhex(item["before"]), bytes.fromhex(item["after"])
        swaps.append(RowSwap(item["table"], rowid, before, after, content_after))
    return swaps


def parse_record(record_text: object, *, portable: bool = False) -> dict[str, Any] | None:
    """The record when it is canonical JSON of the right shape, else None (``portable``: the
    portable part of a v3 record, as it travels between devices)."""
    if not isinstance(record_text, str):
        return None
    try:
        record = json_loads(record_text)
        if canonical_json(record).decode("utf-8") != record_text:
            return None
    except (AimosError, ValueError, RecursionError):
        return None
    if not isinstance(record, dict):
        return None
    schema = record.get("schema")
    if not isinstance(schema, str):
        return None
    if portable:  # only a v3 record has a portable part
        fields = PORTABLE_FIELDS if schema == REDACTION_SCHEMA else None
    else:
        fields = RECORD_FIELDS_BY_SCHEMA.get(schema)
    if frozenset(record) != fields:
        return None
    if "removed" in record and (
        not isinstance(record["removed"], list) or tuple(record["removed"]) not in REMOVED_FORMS
    ):
        return None
    texts = ("brain_id", "company_id", "memory_id", "save_provenance_id", "reason")
    hashes = ("live_content_hash", "save_content_hash", "save_mutation_hash", "redacted_body_sha256")
    if not all(isinstance(record[f], str) and record[f] for f in texts):
        return None
    if len(record["reason"]) > MAX_REASON_CHARS or not all(_hex64(record[f]) for f in hashes):
        return None
    at = record["redacted_at"]
    if not isinstance(at, int) or isinstance(at, bool) or at < 0 or not _hex64(record["master_fingerprint"]):
        return None
    if "contents" in record and _pairs(record["contents"], frozenset({"table", "before", "after"})) is None:
        return None
    if not portable and _rows(record["rows"], record.get("contents")) is None:
        return None
    return record


def row_swaps(record: Mapping[str, Any]) -> list[RowSwap]:
    """The rows a parsed record swaps (parse_record checked their shape)."""
    return _rows(record["rows"], record.get("contents")) or []


def check_record(
    record_text: object,
    signature_b64u: object,
    master_public_key: str,
    master_fingerprint: str,
    *,
    memory_id: object = None,
    company_id: object = None,
    created_at: object = None,
    redaction_id: object = None,
    portable: bool = False,
) -> tuple[str | None, dict[str, Any] | None]:
    """(None, record) when the stored record is well formed, signed by this master and binds the
    columns stored beside it (when given); else (RECORD_INVALID, None). ``portable``: the portable
    part of a v3 record, as another device sent it."""
    record = parse_record(record_text, portable=portable)
    if record is None or record["master_fingerprint"] != master_fingerprint:
        return RECORD_INVALID, None
    assert isinstance(record_text, str)
    signed = signed_text(record_text, record)
    bound = (
        (memory_id, record["memory_id"]),
        (company_id, record["company_id"]),
        (created_at, record["redacted_at"]),
        (redaction_id, record_id(signed)),
    )
    if any(given is not None and given != want for given, want in bound):
        return RECORD_INVALID, None
    try:
        signature = b64u_decode(str(signature_b64u))
        if not isinstance(signature_b64u, str) or not verify(
            master_public_key, record_message(signed), signature
        ):
            return RECORD_INVALID, None
    except AimosError:
        return RECORD_INVALID, None
    return None, record


def notice(record: Mapping[str, Any], iso: str) -> str:
    """What a person sees in place of the text (``iso``: the redaction time as the reader shows
    times)."""
    return f"redacted by the master at {iso}: {record['reason']}"
