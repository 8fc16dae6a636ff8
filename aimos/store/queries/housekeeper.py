"""The housekeeper's SQL: the counts of its jobs and of `aimos status`, its job runs in the ledger,
what a restore reads and signs, and the redaction records applied to a backup copy."""

from __future__ import annotations

from typing import Any, TypedDict

from aimos.store.cells import text_of
from aimos.store.connection import Connection, one, rows
from aimos.store.seals import REDACTIONS


class TerminalEvent(TypedDict):
    event_id: str
    ts_signed: int
    signed_body: str


class StartedEvent(TypedDict):
    event_id: str
    ts_signed: int
    metadata: str


class Weights(TypedDict):
    lo: int | None
    hi: int | None
    mean: float | None
    moved: int | None


# --- counts (`aimos status`, the heartbeat, the bottleneck scan, the weekly jobs) --------------
def count_of(conn: Connection, table: str) -> int:
    """The rows of ``table`` (a name of the code's own)."""
    return int(one(conn, f"SELECT COUNT(*) AS n FROM {table}")["n"])  # type: ignore[index]


def _counted(conn: Connection, sql: str, params: tuple[Any, ...] = ()) -> int:
    row = one(conn, sql, params)
    return int(row["n"]) if row else 0


def outcomes_without_transition(conn: Connection) -> int:
    """Authorized outcomes with no signed weight projection (a projection missing)."""
    return _counted(
        conn,
        "SELECT COUNT(*) AS n FROM outcomes o WHERE o.terminal = 'authorized_transition'"
        " AND NOT EXISTS (SELECT 1 FROM weight_projections w WHERE w.outcome_id = o.outcome_id)",
    )


def fingerprints_without_classification(conn: Connection) -> int:
    """Fingerprinted memories with no classification at all."""
    return _counted(
        conn,
        "SELECT COUNT(*) AS n FROM epistemic_fingerprints f WHERE NOT EXISTS"
        " (SELECT 1 FROM memory_classifications c WHERE c.memory_id = f.memory_id)",
    )


def operations_since(conn: Connection, since: int, *, ordered: bool = False) -> dict[str, int]:
    """operation -> events signed after ``since`` (by operation's order when ``ordered``)."""
    order = " ORDER BY operation" if ordered else ""
    return {
        r["operation"]: int(r["n"])
        for r in rows(
            conn,
            f"SELECT operation, COUNT(*) AS n FROM events WHERE ts_signed > ? GROUP BY operation{order}",
            (since,),
        )
    }


def newest_event_verifies(conn: Connection, body: str, agent_id: str, valid_from: int) -> bool | None:
    """Whether the newest event of the epoch (agent_id, valid_from) still hashes, links and
    verifies against its key, in SQL (``body``: the SQL of its signed body, aliased ``e``); None
    when the epoch signed none."""
    row = one(
        conn,
        f"SELECT aimos_sha256_hex({body}) = e.content_hash"
        " AND aimos_event_link(e.prev_mutation_hash, e.content_hash, e.nonce, e.ts_signed) = e.mutation_hash"
        " AND aimos_ed25519_verify(i.public_key_b64u,"
        f"       aimos_payload_message({body}, e.nonce, e.ts_signed), e.signature_b64u) = 1 AS ok"
        " FROM events e JOIN identity_epochs i"
        "   ON i.agent_id = e.signer_agent_id AND i.valid_from = e.signer_valid_from"
        " WHERE e.signer_agent_id = ? AND e.signer_valid_from = ?"
        " ORDER BY e.ledger_seq DESC LIMIT 1",
        (agent_id, valid_from),
    )
    return None if row is None else bool(row["ok"])


def memories_saved_since(conn: Connection, since: int) -> int:
    return _counted(conn, "SELECT COUNT(*) AS n FROM memories WHERE created_at > ?", (since,))


def recalls_since(conn: Connection, since: int) -> int:
    return _counted(conn, "SELECT COUNT(*) AS n FROM recall_receipts WHERE created_at > ?", (since,))


def outcomes_since(conn: Connection, since: int) -> list[tuple[str, int, int]]:
    """(terminal, reward sign, count) of the outcomes created after ``since``."""
    return [
        (r["terminal"], r["reward_sign"], int(r["n"]))
        for r in rows(
            conn,
            "SELECT terminal, reward_sign, COUNT(*) AS n FROM outcomes WHERE created_at > ?"
            " GROUP BY terminal, reward_sign",
            (since,),
        )
    ]


