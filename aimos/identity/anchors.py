"""The trust anchors file (anchors.json): each installed brain's master fingerprint, kept outside
the brain so a verifier never takes its trust anchor from the data it checks."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from aimos import paths
from aimos.crypto.canonical import json_loads
from aimos.crypto.encoding import is_hex64
from aimos.store.freshness import well_formed_anchor
from aimos.store.queries.identity import revoked_epochs_sorted
from aimos.vocabulary import ANCHORS_SCHEMA as SCHEMA

_READ: dict[tuple[str, int, int], Any] = {}


def _load(path: Path) -> Any:
    """The parsed file, re-read only when its size or modification time changes (every request
    reads the anchor)."""
    stat = path.stat()
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _READ:
        _READ.clear()
        _READ[key] = json_loads(path.read_text("utf-8"))
    return copy.deepcopy(_READ[key])


def read_anchors() -> dict[str, Any]:
    """The anchors document; an empty one when the file is missing or unreadable."""
    try:
        document = _load(paths.anchors_path())
    except (OSError, ValueError, RecursionError):
        return {"schema": SCHEMA, "brains": {}}
    if not isinstance(document, dict) or not isinstance(document.get("brains"), dict):
        return {"schema": SCHEMA, "brains": {}}
    return document


def anchored_fingerprints() -> set[str]:
    """Every well-formed master fingerprint recorded in anchors.json."""
    found = set()
    for entry in read_anchors()["brains"].values():
        fingerprint = entry.get("master_fingerprint") if isinstance(entry, dict) else None
        if isinstance(fingerprint, str) and is_hex64(fingerprint):
            found.add(fingerprint)
    return found


def anchored_fingerprint(brain_id: str) -> str | None:
    """The master fingerprint anchors.json holds for this brain, if any."""
    entry = read_anchors()["brains"].get(brain_id)
    fingerprint = entry.get("master_fingerprint") if isinstance(entry, dict) else None
    return fingerprint if isinstance(fingerprint, str) and is_hex64(fingerprint) else None


def _read_for_update() -> dict[str, Any]:
    """The anchors document to change; refuses a file that exists but cannot be read, rather
    than replace it (and the other brains' fingerprints in it) with a new one."""
    from aimos.errors import IntegrityError

    path = paths.anchors_path()
    if not path.exists():
        return {"schema": SCHEMA, "brains": {}}
    try:
        document = json_loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        document = None
    if not isinstance(document, dict) or not isinstance(document.get("brains"), dict):
        raise IntegrityError(
            f"{path} exists but is not a readable anchors file",
            "Move it aside (it may hold other brains' master fingerprints) and try again.",
        )
    return document


def add_anchor(brain_id: str, entry: dict[str, Any]) -> None:
    """Record (or replace) one brain's entry, keeping the others; written 0600 atomically."""
    document = _read_for_update()
    document["brains"][brain_id] = entry
    document.setdefault("schema", SCHEMA)
    paths.write_private_file(
        paths.anchors_path(), (json.dumps(document, indent=2, sort_keys=True) + "\n").encode()
    )


def remove_anchor(brain_id: str) -> None:
    """Drop one brain's entry (the file goes when it was the last)."""
    document = _read_for_update()
    if document["brains"].pop(brain_id, None) is None:
        return
    if document["brains"]:
        paths.write_private_file(
            paths.anchors_path(), (json.dumps(document, indent=2, sort_keys=True) + "\n").encode()
        )
    else:
        paths.anchors_path().unlink(missing_ok=True)


# --- the kept anchor: a second copy of the freshness anchor, in the brain's keystore ----------------
# The freshness anchor (freshness-<brain id>.json, beside anchors.json) moves on every write; an
# attacker holding the aimos folder can delete it, or put an old one back with an old brain. This
# copy lives where the brain's keys live (the OS keychain, or the file keystore), is written when
# the identity rows change (an enrolment, a revocation, a grant, a rotation) and when the person
# anchors the brain, and holds the revocations the brain held then: a brain behind it, or missing
# one of them, was rolled back past an identity change.
KEPT_ANCHOR_ITEM = "freshness-anchor"


def revocations_held(conn: Any) -> list[list[Any]]:
    """Every revoked epoch the brain holds, as [agent id, valid from], in order."""
    return [[a, v] for a, v in revoked_epochs_sorted(conn)]


def read_kept_anchor(keystore: Any) -> dict[str, Any] | None:
    """The kept anchor ({seq, link, revoked}), or None when there is none or it does not parse (a
    damaged copy counts as none: the freshness file beside anchors.json still stands)."""
    try:
        text = keystore.find(KEPT_ANCHOR_ITEM)
        entry = json_loads(text) if text is not None else None
    except (OSError, ValueError, RecursionError):
        return None
    if not well_formed_anchor(entry) or not isinstance(entry.get("revoked"), list):
        return None
    entry["revoked"] = [
        [r[0], r[1]]
        for r in entry["revoked"]
        if isinstance(r, list) and len(r) == 2 and isinstance(r[0], str) and isinstance(r[1], int)
    ]
    return entry


def keep_anchor(keystore: Any, seq: int, link: str, revoked: list[list[Any]]) -> None:
    """Write the kept anchor (replacing the one before)."""
    entry = {"seq": seq, "link": link, "revoked": revoked}
    keystore.replace(KEPT_ANCHOR_ITEM, json.dumps(entry, sort_keys=True))


def missing_revocations(kept: dict[str, Any] | None, held: list[list[Any]]) -> list[list[Any]]:
    """The revocations the kept anchor recorded that the brain does not hold."""
    if kept is None:
        return []
    have = {(a, v) for a, v in held}
    return [r for r in kept["revoked"] if (r[0], r[1]) not in have]
