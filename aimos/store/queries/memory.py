"""The signed save's SQL (aimos/memory/save.py): the twin a save may repeat, and the rows a save,
an occurrence and a retained weight baseline append. The save's hot path: each statement is one
constant text, so the connection's statement cache serves it."""

from __future__ import annotations

from typing import TypedDict

from aimos.store.connection import Connection, insert_sql, one


class MemoryTwin(TypedDict):
    """A memory already saved with the same content (the oldest twin)."""

    memory_id: str
    company_id: str
    live_content_hash: str
    save_mutation_hash: str


class OccurrenceRow(TypedDict):
    occurrence_id: str
    memory_id: str
    company_id: str
    event_type: str
    live_content_hash: str
    agent_id: str
    agent_valid_from: int
    request_body_hash: str
    request_nonce: str
    request_ts: int
    request_signature_b64u: str
    predecessor_commitment: str | None
    commitment: str
    signer_valid_from: int
    signature_b64u: str
    created_at: int


class SaveProvenanceRow(TypedDict):
    provenance_id: str
    memory_id: str
    company_id: str
    event_type: str
    body_json: str
    content_hash: str
    prev_mutation_hash: str | None
    mutation_hash: str
    nonce: str
    ts_signed: int
    signature_b64u: str
    signature_form: int
    signed_method: str
    signed_path: str
    signer_agent_id: str
    signer_valid_from: int
    cert_fingerprint: str
    identity_tier: str
    is_genesis: int
    backfilled: int
    binding_schema_version: int
    created_at: int


class MemoryCells(TypedDict):
    """The first columns of a memories row: what a memory says and who made it, when."""

    memory_id: str
    company_id: str
    key: str | None
    value: str
    scope: str
    memory_type: str
    clearance_level: int
    data_class: str
    source: str
    author_agent_id: str
    author_valid_from: int
    created_at: int


class MemoryRow(MemoryCells):
    """A memories row as the save writes it."""

    live_content_hash: str
    save_provenance_id: str
    save_mutation_hash: str
    quarantine: int
    retrieval_weight_milli: int
    epistemic_label: str


class WeightBaselineRow(TypedDict):
    """A weight_baselines row, every column."""

    memory_id: str
    company_id: str
    live_content_hash: str
    observed_weight_float4: str
    observed_weight_milli: int
    observed_at: int
    attestation_reason: str
    signer_valid_from: int
    certificate_fingerprint: str
    event_id: str
    event_mutation_hash: str
    baseline_hash: str
    signature_b64u: str


_TWIN = (
    "SELECT memory_id, company_id, live_content_hash, save_mutation_hash FROM memories"
    " WHERE company_id = ? AND live_content_hash = ? ORDER BY rowid LIMIT 1"
)
_LAST_COMMITMENT = (
    "SELECT commitment FROM memory_occurrences WHERE memory_id = ?"
    " ORDER BY created_at DESC, rowid DESC LIMIT 1"
)
_INSERT_OCCURRENCE = insert_sql("memory_occurrences", OccurrenceRow)
_INSERT_PROVENANCE = insert_sql("memory_provenance", SaveProvenanceRow)
_INSERT_MEMORY = insert_sql("memories", MemoryRow)
_INSERT_BASELINE = insert_sql("weight_baselines", WeightBaselineRow)
_INSERT_SUPERSESSION = (
    "INSERT INTO memory_supersessions (old_memory_id, new_memory_id, company_id, binding_mutation_hash,"
    " created_at) VALUES (?,?,?,?,?)"
)


def oldest_twin(conn: Connection, company_id: str, live_content_hash: str) -> MemoryTwin | None:
    """The company's oldest memory with this live content hash, or None."""
    return one(conn, _TWIN, (company_id, live_content_hash), row=MemoryTwin)


def last_occurrence_commitment(conn: Connection, memory_id: str) -> str | None:
    """The commitment of the memory's newest occurrence (its occurrence chain's head), or None."""
    found = one(conn, _LAST_COMMITMENT, (memory_id,))
    return None if found is None else str(found["commitment"])


def insert_occurrence(conn: Connection, row: OccurrenceRow) -> None:
    conn.execute(_INSERT_OCCURRENCE, row)


def insert_save_provenance(conn: Connection, row: SaveProvenanceRow) -> None:
    conn.execute(_INSERT_PROVENANCE, row)


def insert_memory(conn: Connection, row: MemoryRow) -> None:
    conn.execute(_INSERT_MEMORY, row)


def insert_supersession(
    conn: Connection,
    old_memory_id: str,
    new_memory_id: str,
    company_id: str,
    binding_mutation_hash: str,
    now: int,
) -> None:
    conn.execute(_INSERT_SUPERSESSION, (old_memory_id, new_memory_id, company_id, binding_mutation_hash, now))


def insert_weight_baseline(conn: Connection, row: WeightBaselineRow) -> None:
    conn.execute(_INSERT_BASELINE, row)
