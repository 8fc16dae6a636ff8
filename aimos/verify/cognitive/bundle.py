"""The cognitive-evidence bundle: its canonical hash, envelope, master identity, memory list and
the producer's ``sql_records`` (a failure there is fatal: no records, no proof root), then every
event stream, every memory's proof record and label chain, and the parity of the two.

The entry points never raise on any input: a failed check becomes the verdict here, and an
unexpected exception the *indeterminate* ``verifier_internal_error``."""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Mapping
from os import PathLike
from typing import Any

from aimos import vocabulary
from aimos.crypto import commitments
from aimos.crypto.ed25519 import fingerprint_of_der
from aimos.errors import CanonicalJSONError, NotFoundError, UsageError
from aimos.verify.cognitive.events import IndexedEvent, memories_named, verify_event_stream
from aimos.verify.cognitive.identity import Master
from aimos.verify.cognitive.labels import predecessors, verify_label_chain
from aimos.verify.cognitive.memory import verify_memory
from aimos.verify.cognitive.outcomes import replay_failures
from aimos.verify.cognitive.reasons import (
    _CANONICAL_REASONS,
    FORMAT,
    MAX_BUNDLE_BYTES,
    TOP_LEVEL_FIELDS,
    R,
)
from aimos.verify.cognitive.results import CognitiveRecord, CognitiveVerdict, EventStreamResult
from aimos.verify.kit import (
    INVALID,
    VALID,
    BundleParseError,
    CheckFailed,
    canonical_sha256_hex,
    fail,
    hex_bytes,
    is_int,
    js_round,
    load_bundle,
    same,
    same_object,
    spki_der,
)


def _check_envelope(bundle: Mapping[str, Any], expected_master_fingerprint: str | None) -> tuple[str, Master]:
    if set(bundle) != TOP_LEVEL_FIELDS:
        extra, missing = sorted(set(bundle) - TOP_LEVEL_FIELDS), sorted(TOP_LEVEL_FIELDS - set(bundle))
        fail(R.BUNDLE_SCHEMA_INVALID, f"top-level fields: unknown {extra}, missing {missing}")
    fmt = bundle["format"]
    if not same_object(fmt, FORMAT) or any(type(fmt[k]) is not type(v) for k, v in FORMAT.items()):
        fail(R.BUNDLE_SCHEMA_INVALID, f"format must be exactly {dict(FORMAT)}")
    for name in ("event_streams", "memories", "sql_records"):
        if not isinstance(bundle[name], list):
            fail(R.BUNDLE_SCHEMA_INVALID, f"{name} is not a list")
    company, master = bundle["company_id"], bundle["master_identity"]
    if not isinstance(company, str) or not company.strip() or not isinstance(master, dict):
        fail(R.BUNDLE_IDENTITY_INVALID, "company_id or master_identity is missing")
    public_key, fingerprint = master.get("public_key_b64u"), master.get("fingerprint")
    if hex_bytes(fingerprint, 32) is None or not isinstance(public_key, str):
        fail(R.BUNDLE_IDENTITY_INVALID, "master fingerprint is not 64 lowercase hex")
    assert isinstance(fingerprint, str)
    der = spki_der(public_key)
    if der is None:
        fail(R.BUNDLE_IDENTITY_INVALID, "master public key is not an Ed25519 SPKI key")
    if fingerprint_of_der(der) != fingerprint:
        fail(R.MASTER_FINGERPRINT_MISMATCH, "master fingerprint is not H(public key DER)")
    if expected_master_fingerprint is not None and (
        not isinstance(expected_master_fingerprint, str)
        or expected_master_fingerprint.strip().lower() != fingerprint
    ):
        fail(R.MASTER_FINGERPRINT_MISMATCH, "master is not the expected one")
    return company, Master(public_key=public_key, fingerprint=fingerprint)


def _check_memories(memories: list[Any], company: str) -> None:
    previous: str | None = None
    for i, memory in enumerate(memories):
        where = f"memories[{i}]"
        memory_id = memory.get("memory_id") if isinstance(memory, dict) else None
        if (
            not isinstance(memory, dict)
            or not isinstance(memory_id, str)
            or not memory_id
            or memory.get("company_id") != company
            or (previous is not None and memory_id <= previous)
        ):
            fail(R.MEMORY_ORDER_INVALID, f"{where}: missing id, other company, or out of order")
        previous = memory_id
        if hex_bytes(memory.get("content_hash"), 32) is None:
            fail(R.MEMORY_CONTENT_INVALID, f"{where}.content_hash: not 64 lowercase hex")
        weight = hex_bytes(memory.get("retrieval_weight_float4"), 4)
        value = struct.unpack(">f", weight)[0] if weight is not None else math.nan
        milli = memory.get("retrieval_weight_milli")
        if not math.isfinite(value) or not is_int(milli) or js_round(value * 1000) != milli:
            fail(R.MEMORY_WEIGHT_INVALID, f"{where}: float4 weight and milli weight disagree")


