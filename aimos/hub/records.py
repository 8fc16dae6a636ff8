"""The rows a device exchanges through a hub, and the record each travels in (pure but for reads
and writes of the brain's own rows).

What travels is every retained row a person's brain holds as evidence: the identities (master,
epochs, grants, revocations, the home), the request nonces (a request used on one device is a
replay on every other), the signed saves, events, labels, occurrences, outcomes and weight
transitions, and the outcomes' requests a device forwards to the home. What stays on its device:
the seal chain (each device seals what it holds), the brain's metadata, its restores, the search
and meaning indexes, the detector's queue, the redaction records (kept outside the brain) and the
hub's own pull log.

A device pushes its rows in the order it wrote them: seal by seal (each seal is one write
transaction), and inside a seal in the order of ``RANKS``, which every writer's transaction
follows (a memory after its save provenance and its event, a label after its memory, a weight
after its outcome). A pulled row is inserted with the same columns through the brain's guards;
a memory arrives as it was saved (its weight and label are projections of the chains that
follow it, moved again as their rows arrive).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from aimos.crypto import commitments
from aimos.errors import IntegrityError, VerificationError
from aimos.hub.heads import HEADS, HEADS_KEY
from aimos.store.connection import Connection, EngineError
from aimos.store.queries import hub as queries
from aimos.store.queries.devices import epoch_device, revocation_held
from aimos.store.seals import LIVE_PROJECTIONS
from aimos.vocabulary import HUB_RECORD_SCHEMA, HUB_RECORD_SIGNATURE, UNVERIFIED

# (table, its primary key columns), in the order a transaction's rows are applied
SYNCED: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("master_identity", ("fingerprint",)),
    ("identity_epochs", ("agent_id", "valid_from")),
    ("recall_grants", ("grant_id",)),
    ("agent_revocations", ("revocation_id",)),
    ("hub_homes", ("home_id",)),
    ("hub_handovers", ("home_id",)),
    ("hub_cuts", ("cut_id",)),
    ("request_nonces", ("agent_id", "nonce")),
    ("memory_provenance", ("provenance_id",)),
    ("events", ("event_id",)),
    ("memories", ("memory_id",)),
    ("epistemic_fingerprints", ("memory_id",)),
    ("memory_classifications", ("classification_id",)),
    ("memory_supersessions", ("old_memory_id",)),
    ("memory_occurrences", ("occurrence_id",)),
    ("weight_baselines", ("memory_id",)),
    ("recall_receipts", ("receipt_id",)),
    ("outcomes", ("outcome_id",)),
    ("weight_projections", ("projection_id",)),
    ("hub_requests", ("request_id",)),
)
# ...and the records no table holds: a device's heads (aimos/hub/heads.py), which sync reads itself
KEYS: dict[str, tuple[str, ...]] = {**dict(SYNCED), HEADS: HEADS_KEY}
RANKS: dict[str, int] = {table: i for i, (table, _) in enumerate(SYNCED)}
# a weight transition's provenance node follows its outcome (a save's precedes its memory)
_LATE_PROVENANCE = RANKS["outcomes"]
# a memory arrives as saved: its projections start where every new memory starts
_INITIAL_WEIGHT = {0: 1000, 1: 100}  # by quarantine (migration 1's memories_verify_insert)


@dataclass(frozen=True)
class Record:
    """One row on its way: the device that wrote it, its number in that device's records, the
    link of the record before it (box.record_link; the first names box.GENESIS_LINK)."""

    device: str
    n: int
    prev: str
    table: str
    row: dict[str, Any]
    signer: int  # the valid_from of the pushing device's housekeeper epoch, which signed it
    seal: int = 0  # the seal of the pushing device that sealed the row (its write transaction)

    def key_text(self) -> str:
        return key_text(self.table, self.row)


def key_text(table: str, row: dict[str, Any]) -> str:
    return json.dumps([row[c] for c in KEYS[table]], separators=(",", ":"))


def _cell(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"b64": base64.b64encode(value).decode("ascii")}
    return value


def _uncell(value: Any) -> Any:
    if isinstance(value, dict):
        return base64.b64decode(value["b64"], validate=True)
    return value


def encode(record: Record) -> bytes:
    return json.dumps(
        {
            "schema": HUB_RECORD_SCHEMA,
            "device": record.device,
            "n": record.n,
            "prev": record.prev,
            "seal": record.seal,
            "signer": record.signer,
            "table": record.table,
            "row": {c: _cell(v) for c, v in record.row.items()},
        },
        separators=(",", ":"),
        sort_keys=True,
        ensure_ascii=False,
    ).encode("utf-8")


def signed_message(plaintext: bytes) -> bytes:
    """What the pushing device's housekeeper signs of a record: the domain, then its plaintext."""
    return HUB_RECORD_SIGNATURE + plaintext


