"""Portable evidence out of the brain, for verifiers that do not trust it: the cognitive bundle,
a recall's V2 envelope and an outcome's V2 mutation bundle (with its witness and trust context);
and the memories' text itself (`aimos export --text`), which `aimos import` reads back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aimos.actions.session import Brain, now
from aimos.learning.outcome_export import build_outcome_export
from aimos.memory import text_formats
from aimos.memory.versions import created_time, current_memories, guide_memories, resolve_memory_id
from aimos.recall.envelope import build_recall_envelope
from aimos.verify.brain.evidence import export_cognitive


def cognitive_bundle(brain: Brain, memory_ref: str | None = None) -> dict[str, Any]:
    """hom.aimos.mutmem-cognitive-evidence/v1 for the whole brain, or one memory."""
    mid = resolve_memory_id(brain.conn, memory_ref) if memory_ref else None
    return export_cognitive(brain.conn, memory_id=mid)


def recall_envelope(brain: Brain, receipt_ref: str) -> dict[str, Any]:
    """One recall as a MutMem V2 recall-disclosure envelope."""
    return build_recall_envelope(brain.conn, receipt_ref)


def outcome_bundle(brain: Brain, outcome_ref: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """One outcome as a MutMem V2 mutation bundle, its witness and its trust context."""
    return build_outcome_export(brain.conn, outcome_ref)


TEXT_EXPORTS = ("jsonl", "markdown")


@dataclass(frozen=True)
class TextExport:
    document: str
    memories: int  # how many it holds
    redacted: int  # redacted memories left out (their text is gone)
    guides: int  # aimos's own guide memories left out (every brain has its own)


def text_export(brain: Brain, kind: str, *, guides: bool = False) -> TextExport:
    """The current versions' texts, keys, types, labels, weights and creation times (when each was
    first made: one imported from another brain keeps that brain's), oldest first, as ``kind``
    (jsonl or markdown); aimos's own guide memories only with ``guides``."""
    from aimos.crypto.encoding import iso_ms

    found = current_memories(brain.conn)
    # a guide is what memory.versions.GUIDE_SQL says: a memory of scope system the housekeeper saved
    left_out = set() if guides else {m["memory_id"] for m in guide_memories(brain.conn)}
    kept = [m for m in found if m["memory_id"] not in left_out]
    records = [text_formats.export_record(m, iso_ms(created_time(m))) for m in kept if not m["redacted"]]
    at = iso_ms(int(now()))
    write = text_formats.to_markdown if kind == "markdown" else text_formats.to_jsonl
    return TextExport(write(records, at), len(records), len(kept) - len(records), len(found) - len(kept))
