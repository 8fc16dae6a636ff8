"""The SQL of a brain's side of a hub (aimos/hub, the join in aimos/installer/join.py): the rows a
push reads off the seals, the rows a pull inserts and the log of its pulls (hub_pulls), and the
log of what this device pushed (a SQLite file of its own beside the hub state file)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypedDict, cast

import apsw

from aimos.errors import StoreError
from aimos.store.connection import Connection, one, rows


# --- the brain's metadata, as a join or a hub init writes it (the master: identity.insert_master) --
def add_brain_meta(conn: Connection, items: Iterable[tuple[str, str]]) -> None:
    """Append rows to brain_meta (the caller holds the write transaction)."""
    conn.executemany("INSERT INTO brain_meta (key, value) VALUES (?, ?)", list(items))


# --- reading what a device wrote -------------------------------------------------------------------
def seal_changes(conn: Connection) -> Iterator[tuple[Any, Any]]:
    """(seq, changes) of every seal, in order, read as they are needed."""
    yield from conn.execute("SELECT seq, changes FROM brain_seals ORDER BY seq")


def table_columns(conn: Connection, table: str) -> list[str]:
    """The columns of one of the brain's tables, in order."""
    return [str(r[1]) for r in conn.execute(f'PRAGMA main.table_info("{table}")')]


def rows_between(conn: Connection, table: str, start: int, top: int) -> Iterator[tuple[Any, ...]]:
    """(rowid, every column) of ``table``'s rows after rowid ``start`` through ``top``, in order."""
    yield from conn.execute(
        f'SELECT rowid, * FROM "{table}" WHERE rowid > ? AND rowid <= ? ORDER BY rowid', (start, top)
    )


def row_by_key(
    conn: Connection, table: str, columns: Sequence[str], key: Sequence[Any]
) -> dict[str, Any] | None:
    """The row of ``table`` whose ``columns`` (its primary key) hold ``key``."""
    where = " AND ".join(f'"{c}" = ?' for c in columns)
    return one(conn, f'SELECT * FROM "{table}" WHERE {where}', tuple(key))


def first_seal(conn: Connection) -> int | None:
    found = one(conn, "SELECT MIN(seq) AS seq FROM brain_seals")
    return found["seq"] if found else None


def memory_rowid(conn: Connection, memory_id: str) -> int | None:
    found = rows(conn, "SELECT rowid AS r FROM memories WHERE memory_id = ?", (memory_id,))
    return int(found[0]["r"]) if found else None


def memory_held(conn: Connection, memory_id: str) -> bool:
    return one(conn, "SELECT 1 FROM memories WHERE memory_id = ?", (memory_id,)) is not None


class MemoryAuthor(TypedDict):
    author_agent_id: str
    author_valid_from: int
    created_at: int


def memory_author(conn: Connection, memory_id: Any) -> MemoryAuthor | None:
    return cast(
        "MemoryAuthor | None",
        one(
            conn,
            "SELECT author_agent_id, author_valid_from, created_at FROM memories WHERE memory_id = ?",
            (memory_id,),
        ),
    )


def events_of(conn: Connection, operation: str) -> list[dict[str, Any]]:
    """Every event of ``operation``, oldest first (whole rows, as ledger.read_event reads them)."""
    return rows(conn, "SELECT * FROM events WHERE operation = ? ORDER BY rowid", (operation,))


# --- applying what another device wrote ------------------------------------------------------------
def insert_row(conn: Connection, table: str, columns: Sequence[str], values: Sequence[Any]) -> None:
    """One row through the brain's guards; the engine's error as it is (the caller names it)."""
    conn.execute(
        f'INSERT INTO "{table}" ({", ".join(chr(34) + c + chr(34) for c in columns)})'
        f" VALUES ({', '.join('?' * len(columns))})",
        tuple(values),
    )


def project_label(conn: Connection, memory_id: str, label: str) -> None:
    conn.execute("UPDATE memories SET epistemic_label = ? WHERE memory_id = ?", (label, memory_id))


def project_weight(conn: Connection, memory_id: str, weight_milli: int) -> None:
    conn.execute(
        "UPDATE memories SET retrieval_weight_milli = ? WHERE memory_id = ?", (weight_milli, memory_id)
    )


@contextlib.contextmanager
def pull_savepoint(conn: Connection) -> Iterator[None]:
    """A pull's batch inside the caller's transaction: rolled back alone when it fails."""
    conn.execute("SAVEPOINT aimos_pull_batch")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK TO aimos_pull_batch")
        conn.execute("RELEASE aimos_pull_batch")
        raise
    conn.execute("RELEASE aimos_pull_batch")


# --- the pulls (hub_pulls) -----------------------------------------------------------------------
class PulledDevice(TypedDict):
    device: str
    n: int | None  # its newest record pulled and not refused (None: every row of it is a refusal's)
    top: int  # the highest record number of it a row holds (a refusal's included)
    seq: int  # the newest hub order number of it pulled
    refused: int | None  # the first of its records refused


def pulled_devices(conn: Connection) -> list[PulledDevice]:
    """Per device, its rows summed up. A row that names a refusal (refused_from) holds a record at
    or after the refusal: never the newest record of it this brain took."""
    return cast(
        "list[PulledDevice]",
        rows(
            conn,
            "SELECT device, MAX(CASE WHEN refused_from IS NULL THEN device_n END) AS n,"
            " MAX(device_n) AS top, MAX(hub_seq) AS seq, MIN(refused_from) AS refused"
            " FROM hub_pulls GROUP BY device",
        ),
    )


