"""The SQL of aimos/verify/brain: the in-database verifier's walks, the cognitive evidence bundle's
reads, the one read snapshot both verifiers share, the nightly job's signed attestation.

A statement over event or provenance bodies takes the ledger's SQL for the stored body
(``body``: aimos.ledger.events.body_sql or provenance_body_sql) as a parameter string. Memories
and events come as every column, as stored (``dict``): they go on to the chains' checks and the
ledger's readers, which take any row."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypedDict, cast

from aimos.store.connection import Connection, batches, one, rows
from aimos.store.queries.epistemic import ClassificationRow
from aimos.store.queries.identity import EpochRow
from aimos.store.queries.learning import WeightProjectionRow
from aimos.store.queries.memory import WeightBaselineRow
from aimos.vocabulary import REWEIGHT_EVENT, sql_word


class EventLink(TypedDict):
    """One event as its signer's chain walk checks it, the hashes and signature recomputed in SQL."""

    signer_agent_id: str
    signer_valid_from: int
    ledger_seq: int
    prev_mutation_hash: str
    mutation_hash: str
    content_hash: str
    content_recomputed: str | None
    link_recomputed: str | None
    sig_ok: int | None
    genesis: str
    certified: int | None
    revoked: int


class EpochWithRevocation(EpochRow):
    """An identity_epochs row, every column, with its revocation's (None when not revoked)."""

    revocation_body: str | None
    revocation_master_fingerprint: str | None
    revocation_prior_identity_hash: str | None
    revocation_content_hash: str | None
    revocation_mutation_hash: str | None
    revocation_ts_signed: int | None
    revocation_nonce: str | None
    revocation_signature_b64u: str | None


class ProjectionEvidence(WeightProjectionRow):
    """A weight_projections row (every column) with its REWEIGHT provenance node's signed fields
    (``signer_valid_from`` is the node's)."""

    provenance_id: str
    body_json: str | None
    content_hash: str
    prev_mutation_hash: str | None
    ts_signed: int
    nonce: str
    signature_b64u: str
    binding_schema_version: int
    signer_agent_id: str
    cert_fingerprint: str
    identity_tier: str
    is_genesis: int
    backfilled: int


class SignedEvent(TypedDict):
    event_id: str
    signed_body: str
    ts_signed: int


# --- the in-database verifier --------------------------------------------------------------------
# The two most numerous signatures of a brain, as their checks build them: every event's (payload
# form 1 over its signed body) and every save request's (request form 3 over its provenance body).
_SIGNATURES_AHEAD = """
SELECT i.public_key_b64u, aimos_payload_message({body}, e.nonce, e.ts_signed), e.signature_b64u
FROM events e JOIN identity_epochs i ON i.agent_id = e.signer_agent_id AND i.valid_from = e.signer_valid_from
UNION ALL
SELECT i.public_key_b64u,
       aimos_request_message(p.body_json, p.signed_method, p.signed_path, p.nonce, p.ts_signed),
       p.signature_b64u
FROM memory_provenance p
JOIN identity_epochs i ON i.agent_id = p.signer_agent_id AND i.valid_from = p.signer_valid_from
WHERE p.event_type = 'SAVE'
"""


def signatures_ahead(conn: Connection, body: str) -> Iterator[tuple[object, object, object]]:
    """(public key, signed message, signature) of every event and save request, read as the
    iteration goes (``body``: the events' body SQL for alias ``e``)."""
    return cast(Iterator[tuple[object, object, object]], conn.execute(_SIGNATURES_AHEAD.format(body=body)))


def memories_with_ids(conn: Connection, memory_ids: list[str]) -> list[dict[str, Any]]:
    """The memories rows of these ids (a batch's worth), in id order."""
    marks = ", ".join("?" * len(memory_ids))
    return rows(conn, f"SELECT * FROM memories WHERE memory_id IN ({marks}) ORDER BY memory_id", memory_ids)


def memory_count(conn: Connection, memory_id: str | None = None) -> int:
    """How many memories there are (1 or 0 with ``memory_id``)."""
    where, params = ("WHERE memory_id = ?", (memory_id,)) if memory_id else ("", ())
    return cast(int, rows(conn, f"SELECT COUNT(*) AS n FROM memories {where}", params)[0]["n"])


def memory_batches(conn: Connection, memory_id: str | None, size: int) -> Iterator[list[dict[str, Any]]]:
    """Every memory (or the one), in id order, ``size`` at a time, read as they are needed."""
    where, params = ("WHERE memory_id = ?", (memory_id,)) if memory_id else ("", ())
    return batches(conn, f"SELECT * FROM memories {where} ORDER BY memory_id", params, size)


def unprojected_memory_ids(conn: Connection, memory_id: str | None = None) -> list[str]:
    """Memories (of all, or the one) with a signed REWEIGHT node or an authorized outcome whose
    projection is gone."""
    params: tuple[str, ...] = (memory_id,) if memory_id else ()
    only_p, only_o = ("AND p.memory_id = ? ", "AND o.memory_id = ? ") if memory_id else ("", "")
    found = rows(
        conn,
        "SELECT p.memory_id FROM memory_provenance p"
        f" WHERE p.event_type = {sql_word(REWEIGHT_EVENT)} {only_p}"
        "AND NOT EXISTS (SELECT 1 FROM weight_projections w"
        " WHERE w.provenance_mutation_hash = p.mutation_hash)"
        f" UNION SELECT o.memory_id FROM outcomes o WHERE o.terminal = 'authorized_transition' {only_o}"
        "AND NOT EXISTS (SELECT 1 FROM weight_projections w WHERE w.outcome_id = o.outcome_id)",
        params * 2,
    )
    return [r["memory_id"] for r in found]


