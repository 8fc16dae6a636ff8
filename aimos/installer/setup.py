"""Onboarding (`aimos install`): the plan, then the steps, each undone if a later one fails.

Steps: check the guide corpus against its manifest (before anything is created); check the
keystore; create the brain and migrate; master, housekeeper and agent epochs, the agent's
master-signed grant (and the housekeeper's, for the system scope), the signed
`first_launch_onboarding_started` event; the 8 guide memories through the real signed save
path as the housekeeper; the trust anchor (anchors.json); register and start the housekeeper;
the signed `first_launch_onboarding_terminal` event and the receipt file
(`<state>/onboarding/first-launch-receipt.json`, with its own hash).

A failure part-way removes exactly what this run created (brain file, keystore items, anchors
entry, service, receipt, the folders it made), so a failed install leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import shutil
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from aimos import __version__, paths, vocabulary
from aimos.crypto import commitments
from aimos.crypto.ed25519 import KeyPair
from aimos.crypto.encoding import iso_ms
from aimos.errors import AimosError, UsageError
from aimos.identity.anchors import keep_anchor, revocations_held
from aimos.identity.epochs import enrol_epoch
from aimos.identity.grants import issue_grant
from aimos.identity.keystore import Keystore, choose_keystore, open_keystore, settle_keystore
from aimos.identity.master import create_master
from aimos.identity.signer import Signer
from aimos.identity.validators import check_agent_id, check_clearance, check_validity_days, data_class_rank
from aimos.installer import guide_corpus
from aimos.ledger.events import append_event
from aimos.memory.gates import refuse_secret_fields
from aimos.store import seals
from aimos.store.connection import Connection, open_writer, write_transaction
from aimos.store.queries.installer import insert_brain_meta
from aimos.vocabulary import (
    BRAIN_INSTALLED_OPERATION,
    DEFAULT_GRANT_CLEARANCE,
    DEFAULT_GRANT_DATA_CLASS,
    GUIDE_CORPUS_INGESTED_OPERATION,
    HOUSEKEEPER,
    ONBOARDING_STARTED_OPERATION,
    ONBOARDING_TERMINAL_OPERATION,
    PUBLIC,
)

_NAME_HINT = "Company and brain names are 1-64 characters of letters, digits, '_', '-' and '.'."
_MODEL_RE = re.compile(r"[A-Za-z0-9_.:/@+-]{1,128}")
GRANT_REASON = "First-launch ordinary AIMOS memory authority"
HOUSEKEEPER_GRANT_REASON = "Housekeeper system-scope authority (guide memories)"
GUIDE_SOURCE = "guide:aimos-install"
STEPS = (
    "check_guides",
    "check_home_and_keystore",
    "create_brain",
    "enrol_identities",
    "write_anchors",
    "ingest_guides",
    "start_housekeeper",
    "finish",
)


def after_step(name: str) -> None:
    """Called after each install step completes. A seam for failure-injection tests (a test
    replaces it to raise at a chosen step); it does nothing in normal use."""


@dataclass
class InstallOptions:
    brain_name: str = "personal"
    company_id: str = "personal"
    agent_id: str = "cli"
    keystore: str | None = None  # os | file once settled (settle_keystore); None | auto before
    keystore_note: str | None = None  # why that keystore, when it was settled before the questions
    validity_days: int = vocabulary.DEFAULT_VALIDITY_DAYS
    clearance: int = DEFAULT_GRANT_CLEARANCE
    data_class: str = DEFAULT_GRANT_DATA_CLASS
    read_only: bool = False
    model_provider: str | None = None
    model: str | None = None
    guides: bool = True
    service: str = "none"  # auto | systemd | launchd | process | none (the CLI defaults to auto)


@dataclass
class InstallResult:
    brain_id: str
    brain_path: str
    master_fingerprint: str
    keystore_kind: str
    keystore_note: str
    agent_id: str
    agent_valid_from: int
    housekeeper_valid_from: int
    anchors_path: str
    guide_memory_ids: list[str]
    service: dict[str, Any] | None
    plan_sha256: str
    receipt_path: str | None
    receipt_sha256: str | None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def validate(options: InstallOptions) -> None:
    names = {
        "brain name": options.brain_name,
        "company": options.company_id,
        "agent id": options.agent_id,
        "model provider": options.model_provider,
        "model": options.model,
    }
    refuse_secret_fields(names, outcome="nothing was installed")  # before any of them is quoted
    for what, value in (("brain name", options.brain_name), ("company", options.company_id)):
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", value or ""):
            raise UsageError(f"invalid {what} {value!r}", _NAME_HINT)
    check_agent_id(options.agent_id)
    check_validity_days(options.validity_days)
    check_clearance(options.clearance, ceiling=10)
    data_class_rank(options.data_class)
    optional: tuple[tuple[str, str | None], ...] = (
        ("model provider", options.model_provider),
        ("model", options.model),
    )
    for label, given in optional:
        if given is not None and not _MODEL_RE.fullmatch(given):
            raise UsageError(
                f"invalid {label} {given!r}",
                "Use 1-128 letters, digits and . _ : / @ + - (for example anthropic, claude-sonnet-4).",
            )


def receipt_path() -> Path:
    return paths.state_dir() / "onboarding" / "first-launch-receipt.json"


def build_plan(options: InstallOptions, manager: str | None) -> dict[str, Any]:
    """The onboarding plan (`hom.aimos.first-launch-onboarding-plan/v1`): what install will do,
    with no clock in it, so the same choices give the same plan hash."""
    guides: dict[str, Any] | None = None
    if options.guides:
        manifest = guide_corpus.build_manifest()
        guides = {
            "count": len(manifest["files"]),
            "corpus_root": manifest["corpus_root"],
            "manifest_version": manifest["version"],
            "scope": "system",
            "memory_type": "guide",
        }
    return {
        "schema": vocabulary.ONBOARDING_PLAN_SCHEMA,
        "aimos_version": __version__,
        "brain": {
            "name": options.brain_name,
            "company_id": options.company_id,
            "path": str(paths.brain_path()),
        },
        "keystore": options.keystore or "os",
        "agent": {
            "agent_id": options.agent_id,
            "model_provider": options.model_provider,
            "model": options.model,
            "validity_days": options.validity_days,
            "clearance": options.clearance,
            "data_class": options.data_class,
            "write_allowed": not options.read_only,
        },
        "guides": guides,
        HOUSEKEEPER: {"service": manager or "none"},
        "steps": list(STEPS),
    }


def plan_sha256(plan: dict[str, Any]) -> str:
    return commitments.document_sha256(plan).hex()


def installed_brain_id(path: Path | None = None) -> str | None:
    """The brain id when a brain with a master is already installed here, else None."""
    path = path or paths.brain_path()
    if not path.exists() or is_unfinished_install(path):
        return None
    from aimos.errors import NotInstalledError
    from aimos.store.connection import open_reader
    from aimos.store.queries.installer import installed_ids

    try:
        conn = open_reader(path)
    except NotInstalledError:  # a database with no aimos schema: not a brain (refuse_foreign_file)
        return None
    try:
        brain_id, has_master = installed_ids(conn)
    finally:
        conn.close()
    return brain_id if brain_id is not None and has_master else None


def is_unfinished_install(path: Path | None = None) -> bool:
    """True for a brain file left by an install that never finished (no master identity).

    Such a file holds nothing signed (every memory needs an agent epoch, which needs the
    master), so a new install may remove it. Anything else at that path is left alone.
    """
    path = path or paths.brain_path()
    if not path.exists():
        return False
    if path.stat().st_size == 0:
        return True
    from aimos.store.connection import EngineError
    from aimos.store.engine import open_read_only
    from aimos.store.queries.installer import master_count, table_names

    try:
        conn = open_read_only(path)
    except EngineError:
        return False
    try:
        tables = table_names(conn)
        if not tables:
            return True
        if "brain_meta" not in tables or "master_identity" not in tables:
            return False
        return master_count(conn) == 0
    except EngineError:
        return False
    finally:
        conn.close()


def refuse_foreign_file(path: Path | None = None) -> None:
    """Refuse when a file that is not an installed brain (nor one left by an unfinished install)
    is at the brain's path: aimos never overwrites it."""
    path = path or paths.brain_path()
    if path.exists() and not is_unfinished_install(path):
        raise UsageError(
            f"a file is already at {path} but it is not an installed brain",
            "Move it away or choose another AIMOS_HOME; aimos will not overwrite it.",
        )


