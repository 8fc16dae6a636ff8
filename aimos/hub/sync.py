"""Push and pull: the rows this device wrote go to the hub, sealed; the rows other devices wrote
come back, each opened, checked against its device's chain of records, inserted through the
brain's guards and verified before the pull commits, then sealed by this device's housekeeper.

A pull is all or nothing a batch at a time: a record that does not open, breaks its device's
chain, is refused by a guard or fails the verifier refuses the whole batch by name, and nothing
of it is applied. A push is idempotent: the hub names each row by a keyed hash of its table and
key and keeps one copy, and each device's records continue from the newest one the hub holds, so
a push cut off anywhere is finished by the next one, with nothing lost or sent twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

import apsw

from aimos.crypto.ed25519 import verify as ed25519_verify
from aimos.errors import IntegrityError, VerificationError
from aimos.hub import box, records
from aimos.hub.heads import HEADS, heads_row
from aimos.identity.devices import cuts, home, revoked_device
from aimos.identity.epochs import Signer
from aimos.learning.verifier import verify_memories
from aimos.store.connection import one, rows, write_transaction
from aimos.store.seals import head_seal
from aimos.vocabulary import HOUSEKEEPER

PULL_BATCH = 2000  # records applied, and verified, in one write transaction
PUSH_BATCH = 1000  # records sent in one hub transaction
NAMES_BATCH = 1000  # row names asked about at once
# the largest record a pull takes: a row holding a whole save (at most memory/save's 1 MiB
# canonical body), escaped and in base64; a hub's larger one is refused unread
MAX_RECORD_BYTES = 4 * 1_048_576


@dataclass(frozen=True)
class HubRow:
    """A record as the hub holds it: its order number, the device and record number it claims in
    the clear (checked against the sealed record), and the box."""

    seq: int
    device: str
    n: int
    box: bytes  # empty when the hub's box is over MAX_RECORD_BYTES (not read)
    size: int = 0  # the box's size on the hub


class Hub(Protocol):
    """What sync needs of a hub (aimos/hub/postgres.py is the one there is)."""

    def newest_of(self, device: str) -> tuple[int, bytes] | None: ...
    def names_held(self, names: list[bytes]) -> set[bytes]: ...
    def append(self, device: str, items: list[tuple[int, bytes, bytes]]) -> None: ...
    def after(self, seq: int, limit: int, other_than: str) -> list[HubRow]: ...
    def of_device_after(self, device: str, n: int, limit: int) -> list[HubRow]: ...


@dataclass
class PushResult:
    records: int = 0
    through_seal: int = 0
    bytes_sent: int = 0


@dataclass
class PullResult:
    records: int = 0
    applied: int = 0
    memories: set[str] = field(default_factory=set)
    through: int = 0
    # records of revoked devices refused (and skipped): "hub record #N (device D, record n): why"
    refused: list[str] = field(default_factory=list)
    # the heads records pulled: (the device that pushed it, its row), aimos/hub/heads.py
    heard: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


@dataclass(frozen=True)
class Heads:
    """How far this brain has pulled: the hub's order number, per device its newest record
    (number, link), and per revoked device the record from which all of its are refused."""

    through: int
    devices: dict[str, tuple[int, str]]
    refused_from: dict[str, int]


class _Refuse(Exception):
    """A revoked device's record refused: the batch is tried again without it and its followers."""

    def __init__(self, device: str, n: int, why: str) -> None:
        super().__init__(why)
        self.device, self.n, self.why = device, n, why


