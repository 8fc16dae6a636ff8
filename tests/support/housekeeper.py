"""Helpers for the housekeeper tests: read the brain from outside, check an event's signature by
hand, poll with a deadline, and tell a live housekeeper process from a dead (or zombie) one.

Imported as a plain module (tests/ is not a package; conftest.py puts this folder on sys.path).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import apsw
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from support.cli import Result, run_aimos
from support.process import (  # re-exported for the suite's modules
    is_housekeeper as is_housekeeper,
)
from support.process import (
    kill_housekeeper as kill_housekeeper,
)
from support.process import (
    pid_alive as pid_alive,
)
from support.process import (
    read_pid_file as read_pid_file,
)
from support.process import (
    wait_for as wait_for,
)

T = TypeVar("T")

JOB_NAMES = ("heartbeat", "bottleneck-scan", "nightly-dream", "weekly-assessment", "weekly-audit")
JOB_IDS = {
    "heartbeat": "__system_heartbeat__",
    "bottleneck-scan": "__bottleneck_scan__",
    "nightly-dream": "__nightly_dream__",
    "weekly-assessment": "__weekly_assessment__",
    "weekly-audit": "__weekly_audit__",
}
STARTED = "system_job_started"
TERMINAL = "system_job_terminal"
ROOT_EVENT = "corpus_proof_root_attested"
DAY = 24 * 3600
WEEK = 7 * DAY


# --- the CLI ---------------------------------------------------------------------------------
def hk(*args: str, timeout: float = 60) -> Result:
    """`aimos housekeeper ARGS` as a real subprocess (AIMOS_HOME comes from the environment)."""
    return run_aimos("housekeeper", *args, timeout=timeout)


def run_job(name: str) -> dict[str, Any]:
    """`aimos housekeeper run-job NAME --json`, asserted to exit 0 without a traceback."""
    result = hk("run-job", name, "--json")
    run: dict[str, Any] = result.json()
    assert "Traceback" not in result.err, result.describe()
    return run


# --- the brain, read from outside --------------------------------------------------------------
def brain_file(home: Path) -> Path:
    return home / "brain.sqlite3"


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[apsw.Connection]:
    """A plain read-only SQLite connection (no aimos code involved)."""
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    conn.set_busy_timeout(10_000)  # a running housekeeper may be writing
    try:
        yield conn
    finally:
        conn.close()


def query(home: Path, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    with read_only(brain_file(home)) as conn:
        cursor = conn.execute(sql, params)
        try:
            names = [d[0] for d in cursor.getdescription()]
        except apsw.ExecutionCompleteError:
            return []
        return [dict(zip(names, row, strict=True)) for row in cursor]


def scalar(home: Path, sql: str, params: tuple[Any, ...] = ()) -> Any:
    found = query(home, sql, params)
    assert found, f"no row for {sql}"
    return next(iter(found[0].values()))


def event_count(home: Path, operation: str | None = None) -> int:
    if operation is None:
        return int(scalar(home, "SELECT COUNT(*) FROM events"))
    return int(scalar(home, "SELECT COUNT(*) FROM events WHERE operation = ?", (operation,)))


def events(home: Path, operation: str, **metadata: Any) -> list[dict[str, Any]]:
    """Events of one operation (oldest first), each with its parsed metadata under 'meta';
    ``metadata`` filters on metadata fields."""
    found = []
    for row in query(
        home,
        "SELECT event_id, operation, signer_agent_id, signer_valid_from, ledger_seq, signed_body,"
        " content_hash, nonce, ts_signed, signature_b64u FROM events WHERE operation = ?"
        " ORDER BY ts_signed, rowid",
        (operation,),
    ):
        meta = json.loads(row["signed_body"])["metadata"]
        if all(meta.get(k) == v for k, v in metadata.items()):
            found.append({**row, "meta": meta})
    return found


def only(items: list[T], what: str = "item") -> T:
    assert len(items) == 1, f"expected exactly one {what}, found {len(items)}: {items}"
    return items[0]


def b64u_decode(text: str) -> bytes:
    import base64

    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def signature_ok(home: Path, event: dict[str, Any]) -> bool:
    """Check one event by hand: the signed body's own fields, its content hash, and the Ed25519
    signature over `signed_body \\n nonce \\n ts_signed` with the signer epoch's public key."""
    epoch = only(
        query(
            home,
            "SELECT public_key_b64u FROM identity_epochs WHERE agent_id = ? AND valid_from = ?",
            (event["signer_agent_id"], event["signer_valid_from"]),
        ),
        "signer epoch",
    )
    body = json.loads(event["signed_body"])
    if body["operation"] != event["operation"] or body["ts_signed"] != event["ts_signed"]:
        return False
    if body["signer_agent_id"] != event["signer_agent_id"] or body["event_id"] != event["event_id"]:
        return False
    if hashlib.sha256(event["signed_body"].encode("utf-8")).hexdigest() != event["content_hash"]:
        return False
    message = b"\n".join(
        [event["signed_body"].encode("utf-8"), event["nonce"].encode(), str(event["ts_signed"]).encode()]
    )
    key = serialization.load_der_public_key(b64u_decode(epoch["public_key_b64u"]))  # SPKI DER
    if not isinstance(key, Ed25519PublicKey):
        return False
    try:
        key.verify(b64u_decode(event["signature_b64u"]), message)
    except Exception:
        return False
    return True


def assert_housekeeper_signed(home: Path, event: dict[str, Any]) -> None:
    assert event["signer_agent_id"] == "housekeeper", event
    role = scalar(
        home,
        "SELECT role FROM identity_epochs WHERE agent_id = ? AND valid_from = ?",
        (event["signer_agent_id"], event["signer_valid_from"]),
    )
    assert role == "housekeeper"
    assert json.loads(event["signed_body"])["actor_agent_id"] == "housekeeper"
    assert signature_ok(home, event), f"the signature of {event['operation']} {event['event_id']} fails"


def chains_ok(home: Path) -> list[dict[str, Any]]:
    """aimos.verify.brain.verifier.verify_event_chains over the brain; asserts every chain is ok."""
    from aimos.store.connection import open_reader
    from aimos.verify.brain.verifier import verify_event_chains

    conn = open_reader(brain_file(home))
    try:
        chains = verify_event_chains(conn)
    finally:
        conn.close()
    assert chains and all(c["ok"] for c in chains), chains
    return chains


# --- waiting and processes ---------------------------------------------------------------------


def read_status_file(home: Path) -> dict[str, Any] | None:
    try:
        status: dict[str, Any] = json.loads((home / "state" / "housekeeper-status.json").read_text())
        return status
    except (OSError, ValueError):
        return None


def dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    import subprocess

    proc = subprocess.Popen(["sleep", "0"])
    proc.wait()
    assert not pid_alive(proc.pid)
    return proc.pid


def status_json() -> dict[str, Any]:
    status: dict[str, Any] = hk("status", "--json").json()
    return status


def backups_of(home: Path) -> list[str]:
    folder = home / "backups"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []
