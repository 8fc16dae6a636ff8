"""The portable cognitive-evidence verifier over bundles made here (`support.cognitive_producer`):
signed baselines, revocations, signing forms 2-4, the housekeeper's self-signed certificate,
cross-memory replay, bounds and no-ops, SQL parity."""

from __future__ import annotations

import copy
import itertools
import json
import random
from typing import Any

import pytest
from support.cognitive_producer import (
    COMPANY,
    MEM_A,
    MEM_B,
    T0,
    _assert_closed,
    _check,
    _f4,
    _key,
    _mutate,
    _Producer,
)

from aimos.crypto.encoding import b64u_encode, float4_be
from aimos.verify.cognitive import (
    R,
    verify_cognitive_bundle,
)

CERTIFIED = "certified_chain"


def test_produced_certified_chain_and_default() -> None:
    p = _Producer()
    p.memory(MEM_A, 900, p.chain(MEM_A, [1000, 1300, 900]), expect=(CERTIFIED, True, 2, 2, None))
    p.memory(MEM_B, 1000, [], expect=("default_empty_chain", True, 0, 0, None))
    assert _check(p.bundle(), None).ok


def test_produced_bounds_and_noop() -> None:
    for weights in ([1000, 99], [1000, 3001], [1000, 1000], [1000, 1300, 1300]):
        p = _Producer()
        rows = p.chain(MEM_A, weights)
        failing = next(i for i, (o, n) in enumerate(itertools.pairwise(weights)) if n in (99, 3001, o))
        p.memory(
            MEM_A,
            weights[-1],
            rows,
            expect=(CERTIFIED, False, failing, failing, "projection_display_invalid"),
        )
        _check(p.bundle(), "projection_display_invalid")


def test_produced_display_column_not_float4() -> None:
    p = _Producer()
    rows = p.chain(MEM_A, [1000, 1300])
    rows[0]["new_weight_float4"] = float4_be(1.3000001).hex()
    p.memory(MEM_A, 1300, rows, expect=(CERTIFIED, False, 0, 0, "projection_display_invalid"))
    _check(p.bundle(), "projection_display_invalid")


def test_produced_unattested_and_default_anchor() -> None:
    p = _Producer()
    p.memory(MEM_A, 1200, [], expect=("unattested_initial_weight", False, 0, 0, "unattested_initial_weight"))
    _check(p.bundle(), "unattested_initial_weight")
    p = _Producer()
    p.memory(
        MEM_A,
        1500,
        p.chain(MEM_A, [1200, 1500]),
        expect=(CERTIFIED, False, 1, 1, "default_chain_anchor_invalid"),
    )
    _check(p.bundle(), "default_chain_anchor_invalid")


