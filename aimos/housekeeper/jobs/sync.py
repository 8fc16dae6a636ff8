"""Sync (every INTERVAL_SECONDS when the brain is linked to a hub): `aimos sync` on the
housekeeper's schedule, so a device's saves reach the others and theirs arrive without anyone
asking. Not one of the five jobs on the signed record: what it applies is sealed like any write,
and a pair of signed events every few minutes would be most of the ledger. A failure (the hub
down, a record that does not verify) is logged and recorded for `aimos hub status`, and the next
run tries again; the brain works offline meanwhile."""

from __future__ import annotations

import os
from typing import Any, Final

NAME: Final = "hub-sync"
INTERVAL_SECONDS: Final = 300
INTERVAL_ENV: Final = "AIMOS_SYNC_SECONDS"  # another interval (the tests use a few seconds)


def interval_seconds() -> int:
    try:
        return max(1, int(os.environ.get(INTERVAL_ENV, INTERVAL_SECONDS)))
    except ValueError:
        return INTERVAL_SECONDS


def run() -> dict[str, Any] | None:
    """One sync of the home's brain; None when it is not linked to a hub (or not installed)."""
    from aimos import paths
    from aimos.actions.session import open_brain
    from aimos.hub.device import hub_url, run_sync

    if not paths.brain_path().exists():
        return None
    with open_brain(write=True) as brain:
        if hub_url(brain.keystore) is None:
            return None
        return run_sync(brain.conn, brain.keystore, brain.housekeeper)
