"""The MutMem V2 mutation-outcome verifier against the reference's vectors.

- ``mutation-vectors.json``: 15 structural vectors (placeholder signatures, 64 x 0x09), evaluated
  with ``structural_only``; verdict and exact reason, one test per vector.
- ``p2-crypto-vectors.json`` (``mutation`` part): 10 vectors with real Ed25519 signatures, verified
  in full: the bundle structurally, then the witness against its trust context (the valid P2
  recall envelope) under the vector's expected master fingerprint.
- the mutation vector file's own commitments, the closed vocabulary, targeted witness cases
  (re-signed with the reference's public P2 test key) and a hypothesis fuzz: whatever the
  input, the verifier returns a reason of its closed vocabulary and never raises.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import aimos.verify.v2_mutation as v2m
from aimos import vocabulary
from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json, canonical_sha256, canonical_sha256_hex
from aimos.crypto.ed25519 import KeyPair
from aimos.crypto.encoding import b64u_decode, b64u_encode, iso_ms, parse_iso_ms
from aimos.crypto.messages import payload_message
from aimos.errors import AimosError
from aimos.verify.v2 import mutation_words
from aimos.verify.v2_mutation import (
    MUTATION_REASONS,
    MUTATION_STRUCTURAL_CODES,
    MUTATION_WITNESS_CODES,
    RECALL_TRUST_CONTEXT_REASONS,
    verify_mutation_bundle,
)
from aimos.verify.v2_recall import verify_recall_envelope

# the same place tests/vectors/conftest.py reads the reference data from (needed at collection time)
V2_DIR = (
    Path(__file__).resolve().parents[3]
    / "shared"
    / "reference"
    / "hom-aimos"
    / "verifiers"
    / ("mutmem-conformance/v2")
)


def _load(name: str) -> Any:
    path = V2_DIR / name
    if not path.is_file():
        raise pytest.UsageError(f"reference data missing: {path}")
    return json.loads(path.read_bytes())


MUTATION_FILE: dict[str, Any] = _load("mutation-vectors.json")
P2_FILE: dict[str, Any] = _load("p2-crypto-vectors.json")
PROTOCOL_MANIFEST: dict[str, Any] = _load("protocol-manifest.json")
STRUCTURAL = {v["id"]: v for v in MUTATION_FILE["vectors"]}
P2_MUTATION = {v["id"]: v for v in P2_FILE["mutation"]["vectors"]}
P2_RECALL = {v["id"]: v for v in P2_FILE["recall"]["vectors"]}

P2_MASTER_FINGERPRINT = "8c12a6d2a41305c434bdbb4d1e1bf7d477d43985c4d568786ea1fb3980f53cfd"
HOUSEKEEPER_TEST_KEY = KeyPair(hashlib.sha256(b"HOM-AIMOS-P2-PUBLIC-TEST-KEY:housekeeper").digest())
VALID_TRANSITION = "P2-CRYPTO-MUTATION-VALID-authorized_transition"
VALID_NOOP = "P2-CRYPTO-MUTATION-VALID-signed_noop"
VALID_OBSERVATION = "P2-CRYPTO-MUTATION-VALID-occurrence_observation"


# --- helpers ----------------------------------------------------------------------------------------
def without(data: dict[str, Any], field: str) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != field}


def bundle_hash(bundle: dict[str, Any]) -> str:
    return hashlib.sha256(
        vocabulary.V2_MUTATION_BUNDLE + canonical_json(without(bundle, "bundle_sha256"))
    ).hexdigest()


def witness_hash(witness: dict[str, Any]) -> str:
    return hashlib.sha256(
        vocabulary.V2_MUTATION_WITNESS + canonical_json(without(witness, "witness_sha256"))
    ).hexdigest()


def reseal(bundle: dict[str, Any], witness: dict[str, Any] | None = None) -> None:
    """Recompute the bundle's (and the witness's) own commitments after an edit."""
    bundle["bundle_sha256"] = bundle_hash(bundle)
    if witness is not None:
        witness["mutation_bundle_sha256"] = bundle["bundle_sha256"]
        witness["witness_sha256"] = witness_hash(witness)


def full(vector: dict[str, Any], **overrides: Any) -> v2m.V2Verdict:
    args: dict[str, Any] = {
        "witness": vector["witness"],
        "trust_context": vector["trust_context"],
        "expected_master_fingerprint": vector["expected_master_fingerprint"],
    }
    args.update(overrides)
    return verify_mutation_bundle(vector["bundle"], **args)


def outcome(result: v2m.V2Verdict) -> tuple[str, str | None]:
    return result.verdict, result.reason


def resign_event(event: dict[str, Any], **changes: Any) -> None:
    """Edit a full signed event proof (and its signed body) and sign it again with the public P2
    housekeeper test key: content hash, event-link mutation hash and signature are recomputed."""
    body = event["signed_body"]
    for name, value in changes.items():
        event[name] = value
        if name in body:
            body[name] = value
    if "ts_signed" in changes:
        event["timestamp"] = iso_ms(changes["ts_signed"])
    content = canonical_sha256(body)
    event["content_hash"] = content.hex()
    event["mutation_hash"] = commitments.event_link_hash(
        bytes.fromhex(event["prev_mutation_hash"]), content, event["nonce"], event["ts_signed"]
    ).hex()
    message = payload_message(body, event["nonce"], event["ts_signed"])
    event["signature_b64u"] = b64u_encode(HOUSEKEEPER_TEST_KEY.sign(message))


def housekeeper_epoch(trust_context: dict[str, Any]) -> dict[str, Any]:
    (body,) = [o["body"] for o in trust_context["objects"] if o["kind"] == "housekeeper_identity_epoch"]
    return dict(body)


def resigned_noop(**changes: Any) -> dict[str, Any]:
    """The valid signed no-op with its terminal event edited and re-signed, everything resealed."""
    vector: dict[str, Any] = copy.deepcopy(P2_MUTATION[VALID_NOOP])
    proof = vector["witness"]["terminal_proof"]["event"]
    resign_event(proof, **changes)
    vector["bundle"]["terminal"]["event"]["mutation_hash"] = proof["mutation_hash"]
    reseal(vector["bundle"], vector["witness"])
    return vector


# --- the 15 structural vectors ----------------------------------------------------------------------
@pytest.mark.parametrize("vector_id", list(STRUCTURAL))
def test_structural_vector(vector_id: str) -> None:
    vector = STRUCTURAL[vector_id]
    result = verify_mutation_bundle(vector["bundle"], structural_only=True)
    assert (result.verdict, result.reason) == (vector["expected"], vector["reason"]), result.detail
    assert result.signatures_verified == 0
    if vector["expected"] == "valid":
        assert result.detail is None and result.where is None
    else:
        assert result.reason in MUTATION_STRUCTURAL_CODES and result.where


def test_structural_vectors_cover_every_code_and_terminal() -> None:
    vectors = MUTATION_FILE["vectors"]
    assert len(vectors) == MUTATION_FILE["intended_n"] == 15
    valid = [v for v in vectors if v["expected"] == "valid"]
    invalid = [v for v in vectors if v["expected"] == "invalid"]
    assert (len(valid), len(invalid)) == (MUTATION_FILE["valid_n"], MUTATION_FILE["invalid_n"]) == (3, 12)
    assert sorted(v["reason"] for v in invalid) == sorted(MUTATION_STRUCTURAL_CODES)
    assert sorted(v["bundle"]["terminal"]["kind"] for v in valid) == sorted(v2m.TERMINAL_KINDS)


def test_structural_vector_without_witness_needs_one() -> None:
    """Outside structural_only the placeholder vectors stop at the missing witness."""
    for vector in STRUCTURAL.values():
        if vector["expected"] == "valid":
            result = verify_mutation_bundle(vector["bundle"])
            assert outcome(result) == ("invalid", "MUTATION_CRYPTOGRAPHIC_WITNESS_REQUIRED")


# --- the 10 P2 mutation crypto vectors ----------------------------------------------------------------
@pytest.mark.parametrize("vector_id", list(P2_MUTATION))
def test_p2_mutation_vector(vector_id: str) -> None:
    vector = P2_MUTATION[vector_id]
    result = full(vector)
    assert (result.verdict, result.reason) == (vector["expected"], vector["reason"]), result.detail
    trust = verify_recall_envelope(vector["trust_context"], vector["expected_master_fingerprint"])
    assert trust.verdict == "valid"
    if vector["expected"] == "valid":
        own = 4 if vector["bundle"]["terminal"]["kind"] == "authorized_transition" else 3
        assert result.signatures_verified == trust.signatures_verified + own
    else:
        assert result.reason in MUTATION_WITNESS_CODES


@pytest.mark.parametrize("vector_id", list(P2_MUTATION))
def test_p2_mutation_bundles_are_structurally_valid(vector_id: str) -> None:
    """Every P2 attack is in the witness or a signature: the bundles pass the 12 checks."""
    result = verify_mutation_bundle(P2_MUTATION[vector_id]["bundle"], structural_only=True)
    assert outcome(result) == ("valid", None), result.detail


def test_p2_mutation_vectors_cover_every_witness_failure() -> None:
    part = P2_FILE["mutation"]
    assert len(part["vectors"]) == part["intended_n"] == 10
    assert sum(v["expected"] == "valid" for v in part["vectors"]) == part["valid_n"] == 3
    reasons = {v["reason"] for v in part["vectors"] if v["expected"] == "invalid"}
    assert len(reasons) == part["invalid_n"] == 7
    assert reasons == set(MUTATION_WITNESS_CODES) - {"MUTATION_CRYPTOGRAPHIC_WITNESS_REQUIRED"}
    assert {v["expected_master_fingerprint"] for v in part["vectors"]} == {P2_MASTER_FINGERPRINT}


def test_p2_trust_context_is_the_valid_recall_envelope() -> None:
    recall_valid = P2_RECALL["P2-CRYPTO-RECALL-VALID"]["bundle"]
    for vector in P2_MUTATION.values():
        assert vector["trust_context"] == recall_valid
        assert vector["witness"]["trust_context_bundle_sha256"] == recall_valid["bundle_sha256"]


# --- the vector file's own commitments ----------------------------------------------------------------
def test_mutation_file_manifest_sha256() -> None:
    assert canonical_sha256_hex(without(MUTATION_FILE, "manifest_sha256")) == MUTATION_FILE["manifest_sha256"]


def test_mutation_file_vectors_root_and_summaries() -> None:
    summaries = MUTATION_FILE["summaries"]
    assert canonical_sha256_hex(summaries) == MUTATION_FILE["vectors_root_sha256"]
    assert len(summaries) == len(MUTATION_FILE["vectors"])
    for ordinal, (summary, vector) in enumerate(zip(summaries, MUTATION_FILE["vectors"], strict=True)):
        assert summary["ordinal"] == ordinal
        assert (summary["id"], summary["expected"], summary["reason"]) == (
            vector["id"],
            vector["expected"],
            vector["reason"],
        )
        # the summary hashes the whole vector bundle, not its domain-separated commitment
        assert canonical_sha256_hex(vector["bundle"]) == summary["bundle_sha256"], vector["id"]


def test_mutation_file_header_matches_protocol_manifest() -> None:
    profile = PROTOCOL_MANIFEST["mutation_profile"]
    assert MUTATION_FILE["schema"] == profile["vectors"]["schema"]
    assert MUTATION_FILE["canonicalization"] == vocabulary.CANONICAL_JSON_PROFILE
    assert (
        tuple(MUTATION_FILE["failure_codes"]) == tuple(profile["failure_codes"]) == MUTATION_STRUCTURAL_CODES
    )
    assert tuple(MUTATION_FILE["terminal_kinds"]) == tuple(profile["terminal_kinds"]) == v2m.TERMINAL_KINDS
    assert profile["schema"] == vocabulary.V2_MUTATION_BUNDLE_SCHEMA
    assert profile["native_outcome_schema"] == vocabulary.V2_MUTATION_OUTCOME_SCHEMA
    assert profile["domain_hex"] == vocabulary.V2_MUTATION_BUNDLE.hex()
    for name in ("vectors_root_sha256", "manifest_sha256", "intended_n", "valid_n", "invalid_n"):
        assert profile["vectors"][name] == MUTATION_FILE[name], name
    raw = (V2_DIR / "mutation-vectors.json").read_bytes()
    assert hashlib.sha256(raw).hexdigest() == profile["vectors"]["file_sha256"]


def test_bundle_commitments_recompute() -> None:
    """Every vector's bundle_sha256 recomputes, except the one vector built to break it."""
    bundles = [(v["id"], v["bundle"]) for v in MUTATION_FILE["vectors"]]
    bundles += [(v["id"], v["bundle"]) for v in P2_FILE["mutation"]["vectors"]]
    for vector_id, bundle in bundles:
        holds = bundle_hash(bundle) == bundle["bundle_sha256"]
        assert holds == (vector_id != "P1-MUT-CV-BUNDLE-COMMITMENT"), vector_id