def test_produced_signed_baseline() -> None:
    p = _Producer()
    baseline = p.baseline(MEM_A, "07" * 32, 1200)
    p.memory(MEM_A, 1200, [], baseline, expect=("signed_initial_weight", True, 0, 0, None))
    baseline_b = p.baseline(MEM_B, "07" * 32, 1300)
    p.memory(MEM_B, 1500, p.chain(MEM_B, [1300, 1500]), baseline_b, expect=(CERTIFIED, True, 1, 1, None))
    bundle = p.bundle()
    assert _check(bundle, None).ok

    def variant(edit: Any, reason: str, status: str = "signed_initial_weight", n: int = 0) -> None:
        b = copy.deepcopy(bundle)
        edit(b)
        b["sql_records"][0].update(
            ok=False, reason=reason, certification_status=status, chain_length=n, signatures_verified=n
        )
        _check(b, reason)

    mem_a = 0  # memories are sorted: MEM_A first
    variant(
        lambda b: b["memories"][mem_a]["baseline"].__setitem__("signature", "00" * 64),
        "baseline_signature_invalid",
    )
    variant(
        lambda b: b["memories"][mem_a]["baseline"].__setitem__("baseline_hash", "00" * 32),
        "baseline_hash_invalid",
    )
    variant(
        lambda b: b["memories"][mem_a]["baseline"].__setitem__("attestation_reason", "x"),
        "baseline_binding_invalid",
    )
    variant(
        lambda b: b["memories"][mem_a]["baseline"].__setitem__("historical_origin_claimed", True),
        "baseline_binding_invalid",
    )
    variant(
        lambda b: b["memories"][mem_a]["baseline"].__setitem__("event_id", "nope"), "baseline_event_missing"
    )
    variant(
        lambda b: b["memories"][mem_a].update(retrieval_weight_milli=1300, retrieval_weight_float4=_f4(1300)),
        "baseline_terminal_weight_mismatch",
    )

    # The baseline's event must come from a verified stream.
    b = copy.deepcopy(bundle)
    b["event_streams"][0]["events"][0]["signature"] = "00" * 64
    b["sql_records"][0].update(ok=False, reason="baseline_event_epoch_invalid")
    b["sql_records"][1].update(ok=False, reason="baseline_chain_anchor_invalid")
    verdict = verify_cognitive_bundle(b)
    assert verdict.primary_reason == "event_ledger_proof_invalid:sig_invalid"
    assert [r["reason"] for r in verdict.records] == [
        "baseline_event_epoch_invalid",
        "baseline_chain_anchor_invalid",
    ]
    assert verdict.sql_parity is True

    # A chain whose genesis is not the attested weight.
    b = copy.deepcopy(bundle)
    b["memories"][1]["baseline"] = copy.deepcopy(b["memories"][0]["baseline"])
    b["sql_records"][1].update(ok=False, reason="baseline_chain_anchor_invalid")
    verdict = verify_cognitive_bundle(b)
    assert verdict.primary_reason == "baseline_chain_anchor_invalid"


def test_produced_event_stream_failures() -> None:
    p = _Producer()
    stream = p.stream()
    for _ in range(3):
        p.event(stream, operation="test_op", key=None, metadata={"n": 1})
    p.memory(MEM_A, 1000, [], expect=("default_empty_chain", True, 0, 0, None))
    bundle = p.bundle()
    assert _check(bundle, None).ok
    cases: list[tuple[Any, str]] = [
        (lambda e: e[1].__setitem__("signature", "00" * 64), "event_ledger_proof_invalid:sig_invalid"),
        (lambda e: e[1].__setitem__("previous_mutation_hash", "00" * 32), "event_ledger_chain_link_invalid"),
        (lambda e: e[1].__setitem__("ledger_sequence", 3), "event_ledger_chain_link_invalid"),
        (lambda e: e.pop(0), "event_ledger_chain_link_invalid"),
        (
            lambda e: e[2]["metadata"].__setitem__("n", 2),
            "event_ledger_proof_invalid:event_proof_hash_mismatch",
        ),
        (
            lambda e: e[2].__setitem__("mutation_hash", "00" * 32),
            "event_ledger_proof_invalid:event_proof_hash_mismatch",
        ),
        (lambda e: e[2].__setitem__("ledger_version", 2), "event_ledger_proof_invalid:event_proof_version"),
        (lambda e: e[2].__setitem__("signature", "zz"), "event_ledger_proof_invalid:event_proof_malformed"),
        (
            lambda e: e[0].__setitem__("company_id", "other"),
            "cognitive_evidence_event_identity_epoch_invalid",
        ),
        (
            lambda e: e[0].__setitem__("signer_valid_from", T0 + 1),
            "cognitive_evidence_event_identity_epoch_invalid",
        ),
        (lambda e: e[0].__setitem__("signed_at", T0 - 1), "cognitive_evidence_event_identity_epoch_invalid"),
        (lambda e: e[0].__setitem__("signed_at", "late"), "cognitive_evidence_event_invalid"),
        (lambda e: e[0].__setitem__("certificate_fingerprint", "00" * 32), "event_ledger_identity_mismatch"),
    ]
    for edit, reason in cases:
        b = copy.deepcopy(bundle)
        edit(b["event_streams"][0]["events"])
        verdict = _check(b, reason)
        assert verdict.corpus_proof_root is not None and not verdict.event_streams[0].valid
    b = copy.deepcopy(bundle)
    b["event_streams"][0]["signer_valid_from"] = T0 + 1
    _check(b, "cognitive_evidence_event_identity_mismatch")
    b = copy.deepcopy(bundle)
    b["event_streams"].append(copy.deepcopy(b["event_streams"][0]))
    _check(b, "cognitive_evidence_event_duplicate")