def decode(plaintext: bytes, name: str) -> Record:
    """A record's plaintext, checked for shape; anything else is refused naming the record."""

    def bad(why: str) -> VerificationError:
        return VerificationError(
            f"hub record {name} {why}",
            "Nothing from this pull was applied. The record was not written by this aimos.",
            reason="hub_record_malformed",
        )

    try:
        doc = json.loads(plaintext)
    except (ValueError, RecursionError):
        raise bad("is not JSON") from None
    if not isinstance(doc, dict) or doc.get("schema") != HUB_RECORD_SCHEMA:
        raise bad("is not an aimos hub record")
    table, row = doc.get("table"), doc.get("row")
    if table not in KEYS:
        raise bad(f"names a table records never carry ({table!r})")
    if not isinstance(row, dict) or any(c not in row for c in KEYS[table]):
        raise bad("has no row, or a row without its key")
    n, device, prev, signer = doc.get("n"), doc.get("device"), doc.get("prev"), doc.get("signer")
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise bad("has no record number")
    if not isinstance(signer, int) or isinstance(signer, bool):
        raise bad("names no housekeeper that signed it")
    seal = doc.get("seal")
    if not isinstance(seal, int) or isinstance(seal, bool) or seal < 0:
        raise bad("names no seal")
    if not isinstance(device, str) or not device or not isinstance(prev, str) or len(prev) != 64:
        raise bad("names no device or no predecessor")
    try:
        cells = {str(c): _uncell(v) for c, v in row.items()}
    except (KeyError, ValueError, TypeError):
        raise bad("holds a cell that does not decode") from None
    for value in cells.values():
        if not (value is None or isinstance(value, str | int | bytes)) or isinstance(value, bool):
            raise bad("holds a cell of no SQLite type")
    return Record(device, n, prev, str(table), cells, signer, seal)


# --- reading what a device wrote ---------------------------------------------------------------
def _as_saved(row: dict[str, Any]) -> dict[str, Any]:
    """A memory row as its save wrote it: the projections at their start."""
    return {
        **row,
        "retrieval_weight_milli": _INITIAL_WEIGHT[row["quarantine"]],
        "epistemic_label": UNVERIFIED,
    }


def _rank(table: str, row: dict[str, Any]) -> int:
    if table == "memory_provenance" and row.get("event_type") != "SAVE":
        return _LATE_PROVENANCE
    return RANKS[table]


def _sealed_ranges(conn: Connection, after_seal: int) -> Iterator[tuple[int, str, int, int]]:
    """(seal, synced table, first rowid after, last rowid) of every seal after ``after_seal``, in
    seal order: the rows each one's transaction added (read off the seals' own records)."""
    tops: dict[str, int] = {}
    for seq, changes in queries.seal_changes(conn):
        for table, (_count, top, _chain) in commitments.decode_seal_changes(changes).items():
            start = tops.get(table, 0)
            tops[table] = top
            if table in KEYS and seq > after_seal:
                yield int(seq), table, start, top


