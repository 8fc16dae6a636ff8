"""The freshness anchors: the brain's newest seal kept outside it, so an older copy put back (a
rollback, a lost WAL, an old folder restored with its old anchor) is found.

After each commit the newest seal (sequence number and link) is written to
``freshness-<brain id>.json`` beside anchors.json. A second copy, the *kept anchor*, lives in the
brain's keystore (aimos.identity.anchors registers how it is read and moved): it moves when the
identity rows change and when the person anchors the brain, and lists the revocations the brain held
then. A write on a brain behind either anchor, or whose freshness file is gone, is refused
(``begin`` in store/seals.py asks here); `aimos verify`, `status` and `doctor` say the same.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeGuard

import apsw

from aimos import paths
from aimos.errors import AimosError, SealError
from aimos.plural import agree, plural
from aimos.store.cells import text_of
from aimos.store.seals import Seal, SealContext, brain_id_of, head_seal, seal_at


def behind_kept(conn: apsw.Connection, kept: dict[str, Any]) -> bool:
    """The brain does not descend from the kept anchor: behind it, or another history at its seal."""
    return _against(conn, head_seal(conn), kept, "in the keystore") is not None


def refuse_stale(conn: apsw.Connection, head: Seal) -> None:
    """A write on a brain behind its anchor, or whose anchor is gone, is refused: writing on would
    seal over the rollback and move the anchor past it. The kept anchor (in the keystore) is read
    only when the freshness file does not read: gone (refused, saying what the copy knew) or torn
    by a crash (the copy alone decides)."""
    anchor = anchor_for(conn)
    stale = freshness_failure(conn, head, anchor, kept_anchor_for(conn) if anchor is None else None)
    if stale is None and anchor is None and not _damaged(conn):
        stale = lost_anchor(brain_id_of(conn), None)
    if stale is None:
        return
    lost = stale["reason"] == "anchor_lost"
    raise SealError(
        stale["detail"] if lost else f"this brain is not the newest one aimos wrote here: {stale['detail']}",
        "If this brain is the one you mean to keep, `aimos anchor` (with the master passphrase) anchors "
        "it again and says which revocations it does not hold; otherwise put the newer brain file back."
        if lost
        else "If you put an older copy or a backup back on purpose, `aimos restore BACKUP` does it with "
        "a signed record; otherwise put the newer brain file back.",
        reason=stale["reason"],
    )


def _damaged(conn: apsw.Connection) -> bool:
    """The brain's freshness file exists but does not read as an anchor."""
    brain_id = brain_id_of(conn)
    return brain_id is not None and freshness_path(brain_id).exists()


def freshness_path(brain_id: str) -> Path:
    """This brain's anchor file beside anchors.json: one small JSON object per brain."""
    return paths.config_dir() / f"freshness-{brain_id}.json"


def read_freshness(brain_id: str) -> dict[str, Any] | None:
    """The anchored newest seal of this brain ({seq, link, anchored_at}), or None. A read that
    meets another process's write half done (the block is rewritten in place) is read again."""
    for attempt in range(3):
        try:
            entry = json.loads(freshness_path(brain_id).read_text("utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            entry = None
        if well_formed_anchor(entry):
            return entry
        time.sleep(0.002 * (attempt + 1))
    return None


def well_formed_anchor(entry: Any) -> TypeGuard[dict[str, Any]]:
    """An anchor is an object with a seal number (an int) and a link (text)."""
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("seq"), int)
        and not isinstance(entry.get("seq"), bool)
        and isinstance(entry.get("link"), str)
    )


ANCHOR_BYTES = 256


def write_freshness(brain_id: str, seq: int, link: bytes, *, note: str | None = None) -> None:
    """Anchor this brain's newest seal outside it: one small JSON object, written in place.

    Written after the commit with one positioned write of a fixed-size block (no temporary file,
    no rename: about 4 us instead of 130 us), without fsync and without a lock: an anchor torn in
    a crash, or overwritten by a concurrent writer's older one, reads as older than the brain or as
    damaged (then the kept copy in the keystore decides, and the next write moves it on), never as
    newer. Only a file that is gone refuses writes until `aimos anchor`."""
    path = freshness_path(brain_id)
    entry: dict[str, Any] = {"seq": seq, "link": link.hex(), "anchored_at": int(time.time())}
    if note:
        entry["note"] = note[:64]
    data = json.dumps(entry, sort_keys=True).encode("utf-8")
    if len(data) >= ANCHOR_BYTES:
        raise SealError("the freshness anchor does not fit its block (a bug)", reason="anchor_invalid")
    if not path.parent.is_dir():
        paths.ensure_private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        os.pwrite(fd, data.ljust(ANCHOR_BYTES - 1) + b"\n", 0)
    finally:
        os.close(fd)


def after_commit(conn: apsw.Connection, ctx: SealContext) -> None:
    if ctx.sealed is None or ctx.brain_id is None:
        return
    with contextlib.suppress(OSError):  # an anchor that cannot move is only older: verify says so
        write_freshness(ctx.brain_id, *ctx.sealed)
    writer, tables = _KEPT_WRITERS.get(conn, (None, frozenset()))
    if writer is not None and not tables.isdisjoint(ctx.changed):
        with contextlib.suppress(OSError, AimosError):  # a kept anchor not moved is only older
            writer(*ctx.sealed)


