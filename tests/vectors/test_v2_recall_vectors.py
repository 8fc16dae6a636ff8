"""The MutMem V2 recall-disclosure verifier (``aimos.verify.v2_recall``) against the reference.

- ``vectors.json``: 39 structural vectors (2 valid + 37 invalid, fake keys), evaluated with
  ``structural_only``; verdict and exact reason, one test per vector.
- ``p2-crypto-vectors.json`` (``recall`` part): 8 vectors with real Ed25519 signatures, verified in
  full with each vector's expected master fingerprint; the valid one verifies
  2 + 1 (master grant) + 1 + 1 + n signatures.
- the files' own commitments (summaries, vectors root, manifest hashes, protocol root) and the code
  lists against the protocol manifest;
- bundles re-derived here with the reference's public P2 test keys (seed =
  SHA-256("HOM-AIMOS-P2-PUBLIC-TEST-KEY:" + label)): 0..3 results, the housekeeper system principal,
  legacy occurrences and targeted tampering;
- malformed input and a hypothesis fuzz: whatever the input, the verifier returns a reason of its
  closed vocabulary and never raises.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.v2_recall_builder import (
    MASTER,
    P2_FILE,
    P2_FINGERPRINT,
    P2_RECALL,
    P2_VALID,
    PROTOCOL_MANIFEST,
    STRUCTURAL,
    V2_DIR,
    VECTORS_FILE,
    Builder,
    _body,
    _full,
    _load,
    _p2,
    _signature_count,
    _verify,
    reseal,
)

from aimos.crypto.canonical import canonical_json, canonical_sha256_hex
from aimos.crypto.encoding import b64u_decode
from aimos.verify import v2_recall
from aimos.verify.v2_recall import (
    RECALL_CRYPTO_CODES,
    RECALL_REASONS,
    RECALL_STRUCTURAL_CODES,
    verify_recall_envelope,
)


# --- the reference's vectors ------------------------------------------------------------------
@pytest.mark.parametrize("vector_id", list(STRUCTURAL))
def test_structural_vector(vector_id: str) -> None:
    vector = STRUCTURAL[vector_id]
    result = _verify(vector["bundle"], structural_only=True)
    assert (result.verdict, result.reason) == (vector["expected"], vector["reason"]), result
    assert result.signatures_verified == 0


@pytest.mark.parametrize("vector_id", list(P2_RECALL))
def test_p2_recall_vector(vector_id: str) -> None:
    vector = P2_RECALL[vector_id]
    result = _verify(vector["bundle"], vector["expected_master_fingerprint"])
    assert (result.verdict, result.reason) == (vector["expected"], vector["reason"]), result
    if vector["expected"] == "valid":
        assert result.signatures_verified == _signature_count(vector["bundle"]) == 6


def test_vector_counts() -> None:
    assert (VECTORS_FILE["intended_n"], VECTORS_FILE["valid_n"], VECTORS_FILE["invalid_n"]) == (39, 2, 37)
    assert len(STRUCTURAL) == 39
    assert sum(v["expected"] == "valid" for v in STRUCTURAL.values()) == 2
    recall = P2_FILE["recall"]
    assert (recall["intended_n"], recall["valid_n"], recall["invalid_n"]) == (8, 1, 7)
    assert len(P2_RECALL) == 8


def test_every_code_has_exactly_one_vector() -> None:
    structural = [v["reason"] for v in STRUCTURAL.values() if v["expected"] == "invalid"]
    assert sorted(structural) == sorted(RECALL_STRUCTURAL_CODES)
    crypto = [v["reason"] for v in P2_RECALL.values() if v["expected"] == "invalid"]
    assert sorted(crypto) == sorted(RECALL_CRYPTO_CODES)


# --- the files' own commitments and the code lists ---------------------------------------------
def test_summaries_and_vectors_root() -> None:
    summaries = VECTORS_FILE["summaries"]
    assert len(summaries) == len(VECTORS_FILE["vectors"])
    for ordinal, (summary, vector) in enumerate(zip(summaries, VECTORS_FILE["vectors"], strict=True)):
        assert summary["ordinal"] == ordinal
        assert (summary["id"], summary["expected"], summary["reason"]) == (
            vector["id"],
            vector["expected"],
            vector["reason"],
        )
        # the whole bundle, not the envelope commitment
        assert summary["bundle_sha256"] == canonical_sha256_hex(vector["bundle"]), vector["id"]
    assert VECTORS_FILE["vectors_root_sha256"] == canonical_sha256_hex(summaries)


@pytest.mark.parametrize("name", ["vectors.json", "p2-crypto-vectors.json"])
def test_manifest_sha256(name: str) -> None:
    data = _load(name)
    assert data["manifest_sha256"] == canonical_sha256_hex(
        {k: v for k, v in data.items() if k != "manifest_sha256"}
    )


def test_protocol_manifest() -> None:
    manifest = PROTOCOL_MANIFEST
    assert manifest["protocol_root_sha256"] == canonical_sha256_hex(
        {k: v for k, v in manifest.items() if k != "protocol_root_sha256"}
    )
    listed = manifest["vectors"]
    assert listed["vectors_root_sha256"] == VECTORS_FILE["vectors_root_sha256"]
    assert listed["manifest_sha256"] == VECTORS_FILE["manifest_sha256"]
    assert listed["file_sha256"] == hashlib.sha256((V2_DIR / "vectors.json").read_bytes()).hexdigest()
    assert (listed["intended_n"], listed["valid_n"], listed["invalid_n"]) == (39, 2, 37)


def test_code_lists_equal_the_reference() -> None:
    assert tuple(PROTOCOL_MANIFEST["failure_codes"]) == RECALL_STRUCTURAL_CODES
    assert tuple(VECTORS_FILE["failure_codes"]) == RECALL_STRUCTURAL_CODES
    assert len(RECALL_STRUCTURAL_CODES) == len(set(RECALL_STRUCTURAL_CODES)) == 37
    assert len(RECALL_CRYPTO_CODES) == len(set(RECALL_CRYPTO_CODES)) == 7
    assert RECALL_REASONS == frozenset(RECALL_STRUCTURAL_CODES) | frozenset(RECALL_CRYPTO_CODES)
    assert len(RECALL_REASONS) == 44


def test_schemas_and_orders_equal_the_manifest() -> None:
    assert dict(v2_recall.OBJECT_SCHEMAS) == PROTOCOL_MANIFEST["schemas"]
    assert list(v2_recall.SINGLETON_KINDS) == PROTOCOL_MANIFEST["singleton_order"]
    assert list(v2_recall.RESULT_KINDS) == PROTOCOL_MANIFEST["result_object_order"]
    assert v2_recall.MAX_RESULTS == PROTOCOL_MANIFEST["maximum_result_count"]
    assert sorted(v2_recall.OBJECT_SCHEMAS) == sorted(PROTOCOL_MANIFEST["schemas"])


def test_reason_vocabulary_is_closed_in_the_source() -> None:
    """Every failure-code constant of the module is in RECALL_REASONS and vice versa."""
    codes = {
        value
        for name, value in vars(v2_recall).items()
        if name.isupper() and isinstance(value, str) and re.fullmatch(r"[A-Z]+(?:_[A-Z]+)+", value)
    }
    assert codes == set(RECALL_REASONS)


def test_every_returned_reason_is_closed_and_every_code_is_reachable() -> None:
    seen = {_verify(v["bundle"], structural_only=True).reason for v in STRUCTURAL.values()}
    seen |= {_verify(v["bundle"], v["expected_master_fingerprint"]).reason for v in P2_RECALL.values()}
    malformed: tuple[object, ...] = (None, [], "x", 0, {}, {"format": None})
    seen |= {_verify(bad).reason for bad in malformed}
    seen.discard(None)
    assert seen <= RECALL_REASONS
    assert seen == RECALL_REASONS


# --- the trust anchor is the caller's ----------------------------------------------------------
@pytest.mark.parametrize("fingerprint", [None, "", "zz", 12345, ["a"], "0" * 64, P2_FINGERPRINT[:-2]])
def test_expected_fingerprint_is_required(fingerprint: Any) -> None:
    result = _verify(P2_VALID["bundle"], fingerprint)
    assert result.reason == "EXPECTED_TRUST_ANCHOR_REQUIRED"
    assert result.signatures_verified == 0


def test_caller_fingerprint_may_be_upper_case() -> None:
    assert _verify(P2_VALID["bundle"], P2_FINGERPRINT.upper()).verdict == "valid"


def test_structural_only_skips_signatures() -> None:
    result = _verify(P2_VALID["bundle"], structural_only=True)
    assert (result.verdict, result.signatures_verified) == ("valid", 0)
    for vector in P2_RECALL.values():  # every crypto attack is structurally sound
        assert _verify(vector["bundle"], structural_only=True).verdict == "valid", vector["id"]


@pytest.mark.parametrize("vector_id", ["P1-PRED-CV-VALID-ORDINARY", "P1-PRED-CV-VALID-HOUSEKEEPER"])
def test_p1_fake_keys_fail_cryptography(vector_id: str) -> None:
    bundle = STRUCTURAL[vector_id]["bundle"]
    assert _verify(bundle).reason == "EXPECTED_TRUST_ANCHOR_REQUIRED"
    result = _verify(bundle, bundle["expected_master_fingerprint"])
    assert result.reason == "ACTOR_CERTIFICATE_SIGNATURE_INVALID"
    assert result.where == "objects[1]"


# --- bundles re-derived with the public P2 keys ------------------------------------------------
def test_builder_reproduces_the_valid_vector() -> None:
    assert Builder().seal() == P2_VALID["bundle"]


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_result_counts(n: int) -> None:
    bundle = Builder().with_results(n).seal()
    assert bundle["object_count"] == 13 + 5 * n
    result = _full(bundle)
    assert result.verdict == "valid", result
    assert result.signatures_verified == 2 + 1 + 1 + 1 + n == _signature_count(bundle)


@pytest.mark.parametrize("n", [0, 2])
def test_housekeeper_system_principal(n: int) -> None:
    bundle = Builder().as_housekeeper().with_results(n).seal()
    result = _full(bundle)
    assert result.verdict == "valid", result
    assert result.signatures_verified == 2 + 0 + 1 + 1 + n == _signature_count(bundle)


def test_housekeeper_system_principal_with_signed_fields_is_invalid() -> None:
    builder = Builder().as_housekeeper()
    builder.s["effective_recall_grant"]["nonce"] = "grant-nonce"
    assert _full(builder.seal()).reason == "HOUSEKEEPER_SYSTEM_PRINCIPAL_INVALID"


def test_master_grant_for_the_housekeeper_is_invalid() -> None:
    builder = Builder().as_housekeeper()
    builder.s["effective_recall_grant"] = copy.deepcopy(_body(P2_VALID["bundle"], "effective_recall_grant"))
    builder.s["effective_recall_grant"].update(
        subject_agent_id="housekeeper", subject_valid_from=builder.s["actor_identity_epoch"]["valid_from"]
    )
    builder.s["effective_recall_grant"]["signed_body"].update(subject_agent_id="housekeeper")
    assert _full(builder.seal()).reason == "GRANT_COMMITMENT_INVALID"


def test_second_result_failures_name_result_1() -> None:
    builder = Builder().with_results(2)
    builder.groups[1]["occurrence"]["signature_b64u"] = builder.groups[0]["occurrence"]["signature_b64u"]
    result = _full(builder.seal())
    assert (result.reason, result.where) == ("HOUSEKEEPER_OCCURRENCE_SIGNATURE_INVALID", "result 1")
    assert result.signatures_verified == 5 + 1

    bundle = Builder().with_results(2).seal()
    _body(bundle, "receipt_evidence", 1)["calibrated_score"] = 0.01
    result = _full(reseal(bundle))
    assert (result.reason, result.where) == ("RECEIPT_EVIDENCE_BINDING_INVALID", "result 1")


def test_results_out_of_canonical_order_are_invalid() -> None:
    bundle = Builder().with_results(2).seal()
    objects = bundle["objects"]
    objects[13:18], objects[18:23] = objects[18:23], objects[13:18]
    for ordinal, obj in enumerate(objects):
        obj["ordinal"] = ordinal
    assert _full(reseal(bundle)).reason == "ENVELOPE_COMMITMENT_INVALID"

    bundle = Builder().with_results(2).seal()
    bundle["objects"][13:18], bundle["objects"][18:23] = bundle["objects"][18:23], bundle["objects"][13:18]
    assert _full(reseal(bundle)).reason == "ENVELOPE_COMMITMENT_INVALID"  # ordinals kept, array permuted


def test_legacy_occurrence_is_structural_only() -> None:
    builder = Builder()
    occurrence = builder.groups[0]["occurrence"]
    occurrence.update(
        occurrence_form="legacy_v1",
        native_schema="hom.aimos.memory-occurrence-ref/legacy-v1",
        native_body={"memory_id": occurrence["memory_id"]},
    )
    bundle = builder.seal()
    assert _verify(bundle, structural_only=True).verdict == "valid"
    result = _full(bundle)
    assert (result.reason, result.signatures_verified) == ("HOUSEKEEPER_OCCURRENCE_SIGNATURE_INVALID", 5)


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("requested_data_class", "restricted", "GRANT_NOT_EFFECTIVE"),
        ("requested_data_class", "top-secret", "GRANT_NOT_EFFECTIVE"),
        ("requested_clearance_level", 11, "GRANT_SCOPE_MISMATCH"),
        ("requested_clearance_level", True, "GRANT_SCOPE_MISMATCH"),
        ("ts_signed", 1788002807.0, "IDENTITY_EPOCH_INVALID"),
        ("request_sig_form", 4, "REQUEST_CONTEXT_INVALID"),
        ("request_sig_form", 3.0, "REQUEST_CONTEXT_INVALID"),
        ("request_sig_form", True, "REQUEST_CONTEXT_INVALID"),
        ("nonce", "", "REQUEST_CONTEXT_INVALID"),
        ("actor_valid_from", "2026-08-10T18:49:54Z", "IDENTITY_SCOPE_MISMATCH"),
    ],
)
def test_request_fields(field: str, value: Any, reason: str) -> None:
    bundle = _p2()
    _body(bundle, "request_envelope")[field] = value
    assert _full(reseal(bundle)).reason == reason


# --- malformed input: a closed reason, never an exception -------------------------------------
def _deep(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = [value]
    return value


def _non_canonical_b64u(text: str) -> str:
    """Another spelling of the same bytes (non-zero padding bits), which canonical decoding refuses."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    data = b64u_decode(text)
    for char in alphabet:
        other = text[:-1] + char
        if other != text and _lenient_b64u(other) == data:
            return other
    raise AssertionError("no non-canonical spelling")