MEM_C = "cccccccc-cccc-4ccc-8ccc-cccccccccccc"
DEFAULT_RECORD = ("default_empty_chain", True, 0, 0, None)


@pytest.mark.parametrize(
    ("metadata", "subject", "field"),
    [
        ({"memory_id": MEM_C}, None, "metadata.memory_id"),
        ({}, MEM_C, "subject_memory_id"),
        ({"memory_id": MEM_A, "supersedes": MEM_C}, MEM_A, "metadata.supersedes"),
        ({"evidence": [{"memory_id": MEM_A}, {"memory_id": MEM_C}]}, None, "metadata.evidence[1].memory_id"),
        ({"withheld_memory_ids": [MEM_C]}, None, "metadata.withheld_memory_ids[0]"),
    ],
    ids=["about", "subject", "supersedes", "disclosed", "withheld"],
)
def test_produced_memory_named_by_an_event_is_in_the_bundle(
    metadata: dict[str, Any], subject: str | None, field: str
) -> None:
    """A whole-brain bundle holds every memory its signed events name: one removed while its
    events stay is named (the memory, the event and the field); a bundle the caller says is of
    one memory holds that one."""
    p = _Producer()
    stream = p.stream()
    p.event(
        stream, operation="memory_saved", key=None, metadata={"memory_id": MEM_A}, subject_memory_id=MEM_A
    )
    named = p.event(stream, operation="test_op", key=None, metadata=metadata, subject_memory_id=subject)
    p.memory(MEM_A, 1000, [], expect=DEFAULT_RECORD)
    p.memory(MEM_C, 1000, [], expect=DEFAULT_RECORD)
    whole = p.bundle()
    assert _check(whole, None).ok
    lacking = copy.deepcopy(whole)
    for name in ("memories", "sql_records"):  # the strongest edit: the producer's records agree
        lacking[name] = [m for m in lacking[name] if m["memory_id"] != MEM_C]
    verdict = _check(lacking, R.MEMORY_MISSING)
    assert verdict.detail is not None
    assert f"memory {MEM_C} is named by event {named['event_id']}" in verdict.detail, verdict.detail
    assert f"its {field})" in verdict.detail, verdict.detail
    assert [r["memory_id"] for r in verdict.records] == [MEM_A]
    # exported for one memory: the caller's word, not the bundle's
    one = copy.deepcopy(lacking)
    assert verify_cognitive_bundle(one, memory_id=MEM_A).ok
    other = verify_cognitive_bundle(one, memory_id=MEM_C)
    assert other.primary_reason == R.MEMORY_MISSING and MEM_C in (other.detail or "")


def test_produced_bundle_without_memories_but_their_events() -> None:
    """Every memory removed, the producer's records with them, the events kept: refused, each
    memory counted, the first named."""
    p = _Producer()
    stream = p.stream()
    for mid in (MEM_A, MEM_B, MEM_C):
        p.event(
            stream, operation="memory_saved", key=None, metadata={"memory_id": mid}, subject_memory_id=mid
        )
        p.memory(mid, 1000, [], expect=DEFAULT_RECORD)
    bundle = p.bundle()
    assert _check(bundle, None).ok
    bundle["memories"], bundle["sql_records"] = [], []
    verdict = _check(bundle, R.MEMORY_MISSING)
    assert verdict.records == () and verdict.detail is not None
    assert verdict.detail.startswith(f"memory {MEM_A} is named by event "), verdict.detail
    assert "2 more missing memories" in verdict.detail, verdict.detail
    # an event in a stream that fails is not taken at its word (its stream's reason comes first)
    bundle["event_streams"][0]["events"][1]["signature"] = "00" * 64
    verdict = verify_cognitive_bundle(bundle)
    assert verdict.primary_reason == "event_ledger_proof_invalid:sig_invalid"


