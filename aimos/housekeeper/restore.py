"""`aimos restore BACKUP`: the legitimate way back to an older brain.

The backup is copied beside the brain and verified there (both verifiers, parity, every row
against its seals, schema, search indexes), the master passphrase is asked for, and the master
signs a restore record (`aimos.brain-restore/v1`) into the copy: which backup, its newest seal,
the newest seal anchored outside the brain that it replaces and what the replaced brain held
beyond the backup (writes, and rows by table). Only then is the copy moved into place; the
replaced brain is kept beside it (`brain.sqlite3.replaced-<time>`), never deleted, and the anchor
moves to the restored brain's newest seal. A crash between the move and the anchor leaves a brain
whose signed record names the anchor it replaced, which the freshness check accepts.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aimos import paths
from aimos.actions.redaction import kept_outside
from aimos.crypto.canonical import canonical_text
from aimos.crypto.encoding import b64u_encode
from aimos.crypto.messages import new_nonce, payload_message
from aimos.errors import (
    AbortedError,
    AimosError,
    EpochRevokedError,
    KeychainError,
    NotFoundError,
    UsageError,
    VerificationError,
)
from aimos.housekeeper import backup_records, state
from aimos.housekeeper.jobs.nightly_dream import backup_files
from aimos.housekeeper.redaction_copies import apply_records
from aimos.identity.agents import HousekeeperRotation, rotate_housekeeper_in_transaction
from aimos.identity.anchors import keep_anchor, revocations_held
from aimos.identity.epochs import load_signer
from aimos.identity.keystore import Keystore, open_keystore
from aimos.identity.master import master_row, unlock_master
from aimos.identity.signer import Signer, key_item_name
from aimos.memory.redaction import redactions as memory_redactions
from aimos.memory.versions import memories_not_in, memory_ids
from aimos.plural import plural
from aimos.store import freshness, seals
from aimos.store.cells import text_of
from aimos.store.connection import (
    Connection,
    EngineError,
    copy_brain,
    open_reader,
    open_writer,
    write_transaction,
)
from aimos.store.engine import open_read_only, row_count, set_secure_delete, wal_checkpoint
from aimos.store.meta import brain_meta, record_keystore_kind
from aimos.store.queries.housekeeper import insert_restore, revoked_epoch_set
from aimos.vocabulary import HOUSEKEEPER, RESTORE_SCHEMA

# what may fail in the copy before its restore record exists: it is behind the anchor (that is
# the point), or it predates seals (its first sealed write, the record, seals it whole)
_EXPECTED_BEFORE_RECORD = {"brain_rolled_back", "brain_history_mismatch", "brain_unsealed", "anchor_lost"}


@dataclass
class RestorePlan:
    backup: Path
    backup_seal: int | None
    replaced_anchor: dict[str, Any] | None
    lost: dict[str, Any]


def resolve_backup(ref: str) -> Path:
    """A backup by path, or by file name in the brain's backups folder."""
    if not ref or not ref.strip():
        raise UsageError(
            "no backup named", "Give a backup file; `aimos restore --list` lists the brain's backups."
        )
    path = Path(ref).expanduser()
    if not path.exists():
        by_name = [p for p in backup_files() if p.name == ref]
        if not by_name:
            raise NotFoundError(
                f"no backup at {ref}", "`aimos restore --list` lists the brain's backups (newest last)."
            )
        path = by_name[0]
    if not path.is_file():
        raise UsageError(f"{path} is not a file", "Give a backup file (the nightly job makes them).")
    if path.resolve() == paths.brain_path().resolve():
        raise UsageError("that is the brain itself, not a backup", "Give a backup file.")
    return path