def _lenient_b64u(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _upper_ids(bundle: dict[str, Any], field: str) -> dict[str, Any]:
    for obj in bundle["objects"][13:]:
        target = obj if field == "subject_id" else obj["body"]
        assert target[field] != target[field].upper()
        target[field] = target[field].upper()
    return reseal(bundle)


def _set(kind: str, field: str, value: Any, *, seal: bool = True) -> Callable[[], Any]:
    def make() -> Any:
        bundle = _p2()
        _body(bundle, kind)[field] = value(bundle) if callable(value) else value
        return reseal(bundle) if seal else bundle

    return make


def _edit(fn: Callable[[dict[str, Any]], Any], *, seal: bool = False) -> Callable[[], Any]:
    """A copy of the valid P2 bundle edited in place by ``fn``, resealed when ``seal``."""

    def make() -> Any:
        bundle = _p2()
        fn(bundle)
        return reseal(bundle) if seal else bundle

    return make


def _event(bundle: dict[str, Any]) -> dict[str, Any]:
    event: dict[str, Any] = _body(bundle, "native_recall_receipt")["event_receipt"]
    return event


def _pad_request_signatures(bundle: dict[str, Any]) -> None:
    for kind in ("request_envelope", "request_receipt"):
        _body(bundle, kind)["signature_b64u"] += "=="


BAD_INPUTS: dict[str, tuple[Callable[[], Any], str, str | None]] = {
    # name: (bundle factory, expected reason, a word the detail must contain)
    "none": (lambda: None, "ENVELOPE_COMMITMENT_INVALID", "not a JSON object"),
    "list": (lambda: [], "ENVELOPE_COMMITMENT_INVALID", "not a JSON object"),
    "string": (lambda: "bundle", "ENVELOPE_COMMITMENT_INVALID", None),
    "integer": (lambda: 2**64, "ENVELOPE_COMMITMENT_INVALID", None),
    "bytes": (lambda: b"{}", "ENVELOPE_COMMITMENT_INVALID", None),
    "empty object": (lambda: {}, "ENVELOPE_COMMITMENT_INVALID", "missing"),
    "deep list": (lambda: _deep(100_000), "ENVELOPE_COMMITMENT_INVALID", None),
    "deep format": (
        _edit(lambda b: b.update(format=_deep(100_000))),
        "ENVELOPE_COMMITMENT_INVALID",
        "format",
    ),
    "deep body value": (
        _set("request_envelope", "request_body", _deep(10_000), seal=False),
        "ENVELOPE_COMMITMENT_INVALID",
        "depth",
    ),
    "body nested 33": (
        _set("request_envelope", "request_body", _deep(40), seal=False),
        "ENVELOPE_COMMITMENT_INVALID",
        "depth",
    ),
    "unsafe integer in body": (
        _set("request_envelope", "requested_clearance_level", 2**53, seal=False),
        "ENVELOPE_COMMITMENT_INVALID",
        "unsafe",
    ),
    "unsafe result_count": (
        _edit(lambda b: b.update(result_count=2**53 + 1)),
        "ENVELOPE_COMMITMENT_INVALID",
        None,
    ),
    "boolean result_count": (
        _edit(lambda b: b.update(result_count=True)),
        "ENVELOPE_COMMITMENT_INVALID",
        None,
    ),
    "result_count above 200": (
        _edit(lambda b: b.update(result_count=201)),
        "ENVELOPE_COMMITMENT_INVALID",
        None,
    ),
    "NaN in body": (
        _set("request_envelope", "requested_clearance_level", float("nan"), seal=False),
        "ENVELOPE_COMMITMENT_INVALID",
        "canonical",
    ),
    "non-string key in body": (
        _set("request_envelope", "request_body", {1: "x"}, seal=False),
        "ENVELOPE_COMMITMENT_INVALID",
        "canonical",
    ),
    "lone surrogate in body": (
        _set("request_envelope", "nonce", "\ud800", seal=False),
        "ENVELOPE_COMMITMENT_INVALID",
        "canonical",
    ),
    "extra top-level field": (
        _edit(lambda b: b.update(extra=1)),
        "ENVELOPE_COMMITMENT_INVALID",
        "unexpected",
    ),
    "missing top-level field": (_edit(lambda b: b.pop("format")), "ENVELOPE_COMMITMENT_INVALID", "missing"),
    "extra format field": (_edit(lambda b: b["format"].update(x=1)), "ENVELOPE_COMMITMENT_INVALID", "format"),
    "empty bundle_id": (_edit(lambda b: b.update(bundle_id="")), "ENVELOPE_COMMITMENT_INVALID", "bundle_id"),
    "long company_id": (_edit(lambda b: b.update(company_id="c" * 201)), "ENVELOPE_COMMITMENT_INVALID", None),
    "upper-case envelope fingerprint": (
        _edit(lambda b: b.update(expected_master_fingerprint=b["expected_master_fingerprint"].upper())),
        "ENVELOPE_COMMITMENT_INVALID",
        "expected_master_fingerprint",
    ),
    "upper-case bundle_sha256": (
        _edit(lambda b: b.update(bundle_sha256=b["bundle_sha256"].upper())),
        "ENVELOPE_COMMITMENT_INVALID",
        "bundle_sha256",
    ),
    "short bundle_sha256": (
        _edit(lambda b: b.update(bundle_sha256=b["bundle_sha256"][:-2])),
        "ENVELOPE_COMMITMENT_INVALID",
        "bundle_sha256",
    ),
    "short object root": (
        _edit(lambda b: b.update(object_root_sha256=b["object_root_sha256"][:10])),
        "ENVELOPE_COMMITMENT_INVALID",
        "object_root",
    ),
    "duplicate object appended": (
        _edit(lambda b: b["objects"].append(copy.deepcopy(b["objects"][3]))),
        "ENVELOPE_COMMITMENT_INVALID",
        None,
    ),
    "duplicate object in place": (
        _edit(lambda b: b["objects"].__setitem__(4, copy.deepcopy(b["objects"][3]))),
        "ENVELOPE_COMMITMENT_INVALID",
        "duplicate",
    ),
    "duplicate result object": (
        _edit(lambda b: b["objects"].__setitem__(14, copy.deepcopy(b["objects"][13]))),
        "ENVELOPE_COMMITMENT_INVALID",
        "duplicate",
    ),
    "unknown kind": (
        _edit(lambda b: b["objects"][2].update(kind="secret_stash")),
        "ENVELOPE_COMMITMENT_INVALID",
        "unknown object kind",
    ),
    "kind not a string": (
        _edit(lambda b: b["objects"][2].update(kind=["trust_anchor"])),
        "ENVELOPE_COMMITMENT_INVALID",
        "unknown object kind",
    ),
    "object not a dict": (
        _edit(lambda b: b["objects"].__setitem__(0, "x")),
        "ENVELOPE_COMMITMENT_INVALID",
        None,
    ),
    "objects not a list": (_edit(lambda b: b.update(objects={})), "ENVELOPE_COMMITMENT_INVALID", None),
    "body not a dict": (
        _edit(lambda b: b["objects"][0].update(body=[])),
        "ENVELOPE_COMMITMENT_INVALID",
        "body",
    ),
    "singleton with a subject": (
        _edit(lambda b: b["objects"][0].update(subject_id="11111111-1111-4111-8111-111111111111"), seal=True),
        "ENVELOPE_COMMITMENT_INVALID",
        "singleton",
    ),
    "upper-case subject id": (
        lambda: _upper_ids(Builder().with_results(1).seal(), "subject_id"),
        "ENVELOPE_COMMITMENT_INVALID",
        "subject_id",
    ),
    "upper-case memory id": (
        lambda: _upper_ids(Builder().with_results(1).seal(), "memory_id"),
        "RESULT_IDENTITY_BINDING_INVALID",
        "memory_id",
    ),
    "permuted singletons": (
        _edit(lambda b: b["objects"].__setitem__(slice(1, 3), b["objects"][2:0:-1]), seal=True),
        "ENVELOPE_COMMITMENT_INVALID",
        "canonical order",
    ),
    "body over 1 MiB": (
        _set("request_envelope", "padding", "x" * (1024 * 1024)),
        "ENVELOPE_COMMITMENT_INVALID",
        "more than 1048576",
    ),
    "upper-case trust fingerprint": (
        _set("trust_anchor", "master_fingerprint", lambda b: b["expected_master_fingerprint"].upper()),
        "DECISION_HASH_MALFORMED",  # the reference's quirk for a malformed trust-anchor fingerprint
        "master_fingerprint",
    ),
    "short trust fingerprint": (
        _set("trust_anchor", "master_fingerprint", "abc"),
        "DECISION_HASH_MALFORMED",
        "master_fingerprint",
    ),
    "non-canonical master key": (
        _set("trust_anchor", "master_public_key_b64u", lambda b: _non_canonical_b64u(MASTER.public_b64u)),
        "TRUST_ANCHOR_KEY_MISMATCH",
        "base64url",
    ),
    "padded master key": (
        _set("trust_anchor", "master_public_key_b64u", MASTER.public_b64u + "="),
        "TRUST_ANCHOR_KEY_MISMATCH",
        "base64url",
    ),
    "upper-case request body hash": (
        _set(
            "request_envelope",
            "request_body_hash",
            lambda b: _body(b, "request_envelope")["request_body_hash"].upper(),
        ),
        "REQUEST_BODY_HASH_MISMATCH",
        "request_body_hash",
    ),
    "short decision hash": (
        _set("content_state_projection", "admission_decision_sha256", "ab" * 31),
        "DECISION_HASH_MALFORMED",
        "admission_decision_sha256",
    ),
    "padded request signature": (
        _edit(_pad_request_signatures, seal=True),
        "REQUEST_CONTEXT_INVALID",
        "signature_b64u",
    ),
    "non-canonical grant signature": (
        _set(
            "effective_recall_grant",
            "signature_b64u",
            lambda b: _non_canonical_b64u(_body(b, "effective_recall_grant")["signature_b64u"]),
        ),
        "GRANT_COMMITMENT_INVALID",
        "signature_b64u",
    ),
    "short event prev hash": (
        _edit(lambda b: _event(b).update(prev_mutation_hash="00"), seal=True),
        "EVENT_RECEIPT_COMMITMENT_INVALID",
        "prev_mutation_hash",
    ),
    "non-canonical event signature": (
        _edit(
            lambda b: _event(b).update(signature_b64u=_non_canonical_b64u(_event(b)["signature_b64u"])),
            seal=True,
        ),
        "EVENT_RECEIPT_COMMITMENT_INVALID",
        "signature_b64u",
    ),
    "non-canonical ISO time": (
        _set("actor_identity_epoch", "valid_from", "2026-08-10 18:49:54"),
        "IDENTITY_SCOPE_MISMATCH",
        "valid_from",
    ),
    "revoked as 0": (_set("actor_revocation_state", "revoked", 0), "REVOCATION_STATE_INVALID", "revoked"),
    "event receipt missing": (
        _set("native_recall_receipt", "event_receipt", None),
        "EVENT_RECEIPT_BINDING_INVALID",
        "event_receipt",
    ),
    "native body not an object": (
        _edit(lambda b: _body(b, "occurrence", 0).update(native_body=[1]), seal=True),
        "OCCURRENCE_NATIVE_BODY_INVALID",
        "native_body",
    ),
    "unknown occurrence form": (
        _edit(lambda b: _body(b, "occurrence", 0).update(occurrence_form="v9"), seal=True),
        "OCCURRENCE_NATIVE_BODY_INVALID",
        "occurrence_form",
    ),
    "unknown authority kind": (
        _set("effective_recall_grant", "authority_kind", "root"),
        "GRANT_COMMITMENT_INVALID",
        "authority_kind",
    ),
    "selected lists not arrays": (
        _set("epistemic_recall_decision", "selected_memory_ids", "11111111-1111-4111-8111-111111111111"),
        "RETURN_PROJECTION_BINDING_INVALID",
        "arrays",
    ),
}


@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_malformed_input_gets_a_closed_reason(name: str) -> None:
    make, reason, word = BAD_INPUTS[name]
    result = _full(make())
    assert result.verdict == "invalid"
    assert result.reason == reason, result
    if word is not None:
        assert word in (result.detail or ""), result


# --- fuzz: never raises, always a closed reason -------------------------------------------------
def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


PATHS = _paths(P2_VALID["bundle"])
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**64), max_value=2**64)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(["", "POST", "housekeeper", "v3", "0" * 64, "A" * 64, P2_FINGERPRINT]),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=6,
)
MUTATION = st.one_of(
    st.tuples(st.just("replace"), st.sampled_from(PATHS), JSON_VALUES),
    st.tuples(st.just("delete"), st.sampled_from(PATHS), st.none()),
    st.tuples(st.just("duplicate"), st.integers(0, 17), st.integers(0, 18)),
)