def test_witness_commitments_recompute() -> None:
    for vector_id, vector in P2_MUTATION.items():
        witness = vector["witness"]
        assert (witness_hash(witness) == witness["witness_sha256"]) == (vector_id != "P2-CRYPTO-MUTATION-001")
        names_bundle = witness["mutation_bundle_sha256"] == vector["bundle"]["bundle_sha256"]
        assert names_bundle == (vector_id != "P2-CRYPTO-MUTATION-002"), vector_id


def test_transition_fixture_values() -> None:
    """1000 -> 1100 with prev_projection_hash = H("previous-projection") (PROTOCOL-NOTES section 6)."""
    projection = STRUCTURAL["P1-MUT-CV-VALID-TRANSITION"]["bundle"]["cognitive_projection"]
    assert (projection["old_weight_milli"], projection["new_weight_milli"]) == (1000, 1100)
    assert projection["prev_projection_hash"] == hashlib.sha256(b"previous-projection").hexdigest()
    assert b64u_decode(projection["transition_signature_b64u"]) == b"\x09" * 64


def test_housekeeper_test_key_is_the_trust_contexts() -> None:
    epoch = housekeeper_epoch(P2_MUTATION[VALID_NOOP]["trust_context"])
    assert HOUSEKEEPER_TEST_KEY.public_b64u == epoch["public_key_b64u"]