def _sql_rows(rows: list[Any]) -> list[dict[str, Any]]:
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            fail(R.SQL_RECORD_INVALID, f"sql_records[{i}]: not an object")
        length, sigs = row.get("chain_length"), row.get("signatures_verified")
        if not is_int(length, 0) or not is_int(sigs, 0):
            fail(R.SQL_COUNT_INVALID, f"sql_records[{i}]: counts are not non-negative integers")
        out.append(
            {
                "memory_id": row.get("memory_id"),
                "certification_status": row.get("certification_status"),
                "ok": row.get("ok") is True,
                "chain_length": length,
                "sigs_verified": sigs,
                "reason": row.get("reason"),
            }
        )
    return out


def _parity(records: list[CognitiveRecord], sql_rows: list[dict[str, Any]]) -> bool:
    by_id = {str(r["memory_id"]): r for r in sql_rows}
    if not len(by_id) == len(sql_rows) == len(records):
        return False
    for record in records:
        row = by_id.get(record["memory_id"])
        if row is None or any(not same(row[k], v) for k, v in record.items()):
            return False
    return True


def _missing_memory(
    events: Mapping[str, IndexedEvent], memories: list[dict[str, Any]], memory_id: str | None
) -> str | None:
    """Why the bundle lacks a memory it must hold, or None. A bundle of the whole brain
    (``memory_id`` None) holds every memory its verified events name: a memory removed while its
    save, outcomes, labels or receipts stay is named here. A bundle of one memory (`aimos export
    --cognitive --memory`) holds that one."""
    present = {m["memory_id"] for m in memories}
    if memory_id is not None:
        if memory_id in present:
            return None
        return f"memory {memory_id}, the one this bundle was exported for, is not in it"
    missing: dict[str, str] = {}
    for event_id, indexed in events.items():
        if not indexed.verified:
            continue  # its stream failed: that failure is reported, its words are not evidence
        for named, field in memories_named(indexed.event):
            if named not in present and named not in missing:
                missing[named] = f"event {event_id} ({indexed.event.get('operation')}, its {field})"
    if not missing:
        return None
    first, where = next(iter(missing.items()))
    more = f"; {len(missing) - 1} more missing memories are named by its events" if len(missing) > 1 else ""
    return f"memory {first} is named by {where} but the bundle does not hold it{more}"


def _canonical_reason(exc: CanonicalJSONError) -> str:
    return exc.reason if exc.reason in _CANONICAL_REASONS else R.CANONICAL_INVALID


def _untold(_done: int, _total: int) -> None:
    """No one asked how far the memories have got."""


def _invalid(reason: str, detail: str, bundle_sha256: str | None = None) -> CognitiveVerdict:
    return CognitiveVerdict.invalid(reason, detail, bundle_sha256=bundle_sha256)


