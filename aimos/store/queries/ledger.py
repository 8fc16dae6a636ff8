"""The SQL of aimos/ledger: the head of a signer's event chain, an event's insert, and the SQL that
reads a stored event or provenance body as signed (which other packages' queries embed)."""

from __future__ import annotations

from typing import Any, TypedDict

from aimos.store.connection import Connection, insert, one
from aimos.store.seals import sealed_tables


class ChainHead(TypedDict):
    ledger_seq: int
    mutation_hash: str


def chain_head_row(conn: Connection, agent_id: str, valid_from: int) -> ChainHead | None:
    """The newest event of the signer epoch's chain (its ledger_seq and mutation hash); None when
    the chain is empty."""
    return one(
        conn,
        "SELECT ledger_seq, mutation_hash FROM events WHERE signer_agent_id = ? AND signer_valid_from = ?"
        " ORDER BY ledger_seq DESC LIMIT 1",
        (agent_id, valid_from),
        row=ChainHead,
    )


def insert_event(conn: Connection, stored: dict[str, Any]) -> None:
    """One events row as stored (column -> value; its body deflated where its operation's is)."""
    insert(conn, "events", stored)


def body_sql(conn: Connection, alias: str = "") -> str:
    """SQL for the signed body of an events row (``alias`` the table's name in the query, if any):
    what every query that reads or searches event bodies uses, since a recall's is stored deflated
    (migration 14), a save's and an outcome's against a dictionary (migrations 16 and 17); on a
    brain not yet migrated (a reader never migrates) every body is its text.
    NULL for a row whose stored form reads as nothing."""
    return _stored_sql(
        conn,
        "events",
        "signed_body",
        alias,
        "aimos_event_body({p}operation, {p}signed_body, {p}signed_body_deflated)",
    )


def provenance_body_sql(conn: Connection, alias: str = "") -> str:
    """SQL for the signed body of a memory_provenance row, ``body_sql``'s counterpart: a REWEIGHT
    node's is stored compactly since migration 18 (store/cells.py provenance_body)."""
    return _stored_sql(
        conn,
        "memory_provenance",
        "body_json",
        alias,
        "aimos_provenance_body({p}event_type, {p}memory_id, {p}body_json, {p}body_deflated)",
    )


def _stored_sql(conn: Connection, table: str, column: str, alias: str, reading: str) -> str:
    p = f"{alias}." if alias else ""
    if column not in dict(sealed_tables(conn)[table].stored):
        return f"{p}{column}"
    return reading.format(p=p)
