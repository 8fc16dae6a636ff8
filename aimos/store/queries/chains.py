"""The SQL of the weight and label chain checks over a brain's rows (aimos/verify/chains/): each
chain row with what the writer's registered functions recompute of it, the signed events and
nodes every chain must hold, and the histories shown of one memory."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TypeAlias, TypedDict

from aimos.store.connection import Connection, rows
from aimos.vocabulary import (
    EPISTEMIC_CLASSIFIED_OPERATION,
    HOUSEKEEPER,
    INITIAL_WEIGHT_ATTESTED_OPERATION,
    REWEIGHT_EVENT,
    sql_word,
)

_HK = sql_word(HOUSEKEEPER)
_CLASSIFIED = sql_word(EPISTEMIC_CLASSIFIED_OPERATION)
_BASELINE = sql_word(INITIAL_WEIGHT_ATTESTED_OPERATION)
_REWEIGHT = sql_word(REWEIGHT_EVENT)

# A row read whole (c.*, w.*, b.*: every column of its table) with the named columns the query adds.
ChainRow: TypeAlias = dict[str, Any]


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" * len(values))


# --- label chains --------------------------------------------------------------------------------------
_CLASSIFICATIONS_SQL = """
SELECT c.*, aimos_epistemic_hash(c.memory_id, c.label, c.confidence_milli, c.live_content_hash,
                                 c.authority_mutation_hash, c.prev_classification_hash) AS g_recomputed,
       e.mutation_hash AS e_mutation_hash, e.operation AS e_operation, e.subject_memory_id AS e_subject,
       e.signed_body AS e_body, i.role AS e_role,
       aimos_ed25519_verify(i.public_key_b64u, aimos_payload_message(e.signed_body, e.nonce, e.ts_signed),
                            e.signature_b64u) AS e_sig_ok