# --- closed vocabulary --------------------------------------------------------------------------------
def test_code_lists() -> None:
    assert len(MUTATION_STRUCTURAL_CODES) == len(set(MUTATION_STRUCTURAL_CODES)) == 12
    assert len(MUTATION_WITNESS_CODES) == len(set(MUTATION_WITNESS_CODES)) == 8
    assert MUTATION_WITNESS_CODES[:3] == (
        "MUTATION_CRYPTOGRAPHIC_WITNESS_REQUIRED",
        "MUTATION_CRYPTOGRAPHIC_WITNESS_COMMITMENT_INVALID",
        "MUTATION_CRYPTOGRAPHIC_WITNESS_SCOPE_INVALID",
    )
    assert not set(MUTATION_STRUCTURAL_CODES) & set(MUTATION_WITNESS_CODES)
    assert set(MUTATION_STRUCTURAL_CODES) | set(MUTATION_WITNESS_CODES) <= MUTATION_REASONS
    assert MUTATION_REASONS == (
        set(MUTATION_STRUCTURAL_CODES)
        | set(MUTATION_WITNESS_CODES)
        | RECALL_TRUST_CONTEXT_REASONS
        | {"MUTATION_TRUST_CONTEXT_INVALID", "MUTATION_VERIFIER_INTERNAL_ERROR"}
    )


