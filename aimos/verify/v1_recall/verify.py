"""The entry points of the V1 recall verifier: one bundle, a corpus of bundles, a parsed document
of either schema, or its bytes. They never raise: a failed check becomes the verdict here (absent
mandatory evidence *indeterminate*), and an unexpected exception the *indeterminate*
``verifier_internal_error``."""

from __future__ import annotations

from typing import Any

from aimos.crypto import commitments
from aimos.errors import CanonicalJSONError
from aimos.verify.kit import (
    INDETERMINATE,
    INVALID,
    VALID,
    BundleParseError,
    CheckFailed,
    VerdictWord,
    canonical_sha256_hex,
    fields_are,
    is_dict,
    is_hex64,
    is_int,
    is_text,
    load_bundle,
    same,
    same_object,
)
from aimos.verify.v1_recall.results import CorpusMemberVerdict, RecallCorpusVerdict, RecallEvidenceVerdict
from aimos.verify.v1_recall.run import RecallRun
from aimos.verify.v1_recall.shape import CORPUS_FIELDS, CORPUS_FORMAT, CORPUS_MEMBER_FIELDS, R
from aimos.vocabulary import V1_RECALL_CORPUS_SCHEMA as CORPUS_SCHEMA


def _canonical_failure(document: Any) -> tuple[str | None, CheckFailed | None]:
    """The document's canonical hash, or the canonical-JSON failure."""
    try:
        return canonical_sha256_hex(document), None
    except CanonicalJSONError as exc:
        return None, CheckFailed(exc.reason or R.CANONICAL_INVALID, exc.message)


def _check_recall(
    bundle: Any, bundle_sha256: str, expected_master_fingerprint: str | None
) -> RecallEvidenceVerdict:
    if not is_dict(bundle):
        return RecallEvidenceVerdict.invalid(
            R.BUNDLE_SCHEMA_INVALID, "the bundle is not a JSON object", bundle_sha256=bundle_sha256
        )
    run = RecallRun(bundle)
    try:
        run.envelope()
        run.trust_anchors()
        command = run.request()
        run.receipt(command)
        run.event()
        run.pinned(expected_master_fingerprint)
    except CheckFailed as failure:
        if failure.reason != R.MANDATORY_EVIDENCE_MISSING:
            return _recall_verdict(run, INVALID, failure, bundle_sha256)
        try:  # evidence is missing: the caller's master is still checked, and a mismatch is invalid
            run.pinned(expected_master_fingerprint)
        except CheckFailed as pinned:
            return _recall_verdict(run, INVALID, pinned, bundle_sha256)
        return _recall_verdict(run, INDETERMINATE, failure, bundle_sha256)
    return _recall_verdict(run, VALID, None, bundle_sha256)


def _recall_verdict(
    run: RecallRun, verdict: VerdictWord, failure: CheckFailed | None, bundle_sha256: str
) -> RecallEvidenceVerdict:
    memories = run.bundle.get("memories")
    return RecallEvidenceVerdict(
        verdict,
        None if failure is None else failure.reason,
        None if failure is None else failure.detail,
        signatures_verified=run.signatures,
        bundle_sha256=bundle_sha256,
        command_hash=run.command_hash,
        outer_request_hash=run.outer_hash,
        merkle_root=run.root,
        memories=len(memories) if isinstance(memories, list) else None,
        recall_leaves=run.leaves,
    )


