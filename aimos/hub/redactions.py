"""A redaction on a synced brain reaches every device of it.

`aimos redact` has the master sign the record once for every device (a v3 record,
aimos/verify/kit/redaction.py: the rows it changes named by their cells, each device adds its own
rowids), and its ledger event (`memory_redacted`, which travels to the other devices as every
event does) carries the record's portable part and the master's signature. After each pull (a
sync, a join) a device applies every such record whose memory it holds with its text: checked
against the brain's master as a local redaction is (a record a device or agent key signed is
refused by name, and nothing is redacted), made this device's (its rowids), and the text removed
as `aimos redact` removes it (secure_delete, the search indexes rebuilt, the WAL truncated). A
record of a memory this device does not hold yet waits for it: a memory comes before its
redaction in the hub's order, so a device that joins later pulls the memory, then removes its text.

What stays: the hub keeps every record it was sent, and the memory's save went to it sealed under
the brain's content key before the redaction did.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from aimos.actions.redaction import removing
from aimos.errors import IntegrityError
from aimos.ledger.events import read_event
from aimos.memory.redaction import apply_record, localized_record, redaction_of
from aimos.store.connection import Connection
from aimos.store.queries import devices as device_queries
from aimos.store.queries import hub as queries
from aimos.verify.kit.redaction import parse_record
from aimos.vocabulary import MEMORY_REDACTED_OPERATION

# what `aimos redact` says on a synced brain (and docs/sync.md)
ON_A_SYNCED_BRAIN = (
    "this brain syncs through a hub: every other device removes the text at its next sync (a device "
    "that joins later, right after it pulls it); the hub keeps the sealed record of the original text "
    "(its tables are append-only), which any device holding the brain's content key can still open"
)


@dataclass(frozen=True)
class Sent:
    """A redaction record another device's event carries, for a memory this device holds with
    its text."""

    event_id: str
    device: str
    memory_id: str
    record: str
    signature_b64u: str

    def refused(self, why: str) -> str:
        sender = f"sent by device {self.device} (event {self.event_id})"
        return f"the redaction of memory {self.memory_id} {sender}: {why}"


def waiting(conn: Connection) -> list[Sent]:
    """Every redaction record the brain's events carry whose memory this brain holds, not redacted
    yet, oldest first."""
    found = []
    for row in queries.events_of(conn, MEMORY_REDACTED_OPERATION):
        event = read_event(row)
        try:
            meta = json.loads(event["signed_body"])["metadata"]
            sent = (meta["memory_id"], meta["redaction_record"], meta["redaction_signature_b64u"])
        except (ValueError, TypeError, KeyError):
            continue  # an event from before records travelled (or of a v1, v2 record): nothing to do
        if not all(isinstance(v, str) for v in sent):
            continue
        named, record, signature = sent
        parsed = parse_record(record, portable=True)  # the memory the record itself names
        memory_id = str(parsed["memory_id"]) if parsed is not None else named
        if not queries.memory_held(conn, memory_id):
            continue  # it has not arrived here (yet)
        if redaction_of(conn, memory_id) is not None:
            continue
        epoch_device = device_queries.epoch_device(conn, row["signer_agent_id"], row["signer_valid_from"])
        device = "?" if epoch_device is None else epoch_device
        found.append(Sent(str(row["event_id"]), device, memory_id, record, signature))
    return found


def refusals(conn: Connection, sent: list[Sent]) -> dict[str, str]:
    """Of these, the ones this brain refuses (the master did not sign it, another brain's, a
    memory that differs here), event id -> why, in words."""
    out = {}
    for s in sent:
        try:
            localized_record(conn, s.record, s.signature_b64u)
        except IntegrityError as exc:
            out[s.event_id] = s.refused(exc.message)
    return out


def apply_waiting(conn: Connection, housekeeper: Any) -> dict[str, Any]:
    """Remove the text of every memory a waiting record redacts, in one write (none when nothing
    waits); the refused ones are named and change nothing."""
    sent = waiting(conn)
    refused = refusals(conn, sent)
    ready = [s for s in sent if s.event_id not in refused]
    redacted: list[str] = []
    if ready:
        with removing(conn, housekeeper):
            for s in ready:
                if redaction_of(conn, s.memory_id) is not None:
                    continue  # two events carrying one memory's redaction (two devices redacted it)
                apply_record(conn, localized_record(conn, s.record, s.signature_b64u))
                redacted.append(s.memory_id)
    return {"redacted": redacted, "redactions_refused": list(refused.values())}


def refused_here(conn: Connection) -> list[str]:
    """The waiting records this brain refuses (`aimos hub status`)."""
    return list(refusals(conn, waiting(conn)).values())
