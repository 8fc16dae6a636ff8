"""`aimos hub join URL`: this device becomes one more device of a brain another device put on a hub.

The master passphrase opens the master key the hub holds sealed (Argon2id, as the keystore holds
it); with it this device unwraps every generation of the brain's content key, enrols its own
housekeeper and agent epochs under the same master (keys only this device holds), pulls every
record, each verified as if it were written here, and seals what it holds. From then on it works
offline like any brain and syncs with `aimos sync`. A wrong passphrase, a hub that holds another
master, or any record that does not verify leaves nothing behind: no brain file, no keystore
item, no anchor.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aimos import __version__, paths
from aimos.crypto.ed25519 import KeyPair
from aimos.crypto.encoding import iso_ms
from aimos.errors import EncodingError, PassphraseError, UsageError
from aimos.hub import box, device, generations, redactions, sync
from aimos.hub.pushed import PushedLog
from aimos.identity.anchors import keep_anchor, revocations_held
from aimos.identity.epochs import DEVICE_SLOT_META, DEVICE_SLOTS, enrol_epoch
from aimos.identity.keystore import open_keystore, settle_keystore
from aimos.identity.master import MASTER_ITEM
from aimos.identity.passphrase import unseal, wrong_passphrase
from aimos.identity.signer import Signer
from aimos.installer.setup import (
    InstallOptions,
    _check_writable,
    _hold_install_lock,
    _remove_brain_files,
    _Run,
    _start_service,
    _Tracking,
    _write_anchors,
    enrol_agent,
    grant_housekeeper,
    refuse_foreign_file,
    validate,
)
from aimos.ledger.events import append_event
from aimos.store import seals
from aimos.store.connection import Connection, open_writer, write_transaction
from aimos.store.postgres import BrainKeys, PostgresHub, masked
from aimos.store.queries import devices as device_queries
from aimos.store.queries import hub as queries
from aimos.store.queries import identity as identity_queries
from aimos.vocabulary import DEVICE_JOINED_OPERATION, HOUSEKEEPER


@dataclass(frozen=True)
class JoinResult:
    brain_id: str
    brain_path: str
    master_fingerprint: str
    keystore_kind: str
    device: str
    agent_id: str
    agent_valid_from: int
    records: int
    memories: int
    url: str
    service: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def choose_brain(found: list[BrainKeys], brain_id: str | None, url: str) -> BrainKeys:
    if not found:
        raise UsageError(
            f"the hub at {masked(url)} holds no brain yet", "Run `aimos hub init URL` on the first device."
        )
    if brain_id is None:
        if len(found) > 1:
            raise UsageError(
                f"the hub holds {len(found)} brains: " + ", ".join(b.brain_id for b in found),
                "Choose one with --brain ID.",
            )
        return found[0]
    for keys in found:
        if keys.brain_id == brain_id:
            return keys
    raise UsageError(
        f"the hub holds no brain {brain_id}", "Run `aimos hub join URL` without --brain to see them."
    )


def open_master(keys: BrainKeys, passphrase: str) -> KeyPair:
    """The master key from the hub's sealed copy; a wrong passphrase is refused (exit 6), and so
    is a sealed key whose public half is not the master the hub names."""
    try:
        master = KeyPair(unseal(keys.sealed_master, passphrase))
    except EncodingError:
        raise PassphraseError("the hub's sealed master key is damaged") from None
    except PassphraseError as exc:
        if exc.reason == "sealed_master_damaged":  # not a sealing aimos makes (its costs, its salt)
            raise PassphraseError(
                "the hub's sealed master key is damaged, or asks for an Argon2 cost aimos never sets",
                "Nothing was joined. The hub's key record was changed: check who can write to the hub.",
            ) from None
        refused = wrong_passphrase(passphrase)
        refused.hint = (
            "Give the brain's master passphrase: the one set at `aimos hub init`, or by the newest "
            "`aimos passphrase change` a device of the brain made while the hub answered. " + refused.hint
        )
        raise refused from None
    if master.fingerprint != keys.master_fingerprint or master.public_b64u != keys.master_public_key:
        raise PassphraseError(
            "the hub's sealed master key is not the master it names for this brain",
            "The hub's key record was changed: nothing was joined. Check who can write to the hub.",
        )
    return master


def join(
    url: str,
    passphrase: str,
    options: InstallOptions,
    now: int,
    *,
    brain_id: str | None = None,
    told: Callable[[int], None] | None = None,
) -> JoinResult:
    """Make this device's brain from the hub; the caller has checked that none is installed."""
    validate(options)
    with PostgresHub(url) as hub:
        keys = choose_brain(hub.brains(), brain_id, url)
        master = open_master(keys, passphrase)
        hub.brain_id = keys.brain_id
        content_keys = _content_keys(hub, keys, master)
        about = device.About.opened(content_keys, keys.sealed_about)
        options.brain_name, options.company_id = about.brain_name or options.brain_name, about.company_id
        kind = (
            options.keystore if options.keystore in ("os", "file") else settle_keystore(options.keystore).kind
        )
        run = _Run()
        try:
            return _make(run, hub, keys, master, content_keys, about, kind, url, options, now, told)
        except BaseException as exc:
            run.fail(exc, "join failed")
            raise
        finally:
            run.release()


