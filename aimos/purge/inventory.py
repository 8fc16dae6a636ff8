"""What a purge would destroy, by category: table classes with row counts, the brain's keychain
items and the files aimos owns for it. Counts and names of things, never their content."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aimos import paths
from aimos.housekeeper import state
from aimos.store.connection import Connection
from aimos.store.engine import row_count
from aimos.store.queries import purge as queries
from aimos.vocabulary import VERIFY_FAILED_FILE, VERIFY_PASSED_FILE

CLASSES = (
    "memory_and_index",
    "cryptographic_proof",
    "credential_reference",
    "identity_and_execution",
    "operational_projection",
)
# Every table of the schema, mapped explicitly (a test checks none is missing). The reference
# assigns by name pattern; the explicit map keeps that order and puts aimos's own tables where
# their contents belong (identity epochs with identities, grants and signed chains with proofs).
TABLE_CLASSES: dict[str, str] = {
    "memories": "memory_and_index",
    "memory_fts": "memory_and_index",
    "memory_fts_config": "memory_and_index",
    "memory_fts_data": "memory_and_index",
    "memory_fts_docsize": "memory_and_index",
    "memory_fts_idx": "memory_and_index",
    "memory_fts_vocab": "memory_and_index",
    "memory_context_fts": "memory_and_index",
    "memory_context_fts_config": "memory_and_index",
    "memory_context_fts_data": "memory_and_index",
    "memory_context_fts_docsize": "memory_and_index",
    "memory_context_fts_idx": "memory_and_index",
    "memory_supersessions": "memory_and_index",
    "memory_occurrences": "memory_and_index",
    "epistemic_fingerprints": "memory_and_index",
    "detection_queue": "memory_and_index",
    "memory_vectors": "memory_and_index",
    "memory_vectors_generation": "operational_projection",
    "detection_runs": "operational_projection",
    "memory_provenance": "cryptographic_proof",
    "memory_classifications": "cryptographic_proof",
    "events": "cryptographic_proof",
    "recall_grants": "cryptographic_proof",
    "agent_revocations": "cryptographic_proof",
    "recall_receipts": "cryptographic_proof",
    "request_nonces": "cryptographic_proof",
    "outcomes": "cryptographic_proof",
    "weight_projections": "cryptographic_proof",
    "weight_baselines": "cryptographic_proof",
    "master_identity": "identity_and_execution",
    "identity_epochs": "identity_and_execution",
    "brain_seals": "cryptographic_proof",
    "brain_restores": "cryptographic_proof",
    "memory_redactions": "cryptographic_proof",
    "hub_requests": "cryptographic_proof",  # agents' signed requests kept for the home (a save's text)
    "hub_homes": "identity_and_execution",
    "hub_handovers": "identity_and_execution",
    "hub_cuts": "identity_and_execution",
    "hub_pulls": "operational_projection",
    "seal_heads": "operational_projection",
    "brain_meta": "operational_projection",
    "schema_migrations": "operational_projection",
}
# Tables that must be empty in a recreated brain (the reference's sensitive set, in aimos names).
SENSITIVE_TABLES = (
    "memories",
    "memory_provenance",
    "events",
    "recall_grants",
    "agent_revocations",
    "master_identity",
    "identity_epochs",
    "memory_classifications",
    "outcomes",
    "recall_receipts",
    "brain_seals",
    "brain_restores",
    "memory_redactions",
    "hub_requests",
    "hub_homes",
    "hub_handovers",
    "hub_cuts",
)
_PATTERNS = (
    (
        "memory_and_index",
        r"memory|quim|codebook|embedding|entity|relation|graph|timeline|temporal|supersession",
    ),
    ("cryptographic_proof", r"provenance|envelope|event|ledger|authorization|revocation|config"),
    ("credential_reference", r"credential|integration_token"),
    ("identity_and_execution", r"agent|master|session|task|directive"),
)


def class_by_pattern(table: str) -> str:
    """The reference's rule: the first class whose pattern the table name matches."""
    for name, pattern in _PATTERNS:
        if re.search(pattern, table):
            return name
    return "operational_projection"


