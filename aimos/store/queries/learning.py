"""The SQL of aimos/learning: outcomes, the weight chain the writer extends (REWEIGHT provenance,
weight projections, the live weight) and what a V2 mutation export reads back.

A statement over event or provenance bodies takes the ledger's SQL for the stored body
(``body``: aimos.ledger.events.body_sql) as a parameter string."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict, cast

from aimos.store.connection import Connection, one, rows
from aimos.vocabulary import (
    REWEIGHT_EVENT,
    WEIGHT_ADJUSTED_OPERATION,
    WEIGHT_UNCHANGED_OPERATION,
    sql_word,
    sql_words,
)


class OutcomeRow(TypedDict):
    """An outcomes row, every column."""

    outcome_id: str
    company_id: str
    memory_id: str
    receipt_id: str
    target_scope: str
    reward_sign: int
    live_content_hash: str
    agent_id: str
    agent_valid_from: int
    request_body: str
    request_hash: str
    request_nonce: str
    request_ts: int
    request_signature_b64u: str
    terminal: str
    created_at: int


class WeightProjectionRow(TypedDict):
    """A weight_projections row, every column."""

    projection_id: str
    company_id: str
    memory_id: str
    outcome_id: str
    old_weight_milli: int
    new_weight_milli: int
    provenance_mutation_hash: str
    prev_projection_hash: str | None
    projection_hash: str
    transition_hash: str
    transition_signature_b64u: str
    signer_valid_from: int
    created_at: int


class ReceiptEvidence(TypedDict):
    """What an outcome reads of the recall receipt it rests on."""

    receipt_id: str
    evidence: str
    agent_id: str
    event_id: str


class PrincipalOutcome(TypedDict):
    """A principal outcome with what the verifiers replay: who, about which disclosure, the
    reward, what the writer did; ``valence_rule`` is added by the reader (its terminal event's)."""

    memory_id: str
    outcome_id: str
    agent_id: str
    receipt_id: str
    reward_sign: int
    terminal: str
    old_weight_milli: int | None
    new_weight_milli: int | None
    baseline: int | None
    valence_rule: NotRequired[str | None]


class ValenceRule(TypedDict):
    outcome_id: str | None
    valence_rule: str | None


# --- the writer ----------------------------------------------------------------------------------
def latest_disclosing_receipt(conn: Connection, memory_id: str, agent_id: str) -> str | None:
    """The id of the newest recall receipt that disclosed ``memory_id`` to ``agent_id``, or None."""
    row = one(
        conn,
        "SELECT r.receipt_id FROM recall_receipts r, json_each(r.evidence) e"
        " WHERE json_extract(e.value, '$.memory_id') = ? AND r.agent_id = ?"
        " ORDER BY r.rowid DESC LIMIT 1",
        (memory_id, agent_id),
    )
    return None if row is None else cast(str, row["receipt_id"])


# every principal outcome with what the verifiers replay: who, about which disclosure, the reward,
# what the writer did (and the weight rule its housekeeper-signed terminal event records, below)
PRINCIPAL_OUTCOMES_SQL = """
SELECT o.memory_id, o.outcome_id, o.agent_id, o.receipt_id, o.reward_sign, o.terminal,
       w.old_weight_milli, w.new_weight_milli, b.observed_weight_milli AS baseline
FROM outcomes o
LEFT JOIN weight_projections w ON w.outcome_id = o.outcome_id
LEFT JOIN weight_baselines b ON b.memory_id = o.memory_id
WHERE o.target_scope = 'principal_state' {where}
ORDER BY o.rowid
"""
# (a terminal event's body read through ``body``: stored against a dictionary since migration 17)
VALENCE_RULES_SQL = f"""
SELECT json_extract(body, '$.metadata.outcome_id') AS outcome_id,
       json_extract(body, '$.metadata.valence_rule') AS valence_rule
FROM (SELECT {{body}} AS body FROM events
      WHERE operation IN ({sql_words((WEIGHT_ADJUSTED_OPERATION, WEIGHT_UNCHANGED_OPERATION))}) {{where}})
"""


def principal_outcome_rows(conn: Connection, memory_id: str | None = None) -> list[PrincipalOutcome]:
    """Every retained principal outcome (of one memory, or all), in write order."""
    params: tuple[str, ...] = (memory_id,) if memory_id else ()
    where = "AND o.memory_id = ?" if memory_id else ""
    return rows(conn, PRINCIPAL_OUTCOMES_SQL.format(where=where), params, row=PrincipalOutcome)


def valence_rules(conn: Connection, body: str, memory_id: str | None = None) -> list[ValenceRule]:
    """The weight rule each terminal event (of one memory's, or all) records, by outcome id."""
    params: tuple[str, ...] = (memory_id,) if memory_id else ()
    by_memory = "AND subject_memory_id = ?" if memory_id else ""
    return rows(conn, VALENCE_RULES_SQL.format(body=body, where=by_memory), params, row=ValenceRule)


def principal_outcomes_mark(conn: Connection, memory_id: str) -> tuple[Any, ...]:
    """(how many principal outcomes the memory has, the id of the newest or None)."""
    found = conn.execute(
        "SELECT COUNT(*), (SELECT outcome_id FROM outcomes WHERE memory_id = ?1"
        " AND target_scope = 'principal_state' ORDER BY rowid DESC LIMIT 1)"
        " FROM outcomes WHERE memory_id = ?1 AND target_scope = 'principal_state'",
        (memory_id,),
    ).fetchall()[0]
    return tuple(found)


def receipt_evidence(conn: Connection, receipt_id: str) -> ReceiptEvidence | None:
    """The receipt's id, evidence, agent and event (what an outcome reads of it), or None."""
    sql = "SELECT receipt_id, evidence, agent_id, event_id FROM recall_receipts WHERE receipt_id = ?"
    return one(conn, sql, (receipt_id,), row=ReceiptEvidence)


def insert_outcome(conn: Connection, row: OutcomeRow) -> None:
    conn.execute(
        "INSERT INTO outcomes (outcome_id, company_id, memory_id, receipt_id, target_scope, reward_sign,"
        " live_content_hash, agent_id, agent_valid_from, request_body, request_hash, request_nonce,"
        " request_ts, request_signature_b64u, terminal, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            row["outcome_id"],
            row["company_id"],
            row["memory_id"],
            row["receipt_id"],
            row["target_scope"],
            row["reward_sign"],
            row["live_content_hash"],
            row["agent_id"],
            row["agent_valid_from"],
            row["request_body"],
            row["request_hash"],
            row["request_nonce"],
            row["request_ts"],
            row["request_signature_b64u"],
            row["terminal"],
            row["created_at"],
        ),
    )


