"""The seal chain: every retained row accounted for, and the brain's newest state anchored outside it.

Each write transaction ends with one housekeeper-signed seal (the hashing is the pure kernel in
``aimos.crypto.commitments``): for every table the transaction added rows to, the table's row
count, highest rowid and chain (the previous chain folded with the hashes of the new rows); the
state root over all tables; the link to the previous seal. ``seal_heads`` caches the newest entry
per table so a write need not replay the chain; it is checked against the newest seal's state root
before it is used. After the commit the newest seal is anchored outside the brain (store/freshness.py),
so an older copy of the brain put back (a rollback, a lost WAL) is found.

A write begins by checking that the newest seal verifies, that ``seal_heads`` agrees with it, that
no table holds rows beyond its sealed head (rows no seal covers are never sealed afterwards) and
that each table holds as many rows as sealed (a row deleted from the middle of a table leaves its
highest rowid as it was). A connection that wrote last checks once: until another connection
commits, what it checked still holds.
A brain with no seal yet (a new install, or a brain from before seals) is sealed whole by its
first sealed write.

``verify_seals`` re-hashes every row of every sealed table against the seal chain and names what
differs: an altered, deleted, injected or unsealed row of a table, within one seal's range.
"""

from __future__ import annotations

import contextlib
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

import apsw

from aimos.crypto import commitments
from aimos.crypto.commitments import SealEntry
from aimos.crypto.ed25519 import verify as ed25519_verify
from aimos.errors import AimosError, EpochRevokedError, SealError
from aimos.plural import plural
from aimos.store.cells import text_of
from aimos.verify.kit.redaction import RowSwap, check_record, row_swaps
from aimos.vocabulary import HOUSEKEEPER

# Not sealed: the seal chain itself and its cache (each checked against the chain instead).
SEAL_TABLES = ("brain_seals", "seal_heads")
# The migration log is written by the migrations themselves, when a connection opens and before any
# writer holds the housekeeper's key: sealed, every upgrade would leave its new row unsealed. The
# schema check binds it instead ((version, name) equal to the packaged migrations and to PRAGMA
# user_version). A brain sealed before this kept its entry in the seals; it no longer changes.
MIGRATION_LOG = "schema_migrations"
# The master's redaction records are bound by the master's signatures and by the two rows each one
# swaps (a redacted row verifies only as exactly the row the record says), so the same record can be
# applied to a backup and re-applied after a restore without a new seal (migration 8).
REDACTIONS = "memory_redactions"
# Derived from the memories, like the search indexes (which are virtual tables, never sealed): the
# memories' vectors (migration 19), remade when the model changes and removed by a redaction;
# `aimos verify` recomputes them from the memories' text (verify/brain/verifier).
DERIVED = ("memory_vectors", "memory_vectors_generation")
NOT_SEALED = (*SEAL_TABLES, MIGRATION_LOG, REDACTIONS, *DERIVED)
# A memory's live weight and label are projections of their chains (terminal fidelity checks
# them); every other column is sealed as saved.
LIVE_PROJECTIONS: dict[str, frozenset[str]] = {
    "memories": frozenset({"retrieval_weight_milli", "epistemic_label"}),
}
# Columns stored in another form than the one the seals hash (migrations 11 and 14): (table,
# column) -> the storage column that holds it and the SQL reading the text back. A row hashes the
# text it stands for, so a change of stored form leaves every seal valid; the storage column is not
# hashed itself (an edit of it changes the text read back, or makes it NULL: any other pair of
# cells reads as NULL). The readings are store.cells.stored_text's and event_body's, in SQL.
STORED_FORMS: dict[tuple[str, str], tuple[str, str]] = {
    ("recall_receipts", "decision"): (
        "decision_deflated",
        'CASE WHEN "decision_deflated" IS NULL THEN "decision"'
        ' WHEN "decision" IS \'\' THEN aimos_inflate("decision_deflated") END',
    ),
    # migration 14: a recall's event body (store.cells.event_body; a body kept as text is read as
    # its bytes here, in SQL, as before; beside deflated bytes, text that is not UTF-8 reads as NULL)
    ("events", "signed_body"): (
        "signed_body_deflated",
        'CASE WHEN "signed_body_deflated" IS NULL THEN "signed_body"'
        ' ELSE aimos_event_body("operation", CAST("signed_body" AS BLOB), "signed_body_deflated") END',
    ),
    # migration 18: a REWEIGHT node's signed body (store.cells.provenance_body), read the same way
    ("memory_provenance", "body_json"): (
        "body_deflated",
        'CASE WHEN "body_deflated" IS NULL THEN "body_json" ELSE aimos_provenance_body('
        '"event_type", "memory_id", CAST("body_json" AS BLOB), "body_deflated") END',
    ),
}
RESTORE_HINT = SealError.default_hint


