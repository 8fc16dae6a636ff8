"""One memory's proof record: its projection graph (one genesis, no fork, no cycle, every row
reachable), each transition in chain order (display columns, integer continuity, the REWEIGHT
provenance, the projection hash h_i and the signed transition commitment t_i), then the genesis
anchor (1.000, or a signed retained baseline) and terminal fidelity."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from aimos.crypto import commitments
from aimos.crypto.ed25519 import verify
from aimos.crypto.encoding import float4_be
from aimos.plural import plural
from aimos.verify.cognitive.events import IndexedEvent
from aimos.verify.cognitive.identity import Identity, Master, decode_identity
from aimos.verify.cognitive.provenance import provenance_bound, verify_baseline, verify_provenance
from aimos.verify.cognitive.reasons import (
    _PROVENANCE,
    CERTIFIED_CHAIN,
    DEFAULT_EMPTY_CHAIN,
    DEFAULT_WEIGHT_MILLI,
    SIGNED_INITIAL_WEIGHT,
    UNATTESTED_INITIAL_WEIGHT,
    R,
)
from aimos.verify.cognitive.results import CognitiveRecord, proof_record
from aimos.verify.kit import CheckFailed, fail, hex_bytes, is_int, is_uuid, same


def float4_hex(milli: int) -> str:
    """The display column of a milli weight: float4(milli / 1000) as lowercase hex."""
    return float4_be(milli / 1000).hex()


@dataclass(frozen=True)
class _Projection:
    row: Mapping[str, Any]
    provenance: Mapping[str, Any]
    identity: Identity
    projection_hash: bytes
    previous_projection_hash: bytes | None
    sigma: bytes
    transition_hash: bytes
    transition_signature: bytes


def _decode_projection(raw: object, where: str) -> _Projection:
    if not isinstance(raw, dict) or not isinstance(raw.get("provenance"), dict):
        fail(R.PORTABLE_EVIDENCE_MALFORMED, f"{where}: projection or provenance is not an object")
    fields = {
        "projection_hash": (32, False),
        "previous_projection_hash": (32, True),
        "provenance_mutation_hash": (32, False),
        "transition_hash": (32, False),
        "transition_signature": (64, False),
    }
    decoded: dict[str, bytes | None] = {}
    for name, (size, nullable) in fields.items():
        value = raw.get(name)
        decoded[name] = None if value is None and nullable else hex_bytes(value, size)
        if decoded[name] is None and not (value is None and nullable):
            fail(R.PORTABLE_EVIDENCE_MALFORMED, f"{where}.{name}: not {size} bytes of lowercase hex")
    try:
        identity = decode_identity(raw["provenance"].get("identity"), f"{where}.provenance.identity")
    except CheckFailed as exc:
        raise CheckFailed(R.PORTABLE_EVIDENCE_MALFORMED, exc.detail) from exc

    def need(name: str) -> bytes:
        value = decoded[name]
        assert value is not None
        return value

    return _Projection(
        row=raw,
        provenance=raw["provenance"],
        identity=identity,
        projection_hash=need("projection_hash"),
        previous_projection_hash=decoded["previous_projection_hash"],
        sigma=need("provenance_mutation_hash"),
        transition_hash=need("transition_hash"),
        transition_signature=need("transition_signature"),
    )


def _order(projections: list[_Projection]) -> list[_Projection]:
    """The single chain from the single genesis; raises on a fork, cycle or unreachable row."""
    by_hash: dict[bytes, _Projection] = {}
    child: dict[bytes, _Projection] = {}
    genesis: list[_Projection] = []
    for p in projections:
        prev = p.previous_projection_hash
        if p.projection_hash in by_hash or (prev is not None and prev in child):
            fail(R.PROJECTION_FORK, "two projections share a hash or a predecessor")
        by_hash[p.projection_hash] = p
        if prev is None:
            genesis.append(p)
        else:
            child[prev] = p
    if len(genesis) != 1:
        fail(R.PROJECTION_GENESIS_INVALID, f"{len(genesis)} projections have no predecessor")
    ordered: list[_Projection] = []
    visited: set[bytes] = set()
    current: _Projection | None = genesis[0]
    while current is not None:
        if current.projection_hash in visited:
            fail(R.PROJECTION_CYCLE, "the projection chain loops")
        visited.add(current.projection_hash)
        ordered.append(current)
        current = child.get(current.projection_hash)
    if len(ordered) != len(projections):
        fail(
            R.PROJECTION_DISCONNECTED,
            f"{plural(len(projections) - len(ordered), 'projection')} unreachable from the genesis",
        )
    return ordered


Verified = tuple[CognitiveRecord, str | None]


def _record(
    memory_id: str,
    where: str,
    status: str,
    ok: bool,
    length: int,
    sigs: int,
    reason: str | None,
    detail: str = "",
) -> Verified:
    """The memory's proof record, and the failure as the bundle reports it (None when ok)."""
    rec = proof_record(memory_id, status, ok, length, sigs, reason)
    return rec, None if ok else f"{where}: {detail or reason}"