def verify_cognitive_bundle(
    bundle: Any,
    *,
    expected_master_fingerprint: str | None = None,
    memory_id: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> CognitiveVerdict:
    """Verify one parsed cognitive-evidence bundle. Never raises on any input.

    ``memory_id``: the bundle was exported for this one memory (the caller's word, like the
    master fingerprint: never the bundle's); None, it is the whole brain's and must hold every
    memory its events name. ``progress(done, total)`` is told after each memory's record."""
    try:
        return _verify(bundle, expected_master_fingerprint, memory_id, progress)
    except Exception as exc:  # a verifier bug, never a property of the input: say so, do not guess
        return CognitiveVerdict.indeterminate(R.VERIFIER_INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")


def _verify(
    bundle: Any,
    expected_master_fingerprint: str | None,
    memory_id: str | None,
    progress: Callable[[int, int], None] | None,
) -> CognitiveVerdict:
    try:
        bundle_sha256 = canonical_sha256_hex(bundle)
    except CanonicalJSONError as exc:
        return _invalid(_canonical_reason(exc), exc.message)
    if not isinstance(bundle, dict):
        return _invalid(R.BUNDLE_INVALID, "the bundle is not a JSON object", bundle_sha256)
    try:
        company, master = _check_envelope(bundle, expected_master_fingerprint)
        memories: list[Any] = bundle["memories"]
        _check_memories(memories, company)
        sql_rows = _sql_rows(bundle["sql_records"])
    except CheckFailed as failure:
        return CognitiveVerdict.failed(failure, bundle_sha256=bundle_sha256)

    events: dict[str, IndexedEvent] = {}
    streams: list[EventStreamResult] = []
    failures: list[tuple[str, str | None]] = []
    for index, stream in enumerate(bundle["event_streams"]):
        result, detail = verify_event_stream(stream, index, company, master, events)
        streams.append(result)
        if result.reason is not None:
            failures.append((result.reason, detail))
    missing = _missing_memory(events, memories, memory_id)
    if missing is not None:
        failures.append((R.MEMORY_MISSING, missing))

    # every signed classification event, by the memory it classifies: a label chain must hold a
    # row for each (a chain cut short leaves its signed events behind)
    classified: dict[str, set[str]] = {}
    for event_id, indexed in events.items():
        ev = indexed.event
        meta = ev.get("metadata") if isinstance(ev, Mapping) else None
        if ev.get("operation") == vocabulary.EPISTEMIC_CLASSIFIED_OPERATION and isinstance(meta, Mapping):
            classified.setdefault(str(meta.get("memory_id")), set()).add(event_id)

    replays = replay_failures(events, memories)
    tell = progress or _untold
    corrected = predecessors(events)  # each correction's predecessor at the moment of correction
    records: list[CognitiveRecord] = []
    for index, memory in enumerate(memories):
        record, detail = verify_memory(memory, f"memories[{index}]", master, events)
        predecessor = corrected.get(memory["memory_id"])
        owes = predecessor is not None and predecessor.owed is not None
        if record["ok"] and ("epistemic" in memory or memory["memory_id"] in classified or owes):
            label_reason = verify_label_chain(
                memory, events, classified.get(memory["memory_id"], set()), master.public_key, predecessor
            )
            if label_reason is not None:
                record = CognitiveRecord(**{**record, "ok": False, "reason": label_reason})
                detail = f"memories[{index}].epistemic: {label_reason}"
        if record["ok"] and memory["memory_id"] in replays:
            record = CognitiveRecord(**{**record, "ok": False, "reason": R.VALENCE_REPLAY_MISMATCH})
            detail = f"memories[{index}].outcomes: {replays[memory['memory_id']]}"
        records.append(record)
        if record["reason"] is not None and not record["ok"]:
            failures.append((record["reason"], detail))
        tell(index + 1, len(memories))

    parity = _parity(records, sql_rows)
    if not parity:
        failures.append((R.SQL_PARITY_MISMATCH, "sql_records differ from the records rebuilt here"))
    root = commitments.corpus_proof_root(records).hex()
    primary, detail = failures[0] if failures else (None, None)
    return CognitiveVerdict(
        verdict=INVALID if failures else VALID,
        reason=primary,
        records=tuple(records),
        corpus_proof_root=root,
        bundle_sha256=bundle_sha256,
        event_streams=tuple(streams),
        sql_parity=parity,
        detail=detail,
    )


# --- bytes and files ----------------------------------------------------------------------------
def verify_cognitive_bytes(
    data: bytes | str, *, expected_master_fingerprint: str | None = None, memory_id: str | None = None
) -> CognitiveVerdict:
    """Parse UTF-8 JSON text strictly (no duplicate keys, no NaN/Infinity) and verify it."""
    try:
        parsed = load_bundle(data, max_bytes=MAX_BUNDLE_BYTES)
    except BundleParseError as exc:
        return _invalid(exc.reason, exc.detail)
    return verify_cognitive_bundle(
        parsed, expected_master_fingerprint=expected_master_fingerprint, memory_id=memory_id
    )


def verify_cognitive_file(
    path: str | PathLike[str], *, expected_master_fingerprint: str | None = None, memory_id: str | None = None
) -> CognitiveVerdict:
    """Read and verify an evidence file. A missing file raises NotFoundError and an unreadable one
    UsageError; whatever the file holds yields a verdict, never an exception."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BUNDLE_BYTES + 1)
    except FileNotFoundError as exc:
        raise NotFoundError(f"no evidence file at {path}", "Check the path of the exported bundle.") from exc
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return verify_cognitive_bytes(
        data, expected_master_fingerprint=expected_master_fingerprint, memory_id=memory_id
    )