class SealKey(Protocol):
    def sign(self, message: bytes) -> bytes: ...


class SealSigner(Protocol):
    """What signs a seal: the housekeeper's epoch (``aimos.identity.epochs.Signer``)."""

    @property
    def valid_from(self) -> int: ...

    @property
    def key(self) -> SealKey: ...


SignerSource = SealSigner | Callable[[], SealSigner]


class SealCosts:
    """What sealing costs per write, for the benchmarks (`aimos eval perf`, `eval mutation`): the
    check at begin, the seal before COMMIT, the anchor written after it, and the identity check
    of requests (identity/trusted.py). Seconds, one entry per write; off unless a benchmark sets
    ``COSTS``."""

    def __init__(self) -> None:
        self.parts: dict[str, list[float]] = {"begin": [], "seal": [], "anchor": [], "identities": []}

    def add(self, part: str, seconds: float) -> None:
        self.parts[part].append(seconds)

    def reset(self) -> None:
        for values in self.parts.values():
            values.clear()


COSTS: SealCosts | None = None


@contextlib.contextmanager
def costed(part: str) -> Iterator[None]:
    if COSTS is None:
        yield
        return
    t0 = time.perf_counter()
    try:
        yield
    finally:
        COSTS.add(part, time.perf_counter() - t0)


# --- the tables and their rows ------------------------------------------------------------------
@dataclass(frozen=True)
class TableShape:
    name: str
    columns: tuple[tuple[str, bool], ...]  # (name, declared TEXT)
    stored: tuple[tuple[str, str], ...] = ()  # (column, the SQL reading its text back): STORED_FORMS

    def select(self) -> str:
        reads = dict(self.stored)
        cells = ", ".join(
            f"CAST(({reads[c]}) AS BLOB)" if c in reads else f'CAST("{c}" AS BLOB)' if text else f'"{c}"'
            for c, text in self.columns
        )
        return f'SELECT rowid, {cells} FROM "{self.name}"'

    def _cells(self, row: tuple[Any, ...]) -> list[bytes]:
        return [commitments.seal_cell(v, text) for v, (_, text) in zip(row[1:], self.columns, strict=True)]

    def row_hash(self, row: tuple[Any, ...]) -> bytes:
        return commitments.seal_row_hash(self.name, row[0], self._cells(row))

    def content_hash(self, row: tuple[Any, ...]) -> bytes:
        """The row's cells without its rowid (equal on every device that holds the row)."""
        return commitments.seal_row_content_hash(self.name, self._cells(row))


_SHAPES: weakref.WeakKeyDictionary[apsw.Connection, tuple[int, dict[str, TableShape]]] = (
    weakref.WeakKeyDictionary()
)


def sealed_tables(conn: apsw.Connection) -> dict[str, TableShape]:
    """Every ordinary table of the brain but the seal chain's own, with the columns each row hash
    covers (in declared order). Virtual tables (the search indexes) and their shadow tables are
    derived and checked by rebuilding them instead."""
    version = int(str(conn.execute("PRAGMA schema_version").fetchall()[0][0]))
    cached = _SHAPES.get(conn)
    if cached is not None and cached[0] == version:
        return cached[1]
    shapes = {}
    for _schema, name, kind, *_ in conn.execute("PRAGMA main.table_list"):
        if kind != "table" or name.startswith("sqlite_") or name in NOT_SEALED:
            continue
        info = [
            (str(col), str(decl)) for _cid, col, decl, *_ in conn.execute(f'PRAGMA main.table_info("{name}")')
        ]
        present = {col for col, _ in info}
        # a stored form applies once its storage column exists (a brain not yet migrated has none)
        stored = tuple(
            (col, read)
            for (table, col), (storage, read) in STORED_FORMS.items()
            if table == name and storage in present
        )
        skip = LIVE_PROJECTIONS.get(name, frozenset()) | {
            storage for (table, _), (storage, _) in STORED_FORMS.items() if table == name
        }
        columns = tuple((col, decl.upper() == "TEXT") for col, decl in info if col not in skip)
        shapes[name] = TableShape(name, columns, stored)
    _SHAPES[conn] = (version, shapes)
    return shapes