def _content_keys(hub: PostgresHub, keys: BrainKeys, master: KeyPair) -> box.KeyRing:
    """Every generation of the content key: the first from the brain's row, each later one from
    its master's wrap, checked against the master's record of it."""
    ring = box.KeyRing({box.FIRST: box.unwrap_content_key(master.seed, keys.wrapped_key)})
    found = hub.key_rows()
    signed = generations.records(found, keys.brain_id, keys.master_public_key)
    return generations.taken(ring, found, signed, master_seed=master.seed)


def _make(
    run: _Run,
    hub: PostgresHub,
    keys: BrainKeys,
    master: KeyPair,
    content_keys: box.KeyRing,
    about: device.About,
    kind: str,
    url: str,
    options: InstallOptions,
    now: int,
    told: Callable[[int], None] | None,
) -> JoinResult:
    for folder in (paths.data_dir(), paths.config_dir(), paths.state_dir()):
        _check_writable(run, folder)
    _hold_install_lock(run)
    brain_path = paths.brain_path()
    refuse_foreign_file(brain_path)
    _remove_brain_files(brain_path)  # only an unfinished install's, which refuse_foreign_file allows
    keystore = _Tracking(open_keystore(kind, keys.brain_id))
    if kind == "file":
        run.mkdirs(paths.keystore_dir(keys.brain_id))
    run.did("keystore items", keystore.undo)
    run.mkdirs(brain_path.parent)
    run.did(f"brain file {brain_path}", lambda: _remove_brain_files(brain_path))
    from aimos.store.freshness import freshness_path

    run.mkdirs(freshness_path(keys.brain_id).parent)
    run.did("freshness anchor", lambda: freshness_path(keys.brain_id).unlink(missing_ok=True))
    run.did("hub state", lambda: device.state_path(keys.brain_id).unlink(missing_ok=True))
    run.did("hub lock", lambda: device.state_path(keys.brain_id).with_suffix(".lock").unlink(missing_ok=True))
    run.did("hub push log", lambda: paths.hub_pushed_path(keys.brain_id).unlink(missing_ok=True))
    device_fp = f"aimos-device:{uuid.uuid4()}"
    os.close(device.open_lock(keys.brain_id))  # made now: the join's files are all there when it ends
    conn = open_writer(brain_path, create=True)
    try:
        housekeeper: list[Signer] = []  # enrolled inside the transaction, after every pulled epoch
        with write_transaction(conn, lambda: housekeeper[0]):
            _begin(conn, keystore, keys, master, about, kind, device_fp)
            pulled = sync.pull(conn, hub, content_keys, device_fp, None, told)
            _take_slot(conn)
            housekeeper.append(_enrol_housekeeper(conn, keystore, master, about, device_fp, now))
            agent = _enrol_agent(conn, keystore, master, housekeeper[0], options, device_fp, now)
        _write_anchors(run, keys.brain_id, master.fingerprint, brain_path, options)
        keystore.put(device.CONTENT_KEY_ITEM, content_keys.to_text())
        keystore.put(device.URL_ITEM, url)
        with PushedLog(paths.hub_pushed_path(keys.brain_id)) as log:
            pushed = sync.push(conn, hub, content_keys, device_fp, 0, housekeeper[0], log)
        device.remember_read(keys.brain_id, pulled)
        device.heard(conn, keys.brain_id, device_fp, pulled.heard)
        device.write_state(
            keys.brain_id,
            pushed_through_seal=pushed.through_seal,
            last_sync=now,
            last_error=None,
            sealed_master_sha256=device.sealed_digest(keys.sealed_master),
        )
        # a memory the master redacted arrived with its text: removed now, as at every sync
        run.did(
            "redaction records file", lambda: paths.redactions_path(keys.brain_id).unlink(missing_ok=True)
        )
        redactions.apply_waiting(conn, housekeeper[0])
        head = seals.head_seal(conn)
        if head is not None:
            keep_anchor(keystore, head.seq, head.link.hex(), revocations_held(conn))
    finally:
        conn.close()
    service_info = _service(run, keys.brain_id, options.service)
    return JoinResult(
        brain_id=keys.brain_id,
        brain_path=str(brain_path),
        master_fingerprint=master.fingerprint,
        keystore_kind=kind,
        device=device_fp,
        agent_id=options.agent_id,
        agent_valid_from=agent,
        records=pulled.records,
        memories=len(pulled.memories),
        url=masked(url),
        service=service_info,
    )