def _remove_brain_files(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            Path(str(path) + suffix).unlink()


@dataclass
class _Tracking:
    """A keystore wrapper that remembers what this run put, to undo it on failure."""

    inner: Keystore
    created: list[str] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return self.inner.kind

    def put(self, name: str, secret: str) -> None:
        self.inner.put(name, secret)
        self.created.append(name)

    def replace(self, name: str, secret: str) -> None:
        new = self.inner.find(name) is None
        self.inner.replace(name, secret)
        if new:
            self.created.append(name)

    def get(self, name: str) -> str:
        return self.inner.get(name)

    def find(self, name: str) -> str | None:
        return self.inner.find(name)

    def delete(self, name: str) -> bool:
        return self.inner.delete(name)

    def describe(self) -> str:
        return self.inner.describe()

    def undo(self) -> None:
        for name in reversed(self.created):
            with contextlib.suppress(Exception):  # best effort; the error that caused the undo wins
                self.inner.delete(name)


class _Run:
    """One install run: the undo actions of what it created, run in reverse on failure."""

    def __init__(self) -> None:
        self.undo: list[tuple[str, Callable[[], object]]] = []
        self.step = ""
        self.release: Callable[[], None] = lambda: None  # what a successful run lets go of

    def did(self, what: str, action: Callable[[], object]) -> None:
        self.undo.append((what, action))

    def mkdirs(self, folder: Path) -> None:
        """Create ``folder`` 0700 and remember the folders this run made (removed if left empty)."""
        missing = []
        probe = folder
        while not probe.exists():
            missing.append(probe)
            probe = probe.parent
        paths.ensure_private_dir(folder)
        for made in reversed(missing):  # shallowest first, so the undo (in reverse) removes the deepest first
            self.did(f"folder {made}", functools.partial(_rmdir_if_empty, made))

    def fail(self, exc: BaseException, what: str) -> None:
        """Undo what this run did, after ``exc``; an aimos error says ``what`` failed and anything
        that could not be undone."""
        problems = self.rollback()
        self.release = lambda: None
        if isinstance(exc, AimosError):
            exc.message = f"{what}: {exc.message}"
            if problems:
                exc.message += f" (and could not undo: {'; '.join(problems)})"

    def rollback(self) -> list[str]:
        failed = []
        for what, action in reversed(self.undo):
            try:
                action()
            except Exception as exc:  # keep undoing; report what could not be undone
                failed.append(f"{what}: {exc}")
        return failed


def _rmdir_if_empty(folder: Path) -> None:
    with contextlib.suppress(FileNotFoundError, OSError):
        folder.rmdir()


def _hold_install_lock(run: _Run) -> None:
    """One install at a time per home: held until this run ends (its undo releases it), so a
    concurrent install can never take this run's half-made brain for an abandoned one."""
    import os

    from aimos.errors import BusyError
    from aimos.locks import try_lock

    lock = paths.state_dir() / "install.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    if not try_lock(fd):
        os.close(fd)
        raise BusyError(
            "another `aimos install` is running for this home",
            "Wait for it to finish, then run `aimos status`.",
        ) from None
    run.did("install lock", functools.partial(_release_install_lock, fd, lock))
    run.release = functools.partial(_release_install_lock, fd, lock, remove=False)


def _release_install_lock(fd: int, lock: Path, remove: bool = True) -> None:
    import os

    if remove:
        lock.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        os.close(fd)


def _check_writable(run: _Run, folder: Path) -> None:
    """Create ``folder`` (remembered for undo) and prove a file can be written in it."""
    from aimos.errors import HomeNotWritableError

    try:
        run.mkdirs(folder)
        probe = folder / f".aimos-write-probe-{uuid.uuid4().hex}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise HomeNotWritableError(
            f"aimos cannot write to {folder}: {exc.strerror or exc}",
            "Set AIMOS_HOME to a folder you can write (or fix its permissions), then run `aimos install`.",
        ) from None


