"""A device's side of a hub: linking this brain to one (`aimos hub init`), syncing (`aimos sync`,
the housekeeper's sync job), what waits each way (`aimos hub status`), and the home of the chains.

The hub's URL (it may hold a password) and every generation of the brain's content key this
device holds (aimos/hub/generations.py) live in the keystore, beside the brain's other secrets;
what this device sent and when it last synced is in a state file outside the brain
(state/hub/<brain id>.json, 0600), which a lost or stale copy only makes resend rows the hub
already holds (it keeps one of each), and read again records this brain holds; beside it, the log
of what this device pushed (aimos/hub/pushed.py), from which a push sends again what a hub that
went back lost.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aimos import paths
from aimos.crypto.ed25519 import KeyPair
from aimos.errors import (
    AimosError,
    BusyError,
    EpochRevokedError,
    HomeNotWritableError,
    HubUnreachableError,
    IntegrityError,
    NotFoundError,
    UsageError,
)
from aimos.hub import box, generations, heads, redactions, sync
from aimos.hub.pushed import PushedLog
from aimos.hub.records import count_after, sealed_by
from aimos.identity.devices import (
    HUB_CONTENT_KEY_ITEM,
    HUB_URL_ITEM,
    cut_device,
    cuts,
    hand_over,
    home,
    is_home,
    name_home,
    waiting_home,
)
from aimos.identity.epochs import DEVICE_SLOT_META
from aimos.identity.keystore import Keystore
from aimos.identity.master import master_row, sealed_master
from aimos.store.connection import Connection, write_transaction
from aimos.store.meta import brain_meta
from aimos.store.postgres import BrainKeys, PostgresHub, masked
from aimos.store.queries import devices as device_queries
from aimos.store.queries import hub as queries
from aimos.store.seals import head_seal
from aimos.vocabulary import PATH_LABEL, PATH_SAVE

URL_ITEM = HUB_URL_ITEM
CONTENT_KEY_ITEM = HUB_CONTENT_KEY_ITEM


# --- the link's secrets and state -----------------------------------------------------------------
def hub_url(keystore: Keystore) -> str | None:
    return keystore.find(URL_ITEM)


def content_key(keystore: Keystore) -> bytes:
    """The content key's first generation (it keys the hub's names of rows and devices)."""
    return generations.held(keystore).first


def state_path(brain_id: str) -> Path:
    return paths.hub_state_path(brain_id)


def read_state(brain_id: str) -> dict[str, Any]:
    try:
        doc = json.loads(paths.read_at_most(state_path(brain_id)))
    except (OSError, ValueError, RecursionError):
        return {}
    return doc if isinstance(doc, dict) else {}


def write_state(brain_id: str, **changes: Any) -> None:
    doc = {**read_state(brain_id), **changes}
    try:
        paths.write_private_file(
            state_path(brain_id), (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()
        )
    except OSError as exc:
        raise _state_unwritable(state_path(brain_id), exc) from None


def _state_unwritable(path: Path, exc: OSError) -> HomeNotWritableError:
    """The hub state folder's file ``path`` could not be written (a full disk, a folder made
    read-only, something else put at its name)."""
    return HomeNotWritableError(
        f"this device's hub state file {path} could not be written ({exc.strerror or type(exc).__name__})",
        f"Free space or fix {path.parent} (its owner, its permissions, or what is at that name), then "
        "run the command again.",
    )


def remembered_read(brain_id: str) -> sync.Anchor | None:
    """The record the last pull read on the hub, as the state file keeps it."""
    doc = read_state(brain_id).get("pull_anchor")
    if not isinstance(doc, dict):
        return None
    try:
        return sync.Anchor(
            int(doc["seq"]), str(doc["filed"]), int(doc["n"]), str(doc["link"]), int(doc["pulls"])
        )
    except (TypeError, KeyError, ValueError):
        return None


def remember_read(brain_id: str, pulled: sync.PullResult) -> None:
    """Keep the record the pull read last, for the next pull to start after (sync.newest_read)."""
    if pulled.anchor is not None:
        write_state(brain_id, pull_anchor=dataclasses.asdict(pulled.anchor))


def open_lock(brain_id: str) -> int:
    """The sync lock's file (made 0600 when it is not there), open."""
    lock = state_path(brain_id).with_suffix(".lock")
    try:
        paths.ensure_private_dir(lock.parent)
        return os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise _state_unwritable(lock, exc) from None