def test_produced_housekeeper_self_signed_genesis_certificate() -> None:
    p = _Producer()
    identity = p.identity(issuer="housekeeper")
    p.memory(
        MEM_A, 1300, p.chain(MEM_A, [1000, 1300], identity=identity), expect=(CERTIFIED, True, 1, 1, None)
    )
    assert _check(p.bundle(), None).ok
    # Only the housekeeper may certify itself.
    p = _Producer()
    agent = _key("agent")
    identity = p.identity(agent, agent_id="agent-x", issuer="agent-x")
    p.event(p.stream(identity), operation="test_op", key=None, metadata={})
    p.memory(MEM_A, 1000, [], expect=("default_empty_chain", True, 0, 0, None))
    _check(p.bundle(), "cognitive_evidence_event_identity_epoch_invalid")


def test_produced_revocation() -> None:
    # Revoked after the evidence: still valid.
    p = _Producer()
    identity = p.identity(revoked_at=T0 + 10_000)
    p.memory(
        MEM_A, 1300, p.chain(MEM_A, [1000, 1300], identity=identity), expect=(CERTIFIED, True, 1, 1, None)
    )
    assert _check(p.bundle(), None).ok
    # Revoked at or before signing.
    p = _Producer()
    identity = p.identity(revoked_at=T0 + 61)
    p.memory(
        MEM_A,
        1300,
        p.chain(MEM_A, [1000, 1300], identity=identity),
        expect=(CERTIFIED, False, 0, 0, "provenance_signer_revoked_before_evidence"),
    )
    bundle = p.bundle()
    _check(bundle, "provenance_signer_revoked_before_evidence")
    # A revocation that does not verify is itself a failure.
    for field, value, reason in (
        ("signature", "00" * 64, "provenance_revocation_hash_mismatch"),  # the hash covers it
        ("nonce", "another-nonce", "provenance_revocation_signature_invalid"),
        ("content_hash", "00" * 32, "provenance_revocation_hash_mismatch"),
        ("master_fingerprint", "00" * 32, "provenance_revocation_master_mismatch"),
        ("signed_body", {}, "provenance_revocation_body_invalid"),
        ("nonce", "", "provenance_revocation_proof_malformed"),
    ):
        b = copy.deepcopy(bundle)
        b["memories"][0]["projections"][0]["provenance"]["identity"]["revocation"][field] = value
        b["sql_records"][0]["reason"] = reason
        _check(b, reason)


def test_produced_certificate_window_and_key_substitution() -> None:
    p = _Producer()
    identity = p.identity(valid_until=T0 + 30)
    p.memory(
        MEM_A,
        1300,
        p.chain(MEM_A, [1000, 1300], identity=identity),
        expect=(CERTIFIED, False, 0, 0, "provenance_cert_expired"),
    )
    _check(p.bundle(), "provenance_cert_expired")
    p = _Producer()
    identity = p.identity(valid_from=T0 + 100)
    p.memory(
        MEM_A,
        1300,
        p.chain(MEM_A, [1000, 1300], identity=identity),
        expect=(CERTIFIED, False, 0, 0, "provenance_cert_not_yet_valid"),
    )
    _check(p.bundle(), "provenance_cert_not_yet_valid")
    # A substituted key: signed with another key whose pubkey is put in the identity row.
    p = _Producer()
    identity = p.identity()
    other = _key("other")
    identity["pubkey_b64u"] = other.public_b64u
    p.memory(
        MEM_A,
        1300,
        p.chain(MEM_A, [1000, 1300], identity=identity, key=other),
        expect=(CERTIFIED, False, 0, 0, "provenance_signer_certificate_row_mismatch"),
    )
    _check(p.bundle(), "provenance_signer_certificate_row_mismatch")
    # A certificate from an untrusted master.
    p = _Producer()
    rogue = _Producer()
    rogue.master = _key("rogue-master")
    identity = rogue.identity()
    p.memory(
        MEM_A,
        1300,
        p.chain(MEM_A, [1000, 1300], identity=identity),
        expect=(CERTIFIED, False, 0, 0, "provenance_cert_sig_invalid"),
    )
    _check(p.bundle(), "provenance_cert_sig_invalid")