def test_recall_reasons_are_the_reference_recall_codes() -> None:
    """Surfaced recall reasons: the manifest's 37 structural codes and the 7 P2 crypto codes."""
    structural = set(PROTOCOL_MANIFEST["failure_codes"])
    crypto = {v["reason"] for v in P2_FILE["recall"]["vectors"] if v["expected"] == "invalid"}
    assert (len(structural), len(crypto)) == (37, 7)
    assert structural | crypto == RECALL_TRUST_CONTEXT_REASONS


def test_module_declares_no_reason_outside_the_vocabulary() -> None:
    source = Path(mutation_words.__file__).read_text("utf-8")
    literals = set(re.findall(r'"(MUTATION_[A-Z_]+)"', source)) - set(v2m.__all__)
    assert literals and literals <= MUTATION_REASONS, literals - MUTATION_REASONS


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


MALFORMED: list[Any] = [
    None,
    [],
    "bundle",
    0,
    True,
    1.5,
    {},
    {"bundle_sha256": None},
    {"format": None},
    {"format": v2m.BUNDLE_FORMAT},
    {"format": v2m.BUNDLE_FORMAT, "bundle_sha256": "0" * 64},
    {1: 2},
    {"x": float("nan")},
    {"x": 2**60},
    {"x": {1, 2}},
    {"x": b"bytes"},
    {"x": nested(40)},
]