@contextlib.contextmanager
def sync_lock(brain_id: str) -> Iterator[None]:
    """One sync (or hub init) at a time per brain on this device: the housekeeper's job and a
    person's `aimos sync` never push the same records or pull the same batch twice (an exclusive
    lock in the state folder, released when the process ends, even by a kill)."""
    from aimos.locks import try_lock

    fd = open_lock(brain_id)
    try:
        if not try_lock(fd):
            raise BusyError(
                "another sync with the hub is running for this brain (`aimos sync` or the housekeeper's)",
                "It sends and fetches what this one would: wait for it, then check `aimos hub status`.",
            )
        yield
    finally:
        os.close(fd)


def linked_url(keystore: Keystore) -> str:
    url = hub_url(keystore)
    if url is None:
        raise NotFoundError(
            "this brain is not linked to a hub",
            "Link it from this device (`aimos hub init URL`), or join one (`aimos hub join URL`).",
        )
    return url


# --- linking a brain to a hub ----------------------------------------------------------------
@dataclass(frozen=True)
class About:
    """What a joining device needs to make its brain, sealed under the content key on the hub."""

    company_id: str
    brain_name: str
    master_created_at: int

    def sealed(self, key: bytes) -> bytes:
        """Sealed under the first generation (a device that joins opens it with that one)."""
        return box.seal_record(key, json.dumps(self.__dict__, sort_keys=True).encode("utf-8"))

    @classmethod
    def opened(cls, ring: box.KeyRing, sealed: bytes) -> About:
        doc = json.loads(ring.open(sealed, "about the brain"))
        return cls(str(doc["company_id"]), str(doc["brain_name"]), int(doc["master_created_at"]))


def init(
    conn: Connection,
    keystore: Keystore,
    master: KeyPair,
    housekeeper: Any,
    url: str,
    now: int,
    told: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Create the hub's tables (if the database has none), put this brain's keys on it, name this
    device the home, and push every row the brain holds."""
    if hub_url(keystore) is not None:
        raise UsageError(
            f"this brain is already linked to a hub ({masked(linked_url(keystore))})",
            "Sync with it: `aimos sync`.",
        )
    meta = brain_meta(conn)
    key = box.new_content_key()
    master_info = master_row(conn)
    keys = BrainKeys(
        brain_id=meta["brain_id"],
        master_fingerprint=master.fingerprint,
        master_public_key=master.public_b64u,
        sealed_master=sealed_master(keystore),
        wrapped_key=box.wrap_content_key(master.seed, key),
        sealed_about=About(
            meta["company_id"], meta.get("brain_name", ""), int(master_info["created_at"])
        ).sealed(key),
    )
    with sync_lock(meta["brain_id"]), PostgresHub(url, meta["brain_id"]) as hub:
        hub.create_schema()
        hub.add_brain(keys)
        ring = box.KeyRing({box.FIRST: key})
        keystore.put(CONTENT_KEY_ITEM, ring.to_text())
        keystore.put(URL_ITEM, url)
        if home(conn) is None:
            with write_transaction(conn, housekeeper):
                name_home(conn, master, meta["device_fp"], now)
                queries.add_brain_meta(conn, [(DEVICE_SLOT_META, "0")])
        with PushedLog(paths.hub_pushed_path(meta["brain_id"])) as log:
            pushed = sync.push(conn, hub, ring, meta["device_fp"], 0, _signer(housekeeper), log, told)
    write_state(
        meta["brain_id"],
        pushed_through_seal=pushed.through_seal,
        last_sync=now,
        last_error=None,
        sealed_master_sha256=sealed_digest(keys.sealed_master),
    )
    return {
        "brain_id": meta["brain_id"],
        "url": masked(url),
        "records": pushed.records,
        "bytes": pushed.bytes_sent,
    }


# --- syncing ---------------------------------------------------------------------------------
@dataclass
class _Sync:
    """One sync's shared state: what it was given, and what each step found (run_sync's steps)."""

    conn: Connection
    keystore: Keystore
    housekeeper: Any
    told: Callable[[str, int], None] | None
    brain_id: str
    device: str
    picked: generations.PickedUp | None = None
    pushed: sync.PushResult = dataclasses.field(default_factory=sync.PushResult)
    caught: sync.PullResult = dataclasses.field(default_factory=sync.PullResult)
    pulled: sync.PullResult = dataclasses.field(default_factory=sync.PullResult)
    later: sync.PullResult = dataclasses.field(default_factory=sync.PullResult)
    redacted: dict[str, Any] = dataclasses.field(default_factory=dict)
    behind: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    passed_on: int = 0
    home_work: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def ring(self) -> box.KeyRing:
        assert self.picked is not None, "the keys are picked up first"
        return self.picked.ring

    @property
    def arrived(self) -> set[str]:
        """The memories the catch-ups and the pull brought."""
        return self.caught.memories | self.pulled.memories | self.later.memories


def _pick_up_keys(run: _Sync, hub: PostgresHub) -> None:
    """The master sealed with a new passphrase goes up; the content key's new generations come down."""
    _push_sealed_master(hub, run.keystore, run.brain_id)
    public_key = master_row(run.conn)["public_key_b64u"]
    run.picked = generations.pick_up(
        hub, run.keystore, run.brain_id, public_key, run.device, _signer(run.housekeeper).key
    )