def count_after(conn: Connection, after_seal: int) -> int:
    """How many synced rows the seals after ``after_seal`` added (no row is read)."""
    return sum(top - start for _seq, _table, start, top in _sealed_ranges(conn, after_seal))


def sealed_by(conn: Connection, table: str, rowid: int, after_seal: int) -> int | None:
    """The seal after ``after_seal`` that sealed row ``rowid`` of a synced ``table`` (None: one
    before it)."""
    for seq, name, start, top in _sealed_ranges(conn, after_seal):
        if name == table and start < rowid <= top:
            return seq
    return None


def written_after(
    conn: Connection, after_seal: int, leave_out: frozenset[int] = frozenset()
) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """Every synced row the seals after ``after_seal`` sealed (but those of the seals in
    ``leave_out``), as (seal, table, row) in the order they are applied."""
    columns: dict[str, list[str]] = {}
    by_seal: dict[int, list[tuple[str, int, int]]] = {}
    for seq, table, start, top in _sealed_ranges(conn, after_seal):
        if seq not in leave_out:
            by_seal.setdefault(seq, []).append((table, start, top))
    for seq, ranges in by_seal.items():
        seal_rows: list[tuple[int, int, str, dict[str, Any]]] = []
        for table, start, top in ranges:
            names = columns.setdefault(table, queries.table_columns(conn, table))
            for found in queries.rows_between(conn, table, start, top):
                row = dict(zip(names, found[1:], strict=True))
                if table == "memories":
                    row = _as_saved(row)
                seal_rows.append((_rank(table, row), int(found[0]), table, row))
        seal_rows.sort(key=lambda r: (r[0], r[1]))
        for _rank_of, _rowid, table, row in seal_rows:
            yield int(seq), table, row


def held_row(conn: Connection, table: str, key: list[Any]) -> dict[str, Any] | None:
    """The row this brain holds in ``table`` under ``key`` (its key columns' values), None when
    it holds none."""
    return queries.row_by_key(conn, table, KEYS[table], key)


def pushed_row(conn: Connection, table: str, key: str) -> dict[str, Any] | None:
    """A row as a push sends it (written_after's form), by its table and key_text."""
    row = held_row(conn, table, json.loads(key))
    return _as_saved(row) if row is not None and table == "memories" else row


# --- applying what another device wrote ----------------------------------------------------------
def _comparable(table: str, row: dict[str, Any]) -> dict[str, Any]:
    skip = LIVE_PROJECTIONS.get(table, frozenset())
    return {c: v for c, v in row.items() if c not in skip}


def apply(conn: Connection, record: Record, name: str) -> bool:
    """Insert the record's row through the brain's guards (inside the caller's write transaction);
    False when this brain holds it already, unchanged. A row that differs from the one held under
    its key, or that a guard refuses, is refused naming the record."""
    table, row = record.table, record.row
    held = held_row(conn, table, [row[c] for c in KEYS[table]])
    if held is not None:
        if table == "hub_handovers":
            return False  # one home record handed over twice (the old home, the master): in force once
        if _comparable(table, held) != _comparable(table, row):
            raise IntegrityError(
                f"hub record {name} ({table}) differs from the row this brain holds under its key",
                "Nothing from this pull was applied. A row never changes: one of the two was altered.",
                reason="hub_row_conflict",
            )
        return False
    if table == "agent_revocations" and revocation_held(conn, row["agent_id"], row["agent_valid_from"]):
        return False  # two devices revoked one epoch while apart: the one held first stands
    if table == "memories":
        row = _as_saved(row)
    names = queries.table_columns(conn, table)
    if sorted(names) != sorted(row):
        raise IntegrityError(
            f"hub record {name} ({table}) has other columns than this brain's table",
            "Nothing from this pull was applied. Run the same aimos version on every device.",
            reason="hub_row_columns",
        )
    try:
        queries.insert_row(conn, table, names, [row[c] for c in names])
        if table == "memory_classifications":
            queries.project_label(conn, row["memory_id"], row["label"])
        elif table == "weight_projections":
            queries.project_weight(conn, row["memory_id"], row["new_weight_milli"])
    except EngineError as exc:
        raise IntegrityError(
            f"hub record {name} ({table}) is refused by this brain: {_guard_words(exc)}",
            "Nothing from this pull was applied. The row does not verify as if it were written here.",
            reason="hub_row_refused",
        ) from None
    return True


