"""A memory's classification chain (``aimos.memory-epistemic/v1``): one chain from a single
genesis, each g_j recomputed and bound to a verified housekeeper classification event and to the
live content; a person's judgment is checked against the label it gives and the authority its
rule asks for (verify/kit/judgment.py, the same check as the writer's trigger)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from aimos import vocabulary
from aimos.crypto import commitments
from aimos.errors import AimosError
from aimos.verify.cognitive.events import IndexedEvent
from aimos.verify.cognitive.reasons import R
from aimos.verify.kit.judgment import judgment_reason

_LABELS: Final = frozenset(vocabulary.LABELS)


def verify_label_chain(
    memory: Mapping[str, Any], events: Mapping[str, IndexedEvent], signed: set[str], master_public_key: str
) -> str | None:
    """A memory's classification chain (aimos.memory-epistemic/v1): one chain from a single
    genesis, each g_j recomputed, each bound to a verified housekeeper `memory_epistemic_classified`
    event and to the live content; the live label is the newest row's (unverified with none)."""
    block = memory.get("epistemic")
    if not isinstance(block, dict) or not isinstance(block.get("chain"), list):
        return R.PORTABLE_EVIDENCE_MALFORMED
    previous: str | None = None
    previous_label: str = vocabulary.UNVERIFIED
    for row in block["chain"]:
        label = row.get("label") if isinstance(row, dict) else None
        if not isinstance(label, str) or label not in _LABELS:  # an array or object label too
            return R.PORTABLE_EVIDENCE_MALFORMED
        if row.get("previous_classification_hash") != previous:
            return R.FORK_OR_DISCONNECTED_HISTORY
        try:
            g = commitments.epistemic_classification_hash(
                memory["memory_id"],
                row["label"],
                row["confidence_milli"],
                bytes.fromhex(row["live_content_hash"]),
                bytes.fromhex(row["authority_mutation_hash"]),
                bytes.fromhex(previous) if previous else None,
            ).hex()
        except (AimosError, KeyError, TypeError, ValueError):
            return R.PORTABLE_EVIDENCE_MALFORMED
        if g != row.get("classification_hash"):
            return R.EPISTEMIC_HASH_INVALID
        if row["live_content_hash"] != memory.get("content_hash"):
            return R.EPISTEMIC_LIVE_CONTENT_MISMATCH
        indexed = events.get(str(row.get("authority_event_id")))
        event: Mapping[str, Any] = indexed.event if indexed else {}
        meta = event.get("metadata")
        if (
            indexed is None
            or not indexed.verified
            or not isinstance(meta, Mapping)
            or event.get("operation") != vocabulary.OPERATION_EPISTEMIC_CLASSIFIED
            or event.get("signer_agent_id") != vocabulary.HOUSEKEEPER
            or event.get("mutation_hash") != row.get("authority_mutation_hash")
            or meta.get("memory_id") != memory["memory_id"]
            or meta.get("label") != row["label"]
            or meta.get("basis") != row.get("basis")
            or meta.get("confidence_milli") != row["confidence_milli"]
            or meta.get("live_content_hash") != row["live_content_hash"]
            or meta.get("prev_classification_hash") != previous
        ):
            return R.EPISTEMIC_AUTHORITY_INVALID
        if meta.get("basis") == vocabulary.BASIS_EXPLICIT:
            if judgment_reason(meta, memory["memory_id"], previous_label, master_public_key):
                return R.EPISTEMIC_EVIDENCE_INVALID
        elif row["label"] not in vocabulary.CLASSIFIER_LABELS:
            return R.EPISTEMIC_EVIDENCE_INVALID
        previous, previous_label = g, row["label"]
    ends_in = block["chain"][-1]["label"] if block["chain"] else vocabulary.UNVERIFIED
    if block.get("label") != ends_in:
        return R.UNBACKED_PROJECTION
    if signed != {str(row.get("authority_event_id")) for row in block["chain"]}:
        return R.FORK_OR_DISCONNECTED_HISTORY
    return None