def _push_rows(run: _Sync, hub: PostgresHub) -> None:
    """What the hub lacks of this device's rows; then a device a generation left out stops."""
    run.pushed = _push(run.conn, hub, run.ring, run.device, run.brain_id, run.housekeeper, run.told)
    assert run.picked is not None
    generations.refuse_if_left_out(run.picked)


def _catch_up_first(run: _Sync, hub: PostgresHub) -> None:
    """A catch-up reads by device and number: the pull's place in the hub's order stays."""
    read = remembered_read(run.brain_id)
    run.caught = _catch_up(run.conn, hub, run.ring, run.brain_id, run.device, run.housekeeper, [], read)


def _pull_records(run: _Sync, hub: PostgresHub) -> None:
    told = run.told
    run.pulled = sync.pull(
        run.conn,
        hub,
        run.ring,
        run.device,
        run.housekeeper,
        (lambda n: told("pulled", n)) if told else None,
        read=run.caught.anchor,
    )


def _catch_up_after_pull(run: _Sync, hub: PostgresHub) -> None:
    """What the heads records the pull brought say this device was not given; then the record read
    last is kept for the next pull."""
    claims, read = run.pulled.heard, run.pulled.anchor
    run.later = _catch_up(run.conn, hub, run.ring, run.brain_id, run.device, run.housekeeper, claims, read)
    remember_read(run.brain_id, run.later)


def _apply_redactions(run: _Sync, hub: PostgresHub) -> None:
    run.redacted = redactions.apply_waiting(run.conn, run.housekeeper)
    run.behind = heard(run.conn, run.brain_id, run.device, [])


def _check_cut(run: _Sync, hub: PostgresHub) -> None:
    """The push cursor past the pulls' seals; a device the master cut stops here."""
    _skip_pull_seals(run.conn, run.brain_id, run.pushed.through_seal)
    _refuse_if_cut(run.conn, run.device)


def _pass_keys_on(run: _Sync, hub: PostgresHub) -> None:
    assert run.picked is not None
    run.passed_on = generations.pass_on(run.conn, hub, run.picked)


def _home_work(run: _Sync, hub: PostgresHub) -> None:
    """On the home: its part (_as_home, which hands over when the master named another home), and
    a push of what it wrote."""
    if not is_home(run.conn):
        return
    run.home_work = _as_home(run.conn, run.brain_id, run.housekeeper, run.arrived)
    if run.home_work["handed_over_to"] or any(
        run.home_work[k] for k in ("forwarded_applied", "judged", "relabelled")
    ):
        pushed = _push(run.conn, hub, run.ring, run.device, run.brain_id, run.housekeeper, None)
        run.home_work["pushed_as_home"] = pushed.records


# a sync, step by step, in this order
_SYNC_STEPS: tuple[Callable[[_Sync, PostgresHub], None], ...] = (
    _pick_up_keys,
    _push_rows,
    _catch_up_first,
    _pull_records,
    _catch_up_after_pull,
    _apply_redactions,
    _check_cut,
    _pass_keys_on,
    _home_work,
)