def _apply(bundle: Any, mutation: tuple[str, Any, Any]) -> Any:
    op, where, value = mutation
    if op == "duplicate":
        objects = bundle.get("objects") if isinstance(bundle, dict) else None
        if isinstance(objects, list) and objects:
            objects.insert(min(value, len(objects)), copy.deepcopy(objects[where % len(objects)]))
        return bundle
    parent: Any = bundle
    for step in where[:-1]:
        try:
            parent = parent[step]
        except (KeyError, IndexError, TypeError):
            return bundle
    last = where[-1]
    try:
        if op == "replace":
            parent[last] = value
        else:
            del parent[last]
    except (KeyError, IndexError, TypeError):
        pass
    return bundle


def _try_reseal(bundle: Any) -> Any:
    try:
        return reseal(copy.deepcopy(bundle))
    except Exception:  # the mutation broke what resealing reads: verify the bundle as it is
        return bundle


@settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(mutations=st.lists(MUTATION, min_size=1, max_size=3), resealed=st.booleans(), full=st.booleans())
def test_fuzz_never_raises(mutations: list[tuple[str, Any, Any]], resealed: bool, full: bool) -> None:
    bundle: Any = _p2()
    for mutation in mutations:
        bundle = _apply(bundle, mutation)
    if resealed:
        bundle = _try_reseal(bundle)
    result = verify_recall_envelope(bundle, P2_FINGERPRINT, structural_only=not full)
    assert result.verdict in ("valid", "invalid")
    if result.verdict == "invalid":
        assert result.reason in RECALL_REASONS, result
    else:
        assert result.reason is None
        if not resealed:  # every byte is committed: unsealed, only a no-op edit can stay valid
            assert canonical_json(bundle) == canonical_json(P2_VALID["bundle"])


def test_canonical_json_of_vectors_round_trips() -> None:
    """The verifier reads bundles exactly as json.loads gives them (no re-parsing)."""
    bundle = json.loads(canonical_json(P2_VALID["bundle"]))
    assert _full(bundle).verdict == "valid"