def test_produced_provenance_binding() -> None:
    # Cross-memory replay: a correctly signed REWEIGHT of memory B used for memory A.
    p = _Producer()
    p.memory(
        MEM_A,
        1300,
        p.chain(MEM_A, [1000, 1300], body_memory_id=MEM_B),
        expect=(CERTIFIED, False, 0, 0, "provenance_event_type_invalid"),
    )
    _check(p.bundle(), "provenance_event_type_invalid")
    # Provenance that is not a REWEIGHT.
    p = _Producer()
    p.memory(
        MEM_A,
        1300,
        p.chain(MEM_A, [1000, 1300], form={"event_type": "EDIT"}),
        expect=(CERTIFIED, False, 0, 0, "provenance_signed_body_event_type_mismatch"),
    )
    _check(p.bundle(), "provenance_signed_body_event_type_mismatch")
    # Another signer than the housekeeper, with a valid certificate: not weight authority.
    p = _Producer()
    agent = _key("agent")
    identity = p.identity(agent, agent_id="agent-x")
    p.memory(
        MEM_A,
        1300,
        p.chain(MEM_A, [1000, 1300], identity=identity, key=agent),
        expect=(CERTIFIED, False, 0, 0, "provenance_event_type_invalid"),
    )
    _check(p.bundle(), "provenance_event_type_invalid")
    # Body weights that are not the projection's.
    p = _Producer()
    rows = p.chain(MEM_A, [1000, 1300, 1400])
    rows[1]["provenance"]["binding_schema_version"] = 1
    p.memory(MEM_A, 1400, rows, expect=(CERTIFIED, False, 1, 1, "provenance_event_type_invalid"))
    _check(p.bundle(), "provenance_event_type_invalid")


@pytest.mark.parametrize(
    ("form", "reason"),
    [
        ({"signature_form": 2, "memory_originated_at": T0 - 5}, None),
        ({"request_signature_form": 3, "signed_method": "post", "signed_path": "/aimos/x?q=1"}, None),
        (
            {
                "identity_tier": "T2",
                "request_signature_form": 4,
                "signed_method": "POST",
                "signed_path": "/aimos/x",
                "signed_claims": {"prev_chain_hash": b64u_encode(bytes(32)), "device_fp": None},
            },
            None,
        ),
        (
            {
                "identity_tier": "T3",
                "request_signature_form": 4,
                "signed_method": "POST",
                "signed_path": "/aimos/x",
                "signed_claims": {"prev_chain_hash": b64u_encode(bytes(32)), "device_fp": "test-device"},
            },
            None,
        ),
        ({"identity_tier": "T2"}, "provenance_elevated_provenance_requires_form4"),
        (
            {
                "identity_tier": "T3",
                "request_signature_form": 4,
                "signed_method": "POST",
                "signed_path": "/aimos/x",
                "signed_claims": {"prev_chain_hash": b64u_encode(bytes(32)), "device_fp": "other-device"},
            },
            "provenance_signed_device_claim_mismatch",
        ),
        (
            {
                "request_signature_form": 4,
                "signed_method": "POST",
                "signed_path": "/aimos/x",
                "signed_claims": {"prev_chain_hash": b64u_encode(bytes(31))},
            },
            "provenance_signed_chain_claim_invalid",
        ),
    ],
)
def test_produced_signature_forms(form: dict[str, Any], reason: str | None) -> None:
    p = _Producer()
    if reason is None:
        expect: tuple[str, bool, int, int, str | None] = (CERTIFIED, True, 1, 1, None)
        rows = p.chain(MEM_A, [1000, 1300], form=form)
    else:
        expect = (CERTIFIED, False, 0, 0, reason)
        try:
            rows = p.chain(MEM_A, [1000, 1300], form=form)
        except (KeyError, TypeError):  # the producer cannot even form the message
            form = {**form, "request_signature_form": 1}
            rows = p.chain(MEM_A, [1000, 1300], form=form)
    p.memory(MEM_A, 1300, rows, expect=expect)
    _check(p.bundle(), reason)