def push(
    conn: apsw.Connection,
    hub: Hub,
    keys: box.KeyRing,
    device: str,
    after_seal: int,
    signer: Signer,
    told: Callable[[int], None] | None = None,
) -> PushResult:
    """Send every row the seals after ``after_seal`` sealed that the hub does not hold yet, each
    signed by this device's housekeeper (``signer``; its own epoch's row, when it is among them,
    goes first, so every record after it can be checked), sealed under the newest generation of
    the content key in ``keys``."""
    result = PushResult(through_seal=after_seal)
    head = head_seal(conn)
    if head is None or head.seq <= after_seal:
        return result
    pending: list[tuple[int, str, dict[str, Any], bytes]] = []
    for seal, table, row in records.written_after(conn, after_seal):
        entry = (seal, table, row, box.row_name(keys.first, table, records.key_text(table, row)))
        own = table == "identity_epochs" and (row["agent_id"], row["valid_from"]) == (
            HOUSEKEEPER,
            signer.valid_from,
        )
        pending.insert(0, entry) if own else pending.append(entry)
    held: set[bytes] = set()
    for start in range(0, len(pending), NAMES_BATCH):
        held |= hub.names_held([name for _s, _t, _r, name in pending[start : start + NAMES_BATCH]])
    if any(name not in held for _s, _t, _r, name in pending):
        pending.append(_heads_entry(conn, keys.first, device, head.seq))
        held |= hub.names_held([pending[-1][3]])
    filed = box.device_name(keys.first, device)
    newest = hub.newest_of(filed)
    n, link = (newest[0], box.record_link(newest[1])) if newest else (0, box.GENESIS_LINK)
    batch: list[tuple[int, bytes, bytes]] = []
    for seal, table, row, name in pending:
        if name in held:
            continue
        held.add(name)  # a row written twice under one key (never): sent once
        n += 1
        plaintext = records.encode(records.Record(device, n, link, table, row, signer.valid_from, seal))
        signature = signer.key.sign(records.signed_message(plaintext))
        sealed = keys.seal(signature + plaintext)
        link = box.record_link(sealed)
        batch.append((n, name, sealed))
        result.bytes_sent += len(sealed)
        if len(batch) >= PUSH_BATCH:
            hub.append(filed, batch)
            result.records += len(batch)
            batch = []
            if told is not None:
                told(result.records)
    if batch:
        hub.append(filed, batch)
        result.records += len(batch)
    result.through_seal = head.seq
    return result


def _heads_entry(
    conn: apsw.Connection, content_key: bytes, device: str, seal: int
) -> tuple[int, str, dict[str, Any], bytes]:
    """The record of how far this device has pulled, which a push that sends rows ends with
    (aimos/hub/heads.py): one per hub order number pulled through (its name the same for both)."""
    pulled = pulled_heads(conn)
    row = heads_row(device, pulled.through, pulled.devices)
    return seal, HEADS, row, box.row_name(content_key, HEADS, records.key_text(HEADS, row))


def pulled_heads(conn: apsw.Connection) -> Heads:
    """How far this brain has pulled (the hub_pulls rows)."""
    through = 0
    heads: dict[str, tuple[int, str]] = {}
    refused: dict[str, int] = {}
    for r in rows(
        conn,
        "SELECT device, MAX(device_n) AS n, MAX(hub_seq) AS seq, MIN(refused_from) AS refused"
        " FROM hub_pulls GROUP BY device",
    ):
        link = rows(
            conn,
            "SELECT record_hash FROM hub_pulls WHERE device = ? AND device_n = ?",
            (r["device"], r["n"]),
        )[0]["record_hash"]
        heads[str(r["device"])] = (int(r["n"]), str(link))
        through = max(through, int(r["seq"]))
        if r["refused"] is not None:
            refused[str(r["device"])] = int(r["refused"])
    return Heads(through, heads, refused)


def pull(
    conn: apsw.Connection,
    hub: Hub,
    keys: box.KeyRing,
    device: str,
    housekeeper: Any,
    told: Callable[[int], None] | None = None,
    *,
    batch: int = PULL_BATCH,
) -> PullResult:
    """Apply every record the hub holds after what this brain pulled, a batch per write
    transaction (``housekeeper`` None: the caller holds the transaction, a join). A record a
    guard or the verifier refuses refuses its whole batch (nothing of it is applied), unless its
    device is revoked or the record holds a row its device may not write (records.check_pushed_by:
    a misbehaving device): then that record and every later one of that device are refused by
    name and skipped, and the batch is applied without them (every device decides the same, in
    the hub's order)."""
    result = PullResult()
    while True:
        heads = pulled_heads(conn)
        # (this device's own records: not again)
        fetched = hub.after(heads.through, batch, box.device_name(keys.first, device))
        if not fetched:
            break
        _apply_fetched(conn, fetched, keys, device, housekeeper, heads, result)
        result.through = fetched[-1].seq
        if told is not None:
            told(result.records)
        if len(fetched) < batch:
            break
    return result