def _per_table(conn: apsw.Connection, tables: Iterable[str], aggregate: str) -> dict[str, int]:
    """One aggregate of every table, in one statement."""
    names = sorted(tables)
    if not names:
        return {}
    sql = "SELECT " + ", ".join(f'(SELECT {aggregate} FROM "{n}")' for n in names)
    values = conn.execute(sql).fetchall()[0]
    return {name: int(str(v)) for name, v in zip(names, values, strict=True)}


def _max_rowids(conn: apsw.Connection, shapes: dict[str, TableShape]) -> dict[str, int]:
    return _per_table(conn, shapes, "COALESCE(MAX(rowid), 0)")


# --- the chain ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Seal:
    seq: int
    sealed_at: int
    signer_valid_from: int
    prev_link: bytes
    state_root: bytes
    changes: bytes
    signature: bytes

    @property
    def hash(self) -> bytes:
        return commitments.seal_hash(
            self.seq, self.sealed_at, self.signer_valid_from, self.prev_link, self.state_root, self.changes
        )

    @property
    def link(self) -> bytes:
        return commitments.seal_link(self.hash, self.signature)


_SEAL_COLUMNS = "seq, sealed_at, signer_valid_from, prev_link, state_root, changes, signature"


def _seal(row: tuple[Any, ...]) -> Seal:
    return Seal(*row)


def head_seal(conn: apsw.Connection) -> Seal | None:
    found = conn.execute(f"SELECT {_SEAL_COLUMNS} FROM brain_seals ORDER BY seq DESC LIMIT 1").fetchall()
    return _seal(found[0]) if found else None


def seal_at(conn: apsw.Connection, seq: int) -> Seal | None:
    found = conn.execute(f"SELECT {_SEAL_COLUMNS} FROM brain_seals WHERE seq = ?", (seq,)).fetchall()
    return _seal(found[0]) if found else None


def brain_id_of(conn: apsw.Connection) -> str | None:
    found = conn.execute("SELECT value FROM brain_meta WHERE key = 'brain_id'").fetchall()
    return str(found[0][0]) if found else None


def _head_seqs(conn: apsw.Connection) -> dict[str, int]:
    return {str(name): int(str(seq)) for name, seq in conn.execute("SELECT table_name, seq FROM seal_heads")}


def _heads(conn: apsw.Connection) -> dict[str, SealEntry]:
    return {
        name: (int(count), int(max_rowid), bytes(chain))
        for name, count, max_rowid, chain in conn.execute(
            "SELECT table_name, row_count, max_rowid, chain FROM seal_heads"
        )
    }


def _housekeeper_key(conn: apsw.Connection, valid_from: int) -> str | None:
    """The public key of the housekeeper epoch, when its certificate is the master's."""
    found = conn.execute(
        "SELECT e.public_key_b64u FROM identity_epochs e, master_identity m"
        " WHERE e.agent_id = ? AND e.role = ? AND e.valid_from = ?"
        " AND aimos_certificate_matches(e.certificate, m.public_key_b64u, e.agent_id, e.public_key_b64u,"
        " e.valid_from, e.valid_until) = 1",
        (HOUSEKEEPER, HOUSEKEEPER, valid_from),
    ).fetchall()
    return str(found[0][0]) if found else None


REVOCATIONS = "agent_revocations"


def housekeeper_revocation_rowid(conn: apsw.Connection, valid_from: int) -> int | None:
    """The rowid of the master-signed revocation of this housekeeper epoch, if it was revoked."""
    found = conn.execute(
        f"SELECT rowid FROM {REVOCATIONS} WHERE agent_id = ? AND agent_valid_from = ?",
        (HOUSEKEEPER, valid_from),
    ).fetchall()
    return int(str(found[0][0])) if found else None


def _revocations_sealed_before(conn: apsw.Connection, s: Seal, state: dict[str, SealEntry]) -> int:
    """The highest revocation rowid the seals before ``s`` had sealed (``state``: the tables as
    ``s`` leaves them)."""
    if REVOCATIONS not in commitments.decode_seal_changes(s.changes):
        return state.get(REVOCATIONS, (0, 0, b""))[1]
    earlier = conn.execute("SELECT changes FROM brain_seals WHERE seq < ? ORDER BY seq DESC", (s.seq,))
    for (changes,) in earlier:
        entry = commitments.decode_seal_changes(changes).get(REVOCATIONS)
        if entry is not None:
            return entry[1]
    return 0


