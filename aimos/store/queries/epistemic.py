"""The classification chain's SQL (aimos/epistemic/chain.py): a memory's classifications, the
chain's rows and the leading-question fingerprint clusters. The agreement detector's is in
epistemic_detection.py."""

from __future__ import annotations

from typing import TypedDict

from aimos.store.connection import Connection, one, rows
from aimos.vocabulary import BASIS_CLASSIFIER, BASIS_EXPLICIT, INHERITED_FROM

# where a signed classification event says it carries a judgment, and where a judgment's evidence
# holds the master's signature
CLAIM_PATH = f"$.metadata.signals.{INHERITED_FROM}"
MASTER_SIGNATURE_PATH = "$.metadata.evidence.master_signature_b64u"


class ClusterMember(TypedDict):
    """A member of a leading-question cluster, as the classifier reads it."""

    memory_id: str
    company_id: str
    key: str | None
    value: str
    source: str
    memory_type: str
    live_content_hash: str
    epistemic_label: str


class ClassifiedMemory(ClusterMember):
    """What the chain reads of a memory it labels."""

    clearance_level: int
    data_class: str


class ChainHead(TypedDict):
    """A memory's classification; its basis as the signed event says (not the row)."""

    classification_hash: str
    label: str
    confidence_milli: int
    basis: str | None


class ClassificationRow(TypedDict):
    """A memory_classifications row, every column."""

    classification_id: str
    memory_id: str
    company_id: str
    label: str
    confidence_milli: int
    basis: str
    live_content_hash: str
    authority_event_id: str
    authority_mutation_hash: str
    prev_classification_hash: str | None
    classification_hash: str
    created_at: int


class Fingerprint(TypedDict):
    company_id: str
    fingerprint: str


def classified_memory(conn: Connection, memory_id: str) -> ClassifiedMemory | None:
    return one(conn, _CLASSIFIED, (memory_id,), row=ClassifiedMemory)


def newest_classification(conn: Connection, memory_id: str) -> ChainHead | None:
    """The memory's newest classification (its chain's head), or None."""
    return one(conn, _NEWEST, (memory_id,), row=ChainHead)


_CLASSIFIED = (
    "SELECT memory_id, company_id, key, value, source, memory_type, live_content_hash, epistemic_label,"
    " clearance_level, data_class FROM memories WHERE memory_id = ?"
)
_NEWEST = (
    "SELECT c.classification_hash, c.label, c.confidence_milli,"
    " json_extract(e.signed_body, '$.metadata.basis') AS basis"
    " FROM memory_classifications c JOIN events e ON e.event_id = c.authority_event_id"
    " WHERE c.memory_id = ? ORDER BY c.rowid DESC LIMIT 1"
)


def carried_label(conn: Connection, memory_id: str) -> str | None:
    """The label of the memory's newest classification that carries a judgment of the version it
    corrects, unless a judgment with the master's signature came after it; else None."""
    found = one(
        conn,
        "SELECT c.label FROM memory_classifications c JOIN events e ON e.event_id = c.authority_event_id"
        " WHERE c.memory_id = ? AND c.basis = ? AND json_extract(e.signed_body, ?) IS NOT NULL"
        " AND NOT EXISTS (SELECT 1 FROM memory_classifications j JOIN events je"
        " ON je.event_id = j.authority_event_id WHERE j.memory_id = c.memory_id AND j.rowid > c.rowid"
        " AND j.basis = ? AND json_extract(je.signed_body, ?) IS NOT NULL)"
        " ORDER BY c.rowid DESC LIMIT 1",
        (memory_id, BASIS_CLASSIFIER, CLAIM_PATH, BASIS_EXPLICIT, MASTER_SIGNATURE_PATH),
    )
    return str(found["label"]) if found else None


def insert_classification(conn: Connection, row: ClassificationRow) -> None:
    conn.execute(
        "INSERT INTO memory_classifications (classification_id, memory_id, company_id, label,"
        " confidence_milli, basis, live_content_hash, authority_event_id, authority_mutation_hash,"
        " prev_classification_hash, classification_hash, created_at) VALUES (:classification_id,"
        " :memory_id, :company_id, :label, :confidence_milli, :basis, :live_content_hash,"
        " :authority_event_id, :authority_mutation_hash, :prev_classification_hash,"
        " :classification_hash, :created_at)",
        row,
    )


def set_label(conn: Connection, memory_id: str, label: str) -> None:
    """The memory row's live-label projection."""
    conn.execute("UPDATE memories SET epistemic_label = ? WHERE memory_id = ?", (label, memory_id))


def insert_fingerprint(conn: Connection, memory_id: str, company_id: str, fingerprint: str, now: int) -> None:
    conn.execute(
        "INSERT INTO epistemic_fingerprints (memory_id, company_id, fingerprint, created_at)"
        " VALUES (?,?,?,?)",
        (memory_id, company_id, fingerprint, now),
    )


def fingerprint_of(conn: Connection, memory_id: str) -> Fingerprint | None:
    return one(
        conn,
        "SELECT company_id, fingerprint FROM epistemic_fingerprints WHERE memory_id = ?",
        (memory_id,),
        row=Fingerprint,
    )


def cluster_members(conn: Connection, company_id: str, fingerprint: str) -> list[ClusterMember]:
    """The company's memories with this leading-question fingerprint, in the order they joined."""
    return rows(
        conn,
        "SELECT m.memory_id, m.company_id, m.key, m.value, m.source, m.memory_type, m.live_content_hash,"
        " m.epistemic_label FROM epistemic_fingerprints f JOIN memories m ON m.memory_id = f.memory_id"
        " WHERE f.company_id = ? AND f.fingerprint = ? ORDER BY f.rowid",
        (company_id, fingerprint),
        row=ClusterMember,
    )