def class_of(table: str) -> str:
    if table not in TABLE_CLASSES:
        return class_by_pattern(table)
    return TABLE_CLASSES[table]


def schema_tables(conn: Connection) -> list[tuple[str, bool]]:
    """(name, is_virtual) of every table of the brain."""
    return queries.schema_tables(conn)


def table_class_counts(conn: Connection) -> list[dict[str, Any]]:
    """[{class, row_count}] for all five classes, sorted by class (virtual tables count through
    their shadow tables)."""
    counts = dict.fromkeys(CLASSES, 0)
    for name, virtual in schema_tables(conn):
        if virtual:
            continue
        counts[class_of(name)] += row_count(conn, name)
    return [{"class": c, "row_count": counts[c]} for c in sorted(counts)]


def owned_files(record: dict[str, Any] | None = None, brain_id: str | None = None) -> list[Path]:
    """The files aimos keeps for the brain here, beside the brain itself (which exist now): its
    WAL, backups (in its backups folder, and those it recorded writing elsewhere that are still
    the copy it wrote), brains `aimos restore` replaced (they hold memories too), state and log
    files, the anchor of its newest seal, the master's redaction records (with their reasons),
    the record of its backups, the newest verify's outcome and a socket a killed housekeeper left.
    A backup elsewhere comes before the record that names it: a ceremony cut off between the two
    finds it again."""
    from aimos.housekeeper.backup_records import records_path
    from aimos.store.freshness import freshness_path

    brain = paths.brain_path()
    found = [Path(str(brain) + s) for s in ("-wal", "-shm", "-journal")]
    if brain.parent.is_dir():
        found += sorted(
            p
            for p in brain.parent.iterdir()
            if p.is_file()
            and (p.name.startswith(brain.name + ".replaced-") or p.name.startswith(f".{brain.name}.restore-"))
        )
    if brain_id:
        from aimos.identity.keymoves import lock_path

        found += [copy for copy, why in backups_elsewhere(brain_id) if why is None]
        found += [
            freshness_path(brain_id),
            lock_path(brain_id),
            paths.redactions_path(brain_id),
            records_path(brain_id),
            paths.hub_state_path(brain_id),
            paths.hub_state_path(brain_id).with_suffix(".lock"),
            paths.hub_pushed_path(brain_id),
        ]
    backups = state.backups_dir()
    if backups.is_dir():
        found += sorted(p for p in backups.iterdir() if p.is_file())
    found += [
        state.pid_path(),
        state.status_path(),
        state.lock_path(),
        state.service_record_path(),
        state.log_path(),
        paths.state_dir() / "install.lock",
        paths.state_dir() / "onboarding" / "first-launch-receipt.json",
        paths.state_dir() / VERIFY_FAILED_FILE,  # the newest verify's outcome
        paths.state_dir() / VERIFY_PASSED_FILE,
        paths.embedding_socket_path(),  # left by a housekeeper that was killed
    ]
    unit = (record or {}).get("path")
    if unit:
        found.append(Path(unit))
    return [p for p in found if p.exists()]


def owned_folders() -> list[Path]:
    """aimos's folders for the brain here that a purge removes once they are empty."""
    return [
        state.backups_dir(),
        paths.state_dir() / "onboarding",
        paths.state_dir() / "hub",
        paths.embedding_socket_path().parent,
    ]


def backups_elsewhere(brain_id: str) -> list[tuple[Path, str | None]]:
    """The backups aimos recorded writing outside the brain's backups folder (`aimos backup --to`)
    that are there now: (path, None) for the copy it wrote (this brain, the newest seal recorded),
    (path, why not) for a file that is no longer that copy or cannot be read."""
    from aimos.housekeeper.backup_records import recorded
    from aimos.housekeeper.redaction_copies import check_backup_copy

    folder = state.backups_dir().resolve()
    found = []
    for backup in recorded(brain_id):
        if backup.path.parent == folder or not backup.path.exists():
            continue
        found.append((backup.path, check_backup_copy(backup, brain_id, []).unreached))
    return found