def verify_recall_evidence(
    bundle: Any, *, expected_master_fingerprint: str | None = None
) -> RecallEvidenceVerdict:
    """Verify one parsed ``hom.aimos.mutmem-recall-evidence/v1`` bundle. Never raises.

    Without ``expected_master_fingerprint`` the bundle's own anchors are trusted, as the reference
    does; with it, they must name that master (module doc)."""
    try:
        bundle_sha256, failure = _canonical_failure(bundle)
        if failure is not None or bundle_sha256 is None:
            assert failure is not None
            return RecallEvidenceVerdict.failed(failure)
        return _check_recall(bundle, bundle_sha256, expected_master_fingerprint)
    except Exception as exc:  # a verifier defect, never a property of the input: say so, do not guess
        return RecallEvidenceVerdict.indeterminate(R.VERIFIER_INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")


def verify_recall_corpus(
    corpus: Any, *, expected_master_fingerprint: str | None = None
) -> RecallCorpusVerdict:
    """Verify one parsed ``hom.aimos.mutmem-recall-corpus/v1`` corpus and each member. Never raises."""
    try:
        _, failure = _canonical_failure(corpus)
        if failure is not None:
            return RecallCorpusVerdict.failed(failure)
        return _check_corpus(corpus, expected_master_fingerprint)
    except Exception as exc:  # a verifier defect (see verify_recall_evidence)
        return RecallCorpusVerdict.indeterminate(R.VERIFIER_INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")


def _check_corpus(corpus: Any, expected_master_fingerprint: str | None) -> RecallCorpusVerdict:
    if not fields_are(corpus, CORPUS_FIELDS):
        return RecallCorpusVerdict.invalid(
            R.CORPUS_SCHEMA_INVALID,
            "a corpus is exactly {format, intended_n, members, corpus_root}",
        )
    intended_n, members = corpus["intended_n"], corpus["members"]
    observed_n = len(members) if isinstance(members, list) else None
    if (
        not same_object(corpus["format"], CORPUS_FORMAT)
        or not is_int(intended_n)
        or intended_n < 1
        or not isinstance(members, list)
        or len(members) != intended_n
    ):
        return RecallCorpusVerdict.invalid(
            R.CORPUS_INTENDED_N_INVALID,
            f"format must be exactly {dict(CORPUS_FORMAT)} and members must number intended_n >= 1",
            intended_n=intended_n if is_int(intended_n) else None,
            observed_n=observed_n,
        )
    verdicts: list[CorpusMemberVerdict] = []
    summaries: list[dict[str, Any]] = []
    seen: set[str] = set()
    for ordinal, member in enumerate(members):
        problem = _member_problem(ordinal, member, seen)
        if problem is not None:
            return RecallCorpusVerdict.invalid(
                R.CORPUS_MEMBER_INVALID,
                f"members[{ordinal}]: {problem}",
                intended_n=intended_n,
                observed_n=observed_n,
                members=tuple(verdicts),
            )
        bundle_id: str = member["bundle_id"]
        seen.add(bundle_id)
        result = _check_recall(member["bundle"], member["bundle_sha256"], expected_master_fingerprint)
        verdicts.append(CorpusMemberVerdict(ordinal, bundle_id, result.verdict, result.primary_reason))
        summaries.append(
            {"ordinal": ordinal, "bundle_id": bundle_id, "bundle_sha256": member["bundle_sha256"]}
        )
    root = commitments.recall_corpus_root(intended_n, summaries).hex()
    if not same(corpus["corpus_root"], root):
        return RecallCorpusVerdict.invalid(
            R.CORPUS_ROOT_MISMATCH,
            "corpus_root is not the root of the members",
            intended_n=intended_n,
            observed_n=observed_n,
            corpus_root=root,
            members=tuple(verdicts),
        )
    primary = next((v for v in verdicts if v.verdict == INVALID), None) or next(
        (v for v in verdicts if v.verdict == INDETERMINATE), None
    )
    return RecallCorpusVerdict(
        VALID if primary is None else primary.verdict,
        None if primary is None else primary.primary_reason,
        None if primary is None else f"member {primary.ordinal} ({primary.bundle_id}) is {primary.verdict}",
        intended_n=intended_n,
        observed_n=observed_n,
        corpus_root=root,
        members=tuple(verdicts),
    )


def _member_problem(ordinal: int, member: object, seen: set[str]) -> str | None:
    if not fields_are(member, CORPUS_MEMBER_FIELDS):
        return "a member is exactly {ordinal, bundle_id, bundle_sha256, bundle}"
    bundle, bundle_id = member["bundle"], member["bundle_id"]
    if not same(member["ordinal"], ordinal):
        return f"ordinal is not {ordinal}"
    if not is_dict(bundle) or not is_text(bundle_id) or not same(bundle_id, bundle.get("bundle_id")):
        return "bundle_id is not the member bundle's bundle_id"
    if bundle_id in seen:
        return f"bundle_id {bundle_id!r} repeats"
    if not is_hex64(member["bundle_sha256"]) or member["bundle_sha256"] != canonical_sha256_hex(bundle):
        return "bundle_sha256 is not H(canonicalJSON(bundle))"
    return None


def document_schema(document: Any) -> str | None:
    """``format.schema`` of a parsed document, when it has one."""
    fmt = document.get("format") if is_dict(document) else None
    schema = fmt.get("schema") if is_dict(fmt) else None
    return schema if isinstance(schema, str) else None


def verify_v1_recall_document(
    document: Any, *, expected_master_fingerprint: str | None = None, corpus: bool | None = None
) -> RecallEvidenceVerdict | RecallCorpusVerdict:
    """A corpus when ``corpus`` says so or, when it is None, when ``format.schema`` says so; else
    recall evidence."""
    if corpus if corpus is not None else document_schema(document) == CORPUS_SCHEMA:
        return verify_recall_corpus(document, expected_master_fingerprint=expected_master_fingerprint)
    return verify_recall_evidence(document, expected_master_fingerprint=expected_master_fingerprint)


def verify_v1_recall_bytes(
    data: bytes | str, *, expected_master_fingerprint: str | None = None
) -> RecallEvidenceVerdict | RecallCorpusVerdict:
    """Parse strictly (no duplicate keys, no NaN, depth-safe) and verify evidence or a corpus."""
    try:
        document = load_bundle(data)
    except BundleParseError as exc:
        return RecallEvidenceVerdict.invalid(exc.reason, exc.detail)
    return verify_v1_recall_document(document, expected_master_fingerprint=expected_master_fingerprint)