def last_reweight_hash(conn: Connection, memory_id: str) -> str | None:
    """The mutation hash of the memory's newest REWEIGHT provenance node, or None."""
    row = one(
        conn,
        "SELECT mutation_hash FROM memory_provenance WHERE memory_id = ?"
        f" AND event_type = {sql_word(REWEIGHT_EVENT)}"
        " ORDER BY rowid DESC LIMIT 1",
        (memory_id,),
    )
    return None if row is None else cast(str, row["mutation_hash"])


def last_projection_hash(conn: Connection, memory_id: str) -> str | None:
    """The hash of the memory's newest weight projection, or None."""
    row = one(
        conn,
        "SELECT projection_hash FROM weight_projections WHERE memory_id = ? ORDER BY rowid DESC LIMIT 1",
        (memory_id,),
    )
    return None if row is None else cast(str, row["projection_hash"])


def insert_projection(conn: Connection, row: WeightProjectionRow) -> None:
    conn.execute(
        "INSERT INTO weight_projections (projection_id, company_id, memory_id, outcome_id, old_weight_milli,"
        " new_weight_milli, provenance_mutation_hash, prev_projection_hash, projection_hash, transition_hash,"
        " transition_signature_b64u, signer_valid_from, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            row["projection_id"],
            row["company_id"],
            row["memory_id"],
            row["outcome_id"],
            row["old_weight_milli"],
            row["new_weight_milli"],
            row["provenance_mutation_hash"],
            row["prev_projection_hash"],
            row["projection_hash"],
            row["transition_hash"],
            row["transition_signature_b64u"],
            row["signer_valid_from"],
            row["created_at"],
        ),
    )


def set_retrieval_weight(conn: Connection, memory_id: str, weight_milli: int) -> None:
    conn.execute(
        "UPDATE memories SET retrieval_weight_milli = ? WHERE memory_id = ?", (weight_milli, memory_id)
    )


# --- the V2 mutation export ----------------------------------------------------------------------
def outcome_row(conn: Connection, outcome_id: str) -> OutcomeRow | None:
    return one(conn, "SELECT * FROM outcomes WHERE outcome_id = ?", (outcome_id,), row=OutcomeRow)


def first_outcome_event(
    conn: Connection, body: str, memory_id: str, operation: str, outcome_id: str
) -> dict[str, Any] | None:
    """The first ``operation`` event about ``outcome_id`` among ``memory_id``'s events (every
    column, as stored: aimos.ledger.events.read_event reads it)."""
    return one(
        conn,
        "SELECT * FROM events WHERE subject_memory_id = ? AND +operation = ?"
        f" AND json_extract({body}, '$.metadata.outcome_id') = ? ORDER BY rowid LIMIT 1",
        (memory_id, operation, outcome_id),
    )


def receipt_event_id(conn: Connection, receipt_id: str) -> str | None:
    """The id of the event a recall receipt was recorded with, or None for no such receipt."""
    row = one(conn, "SELECT event_id FROM recall_receipts WHERE receipt_id = ?", (receipt_id,))
    return None if row is None else cast(str, row["event_id"])


def projection_of_outcome(conn: Connection, outcome_id: str) -> WeightProjectionRow | None:
    return one(
        conn, "SELECT * FROM weight_projections WHERE outcome_id = ?", (outcome_id,), row=WeightProjectionRow
    )


def provenance_row(conn: Connection, mutation_hash: str) -> dict[str, Any] | None:
    """The memory_provenance row of a mutation hash (every column, as stored:
    aimos.ledger.events.read_provenance reads it), or None."""
    return one(conn, "SELECT * FROM memory_provenance WHERE mutation_hash = ?", (mutation_hash,))