def _service(run: _Run, brain_id: str, choice: str) -> dict[str, Any] | None:
    """The housekeeper's user service, as install starts it (its jobs, and the hub sync)."""
    from aimos.installer import service

    manager = service.choose_manager(choice)
    if manager is None:
        return None
    run.mkdirs(paths.log_dir())
    return _start_service(run, brain_id, manager)


def _begin(
    conn: Connection,
    keystore: _Tracking,
    keys: BrainKeys,
    master: KeyPair,
    about: device.About,
    kind: str,
    device_fp: str,
) -> None:
    """The brain's metadata and the master (the hub's sealed copy, as the first device holds it),
    before the records are pulled into the same transaction."""
    meta = {
        "brain_id": keys.brain_id,
        "brain_name": about.brain_name,
        "company_id": about.company_id,
        "keystore": kind,
        "device_fp": device_fp,
        "created_at": str(int(time.time())),
        "created_by_version": __version__,
    }
    queries.add_brain_meta(conn, meta.items())
    keystore.put(MASTER_ITEM, keys.sealed_master)
    identity_queries.insert_master(conn, master.fingerprint, master.public_b64u, about.master_created_at)


def _take_slot(conn: Connection) -> None:
    """This device's class of start seconds (identity/epochs DEVICE_SLOTS): the next after the
    devices the brain holds."""
    known = device_queries.device_count(conn)
    queries.add_brain_meta(conn, [(DEVICE_SLOT_META, str(known % DEVICE_SLOTS))])


def _enrol_housekeeper(
    conn: Connection, keystore: _Tracking, master: KeyPair, about: device.About, device_fp: str, now: int
) -> Signer:
    """This device's housekeeper, which seals everything this device writes and pulls: enrolled
    once every epoch the hub holds is in, so its epoch starts after theirs (two devices' epochs
    never share a start)."""
    housekeeper = enrol_epoch(
        conn, master, keystore, agent_id=HOUSEKEEPER, role=HOUSEKEEPER, now=now, device_fp=device_fp
    )
    grant_housekeeper(conn, master, about.company_id, housekeeper, now)
    return housekeeper


def _enrol_agent(
    conn: Connection,
    keystore: _Tracking,
    master: KeyPair,
    housekeeper: Signer,
    options: InstallOptions,
    device_fp: str,
    now: int,
) -> int:
    """This device's agent (after the pull, so its epoch starts after every other device's)."""
    now = max(now, housekeeper.valid_from)  # (a second later than now when another epoch began now)
    agent, grant = enrol_agent(conn, master, keystore, options, device_fp, now)
    now = max(now, agent.valid_from)
    append_event(
        conn,
        housekeeper,
        operation=DEVICE_JOINED_OPERATION,
        company_id=options.company_id,
        metadata={
            "device_fp": device_fp,
            "agent_id": options.agent_id,
            "agent_valid_from": iso_ms(agent.valid_from),
            "grant_mutation_hash": grant["mutation_hash"],
            "aimos_version": __version__,
        },
        now=now,
    )
    return agent.valid_from