def _decoded(
    memory_id: str, raw_projections: Any, raw_baseline: Any
) -> tuple[list[_Projection], Identity | None]:
    """The projections and the baseline's identity, decoded; raises CheckFailed on malformed evidence."""
    if not isinstance(raw_projections, list):
        fail(R.PORTABLE_EVIDENCE_MALFORMED, "projections is not a list")
    if raw_baseline is not None and not isinstance(raw_baseline, dict):
        fail(R.PORTABLE_EVIDENCE_MALFORMED, "baseline is not an object")
    if raw_projections and not is_uuid(memory_id):
        fail(R.PORTABLE_EVIDENCE_MALFORMED, "memory_id is not a canonical UUID")
    projections = [_decode_projection(p, f"projections[{i}]") for i, p in enumerate(raw_projections)]
    baseline_identity = None
    if raw_baseline is not None:
        try:
            baseline_identity = decode_identity(raw_baseline.get("identity"), "baseline.identity")
        except CheckFailed as exc:
            raise CheckFailed(R.PORTABLE_EVIDENCE_MALFORMED, exc.detail) from exc
    return projections, baseline_identity


def _without_chain(
    raw_baseline: Any, baseline_reason: str | None, weight_float4: Any
) -> tuple[str, bool, str | None]:
    """A memory with no projections: its status, whether it holds, and the reason when not."""
    if raw_baseline is not None:
        if baseline_reason is not None:
            return SIGNED_INITIAL_WEIGHT, False, baseline_reason
        if weight_float4 != raw_baseline.get("observed_weight_float4"):
            return SIGNED_INITIAL_WEIGHT, False, R.BASELINE_TERMINAL_WEIGHT_MISMATCH
        return SIGNED_INITIAL_WEIGHT, True, None
    if weight_float4 == float4_hex(DEFAULT_WEIGHT_MILLI):
        return DEFAULT_EMPTY_CHAIN, True, None
    return UNATTESTED_INITIAL_WEIGHT, False, R.UNATTESTED_INITIAL_WEIGHT


class _StepFailed(Exception):
    """A chain step does not hold: ``reason`` from the closed vocabulary, ``detail`` what failed."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class _Chain:
    """What every step of one memory's chain is checked against."""

    memory: Mapping[str, Any]
    memory_id: str
    company: Any
    master: Master


def _verify_step(
    chain: _Chain, i: int, p: _Projection, previous_hash: bytes | None, previous_milli: int | None
) -> tuple[bytes, int]:
    """One transition in chain order: display columns, integer continuity, the REWEIGHT
    provenance, h_i and the signed t_i. Its h_i and new weight; raises _StepFailed."""
    memory_id = chain.memory_id
    step = f"chain step {i} (projection {p.row.get('projection_id')})"
    old, new = p.row.get("old_weight_milli"), p.row.get("new_weight_milli")
    if (
        not is_int(old, commitments.WEIGHT_MIN_MILLI, commitments.WEIGHT_MAX_MILLI)
        or not is_int(new, commitments.WEIGHT_MIN_MILLI, commitments.WEIGHT_MAX_MILLI)
        or old == new
        or p.row.get("old_weight_float4") != float4_hex(old)
        or p.row.get("new_weight_float4") != float4_hex(new)
    ):
        raise _StepFailed(
            R.PROJECTION_DISPLAY_INVALID,
            f"{step}: weights out of 100..3000, a no-op, or display columns not float4(q/1000)",
        )
    if previous_milli is not None and old != previous_milli:
        raise _StepFailed(
            R.CONTINUITY_BREAK, f"{step}: old weight {old} != previous new weight {previous_milli}"
        )
    base = verify_provenance(p.provenance, p.identity, chain.master)
    if base is None and not provenance_bound(p.row, p.provenance, chain.memory, memory_id):
        base = R.EVENT_TYPE_INVALID
    if base is not None:
        raise _StepFailed(_PROVENANCE[base], f"{step}: REWEIGHT provenance {base}")
    h = commitments.projection_hash(memory_id, old, new, p.sigma, previous_hash)
    if h != p.projection_hash:
        raise _StepFailed(R.PROJECTION_HASH_INVALID, f"{step}: h_i does not recompute")
    t = commitments.transition_commitment(chain.company, memory_id, old, new, p.sigma)
    if t != p.transition_hash or not verify(p.identity.pubkey, t, p.transition_signature):
        raise _StepFailed(
            R.TRANSITION_SIGNATURE_INVALID, f"{step}: t_i does not recompute or its signature does not verify"
        )
    return h, new