def listing(folder: Path | None = None) -> list[dict[str, Any]]:
    """The brain's backups (in ``folder``, else its backups folder), oldest first, with their
    newest seal and memory count when readable."""
    out = []
    for path in backup_files(folder):
        entry: dict[str, Any] = {"file": path.name, "path": str(path), "bytes": path.stat().st_size}
        try:
            conn = open_reader(path)
            try:
                head = seals.head_seal(conn)
                entry["newest_seal"] = head.seq if head else None
                entry["sealed_at"] = head.sealed_at if head else None
                entry["memories"] = row_count(conn, "memories")
            finally:
                conn.close()
        except Exception as exc:
            entry["error"] = type(exc).__name__
        out.append(entry)
    return out


def backup_now(now: int, to: Path | None = None) -> dict[str, Any]:
    """`aimos backup`: an online backup of the brain (SQLite's backup API, a consistent snapshot
    while agents work) into ``to`` (else the brain's backups folder, where the nightly job keeps
    the newest 7), then opened and verified (SQLite's integrity check and the brain verifier, the
    nightly job's check). A copy that does not verify, or cannot be read, is removed (and leaves
    the record of backups) and named as damage. ``to`` must be a folder, or not exist yet (made
    0700)."""
    from aimos.errors import IntegrityError
    from aimos.housekeeper.jobs.nightly_dream import check_backup, online_backup

    if to is not None:
        to = to.expanduser()
        if to.exists() and not to.is_dir():
            raise UsageError(f"{to} is not a folder", "Give --to a folder (it is made when missing).")
    with contextlib.closing(open_reader(paths.brain_path())) as live:
        brain_id = brain_meta(live)["brain_id"]
    path = online_backup(now, to)

    def remove() -> None:
        path.unlink(missing_ok=True)
        backup_records.record_gone(brain_id, path, now, backup_records.NOT_VERIFIED)

    try:
        checked = check_backup(path)
    except BaseException:
        remove()  # a copy that cannot even be read is no backup either
        raise
    if not (checked["integrity"] and checked["verifies"]):
        remove()
        raise IntegrityError(
            "the backup did not verify, so it was removed: the brain itself may be damaged",
            "Run `aimos verify` to see what fails.",
        )
    entry = next(e for e in listing(path.parent) if e["path"] == str(path))
    return {**entry, "verified": True, "corpus_proof_root": checked["corpus_proof_root"]}


def check_offline(*, housekeeper_may_run: bool = False) -> None:
    state.require_offline(
        "a restore replaces the brain file",
        stop_hint="Stop it with `aimos housekeeper stop`, restore, then `aimos housekeeper start`.",
        close_hint="Close them (agents, MCP servers, a TUI) and run the restore again.",
        housekeeper_may_run=housekeeper_may_run,
    )


def dropped_memories(backup: Path) -> list[dict[str, Any]]:
    """The memories of the brain here that ``backup`` does not hold (saved since it was made),
    oldest first, each with its redaction notice: what a restore from it drops. Reads only; none
    when there is no brain here or it cannot be read (the restore's record says so)."""
    brain = paths.brain_path()
    if not brain.exists():
        return []
    with contextlib.closing(_open_read_only(backup)) as source:
        try:
            kept = memory_ids(source)
        except EngineError as exc:
            raise _unreadable(exc) from exc
    try:
        with contextlib.closing(open_reader(brain)) as current:
            ids = memory_ids(current) - kept
            try:
                return memories_not_in(current, kept)
            except Exception:  # damaged rows: named by id alone
                return [{"memory_id": mid, "key": None, "value": "(cannot be read)"} for mid in sorted(ids)]
    except Exception:  # a brain that cannot be opened: the restore's record says so
        return []


def _counts(conn: Connection) -> dict[str, int]:
    shapes = seals.sealed_tables(conn)
    return {name: row_count(conn, name) for name in sorted(shapes)}


