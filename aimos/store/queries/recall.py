"""The SQL of recall's pipeline and of its disclosure check (aimos/recall/pipeline.py,
aimos/recall/disclosure.py): the memories a recall loads, and the signed records a batch of
them is verified against, one query per table. The candidates' SQL is in recall_candidates.py,
the receipts' in recall_receipts.py."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias, TypedDict

from aimos.store.connection import Connection, one, rows
from aimos.store.seals import TableShape
from aimos.vocabulary import MEMORY_SAVED_OPERATION, sql_word

_SAVED = sql_word(MEMORY_SAVED_OPERATION)

# A row read whole (SELECT *): every column of its table, by name (recall_receipts.py reads more).
MemoryRow: TypeAlias = dict[str, Any]
ProvenanceRow: TypeAlias = dict[str, Any]
EventRow: TypeAlias = dict[str, Any]
RedactionRow: TypeAlias = dict[str, Any]
ReceiptRow: TypeAlias = dict[str, Any]
GrantRow: TypeAlias = dict[str, Any]


class SignerEpoch(TypedDict):
    """An identity epoch as the disclosure check reads it: its key, certificate, span and when it
    was revoked (None when it was not)."""

    agent_id: str
    valid_from: int
    valid_until: int
    public_key_b64u: str
    certificate: str
    cert_fingerprint: str
    revoked_at: int | None


def _in(values: Sequence[object]) -> str:
    return ", ".join("?" * len(values))


# --- the pipeline ------------------------------------------------------------------------------------
def memories_by_rowid(conn: Connection, rowids: Sequence[int]) -> dict[int, MemoryRow]:
    """rowid -> the memory's row (every column, and its rowid as ``_rowid``), for those of
    ``rowids`` that exist."""
    cursor = conn.execute(f"SELECT rowid AS _rowid, * FROM memories WHERE rowid IN ({_in(rowids)})", rowids)
    names = [d[0] for d in cursor.getdescription()]
    return {r[0]: dict(zip(names, r, strict=True)) for r in cursor}


def memory_row(conn: Connection, memory_id: str) -> MemoryRow | None:
    """The memory's row (every column), or None: the one read of a whole memories row (recall,
    its receipts' check, an outcome, the mutation suite)."""
    return one(conn, "SELECT * FROM memories WHERE memory_id = ?", (memory_id,))


# --- disclosure: a batch's signed records --------------------------------------------------------------
def provenance_by_mutation(conn: Connection, hashes: Sequence[str]) -> list[ProvenanceRow]:
    """The memory_provenance rows whose mutation hash is one of ``hashes``."""
    return rows(conn, f"SELECT * FROM memory_provenance WHERE mutation_hash IN ({_in(hashes)})", hashes)


def signer_epochs(conn: Connection) -> list[SignerEpoch]:
    """Every identity epoch with when it was revoked, unordered (the check looks each up by its
    agent and start; an epoch has one revocation at most)."""
    return rows(
        conn,
        "SELECT e.agent_id, e.valid_from, e.valid_until, e.public_key_b64u, e.certificate,"
        " e.cert_fingerprint, r.revoked_at FROM identity_epochs e LEFT JOIN agent_revocations r"
        " ON r.agent_id = e.agent_id AND r.agent_valid_from = e.valid_from",
        row=SignerEpoch,
    )


def saved_events(conn: Connection, memory_ids: Sequence[str]) -> list[EventRow]:
    """The events rows (as stored: read_event reads their bodies) of the memories' saves."""
    return rows(
        conn,
        f"SELECT * FROM events WHERE subject_memory_id IN ({_in(memory_ids)})"
        f" AND +operation = {_SAVED}",  # the subject index, not the operation one
        memory_ids,
    )


def supersession_links(conn: Connection, memory_ids: Sequence[str]) -> dict[str, str]:
    """old version -> new version, of the supersessions whose old version is one of ``memory_ids``."""
    found = rows(
        conn,
        "SELECT old_memory_id, new_memory_id FROM memory_supersessions"
        f" WHERE old_memory_id IN ({_in(memory_ids)})",
        memory_ids,
    )
    return {r["old_memory_id"]: r["new_memory_id"] for r in found}


def signed_successors(conn: Connection, memory_ids: Sequence[str]) -> dict[str, str]:
    """superseded version -> the memory whose signed save (its provenance body) supersedes it, for
    those of ``memory_ids``."""
    found = rows(
        conn,
        "SELECT json_extract(body_json, '$.supersedes') AS old_id, memory_id FROM memory_provenance"
        f" WHERE json_extract(body_json, '$.supersedes') IN ({_in(memory_ids)})"
        " AND json_extract(body_json, '$.supersedes') IS NOT NULL AND event_type = 'SAVE'",
        memory_ids,
    )
    return {r["old_id"]: r["memory_id"] for r in found}


def redactions_of(conn: Connection, memory_ids: Sequence[str]) -> list[RedactionRow]:
    """The memory_redactions rows of ``memory_ids``."""
    return rows(conn, f"SELECT * FROM memory_redactions WHERE memory_id IN ({_in(memory_ids)})", memory_ids)


def sealed_cells(conn: Connection, shape: TableShape, memory_id: str) -> list[tuple[Any, ...]]:
    """The memory's row as the seals hash it (``shape``: the memories table's, store.seals)."""
    return conn.execute(shape.select() + " WHERE memory_id = ?", (memory_id,)).fetchall()