def baselined_memory_ids(conn: Connection, memory_id: str | None = None) -> list[str]:
    """Memories (of all, or the one) with a signed weight baseline."""
    where, params = ("WHERE memory_id = ?", (memory_id,)) if memory_id else ("", ())
    return [r["memory_id"] for r in rows(conn, f"SELECT memory_id FROM weight_baselines {where}", params)]


def event_link_batches(conn: Connection, body: str, housekeeper_role: str) -> Iterator[list[EventLink]]:
    """Every event in its signer epoch's chain order, each with its hashes, signature and signer
    certification recomputed in SQL (``body``: the events' body SQL for alias ``e``; a certified
    signer is a ``housekeeper_role`` epoch the master certified, signing within it)."""
    sql = f"""
    SELECT e.signer_agent_id, e.signer_valid_from, e.ledger_seq, e.prev_mutation_hash, e.mutation_hash,
           e.content_hash, aimos_sha256_hex({body}) AS content_recomputed,
           aimos_event_link(e.prev_mutation_hash, e.content_hash, e.nonce, e.ts_signed) AS link_recomputed,
           aimos_ed25519_verify(i.public_key_b64u, aimos_payload_message({body}, e.nonce, e.ts_signed),
                                e.signature_b64u) AS sig_ok,
           aimos_event_genesis((SELECT value FROM brain_meta WHERE key = 'company_id'),
                               e.signer_agent_id, e.signer_valid_from) AS genesis,
           i.role = ? AND e.ts_signed BETWEEN i.valid_from AND i.valid_until
             AND aimos_certificate_matches(i.certificate, (SELECT public_key_b64u FROM master_identity),
                                           i.agent_id, i.public_key_b64u, i.valid_from, i.valid_until) = 1
             AS certified,
           r.revoked_at IS NOT NULL AND r.revoked_at <= e.ts_signed AS revoked
    FROM events e LEFT JOIN identity_epochs i
      ON i.agent_id = e.signer_agent_id AND i.valid_from = e.signer_valid_from
    LEFT JOIN agent_revocations r
      ON r.agent_id = e.signer_agent_id AND r.agent_valid_from = e.signer_valid_from
    ORDER BY e.signer_agent_id, e.signer_valid_from, e.ledger_seq
    """
    return batches(conn, sql, (housekeeper_role,), row=EventLink)


# --- the cognitive evidence bundle ---------------------------------------------------------------
def epochs_with_revocations(conn: Connection) -> list[EpochWithRevocation]:
    return rows(
        conn,
        "SELECT e.*, r.signed_body AS revocation_body,"
        " r.master_fingerprint AS revocation_master_fingerprint,"
        " r.prior_identity_hash AS revocation_prior_identity_hash,"
        " r.content_hash AS revocation_content_hash, r.mutation_hash AS revocation_mutation_hash,"
        " r.ts_signed AS revocation_ts_signed, r.nonce AS revocation_nonce,"
        " r.signature_b64u AS revocation_signature_b64u FROM identity_epochs e"
        " LEFT JOIN agent_revocations r ON r.agent_id = e.agent_id AND r.agent_valid_from = e.valid_from",
        row=EpochWithRevocation,
    )


def events_in_chain_order(conn: Connection) -> list[dict[str, Any]]:
    """Every events row (every column, as stored: aimos.ledger.events.read_event reads it), in each
    signer epoch's chain order."""
    return rows(conn, "SELECT * FROM events ORDER BY signer_agent_id, signer_valid_from, ledger_seq")


def projections_with_provenance(conn: Connection, provenance_body: str) -> list[ProjectionEvidence]:
    """Every weight projection with its REWEIGHT node, by memory in write order
    (``provenance_body``: the provenance body SQL for alias ``p``)."""
    return rows(
        conn,
        f"SELECT w.*, p.provenance_id, {provenance_body} AS body_json, p.content_hash,"
        " p.prev_mutation_hash, p.ts_signed,"
        " p.nonce,"
        " p.signature_b64u, p.binding_schema_version, p.signer_agent_id, p.signer_valid_from,"
        " p.cert_fingerprint, p.identity_tier, p.is_genesis, p.backfilled"
        " FROM weight_projections w"
        " JOIN memory_provenance p ON p.mutation_hash = w.provenance_mutation_hash"
        " ORDER BY w.memory_id, w.rowid",
        row=ProjectionEvidence,
    )


def weight_baselines(conn: Connection) -> list[WeightBaselineRow]:
    return rows(conn, "SELECT * FROM weight_baselines", row=WeightBaselineRow)


def classifications_in_order(conn: Connection) -> list[ClassificationRow]:
    """Every epistemic classification, by memory in write order."""
    return rows(conn, "SELECT * FROM memory_classifications ORDER BY memory_id, rowid", row=ClassificationRow)


def memories_in_order(conn: Connection, memory_id: str | None = None) -> list[dict[str, Any]]:
    """Every memories row (or the one), in id order."""
    where, params = ("WHERE memory_id = ?", (memory_id,)) if memory_id else ("", ())
    return rows(conn, f"SELECT * FROM memories {where} ORDER BY memory_id", params)


# --- the kept outcome ----------------------------------------------------------------------------
def newest_event_of(conn: Connection, operation: str) -> SignedEvent | None:
    """The newest ``operation`` event's id, signed body (as stored) and time, or None."""
    return one(
        conn,
        "SELECT event_id, signed_body, ts_signed FROM events WHERE operation = ?"
        " ORDER BY ts_signed DESC, rowid DESC LIMIT 1",
        (operation,),
        row=SignedEvent,
    )