def kept_files(brain_id: str | None) -> list[dict[str, str]]:
    """What a purge deliberately leaves, where, and why: each one holds nothing of the brain's
    text or keys, or is not aimos's to remove."""
    keep = [
        {
            "what": "purge receipts",
            "where": str(paths.purge_receipts_dir()),
            "why": "the signed intents and receipts of purges (this one's too): counts and classes, "
            "no memory text, no keys",
        }
    ]
    if paths.anchors_path().exists():
        keep.append(
            {
                "what": "trust anchors",
                "where": str(paths.anchors_path()),
                "why": "only this brain's entry is removed; other brains' entries stay",
            }
        )
    for what, where, why in (
        ("command log", paths.log_dir() / "aimos.log", "a line per command: its name and exit code, no text"),
        ("NLI judge setting", paths.nli_setting_path(), "a model folder and its digests, of no brain"),
        (
            "cache",
            paths.cache_dir(),
            "files aimos can make again for any brain of yours (model checks, evaluation embeddings)",
        ),
    ):
        if where.exists():
            keep.append({"what": what, "where": str(where), "why": why})
    if brain_id and paths.hub_state_path(brain_id).exists():
        keep.append(
            {
                "what": "the brain's records on its sync hub",
                "where": "the PostgreSQL hub this brain syncs with (`aimos hub status` names it)",
                "why": "aimos cannot delete them (the hub's tables are append-only); they are sealed under "
                "the content key this purge destroys here, which the brain's other devices still hold: "
                "purge every device, then drop the hub's database",
            }
        )
    for copy, why_not in backups_elsewhere(brain_id) if brain_id else []:
        if why_not is not None:
            keep.append({"what": "not a backup of this brain now", "where": str(copy), "why": why_not})
    keep.append(
        {
            "what": "exports and copies you made",
            "where": "wherever you wrote them",
            "why": "aimos does not record where an export went: delete them yourself",
        }
    )
    return keep


@dataclass
class Inventory:
    brain_id: str
    brain_name: str
    company_id: str
    brain_path: str
    keystore_kind: str
    master_fingerprint: str
    master_created_at: int
    classes: list[dict[str, Any]]
    key_items: list[str]
    files: list[str] = field(default_factory=list)
    kept: list[dict[str, str]] = field(default_factory=list)

    @property
    def confirmation(self) -> str:
        return f"PURGE AIMOS {self.company_id} {self.brain_name}"

    def to_json(self) -> dict[str, Any]:
        return {
            "brain_id": self.brain_id,
            "brain_name": self.brain_name,
            "company_id": self.company_id,
            "brain_path": self.brain_path,
            "keystore": self.keystore_kind,
            "master_fingerprint": self.master_fingerprint,
            "affected_table_classes": self.classes,
            "credential_items": len(self.key_items),
            "owned_files": self.files,
            "kept": self.kept,
            "confirmation": self.confirmation,
        }


def take_inventory(conn: Connection) -> Inventory:
    from aimos.identity.anchors import KEPT_ANCHOR_ITEM
    from aimos.identity.devices import HUB_ITEMS
    from aimos.identity.master import MASTER_ITEM, master_row
    from aimos.identity.signer import key_item_name
    from aimos.store.meta import brain_meta

    meta = brain_meta(conn)
    master = master_row(conn)
    items = [MASTER_ITEM] + [key_item_name(a, v) for a, v in queries.epoch_keys(conn)]
    items.append(KEPT_ANCHOR_ITEM)  # the second copy of the freshness anchor, beside the keys
    if paths.hub_state_path(meta["brain_id"]).exists():  # a brain on a sync hub: its URL and content key
        items += HUB_ITEMS
    return Inventory(
        brain_id=meta["brain_id"],
        brain_name=meta.get("brain_name", "personal"),
        company_id=meta["company_id"],
        brain_path=str(paths.brain_path()),
        keystore_kind=meta["keystore"],
        master_fingerprint=str(master["fingerprint"]),
        master_created_at=int(master["created_at"]),
        classes=table_class_counts(conn),
        key_items=items,
        files=[str(p) for p in owned_files(state.read_service_record(), meta.get("brain_id"))],
        kept=kept_files(meta.get("brain_id")),
    )