def _save_guides(
    conn: Any, housekeeper: Signer, company_id: str, now: int
) -> tuple[list[str], dict[str, Any]]:
    from aimos.actions.bodies import build_save_body
    from aimos.epistemic.chain import classify_at_save
    from aimos.identity.requests import sign_request
    from aimos.memory.save import save_in_transaction
    from aimos.vocabulary import PATH_SAVE, PUBLIC

    guides, manifest = guide_corpus.load_verified()
    memory_ids = []
    files = []
    for guide in guides:
        body = build_save_body(
            company_id=company_id,
            value=guide.text,
            key=guide.key,
            scope="system",
            memory_type="guide",
            clearance_level=10,
            data_class=PUBLIC,
            source=GUIDE_SOURCE,
        )
        result = save_in_transaction(conn, housekeeper, sign_request(housekeeper, body, PATH_SAVE, now), now)
        classify_at_save(conn, housekeeper, result.memory_id, now)
        if result.status != "saved":
            raise AimosError(f"the guide {guide.path} was not saved ({result.status})")
        memory_ids.append(result.memory_id)
        files.append(
            {"path": guide.path, "sha256": guide.sha256, "bytes": guide.bytes, "memory_id": result.memory_id}
        )
    ingest = {
        "manifest_schema": manifest["schema"],
        "manifest_version": manifest["version"],
        "corpus_root": manifest["corpus_root"],
        "files": files,
    }
    append_event(
        conn,
        housekeeper,
        operation=GUIDE_CORPUS_INGESTED_OPERATION,
        company_id=company_id,
        metadata=ingest,
        now=now,
    )
    return memory_ids, ingest