def _what_is_lost(copy: Connection, anchor: dict[str, Any] | None) -> dict[str, Any]:
    """What the brain being replaced holds beyond the backup: writes (seals) and rows by table,
    read from the current brain file when it is readable, else from the anchor alone."""
    head = seals.head_seal(copy)
    have = head.seq if head else 0
    lost: dict[str, Any] = {"writes": max(0, (anchor["seq"] if anchor else have) - have), "rows": {}}
    brain = paths.brain_path()
    if not brain.exists():
        lost["current_brain"] = "missing"
        return lost
    try:
        current = open_reader(brain)
        try:
            now_counts, then_counts = _counts(current), _counts(copy)
            current_head = seals.head_seal(current)
            undone = sorted(revoked_epoch_set(current) - revoked_epoch_set(copy))
        finally:
            current.close()
    except Exception as exc:
        lost["current_brain"] = f"unreadable ({type(exc).__name__})"
        return lost
    lost["current_brain"] = "readable"
    lost["revocations_undone"] = [agent for agent, _valid_from in undone]
    lost["rows"] = {
        k: n - then_counts.get(k, 0) for k, n in now_counts.items() if n - then_counts.get(k, 0) > 0
    }
    if current_head is not None:
        lost["writes"] = max(lost["writes"], current_head.seq - have)
    return lost


def verify_copy(conn: Connection, fingerprint: str) -> dict[str, Any]:
    """Both verifiers and the brain checks on the copy; only its being behind the anchor (or
    predating seals) may fail before the restore record is in it."""
    from aimos.verify.brain.parity import verify_everything

    result = verify_everything(conn, fingerprint)
    brain = result["brain"] or {"failures": []}
    other = [f for f in brain["failures"] if f["reason"] not in _EXPECTED_BEFORE_RECORD]
    if (
        other
        or not result["in_database"]["ok"]
        or result["portable"]["verdict"] != "valid"
        or not result["parity"]
    ):
        first = other[0] if other else None
        why = (
            f"{first['reason']} ({first['detail']})"
            if first
            else "its memories do not verify"
            + (f": {result['portable']['primary_reason']}" if result["portable"]["primary_reason"] else "")
        )
        raise VerificationError(
            f"the backup does not verify: {why}",
            "Choose another backup (`aimos restore --list`); nothing was changed.",
            reason=first["reason"] if first else "backup_invalid",
        )
    return result


def _anchor_restored(brain_id: str, keystore: Keystore, head: seals.Seal, held: list[list[Any]]) -> None:
    """Both freshness anchors move to the restored brain's newest seal."""
    freshness.write_freshness(brain_id, head.seq, head.link, note="restored")
    with contextlib.suppress(AimosError, OSError):  # a kept anchor not moved is only older
        keep_anchor(keystore, head.seq, head.link.hex(), held)


