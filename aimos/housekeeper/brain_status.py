"""The brain's status as one report: what `aimos status` prints and the TUI's status screen shows
(brain, keystore, master fingerprint, counts, identities with expiry and a warning for each agent
due for rotation, the housekeeper's jobs, the last corpus proof root the nightly job attested and
the newest full verification's outcome: the nightly's, or `aimos verify`'s when newer).
Read-only; no passphrase needed."""

from __future__ import annotations

from typing import Any

from aimos import paths
from aimos.actions.session import now as clock_now
from aimos.actions.session import open_brain
from aimos.errors import AimosError
from aimos.housekeeper.scheduler import readiness
from aimos.identity.agents import agent_listing, epochs_due
from aimos.identity.master import master_row
from aimos.identity.trusted import check_identities
from aimos.meaning.index import meaning_state
from aimos.store.connection import code_schema_version, schema_version
from aimos.store.freshness import freshness_state
from aimos.store.queries.housekeeper import count_of
from aimos.verify.brain.outcome import last_corpus_root, newest_outcome
from aimos.vocabulary import HOUSEKEEPER

COUNTED = (
    ("memories", "memories"),
    ("events", "events"),
    ("provenance_nodes", "memory_provenance"),
    ("occurrences", "memory_occurrences"),
    ("supersessions", "memory_supersessions"),
)


def status_report(now: int | None = None) -> dict[str, Any]:
    at = clock_now() if now is None else now
    with open_brain(write=False, anchored=False) as brain:
        conn = brain.conn
        counts = {name: count_of(conn, table_name) for name, table_name in COUNTED}
        try:
            check_identities(conn)
            identities_verified: str | None = None
        except AimosError as exc:
            identities_verified = exc.message
        return {
            "freshness": freshness_state(conn),
            "identities_problem": identities_verified,
            "brain_id": brain.meta["brain_id"],
            "brain_name": brain.meta.get("brain_name"),
            "company_id": brain.company_id,
            "brain_path": str(paths.brain_path()),
            "schema_version": schema_version(conn),
            "code_schema_version": code_schema_version(),
            "keystore": {"kind": brain.keystore.kind, "detail": brain.keystore.describe()},
            "master_fingerprint": master_row(conn)["fingerprint"],
            "anchors_path": str(paths.anchors_path()),
            "identities": agent_listing(conn, at),
            "expiry_warnings": [due.warning(at) for due in epochs_due(conn, at)],
            "counts": counts,
            "last_corpus_root": last_corpus_root(conn),
            "last_verify": newest_outcome(conn, brain.meta["brain_id"]),
            "meaning": meaning_state(conn).to_json(),
            HOUSEKEEPER: readiness(at),
        }