def run_sync(
    conn: Connection,
    keystore: Keystore,
    housekeeper: Any,
    told: Callable[[str, int], None] | None = None,
) -> dict[str, Any]:
    """Pick up the content key's new generations, push what the hub lacks, pull what this device
    lacks, pass the generations on to housekeeper keys that lack them, and on the home apply what
    the other devices forwarded, judge what arrived and push that. A failure is recorded in the
    state file (`aimos hub status` says it) and raised; what was done before it stays done."""
    meta = brain_meta(conn)
    run = _Sync(conn, keystore, housekeeper, told, meta["brain_id"], meta["device_fp"])
    url = linked_url(keystore)
    started = time.time()
    try:
        with sync_lock(run.brain_id), PostgresHub(url, run.brain_id) as hub:
            for step in _SYNC_STEPS:
                step(run, hub)
    except EpochRevokedError as exc:
        raised = _revoked_words(exc)
        write_state(run.brain_id, last_error={"at": int(time.time()), "message": raised.message})
        raise raised from None
    except AimosError as exc:
        write_state(run.brain_id, last_error={"at": int(time.time()), "message": exc.message})
        raise
    return _synced(run, url, started)


def _revoked_words(exc: EpochRevokedError) -> EpochRevokedError:
    """The hub's new content key left this device out (generations.refuse_if_left_out: said as it
    is), or the pull brought this device's own revocation: its housekeeper can seal nothing more."""
    if exc.reason == generations.LEFT_OUT:
        return exc
    return EpochRevokedError(
        f"this device's housekeeper cannot seal the pull ({exc.message}): the master revoked "
        "this device from another one (`aimos hub devices` there shows it), or its key was just "
        "rotated",
        "A revoked device writes nothing more, and every other device refuses what it signs; if it "
        "is yours, join the brain again in a new AIMOS_HOME. After a key rotation, run `aimos sync` "
        "again.",
    )


def _synced(run: _Sync, url: str, started: float) -> dict[str, Any]:
    """The state file told the sync went through (and what it repaired), and what it did."""
    pushed, pulled, home_work = run.pushed, run.pulled, run.home_work
    went_back: dict[str, Any] = {"resent": pushed.resent, "resent_changed": pushed.resent_changed}
    went_back |= {"hub_went_back": pulled.went_back, "skipped": pulled.skipped}
    if pushed.resent or pulled.went_back:  # for `aimos hub status`
        write_state(run.brain_id, last_repair={"at": int(time.time()), **went_back})
    write_state(run.brain_id, last_sync=int(time.time()), last_error=None)
    went_back["not_its_own"] = pushed.not_its_own
    return {
        "url": masked(url),
        "pushed": pushed.records + int(home_work.get("pushed_as_home", 0)),
        "pulled": pulled.records,
        "applied": pulled.applied,
        "memories": len(run.arrived),
        "refused": pulled.refused + run.caught.refused + run.later.refused,
        "caught_up": run.caught.records + run.later.records,
        "behind": run.behind,
        "content_key_generation": run.ring.newest,
        "keys_passed_on": run.passed_on,
        **run.redacted,
        **went_back,
        "repairs": repair_words(went_back),
        **home_work,
        "seconds": round(time.time() - started, 3),
    }


def repair_words(done: dict[str, Any]) -> list[str]:
    """What a sync did about a hub that went back or holds a record under this device's name it
    did not push (aimos/hub/sync.py), in words: `aimos sync` and the housekeeper's log say them."""
    lines = []
    if done["resent"]:
        lines.append(
            f"the hub had lost {done['resent']:,} records this device pushed (restored from an older copy,"
            " or deleted): sent them again"
            + (
                f" ({done['resent_changed']:,} of them not as they were: signed by a key rotated out since,"
                " or a row redacted since)"
                if done["resent_changed"]
                else ", the same as before"
            )
        )
    for record in done.get("not_its_own", []):
        lines.append(
            f"{record} is filed under this device's name, but this device did not push it: every device"
            " refuses it; a device that holds the content key wrote it (`aimos hub devices`, then revoke it)"
        )
    if done["hub_went_back"]:
        lines.append(
            "the hub went back (it no longer held the record this device pulled last): read it again"
            f" from the start, {done['skipped']:,} records this device already held left as they are"
        )
    return lines


def heard(
    conn: Connection, brain_id: str, device: str, claims: list[tuple[str, dict[str, Any]]]
) -> list[dict[str, Any]]:
    """What the heads records a pull brought say, kept in the state file; each device of which
    another device has pulled records the hub did not give this one (aimos/hub/heads.py)."""
    seen = heads.merged(read_state(brain_id).get("heads_seen"), claims)
    if claims:
        write_state(brain_id, heads_seen=seen)
    pulled = sync.pulled_heads(conn)
    return heads.behind(seen, pulled.devices, device, sync.refusals(conn, pulled))


