"""A corrected version carries the judgment on the version it corrects: the one check the writer's
triggers (migration 9), the in-database verifier and the portable verifier all make (pure, no I/O).

A correction (a save that supersedes a memory) is a new memory, and a new memory starts
``unverified``. When the version it corrects was less trusted than that at the moment of the
correction (:func:`~aimos.vocabulary.carried_by_correction`: disputed or a poison label), the new
version owes that label: the writer appends to it a housekeeper-signed classification carrying the
same label (basis classifier, its signals naming the predecessor, the predecessor's classification
hash then and its label), and until a judgment the master signed, no classification of the new
version may be more trusting than the owed label (the classifier may lower it, never raise it). A
corrected version with no classification at all is ``unverified``, more trusting than what it owes.

The moment of the correction is the new version's own ``memory_saved`` event, signed by the
housekeeper; the predecessor's label then is the newest of its signed classification events
before that one in the housekeeper's ledger (its epoch, then its sequence: a housekeeper epoch
signs nothing after the next one is certified), each classification hash recomputed from its
event alone, so a verifier needs neither the predecessor's rows nor its place in the export.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from aimos.crypto import commitments
from aimos.errors import AimosError
from aimos.vocabulary import (
    BASIS_CLASSIFIER,
    BASIS_EXPLICIT,
    CLASSIFIER_LABELS,
    INHERITED_CLASSIFICATION_HASH,
    INHERITED_FROM,
    INHERITED_LABEL,
    TRUST_RANK,
    UNVERIFIED,
    carried_by_correction,
    raises_trust,
)

LIFTED: Final = "correction_lifted_judgment"
# a classifier row after a person's judgment in the same chain (migration 10's trigger refuses one)
OVERRULED: Final = "classifier_overruled_judgment"
EVIDENCE_INVALID: Final = "epistemic_evidence_invalid"

# where a housekeeper event stands in its ledger: (signer epoch's valid_from, ledger sequence)
Order = tuple[int, int]


@dataclass(frozen=True)
class Predecessor:
    """The version a memory corrects, as it stood at the moment of the correction."""

    memory_id: str
    label: str
    classification_hash: str | None  # None: it had no classification (unverified)

    @property
    def owed(self) -> str | None:
        """The label the correction must carry, or None when it owes nothing."""
        return self.label if carried_by_correction(self.label) else None


def signed_classification(meta: object, mutation_hash: object) -> tuple[str, str] | None:
    """The label and the recomputed classification hash g_j of a signed
    ``memory_epistemic_classified`` event (its metadata and its mutation hash), or None when the
    event does not hold one."""
    if not isinstance(meta, Mapping):
        return None
    label, memory_id, prev = meta.get("label"), meta.get("memory_id"), meta.get("prev_classification_hash")
    confidence, live = meta.get("confidence_milli"), meta.get("live_content_hash")
    if not isinstance(label, str) or label not in TRUST_RANK or not isinstance(memory_id, str):
        return None
    if not isinstance(confidence, int) or isinstance(confidence, bool) or not isinstance(live, str):
        return None
    if not isinstance(mutation_hash, str) or (prev is not None and not isinstance(prev, str)):
        return None
    try:
        g = commitments.epistemic_classification_hash(
            memory_id,
            label,
            confidence,
            bytes.fromhex(live),
            bytes.fromhex(mutation_hash),
            bytes.fromhex(prev) if prev else None,
        )
    except (AimosError, TypeError, ValueError):
        return None
    return label, g.hex()


def predecessor_at(
    memory_id: str, classified: Iterable[tuple[Order, str, str]], moment: Order
) -> Predecessor:
    """``memory_id`` as it stood at ``moment``: its newest signed classification (order, label,
    g) before it, or unverified with none."""
    before = [c for c in classified if c[0] < moment]
    if not before:
        return Predecessor(memory_id, UNVERIFIED, None)
    _order, label, g = max(before, key=lambda c: c[0])
    return Predecessor(memory_id, label, g)


def claim(meta: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The signals of a classification that says it carries a predecessor's judgment, or None."""
    signals = meta.get("signals")
    return signals if isinstance(signals, Mapping) and INHERITED_FROM in signals else None


def carries(meta: Mapping[str, Any], predecessor: Predecessor | None) -> bool:
    """Whether the classification in signed ``meta`` carries exactly the label ``predecessor``
    owes, naming it, its classification hash then and its label."""
    signals = claim(meta)
    return (
        signals is not None
        and predecessor is not None
        and predecessor.owed is not None
        and meta.get("basis") == BASIS_CLASSIFIER
        and meta.get("label") == predecessor.label
        and signals.get(INHERITED_FROM) == predecessor.memory_id
        and signals.get(INHERITED_LABEL) == predecessor.label
        and signals.get(INHERITED_CLASSIFICATION_HASH) == predecessor.classification_hash
    )


def classifier_reason(
    meta: Mapping[str, Any], predecessor: Predecessor | None, owed: str | None
) -> str | None:
    """None when a classification of basis classifier (its signed ``meta``) may stand, on a memory
    that corrects ``predecessor`` (None: corrects nothing) and owes ``owed`` (None: nothing, or a
    judgment the master signed lifted it): it is no more trusting than what is owed
    (:data:`LIFTED`), it carries the predecessor's judgment exactly when it says it does, and a label
    the classifier never gives only when it carries one (:data:`EVIDENCE_INVALID`)."""
    label = meta.get("label")
    if not isinstance(label, str):
        return EVIDENCE_INVALID
    if owed is not None and raises_trust(owed, label):
        return LIFTED
    if claim(meta) is not None:
        return None if carries(meta, predecessor) else EVIDENCE_INVALID
    return None if label in CLASSIFIER_LABELS else EVIDENCE_INVALID


class Floor:
    """One memory's label chain walked in order against what the memory owes the version it
    corrects, and against a person's judgment in it (no classifier row after one: :data:`OVERRULED`)
    (both verifiers): :meth:`row` for each classification after its own checks passed, :meth:`end`
    after the last."""

    def __init__(self, predecessor: Predecessor | None) -> None:
        self.predecessor = predecessor
        self.owed = predecessor.owed if predecessor is not None else None
        self.judged = False  # a person's judgment came earlier in the chain

    def row(self, meta: Mapping[str, Any], *, master_signed: bool = False) -> str | None:
        """A classification's signed ``meta``; ``master_signed`` for a judgment whose master
        signature verified (it lifts what is owed: the person decided)."""
        if meta.get("basis") != BASIS_EXPLICIT:  # as the verifiers read a basis: explicit or not
            if self.judged:
                return OVERRULED  # a person's judgment stands against the classifier
            return classifier_reason(meta, self.predecessor, self.owed)
        self.judged = True
        if master_signed:
            self.owed = None
            return None
        label = meta.get("label")
        if self.owed is not None and (not isinstance(label, str) or raises_trust(self.owed, label)):
            return LIFTED
        return None

    def end(self, rows: int) -> str | None:
        """After the chain: a corrected version with no classification is unverified."""
        if rows == 0 and self.owed is not None and raises_trust(self.owed, UNVERIFIED):
            return LIFTED
        return None


def correction_carries(head_meta: object, predecessor: Predecessor) -> bool:
    """Whether a new version may be linked to the version it corrects (migration 9's trigger on
    the supersession link): it owes nothing, or its newest classification (its signed ``head_meta``)
    carries what it owes."""
    if predecessor.owed is None:
        return True
    return isinstance(head_meta, Mapping) and carries(head_meta, predecessor)