def catch_up(
    conn: apsw.Connection, hub: Hub, keys: box.KeyRing, device: str, housekeeper: Any, missing: Iterable[str]
) -> PullResult:
    """The records of the ``missing`` devices that another device has pulled and this one was not
    given (aimos/hub/heads.py), which the hub's order went past: asked for by device and number
    (the next batch of each) and applied as a pull applies them."""
    result = PullResult()
    heads = pulled_heads(conn)
    fetched = sorted(
        (
            hub_row
            for d in missing
            for hub_row in hub.of_device_after(
                box.device_name(keys.first, d), heads.devices.get(d, (0, ""))[0], PULL_BATCH
            )
        ),
        key=lambda hub_row: hub_row.seq,
    )
    if fetched:
        _apply_fetched(conn, fetched, keys, device, housekeeper, heads, result)
    return result


def _apply_fetched(
    conn: apsw.Connection,
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
    cut = dict(heads.refused_from)
    for dev, through in cuts(conn).items():  # the master's cuts: refused after their number
        cut[dev] = min(cut.get(dev, through + 1), through + 1)
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


@contextmanager
def _batch_transaction(conn: apsw.Connection, housekeeper: Any) -> Iterator[None]:
    """A batch's own write transaction, sealed by ``housekeeper``; None: the caller holds the
    transaction (a join, which pulls everything in one), and the batch is a savepoint of it."""
    if housekeeper is not None:
        with write_transaction(conn, housekeeper):
            yield
        return
    conn.execute("SAVEPOINT aimos_pull_batch")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK TO aimos_pull_batch")
        conn.execute("RELEASE aimos_pull_batch")
        raise
    conn.execute("RELEASE aimos_pull_batch")


def _apply_batch(
    conn: apsw.Connection,
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
    begun: dict[tuple[str, int], int] = {}  # (device, its seal) -> the first record of it in this batch
    known = {
        box.device_name(keys.first, str(fp)): str(fp)
        for (fp,) in conn.execute("SELECT DISTINCT device_fp FROM identity_epochs")
    }
    last_seq = 0
    applied_top: dict[str, int] = {}  # per device, the newest of its records this batch applied
    for hub_row in fetched:
        # "hub record {name}": the device by its id when this brain knows it (the hub files by a keyed name)
        name = f"#{hub_row.seq} (device {known.get(hub_row.device, hub_row.device)}, record {hub_row.n})"
        if hub_row.seq <= last_seq:
            raise _order_error(name, "comes out of the hub's order")
        last_seq = hub_row.seq
        record = _opened(conn, keys, hub_row, name)
        name = f"#{hub_row.seq} (device {record.device}, record {record.n})"
        first_of_seal = begun.setdefault((record.device, record.seal), record.n)
        n, link = chains.get(record.device, (0, box.GENESIS_LINK))
        if record.n != n + 1 or record.prev != link:
            raise _order_error(
                name, f"does not follow record {n} of device {record.device} (cut, reordered or spliced)"
            )
        chains[record.device] = (record.n, box.record_link(hub_row.box))
        moved[record.device] = (record.n, box.record_link(hub_row.box), hub_row.seq)
        if record.device == device:
            continue  # this device's own
        if record.device in cut and record.n >= cut[record.device]:
            refused.append(
                f"hub record {name}: its device is revoked or cut by the master,"
                " or pushed a row it may not write"
            )
            continue
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
    if moved:
        seal = (head.seq if (head := head_seal(conn)) else 0) + 1
        now = int(time.time())
        conn.executemany(
            "INSERT INTO hub_pulls (hub_seq, device, device_n, record_hash, local_seal, pulled_at,"
            " refused_from) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (seq, dev, n, link, seal, now, cut.get(dev) if cut.get(dev, n + 1) <= n else None)
                for dev, (n, link, seq) in sorted(moved.items())
            ],
        )
    return applied


def _apply_record(
    conn: apsw.Connection,
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


def _verify_touched(conn: apsw.Connection, touched: dict[str, tuple[str, int]]) -> None:
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


def _opened(conn: apsw.Connection, keys: box.KeyRing, hub_row: HubRow, name: str) -> records.Record:
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
    epoch = one(
        conn,
        "SELECT public_key_b64u, device_fp FROM identity_epochs WHERE agent_id = ? AND valid_from = ?",
        (HOUSEKEEPER, record.signer),
    )
    if epoch is None and record.table == "identity_epochs":
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
