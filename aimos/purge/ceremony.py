"""The purge ceremony: offline, by the master, on purpose, with a signed categorical receipt.

Live steps, each recorded in a private journal beside the receipts so a ceremony killed part-way
is finished (never left half done) by the next `aimos purge --live`:

1. intent   the master-signed intent, written durably (exclusive create, 0600, fsync of file
            and folder) before anything is removed;
2. service  the housekeeper's service registration;
3. brain    the brain file with its WAL, SHM and journal;
4. keys     every keychain item of the brain but the master's;
5. files    backups, state and log files aimos owns for it, its anchors entry, the keystore folder;
6. recreate (with --recreate) an empty migrated brain, checked empty;
7. receipt  the master-signed receipt (exclusive create), then the master's own keychain item
            (last: a ceremony killed before the receipt can still unseal the master to sign it).

The intent and receipt hold counts and classes, never content, keys or content hashes.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aimos import __version__, paths
from aimos.crypto.ed25519 import KeyPair
from aimos.errors import AbortedError, AimosError, NotFoundError, PassphraseError, UsageError
from aimos.housekeeper import state
from aimos.purge.artifacts import artifact_sha256, sign_artifact
from aimos.purge.inventory import SENSITIVE_TABLES, Inventory, take_inventory
from aimos.vocabulary import PURGE_INTENT_SCHEMA, PURGE_JOURNAL_SCHEMA, PURGE_RECEIPT_SCHEMA

STEPS = ("intent", "service", "brain", "keys", "files", "recreate", "receipt")


def after_step(name: str) -> None:
    """Called after each live step. A seam for interruption tests (a test replaces it to stop the
    ceremony there, as a kill would); it does nothing in normal use."""


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _write_durably(path: Path, data: bytes) -> None:
    """Exclusive create, 0600, fsync of the file and of its folder (a folder that exists keeps
    its mode: a receipt file may go into the user's own folder). Written under a temporary name
    and linked into place, so the file exists whole or not at all."""
    if not path.parent.exists():
        paths.ensure_private_dir(path.parent)
    tmp = paths.write_temp_file(path, data, ".partial")
    try:
        os.link(tmp, path)  # fails when the path exists: an exclusive create, atomically
    finally:
        tmp.unlink(missing_ok=True)
    paths.fsync_dir(path.parent)


def _json_bytes(value: Any) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True) + "\n").encode("utf-8")


def _journal_path(ceremony_id: str) -> Path:
    return paths.purge_receipts_dir() / f"{ceremony_id}.journal.json"


def interrupted() -> list[dict[str, Any]]:
    """Journals of ceremonies that did not finish, for this home."""
    folder = paths.purge_receipts_dir()
    found = []
    for path in sorted(folder.glob("*.journal.json")) if folder.is_dir() else []:
        try:
            journal = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(journal, dict) and journal.get("brain_path") == str(paths.brain_path()):
            found.append(journal)
    return found


def _save_journal(journal: dict[str, Any]) -> None:
    paths.write_private_file(_journal_path(journal["ceremony_id"]), _json_bytes(journal))


def check_offline(*, housekeeper_may_run: bool = False) -> None:
    state.require_offline(
        "the purge ceremony runs offline",
        stop_hint="Stop it with `aimos housekeeper stop`, then run the ceremony again.",
        close_hint="Close them (agents, a TUI, a shell on the brain) and run the ceremony again.",
        housekeeper_may_run=housekeeper_may_run,
    )


def _offline(stop_housekeeper: Callable[[], None] | None) -> None:
    """Nothing else on the brain: a running housekeeper stopped by ``stop_housekeeper`` (which
    says so), or refused without one."""
    if stop_housekeeper is not None:
        check_offline(housekeeper_may_run=True)  # another holder: refused before anything stops
        stop_housekeeper()
    check_offline()


def inventory() -> Inventory:
    from aimos.store.connection import open_reader

    brain = paths.brain_path()
    if not brain.exists():
        raise NotFoundError(f"no aimos brain at {brain}", "Check AIMOS_HOME; there is nothing to purge here.")
    conn = open_reader(brain)
    try:
        inv = take_inventory(conn)
    finally:
        conn.close()
    from aimos.purge.inventory import owned_files

    # without our own WAL/SHM
    inv.files = [str(p) for p in owned_files(state.read_service_record(), inv.brain_id)]
    return inv


def _unlock(journal: dict[str, Any], passphrase: str) -> KeyPair:
    from aimos.identity.keystore import open_keystore
    from aimos.identity.master import sealed_master
    from aimos.identity.passphrase import unseal

    keystore = open_keystore(journal["keystore"], journal["brain_id"])
    try:
        sealed = sealed_master(keystore)
    except AimosError as exc:
        raise PassphraseError(
            "the brain's master key is not in its keystore", "The ceremony cannot sign without it."
        ) from exc
    master = KeyPair(unseal(sealed, passphrase))
    if master.fingerprint != journal["actor"]["fingerprint"]:
        raise PassphraseError("the keystore's master key is not this brain's master")
    return master


def _confirm(expected: str, read: Callable[[str], str]) -> None:
    typed = read(expected)
    if typed != expected:
        raise AbortedError(
            "the confirmation did not match; nothing was removed",
            f"Type exactly: {expected}",
        )


def start(
    passphrase: str,
    read_confirmation: Callable[[str], str],
    *,
    recreate: bool,
    receipt_file: Path | None,
    stop_housekeeper: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Authorize and run a new ceremony for the brain here (or finish an interrupted one). With
    ``stop_housekeeper``, a running housekeeper is stopped by it once the confirmation was typed
    (and the ceremony refused while one runs without it)."""
    pending = interrupted()
    if pending:
        return resume(pending[0], passphrase, read_confirmation, stop_housekeeper)
    check_offline(housekeeper_may_run=stop_housekeeper is not None)
    inv = inventory()
    from aimos.identity.keystore import open_keystore
    from aimos.identity.master import unlock_master
    from aimos.store.connection import open_reader

    conn = open_reader(paths.brain_path())
    try:
        master = unlock_master(conn, open_keystore(inv.keystore_kind, inv.brain_id), passphrase)
    finally:
        conn.close()
    _confirm(inv.confirmation, read_confirmation)
    _offline(stop_housekeeper)  # again, right before the first irreversible step
    now = time.time()
    ceremony_id = str(uuid.uuid4())
    folder = paths.purge_receipts_dir()
    receipt_path = Path(os.path.abspath(receipt_file or folder / f"{ceremony_id}.receipt.json"))
    intent_path = Path(str(receipt_path).removesuffix(".receipt.json").removesuffix(".json") + ".intent.json")
    for existing in (receipt_path, intent_path):
        if existing.exists():
            raise UsageError(
                f"{existing} already exists; the ceremony writes a new receipt and intent",
                "Give --receipt-file a path that does not exist yet.",
            )
    target = {
        "brain": inv.brain_name,
        "brain_id": inv.brain_id,
        "company": inv.company_id,
        "host": socket.gethostname(),
    }
    actor = {"fingerprint": inv.master_fingerprint, "epoch": _iso(inv.master_created_at)}
    journal: dict[str, Any] = {
        "schema": PURGE_JOURNAL_SCHEMA,
        "ceremony_id": ceremony_id,
        "brain_path": inv.brain_path,
        "brain_id": inv.brain_id,
        "keystore": inv.keystore_kind,
        "key_items": inv.key_items,
        "target": target,
        "actor": actor,
        "confirmation": inv.confirmation,
        "classes": inv.classes,
        "recreate": recreate,
        "intent_path": str(intent_path),
        "receipt_path": str(receipt_path),
        "started_at": _iso(now),
        "done": [],
        "derived_files_deleted": 0,
        "credential_items_deleted": 0,
    }
    intent_body = {
        "schema": PURGE_INTENT_SCHEMA,
        "ceremony_id": ceremony_id,
        "target": target,
        "software_release": f"aimos {__version__}",
        "actor": actor,
        "authorized_at": _iso(now),
        "affected_table_classes": inv.classes,
        "credential_items_planned": len(inv.key_items),
        "planned_postcondition": "reinitialized_empty" if recreate else "destroyed",
    }
    _save_journal(journal)
    try:
        _write_durably(intent_path, _json_bytes(sign_artifact(master, intent_body, int(now))))
    except BaseException:
        _journal_path(ceremony_id).unlink(missing_ok=True)  # nothing was authorized, nothing removed
        raise
    journal["done"].append("intent")
    _save_journal(journal)
    after_step("intent")
    return _run(journal, master)


def resume(
    journal: dict[str, Any],
    passphrase: str,
    read_confirmation: Callable[[str], str],
    stop_housekeeper: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Finish a ceremony whose intent was signed but which stopped before its receipt."""
    if "intent" not in journal["done"] and not Path(journal["intent_path"]).exists():
        # stopped before its intent was written: nothing was authorized and nothing removed
        _journal_path(journal["ceremony_id"]).unlink(missing_ok=True)
        return start(
            passphrase,
            read_confirmation,
            recreate=journal["recreate"],
            receipt_file=None,
            stop_housekeeper=stop_housekeeper,
        )
    _check_intent(journal)
    if "receipt" in journal["done"] or _is_our_receipt(journal):
        return _finish(journal)  # only the master's item and the journal were left
    brain = Path(journal["brain_path"])
    if "brain" in journal["done"] and "recreate" not in journal["done"] and _unfinished_empty_brain(brain):
        for suffix in ("", "-wal", "-shm", "-journal"):  # the half-made empty brain of --recreate
            Path(str(brain) + suffix).unlink(missing_ok=True)
    if (
        "brain" in journal["done"]
        and brain.exists()
        and not (journal["recreate"] and "recreate" in journal["done"])
    ):
        raise UsageError(
            f"an interrupted purge of brain {journal['brain_id']} is pending, but another brain is at "
            f"{brain} now",
            f"Move {brain.name} (with its -wal and -shm) aside, finish the old ceremony with "
            "`aimos purge --live`, then move it back.",
        )
    master = _unlock(journal, passphrase)
    _confirm(journal["confirmation"], read_confirmation)
    if "brain" not in journal["done"]:
        _offline(stop_housekeeper)
    return _run(journal, master, resumed=True)


def _unfinished_empty_brain(brain: Path) -> bool:
    """True for a brain file with no master identity (nothing signed can be in it)."""
    from aimos.installer.setup import is_unfinished_install

    return is_unfinished_install(brain)


def _check_intent(journal: dict[str, Any]) -> None:
    """The interrupted ceremony's signed intent must be whole and its own before anything more
    is removed."""
    from aimos.errors import IntegrityError
    from aimos.purge.artifacts import check_artifact

    path = Path(journal["intent_path"])
    try:
        intent = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        intent = None
    reason = check_artifact(intent, PURGE_INTENT_SCHEMA, journal["actor"]["fingerprint"])
    if reason is None and intent["body"].get("ceremony_id") != journal["ceremony_id"]:
        reason = "ceremony_mismatch"
    if reason is not None:
        raise IntegrityError(
            f"the interrupted ceremony {journal['ceremony_id']} has no valid signed intent at {path}"
            f" ({reason})",
            f"Restore the intent file beside its journal ({_journal_path(journal['ceremony_id'])}); "
            "without it the ceremony cannot finish.",
        )


def _is_our_receipt(journal: dict[str, Any]) -> bool:
    try:
        receipt = json.loads(Path(journal["receipt_path"]).read_text("utf-8"))
        return bool(receipt["body"]["ceremony_id"] == journal["ceremony_id"])
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _step(journal: dict[str, Any], name: str, work: Callable[[], None]) -> None:
    if name in journal["done"]:
        return
    work()
    journal["done"].append(name)
    _save_journal(journal)
    after_step(name)


def _run(journal: dict[str, Any], master: KeyPair, *, resumed: bool = False) -> dict[str, Any]:  # noqa: C901 (the ceremony's steps in their order)
    from aimos.identity.keystore import open_keystore
    from aimos.identity.master import MASTER_ITEM

    brain = Path(journal["brain_path"])
    keystore = open_keystore(journal["keystore"], journal["brain_id"])

    def service() -> None:
        from aimos.installer.service import unregister

        record = state.read_service_record()
        owned = [state.service_record_path()]
        if record and record.get("path"):
            owned.append(Path(record["path"]))
        present = sum(1 for p in owned if p.exists())
        unregister()
        journal["derived_files_deleted"] += present - sum(1 for p in owned if p.exists())

    def remove_brain() -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            target = Path(str(brain) + suffix)
            if target.exists():
                target.unlink()
                if suffix:
                    journal["derived_files_deleted"] += 1

    def keys() -> None:
        for name in journal["key_items"]:
            if name != MASTER_ITEM and keystore.delete(name):
                journal["credential_items_deleted"] += 1

    def files() -> None:
        from aimos.identity.anchors import remove_anchor
        from aimos.purge.inventory import owned_files, owned_folders

        for path in owned_files(state.read_service_record(), journal["brain_id"]):
            path.unlink(missing_ok=True)
            journal["derived_files_deleted"] += 1
        for folder in owned_folders():
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        try:
            remove_anchor(journal["brain_id"])
        except AimosError:
            pass  # an unreadable anchors file is left as it is (it is not this brain's alone)

    def recreate() -> None:
        if journal["recreate"]:
            journal["postcondition"] = _recreate_empty(brain)
        else:
            journal["postcondition"] = {
                "mode": "destroyed",
                "database_present": brain.exists(),
                "empty_verified": False,
                "migration_count": 0,
            }

    for name, work in (
        ("service", service),
        ("brain", remove_brain),
        ("keys", keys),
        ("files", files),
        ("recreate", recreate),
    ):
        _step(journal, name, work)

    completed = time.time()
    post = journal["postcondition"]
    try:  # the master's item is deleted right after the receipt is written
        keystore.get(MASTER_ITEM)
        master_present = 1
    except AimosError:
        master_present = 0
    intent = json.loads(Path(journal["intent_path"]).read_text("utf-8"))
    body = {
        "schema": PURGE_RECEIPT_SCHEMA,
        "ceremony_id": journal["ceremony_id"],
        "target": journal["target"],
        "software_release": f"aimos {__version__}",
        "actor": journal["actor"],
        "started_at": journal["started_at"],
        "completed_at": _iso(completed),
        "affected_table_classes": journal["classes"],
        "credential_items_deleted": journal["credential_items_deleted"] + master_present,
        "derived_files_deleted": journal["derived_files_deleted"],
        "postcondition": post,
        "migration_count": post["migration_count"],
        "completion_status": "complete",
        "resumed": resumed,
        "intent_sha256": artifact_sha256(intent),
    }
    receipt_path = Path(journal["receipt_path"])
    if not _is_our_receipt(journal):
        _write_durably(receipt_path, _json_bytes(sign_artifact(master, body, int(completed))))
    journal["done"].append("receipt")
    _save_journal(journal)
    after_step("receipt")
    return _finish(journal)


def _finish(journal: dict[str, Any]) -> dict[str, Any]:
    from aimos.identity.keystore import open_keystore
    from aimos.identity.master import MASTER_ITEM, MASTER_PENDING_ITEM

    keystore = open_keystore(journal["keystore"], journal["brain_id"])
    keystore.delete(MASTER_ITEM)
    keystore.delete(MASTER_PENDING_ITEM)  # left by a passphrase change that was cut off
    if journal["keystore"] == "file":
        folder = paths.keystore_dir(journal["brain_id"])
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
    _journal_path(journal["ceremony_id"]).unlink(missing_ok=True)
    return {
        "ceremony_id": journal["ceremony_id"],
        "receipt": journal["receipt_path"],
        "intent": journal["intent_path"],
        "master_fingerprint": journal["actor"]["fingerprint"],
        "postcondition": journal.get("postcondition"),
    }


def _recreate_empty(brain: Path) -> dict[str, Any]:
    from aimos.store.connection import code_schema_version, open_writer, schema_version
    from aimos.store.engine import row_count

    conn = open_writer(brain, create=True)
    try:
        empty = all(row_count(conn, table) == 0 for table in SENSITIVE_TABLES)
        migrations = schema_version(conn)
    finally:
        conn.close()
    if not empty or migrations != code_schema_version():
        raise AimosError("the recreated brain is not empty and fully migrated", "Report this as a bug.")
    return {
        "mode": "reinitialized_empty",
        "database_present": True,
        "empty_verified": True,
        "migration_count": migrations,
    }
