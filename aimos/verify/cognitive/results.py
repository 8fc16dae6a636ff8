"""What the cognitive-evidence verifier reports: one proof record per memory, one result per event
stream, and the verdict (the kit's :class:`~aimos.verify.kit.Verdict` with the corpus fields)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, TypedDict, cast

from aimos.verify.kit import ReportVerdict
from aimos.vocabulary import COGNITIVE_EVIDENCE_SCHEMA as SCHEMA


class CognitiveRecord(TypedDict):
    """One memory's proof record (a plain dict: JSON-ready, and exactly the six fields the corpus
    proof root is computed over)."""

    memory_id: str
    certification_status: str
    ok: bool
    chain_length: int
    sigs_verified: int
    reason: str | None


PROOF_FIELDS = tuple(CognitiveRecord.__annotations__)


def proof_record(
    memory_id: str, status: str, ok: bool, chain_length: int, sigs_verified: int, reason: str | None
) -> CognitiveRecord:
    """The six fields, in the order the corpus proof lists them (both verifiers build it here)."""
    values = (memory_id, status, ok, chain_length, sigs_verified, reason)
    return cast(CognitiveRecord, dict(zip(PROOF_FIELDS, values, strict=True)))


@dataclass(frozen=True)
class EventStreamResult:
    signer_agent_id: str
    signer_valid_from: int | None
    event_count: int
    valid: bool
    reason: str | None


@dataclass(frozen=True)
class CognitiveVerdict(ReportVerdict):
    """The verdict on one bundle: ``reason`` (also ``primary_reason``) is the first failure; the
    records and the corpus proof root exist once the envelope, identity and memory list passed."""

    records: tuple[CognitiveRecord, ...] = ()
    corpus_proof_root: str | None = None
    bundle_sha256: str | None = None
    event_streams: tuple[EventStreamResult, ...] = ()
    sql_parity: bool | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.report_head(SCHEMA),
            "bundle_sha256": self.bundle_sha256,
            "corpus_proof_root": self.corpus_proof_root,
            "sql_parity": self.sql_parity,
            "records": [dict(r) for r in self.records],
            "event_streams": [asdict(s) for s in self.event_streams],  # its fields, in their order
        }