def _write_anchors(
    run: _Run, brain_id: str, fingerprint: str, brain_path: Path, options: InstallOptions
) -> None:
    """The brain's master in anchors.json (before the guides' signed saves: each request is checked
    against it)."""
    from aimos.identity.anchors import add_anchor, remove_anchor

    run.mkdirs(paths.anchors_path().parent)
    run.did("anchors.json entry", lambda: remove_anchor(brain_id))
    add_anchor(
        brain_id,
        {
            "master_fingerprint": fingerprint,
            "brain_path": str(brain_path),
            "brain_name": options.brain_name,
            "company_id": options.company_id,
        },
    )


def enrol_agent(
    conn: Any, master: Any, keystore: Keystore, options: InstallOptions, device_fp: str, now: int
) -> tuple[Signer, dict[str, Any]]:
    """The options' agent on this device, and its master-signed grant (install, and a device that
    joins a brain on a hub)."""
    agent = enrol_epoch(
        conn,
        master,
        keystore,
        agent_id=options.agent_id,
        role="agent",
        now=now,
        device_fp=device_fp,
        validity_days=options.validity_days,
    )
    grant = issue_grant(
        conn,
        master,
        company_id=options.company_id,
        agent_id=options.agent_id,
        valid_from=agent.valid_from,
        clearance_ceiling=options.clearance,
        data_class_ceiling=options.data_class,
        write_allowed=not options.read_only,
        now=max(now, agent.valid_from),  # (an epoch that starts a second from now: the grant with it)
        reason=GRANT_REASON,
    )
    return agent, grant


@dataclass(frozen=True)
class _Choices:
    """The settled options, the housekeeper's service manager, the plan and its hash, the clock."""

    options: InstallOptions
    manager: str | None
    plan: dict[str, Any]
    plan_hash: str
    now: int


