"""Reading memories: id resolution, version chains, listing and the full detail of one memory."""

from __future__ import annotations

from typing import Any

import apsw

from aimos.errors import MemoryNotFoundError, UsageError
from aimos.store.connection import one, resolve_uuid_prefix, rows


def resolve_memory_id(conn: apsw.Connection, ref: str, *, company_id: str | None = None) -> str:
    """A full memory id from a full id or a unique prefix of at least 4 characters."""
    return resolve_uuid_prefix(
        conn,
        ref,
        table="memories",
        column="memory_id",
        what="memory",
        not_found=MemoryNotFoundError,
        extra_where="" if company_id is None else " AND company_id = ?",
        extra_params=() if company_id is None else (company_id,),
    )


def head_of(conn: apsw.Connection, memory_id: str) -> str:
    current = memory_id
    for _ in range(100_000):
        nxt = one(conn, "SELECT new_memory_id FROM memory_supersessions WHERE old_memory_id = ?", (current,))
        if nxt is None:
            return current
        current = str(nxt["new_memory_id"])
    raise UsageError("version chain is too long or cyclic")


def version_chain(conn: apsw.Connection, memory_id: str) -> list[str]:
    """Every version from the first to the head, oldest first."""
    first = memory_id
    for _ in range(100_000):
        prev = one(conn, "SELECT old_memory_id FROM memory_supersessions WHERE new_memory_id = ?", (first,))
        if prev is None:
            break
        first = str(prev["old_memory_id"])
    chain = [first]
    while True:
        nxt = one(
            conn, "SELECT new_memory_id FROM memory_supersessions WHERE old_memory_id = ?", (chain[-1],)
        )
        if nxt is None:
            return chain
        chain.append(str(nxt["new_memory_id"]))


MEMORY_COLUMNS = (
    "memory_id, company_id, key, value, scope, memory_type, clearance_level, data_class, source,"
    " author_agent_id, author_valid_from, created_at, live_content_hash, save_mutation_hash,"
    " quarantine, retrieval_weight_milli, epistemic_label"
)


def get_memory(conn: apsw.Connection, ref: str) -> dict[str, Any]:
    memory_id = resolve_memory_id(conn, ref)
    row = one(conn, f"SELECT {MEMORY_COLUMNS} FROM memories WHERE memory_id = ?", (memory_id,))
    assert row is not None
    return row


def memory_detail(conn: apsw.Connection, ref: str) -> dict[str, Any]:
    """One memory with its version chain, provenance, occurrences and events."""
    memory = get_memory(conn, ref)
    mid = memory["memory_id"]
    chain = version_chain(conn, mid)
    position = chain.index(mid)
    memory["weight"] = memory["retrieval_weight_milli"] / 1000
    memory["quarantine"] = bool(memory["quarantine"])
    memory["version"] = {
        "number": position + 1,
        "of": len(chain),
        "state": "current" if position == len(chain) - 1 else "superseded",
        "supersedes": chain[position - 1] if position > 0 else None,
        "superseded_by": chain[position + 1] if position < len(chain) - 1 else None,
        "chain": chain,
    }
    memory["provenance"] = rows(
        conn,
        "SELECT provenance_id, event_type, signer_agent_id, signer_valid_from, cert_fingerprint,"
        " signature_form, signed_path, mutation_hash, prev_mutation_hash, ts_signed"
        " FROM memory_provenance WHERE memory_id = ? ORDER BY ts_signed, rowid",
        (mid,),
    )
    memory["occurrences"] = rows(
        conn,
        "SELECT occurrence_id, agent_id, request_ts, commitment FROM memory_occurrences"
        " WHERE memory_id = ? ORDER BY created_at, rowid",
        (mid,),
    )
    memory["events"] = rows(
        conn,
        "SELECT event_id, operation, signer_agent_id, ledger_seq, ts_signed, mutation_hash"
        " FROM events WHERE subject_memory_id = ? ORDER BY ts_signed, rowid",
        (mid,),
    )
    return memory


def list_memories(
    conn: apsw.Connection, *, limit: int = 20, include_history: bool = False
) -> list[dict[str, Any]]:
    if limit < 1:
        raise UsageError("--limit must be at least 1")
    where = (
        ""
        if include_history
        else (" WHERE memory_id NOT IN (SELECT old_memory_id FROM memory_supersessions)")
    )
    return rows(
        conn,
        f"SELECT {MEMORY_COLUMNS} FROM memories{where} ORDER BY created_at DESC, rowid DESC LIMIT ?",
        (limit,),
    )