@pytest.mark.parametrize("bundle", MALFORMED, ids=[repr(b)[:40] for b in MALFORMED])
def test_malformed_bundles_get_a_closed_reason(bundle: Any) -> None:
    for structural_only in (True, False):
        result = verify_mutation_bundle(bundle, structural_only=structural_only)
        assert outcome(result) == ("invalid", "MUTATION_BUNDLE_COMMITMENT_INVALID")


@pytest.mark.parametrize("witness", MALFORMED[1:], ids=[repr(w)[:40] for w in MALFORMED[1:]])
def test_malformed_witnesses_get_a_closed_reason(witness: Any) -> None:
    result = full(P2_MUTATION[VALID_TRANSITION], witness=witness)
    assert outcome(result) == ("invalid", "MUTATION_CRYPTOGRAPHIC_WITNESS_COMMITMENT_INVALID")


@pytest.mark.parametrize("trust_context", MALFORMED[1:], ids=[repr(t)[:40] for t in MALFORMED[1:]])
def test_malformed_trust_contexts_get_a_closed_reason(trust_context: Any) -> None:
    result = full(P2_MUTATION[VALID_TRANSITION], trust_context=trust_context)
    assert result.verdict == "invalid"
    assert result.reason in RECALL_TRUST_CONTEXT_REASONS | {"MUTATION_TRUST_CONTEXT_INVALID"}
    assert result.where == "trust_context"


# --- the witness path, case by case ----------------------------------------------------------------------
@pytest.mark.parametrize("missing", ["witness", "trust_context"])
def test_missing_witness_or_trust_context(missing: str) -> None:
    result = full(P2_MUTATION[VALID_TRANSITION], **{missing: None})
    assert outcome(result) == ("invalid", "MUTATION_CRYPTOGRAPHIC_WITNESS_REQUIRED")
    assert result.where == missing and result.signatures_verified == 0


def test_structural_failure_comes_before_the_witness() -> None:
    result = verify_mutation_bundle(STRUCTURAL["P1-MUT-CV-004"]["bundle"])
    assert outcome(result) == ("invalid", "MUTATION_VALENCE_BINDING_INVALID")


@pytest.mark.parametrize("fingerprint", [None, "", "zz", hashlib.sha256(b"wrong-master").hexdigest()])
def test_trust_context_under_another_fingerprint(fingerprint: str | None) -> None:
    """The recall verifier's reason surfaces unprefixed, located at the trust context."""
    result = full(P2_MUTATION[VALID_TRANSITION], expected_master_fingerprint=fingerprint)
    assert outcome(result) == ("invalid", "EXPECTED_TRUST_ANCHOR_REQUIRED")
    assert result.where == "trust_context"


@pytest.mark.parametrize("recall_id", [i for i, v in P2_RECALL.items() if v["expected"] == "invalid"])
def test_broken_trust_context_surfaces_the_recall_reason(recall_id: str) -> None:
    recall = P2_RECALL[recall_id]
    result = full(
        P2_MUTATION[VALID_NOOP],
        trust_context=recall["bundle"],
        expected_master_fingerprint=recall["expected_master_fingerprint"],
    )
    assert outcome(result) == ("invalid", recall["reason"])
    assert result.where == "trust_context"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("trust_context_bundle_sha256", "ab" * 32),
        ("expected_master_fingerprint", hashlib.sha256(b"wrong-master").hexdigest()),
    ],
)
def test_witness_scope(field: str, value: str) -> None:
    vector = copy.deepcopy(P2_MUTATION[VALID_TRANSITION])
    vector["witness"][field] = value
    vector["witness"]["witness_sha256"] = witness_hash(vector["witness"])
    assert outcome(full(vector)) == ("invalid", "MUTATION_CRYPTOGRAPHIC_WITNESS_SCOPE_INVALID")


def test_witness_of_another_terminal_kind() -> None:
    transition = copy.deepcopy(P2_MUTATION[VALID_TRANSITION])
    noop = copy.deepcopy(P2_MUTATION[VALID_NOOP])
    transition["witness"]["terminal_proof"], noop["witness"]["terminal_proof"] = (
        noop["witness"]["terminal_proof"],
        transition["witness"]["terminal_proof"],
    )
    for vector in (transition, noop):
        vector["witness"]["witness_sha256"] = witness_hash(vector["witness"])
    assert outcome(full(transition)) == ("invalid", "MUTATION_PROVENANCE_SIGNATURE_INVALID")
    assert outcome(full(noop)) == ("invalid", "MUTATION_TERMINAL_SIGNATURE_INVALID")