def signed_after_revocation(revoked_rowid: int | None, sealed_before: int) -> bool:
    """True when a seal's housekeeper epoch was already revoked by a row an earlier seal sealed.

    A rotation's own write is sealed by the new epoch, so the previous one seals nothing after
    its revocation; an aimos from before `aimos housekeeper rotate-key` let the revoked epoch seal
    the write that revoked it (`aimos agent revoke housekeeper`), and that one seal stays valid."""
    return revoked_rowid is not None and revoked_rowid <= sealed_before


def check_head(conn: apsw.Connection, head: Seal, heads: dict[str, SealEntry]) -> str | None:
    """None when the newest seal is signed by a master-certified housekeeper epoch not revoked
    before it and the cached heads are its state; else the reason."""
    try:
        key = _housekeeper_key(conn, head.signer_valid_from)
        if key is None or not ed25519_verify(key, head.hash, head.signature):
            return "brain_seal_signature_invalid"
        if commitments.seal_state_root(heads) != head.state_root:
            return "seal_heads_mismatch"
        revoked = housekeeper_revocation_rowid(conn, head.signer_valid_from)
        if revoked is not None and signed_after_revocation(
            revoked, _revocations_sealed_before(conn, head, heads)
        ):
            return "brain_seal_signer_revoked"
    except AimosError:
        return "brain_seal_invalid"
    return None


def check_tables(conn: apsw.Connection, names: tuple[str, ...]) -> None:
    """Before a read that decides (whose grant, which epoch, revoked or not): the newest seal
    verifies and these (small) tables hold exactly the rows it seals, re-hashed in full. An edited,
    deleted or injected grant, revocation, epoch or master row is refused here, not only found by
    `aimos verify` later. Raises SealError naming the table."""
    head = head_seal(conn)
    if head is None:
        return  # a brain no write has sealed yet (its first sealed write seals it whole)
    heads = _heads(conn)
    if _CHECKED.get(conn) != head.seq:  # the write's own begin checked this head already
        reason = check_head(conn, head, heads)
        if reason is not None:
            raise SealError(f"the brain's newest seal does not verify ({reason})", reason=reason)
    shapes = sealed_tables(conn)
    for name in names:
        shape = shapes.get(name)
        if shape is None:
            raise SealError(f"table {name} is missing from the brain", reason="schema_object_missing")
        count, top, chain = 0, 0, commitments.seal_table_genesis(name)
        for row in conn.execute(shape.select() + " ORDER BY rowid"):
            chain = commitments.seal_table_step(chain, [shape.row_hash(row)])
            count, top = count + 1, int(row[0])
        if (count, top, chain) != heads.get(name, (0, 0, commitments.seal_table_genesis(name))):
            raise SealError(
                f"table {name} differs from what the brain's seals say: it was changed outside aimos",
                reason="row_altered",
            )
    _TABLES_CHECKED[conn] = (_data_version(conn), names, _table_tops(conn, names))


def _table_tops(conn: apsw.Connection, names: tuple[str, ...]) -> tuple[int, ...]:
    return tuple(
        int(str(conn.execute(f'SELECT COALESCE(MAX(rowid), 0) FROM "{n}"').fetchall()[0][0])) for n in names
    )


def already_checked(conn: apsw.Connection, names: tuple[str, ...]) -> bool:
    """True when this connection already checked these tables, no other connection has committed
    since (PRAGMA data_version) and it has added no rows to them itself: a process making many
    requests (an import, the housekeeper, the benchmarks' fills) checks them once."""
    found = _TABLES_CHECKED.get(conn)
    return (
        found is not None
        and found[0] == _data_version(conn)
        and found[1] == names
        and found[2] == _table_tops(conn, names)
    )


def check_counts(
    conn: apsw.Connection, names: Iterable[str], heads: dict[str, SealEntry] | None = None
) -> None:
    """Inside a write transaction (its begin verified seal_heads against the signed newest seal):
    these tables still hold as many rows as sealed. A row deleted from the middle of a table leaves
    its highest rowid as sealed; its count tells. Every write's begin counts every sealed table
    (when another connection committed since this one last checked); a recall counts the small
    tables a decision rests on (the label and weight chains): a row deleted from the middle of a
    chain, with the live label or weight set back to match what is left, fails here instead of
    being disclosed. ``heads``: the sealed heads, when the caller read them already."""
    heads = _heads(conn) if heads is None else heads
    if not heads:
        return
    for name, count in _per_table(conn, names, "COUNT(*)").items():
        sealed = heads.get(name, (0, 0, b""))[0]
        if count != sealed:
            gap = (
                f"{plural(sealed - count, 'sealed row')} gone"
                if count < sealed
                else f"{plural(count - sealed, 'row')} no seal covers"
            )
            raise SealError(
                f"table {name} holds {plural(count, 'row')} but its seals say {sealed} ({gap}): "
                "it was changed outside aimos",
                reason="row_missing" if count < sealed else "row_injected",
            )