def pulled_link(conn: Connection, device: str, n: int) -> str | None:
    """The link (record_hash) of record ``n`` of ``device`` as pulled; None when not pulled."""
    found = one(conn, "SELECT record_hash FROM hub_pulls WHERE device = ? AND device_n = ?", (device, n))
    return None if found is None else found["record_hash"]


class PullRow(TypedDict):
    hub_seq: int
    device: str
    device_n: int
    record_hash: str


def last_pulled(conn: Connection) -> PullRow | None:
    """The last record, by the hub's order, of the newest pull that took one: a row that names a
    refusal is left out (it may hold no record the hub holds: aimos/hub/sync.py)."""
    return cast(
        "PullRow | None",
        one(
            conn,
            "SELECT hub_seq, device, device_n, record_hash FROM hub_pulls WHERE refused_from IS NULL"
            " ORDER BY local_seal DESC, hub_seq DESC LIMIT 1",
        ),
    )


def newest_pull(conn: Connection) -> int:
    """The newest hub_pulls row's number (0: none)."""
    (newest,) = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM hub_pulls").fetchall()[0]
    return int(str(newest))


def pull_seals(conn: Connection) -> set[int]:
    """The seals of this brain's pulls."""
    return {int(seq) for (seq,) in conn.execute("SELECT DISTINCT local_seal FROM hub_pulls")}


def pull_seals_after(conn: Connection, seal: int) -> set[int]:
    return {
        int(r["local_seal"])
        for r in rows(conn, "SELECT DISTINCT local_seal FROM hub_pulls WHERE local_seal > ?", (seal,))
    }


def pulled_in(conn: Connection, seal: int) -> bool:
    """Whether seal ``seal`` sealed a pull."""
    return bool(rows(conn, "SELECT 1 FROM hub_pulls WHERE local_seal = ? LIMIT 1", (seal,)))


def insert_pulls(conn: Connection, pulled: Iterable[tuple[int, str, int, str, int, int, int | None]]) -> None:
    """hub_pulls rows: (hub_seq, device, device_n, record_hash, local_seal, pulled_at, refused_from)."""
    conn.executemany(
        "INSERT INTO hub_pulls (hub_seq, device, device_n, record_hash, local_seal, pulled_at,"
        " refused_from) VALUES (?, ?, ?, ?, ?, ?, ?)",
        list(pulled),
    )


# --- the log of what this device pushed (its own SQLite file) ------------------------------------------
_PUSHED_SCHEMA = """
CREATE TABLE IF NOT EXISTS pushed (
    n       INTEGER PRIMARY KEY CHECK (n >= 1),
    link    TEXT NOT NULL CHECK (length(link) = 64),
    seal    INTEGER NOT NULL,
    tbl     TEXT NOT NULL,
    key     TEXT NOT NULL,
    signer  INTEGER NOT NULL,
    gen     INTEGER NOT NULL CHECK (gen >= 1),
    row     TEXT
) STRICT;
"""

# (n, link, seal, tbl, key, signer, gen, row): a row of the log
PushedRow = tuple[int, str, int, str, str, int, int, str | None]


def open_pushed_log(path: Path) -> Connection:
    """The log's file (which the caller made, 0600), open, its table made when it is not there. A
    file that is not such a log (damaged, or another file put there) is refused by name: the log
    is this device's own, and one made again learns what it lacks from the hub."""
    conn = Connection(str(path))
    try:
        conn.setbusytimeout(5000)
        conn.execute(_PUSHED_SCHEMA)
        conn.execute("SELECT n, link, seal, tbl, key, signer, gen, row FROM pushed LIMIT 1").fetchall()
    except (apsw.NotADBError, apsw.CorruptError, apsw.SQLError) as exc:
        conn.close()
        raise StoreError(
            f"the log of what this device pushed to its hub ({path}) cannot be read"
            f" ({type(exc).__name__}: it is damaged, or is not that log)",
            f"Move it aside (mv '{path}' '{path}.damaged'): the next sync makes it again and learns "
            "from the hub what this device pushed.",
        ) from None
    return conn


def newest_pushed(conn: Connection) -> tuple[int, str] | None:
    found = list(conn.execute("SELECT n, link FROM pushed ORDER BY n DESC LIMIT 1"))
    return (int(found[0][0]), str(found[0][1])) if found else None


def pushed_link(conn: Connection, n: int) -> str | None:
    found = list(conn.execute("SELECT link FROM pushed WHERE n = ?", (n,)))
    return str(found[0][0]) if found else None


def pushed_after(conn: Connection, n: int) -> list[PushedRow]:
    return [
        (int(r[0]), str(r[1]), int(r[2]), str(r[3]), str(r[4]), int(r[5]), int(r[6]), r[7])
        for r in conn.execute(
            "SELECT n, link, seal, tbl, key, signer, gen, row FROM pushed WHERE n > ? ORDER BY n", (n,)
        )
    ]


def add_pushed(conn: Connection, entries: Iterable[PushedRow]) -> None:
    """The rows in one transaction (a number already there is replaced)."""
    with conn:
        conn.executemany(
            "INSERT OR REPLACE INTO pushed (n, link, seal, tbl, key, signer, gen, row)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            list(entries),
        )