def _restored_over(conn: apsw.Connection, anchor: dict[str, Any]) -> bool:
    """True when the brain's newest restore record (master-signed, sealed) says it replaced exactly
    this anchored seal: the brain went back on purpose (`aimos restore`), even if the anchor file
    was not moved before a crash."""
    found = conn.execute(
        "SELECT CAST(signed_body AS BLOB) FROM brain_restores ORDER BY rowid DESC LIMIT 1"
    ).fetchall()
    if not found:
        return False
    try:
        replaced = json.loads(text_of(found[0][0])).get("replaced_anchor") or {}
    except (ValueError, AttributeError, RecursionError):
        return False
    return bool(replaced.get("seq") == anchor["seq"] and replaced.get("link") == anchor["link"])


# the kept anchor (a second copy, in the brain's keystore: aimos.identity.anchors) and what moves
# it after a commit that changed the named tables; registered by the layer that opens keystores
KeptReader = Callable[[apsw.Connection], "dict[str, Any] | None"]
KeptWriter = Callable[[int, bytes], None]
_KEPT_READER: list[KeptReader] = []
_KEPT_WRITERS: weakref.WeakKeyDictionary[apsw.Connection, tuple[KeptWriter, frozenset[str]]] = (
    weakref.WeakKeyDictionary()
)


def read_kept_with(reader: KeptReader) -> None:
    _KEPT_READER[:] = [reader]


def keep_anchor_with(conn: apsw.Connection, writer: KeptWriter, tables: tuple[str, ...]) -> None:
    """After a commit on ``conn`` that added rows to one of ``tables``, ``writer`` moves the kept
    anchor to the new seal."""
    _KEPT_WRITERS[conn] = (writer, frozenset(tables))


def kept_anchor_for(conn: apsw.Connection) -> dict[str, Any] | None:
    """The brain's kept anchor, when a reader is registered and the keystore holds one."""
    return _KEPT_READER[0](conn) if _KEPT_READER else None


def lost_anchor(brain_id: str | None, kept: dict[str, Any] | None) -> dict[str, Any]:
    where = freshness_path(brain_id) if brain_id else "the freshness anchor"
    known = f" (the keystore's copy anchors seal #{kept['seq']})" if kept else ""
    return {
        "check": "freshness",
        "reason": "anchor_lost",
        "detail": f"the freshness anchor outside the brain is gone ({where}){known}: a rollback cannot "
        "be told, so writes wait until you confirm this brain",
        "table": None,
    }


def anchor_for(conn: apsw.Connection) -> dict[str, Any] | None:
    """This brain's anchor. Read it before the snapshot a check reads the brain in: anchors are
    written after their commit, so a snapshot taken afterwards is never behind the anchor read."""
    brain_id = brain_id_of(conn)
    return read_freshness(brain_id) if brain_id else None


def freshness_failure(
    conn: apsw.Connection,
    head: Seal | None,
    anchor: dict[str, Any] | None,
    kept: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    """Compare the brain's newest seal with the anchor outside it: a brain behind its anchor was
    rolled back (an older copy, a backup put back by hand, a lost WAL); one whose seal at the
    anchored number differs is another history. With the kept anchor (the keystore's copy): the
    freshness file missing is a lost anchor, and the brain is compared with the kept one too."""
    if kept is not None:
        # gone (not torn by a crash: a damaged file is compared with the kept copy alone)
        if anchor is None and not _damaged(conn) and not _restored_over(conn, kept):
            return lost_anchor(brain_id_of(conn), kept)
        behind = _against(conn, head, kept, "in the keystore")
        if behind is not None:
            return behind
    return _against(conn, head, anchor, "outside it")


def _against(
    conn: apsw.Connection, head: Seal | None, anchor: dict[str, Any] | None, where: str
) -> dict[str, Any] | None:
    if anchor is None or _restored_over(conn, anchor):
        return None
    seq, link = anchor["seq"], anchor["link"]
    have = head.seq if head else 0
    if have < seq:
        return {
            "check": "freshness",
            "reason": "brain_rolled_back",
            "detail": f"the brain's newest seal is #{have}, but seal #{seq} was committed and anchored "
            f"{where}: {plural(seq - have, 'write')} {agree(seq - have, 'is', 'are')} missing",
            "table": None,
        }
    at = head if head is not None and head.seq == seq else seal_at(conn, seq)
    try:
        same = at is not None and at.link.hex() == link
    except AimosError:  # a seal whose fields do not even hash: another history, named as such
        same = False
    if not same:
        return {
            "check": "freshness",
            "reason": "brain_history_mismatch",
            "detail": f"seal #{seq} of this brain is not the one anchored {where}",
            "table": None,
        }
    return None


def freshness_state(conn: apsw.Connection) -> dict[str, Any]:
    """For `aimos status`: the newest seal, the anchored one, and whether they agree (ok,
    rolled_back, history_mismatch, anchor_lost, anchor_damaged or unsealed), without re-hashing every
    row."""
    anchor = anchor_for(conn)
    kept = kept_anchor_for(conn)
    head = head_seal(conn)
    state = {"head_seal": head.seq if head else None, "anchored_seal": anchor["seq"] if anchor else None}
    problem = freshness_failure(conn, head, anchor, kept)
    if problem is not None:
        return {**state, "state": problem["reason"], "detail": problem["detail"]}
    if head is None:
        return {**state, "state": "unsealed", "detail": "no write has sealed this brain yet"}
    if anchor is None and _damaged(conn):  # the next write rewrites it
        return {
            **state,
            "state": "anchor_damaged",
            "detail": "the freshness file outside the brain does not read (torn by a crash?): the next "
            "write rewrites it",
        }
    if anchor is None:  # writes refuse it until the person anchors the brain again
        lost = lost_anchor(brain_id_of(conn), kept)
        return {**state, "state": lost["reason"], "detail": lost["detail"]}
    return {**state, "state": "ok", "detail": f"newest seal #{head.seq}, anchored outside the brain"}