# --- writing ------------------------------------------------------------------------------------
@dataclass
class SealContext:
    """What a write transaction knew of the seals when it began."""

    shapes: dict[str, TableShape]
    head: Seal | None
    heads: dict[str, SealEntry]
    start: dict[str, int]
    brain_id: str | None = None
    sealed: tuple[int, bytes] | None = field(default=None)
    changed: frozenset[str] = frozenset()  # the tables its seal added rows to
    check_freshness: bool = False  # the anchors outside the brain are to be checked (freshness.py)


def begin(conn: apsw.Connection, *, check_anchor: bool = True) -> SealContext:
    """Inside BEGIN IMMEDIATE: check the newest seal, that every row is sealed and that every sealed
    row is there (unless no other connection committed since this one last checked), and say whether
    the anchors outside the brain are to be checked (``check_freshness``: unless ``check_anchor`` is
    off, only `aimos restore` recording its own restore, or no other connection committed since
    this one last checked and no anchor check is due: recheck_anchors)."""
    shapes = sealed_tables(conn)
    head = head_seal(conn)
    heads = _heads(conn)
    live = _max_rowids(conn, shapes)
    if head is None:
        if heads:
            raise SealError("the brain's seal heads exist without any seal", reason="seal_heads_mismatch")
        return SealContext(shapes, None, {}, {name: 0 for name in shapes})
    quiet = quiet_since_checked(conn)
    reason = None if quiet else check_head(conn, head, heads)
    if reason is None and not quiet and head.seq > 1:  # and it follows the seal before it (the rest: verify)
        before = seal_at(conn, head.seq - 1)
        try:
            reason = None if before is not None and before.link == head.prev_link else "seal_chain_break"
        except AimosError:
            reason = "seal_chain_break"
    if reason is not None:
        raise SealError(f"the brain's newest seal does not verify ({reason})", reason=reason)
    for name, top in live.items():
        sealed = heads.get(name, (0, 0, b""))[1]
        if top > sealed:
            raise SealError(
                f"table {name} holds rows no seal covers ({_describe(conn, shapes[name], sealed)}): "
                "the brain was changed outside aimos",
                reason="row_unsealed",
            )
        if top < sealed:
            raise SealError(
                f"table {name} lost its newest rows (rowid {top + 1}..{sealed} are sealed but gone): "
                "the brain was changed outside aimos",
                reason="row_missing",
            )
    if not quiet:  # once per connection and commit by another: a count scans each table's smallest index
        check_counts(conn, (name for name in heads if name in shapes), heads)
    _CHECKED[conn] = head.seq
    _QUIET[conn] = _data_version(conn)
    due = _ANCHORS_DUE.pop(conn, False)
    return SealContext(shapes, head, heads, live, check_freshness=check_anchor and (due or not quiet))


# connections inside a write transaction whose begin verified the newest seal (its number)
_CHECKED: weakref.WeakKeyDictionary[apsw.Connection, int] = weakref.WeakKeyDictionary()
# each connection's PRAGMA data_version when it last knew the seals to hold (its begin checked
# them, or it committed its own seal): unchanged means no other connection has committed since
_QUIET: weakref.WeakKeyDictionary[apsw.Connection, int] = weakref.WeakKeyDictionary()


def _data_version(conn: apsw.Connection) -> int:
    return int(str(conn.execute("PRAGMA data_version").fetchall()[0][0]))


def quiet_since_checked(conn: apsw.Connection) -> bool:
    """No other connection (another process, the sqlite3 shell) has committed to the brain since
    this connection last checked or wrote its seals, so what it checked still holds: a process
    writing many times (the housekeeper, an import, a benchmark, an MCP server) checks the chain
    once."""
    known = _QUIET.get(conn)
    return known is not None and known == _data_version(conn)


# connections whose next write checks the anchors outside the brain even when it is quiet
_ANCHORS_DUE: weakref.WeakKeyDictionary[apsw.Connection, bool] = weakref.WeakKeyDictionary()