def _guard_words(exc: EngineError) -> str:
    text = str(exc)
    marker = "aimos: "
    return text[text.index(marker) + len(marker) :] if marker in text else type(exc).__name__


# --- who may have pushed a row ---------------------------------------------------------------------
# tables the master signs: any device of the brain may carry them
_ANY_DEVICE = frozenset({"master_identity", "recall_grants", "agent_revocations", "hub_homes", "hub_cuts"})
# appends to a memory's shared chains after its save: the home's alone
_HOME_ONLY = frozenset({"memory_occurrences", "memory_supersessions", "outcomes", "weight_projections"})
# written by the saving device inside its save's transaction (a chain's start), else by the home
_AT_SAVE = {
    "memory_classifications": "created_at",
    "epistemic_fingerprints": "created_at",
    "weight_baselines": "observed_at",
}


def _at_its_save(conn: Connection, row: dict[str, Any], device: str, when: str) -> bool:
    memory = queries.memory_author(conn, row.get("memory_id"))
    return (
        memory is not None
        and memory["created_at"] == row.get(when)
        and epoch_device(conn, memory["author_agent_id"], memory["author_valid_from"]) == device
    )


def check_pushed_by(conn: Connection, record: Record, home_device: str | None, name: str) -> None:
    """A row comes from the device that wrote it: its own signed rows (epochs, events, receipts,
    saves, nonces, forwarded requests) from the device of their signer's epoch; what the home
    writes for others (a forwarded save, outcome or judgment) from the home; every append to a
    memory's shared chains after its save from the home alone (``home_device``: the home as this
    brain stands, None before any home was named: a brain's history from before it met a hub). A
    row pushed by another device is refused naming the record."""
    table, row, device = record.table, record.row, record.device
    home = home_device is None or device == home_device
    if table in _ANY_DEVICE:
        return
    if table == "hub_handovers":
        # the master's (a forced move), or the home in force stopping: from it, for itself
        ok = row.get("master_fingerprint") is not None or (row.get("from_device") == device and home)
    elif table in ("identity_epochs", "hub_requests"):
        ok = row.get("device_fp") == device
    elif table == "events":
        ok = epoch_device(conn, row.get("signer_agent_id"), row.get("signer_valid_from")) == device
    elif table == "recall_receipts":
        ok = epoch_device(conn, row.get("agent_id"), row.get("agent_valid_from")) == device
    elif table == "request_nonces":
        ok = home or epoch_device(conn, row.get("agent_id"), row.get("valid_from")) == device
    elif table == "memory_provenance":
        signer = epoch_device(conn, row.get("signer_agent_id"), row.get("signer_valid_from"))
        ok = home or (row.get("event_type") == "SAVE" and signer == device)
    elif table == "memories":
        ok = home or epoch_device(conn, row.get("author_agent_id"), row.get("author_valid_from")) == device
    elif table in _AT_SAVE:
        ok = home or _at_its_save(conn, row, device, _AT_SAVE[table])
    elif table in _HOME_ONLY:
        ok = home
    else:
        ok = False  # a table this check does not know: refused until it does
    if not ok:
        raise IntegrityError(
            f"hub record {name} ({table}) was pushed by a device that did not write it, or that may not "
            "(only the home appends to a memory's chains after its save)",
            "Nothing from this pull was applied. A device of this brain is misbehaving: revoke it "
            "(`aimos hub revoke DEVICE`) from another device.",
            reason="hub_row_misattributed",
        )
