"""Push and pull: the rows this device wrote go to the hub, sealed; the rows other devices wrote
come back, each opened, checked against its device's chain of records, inserted through the
brain's guards and verified before the pull commits, then sealed by this device's housekeeper.

A pull is all or nothing a batch at a time: a record that does not open, breaks its device's
chain, is refused by a guard or fails the verifier refuses the whole batch by name, and nothing
of it is applied. A revoked or cut device's records after its cut are refused unread, and the
brain keeps of it only its records before the cut and the refusal: never a record number or link
the refused device chose (its hub login may outlive its revocation). A push is idempotent: the
hub names each row by a keyed hash of its table and key and keeps one copy, and each device's
records continue from the newest one the hub holds, so a push cut off anywhere is finished by the
next one, with nothing lost or sent twice.

A hub that goes back (its database restored from an older copy, or records deleted by its owner)
is repaired by the devices: a push that finds the hub holding fewer of this device's records than
it pushed sends the missing ones again, the same bytes (aimos/hub/pushed.py); a pull that finds the
hub no longer holding the record it read last reads the hub again from the start, skipping the
records it holds (the same device, number and link) and refusing one that claims a number it holds
with another link (a fork). A record is sent again under the content key generation it was first
sent under, and a device's heads record (aimos/hub/heads.py) from the row the log kept of it, so
both are the same bytes; a catch-up (records the hub gave another device and not this one, asked
for by device and number) leaves the record a pull read last as it was.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from aimos.crypto.ed25519 import verify as ed25519_verify
from aimos.errors import IntegrityError, VerificationError
from aimos.hub import box, records
from aimos.hub.heads import HEADS, heads_row
from aimos.hub.pushed import Pushed, PushedLog
from aimos.identity.devices import cuts, home, revoked_device
from aimos.identity.signer import Signer
from aimos.store.connection import Connection, write_transaction
from aimos.store.postgres import MAX_RECORD_BYTES, HubRow
from aimos.store.queries import devices as device_queries
from aimos.store.queries import hub as queries
from aimos.store.seals import head_seal
from aimos.verify.brain.verifier import verify_memories
from aimos.vocabulary import HOUSEKEEPER

PULL_BATCH = 2000  # records applied, and verified, in one write transaction
PUSH_BATCH = 1000  # records sent in one hub transaction
NAMES_BATCH = 1000  # row names asked about at once
_CUT_WORDS = "its device is revoked or cut by the master, or pushed a row it may not write"
# the link a refusal's hub_pulls row keeps: no record was read at its number (the link that names
# no record: a device's first record names it as its predecessor)
_REFUSED_LINK = box.GENESIS_LINK
_MAX_RECORD_NUMBER = 2**63 - 1  # the largest a hub_pulls row (SQLite's INTEGER) holds


class Hub(Protocol):
    """What sync needs of a hub (aimos/store/postgres.py is the one there is)."""

    def newest_of(self, device: str) -> tuple[int, bytes] | None: ...
    def names_held(self, names: list[bytes]) -> set[bytes]: ...
    def append(self, device: str, items: list[tuple[int, bytes, bytes]]) -> None: ...
    def after(self, seq: int, limit: int, other_than: str) -> list[HubRow]: ...
    def at(self, seq: int) -> HubRow | None: ...
    def of_device_after(self, device: str, n: int, limit: int) -> list[HubRow]: ...


@dataclass
class PushResult:
    records: int = 0
    through_seal: int = 0
    bytes_sent: int = 0
    # records the hub had lost, sent again; of them, those that could not be the same bytes (signed
    # by a housekeeper key rotated out since, or a row changed since: a redacted memory)
    resent: int = 0
    resent_changed: int = 0
    # records the hub files under this device's name that it did not push (another device that
    # holds the content key wrote them): "hub record #N (record n)"
    not_its_own: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Anchor:
    """A record a pull read on the hub, which the next pull starts after: its order number, the
    hub's (keyed) name of its device, its number and link. ``pulls``: how many hub_pulls rows the
    brain held when it was read (the state file keeps it: an anchor older than the brain's newest
    pull is not the newest)."""

    seq: int
    filed: str
    n: int
    link: str
    pulls: int = 0

    @classmethod
    def of(cls, row: HubRow, pulls: int) -> Anchor:
        return cls(row.seq, row.device, row.n, box.record_link(row.box), pulls)

    def held_by(self, row: HubRow | None) -> bool:
        return row is not None and (row.seq, row.device, row.n, box.record_link(row.box)) == (
            self.seq,
            self.filed,
            self.n,
            self.link,
        )


@dataclass
class PullResult:
    records: int = 0
    applied: int = 0
    memories: set[str] = field(default_factory=set)
    through: int = 0
    # records of revoked devices refused (and skipped): "hub record #N (device D, record n): why"
    refused: list[str] = field(default_factory=list)
    # the hub no longer held the record this device read last: it was read again from the start,
    # and the records this brain held already (``skipped``) were left as they are
    went_back: bool = False
    skipped: int = 0
    anchor: Anchor | None = None  # the last record read
    # the heads records pulled: (the device that pushed it, its row), aimos/hub/heads.py
    heard: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


@dataclass(frozen=True)
class Heads:
    """How far this brain has pulled: the hub's order number, per device its newest record it took
    (number, link: read and chained, never one refused unread), and per refused device the record
    from which all of its are refused (as hub_pulls keeps it; a cut the master made is the brain's
    own record: refusals() has both). ``tops``: per device the highest number a row of it holds (a
    refusal's included), which its next row must pass."""

    through: int
    devices: dict[str, tuple[int, str]]
    refused_from: dict[str, int]
    tops: dict[str, int] = field(default_factory=dict)

    def past(self, device: str) -> int:
        """The number after which a record of ``device`` is new to this brain: its newest taken, or
        the highest a refusal of it names (what lies between was refused)."""
        return max(self.devices.get(device, (0, ""))[0], self.tops.get(device, 0))


class _Behind(Exception):
    """A record that skips numbers of its device: the hub may have gone back and on since the record
    read last (which it holds again), so it is read again from the start before it is refused."""

    def __init__(self, error: VerificationError) -> None:
        super().__init__(error.message)
        self.error = error


class _Refuse(Exception):
    """A revoked device's record refused: the batch is tried again without it and its followers."""

    def __init__(self, device: str, n: int, why: str) -> None:
        super().__init__(why)
        self.device, self.n, self.why = device, n, why


def push(
    conn: Connection,
    hub: Hub,
    keys: box.KeyRing,
    device: str,
    after_seal: int,
    signer: Signer,
    log: PushedLog,
    told: Callable[[int], None] | None = None,
) -> PushResult:
    """Send every row the seals after ``after_seal`` sealed that the hub does not hold yet, each
    signed by this device's housekeeper (``signer``; its own epoch's row, when it is among them,
    goes first, so every record after it can be checked), sealed under the newest generation of
    the content key in ``keys``, and first what the hub lost of this device's records (``log``:
    what it pushed before, each sent again under the generation it was first sent under). The
    rows of this device's pulls are never its own (but its join's, which enrols it in the
    transaction that pulls). A push that sends rows ends with this device's heads record
    (_heads_entry)."""
    result = PushResult(through_seal=after_seal)
    filed = box.device_name(keys.first, device)
    n, link = _caught_up(conn, hub, keys, device, filed, signer, log, result)
    head = head_seal(conn)
    if head is None or head.seq <= after_seal:
        return result
    pending: list[tuple[int, str, dict[str, Any], str, bytes]] = []
    for seal, table, row in records.written_after(conn, after_seal, _pull_seals(conn)):
        key = records.key_text(table, row)
        entry = (seal, table, row, key, box.row_name(keys.first, table, key))
        own = table == "identity_epochs" and (row["agent_id"], row["valid_from"]) == (
            HOUSEKEEPER,
            signer.valid_from,
        )
        pending.insert(0, entry) if own else pending.append(entry)
    held: set[bytes] = set()
    for start in range(0, len(pending), NAMES_BATCH):
        held |= hub.names_held([entry[-1] for entry in pending[start : start + NAMES_BATCH]])
    if any(entry[-1] not in held for entry in pending):
        pending.append(_heads_entry(conn, keys.first, device, head.seq))
        held |= hub.names_held([pending[-1][-1]])
    sending = _Sending(hub, filed, log, told, result)
    for seal, table, row, key, name in pending:
        if name in held:
            continue
        held.add(name)  # a row written twice under one key (never): sent once
        n += 1
        record = records.Record(device, n, link, table, row, signer.valid_from, seal)
        sealed = _sealed(keys, keys.newest, record, signer)
        link = box.record_link(sealed)
        sending.add(Pushed.of(record, key, link, keys.newest), name, sealed)
    sending.flush()
    result.records, result.through_seal = sending.sent, head.seq
    return result


class _Sending:
    """A push's records on their way, a hub transaction each PUSH_BATCH; each batch the hub took
    is then written to the log."""

    def __init__(
        self, hub: Hub, filed: str, log: PushedLog, told: Callable[[int], None] | None, result: PushResult
    ) -> None:
        self.hub, self.filed, self.log, self.told, self.result = hub, filed, log, told, result
        self.batch: list[tuple[int, bytes, bytes]] = []
        self.entries: list[Pushed] = []
        self.sent = 0

    def add(self, entry: Pushed, name: bytes, sealed: bytes) -> None:
        self.batch.append((entry.n, name, sealed))
        self.entries.append(entry)
        self.result.bytes_sent += len(sealed)
        if len(self.batch) >= PUSH_BATCH:
            self.flush()
            if self.told is not None:
                self.told(self.sent)

    def flush(self) -> None:
        if self.batch:
            self.hub.append(self.filed, self.batch)
            self.log.add(self.entries)
            self.sent += len(self.batch)
            self.batch, self.entries = [], []


def _heads_entry(
    conn: Connection, content_key: bytes, device: str, seal: int
) -> tuple[int, str, dict[str, Any], str, bytes]:
    """The record of how far this device has pulled, which a push that sends rows ends with
    (aimos/hub/heads.py): one per hub order number pulled through (its name the same for both).
    No table holds its row: the push log keeps it, to send it again the same (_resend)."""
    pulled = pulled_heads(conn)
    row = heads_row(device, pulled.through, pulled.devices)
    key = records.key_text(HEADS, row)
    return seal, HEADS, row, key, box.row_name(content_key, HEADS, key)


def _sealed(keys: box.KeyRing, generation: int, record: records.Record, signer: Signer) -> bytes:
    """``record`` signed by ``signer`` and sealed under content key ``generation``."""
    plaintext = records.encode(record)
    return keys.seal(signer.key.sign(records.signed_message(plaintext)) + plaintext, generation)


def _pull_seals(conn: Connection) -> frozenset[int]:
    """The seals of this brain's pulls (rows other devices wrote), but its first: a join pulls and
    enrols the device in one transaction."""
    first = queries.first_seal(conn)
    pulls = queries.pull_seals(conn)
    return frozenset(pulls - {first})


def _caught_up(
    conn: Connection,
    hub: Hub,
    keys: box.KeyRing,
    device: str,
    filed: str,
    signer: Signer,
    log: PushedLog,
    result: PushResult,
) -> tuple[int, str]:
    """This device's newest record as the hub holds it (number, link), once the hub holds every
    one the log holds: what it lost is sent again. A log behind the hub learns the rest from it."""
    newest = hub.newest_of(filed)
    hub_n, hub_link = (newest[0], box.record_link(newest[1])) if newest else (0, box.GENESIS_LINK)
    mine_n = log.newest()[0]
    if hub_n > mine_n:
        _learn(conn, hub, keys, device, filed, log, mine_n, result)
        return hub_n, hub_link
    if log.link_of(hub_n) != hub_link:
        raise _forked_error(
            f"the hub holds as record {hub_n} of this device ({device}) a record this device did not push",
            "Nothing was pushed. Its records were written again elsewhere (a copy of this device's brain "
            "or keys), or the hub's were changed: check who can write to the hub.",
        )
    if hub_n < mine_n:
        _resend(conn, keys, device, signer, _Sending(hub, filed, log, None, result), hub_n, hub_link)
    return log.newest()


def _learn(
    conn: Connection,
    hub: Hub,
    keys: box.KeyRing,
    device: str,
    filed: str,
    log: PushedLog,
    mine_n: int,
    result: PushResult,
) -> None:
    """The log learns this device's records after ``mine_n`` from the hub, each opened, signed by
    this device's housekeeper and following the one before. One it did not sign (filed under its
    name by another device) is named in ``result`` and left out; the push follows it all the same,
    as every device refuses it."""
    link = log.link_of(mine_n)
    while found := hub.of_device_after(filed, mine_n, PULL_BATCH):
        entries = []
        for row in found:
            name = f"#{row.seq} (device {device}, record {row.n})"
            if row.n != mine_n + 1:
                raise _forked_error(
                    f"the hub holds no record {mine_n + 1} of this device ({device}) before record {row.n}",
                    "Nothing was pushed. Records of this device were deleted from the middle of its chain "
                    "on the hub: check who can write to it.",
                )
            mine_n, prev, link = row.n, link, box.record_link(row.box)
            try:
                record = _opened(conn, keys, row, name)
            except VerificationError:
                record = None
            if record is None or record.device != device:
                result.not_its_own.append(f"hub record #{row.seq} (record {row.n})")
                continue
            if record.prev != prev:
                raise _forked_error(
                    f"hub record {name} does not follow record {mine_n - 1} this device pushed",
                    "Nothing was pushed. The hub's records of this device were changed: check who can "
                    "write to the hub.",
                )
            entries.append(Pushed.of(record, record.key_text(), link, box.generation_of(row.box)))
        log.add(entries)


def _resend(
    conn: Connection,
    keys: box.KeyRing,
    device: str,
    signer: Signer,
    sending: _Sending,
    hub_n: int,
    link: str,
) -> None:
    """Send again this device's records after ``hub_n`` (the hub lost them), each rebuilt from
    its row (a heads record's, which no table holds, from the log) and sealed under the content key
    generation it was first sent under: the same bytes when the housekeeper that signed it signs
    now and its row is as it was (else a new record at its number, counted in ``resent_changed``)."""
    for entry in sending.log.after(hub_n):
        if entry.row is not None:
            row: dict[str, Any] | None = json.loads(entry.row)  # a heads record: no table holds it
        else:
            row = records.pushed_row(conn, entry.table, entry.key)
        if row is None:
            raise _forked_error(
                f"record {entry.n} this device pushed ({entry.table}) holds a row this brain no longer holds",
                "Nothing more was pushed. This brain is not the one that pushed it: check `aimos verify`.",
            )
        record = records.Record(device, entry.n, link, entry.table, row, signer.valid_from, entry.seal)
        # (a generation this device no longer holds: never, every one it was given is kept)
        generation = entry.generation if entry.generation in keys.keys else keys.newest
        sealed = _sealed(keys, generation, record, signer)
        link = box.record_link(sealed)
        sending.result.resent_changed += link != entry.link
        name = box.row_name(keys.first, entry.table, entry.key)
        sending.add(Pushed.of(record, entry.key, link, generation), name, sealed)
    sending.flush()
    sending.result.resent += sending.sent


def pulled_heads(conn: Connection) -> Heads:
    """How far this brain has pulled (the hub_pulls rows)."""
    through = 0
    heads: dict[str, tuple[int, str]] = {}
    refused: dict[str, int] = {}
    tops: dict[str, int] = {}
    for r in queries.pulled_devices(conn):
        device = str(r["device"])
        if r["n"] is not None:
            heads[device] = (int(r["n"]), str(queries.pulled_link(conn, device, r["n"])))
        tops[device] = int(r["top"])
        through = max(through, int(r["seq"]))
        if r["refused"] is not None:
            refused[device] = int(r["refused"])
    return Heads(through, heads, refused, tops)


def refusals(conn: Connection, heads: Heads) -> dict[str, int]:
    """Per device this brain refuses, the first of its records refused: what its pulls refused
    (``heads``), and after the last record a cut of the master's accepts (hub_cuts)."""
    out = dict(heads.refused_from)
    for dev, through in cuts(conn).items():
        out[dev] = min(out.get(dev, through + 1), through + 1)
    return out


def newest_read(conn: Connection, content_key: bytes, remembered: Anchor | None) -> Anchor | None:
    """The last record this brain read on the hub: ``remembered`` (the state file's) when no pull
    applied anything since it was kept, else the last record of the newest pull (hub_pulls); None
    before the first."""
    pulls = _pulls(conn)
    if remembered is not None and remembered.pulls == pulls:
        return remembered
    last = queries.last_pulled(conn)
    if last is None:
        return None
    filed = box.device_name(content_key, str(last["device"]))
    return Anchor(int(last["hub_seq"]), filed, int(last["device_n"]), str(last["record_hash"]), pulls)


def _pulls(conn: Connection) -> int:
    """The newest hub_pulls row's number (rows are only added: a pull that applied anything since
    an anchor was kept made it larger)."""
    return queries.newest_pull(conn)


def went_back(hub: Hub, anchor: Anchor | None) -> bool:
    """Whether the hub no longer holds, at its order number, the record this brain read last (its
    database restored from an older copy, or records deleted)."""
    return anchor is not None and anchor.seq > 0 and not anchor.held_by(hub.at(anchor.seq))


def pull(
    conn: Connection,
    hub: Hub,
    keys: box.KeyRing,
    device: str,
    housekeeper: Any,
    told: Callable[[int], None] | None = None,
    *,
    batch: int = PULL_BATCH,
    read: Anchor | None = None,
) -> PullResult:
    """Apply every record the hub holds after the one this brain read last (``read``: as the state
    file remembers it; newest_read), a batch per write transaction (``housekeeper`` None: the
    caller holds the transaction, a join). A record a guard or the verifier refuses refuses its
    whole batch (nothing of it is applied), unless its device is revoked or the record holds a row
    its device may not write (records.check_pushed_by: a misbehaving device): then that record and
    every later one of that device are refused by name and skipped, and the batch is applied
    without them (every device decides the same, in the hub's order).

    A hub that no longer holds the record read last, or whose records skip a number of a device
    (its order went back and on: the record read last may be there again), is read again from the
    start: what this brain holds is skipped (_unheld)."""
    result = PullResult()
    own = box.device_name(keys.first, device)  # (this device's own records: not again)
    start = newest_read(conn, keys.first, read)
    result.went_back = went_back(hub, start)
    through = 0 if result.went_back or start is None else start.seq
    last: HubRow | None = None
    while True:
        heads = pulled_heads(conn)
        fetched = hub.after(through, batch, own)
        if not fetched:
            break
        fresh = _unheld(conn, keys.first, fetched, heads)
        try:
            _apply_fetched(conn, fresh, keys, device, housekeeper, heads, result)
        except _Behind as behind:
            if result.went_back:
                raise behind.error from None
            result.went_back, through = True, 0
            continue
        result.records += len(fetched) - len(fresh)
        result.skipped += len(fetched) - len(fresh)
        result.through = through = fetched[-1].seq
        last = fetched[-1]
        if told is not None:
            told(result.records)
        if len(fetched) < batch:
            break
    pulls = _pulls(conn)
    if last is not None:
        result.anchor = Anchor.of(last, pulls)
    elif result.went_back or start is None:
        result.anchor = Anchor(0, "", 0, box.GENESIS_LINK, pulls)  # read the hub from its start: nothing
    else:
        result.anchor = start
    return result


def catch_up(
    conn: Connection,
    hub: Hub,
    keys: box.KeyRing,
    device: str,
    housekeeper: Any,
    missing: Iterable[str],
    read: Anchor | None = None,
) -> PullResult:
    """The records of the ``missing`` devices that another device has pulled and this one was not
    given (aimos/hub/heads.py), which the hub's order went past: asked for by device and number
    (the next batch of each) and applied as a pull applies them (a record that skips a number of
    its device is refused: the hub lost it, or went back).

    It reads by device and number, not in the hub's order, so the record a pull read last
    (``read``) stays the one the next pull starts after: the result's anchor is ``read``, kept
    current (newest_read) when it was before."""
    result = PullResult(anchor=read)
    before = _pulls(conn)
    heads = pulled_heads(conn)
    fetched = sorted(
        (
            hub_row
            for d in missing
            for hub_row in hub.of_device_after(box.device_name(keys.first, d), heads.past(d), PULL_BATCH)
        ),
        key=lambda hub_row: hub_row.seq,
    )
    try:
        _apply_fetched(conn, fetched, keys, device, housekeeper, heads, result)
    except _Behind as behind:
        raise behind.error from None
    if read is not None and read.pulls == before:
        result.anchor = dataclasses.replace(read, pulls=_pulls(conn))
    return result


def _apply_fetched(
    conn: Connection,
    fetched: list[HubRow],
    keys: box.KeyRing,
    device: str,
    housekeeper: Any,
    heads: Heads,
    result: PullResult,
) -> None:
    """One batch in one write transaction; a revoked, cut or misbehaving device's records refused
    by name from the first of its write transaction on (a cut: after its number), and the batch
    tried again without them."""
    if not fetched:
        return
    cut = refusals(conn, heads)
    while True:
        refused: list[str] = []
        try:
            with _batch_transaction(conn, housekeeper):
                applied = _apply_batch(conn, fetched, keys, device, heads, cut, refused, result)
            break
        except _Refuse as refusal:
            cut[refusal.device] = min(refusal.n, cut.get(refusal.device, refusal.n))
    result.refused += refused
    result.records += len(fetched)
    result.applied += applied


def _unheld(conn: Connection, content_key: bytes, fetched: list[HubRow], heads: Heads) -> list[HubRow]:
    """The records this brain does not hold yet. One it holds (at a number of its device this brain
    pulled) is left out, when its link is the one this brain keeps of it (it keeps its newest of each
    pull); another link there is a fork, refused by name. One at or after its device's refusal is
    left out too: it was refused, whatever it holds."""
    names = {box.device_name(content_key, fp): fp for fp in heads.tops}
    fresh = []
    for row in fetched:
        fp = names.get(row.device)
        if fp is None or row.n > heads.past(fp) or row.size > MAX_RECORD_BYTES:  # (_opened refuses it)
            fresh.append(row)
            continue
        if row.n >= heads.refused_from.get(fp, row.n + 1):
            continue
        kept = queries.pulled_link(conn, fp, row.n)
        if kept is not None and kept != box.record_link(row.box):
            raise _forked_error(
                f"hub record #{row.seq} (device {fp}, record {row.n}) is not the record {row.n} of that "
                "device this brain pulled before: a fork",
                "Nothing from this pull was applied. That device's records were written again with other "
                "content (a copy of its brain or keys used elsewhere), or the hub's were changed: check "
                "which devices hold this brain (`aimos hub devices`) and revoke one that misbehaves.",
            )
    return fresh


@contextmanager
def _batch_transaction(conn: Connection, housekeeper: Any) -> Iterator[None]:
    """A batch's own write transaction, sealed by ``housekeeper``; None: the caller holds the
    transaction (a join, which pulls everything in one), and the batch is a savepoint of it."""
    if housekeeper is not None:
        with write_transaction(conn, housekeeper):
            yield
        return
    with queries.pull_savepoint(conn):
        yield


def _apply_batch(
    conn: Connection,
    fetched: Iterable[HubRow],
    keys: box.KeyRing,
    device: str,
    heads: Heads,
    cut: dict[str, int],
    refused: list[str],
    result: PullResult,
) -> int:
    applied = 0
    heard: list[tuple[str, dict[str, Any]]] = []
    touched: dict[str, tuple[str, int]] = {}  # memory -> the first record of this batch that touched it
    chains = dict(heads.devices)
    moved: dict[str, tuple[int, str, int]] = {}
    refusing: dict[str, int] = {}  # device -> the first of its records this batch refused unread
    begun: dict[tuple[str, int], int] = {}  # (device, its seal) -> the first record of it in this batch
    known = {box.device_name(keys.first, fp): fp for fp in device_queries.device_fps(conn)}
    last_seq = 0
    applied_top: dict[str, int] = {}  # per device, the newest of its records this batch applied
    for hub_row in fetched:
        # "hub record {name}": the device by its id when this brain knows it (the hub files by a keyed name)
        name = f"#{hub_row.seq} (device {known.get(hub_row.device, hub_row.device)}, record {hub_row.n})"
        if hub_row.seq <= last_seq:
            raise _order_error(name, "comes out of the hub's order")
        last_seq = hub_row.seq
        claimed = known.get(hub_row.device)
        if claimed is not None and claimed != device and hub_row.n >= cut.get(claimed, hub_row.n + 1):
            # a cut device's later record is refused unread: what it holds cannot matter, and a box
            # it garbled (its hub login outlives its revocation) cannot stop a pull. Its number and
            # link are the device's to choose, so neither is kept: only the refusal (_pulled_rows);
            # the next pull starts after it all the same (the pull's anchor, in the state file)
            refused.append(f"hub record {name}: {_CUT_WORDS}")
            refusing.setdefault(claimed, hub_row.seq)
            continue
        record = _opened(conn, keys, hub_row, name)
        name = f"#{hub_row.seq} (device {record.device}, record {record.n})"
        if record.device != device and record.n >= cut.get(record.device, record.n + 1):
            # (a device this brain learns of in this batch, or cut by a record of it): as above
            refused.append(f"hub record {name}: {_CUT_WORDS}")
            refusing.setdefault(record.device, hub_row.seq)
            continue
        first_of_seal = begun.setdefault((record.device, record.seal), record.n)
        n, link = chains.get(record.device, (0, box.GENESIS_LINK))
        if record.n != n + 1 or record.prev != link:
            error = _order_error(
                name, f"does not follow record {n} of device {record.device} (cut, reordered or spliced)"
            )
            raise _Behind(error) if record.n > n + 1 else error
        chains[record.device] = (record.n, box.record_link(hub_row.box))
        moved[record.device] = (record.n, box.record_link(hub_row.box), hub_row.seq)
        if record.device == device:
            continue  # this device's own
        if record.table == HEADS:
            heard.append((record.device, record.row))  # a device's heads: no row of the brain
            continue
        if not _apply_record(conn, record, name, first_of_seal, cut, applied_top):
            continue
        applied += 1
        applied_top[record.device] = record.n
        memory = _memory_of(record)
        if memory is not None:
            touched.setdefault(memory, (record.device, first_of_seal))
    _verify_touched(conn, touched)
    result.memories |= set(touched)
    result.heard += heard
    pulled = _pulled_rows(conn, heads, moved, refusing, cut)
    if pulled:
        seal = (head.seq if (head := head_seal(conn)) else 0) + 1
        now = int(time.time())
        queries.insert_pulls(conn, [(seq, dev, n, link, seal, now, r) for seq, dev, n, link, r in pulled])
    return applied


def _pulled_rows(
    conn: Connection,
    heads: Heads,
    moved: dict[str, tuple[int, str, int]],
    refusing: dict[str, int],
    cut: dict[str, int],
) -> list[tuple[int, str, int, str, int | None]]:
    """A batch's hub_pulls rows (hub order number, device, record number, link, refused from): per
    device the newest record it took (naming the refusal when a cut this batch brought refuses
    it), and per device whose records it refused the refusal, when the brain does not hold it yet
    (a misbehaving device's: a cut of the master's is a record of the brain's own). That row holds
    no record: its number is the first refused (or past the device's rows), its link
    _REFUSED_LINK, never a number or link the refused device chose."""
    held = refusals(conn, heads)  # (the cuts this batch brought are the brain's now)
    out: list[tuple[int, str, int, str, int | None]] = []
    for dev in sorted(set(moved) | set(refusing)):
        top, first = heads.tops.get(dev, 0), cut.get(dev)
        if dev in moved:
            n, link, seq = moved[dev]
            named = first if first is not None and first <= n else None
            out.append((seq, dev, n, link, named))
            top = n
            if named is not None:
                held[dev] = min(held.get(dev, named), named)
        if dev in refusing and first is not None and first < held.get(dev, first + 1):
            n = max(first, top + 1)
            if n <= _MAX_RECORD_NUMBER:
                out.append((refusing[dev], dev, n, _REFUSED_LINK, first))
    return out


def _apply_record(
    conn: Connection,
    record: records.Record,
    name: str,
    first_of_seal: int,
    cut: dict[str, int],
    applied_top: dict[str, int],
) -> bool:
    """Insert one pulled record's row, checked against what its device may write; False when
    this brain held it already."""
    try:
        found = home(conn)
        records.check_pushed_by(conn, record, None if found is None else str(found["device_fp"]), name)
        if not records.apply(conn, record, name):
            return False
        if record.table == "hub_cuts":
            _cut_in_batch(record.row, cut, applied_top)
    except IntegrityError as exc:
        # a revoked device, or one that pushed a row it did not or may not write (only a
        # misbehaving device signs such a record): its records from this one on are refused
        if exc.reason == "hub_row_misattributed" or revoked_device(conn, record.device):
            # from the first record of the write transaction it came in: none of it applies
            raise _Refuse(record.device, first_of_seal, exc.message) from None
        raise
    return True


def _verify_touched(conn: Connection, touched: dict[str, tuple[str, int]]) -> None:
    """The in-database verifier over every memory the batch touched: a failure of a revoked
    device's memory refuses that device from the record that touched it, any other the batch."""
    failures = [r for r in verify_memories(conn, touched) if not r.ok]
    for failure in failures:
        origin, n = touched[failure.memory_id]
        if revoked_device(conn, origin):
            raise _Refuse(origin, n, f"memory {failure.memory_id} does not verify ({failure.reason})")
    if failures:
        first = failures[0]
        raise VerificationError(
            f"memory {first.memory_id} does not verify after this pull ({first.reason}"
            + (f": {first.detail}" if first.detail else "")
            + f"; {len(failures)} in all)",
            "Nothing from this pull was applied. Its rows were signed, but do not verify together.",
            reason="hub_pull_unverified",
        )


def _cut_in_batch(row: dict[str, Any], cut: dict[str, int], applied_top: dict[str, int]) -> None:
    """A cut that arrived in this batch: the cut device's later records are refused from here on,
    and when this batch already applied one of them, the batch is tried again without them."""
    device, first_refused = str(row["device_fp"]), int(row["through_n"]) + 1
    cut[device] = min(cut.get(device, first_refused), first_refused)
    if applied_top.get(device, 0) >= first_refused:
        raise _Refuse(device, first_refused, "its device was cut by the master")


def _opened(conn: Connection, keys: box.KeyRing, hub_row: HubRow, name: str) -> records.Record:
    """A record opened, checked for shape, filed under its own device and number, and signed by a
    housekeeper epoch of the device it names (an epoch this brain holds, or the one the record
    itself carries: a device's first record is its housekeeper's epoch)."""
    if hub_row.size > MAX_RECORD_BYTES:
        raise VerificationError(
            f"hub record {name} holds {hub_row.size:,} bytes, more than any record aimos writes",
            "Nothing from this pull was applied, and the record was not read. Check who can write to "
            "the hub.",
            reason="hub_record_oversized",
        )
    opened = keys.open(hub_row.box, name)
    signature, plaintext = opened[:64], opened[64:]
    record = records.decode(plaintext, name)
    if (box.device_name(keys.first, record.device), record.n) != (hub_row.device, hub_row.n):
        raise _order_error(name, "is filed on the hub under another device or number than it says")
    epoch: dict[str, Any] | None = None
    found = device_queries.epoch_of(conn, HOUSEKEEPER, record.signer)
    if found is not None:
        epoch = dict(found)
    elif record.table == "identity_epochs":
        carried = record.row
        if (carried.get("agent_id"), carried.get("valid_from")) == (HOUSEKEEPER, record.signer):
            epoch = {"public_key_b64u": carried.get("public_key_b64u"), "device_fp": carried.get("device_fp")}
    if (
        epoch is None
        or epoch["device_fp"] != record.device
        or len(signature) != 64
        or not ed25519_verify(str(epoch["public_key_b64u"]), records.signed_message(plaintext), signature)
    ):
        raise VerificationError(
            f"hub record {name} is not signed by a housekeeper of the device it names",
            "Nothing from this pull was applied. It was not pushed by that device: check which devices "
            "hold this brain (`aimos hub devices`) and revoke one that misbehaves.",
            reason="hub_record_unsigned",
        )
    return record


def _memory_of(record: records.Record) -> str | None:
    value = record.row.get("memory_id")
    if value is None and record.table == "memory_supersessions":
        value = record.row.get("new_memory_id")
    return value if isinstance(value, str) else None


def _order_error(name: str, why: str) -> VerificationError:
    return VerificationError(
        f"hub record {name} {why}",
        "Nothing from this pull was applied. The hub's records were changed: check who can write to it.",
        reason="hub_record_out_of_order",
    )


def _forked_error(what: str, fix: str) -> VerificationError:
    return VerificationError(what, fix, reason="hub_record_forked")