def restore(
    backup: Path,
    passphrase: str,
    fingerprint: str,
    now: int | None = None,
    *,
    may_drop: set[str] | None = None,
) -> dict[str, Any]:
    """Verify the backup, sign the restore into a copy, move it into place. Returns the record.
    ``may_drop``: the memory ids the person agreed to lose (dropped_memories); one more saved
    since then refuses the restore (AbortedError), with nothing changed."""
    at = int(time.time()) if now is None else now
    check_offline()
    brain = paths.brain_path()
    meta, redacted, current_ids = _replaced_brain(brain, backup)
    copy_path = brain.with_name(f".{brain.name}.restore-{os.getpid()}")
    _copy_brain(backup, copy_path)
    try:
        conn = open_writer(copy_path)
        try:
            copy_meta = brain_meta(conn)
            if copy_meta.get("brain_id") != meta.get("brain_id"):
                raise VerificationError(
                    "the backup is of another brain "
                    f"({copy_meta.get('brain_id')}, this one is {meta.get('brain_id')})",
                    "Give a backup of this brain; nothing was changed.",
                    reason="backup_of_another_brain",
                )
            verify_copy(conn, fingerprint)
            keystore = open_keystore(meta["keystore"], meta["brain_id"])
            master = unlock_master(conn, keystore, passphrase)
            anchor = freshness.read_freshness(meta["brain_id"])
            head = seals.head_seal(conn)
            lost = _what_is_lost(conn, anchor)
            _check_agreed(current_ids - memory_ids(conn), may_drop)
            housekeeper = _backup_housekeeper(conn, keystore, lost, at)
            body = {
                "schema": RESTORE_SCHEMA,
                "restore_id": str(uuid.uuid4()),
                "brain_id": meta["brain_id"],
                "company_id": copy_meta["company_id"],
                "backup_file": backup.name,
                "backup_seal": None if head is None else {"seq": head.seq, "link": head.link.hex()},
                "replaced_anchor": None if anchor is None else {"seq": anchor["seq"], "link": anchor["link"]},
                "lost": lost,
                "master_fingerprint": master_row(conn)["fingerprint"],
                "ts_signed": at,
            }
            nonce = new_nonce()
            signature = master.sign(payload_message(body, nonce, at))
            sealer: list[Signer] = [] if housekeeper is None else [housekeeper]
            rotation: HousekeeperRotation | None = None
            # a redaction since the backup is applied again: the backup does not bring the text back
            redacted = _and_kept_outside(redacted, meta["brain_id"])
            set_secure_delete(conn, True)
            try:
                with write_transaction(conn, lambda: sealer[0], check_anchor=False):
                    _insert_record(conn, body, nonce, at, signature)
                    reapplied = apply_records(conn, redacted)
                    if copy_meta.get("keystore") != meta["keystore"]:  # a backup from before a move
                        record_keystore_kind(conn, meta["keystore"])  # the keys are where they are now
                    if housekeeper is None:  # sealed by the new key, as `housekeeper rotate-key` is
                        rotation = rotate_housekeeper_in_transaction(conn, master, keystore, now=at)
                        sealer.append(rotation.signer)
            except BaseException:
                if rotation is not None:
                    keystore.delete(key_item_name(HOUSEKEEPER, rotation.signer.valid_from))
                raise
            new_head, held = seals.head_seal(conn), revocations_held(conn)
            wal_checkpoint(conn, "TRUNCATE")
        finally:
            conn.close()
        kept = _move_aside(brain, at)
        os.replace(copy_path, brain)
    except BaseException:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{copy_path}{suffix}").unlink(missing_ok=True)
        raise
    if new_head is not None:
        _anchor_restored(meta["brain_id"], keystore, new_head, held)
    return {
        **body,
        "replaced_brain_kept_at": str(kept) if kept else None,
        "newest_seal": new_head.seq if new_head else None,
        "housekeeper_key_rotated": housekeeper is None,
        "redactions_reapplied": reapplied,
    }


def _replaced_brain(brain: Path, backup: Path) -> tuple[dict[str, Any], list[dict[str, Any]], set[str]]:
    """The brain being replaced: its meta (the backup's when there is none), its redaction
    records and its memory ids (none where a damaged brain does not tell)."""
    redacted: list[dict[str, Any]] = []
    ids: set[str] = set()
    if not brain.exists():
        with contextlib.closing(open_reader(backup)) as source:
            return brain_meta(source), redacted, ids
    with contextlib.closing(open_reader(brain)) as current:
        meta = brain_meta(current)
        with contextlib.suppress(Exception):  # a damaged brain: the records kept outside it
            redacted = memory_redactions(current)
        with contextlib.suppress(Exception):  # nor can its memories be named
            ids = memory_ids(current)
    return meta, redacted, ids


def _check_agreed(dropped: set[str], may_drop: set[str] | None) -> None:
    """Refuse to drop a memory the person was not asked about (one saved after they agreed)."""
    if may_drop is None:
        return
    more = dropped - may_drop
    if more:
        raise AbortedError(
            f"{len(more)} more memor{'y was' if len(more) == 1 else 'ies were'} saved since you agreed "
            "to the restore; nothing was changed",
            "Run the restore again: it names every memory it would drop.",
        )


