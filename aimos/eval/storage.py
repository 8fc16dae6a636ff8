"""`aimos eval storage`: where a brain's bytes go. A scratch brain of N synthetic memories (the
real signed save), then recalls and outcomes through the real signed paths; after each phase the
pages and payload each table holds (SQLite's dbstat; an index and an FTS shadow table counted
with the table they serve), so the report gives bytes per memory, per recall and per outcome
(how many of them were weight transitions beside it), table by table, and the time `aimos
verify`'s work takes on that brain.

Stored bytes are the pages a table takes (what the file grows by); payload is the bytes of its
records (what the rows hold, without page slack)."""

from __future__ import annotations

import secrets
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aimos.store.connection import Connection

TARGETS = {"bytes_per_memory": 1500, "bytes_per_transition": 600, "verify_seconds_at_100000": 20}


def table_bytes(conn: Connection) -> dict[str, dict[str, int]]:
    """Each table's pages and payload in bytes, its indexes and (for an FTS5 table) its shadow
    tables counted with it."""
    from aimos.store.queries.eval import page_use, schema_objects

    schema = schema_objects(conn)
    owner = {o.name: o.table for o in schema}
    fts = [o.name for o in schema if o.type == "table" and o.sql and "USING fts5" in o.sql]
    out: dict[str, dict[str, int]] = {}
    for name, pages, payload in page_use(conn):
        table = owner.get(name, name)
        table = next((f for f in fts if table.startswith(f"{f}_")), table)
        got = out.setdefault(table, {"stored": 0, "payload": 0})
        got["stored"] += pages
        got["payload"] += payload
    return out


def _delta(after: dict[str, dict[str, int]], before: dict[str, dict[str, int]], per: int) -> dict[str, Any]:
    tables = {
        t: {k: round((after[t][k] - before.get(t, {}).get(k, 0)) / per, 1) for k in ("stored", "payload")}
        for t in after
    }
    tables = {t: v for t, v in tables.items() if v["stored"] or v["payload"]}
    return {
        "stored": round(sum(v["stored"] for v in tables.values()), 1),
        "payload": round(sum(v["payload"] for v in tables.values()), 1),
        "tables": dict(sorted(tables.items(), key=lambda kv: -kv[1]["stored"])),
    }


def run_storage(memories: int = 10_000, recalls: int = 200, outcomes: int = 200) -> dict[str, Any]:
    from aimos.actions.bodies import build_outcome_body, build_recall_body
    from aimos.eval.perf import fill_synthetic
    from aimos.eval.scratch import install_scratch, open_scratch, scratch_home
    from aimos.identity.requests import sign_request
    from aimos.learning.outcomes import record_outcome
    from aimos.recall.pipeline import recall
    from aimos.store.queries.eval import checkpoint
    from aimos.verify.brain.parity import verify_everything
    from aimos.vocabulary import PATH_OUTCOME, PATH_RECALL

    rng = secrets.SystemRandom()
    with scratch_home("aimos-eval-storage-") as home:
        result = install_scratch("storage", "file")
        conn, agent, housekeeper = open_scratch()
        empty = table_bytes(conn)
        texts = fill_synthetic(conn, agent, housekeeper, memories, rng)
        filled = table_bytes(conn)

        disclosed: list[tuple[str, str]] = []  # (memory id, receipt id) a recall disclosed
        for _ in range(recalls):
            words = [w for w in rng.choice(texts).split()[2:] if w.isalpha()]
            query = " ".join(rng.sample(words, min(len(words), 3)))
            t = int(time.time())
            got = recall(
                conn,
                housekeeper,
                sign_request(agent, build_recall_body(query=query, limit=10), PATH_RECALL, t),
                t,
            )
            disclosed += [(r["memory_id"], got.receipt["receipt_id"]) for r in got.results[:1]]
        recalled = table_bytes(conn)

        transitions = 0
        for i, (memory_id, receipt_id) in enumerate(disclosed[:outcomes]):
            t = int(time.time())
            body = build_outcome_body(
                memory_id=memory_id, receipt_id=receipt_id, outcome="good" if i % 3 else "bad"
            )
            done = record_outcome(conn, housekeeper, sign_request(agent, body, PATH_OUTCOME, t), t)
            transitions += done.terminal == "authorized_transition"
        reported = table_bytes(conn)
        checkpoint(conn)
        size = (home / "brain.sqlite3").stat().st_size

        started = time.perf_counter()
        verified = verify_everything(conn, result.master_fingerprint)
        verify_seconds = time.perf_counter() - started
        conn.close()

    per_memory = _delta(filled, empty, memories)
    return {
        "memories": memories,
        "recalls": recalls,
        "outcomes": min(outcomes, len(disclosed)),
        "transitions": transitions,
        "brain_file_bytes": size,
        "file_bytes_per_memory": round(size / memories, 1),
        "per_memory": per_memory,
        "per_recall": _delta(recalled, filled, recalls),
        # each outcome a weight transition or not (a no-op at a bound, an observation): by outcome
        "per_outcome": _delta(reported, recalled, max(1, min(outcomes, len(disclosed)))),
        "verify_seconds": round(verify_seconds, 2),
        "verify_ok": bool(verified["ok"]),
        "targets": TARGETS,
    }
