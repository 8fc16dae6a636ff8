"""Create a brain: file and migrations, master, housekeeper and first agent epoch, grant, anchors.

A failure part-way removes exactly what this run created (brain file, keystore items,
anchors file), so a failed install leaves nothing behind.
"""

from __future__ import annotations

import json
import socket
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aimos import __version__, paths
from aimos.errors import UsageError
from aimos.identity.epochs import (
    HOUSEKEEPER,
    check_agent_id,
    check_clearance,
    check_validity_days,
    create_master,
    data_class_rank,
    enrol_epoch,
    issue_grant,
)
from aimos.identity.keystore import Keystore, choose_keystore
from aimos.ledger.events import append_event
from aimos.store.connection import open_writer, write_transaction

_COMPANY_RE_HINT = "Company and brain names are 1-64 characters of letters, digits, '_', '-' and '.'."


@dataclass
class InstallOptions:
    brain_name: str = "personal"
    company_id: str = "personal"
    agent_id: str = "cli"
    keystore: str | None = None
    validity_days: int = 30
    clearance: int = 10
    data_class: str = "confidential"
    read_only: bool = False


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

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


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

    def get(self, name: str) -> str:
        return self.inner.get(name)

    def delete(self, name: str) -> bool:
        return self.inner.delete(name)

    def describe(self) -> str:
        return self.inner.describe()

    def undo(self) -> None:
        for name in reversed(self.created):
            try:
                self.inner.delete(name)
            except Exception:  # noqa: S112 - best effort; the error that caused the undo wins
                continue


def validate(options: InstallOptions) -> None:
    import re

    for what, value in (("brain name", options.brain_name), ("company", options.company_id)):
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", value or ""):
            raise UsageError(f"invalid {what} {value!r}", _COMPANY_RE_HINT)
    check_agent_id(options.agent_id)
    check_validity_days(options.validity_days)
    check_clearance(options.clearance, ceiling=10)
    data_class_rank(options.data_class)


def installed_brain_id(path: Path | None = None) -> str | None:
    """The brain id when a brain with a master is already installed here, else None."""
    path = path or paths.brain_path()
    if not path.exists() or is_unfinished_install(path):
        return None
    from aimos.store.connection import one, open_reader

    conn = open_reader(path)
    try:
        row = one(conn, "SELECT value FROM brain_meta WHERE key = 'brain_id'")
        master = one(conn, "SELECT fingerprint FROM master_identity")
    finally:
        conn.close()
    return str(row["value"]) if row and master else None


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
    import apsw

    try:
        conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    except apsw.Error:
        return False
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            return True
        if "brain_meta" not in tables or "master_identity" not in tables:
            return False
        return conn.execute("SELECT COUNT(*) FROM master_identity").fetchall()[0][0] == 0
    except apsw.Error:
        return False
    finally:
        conn.close()


def _remove_brain_files(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            Path(str(path) + suffix).unlink()
        except FileNotFoundError:
            pass


def install(options: InstallOptions, passphrase: str, now: int) -> InstallResult:
    """Create and enrol a new brain. The caller has checked that none is installed."""
    validate(options)
    brain_path = paths.brain_path()
    if is_unfinished_install(brain_path):
        _remove_brain_files(brain_path)
    if brain_path.exists():
        raise UsageError(
            f"a file is already at {brain_path} but it is not an installed brain",
            "Move it away or choose another AIMOS_HOME; aimos will not overwrite it.",
        )
    brain_id = str(uuid.uuid4())
    chosen, note = choose_keystore(options.keystore, brain_id)
    keystore = _Tracking(chosen)
    anchors = paths.anchors_path()
    created_anchors = False
    try:
        conn = open_writer(brain_path, create=True)
        try:
            device_fp = f"aimos-device:{uuid.uuid5(uuid.NAMESPACE_DNS, socket.gethostname())}"
            with write_transaction(conn):
                meta = {
                    "brain_id": brain_id,
                    "brain_name": options.brain_name,
                    "company_id": options.company_id,
                    "keystore": keystore.kind,
                    "device_fp": device_fp,
                    "created_at": str(now),
                    "created_by_version": __version__,
                }
                conn.executemany("INSERT INTO brain_meta (key, value) VALUES (?, ?)", list(meta.items()))
                master = create_master(conn, keystore, passphrase, now)
                housekeeper = enrol_epoch(
                    conn,
                    master,
                    keystore,
                    agent_id=HOUSEKEEPER,
                    role="housekeeper",
                    now=now,
                    device_fp=device_fp,
                )
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
                    now=now,
                    reason="First-launch ordinary AIMOS memory authority",
                )
                append_event(
                    conn,
                    housekeeper,
                    operation="brain_installed",
                    company_id=options.company_id,
                    metadata={
                        "brain_id": brain_id,
                        "master_fingerprint": master.fingerprint,
                        "keystore": keystore.kind,
                        "agent_id": options.agent_id,
                        "grant_mutation_hash": grant["mutation_hash"],
                        "aimos_version": __version__,
                    },
                    now=now,
                )
        finally:
            conn.close()
        paths.ensure_private_dir(anchors.parent)
        document = {
            "schema": "aimos.anchors/v1",
            "brains": {
                brain_id: {
                    "master_fingerprint": master.fingerprint,
                    "brain_path": str(brain_path),
                    "brain_name": options.brain_name,
                    "company_id": options.company_id,
                }
            },
        }
        if anchors.exists():
            try:
                existing = json.loads(anchors.read_text("utf-8"))
                existing.setdefault("brains", {}).update(document["brains"])
                document = existing
            except (ValueError, AttributeError):
                pass
        paths.write_private_file(anchors, (json.dumps(document, indent=2, sort_keys=True) + "\n").encode())
        created_anchors = True
    except BaseException:
        keystore.undo()
        _remove_brain_files(brain_path)
        keystore_dir = paths.keystore_dir(brain_id)
        if keystore.kind == "file" and keystore_dir.exists() and not any(keystore_dir.iterdir()):
            keystore_dir.rmdir()
        if created_anchors:
            anchors.unlink(missing_ok=True)
        raise
    return InstallResult(
        brain_id=brain_id,
        brain_path=str(brain_path),
        master_fingerprint=master.fingerprint,
        keystore_kind=keystore.kind,
        keystore_note=note,
        agent_id=options.agent_id,
        agent_valid_from=agent.valid_from,
        housekeeper_valid_from=housekeeper.valid_from,
        anchors_path=str(anchors),
    )