def _and_kept_outside(records: list[dict[str, Any]], brain_id: str) -> list[dict[str, Any]]:
    """The replaced brain's redaction records and those kept beside anchors.json (each checked
    against the master before it is applied)."""
    known = {r["redaction_id"] for r in records}
    return records + [r for r in kept_outside(brain_id) if r["redaction_id"] not in known]


def _backup_housekeeper(conn: Connection, keystore: Keystore, lost: dict[str, Any], at: int) -> Signer | None:
    """The backup's housekeeper, when it may seal the restore; None when the restore must give
    the housekeeper a new key instead: its key is gone from the keystore (a rotation since the
    backup removed it), it is revoked in the backup (by an older aimos), or the brain being
    replaced revoked it (a rotation after the backup, for a key that may have leaked: a restore
    must not make it valid again). Its revocation is then not undone, so it leaves the list."""
    undone = lost.get("revocations_undone", [])
    try:
        signer = load_signer(conn, keystore, HOUSEKEEPER, at)
    except (KeychainError, EpochRevokedError):
        signer = None
    if HOUSEKEEPER in undone:
        signer = None
        undone[:] = [agent for agent in undone if agent != HOUSEKEEPER]  # rotated twice: both
    return signer


def _insert_record(conn: Connection, body: dict[str, Any], nonce: str, at: int, signature: bytes) -> None:
    insert_restore(
        conn,
        body["restore_id"],
        canonical_text(body),
        body["master_fingerprint"],
        nonce,
        at,
        b64u_encode(signature),
    )


def _open_read_only(source: Path) -> Connection:
    try:
        return open_read_only(source, as_uri=True)
    except EngineError as exc:
        raise VerificationError(
            f"the backup cannot be opened ({type(exc).__name__})",
            "Choose another backup (`aimos restore --list`); nothing was changed.",
            reason="backup_unreadable",
        ) from exc


def _unreadable(exc: EngineError) -> VerificationError:
    return VerificationError(
        f"the backup is not a readable SQLite brain ({text_of(type(exc).__name__)})",
        "Choose another backup (`aimos restore --list`); nothing was changed.",
        reason="backup_unreadable",
    )


def _copy_brain(source: Path, target: Path) -> None:
    """A consistent single-file copy (the backup API) at ``target``, 0600."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    src = _open_read_only(source)
    try:
        copy_brain(src, target)
    except EngineError as exc:
        raise _unreadable(exc) from exc
    finally:
        src.close()


def _move_aside(brain: Path, at: int) -> Path | None:
    """Keep the replaced brain (and its WAL) beside the restored one; nothing is deleted."""
    if not brain.exists():
        return None
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(at))
    kept = brain.with_name(f"{brain.name}{paths.REPLACED_INFIX}{stamp}")
    n = 1
    while kept.exists():
        kept = brain.with_name(f"{brain.name}{paths.REPLACED_INFIX}{stamp}-{n}")
        n += 1
    os.replace(brain, kept)
    for suffix in ("-wal", "-shm"):
        side = Path(f"{brain}{suffix}")
        if side.exists():
            os.replace(side, Path(f"{kept}{suffix}"))
    return kept


# the tables whose rows a person counts, in their words; the rest are the records beside them
_LOST_WORDS = {"memories": "memory", "outcomes": "outcome"}


def describe_lost(lost: dict[str, Any]) -> str:
    """What the restore dropped, in a person's words: "2 writes: 2 memories, 10 other records
    (...)". The signed record (--json) keeps the count of each table."""
    rows = lost.get("rows") or {}
    parts = [plural(rows[t], word) for t, word in _LOST_WORDS.items() if rows.get(t)]
    others = sum(n for table, n in rows.items() if table not in _LOST_WORDS)
    if others:
        parts.append(
            f"{plural(others, 'other record')} (ledger events, provenance, detection, indexes;"
            " --json counts each table)"
        )
    text = plural(lost.get("writes", 0), "write")
    return text + (": " + ", ".join(parts) if parts else "")


def record_json(record: dict[str, Any]) -> str:
    return json.dumps(record, indent=2, sort_keys=True)