def _chain_ends(
    memory: Mapping[str, Any],
    ordered: list[_Projection],
    raw_baseline: Any,
    baseline_reason: str | None,
    last_milli: int,
) -> tuple[str, str] | None:
    """The verified chain's genesis anchor (1.000, or a signed retained baseline) and terminal
    fidelity: None when they hold, else the reason and what failed."""
    genesis_old = ordered[0].row["old_weight_milli"]
    if raw_baseline is not None and (
        baseline_reason is not None or not same(raw_baseline.get("observed_weight_milli"), genesis_old)
    ):
        return (
            R.BASELINE_CHAIN_ANCHOR_INVALID,
            f"the chain starts at {genesis_old} but the signed baseline does not attest it"
            + (f" ({baseline_reason})" if baseline_reason else ""),
        )
    if raw_baseline is None and genesis_old != DEFAULT_WEIGHT_MILLI:
        return (
            R.DEFAULT_CHAIN_ANCHOR_INVALID,
            f"the chain starts at {genesis_old}, not 1000, without a signed baseline",
        )
    weight_float4 = memory["retrieval_weight_float4"]
    if memory["retrieval_weight_milli"] != last_milli or weight_float4 != float4_hex(last_milli):
        return (
            R.TERMINAL_WEIGHT_MISMATCH,
            f"live weight {memory['retrieval_weight_milli']} but the chain ends at {last_milli}",
        )
    return None


def verify_memory(
    memory: Mapping[str, Any], where: str, master: Master, events: Mapping[str, IndexedEvent]
) -> Verified:
    """One memory's proof record (the checks in the reference's order, the module's docstring)."""
    memory_id: str = memory["memory_id"]
    raw_projections = memory.get("projections")
    raw_baseline = memory.get("baseline")
    record = partial(_record, memory_id, where)

    guess = (
        CERTIFIED_CHAIN
        if isinstance(raw_projections, list) and raw_projections
        else SIGNED_INITIAL_WEIGHT
        if raw_baseline is not None
        else UNATTESTED_INITIAL_WEIGHT
    )
    try:
        projections, baseline_identity = _decoded(memory_id, raw_projections, raw_baseline)
    except CheckFailed as exc:
        return record(guess, False, 0, 0, exc.reason, exc.detail)

    baseline_reason: str | None = None
    if raw_baseline is not None:
        assert baseline_identity is not None
        baseline_reason = verify_baseline(raw_baseline, memory, baseline_identity, master, events)
    weight_float4 = memory["retrieval_weight_float4"]

    if not projections:
        status, ok, reason = _without_chain(raw_baseline, baseline_reason, weight_float4)
        return record(status, ok, 0, 0, reason)

    try:
        ordered = _order(projections)
    except CheckFailed as exc:
        return record(CERTIFIED_CHAIN, False, 0, 0, exc.reason, exc.detail)

    chain = _Chain(memory, memory_id, memory["company_id"], master)
    previous_hash: bytes | None = None
    previous_milli: int | None = None
    sigs = 0
    for i, p in enumerate(ordered):
        try:
            previous_hash, previous_milli = _verify_step(chain, i, p, previous_hash, previous_milli)
        except _StepFailed as failed:
            return record(CERTIFIED_CHAIN, False, i, sigs, failed.reason, failed.detail)
        sigs += 1

    assert previous_milli is not None
    failure = _chain_ends(memory, ordered, raw_baseline, baseline_reason, previous_milli)
    if failure is not None:
        return record(CERTIFIED_CHAIN, False, len(ordered), sigs, *failure)
    return record(CERTIFIED_CHAIN, True, len(ordered), sigs, None)
