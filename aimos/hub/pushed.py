"""What this device pushed to its hub, record by record: a table derived from its pushes, kept
outside the brain beside the hub state file (state/hub/<brain id>.pushed, SQLite, 0600).

For each of this device's records: its number, its link (box.record_link of its box), and what it
carried: the seal, table and key of the row, the valid_from of the housekeeper epoch that signed
it, and the content key generation that sealed it. A push that finds the hub holding fewer of
this device's records than this log (a hub restored from an older copy, or whose owner deleted
records) sends the missing ones again from it, the same bytes (the row read again from the brain,
the same signer and generation, a box's nonce derived from its plaintext), so the devices that
pulled them before see the same records. A heads record (aimos/hub/heads.py) carries a row no
table holds, so the log keeps that row itself (device ids, numbers and links).

It holds no secret and no memory text (a key is a row's ids). Lost or cut short (a push killed after the
hub took a batch), it is learnt again from the hub's records of this device while the hub holds
them (sync.push); a lost one also makes the next push look at every row this device wrote, and
send what the hub lacks in the order it first did.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from aimos import paths
from aimos.hub.box import GENESIS_LINK
from aimos.hub.heads import HEADS
from aimos.hub.records import Record
from aimos.store.connection import Connection
from aimos.store.queries import hub as queries


@dataclass(frozen=True)
class Pushed:
    """One record this device pushed: its number and link, the row it carried, and the content
    key generation that sealed it."""

    n: int
    link: str
    seal: int
    table: str
    key: str  # records.key_text
    signer: int
    generation: int
    row: str | None = None  # the row itself (JSON), for a record no table holds: a heads record

    @classmethod
    def of(cls, record: Record, key: str, link: str, generation: int) -> Pushed:
        """The log's entry of ``record`` (its key text ``key``) sent as a box of link ``link``."""
        row = json.dumps(record.row, sort_keys=True) if record.table == HEADS else None
        return cls(record.n, link, record.seal, record.table, key, record.signer, generation, row)


class PushedLog:
    """The log of one brain on this device (a context manager); ``create`` False: an absent log
    reads as empty and is not made (`aimos hub status`, which writes nothing). ``made``: the log
    was not there (a brain that pushed before there was a log, or whose log was lost)."""

    def __init__(self, path: Path, *, create: bool = True) -> None:
        self.conn: Connection | None = None
        self.made = not path.exists()
        if not create and self.made:
            return
        paths.ensure_private_dir(path.parent)
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
        self.conn = queries.open_pushed_log(path)

    def __enter__(self) -> PushedLog:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.conn is not None:
            self.conn.close()

    def newest(self) -> tuple[int, str]:
        """(number, link) of the newest record; (0, GENESIS_LINK) when there is none."""
        found = None if self.conn is None else queries.newest_pushed(self.conn)
        return found if found is not None else (0, GENESIS_LINK)

    def link_of(self, n: int) -> str | None:
        """Record ``n``'s link (record 0: GENESIS_LINK, what the first one follows)."""
        if n == 0:
            return GENESIS_LINK
        return None if self.conn is None else queries.pushed_link(self.conn, n)

    def after(self, n: int) -> list[Pushed]:
        return [] if self.conn is None else [Pushed(*r) for r in queries.pushed_after(self.conn, n)]

    def add(self, entries: Iterable[Pushed]) -> None:
        """Record what the hub took (a record sent again replaces the one under its number)."""
        assert self.conn is not None, "a log opened to read"
        queries.add_pushed(
            self.conn, [(e.n, e.link, e.seal, e.table, e.key, e.signer, e.generation, e.row) for e in entries]
        )