def test_witness_replayed_onto_another_bundle() -> None:
    """A noop witness resealed to name the observation bundle: its proofs do not fit."""
    observation = copy.deepcopy(P2_MUTATION[VALID_OBSERVATION])
    witness = copy.deepcopy(P2_MUTATION[VALID_NOOP]["witness"])
    reseal(observation["bundle"], witness)
    assert outcome(full(observation, witness=witness)) == (
        "invalid",
        "MUTATION_OUTCOME_EVENT_SIGNATURE_INVALID",
    )


def test_resigned_terminal_event_inside_the_epoch_verifies() -> None:
    """The re-signing helper is faithful: an in-epoch re-signed event passes."""
    vector = resigned_noop(
        ts_signed=P2_MUTATION[VALID_NOOP]["witness"]["terminal_proof"]["event"]["ts_signed"] + 7
    )
    assert outcome(full(vector)) == ("valid", None)


def test_terminal_event_signed_outside_the_housekeeper_epoch() -> None:
    """aimos (stricter than the reference): a validly signed event after the epoch ends fails."""
    epoch = housekeeper_epoch(P2_MUTATION[VALID_NOOP]["trust_context"])
    vector = resigned_noop(ts_signed=parse_iso_ms(epoch["valid_until"]) + 1)
    result = full(vector)
    assert outcome(result) == ("invalid", "MUTATION_TERMINAL_SIGNATURE_INVALID")
    assert result.detail is not None and "epoch" in result.detail


def test_terminal_event_signed_for_another_company() -> None:
    """aimos (stricter than the reference): the signed event must carry the bundle's company."""
    vector = resigned_noop(company_id="other-co")
    result = full(vector)
    assert outcome(result) == ("invalid", "MUTATION_TERMINAL_SIGNATURE_INVALID")
    assert result.detail is not None and "company" in result.detail


def test_unsigned_reward_sign_must_match_the_signed_body() -> None:
    """aimos (stricter than the reference): flipping the row's unsigned reward_sign is caught."""
    vector = copy.deepcopy(P2_MUTATION[VALID_NOOP])
    vector["bundle"]["valence_evidence"]["reward_sign"] = -1
    vector["witness"]["valence_evidence"]["reward_sign"] = -1
    reseal(vector["bundle"], vector["witness"])
    assert outcome(full(vector)) == ("invalid", "MUTATION_VALENCE_BINDING_INVALID")


@pytest.mark.parametrize(
    ("path", "value", "reason"),
    [
        (
            ("outcome_event", "signer_valid_until"),
            "2027-01-01T00:00:00.000Z",
            "MUTATION_OUTCOME_EVENT_SIGNATURE_INVALID",
        ),
        (("valence_evidence", "identity_tier"), "T3", "MUTATION_VALENCE_SIGNATURE_INVALID"),
        (("terminal_proof", "provenance", "is_genesis"), True, "MUTATION_PROVENANCE_SIGNATURE_INVALID"),
        (
            ("terminal_proof", "provenance", "agent_valid_until"),
            None,
            "MUTATION_PROVENANCE_SIGNATURE_INVALID",
        ),
    ],
)
def test_unsigned_restatements_must_agree(path: tuple[str, ...], value: Any, reason: str) -> None:
    """aimos (stricter than the reference): an unsigned field restating a signed or trusted one."""
    vector = copy.deepcopy(P2_MUTATION[VALID_TRANSITION])
    node = vector["witness"]
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    vector["witness"]["witness_sha256"] = witness_hash(vector["witness"])
    assert outcome(full(vector)) == ("invalid", reason)


def test_bundle_id_is_required() -> None:
    bundle = copy.deepcopy(STRUCTURAL["P1-MUT-CV-VALID-NOOP"]["bundle"])
    del bundle["bundle_id"]
    reseal(bundle)
    result = verify_mutation_bundle(bundle, structural_only=True)
    assert (outcome(result), result.where) == (
        ("invalid", "MUTATION_BUNDLE_COMMITMENT_INVALID"),
        "bundle.bundle_id",
    )


def test_verdict_serializes() -> None:
    result = full(P2_MUTATION[VALID_OBSERVATION])
    data = result.to_json()
    assert data["verdict"] == "valid" and data["reason"] is None
    json.dumps(data)