FROM memory_classifications c
LEFT JOIN events e ON e.event_id = c.authority_event_id
LEFT JOIN identity_epochs i ON i.agent_id = e.signer_agent_id AND i.valid_from = e.signer_valid_from
WHERE c.memory_id IN ({ids})
ORDER BY c.memory_id, c.rowid
"""


class SignedSave(TypedDict):
    """A memory's memory_saved event: its signed body's bytes and where it stands in the ledger."""

    subject_memory_id: str
    signed_body: bytes | None
    signer_agent_id: str
    signer_valid_from: int
    ledger_seq: int


class SignedClassification(TypedDict):
    """A classification event found by the subject its signed body names."""

    subject: str
    signed_body: bytes | None
    mutation_hash: str
    signer_agent_id: str
    signer_valid_from: int
    ledger_seq: int


class ClassificationEvent(TypedDict):
    subject: str
    event_id: str


def classification_rows(conn: Connection, memory_ids: Sequence[str]) -> list[ChainRow]:
    """The classification rows of the memories in write order, each with its recomputed hash
    (``g_recomputed``) and its authority event's hash, operation, subject, body, signer role and
    signature check (``e_*``)."""
    return rows(conn, _CLASSIFICATIONS_SQL.format(ids=",".join("?" * len(memory_ids))), memory_ids)


def signed_saves(conn: Connection, memory_ids: Sequence[str], body: str, operation: str) -> list[SignedSave]:
    """The ``operation`` events (memory_saved) whose subject is one of the memories, each signed
    body as bytes (``body``: the SQL that reads an events row's body, ledger.events.body_sql)."""
    return rows(
        conn,
        f"SELECT subject_memory_id, CAST({body} AS BLOB) AS signed_body, signer_agent_id,"
        " signer_valid_from, ledger_seq FROM events"
        f" WHERE subject_memory_id IN ({','.join('?' * len(memory_ids))}) AND +operation = ?",
        (*memory_ids, operation),
        row=SignedSave,
    )


def signed_classifications(
    conn: Connection, memory_ids: Sequence[str], operation: str
) -> list[SignedClassification]:
    """The ``operation`` events (classifications) whose signed body names one of the memories as
    its subject, each signed body as bytes."""
    return rows(
        conn,
        "SELECT ids.value AS subject, CAST(e.signed_body AS BLOB) AS signed_body, e.mutation_hash,"
        " e.signer_agent_id, e.signer_valid_from, e.ledger_seq FROM json_each(?) ids CROSS JOIN events e"
        " WHERE e.operation = ? AND json_extract(e.signed_body, '$.subject_memory_id') = ids.value",
        (json.dumps(list(memory_ids)), operation),
        row=SignedClassification,
    )


def classification_events(conn: Connection, memory_ids: Sequence[str]) -> list[ClassificationEvent]:
    """Every classification event's id by the subject its signed body names (migration 6's
    expression index), for the memories."""
    return rows(
        conn,
        "SELECT ids.value AS subject, e.event_id FROM json_each(?) ids CROSS JOIN events e"
        f" WHERE e.operation = {_CLASSIFIED}"
        " AND json_extract(e.signed_body, '$.subject_memory_id') = ids.value",
        (json.dumps(list(memory_ids)),),
        row=ClassificationEvent,
    )


def master_public_key(conn: Connection) -> str:
    """The master identity's public key, or "" when the brain has none."""
    master = rows(conn, "SELECT public_key_b64u FROM master_identity")
    return str(master[0]["public_key_b64u"]) if master else ""


def classification_history(conn: Connection, memory_id: str) -> list[ChainRow]:
    """Every classification row of a memory, oldest first, with its authority event's signed body."""
    return rows(
        conn,
        "SELECT c.*, e.signed_body FROM memory_classifications c JOIN events e"
        " ON e.event_id = c.authority_event_id WHERE c.memory_id = ? ORDER BY c.rowid",
        (memory_id,),
    )


# --- weight chains -------------------------------------------------------------------------------------
_PROJECTIONS_SQL = f"""
SELECT w.*, m.company_id AS memory_company, m.retrieval_weight_milli AS live_weight, m.quarantine,
       {{body}} AS body_json, p.content_hash AS p_content_hash, p.event_type AS p_event_type,
       p.memory_id AS p_memory_id, p.signer_agent_id AS p_signer, p.signer_valid_from AS p_signer_vf,
       p.ts_signed AS p_ts, p.nonce AS p_nonce, p.prev_mutation_hash AS p_prev,
       p.signature_b64u AS p_sig, p.backfilled AS p_backfilled, p.cert_fingerprint AS p_cert_fp,
       p.company_id AS p_company, e.cert_fingerprint AS e_cert_fp,
       e.valid_from AS e_valid_from, e.valid_until AS e_valid_until, e.role AS e_role,
       (SELECT r.revoked_at FROM agent_revocations r
         WHERE r.agent_id = {_HK} AND r.agent_valid_from = w.signer_valid_from) AS e_revoked_at,
       aimos_projection_hash(w.memory_id, w.old_weight_milli, w.new_weight_milli,
                             w.provenance_mutation_hash, w.prev_projection_hash) AS h_recomputed,
       aimos_transition_hash(w.company_id, w.memory_id, w.old_weight_milli, w.new_weight_milli,
                             w.provenance_mutation_hash) AS t_recomputed,
       aimos_ed25519_verify(e.public_key_b64u, unhex(w.transition_hash),
                            w.transition_signature_b64u) AS t_sig_ok,
       aimos_sha256_hex({{body}}) AS p_content_recomputed,
       aimos_provenance_mutation(p.content_hash, p.prev_mutation_hash, p.nonce,
                                 p.ts_signed) AS p_mutation_recomputed,
       aimos_ed25519_verify(e.public_key_b64u, aimos_payload_message({{body}}, p.nonce, p.ts_signed),
                            p.signature_b64u) AS p_sig_ok
FROM weight_projections w
JOIN memories m ON m.memory_id = w.memory_id
LEFT JOIN memory_provenance p ON p.mutation_hash = w.provenance_mutation_hash
LEFT JOIN identity_epochs e ON e.agent_id = {_HK} AND e.valid_from = w.signer_valid_from
ORDER BY w.memory_id, w.rowid
"""


_BASELINES_SQL = f"""
SELECT b.*,
       (b.baseline_hash = aimos_baseline_hash(b.company_id, b.memory_id, b.event_id, b.event_mutation_hash,
            b.live_content_hash, b.observed_weight_float4, b.observed_weight_milli, b.observed_at,
            b.signer_valid_from, b.certificate_fingerprint)) AS hash_ok,
       aimos_ed25519_verify(e.public_key_b64u, unhex(b.baseline_hash), b.signature_b64u) AS sig_ok,
       EXISTS (SELECT 1 FROM events v WHERE v.event_id = b.event_id
               AND v.mutation_hash = b.event_mutation_hash
               AND v.operation = {_BASELINE}) AS event_ok
FROM weight_baselines b
LEFT JOIN identity_epochs e ON e.agent_id = {_HK} AND e.valid_from = b.signer_valid_from
"""


class BaselineStart(TypedDict):
    observed_weight_milli: int
    observed_at: int


class CreatedAt(TypedDict):
    created_at: int


def projection_rows(conn: Connection, memory_ids: Sequence[str], body: str) -> list[ChainRow]:
    """The weight projection rows of the memories in write order, each with its memory's company,
    live weight and quarantine, its REWEIGHT node's signed body (``body``: the SQL that reads a
    memory_provenance row ``p``'s body, ledger.events.provenance_body_sql) and columns (``p_*``),
    the housekeeper epoch that signed it (``e_*``) and what is recomputed of them."""
    return rows(
        conn,
        _PROJECTIONS_SQL.replace("{body}", body).replace(
            "ORDER BY w.memory_id", f"WHERE w.memory_id IN ({_marks(memory_ids)}) ORDER BY w.memory_id"
        ),
        memory_ids,
    )


def baseline_rows(conn: Connection, memory_ids: Sequence[str]) -> list[ChainRow]:
    """The signed weight baselines of the memories, each with its hash, signature and event checks
    (``hash_ok``, ``sig_ok``, ``event_ok``)."""
    return rows(conn, _BASELINES_SQL + f" WHERE b.memory_id IN ({_marks(memory_ids)})", memory_ids)


def signed_reweights(conn: Connection, memory_ids: Sequence[str], compact: bool) -> dict[str, int]:
    """memory_id -> how many REWEIGHT nodes name it (by their signed body, migration 6's expression
    index; ``compact``: the brain keeps REWEIGHT bodies compactly, naming their row's memory_id,
    migration 18), for the memories that have any."""
    return {
        r["mid"]: int(r["n"])
        for r in rows(
            conn,
            "SELECT mid, SUM(n) AS n FROM ("
            "SELECT ids.value AS mid, COUNT(*) AS n FROM json_each(?1) ids CROSS JOIN memory_provenance p"
            f" WHERE p.event_type = {_REWEIGHT}"
            + (" AND json_valid(p.body_json)" if compact else "")
            + " AND json_extract(p.body_json, '$.memory_id') = ids.value"
            + " GROUP BY ids.value"
            + (
                " UNION ALL SELECT ids.value, COUNT(*) FROM json_each(?1) ids CROSS JOIN memory_provenance p"
                f" WHERE p.memory_id = ids.value AND p.event_type = {_REWEIGHT}"
                " AND p.body_deflated IS NOT NULL"
                " GROUP BY ids.value"
                if compact
                else ""
            )
            + ") GROUP BY mid",
            (json.dumps(list(memory_ids)),),
        )
    }


def baseline_start(conn: Connection, memory_id: str) -> list[BaselineStart]:
    """The memory's signed baseline weight and when it was observed (none, or one)."""
    return rows(
        conn,
        "SELECT observed_weight_milli, observed_at FROM weight_baselines WHERE memory_id = ?",
        (memory_id,),
        row=BaselineStart,
    )


def created_at(conn: Connection, memory_id: str) -> list[CreatedAt]:
    """When the memory was saved (none, or one)."""
    return rows(conn, "SELECT created_at FROM memories WHERE memory_id = ?", (memory_id,), row=CreatedAt)


def weight_steps(conn: Connection, memory_id: str) -> list[dict[str, Any]]:
    """Every outcome about the memory, oldest first, with the weight projection it made (if any)."""
    return rows(
        conn,
        "SELECT o.outcome_id, o.created_at AS at, o.reward_sign, o.agent_id, o.receipt_id, o.terminal,"
        " o.target_scope, w.old_weight_milli, w.new_weight_milli, w.transition_hash"
        " FROM outcomes o LEFT JOIN weight_projections w ON w.outcome_id = o.outcome_id"
        " WHERE o.memory_id = ? ORDER BY o.created_at, o.rowid",
        (memory_id,),
    )
