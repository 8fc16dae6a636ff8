"""The purge's SQL: the brain's tables, as its inventory counts them, and its identity epochs."""

from __future__ import annotations

from aimos.store.connection import Connection


def schema_tables(conn: Connection) -> list[tuple[str, bool]]:
    """(name, is_virtual) of every table of the brain, by name."""
    return [
        (str(name), str(sql or "").upper().startswith("CREATE VIRTUAL TABLE"))
        for name, sql in conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            " ORDER BY name"
        )
    ]


def epoch_keys(conn: Connection) -> list[tuple[str, int]]:
    """(agent id, valid_from) of every identity epoch, in that order."""
    return [
        (str(a), int(v))
        for a, v in conn.execute(
            "SELECT agent_id, valid_from FROM identity_epochs ORDER BY agent_id, valid_from"
        )
    ]