def recheck_anchors(conn: apsw.Connection) -> None:
    """The next write on this connection checks the anchors outside the brain (store/freshness.py)
    even when no other connection has committed since: a session kept open across calls (an MCP
    server's) has each call check them as a newly opened one would, since they are files anyone
    may move or delete between two calls."""
    _ANCHORS_DUE[conn] = True


def settled(conn: apsw.Connection) -> None:
    """After this connection's own commit: the seals hold as it left them."""
    _QUIET[conn] = _data_version(conn)


_TABLES_CHECKED: weakref.WeakKeyDictionary[apsw.Connection, tuple[int, tuple[str, ...], tuple[int, ...]]] = (
    weakref.WeakKeyDictionary()
)


def end(conn: apsw.Connection) -> None:
    """The write transaction is over (committed or rolled back): its checks no longer hold."""
    _CHECKED.pop(conn, None)


def _describe(conn: apsw.Connection, shape: TableShape, after: int, upto: int | None = None) -> str:
    """Rows by rowid, with the memory they belong to when the table names one."""
    bound = "" if upto is None else f" AND rowid <= {int(upto)}"
    found = conn.execute(f'SELECT rowid FROM "{shape.name}" WHERE rowid > ?{bound} ORDER BY rowid', (after,))
    rowids = [int(r[0]) for r in found]
    text = (
        "no rows"
        if not rowids
        else (
            f"rowid {rowids[0]}"
            if len(rowids) == 1
            else f"{len(rowids)} rows, rowid {rowids[0]}..{rowids[-1]}"
        )
    )
    if rowids and "memory_id" in {c for c, _ in shape.columns}:
        ids = conn.execute(
            f'SELECT DISTINCT CAST(memory_id AS BLOB) FROM "{shape.name}" WHERE rowid > ?{bound} LIMIT 4',
            (after,),
        ).fetchall()
        named = [text_of(r[0]) for r in ids if r[0] is not None]
        if named:
            text += ", memory " + ", ".join(named)
    return text


def _signer(source: SignerSource) -> SealSigner:
    return source() if callable(source) else source


def seal(
    conn: apsw.Connection, ctx: SealContext, source: SignerSource | None, now: int | None = None
) -> None:
    """Before COMMIT: one signed seal over the rows this transaction added (none: no seal)."""
    if not ctx.start:
        return
    live = _max_rowids(conn, ctx.shapes)
    changes: dict[str, SealEntry] = {}
    for name, top in live.items():
        start = ctx.start.get(name, 0)
        if top == start:
            continue
        if top < start:
            raise SealError(f"rows of {name} vanished during a write", reason="row_missing")
        shape = ctx.shapes[name]
        hashes = [
            shape.row_hash(row)
            for row in conn.execute(shape.select() + " WHERE rowid > ? ORDER BY rowid", (start,))
        ]
        count, _, chain = ctx.heads.get(name, (0, 0, commitments.seal_table_genesis(name)))
        changes[name] = (count + len(hashes), top, commitments.seal_table_step(chain, hashes))
    if not changes:
        return
    if source is None:
        raise SealError(
            "this write has no housekeeper to seal it (a bug in aimos: nothing was changed)",
            "Report it; the brain is unchanged.",
            reason="seal_signer_missing",
        )
    signer = _signer(source)
    revoked = housekeeper_revocation_rowid(conn, signer.valid_from)
    if signed_after_revocation(revoked, ctx.start.get(REVOCATIONS, 0)):
        raise EpochRevokedError(
            "the housekeeper key this process loaded was revoked (its key was rotated): nothing was changed",
            "Run the command again: it loads the housekeeper's new key.",
        )
    state = {**ctx.heads, **changes}
    seq = (ctx.head.seq if ctx.head else 0) + 1
    if ctx.head is not None:
        prev_link = ctx.head.link
    else:
        brain_id = brain_id_of(conn)
        if brain_id is None:
            raise SealError("the brain has no id to seal under", reason="brain_seal_invalid")
        prev_link = commitments.seal_genesis_link(brain_id)
    sealed_at = int(time.time()) if now is None else now
    encoded = commitments.encode_seal_changes(changes)
    root = commitments.seal_state_root(state)
    digest = commitments.seal_hash(seq, sealed_at, signer.valid_from, prev_link, root, encoded)
    signature = signer.key.sign(digest)
    conn.execute(
        f"INSERT INTO brain_seals ({_SEAL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (seq, sealed_at, signer.valid_from, prev_link, root, encoded, signature),
    )
    conn.executemany(
        "INSERT INTO seal_heads (table_name, row_count, max_rowid, chain, seq) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT (table_name) DO UPDATE SET row_count = excluded.row_count,"
        " max_rowid = excluded.max_rowid, chain = excluded.chain, seq = excluded.seq",
        [(name, count, top, chain, seq) for name, (count, top, chain) in changes.items()],
    )
    ctx.brain_id = brain_id_of(conn)
    ctx.sealed = (seq, commitments.seal_link(digest, signature))
    ctx.changed = frozenset(changes)


