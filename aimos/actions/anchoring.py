"""`aimos anchor`: the person takes a brain as theirs again, with the master passphrase.

Two anchors live outside the brain: anchors.json names each brain's master (the trust anchor every
request is checked against), and the freshness anchor holds its newest seal (so an older copy put
back is found); a second copy of the freshness anchor is kept in the brain's keystore. A brain
anchors.json names no master for (copied in, or the file lost), or whose freshness anchor is gone,
is refused by every request until the person anchors it here. Anchoring proves the person holds
the passphrase of this brain's own master (a brain an attacker built has another master, whose
passphrase the person does not have), shows its fingerprint to compare with the one install
printed, and says which revocations the keystore's copy knew that the brain does not hold (a
rolled-back brain has an agent active again that the person revoked).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from aimos import paths
from aimos.actions.session import Brain
from aimos.errors import IntegrityError
from aimos.identity.anchors import (
    add_anchor,
    anchored_fingerprint,
    keep_anchor,
    missing_revocations,
    read_kept_anchor,
    revocations_held,
)
from aimos.identity.master import master_row
from aimos.identity.trusted import IDENTITY_TABLES
from aimos.store import freshness, seals


@dataclass
class Anchored:
    brain_id: str
    brain_path: str
    master_fingerprint: str
    master_anchored: str  # "added" (anchors.json named no master for it) or "already"
    freshness: str  # "re-anchored" (the anchor was gone) or "kept"
    newest_seal: int | None
    kept_seal: int | None  # the keystore copy's seal before this, if it had one
    behind_kept: bool  # the brain does not descend from that copy: rolled back or replaced
    missing_revocations: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def anchor(brain: Brain, passphrase: str) -> Anchored:
    """Anchor the brain this home finds: its master in anchors.json, its newest seal in the
    freshness anchor and the keystore's copy. Refuses (exit 5) a brain whose seals or identity rows
    do not verify, or whose master is not the one anchors.json already names for it; refuses a
    wrong passphrase (exit 6). Writes nothing to the brain."""
    conn = brain.conn
    brain.master_with(passphrase)  # this brain's own master, opened with the person's passphrase
    seals.check_tables(conn, IDENTITY_TABLES)  # the identity rows as their seals bind them
    brain_id = brain.meta["brain_id"]
    fingerprint = str(master_row(conn)["fingerprint"])
    named = anchored_fingerprint(brain_id)
    if named is not None and named != fingerprint:
        raise IntegrityError(
            f"anchors.json names master {named[:16]}... for brain {brain_id}, but this brain's master is "
            f"{fingerprint[:16]}...: it is not the brain you installed under this id",
            "Put your own brain file back (aimos restore BACKUP); a brain is never re-anchored to "
            "another master.",
            reason="master_not_anchored",
        )
    head = seals.head_seal(conn)
    anchor_file = freshness.read_freshness(brain_id)
    if head is not None and anchor_file is not None:
        stale = freshness.freshness_failure(conn, head, anchor_file)
        if stale is not None:  # behind a freshness anchor that is still there: that is a restore
            raise IntegrityError(
                f"this brain is not the newest one aimos wrote here: {stale['detail']}",
                "An older copy put back on purpose goes back with `aimos restore BACKUP` (a signed "
                "record); otherwise put the newer brain file back.",
                reason=stale["reason"],
            )
    kept = read_kept_anchor(brain.keystore)
    behind = kept is not None and freshness.behind_kept(conn, kept)
    held = revocations_held(conn)
    if named is None:
        add_anchor(
            brain_id,
            {
                "master_fingerprint": fingerprint,
                "brain_path": str(paths.brain_path()),
                "brain_name": brain.meta.get("brain_name", "personal"),
                "company_id": brain.meta["company_id"],
            },
        )
    if head is not None:
        if anchor_file is None:
            freshness.write_freshness(brain_id, head.seq, head.link, note="anchored")
        keep_anchor(brain.keystore, head.seq, head.link.hex(), held)
    return Anchored(
        brain_id=brain_id,
        brain_path=str(paths.brain_path()),
        master_fingerprint=fingerprint,
        master_anchored="added" if named is None else "already",
        freshness="re-anchored" if head is not None and anchor_file is None else "kept",
        newest_seal=head.seq if head else None,
        kept_seal=kept["seq"] if kept else None,
        behind_kept=behind,
        missing_revocations=[{"agent_id": a, "valid_from": v} for a, v in missing_revocations(kept, held)],
    )