def test_produced_signature_form_is_bound() -> None:
    """A form-2 signature does not verify as form 1 (the form is not malleable)."""
    p = _Producer()
    rows = p.chain(MEM_A, [1000, 1300], form={"signature_form": 2, "memory_originated_at": T0})
    rows[0]["provenance"]["signature_form"] = 1
    p.memory(MEM_A, 1300, rows, expect=(CERTIFIED, False, 0, 0, "provenance_sig_invalid"))
    _check(p.bundle(), "provenance_sig_invalid")


def test_produced_provenance_tampering() -> None:
    cases: list[tuple[str, Any, str]] = [
        ("mutation_hash", "00" * 32, "provenance_mutation_hash_mismatch"),
        ("signature", "00" * 64, "provenance_sig_invalid"),
        ("certificate_fingerprint", "00" * 32, "provenance_signer_certificate_fingerprint_mismatch"),
        ("is_genesis", False, "provenance_genesis_shape_invalid"),
        ("body", None, "provenance_signed_body_missing"),
        ("nonce", "", "provenance_malformed_input"),
        ("signer_valid_from", T0 + 1, "provenance_signer_certificate_row_mismatch"),
    ]
    for field, value, reason in cases:
        p = _Producer()
        rows = p.chain(MEM_A, [1000, 1300])
        rows[0]["provenance"][field] = value
        p.memory(MEM_A, 1300, rows, expect=(CERTIFIED, False, 0, 0, reason))
        _check(p.bundle(), reason)
    # The projection's sigma must be its provenance node's mutation hash.
    p = _Producer()
    rows = p.chain(MEM_A, [1000, 1300, 1400])
    rows[1]["provenance_mutation_hash"] = rows[0]["provenance_mutation_hash"]
    p.memory(MEM_A, 1400, rows, expect=(CERTIFIED, False, 1, 1, "provenance_event_type_invalid"))
    _check(p.bundle(), "provenance_event_type_invalid")


def test_produced_projection_hashes() -> None:
    p = _Producer()
    rows = p.chain(MEM_A, [1000, 1300, 1400])
    rows[1]["transition_hash"] = "00" * 32
    p.memory(MEM_A, 1400, rows, expect=(CERTIFIED, False, 1, 1, "transition_signature_invalid"))
    _check(p.bundle(), "transition_signature_invalid")
    # A projection hash that links correctly but does not recompute.
    p = _Producer()
    rows = p.chain(MEM_A, [1000, 1300])
    rows[0]["projection_hash"] = "ab" * 32
    p.memory(MEM_A, 1300, rows, expect=(CERTIFIED, False, 0, 0, "projection_hash_invalid"))
    _check(p.bundle(), "projection_hash_invalid")
    # Rows in any order are walked in chain order.
    p = _Producer()
    rows = p.chain(MEM_A, [1000, 1300, 900, 1100])
    p.memory(MEM_A, 1100, list(reversed(rows)), expect=(CERTIFIED, True, 3, 3, None))
    assert _check(p.bundle(), None).ok
    # Uppercase hex inside a projection is malformed evidence for that memory only.
    p = _Producer()
    rows = p.chain(MEM_A, [1000, 1300])
    rows[0]["transition_signature"] = rows[0]["transition_signature"].upper()
    p.memory(MEM_A, 1300, rows, expect=(CERTIFIED, False, 0, 0, "portable_evidence_malformed"))
    p.memory(MEM_B, 1000, [], expect=("default_empty_chain", True, 0, 0, None))
    verdict = _check(p.bundle(), "portable_evidence_malformed")
    assert verdict.records[1]["ok"]


