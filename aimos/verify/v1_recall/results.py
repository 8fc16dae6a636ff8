"""What the V1 recall verifier reports: the kit's :class:`~aimos.verify.kit.Verdict` with the
hashes it recomputed (one bundle), or with the corpus root and each member's verdict (a corpus)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from aimos.verify.kit import ReportVerdict, VerdictWord
from aimos.vocabulary import V1_RECALL_CORPUS_SCHEMA as CORPUS_SCHEMA
from aimos.vocabulary import V1_RECALL_EVIDENCE_SCHEMA as RECALL_SCHEMA


@dataclass(frozen=True)
class RecallEvidenceVerdict(ReportVerdict):
    """The verdict on one recall-evidence bundle. Hashes are set when the checks reached them."""

    bundle_sha256: str | None = None
    command_hash: str | None = None
    outer_request_hash: str | None = None
    merkle_root: str | None = None
    memories: int | None = None
    recall_leaves: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.report_head(RECALL_SCHEMA),
            "bundle_sha256": self.bundle_sha256,
            "command_hash": self.command_hash,
            "outer_request_hash": self.outer_request_hash,
            "merkle_root": self.merkle_root,
            "counts": {"memories": self.memories, "recall_leaves": self.recall_leaves},
            "signatures_verified": self.signatures_verified,
        }


@dataclass(frozen=True)
class CorpusMemberVerdict:
    """One member's line in a corpus verdict."""

    ordinal: int
    bundle_id: str
    verdict: VerdictWord
    primary_reason: str | None


@dataclass(frozen=True)
class RecallCorpusVerdict(ReportVerdict):
    """The verdict on a recall corpus; ``members`` holds every member verified before a failure."""

    intended_n: int | None = None
    observed_n: int | None = None
    corpus_root: str | None = None
    members: tuple[CorpusMemberVerdict, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.report_head(CORPUS_SCHEMA),
            "intended_n": self.intended_n,
            "observed_n": self.observed_n,
            "corpus_root": self.corpus_root,
            "members": [asdict(m) for m in self.members],  # its fields, in their order
        }