def _catch_up(
    conn: Connection,
    hub: PostgresHub,
    keys: box.KeyRing,
    brain_id: str,
    device: str,
    housekeeper: Any,
    claims: list[tuple[str, dict[str, Any]]],
    read: sync.Anchor | None,
) -> sync.PullResult:
    """The records another device has pulled and the hub's order went past for this one, asked
    for by device (aimos/hub/heads.py) and applied; its anchor is ``read`` (the record a pull read
    last), still the place to pull from."""
    missing = [entry["device"] for entry in heard(conn, brain_id, device, claims)]
    if not missing:
        return sync.PullResult(anchor=read)
    return sync.catch_up(conn, hub, keys, device, housekeeper, missing, read)


def refuse_unpushed_redaction(conn: Connection, keystore: Keystore, memory_id: str) -> None:
    """On a brain that syncs, a memory this device saved (or its home saved for another device)
    that it has not pushed yet is not redacted: the other devices would get it without its text,
    and its signed save would no longer check there (every sync of theirs refused)."""
    if hub_url(keystore) is None:
        return
    after = int(read_state(brain_meta(conn)["brain_id"]).get("pushed_through_seal", 0))
    rowid = queries.memory_rowid(conn, memory_id)
    seal = sealed_by(conn, "memories", rowid, after) if rowid is not None else None
    if seal is None or queries.pulled_in(conn, seal):
        return  # pushed, or pulled from the hub
    raise UsageError(
        f"memory {memory_id} was saved on this device and has not reached the hub yet",
        "Nothing was changed. Redacted now, its signed save would no longer check on the other "
        "devices, which would refuse every sync: run `aimos sync` first, then redact it (every "
        "device then removes the text; the hub keeps it sealed, as it keeps every synced memory).",
    )


def sealed_digest(sealed: str) -> str:
    return hashlib.sha256(sealed.encode("utf-8")).hexdigest()


def _push_sealed_master(hub: PostgresHub, keystore: Keystore, brain_id: str) -> None:
    """After `aimos passphrase change` here: the master sealed with the new passphrase, for the
    devices that join from now on (only a change made on this device: each device's keystore seals
    the master with the passphrase it was given)."""
    sealed = sealed_master(keystore)
    digest = sealed_digest(sealed)
    known = read_state(brain_id).get("sealed_master_sha256")
    if known == digest:
        return
    if known is not None:
        hub.add_sealed_master(sealed)
    write_state(brain_id, sealed_master_sha256=digest)


def share_sealed_master(keystore: Keystore, brain_id: str) -> str | None:
    """After a passphrase change: the master sealed with the new passphrase to the hub now, when
    the brain is linked to one and it answers (else at the next sync). None when there is no hub;
    else what was done, in words."""
    url = hub_url(keystore)
    if url is None:
        return None
    try:
        with sync_lock(brain_id), PostgresHub(url, brain_id) as hub:
            _push_sealed_master(hub, keystore, brain_id)
    except AimosError as exc:
        return f"the hub did not take the new sealing now ({exc.message}): the next `aimos sync` sends it"
    return "devices that join from now on open the master with the new passphrase"


def _push(
    conn: Connection,
    hub: PostgresHub,
    ring: box.KeyRing,
    device: str,
    brain_id: str,
    housekeeper: Any,
    told: Callable[[str, int], None] | None,
) -> sync.PushResult:
    with PushedLog(paths.hub_pushed_path(brain_id)) as log:
        pushed = sync.push(
            conn,
            hub,
            ring,
            device,
            0 if log.made else int(read_state(brain_id).get("pushed_through_seal", 0)),
            _signer(housekeeper),
            log,
            (lambda n: told("pushed", n)) if told else None,
        )
    write_state(brain_id, pushed_through_seal=pushed.through_seal)
    return pushed


def _signer(housekeeper: Any) -> Any:
    """The housekeeper's signer (a session hands a function that loads it)."""
    return housekeeper() if callable(housekeeper) else housekeeper


