"""The SQL of the mutation-integrity suite (aimos/eval/mutation.py): what it reads of its scratch
brain, and the edits it makes on purpose. Each edit is one an attacker would make with the brain
file in hand (foreign keys off, the guard triggers dropped, a row changed); the suite then asks
both verifiers whether they see it, undoes it and puts the triggers back."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, NamedTuple

from aimos.store.connection import Connection
from aimos.store.queries.learning import last_reweight_hash
from aimos.vocabulary import REWEIGHT_EVENT, sql_word


def live_weight(conn: Connection, memory_id: str) -> int:
    found = conn.execute(
        "SELECT retrieval_weight_milli FROM memories WHERE memory_id = ?", (memory_id,)
    ).fetchall()
    return int(str(found[0][0]))


def projection_count(conn: Connection, memory_id: str) -> int:
    found: Any = conn.execute(
        "SELECT COUNT(*) FROM weight_projections WHERE memory_id = ?", (memory_id,)
    ).fetchall()[0][0]
    return int(found)


def chain_heads(conn: Connection, memory_id: str) -> tuple[str | None, str | None]:
    """The newest projection hash of ``memory_id``'s weight chain and the newest REWEIGHT node's
    mutation hash of its provenance chain (None where the chain is empty)."""
    p = conn.execute(
        "SELECT projection_hash FROM weight_projections WHERE memory_id = ? ORDER BY rowid DESC LIMIT 1",
        (memory_id,),
    ).fetchall()
    return (str(p[0][0]) if p else None), last_reweight_hash(conn, memory_id)


def transition_values(conn: Connection, projection_hash: str | None) -> list[object]:
    """Every stored value of a transition: its projection row's, then its provenance node's."""
    return list(
        conn.execute(
            "SELECT w.*, p.* FROM weight_projections w JOIN memory_provenance p"
            " ON p.mutation_hash = w.provenance_mutation_hash WHERE w.projection_hash = ?",
            (projection_hash,),
        ).fetchall()[0]
    )


_SET_LIVE_WEIGHT = "UPDATE memories SET retrieval_weight_milli = ? WHERE memory_id = ?"


def set_live_weight(conn: Connection, memory_id: str, weight_milli: int = 2999) -> None:
    """The live weight changed in place, without a signed transition (the triggers refuse it)."""
    conn.execute(_SET_LIVE_WEIGHT, (weight_milli, memory_id))


# --- the edits made with the file in hand ----------------------------------------------------


class Statement(NamedTuple):
    sql: str
    params: tuple[Any, ...] = ()


class Tamper(NamedTuple):
    """A named edit of one table's rows, and the statement that undoes it (None: the edit of the
    first projection's transition signature, undone by writing back the value it had)."""

    name: str
    table: str
    edit: Statement
    undo: Statement | None


_NEWEST_PROJECTION = "rowid = (SELECT MAX(rowid) FROM weight_projections)"
_FIRST_REWEIGHT_NODE = (
    f"event_type = {sql_word(REWEIGHT_EVENT)}"
    f" AND rowid = (SELECT MIN(rowid) FROM memory_provenance WHERE event_type = {sql_word(REWEIGHT_EVENT)})"
)


def tampers(memory_id: str, weight_milli: int) -> list[Tamper]:
    """The suite's edits, in order; ``memory_id``'s live weight is ``weight_milli`` before them."""
    return [
        Tamper(
            "projection field (new_weight_milli)",
            "weight_projections",
            Statement(
                "UPDATE weight_projections SET new_weight_milli = new_weight_milli + 1"
                f" WHERE {_NEWEST_PROJECTION}"
            ),
            Statement(
                "UPDATE weight_projections SET new_weight_milli = new_weight_milli - 1"
                f" WHERE {_NEWEST_PROJECTION}"
            ),
        ),
        Tamper(
            "transition signature",
            "weight_projections",
            Statement(
                "UPDATE weight_projections SET transition_signature_b64u ="
                " (CASE substr(transition_signature_b64u, 1, 1) WHEN 'A' THEN 'B' ELSE 'A' END)"
                " || substr(transition_signature_b64u, 2)"
                " WHERE rowid = (SELECT MIN(rowid) FROM weight_projections)"
            ),
            None,
        ),
        Tamper(
            "live weight",
            "memories",
            Statement(_SET_LIVE_WEIGHT, (2222, memory_id)),
            Statement(_SET_LIVE_WEIGHT, (weight_milli, memory_id)),
        ),
        Tamper(
            "signer epoch of a REWEIGHT node",
            "memory_provenance",
            Statement(
                "UPDATE memory_provenance SET signer_valid_from = signer_valid_from + 1"
                f" WHERE {_FIRST_REWEIGHT_NODE}"
            ),
            Statement(
                "UPDATE memory_provenance SET signer_valid_from = signer_valid_from - 1"
                f" WHERE {_FIRST_REWEIGHT_NODE}"
            ),
        ),
    ]


@contextlib.contextmanager
def tampered(conn: Connection, tamper: Tamper) -> Iterator[None]:
    """The brain with ``tamper``'s edit made as someone editing the file would make it (foreign
    keys off, the table's guard triggers dropped); afterwards the edit undone, the triggers put
    back as they were and foreign keys on again."""
    saved = [
        str(r[0])
        for r in conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?"
            " AND sql LIKE '%BEFORE UPDATE%'",
            (tamper.table,),
        )
    ]
    original = None
    if tamper.undo is None:
        original = conn.execute(
            "SELECT rowid, transition_signature_b64u FROM weight_projections"
            " WHERE rowid = (SELECT MIN(rowid) FROM weight_projections)"
        ).fetchall()[0]
    conn.execute("PRAGMA foreign_keys = OFF")
    for sql in saved:
        conn.execute("DROP TRIGGER " + sql.split()[2])
    conn.execute(*tamper.edit)
    yield
    if tamper.undo is None and original is not None:
        conn.execute(
            "UPDATE weight_projections SET transition_signature_b64u = ? WHERE rowid = ?",
            (original[1], original[0]),
        )
    elif tamper.undo is not None:
        conn.execute(*tamper.undo)
    for sql in saved:
        conn.execute(sql)
    conn.execute("PRAGMA foreign_keys = ON")