# --- verification ---------------------------------------------------------------------------------
def _failure(reason: str, detail: str, table: str | None = None) -> dict[str, Any]:
    return {"check": "seals", "reason": reason, "detail": detail, "table": table}


def _housekeeper_revocations(conn: apsw.Connection) -> dict[int, int]:
    """Each revoked housekeeper epoch (its valid_from) and the rowid of its revocation."""
    found = conn.execute(
        f"SELECT agent_valid_from, rowid FROM {REVOCATIONS} WHERE agent_id = ?", (HOUSEKEEPER,)
    )
    return {int(valid_from): int(rowid) for valid_from, rowid in found}


def _revoked_signer(s: Seal) -> dict[str, Any]:
    return _failure(
        "brain_seal_signer_revoked",
        f"seal #{s.seq} is signed by the housekeeper epoch valid from {s.signer_valid_from}, "
        "after an earlier seal had sealed that epoch's revocation",
    )


@dataclass
class SealReport:
    failures: list[dict[str, Any]]
    seals: int
    head: Seal | None
    rows: int


def redacted_rows(conn: apsw.Connection) -> tuple[dict[str, dict[int, RowSwap]], list[dict[str, Any]]]:
    """The rows the brain's valid redaction records swap, by table and rowid, and a failure for
    each record that does not verify (its rows then keep their redacted hashes: row_altered)."""
    swaps: dict[str, dict[int, RowSwap]] = {}
    failures: list[dict[str, Any]] = []
    exists = conn.execute(
        "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?", (REDACTIONS,)
    ).fetchall()
    if not exists:
        return swaps, failures
    master = conn.execute("SELECT public_key_b64u, fingerprint FROM master_identity").fetchall()
    key, fingerprint = (str(master[0][0]), str(master[0][1])) if master else ("", "")
    brain_id = brain_id_of(conn)
    for rid, mid, company, record_json, signature, created_at in conn.execute(
        "SELECT redaction_id, memory_id, company_id, record_json, signature_b64u, created_at"
        f" FROM {REDACTIONS} ORDER BY rowid"
    ):
        reason, record = check_record(
            record_json,
            signature,
            key,
            fingerprint,
            memory_id=mid,
            company_id=company,
            created_at=created_at,
            redaction_id=rid,
        )
        if record is None or record["brain_id"] != brain_id:
            failures.append(
                _failure(
                    reason or "redaction_record_invalid",
                    f"{REDACTIONS}: the record for memory {mid} is not the master's for this brain",
                    REDACTIONS,
                )
            )
            continue
        for swap in row_swaps(record):
            swaps.setdefault(swap.table, {})[swap.rowid] = swap
    return swaps, failures