@dataclass(frozen=True)
class _Home:
    """What check_home_and_keystore settled: the brain's path and new id, its keystore (tracked
    for the undo) and why that keystore."""

    brain_path: Path
    brain_id: str
    keystore: _Tracking
    note: str


@dataclass(frozen=True)
class _Enrolled:
    """What enrol_identities made: the master, the housekeeper's and the agent's epochs, the
    agent's grant and the signed start of the onboarding."""

    master: KeyPair
    housekeeper: Signer
    agent: Signer
    grant: dict[str, Any]
    started_event: dict[str, Any]


@dataclass(frozen=True)
class _Guides:
    """What ingest_guides saved: the guide memories and the ingest record (None: no guides)."""

    memory_ids: list[str] = field(default_factory=list)
    ingest: dict[str, Any] | None = None


def grant_housekeeper(
    conn: Connection, master: KeyPair, company_id: str, housekeeper: Signer, now: int
) -> dict[str, Any]:
    """The housekeeper's master-signed system-scope grant (it saves the guide memories), from
    ``now`` or from its epoch's start when that is later."""
    return issue_grant(
        conn,
        master,
        company_id=company_id,
        agent_id=HOUSEKEEPER,
        valid_from=housekeeper.valid_from,
        clearance_ceiling=10,
        data_class_ceiling=PUBLIC,
        write_allowed=True,
        now=max(now, housekeeper.valid_from),
        reason=HOUSEKEEPER_GRANT_REASON,
    )


def install(options: InstallOptions, passphrase: str, now: int) -> InstallResult:
    """Create and enrol a new brain. The caller has checked that none is installed."""
    chosen = _settle_choices(options, now)
    run = _Run()
    try:
        # check_guides: every guide byte against the manifest and its root, before anything exists
        run.step = "check_guides"
        if chosen.options.guides:
            guide_corpus.load_verified()
        after_step(run.step)
        home = _check_home_and_keystore(run, chosen.options)
        enrolled, guides = _create_brain(run, chosen, home, passphrase)
        service_info = _start_housekeeper(run, home.brain_id, chosen.manager)
        receipt_file, receipt = _finish(run, chosen, home, enrolled, guides, service_info)
    except BaseException as exc:
        run.fail(exc, f"install failed at step {run.step}")
        raise
    finally:
        run.release()
    return InstallResult(
        brain_id=home.brain_id,
        brain_path=str(home.brain_path),
        master_fingerprint=enrolled.master.fingerprint,
        keystore_kind=home.keystore.kind,
        keystore_note=home.note,
        agent_id=chosen.options.agent_id,
        agent_valid_from=enrolled.agent.valid_from,
        housekeeper_valid_from=enrolled.housekeeper.valid_from,
        anchors_path=str(paths.anchors_path()),
        guide_memory_ids=guides.memory_ids,
        service=service_info,
        plan_sha256=chosen.plan_hash,
        receipt_path=str(receipt_file),
        receipt_sha256=str(receipt["receipt_sha256"]),
    )


def _settle_choices(options: InstallOptions, now: int) -> _Choices:
    """The options checked, the keystore settled (when the caller did not settle it), the
    housekeeper's service manager chosen and the plan made: nothing is created yet."""
    from aimos.installer import service

    validate(options)
    if options.keystore not in ("os", "file"):  # settled here when the caller did not settle it
        settled = settle_keystore(options.keystore)
        options = replace(options, keystore=settled.kind, keystore_note=settled.note)
    manager = service.choose_manager(options.service)
    plan = build_plan(options, manager)
    return _Choices(options, manager, plan, plan_sha256(plan), now)