def _skip_pull_seals(conn: Connection, brain_id: str, pushed_through: int) -> None:
    """Move the push cursor past the seals of the pulls that followed it (rows of other devices,
    which the hub holds), when nothing of this device's own was sealed in between."""
    head = head_seal(conn)
    if head is None or head.seq <= pushed_through:
        return
    pulls = queries.pull_seals_after(conn, pushed_through)
    if all(seq in pulls for seq in range(pushed_through + 1, head.seq + 1)):
        write_state(brain_id, pushed_through_seal=head.seq)


def _as_home(conn: Connection, brain_id: str, housekeeper: Any, arrived: set[str]) -> dict[str, Any]:
    """The home's part of a sync: the requests other devices kept for it applied (outcomes, whose
    weight transitions it signs; saves of content already saved, whose occurrences it records;
    corrections; judgments, with the master's signature when they raise trust),
    the clusters the arrivals grew relabelled, and the arrivals judged (the agreement detector).
    A forwarded request the brain refuses is named in the state file and not tried again."""
    from aimos.epistemic.chain import relabel_arrivals
    from aimos.epistemic.detect import settle

    refused = dict(read_state(brain_id).get("refused_requests") or {})
    signer = _signer(housekeeper)
    now = int(time.time())
    applied, newly = apply_forwarded(conn, signer, now, frozenset(refused))
    refused.update(newly)
    relabelled = 0
    if arrived:
        with write_transaction(conn, signer):
            relabelled = relabel_arrivals(conn, signer, sorted(arrived), now)
    judged = settle(conn, signer, now)
    write_state(brain_id, refused_requests=refused)
    handed = None
    waiting = waiting_home(conn)
    if waiting is not None and waiting["device_fp"] != brain_meta(conn)["device_fp"]:
        # the master named another home: this device stops here, after the work above
        with write_transaction(conn, signer):
            hand_over(conn, waiting["home_id"], brain_meta(conn)["device_fp"], now, housekeeper=signer)
        handed = str(waiting["device_fp"])
    return {
        "handed_over_to": handed,
        "forwarded_applied": applied,
        "forwarded_refused": [{"request_id": k, "why": v} for k, v in newly.items()],
        "relabelled": relabelled,
        "judged": judged,
    }


def apply_forwarded(
    conn: Connection, housekeeper: Any, now: int, skip: frozenset[str] = frozenset()
) -> tuple[int, dict[str, str]]:
    """On the home: each request another device kept for it (hub_requests), in the order it
    arrived, once (its nonce then used), each in its own write transaction, checked as if its agent
    had sent it here when its device received it. One the brain refuses now (its epoch revoked
    since, its memory out of its grant) is left unapplied; ``skip``: ids refused before. How many
    were applied, and the refused ones with why."""
    from aimos.actions.memory import save_forwarded
    from aimos.epistemic.chain import judge_in_transaction
    from aimos.identity.requests import SignedRequest
    from aimos.learning.outcomes import record_outcome_in_transaction

    applied, refused = 0, {}
    waiting = device_queries.waiting_requests(conn)
    for r in waiting:
        if r["request_id"] in skip:
            continue
        request = SignedRequest(
            json.loads(r["body"]),
            "POST",
            r["signed_path"],
            r["nonce"],
            r["ts_signed"],
            r["signature_b64u"],
            r["certificate"],
        )
        received = int(r["received_at"])
        try:
            with write_transaction(conn, housekeeper):
                if r["signed_path"] == PATH_SAVE:
                    save_forwarded(conn, housekeeper, request, now, received)
                elif r["signed_path"] == PATH_LABEL:
                    judge_in_transaction(
                        conn,
                        housekeeper,
                        request,
                        now,
                        master_signature=r["master_signature_b64u"],
                        received=received,
                    )
                else:
                    record_outcome_in_transaction(conn, housekeeper, request, now, received=received)
        except AimosError as exc:
            refused[str(r["request_id"])] = exc.message
            continue
        applied += 1
    return applied, refused


def _refuse_if_cut(conn: Connection, device: str) -> None:
    """A device the master cut (revoked, or a home replaced while it was away) is refused by every
    other device from its cut on: it says so instead of syncing on."""
    through = cuts(conn).get(device)
    if through is not None:
        raise IntegrityError(
            f"the master cut this device off the brain after its record {through} (it was revoked, or "
            "the home was moved away from it while it was away): every other device refuses what it "
            "wrote since",
            "Join the brain again in a new AIMOS_HOME (`aimos hub join URL`); this brain stays as it is.",
            reason="hub_device_cut",
        )