def verify_seals(conn: apsw.Connection) -> SealReport:
    """Re-hash every row of every sealed table against the seal chain; name what differs.

    The chain: sequence numbers from 1, each seal linked to the one before (the first to the
    brain's genesis), its table changes decoding, its state root what the changes replayed give;
    the newest seal signed by a master-certified housekeeper epoch; seal_heads equal to the replayed
    state. The rows: each table's rows, in rowid order, split by the seals' ranges; within each
    range the count and the chain must be what the seal says (fewer rows: row_missing, more:
    row_injected, a changed cell: row_altered) and no row may lie beyond the newest range
    (row_unsealed)."""
    failures: list[dict[str, Any]] = []
    shapes = sealed_tables(conn)
    brain_id = brain_id_of(conn) or ""
    seals = [_seal(r) for r in conn.execute(f"SELECT {_SEAL_COLUMNS} FROM brain_seals ORDER BY seq")]
    state: dict[str, SealEntry] = {}
    last_seq: dict[str, int] = {}
    ranges: dict[str, list[tuple[int, SealEntry, SealEntry]]] = {}
    expected_prev = commitments.seal_genesis_link(brain_id) if brain_id else b""
    revoked = _housekeeper_revocations(conn)
    for i, s in enumerate(seals, start=1):
        if s.seq != i:
            failures.append(_failure("seal_chain_break", f"seal #{i} is missing (the next is #{s.seq})"))
            break
        try:
            if s.prev_link != expected_prev:
                failures.append(_failure("seal_chain_break", f"seal #{s.seq} does not follow seal #{i - 1}"))
                break
            if s is not seals[-1] and signed_after_revocation(  # the newest: check_head
                revoked.get(s.signer_valid_from), state.get(REVOCATIONS, (0, 0, b""))[1]
            ):
                failures.append(_revoked_signer(s))
            changes = commitments.decode_seal_changes(s.changes)
            for name, entry in changes.items():
                prev = state.get(name, (0, 0, commitments.seal_table_genesis(name)))
                ranges.setdefault(name, []).append((s.seq, prev, entry))
                state[name] = entry
                last_seq[name] = s.seq
            if commitments.seal_state_root(state) != s.state_root:
                failures.append(
                    _failure("seal_state_invalid", f"seal #{s.seq}'s state root does not recompute")
                )
                break
            expected_prev = s.link
        except AimosError as exc:
            failures.append(_failure(exc.reason or "seal_changes_invalid", f"seal #{s.seq}: {exc.message}"))
            break
    head = seals[-1] if seals else None
    if head is not None and not failures:
        reason = check_head(conn, head, state)
        if reason == "brain_seal_signer_revoked":
            failures.append(_revoked_signer(head))
        elif reason is not None:
            failures.append(_failure(reason, f"the newest seal #{head.seq} is not the housekeeper's"))
        elif _heads(conn) != state or _head_seqs(conn) != last_seq:
            failures.append(
                _failure("seal_heads_mismatch", "seal_heads differs from the state the seals give")
            )
    total = 0
    if not seals:
        rowed = [n for n in sorted(shapes) if conn.execute(f'SELECT 1 FROM "{n}" LIMIT 1').fetchall()]
        if rowed:
            failures.append(
                _failure(
                    "brain_unsealed",
                    "no seal covers this brain's rows ("
                    + ", ".join(rowed[:4])
                    + ("..." if len(rowed) > 4 else "")
                    + "): an aimos from before seals made it, or its seals were removed; aimos seals a "
                    "brain from before seals at its next write",
                )
            )
        return SealReport(
            failures,
            0,
            None,
            sum(int(str(conn.execute(f'SELECT COUNT(*) FROM "{n}"').fetchall()[0][0])) for n in rowed),
        )
    swaps, invalid = redacted_rows(conn)
    failures.extend(invalid)
    for name in sorted(shapes):
        found, count = _verify_table(conn, shapes[name], ranges.get(name, []), swaps.get(name, {}))
        failures.extend(found)
        total += count
    return SealReport(failures, len(seals), head, total)


def _verify_table(
    conn: apsw.Connection,
    shape: TableShape,
    ranges: list[tuple[int, SealEntry, SealEntry]],
    swaps: dict[int, RowSwap],
) -> tuple[list[dict[str, Any]], int]:
    failures: list[dict[str, Any]] = []
    cursor = conn.execute(shape.select() + " ORDER BY rowid")
    pending: tuple[Any, ...] | None = next(cursor, None)
    seen = 0
    for seq, (prev_count, prev_max, prev_chain), (count, top, chain) in ranges:
        hashes = []
        while pending is not None and pending[0] <= top:
            h = shape.row_hash(pending)
            swap = swaps.get(int(pending[0]))
            if swap is not None and swap.stands_for(h, partial(shape.content_hash, pending)):
                h = swap.before
            hashes.append(h)
            pending = next(cursor, None)
        seen += len(hashes)
        want = count - prev_count
        reason = None
        if len(hashes) < want:
            reason = "row_missing"
        elif len(hashes) > want:
            reason = "row_injected"
        elif commitments.seal_table_step(prev_chain, hashes) != chain:
            reason = "row_altered"
        if reason is not None:
            what = _describe(conn, shape, prev_max, top)
            failures.append(
                _failure(
                    reason,
                    f"{shape.name}: {what}, sealed by seal #{seq} as {plural(want, 'row')}",
                    shape.name,
                )
            )
    if pending is not None:
        after = ranges[-1][2][1] if ranges else 0
        failures.append(
            _failure(
                "row_unsealed", f"{shape.name}: {_describe(conn, shape, after)} beyond every seal", shape.name
            )
        )
        seen += 1 + sum(1 for _ in cursor)
    return failures, seen