def _check_home_and_keystore(run: _Run, options: InstallOptions) -> _Home:
    """The home's folders writable, the install lock held, what an unfinished install left
    removed (and a file that is no brain refused), the brain's id and its keystore."""
    run.step = "check_home_and_keystore"
    for folder in (paths.data_dir(), paths.config_dir(), paths.state_dir()):
        _check_writable(run, folder)
    _hold_install_lock(run)
    brain_path = paths.brain_path()
    if is_unfinished_install(brain_path):
        _remove_brain_files(brain_path)
    refuse_foreign_file(brain_path)
    brain_id = str(uuid.uuid4())
    if options.keystore_note is None:
        chosen, note = choose_keystore(options.keystore, brain_id)
    else:  # settled (and the OS keychain probed) before the questions: not probed twice
        chosen, note = open_keystore(str(options.keystore), brain_id), options.keystore_note
    keystore = _Tracking(chosen)
    if keystore.kind == "file":  # the folder first: its undo must run after the items' undo
        run.mkdirs(paths.keystore_dir(brain_id))
    run.did("keystore items", keystore.undo)
    after_step(run.step)
    return _Home(brain_path, brain_id, keystore, note)


def _create_brain(run: _Run, chosen: _Choices, home: _Home, passphrase: str) -> tuple[_Enrolled, _Guides]:
    """create_brain, then in the brain's first transaction (its genesis seal, by the housekeeper
    enrolled in it) enrol_identities, write_anchors and ingest_guides; once committed, the
    freshness anchor's second copy beside the keys."""
    run.step = "create_brain"
    brain_path, brain_id, options = home.brain_path, home.brain_id, chosen.options
    run.mkdirs(brain_path.parent)
    run.did(f"brain file {brain_path}", lambda: _remove_brain_files(brain_path))
    # every sealed commit anchors the brain's newest seal beside anchors.json
    from aimos.store.freshness import freshness_path

    run.mkdirs(freshness_path(brain_id).parent)
    run.did("freshness anchor", lambda: freshness_path(brain_id).unlink(missing_ok=True))
    conn = open_writer(brain_path, create=True)
    try:
        after_step(run.step)
        run.step = "enrol_identities"
        device_fp = f"aimos-device:{uuid.uuid5(uuid.NAMESPACE_DNS, socket.gethostname())}"
        # the housekeeper enrolled below seals this first transaction (the brain's genesis seal)
        enrolled: list[_Enrolled] = []

        def the_housekeeper() -> Signer:
            assert enrolled  # enrolled inside the transaction, before it commits
            return enrolled[0].housekeeper

        with write_transaction(conn, the_housekeeper):
            enrolled.append(_enrol_identities(conn, chosen, home, passphrase, device_fp))
            after_step(run.step)
            run.step = "write_anchors"  # before any signed request: each is checked against it
            _write_anchors(run, brain_id, enrolled[0].master.fingerprint, brain_path, options)
            after_step(run.step)
            run.step = "ingest_guides"
            guides = _Guides()
            if options.guides:
                guides = _Guides(*_save_guides(conn, enrolled[0].housekeeper, options.company_id, chosen.now))
            after_step(run.step)
        head = seals.head_seal(conn)  # committed: the freshness anchor's second copy, by the keys
        if head is not None:
            keep_anchor(home.keystore, head.seq, head.link.hex(), revocations_held(conn))
    finally:
        conn.close()
    return enrolled[0], guides