def move_home(
    conn: Connection, master: KeyPair, housekeeper: Any, now: int, *, force: bool = False
) -> dict[str, Any]:
    """Name this device the home (the master's signed record). It takes over when the home in
    force learns of the move at its next sync and hands over, so the two never both write a chain.
    ``force`` (the old home is lost): the master hands over at once and cuts the old home's
    records after the newest this device pulled; the old home must join again."""
    me = brain_meta(conn)["device_fp"]
    acting = home(conn)
    if acting is None or acting["device_fp"] == me:
        raise UsageError("this device is already the home", "Nothing to do.")
    waiting = waiting_home(conn)
    with write_transaction(conn, housekeeper):
        if waiting is not None and waiting["device_fp"] == me and not force:
            raise UsageError(
                f"this device is already named the home: it takes over when {acting['device_fp']} "
                "syncs and hands over",
                "Sync both devices; if the old home is lost, run `aimos hub home --force`.",
            )
        # a record of its own, even over one that waits: the old home may still hand that one
        # over, and two handovers of one record would be one row name with two contents
        home_id = name_home(conn, master, me, now)
        if force:
            old = str(acting["device_fp"])
            through = sync.pulled_heads(conn).devices.get(old, (0, ""))[0]
            hand_over(conn, home_id, old, now, master=master)
            cut_device(conn, master, old, through, "home_moved", now)
    return {"home_id": home_id, "device": me, "from_device": acting["device_fp"], "forced": force}


def status(conn: Connection, keystore: Keystore) -> dict[str, Any]:
    """What waits each way and when the last sync ran (the hub asked when it answers)."""
    meta = brain_meta(conn)
    brain_id, device = meta["brain_id"], meta["device_fp"]
    url = linked_url(keystore)
    state = read_state(brain_id)
    heads = sync.pulled_heads(conn)
    found = home(conn)
    out: dict[str, Any] = {
        "url": masked(url),
        "brain_id": brain_id,
        "device": device,
        "home": found["device_fp"] if found else device,
        "this_device_is_home": is_home(conn),
        "home_waiting": (waiting["device_fp"] if (waiting := waiting_home(conn)) else None),
        "last_sync": state.get("last_sync"),
        "last_error": state.get("last_error"),
        "content_key_generation": generations.held(keystore).newest,
        "requests_refused": state.get("refused_requests") or {},
        "pulled_through": heads.through,
        "last_repair": state.get("last_repair"),
        "devices_pulled": {d: n for d, (n, _link) in sorted(heads.devices.items())},
        "devices_refused_from": dict(sorted(sync.refusals(conn, heads).items())),
        "redactions_refused": redactions.refused_here(conn),
        "behind": heard(conn, brain_id, device, []),
    }
    out["to_push_at_most"] = count_after(conn, int(state.get("pushed_through_seal", 0)))
    try:
        key = content_key(keystore)
        filed = box.device_name(key, device)
        read = sync.newest_read(conn, key, remembered_read(brain_id))
        out["pulled_through"] = read.seq if read else 0
        with (
            PostgresHub(url, brain_id) as hub,
            PushedLog(paths.hub_pushed_path(brain_id), create=False) as log,
        ):
            counts = hub.counts()
            out["hub_went_back"] = sync.went_back(hub, read)
            through = 0 if out["hub_went_back"] or read is None else read.seq
            out["to_pull"] = hub.waiting_for(through, filed)
            newest = hub.newest_of(filed)
            out["hub_lost_of_this_device"] = max(0, log.newest()[0] - (newest[0] if newest else 0))
        named = {box.device_name(key, str(d["device"])): str(d["device"]) for d in devices(conn)}
        for entry in counts["devices"]:  # the hub knows devices by keyed names only
            entry["device"] = named.get(entry["device"], f"{entry['device']} (not a device this brain knows)")
        out["hub"] = counts
        out["reachable"] = True
    except AimosError as exc:
        out["reachable"] = False
        out["unreachable_because"] = exc.message
    return out