# --- fuzz: mutate the valid transition bundle and its witness ------------------------------------------------
JsonPath = tuple[str | int, ...]


def leaf_paths(value: Any, prefix: JsonPath = ()) -> list[JsonPath]:
    if isinstance(value, dict) and value:
        return [p for k, v in value.items() for p in leaf_paths(v, (*prefix, k))]
    if isinstance(value, list) and value:
        return [p for i, v in enumerate(value) for p in leaf_paths(v, (*prefix, i))]
    return [prefix]


def key_paths(value: Any, prefix: JsonPath = ()) -> list[JsonPath]:
    """Every path that ends in an object key (deletable)."""
    found: list[JsonPath] = []
    if isinstance(value, dict):
        for k, v in value.items():
            found.append((*prefix, k))
            found += key_paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += key_paths(v, (*prefix, i))
    return found


def parent_of(document: Any, path: JsonPath) -> Any:
    node = document
    for step in path[:-1]:
        node = node[step]
    return node


JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=70)
    | st.sampled_from(["", "0" * 64, "AB" * 32, "11111111-1111-4111-8111-111111111111", "REWEIGHT", "hom"])
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
BASE_BUNDLE = STRUCTURAL["P1-MUT-CV-VALID-TRANSITION"]["bundle"]
BUNDLE_LEAVES = leaf_paths(BASE_BUNDLE)
BUNDLE_KEYS = key_paths(BASE_BUNDLE)
BASE_WITNESS = P2_MUTATION[VALID_TRANSITION]["witness"]
WITNESS_LEAVES = leaf_paths(BASE_WITNESS)
WITNESS_KEYS = key_paths(BASE_WITNESS)


def mutate(document: Any, data: st.DataObject, leaves: list[JsonPath], keys: list[JsonPath]) -> Any:
    mutated = copy.deepcopy(document)
    if data.draw(st.booleans(), label="delete"):
        path = data.draw(st.sampled_from(keys), label="delete at")
        del parent_of(mutated, path)[path[-1]]
    else:
        path = data.draw(st.sampled_from(leaves), label="replace at")
        value = data.draw(JSON_VALUES, label="new value")
        if path:
            parent_of(mutated, path)[path[-1]] = value
        else:
            mutated = value
    return mutated


def try_reseal(document: Any, field: str, domain: bytes) -> None:
    if isinstance(document, dict):
        try:
            document[field] = hashlib.sha256(domain + canonical_json(without(document, field))).hexdigest()
        except AimosError:
            pass  # does not canonicalize: left as is, the commitment check answers


@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data(), resealed=st.booleans())
def test_fuzz_mutated_transition_bundle(data: st.DataObject, resealed: bool) -> None:
    bundle = mutate(BASE_BUNDLE, data, BUNDLE_LEAVES, BUNDLE_KEYS)
    if resealed:  # reach past the commitment check: reseal the receipt binding and the bundle hash
        if isinstance(bundle, dict):
            try:
                bundle["recall_evidence_sha256"] = canonical_sha256_hex(bundle.get("recall_receipt"))
            except AimosError:
                pass
        try_reseal(bundle, "bundle_sha256", vocabulary.V2_MUTATION_BUNDLE)
    result = verify_mutation_bundle(bundle, structural_only=True)
    assert result.verdict in ("valid", "invalid"), result.detail
    assert (result.reason is None) == (result.verdict == "valid")
    if result.reason is not None:
        assert result.reason in MUTATION_STRUCTURAL_CODES, result.reason
    full_result = verify_mutation_bundle(bundle)
    assert full_result.reason in MUTATION_REASONS and full_result.reason != "MUTATION_VERIFIER_INTERNAL_ERROR"


@settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_fuzz_mutated_transition_witness(data: st.DataObject) -> None:
    vector = P2_MUTATION[VALID_TRANSITION]
    witness = mutate(BASE_WITNESS, data, WITNESS_LEAVES, WITNESS_KEYS)
    try_reseal(witness, "witness_sha256", vocabulary.V2_MUTATION_WITNESS)
    result = full(vector, witness=witness)
    assert result.verdict in ("valid", "invalid"), result.detail
    assert (result.reason is None) == (result.verdict == "valid")
    if result.reason is not None:
        assert result.reason in MUTATION_REASONS, result.reason
        assert result.reason != "MUTATION_VERIFIER_INTERNAL_ERROR", result.detail