def _enrol_identities(
    conn: Connection, chosen: _Choices, home: _Home, passphrase: str, device_fp: str
) -> _Enrolled:
    """Inside the first transaction: the brain's metadata, the master, the housekeeper's epoch,
    the signed start of the onboarding, the agent and its grant, the housekeeper's system-scope
    grant and the signed `brain_installed` event."""
    options, keystore, now = chosen.options, home.keystore, chosen.now
    meta = {
        "brain_id": home.brain_id,
        "brain_name": options.brain_name,
        "company_id": options.company_id,
        "keystore": keystore.kind,
        "device_fp": device_fp,
        "created_at": str(now),
        "created_by_version": __version__,
    }
    insert_brain_meta(conn, meta)
    master = create_master(conn, keystore, passphrase, now)
    housekeeper = enrol_epoch(
        conn,
        master,
        keystore,
        agent_id=HOUSEKEEPER,
        role=HOUSEKEEPER,
        now=now,
        device_fp=device_fp,
    )
    started_event = append_event(
        conn,
        housekeeper,
        operation=ONBOARDING_STARTED_OPERATION,
        company_id=options.company_id,
        metadata={"plan_sha256": chosen.plan_hash, "plan": chosen.plan},
        now=now,
    )
    agent, grant = enrol_agent(conn, master, keystore, options, device_fp, now)
    housekeeper_grant = grant_housekeeper(conn, master, options.company_id, housekeeper, now)
    append_event(
        conn,
        housekeeper,
        operation=BRAIN_INSTALLED_OPERATION,
        company_id=options.company_id,
        metadata={
            "brain_id": home.brain_id,
            "master_fingerprint": master.fingerprint,
            "keystore": keystore.kind,
            "agent_id": options.agent_id,
            "model_provider": options.model_provider,
            "model": options.model,
            "grant_mutation_hash": grant["mutation_hash"],
            "housekeeper_grant_mutation_hash": housekeeper_grant["mutation_hash"],
            "aimos_version": __version__,
        },
        now=now,
    )
    return _Enrolled(master, housekeeper, agent, grant, started_event)


def _start_housekeeper(run: _Run, brain_id: str, manager: str | None) -> dict[str, Any] | None:
    """Register and start the housekeeper's service (none when no manager was chosen)."""
    run.step = "start_housekeeper"
    service_info: dict[str, Any] | None = None
    run.mkdirs(paths.state_dir())
    if manager is not None:
        from aimos.housekeeper import state

        run.mkdirs(paths.log_dir())
        log_existed = state.log_path().exists()
        run.did("housekeeper log", lambda: None if log_existed else state.log_path().unlink(missing_ok=True))
        service_info = _start_service(run, brain_id, manager)
    after_step(run.step)
    return service_info


def _finish(
    run: _Run,
    chosen: _Choices,
    home: _Home,
    enrolled: _Enrolled,
    guides: _Guides,
    service_info: dict[str, Any] | None,
) -> tuple[Path, dict[str, Any]]:
    """The signed end of the onboarding, then the receipt file (with its own hash)."""
    run.step = "finish"
    receipt_file = receipt_path()
    run.mkdirs(receipt_file.parent)
    run.did("onboarding receipt", lambda: receipt_file.unlink(missing_ok=True))
    conn = open_writer(home.brain_path)
    try:
        from aimos.identity.epochs import load_signer

        signer = load_signer(conn, home.keystore, HOUSEKEEPER, chosen.now)
        with write_transaction(conn, signer):
            terminal = append_event(
                conn,
                signer,
                operation=ONBOARDING_TERMINAL_OPERATION,
                company_id=chosen.options.company_id,
                metadata={
                    "status": "SUCCESS",
                    "plan_sha256": chosen.plan_hash,
                    "started_event_id": enrolled.started_event["event_id"],
                    "guide_memories": len(guides.memory_ids),
                    "housekeeper_service": service_info["manager"] if service_info else "none",
                },
                now=chosen.now,
            )
    finally:
        conn.close()
    receipt = _receipt(chosen, home, enrolled, guides, service_info, terminal)
    paths.write_private_file(receipt_file, (json.dumps(receipt, indent=2, sort_keys=True) + "\n").encode())
    after_step(run.step)
    return receipt_file, receipt


