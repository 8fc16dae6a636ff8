"""A memory's classification chain (``aimos.memory-epistemic/v1``): one chain from a single
genesis, each g_j recomputed and bound to a verified housekeeper classification event and to the
live content; a person's judgment is checked against the label it gives and the authority its
rule asks for (verify/kit/judgment.py, the same check as the writer's trigger); a corrected version
is never more trusting than the label it carries from the version it corrects, as that version
stood at the moment of the correction (verify/kit/inheritance.py, the same check as migration 9's
triggers and the in-database verifier)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from aimos import vocabulary
from aimos.crypto import commitments
from aimos.errors import AimosError
from aimos.verify.cognitive.events import IndexedEvent
from aimos.verify.cognitive.reasons import R
from aimos.verify.kit import inheritance, is_int
from aimos.verify.kit.inheritance import Floor, Order, Predecessor, predecessor_at, signed_classification
from aimos.verify.kit.judgment import judgment_reason

_LABELS: Final = frozenset(vocabulary.LABELS)
# the kit's inheritance reasons, as this verifier names them
_CARRIED: Final = {
    inheritance.LIFTED: R.CORRECTION_LIFTED_JUDGMENT,
    inheritance.OVERRULED: R.CLASSIFIER_OVERRULED_JUDGMENT,
    inheritance.EVIDENCE_INVALID: R.EPISTEMIC_EVIDENCE_INVALID,
}


def _housekeeper_event(indexed: IndexedEvent, operation: str) -> tuple[Order, Mapping[str, Any]] | None:
    """A verified housekeeper event of ``operation``: its place in the housekeeper's ledger and
    its signed metadata."""
    event = indexed.event
    meta = event.get("metadata")
    valid_from, seq = event.get("signer_valid_from"), event.get("ledger_sequence")
    if (
        not indexed.verified
        or event.get("operation") != operation
        or event.get("signer_agent_id") != vocabulary.HOUSEKEEPER
        or not isinstance(meta, Mapping)
        or not is_int(valid_from)
        or not is_int(seq)
    ):
        return None
    return (valid_from, seq), meta


def predecessors(events: Mapping[str, IndexedEvent]) -> dict[str, Predecessor]:
    """memory_id -> the version it corrects, as that version stood at the moment of the
    correction: the new version's memory_saved event names it and orders the moment, the old
    version's classification events give its label and g then (verify/kit/inheritance.py)."""
    saved: dict[str, tuple[Order, str]] = {}
    classified: dict[str, list[tuple[Order, str, str]]] = {}
    for indexed in events.values():
        found = _housekeeper_event(indexed, vocabulary.MEMORY_SAVED_OPERATION)
        if found is not None:
            order, meta = found
            memory_id, old = meta.get("memory_id"), meta.get("supersedes")
            if isinstance(memory_id, str) and isinstance(old, str):
                if memory_id not in saved or order < saved[memory_id][0]:
                    saved[memory_id] = (order, old)
            continue
        found = _housekeeper_event(indexed, vocabulary.EPISTEMIC_CLASSIFIED_OPERATION)
        if found is None:
            continue
        order, meta = found
        body = indexed.event.get("signed_body")
        subject = meta.get("memory_id")
        if (
            not isinstance(body, Mapping)
            or body.get("subject_memory_id") != subject
            or not isinstance(subject, str)
        ):
            continue
        label_g = signed_classification(meta, indexed.event.get("mutation_hash"))
        if label_g is not None:
            classified.setdefault(subject, []).append((order, *label_g))
    return {mid: predecessor_at(old, classified.get(old, []), moment) for mid, (moment, old) in saved.items()}


def verify_label_chain(
    memory: Mapping[str, Any],
    events: Mapping[str, IndexedEvent],
    signed: set[str],
    master_public_key: str,
    predecessor: Predecessor | None = None,
) -> str | None:
    """A memory's classification chain (aimos.memory-epistemic/v1): one chain from a single
    genesis, each g_j recomputed, each bound to a verified housekeeper `memory_epistemic_classified`
    event and to the live content; a correction of ``predecessor`` no more trusting than the label
    it carries; the live label is the newest row's (unverified with none)."""
    block = memory.get("epistemic")
    if not isinstance(block, dict) or not isinstance(block.get("chain"), list):
        return R.PORTABLE_EVIDENCE_MALFORMED
    previous: str | None = None
    previous_label: str = vocabulary.UNVERIFIED
    floor = Floor(predecessor)
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
            or event.get("operation") != vocabulary.EPISTEMIC_CLASSIFIED_OPERATION
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
        master_signed = False
        if meta.get("basis") == vocabulary.BASIS_EXPLICIT:
            if judgment_reason(meta, memory["memory_id"], previous_label, master_public_key):
                return R.EPISTEMIC_EVIDENCE_INVALID
            evidence = meta.get("evidence")
            master_signed = (
                isinstance(evidence, Mapping) and evidence.get("master_signature_b64u") is not None
            )
        carried = floor.row(meta, master_signed=master_signed)
        if carried is not None:
            return _CARRIED[carried]
        previous, previous_label = g, row["label"]
    if floor.end(len(block["chain"])) is not None:
        return R.CORRECTION_LIFTED_JUDGMENT
    ends_in = block["chain"][-1]["label"] if block["chain"] else vocabulary.UNVERIFIED
    if block.get("label") != ends_in:
        return R.UNBACKED_PROJECTION
    if signed != {str(row.get("authority_event_id")) for row in block["chain"]}:
        return R.FORK_OR_DISCONNECTED_HISTORY
    return None