def test_verdict_serializes() -> None:
    p = _Producer()
    p.memory(MEM_A, 1300, p.chain(MEM_A, [1000, 1300]), expect=(CERTIFIED, True, 1, 1, None))
    verdict = _check(p.bundle(), None)
    doc = verdict.as_dict()
    assert json.loads(json.dumps(doc)) == doc
    # The records themselves are JSON-ready dicts (the CLI prints them as they are).
    assert json.loads(json.dumps(verdict.records)) == doc["records"]
    assert doc["records"][0]["sigs_verified"] == 1 and doc["verdict"] == "valid"


def test_produced_extreme_values_are_invalid_not_errors() -> None:
    # A signed body whose weight overflows when scaled.
    p = _Producer()
    rows = p.chain(MEM_A, [1000, 1300], body_extra={"old_weight": 1e308})
    p.memory(MEM_A, 1300, rows, expect=(CERTIFIED, False, 0, 0, "provenance_event_type_invalid"))
    _check(p.bundle(), "provenance_event_type_invalid")
    # A self-signed housekeeper epoch (no master needed) whose times no ISO-8601 string can name.
    p = _Producer()
    start = 2**53 - 10
    identity = p.identity(valid_from=start, valid_until=2**53 - 1, issuer="housekeeper")
    event = {
        "signed_at": start + 1,
        "company_id": COMPANY,
        "signer_agent_id": "housekeeper",
        "signer_valid_from": start,
    }
    stream = {
        "signer_agent_id": "housekeeper",
        "signer_valid_from": start,
        "identity": identity,
        "events": [event],
    }
    p.streams.append(stream)
    verdict = _check(p.bundle(), "cognitive_evidence_identity_epoch_invalid")
    assert verdict.corpus_proof_root is not None


def _rich_bundle() -> dict[str, Any]:
    """Every kind of evidence at once: baseline + chain, revoked-later signer, form 2 and form 4
    nodes, a default memory and an event stream."""
    p = _Producer()
    baseline = p.baseline(MEM_A, "07" * 32, 1300)
    revoked_later = p.identity(revoked_at=T0 + 10_000)
    rows = p.chain(MEM_A, [1300, 1500], identity=revoked_later)
    p.memory(MEM_A, 1500, rows, baseline, expect=(CERTIFIED, True, 1, 1, None))
    form4 = {
        "identity_tier": "T3",
        "request_signature_form": 4,
        "signed_method": "POST",
        "signed_path": "/aimos/x",
        "signed_claims": {"prev_chain_hash": b64u_encode(bytes(32)), "device_fp": "test-device"},
    }
    p.memory(
        MEM_B, 1100, p.chain(MEM_B, [1000, 1200, 1100], form=form4), expect=(CERTIFIED, True, 2, 2, None)
    )
    mem_c = "cccccccc-cccc-4ccc-8ccc-cccccccccccc"
    rows = p.chain(mem_c, [1000, 900], form={"signature_form": 2, "memory_originated_at": T0 - 1})
    p.memory(mem_c, 900, rows, expect=(CERTIFIED, True, 1, 1, None))
    p.memory(
        "dddddddd-dddd-4ddd-8ddd-dddddddddddd", 1000, [], expect=("default_empty_chain", True, 0, 0, None)
    )
    return p.bundle()


def test_rich_bundle_valid_and_fuzzed() -> None:
    bundle = _rich_bundle()
    assert _check(bundle, None).ok
    rng = random.Random("rich")
    outcomes = set()
    for _ in range(400):
        verdict = verify_cognitive_bundle(_mutate(bundle, rng))
        assert verdict.verdict != "indeterminate", verdict.detail
        _assert_closed(verdict)
        outcomes.add(verdict.primary_reason)
    assert len(outcomes) > 15  # the mutations reach many different checks