def _receipt(
    chosen: _Choices,
    home: _Home,
    enrolled: _Enrolled,
    guides: _Guides,
    service_info: dict[str, Any] | None,
    terminal: dict[str, Any],
) -> dict[str, Any]:
    """The onboarding receipt (`first-launch-receipt.json`), its receipt_sha256 over the rest."""
    options, agent = chosen.options, enrolled.agent
    receipt: dict[str, Any] = {
        "schema": vocabulary.ONBOARDING_RECEIPT_SCHEMA,
        "status": "SUCCESS",
        "aimos_version": __version__,
        "brain": {"brain_id": home.brain_id, "name": options.brain_name, "company_id": options.company_id},
        "brain_path": str(home.brain_path),
        "master_fingerprint": enrolled.master.fingerprint,
        "keystore": home.keystore.kind,
        "agent": {
            "agent_id": options.agent_id,
            "valid_from": iso_ms(agent.valid_from),
            "valid_until": iso_ms(agent.valid_until),
            "cert_fingerprint": agent.cert_fingerprint,
            "model_provider": options.model_provider,
            "model": options.model,
            "grant": {
                "clearance_ceiling": options.clearance,
                "data_class_ceiling": options.data_class,
                "write_allowed": not options.read_only,
                "mutation_hash": enrolled.grant["mutation_hash"],
            },
        },
        HOUSEKEEPER: {"valid_from": iso_ms(enrolled.housekeeper.valid_from), "service": service_info},
        "guides": None if guides.ingest is None else {**guides.ingest, "count": len(guides.memory_ids)},
        "plan_sha256": chosen.plan_hash,
        "started_event_id": enrolled.started_event["event_id"],
        "terminal_event_id": terminal["event_id"],
        "created_at": iso_ms(chosen.now),
    }
    receipt["receipt_sha256"] = commitments.document_sha256(receipt).hex()
    return receipt


def _start_service(run: _Run, brain_id: str, manager: str) -> dict[str, Any]:
    """Register the housekeeper's service and start it; the run's undo removes both."""
    from aimos.housekeeper import state
    from aimos.installer import service

    run.did(
        "housekeeper state files",
        functools.partial(_remove_housekeeper_state, backups_existed=state.backups_dir().exists()),
    )
    run.did("housekeeper service", service.unregister)
    record = service.register(brain_id, manager)
    info: dict[str, Any] = {"manager": record.manager, "name": record.name, "path": record.path}
    info.update(service.start())
    return info


def missing_service(choice: str) -> str | None:
    """On an installed brain: the manager to register the housekeeper with when no service is
    registered (after `aimos uninstall`) and no housekeeper runs; None when there is nothing to do
    (``--service none``, one registered, or one running already)."""
    from aimos.housekeeper import state
    from aimos.installer import service

    manager = service.choose_manager(choice)
    if manager is None or service.read_record() is not None or state.is_running():
        return None
    return manager


def restore_service(brain_id: str, manager: str) -> dict[str, Any]:
    """Register and start the housekeeper of the installed brain ``brain_id`` (a reinstall after
    `aimos uninstall`): the brain, its keys, anchors and guide memories are used as they are. A
    failure removes what this run registered (the housekeeper's log stays, to read why)."""
    run = _Run()
    try:
        run.step = "start_housekeeper"
        run.mkdirs(paths.state_dir())
        _hold_install_lock(run)
        info = _start_service(run, brain_id, manager)
    except BaseException as exc:
        run.fail(exc, "the housekeeper of the installed brain could not be started")
        raise
    finally:
        run.release()
    return info


def _remove_housekeeper_state(*, backups_existed: bool) -> None:
    from aimos.housekeeper import state

    for path in (state.pid_path(), state.status_path(), state.service_record_path()):
        path.unlink(missing_ok=True)
    # the lock file only once no process holds it (removing a held lock file would let a second
    # housekeeper lock a new file beside the first)
    if not state.is_running():
        state.lock_path().unlink(missing_ok=True)
    backups = state.backups_dir()
    if not backups_existed and backups.exists():  # only backups this run's housekeeper made
        shutil.rmtree(backups)


def verify_install_receipt(document: dict[str, Any]) -> bool:
    """True when a receipt file's receipt_sha256 matches its other fields."""
    claimed = document.get("receipt_sha256")
    return (
        isinstance(claimed, str)
        and claimed == commitments.document_sha256(document, without="receipt_sha256").hex()
    )