def devices(conn: Connection) -> list[dict[str, Any]]:
    """Every device this brain has seen: when it joined, its agents, whether it is this device,
    the home, and revoked (every epoch it holds revoked)."""
    me = brain_meta(conn)["device_fp"]
    found = home(conn)
    home_fp = found["device_fp"] if found else me
    out = []
    for r in device_queries.devices_seen(conn):
        out.append(
            {
                "device": r["device_fp"],
                "since": r["since"],
                "agents": sorted(set((r["agents"] or "").split(","))) if r["agents"] else [],
                "this_device": r["device_fp"] == me,
                "home": r["device_fp"] == home_fp,
                "revoked": r["revoked"] == r["epochs"],
            }
        )
    return out


def resolve_device(conn: Connection, ref: str) -> str:
    """A device by its id or a unique part of it (after `aimos-device:`)."""
    known = [str(d["device"]) for d in devices(conn)]
    wanted = ref.strip()
    hits = [d for d in known if d == wanted or d.removeprefix("aimos-device:").startswith(wanted)]
    if not wanted or not hits:
        raise NotFoundError(f"no device {ref!r} in this brain", "List them: `aimos hub devices`.")
    if len(hits) > 1:
        raise UsageError(f"{ref!r} names {len(hits)} devices", "Give more of the id (`aimos hub devices`).")
    return hits[0]


def revoke_device(
    conn: Connection,
    keystore: Keystore,
    master: KeyPair,
    housekeeper: Any,
    ref: str,
    reason: str,
    now: int,
) -> dict[str, Any]:
    """The master's revocation of every epoch a device holds (its housekeeper and its agents): at
    their next sync every device refuses what that device signs from now on, and the device itself
    can write nothing more. On a brain linked to a hub, the content key gets a new generation in
    the same step, which the revoked device is not given (aimos/hub/generations.py): the hub must
    answer, else nothing is revoked."""
    device = resolve_device(conn, ref)
    if device == brain_meta(conn)["device_fp"]:
        raise UsageError(
            "that is this device", "Revoke a device from another device of the brain; nothing was revoked."
        )
    for found, what in ((home(conn), "the home"), (waiting_home(conn), "named the home")):
        if found is not None and found["device_fp"] == device:
            raise UsageError(
                f"{device} is {what}, whose housekeeper writes weights and labels",
                "Make another device the home first (`aimos hub home` there, then sync; `--force` if "
                "the home is lost); nothing was revoked.",
            )
    live = device_queries.live_epochs_of(conn, device)
    if not live:
        raise UsageError(f"every epoch of {device} is already revoked", "Nothing to do.")
    through = sync.pulled_heads(conn).devices.get(device, (0, ""))[0]
    url = hub_url(keystore)
    brain_id = brain_meta(conn)["brain_id"]
    with contextlib.ExitStack() as stack:
        hub = None
        if url is not None:
            stack.enter_context(sync_lock(brain_id))
            hub = stack.enter_context(_hub_for_revocation(url, brain_id))
        with write_transaction(conn, housekeeper):
            # its later records are refused whatever time they claim
            cut_device(conn, master, device, through, "revoked", now)
            done = _revoke_epochs(conn, master, live, reason, now)
            generation = (
                None if hub is None else generations.rekey(conn, hub, keystore, master, brain_id, now)
            )
    return {
        "device": device,
        "through_record": through,
        "revoked": [{"agent_id": r["agent_id"], "valid_from": r["agent_valid_from"]} for r in done],
        "content_key_generation": generation,
    }


def _revoke_epochs(
    conn: Connection, master: KeyPair, live: list[device_queries.EpochKey], reason: str, now: int
) -> list[dict[str, Any]]:
    from aimos.identity.epochs import revoke_epoch

    return [
        revoke_epoch(
            conn,
            master,
            company_id=brain_meta(conn)["company_id"],
            agent_id=e["agent_id"],
            valid_from=e["valid_from"],
            reason=reason,
            now=now,
        )
        for e in live
    ]


@contextlib.contextmanager
def _hub_for_revocation(url: str, brain_id: str) -> Iterator[PostgresHub]:
    """The hub, its schema brought up to date (a hub made before content key generations gets
    their table); a hub that does not answer (before or while the key is replaced) refuses the
    revocation: the write transaction inside this block rolls back."""
    try:
        with PostgresHub(url, brain_id) as hub:
            hub.create_schema()
            yield hub
    except HubUnreachableError as exc:
        raise HubUnreachableError(
            exc.message,
            "A revocation replaces the brain's content key on the hub, so the hub must answer: "
            "nothing was revoked. Run it again when the hub answers (`aimos hub status`).",
        ) from None