def memories_by(conn: Connection, column: str) -> dict[str, int]:
    """value -> memories, over one column of the memories (a name of the code's own)."""
    return {
        str(r["k"]): int(r["n"])
        for r in rows(conn, f"SELECT {column} AS k, COUNT(*) AS n FROM memories GROUP BY k ORDER BY k")
    }


def weight_summary(conn: Connection) -> Weights | None:
    """The lowest, highest and mean retrieval weight (milli) and how many moved from 1000."""
    found = one(
        conn,
        "SELECT MIN(retrieval_weight_milli) AS lo, MAX(retrieval_weight_milli) AS hi,"
        " AVG(retrieval_weight_milli) AS mean, SUM(retrieval_weight_milli <> 1000) AS moved"
        " FROM memories",
    )
    return (
        None
        if found is None
        else Weights(lo=found["lo"], hi=found["hi"], mean=found["mean"], moved=found["moved"])
    )


# --- job runs in the ledger ---------------------------------------------------------------------
def newest_terminal(
    conn: Connection, operation: str, job_id: str, *, skip_status: str | None = None
) -> TerminalEvent | None:
    """The newest ``operation`` event of the job ``job_id`` (with ``skip_status``, the newest
    whose metadata's status is another)."""
    skipping = " AND json_extract(signed_body, '$.metadata.status') <> ?" if skip_status is not None else ""
    found = rows(
        conn,
        "SELECT event_id, ts_signed, signed_body FROM events WHERE operation = ?"
        " AND json_extract(signed_body, '$.metadata.job_id') = ?" + skipping + ""
        " ORDER BY ts_signed DESC, rowid DESC LIMIT 1",
        (operation, job_id) if skip_status is None else (operation, job_id, skip_status),
    )
    if not found:
        return None
    row = found[0]
    return TerminalEvent(event_id=row["event_id"], ts_signed=row["ts_signed"], signed_body=row["signed_body"])


def run_ids_of(conn: Connection, operation: str) -> set[Any]:
    """The run ids the ``operation`` events' metadata name."""
    return {
        r["run_id"]
        for r in rows(
            conn,
            "SELECT json_extract(signed_body, '$.metadata.run_id') AS run_id FROM events WHERE operation = ?",
            (operation,),
        )
    }


def events_with_metadata(conn: Connection, operation: str) -> list[StartedEvent]:
    """Every ``operation`` event: its id, when it was signed, its metadata (JSON text)."""
    return [
        StartedEvent(event_id=r["event_id"], ts_signed=r["ts_signed"], metadata=r["metadata"])
        for r in rows(
            conn,
            "SELECT event_id, ts_signed, json_extract(signed_body, '$.metadata') AS metadata FROM events"
            " WHERE operation = ?",
            (operation,),
        )
    ]


# --- a restore ------------------------------------------------------------------------------------
def revoked_epoch_set(conn: Connection) -> set[tuple[str, int]]:
    """(agent id, valid_from) of every revoked epoch (each id read as bytes, so damage in it
    cannot stop the read)."""
    return {
        (text_of(a), int(str(v)))
        for a, v in conn.execute("SELECT CAST(agent_id AS BLOB), agent_valid_from FROM agent_revocations")
    }


def insert_restore(
    conn: Connection,
    restore_id: str,
    signed_body: str,
    master_fingerprint: str,
    nonce: str,
    ts_signed: int,
    signature_b64u: str,
) -> None:
    conn.execute(
        "INSERT INTO brain_restores (restore_id, signed_body, master_fingerprint, nonce,"
        " ts_signed, signature_b64u) VALUES (?, ?, ?, ?, ?, ?)",
        (restore_id, signed_body, master_fingerprint, nonce, ts_signed, signature_b64u),
    )


# --- redaction records in a copy ----------------------------------------------------------------
def memories_with_text(conn: Connection, memory_ids: list[str]) -> set[str]:
    """Of ``memory_ids``, those whose memory is here with its text still in it."""
    marks = ", ".join("?" * len(memory_ids))
    return {
        str(mid)
        for (mid,) in conn.execute(
            f"SELECT memory_id FROM memories WHERE memory_id IN ({marks}) AND value != ''", tuple(memory_ids)
        )
    }


def redacted_memory_ids(conn: Connection) -> set[str]:
    """The memories this copy holds a redaction record of."""
    return {str(mid) for (mid,) in conn.execute(f"SELECT memory_id FROM {REDACTIONS}")}
