"""The request bodies an agent signs, built from what a person or an agent asks for: a save, a
recall, an outcome, a label. The writers that receive them (memory.save, recall.pipeline,
learning.outcomes, epistemic.chain) validate every field; these only assemble them."""

from __future__ import annotations

from typing import Any

from aimos.vocabulary import DEFAULT_SAVE_CLEARANCE, DEFAULT_SAVE_DATA_CLASS, ORIGINATED_AT
from aimos.vocabulary import RECALL_DEFAULT_LIMIT as DEFAULT_LIMIT


def build_save_body(
    *,
    company_id: str,
    value: str,
    key: str | None = None,
    scope: str = "personal",
    memory_type: str = "note",
    clearance_level: int = DEFAULT_SAVE_CLEARANCE,
    data_class: str = DEFAULT_SAVE_DATA_CLASS,
    source: str = "cli",
    supersedes: str | None = None,
    originated_at: int | None = None,
) -> dict[str, Any]:
    """The request body an agent signs for POST /aimos/save; ``originated_at`` (when the memory
    was first made, before it came here: an import of another brain's export) is sent only when
    given, so every other body is the body it always was."""
    body: dict[str, Any] = {
        "company_id": company_id,
        "key": key,
        "value": value,
        "scope": scope,
        "memory_type": memory_type,
        "clearance_level": clearance_level,
        "data_class": data_class,
        "source": source,
    }
    if supersedes is not None:
        body["supersedes"] = supersedes
    if originated_at is not None:
        body[ORIGINATED_AT] = originated_at
    return body


def build_recall_body(
    *,
    query: str,
    limit: int = DEFAULT_LIMIT,
    history: bool = False,
    company_id: str | None = None,
    clearance_level: int | None = None,
    data_class: str | None = None,
    guides: bool = False,
) -> dict[str, Any]:
    """``guides``: search aimos's own guide memories whatever the question (sent only when true,
    so every other request is the body it always was)."""
    body: dict[str, Any] = {"query": query, "limit": limit, "history": history}
    if guides:
        body["guides"] = True
    if company_id is not None:
        body["company_id"] = company_id
    if clearance_level is not None:
        body["clearance_level"] = clearance_level
    if data_class is not None:
        body["data_class"] = data_class
    return body


def build_outcome_body(
    *, memory_id: str, receipt_id: str, outcome: str, target_scope: str = "principal_state"
) -> dict[str, Any]:
    return {
        "memory_id": memory_id,
        "receipt_id": receipt_id,
        "outcome": outcome,
        "target_scope": target_scope,
    }


def build_label_body(*, company_id: str, memory_id: str, judgment: str, reason: str) -> dict[str, Any]:
    """The body an agent signs to record a person's judgment (POST /aimos/label)."""
    return {"company_id": company_id, "memory_id": memory_id, "judgment": judgment, "reason": reason}
