"""The crypto kernel against the reference's P2 recall crypto vectors (real Ed25519 signatures).

``P2-CRYPTO-RECALL-VALID`` is recomputed piece by piece: V2 object hashes, object root, bundle hash,
certificates, the master grant, the request envelope and receipt, the native receipt's event
receipt and Merkle root, and the occurrence v3 commitment and signature. The seven attack vectors
must each break exactly the one check their reason names.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from aimos.crypto import commitments, messages
from aimos.crypto.canonical import canonical_sha256, canonical_sha256_hex
from aimos.crypto.certs import parse_certificate, verify_certificate
from aimos.crypto.ed25519 import KeyPair, fingerprint_of_b64u, verify
from aimos.crypto.encoding import b64u_decode, parse_iso_ms
from aimos.crypto.merkle import merkle_root
from aimos.errors import AimosError
from aimos.vocabulary import MASTER_ISSUER

VALID_ID = "P2-CRYPTO-RECALL-VALID"
P2_MASTER_FINGERPRINT = "8c12a6d2a41305c434bdbb4d1e1bf7d477d43985c4d568786ea1fb3980f53cfd"
OBJECT_ROOT_FIELDS = ("ordinal", "kind", "schema", "subject_id", "result_ordinal", "body_sha256")

# reason of each attack vector -> the one recomputed check it breaks.
ATTACKS = {
    "EXPECTED_TRUST_ANCHOR_REQUIRED": "trust_anchor",
    "ACTOR_CERTIFICATE_SIGNATURE_INVALID": "actor_certificate",
    "HOUSEKEEPER_CERTIFICATE_SIGNATURE_INVALID": "housekeeper_certificate",
    "MASTER_GRANT_SIGNATURE_INVALID": "grant_signature",
    "ACTOR_REQUEST_SIGNATURE_INVALID": "request_signature",
    "HOUSEKEEPER_EVENT_SIGNATURE_INVALID": "event_signature",
    "HOUSEKEEPER_OCCURRENCE_SIGNATURE_INVALID": "occurrence_signature",
}


def _objects(bundle: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Singleton objects by kind (the VALID bundle has result_count 1, so every kind is unique)."""
    by_kind = {o["kind"]: o["body"] for o in bundle["objects"]}
    assert len(by_kind) == len(bundle["objects"])
    return by_kind


def _vector(p2: dict[str, Any], vector_id: str) -> dict[str, Any]:
    matches: list[dict[str, Any]] = [v for v in p2["recall"]["vectors"] if v["id"] == vector_id]
    (vector,) = matches
    return vector


def object_root(bundle: dict[str, Any]) -> bytes:
    return merkle_root([{f: o[f] for f in OBJECT_ROOT_FIELDS} for o in bundle["objects"]])


def occurrence_commitment(native: dict[str, Any]) -> bytes:
    """The occurrence v3 commitment from an occurrence object's ``native_body``."""
    return commitments.occurrence_v3_commitment(
        company_id=native["company_id"],
        occurrence_event_id=native["occurrence_event_id"],
        memory_id=native["memory_id"],
        event_type=native["event_type"],
        live_hash=bytes.fromhex(native["live_content_hash_hex"]),
        predecessor=(
            bytes.fromhex(native["predecessor_commitment_hex"]) if native["predecessor_present"] else None
        ),
        agent_id=native["agent_id"],
        signer_valid_from_ms=native["signer_valid_from_unix_ms"],
        cert_fingerprint=bytes.fromhex(native["cert_fingerprint_hex"]),
        identity_tier=native["identity_tier"],
        sig_form_version=native["sig_form_version"],
        nonce=bytes.fromhex(native["nonce_hex"]),
        ts_signed=native["ts_signed_unix_seconds"],
        signed_method=native["signed_method"],
        signed_path=native["signed_path"],
        request_body_hash=bytes.fromhex(native["request_body_hash_hex"]),
        request_receipt_mutation_hash=(
            bytes.fromhex(native["request_receipt_mutation_hash_hex"])
            if native["request_receipt_present"]
            else None
        ),
        authorization_event_id=(
            native["authorization_event_id"] if native["authorization_event_present"] else None
        ),
    )


def _certificate_ok(epoch: dict[str, Any], master_key: str, master_fp: str, at: int) -> bool:
    try:
        cert = parse_certificate(epoch["certificate"])
        verify_certificate(cert, master_key, at=at, accepted_issuers=(MASTER_ISSUER, master_fp))
    except AimosError:
        return False
    return (
        cert.agent_id == epoch["agent_id"]
        and cert.pubkey == epoch["public_key_b64u"]
        and cert.valid_from == parse_iso_ms(epoch["valid_from"])
        and cert.valid_until == parse_iso_ms(epoch["valid_until"])
        and cert.fingerprint == epoch["cert_fingerprint"]
    )


def recall_checks(vector: dict[str, Any]) -> dict[str, bool]:
    """Every recomputation over one P2 recall vector, by name."""
    bundle = vector["bundle"]
    obj = _objects(bundle)
    anchor = obj["trust_anchor"]
    master_key = anchor["master_public_key_b64u"]
    master_fp = anchor["master_fingerprint"]
    actor = obj["actor_identity_epoch"]
    housekeeper = obj["housekeeper_identity_epoch"]
    grant = obj["effective_recall_grant"]
    envelope = obj["request_envelope"]
    receipt = obj["request_receipt"]
    native = obj["native_recall_receipt"]
    event = native["event_receipt"]
    occurrence = obj["occurrence"]
    checks: dict[str, bool] = {}

    checks["object_hashes"] = all(
        commitments.v2_object_hash(o["kind"], o["schema"], o["body"]).hex() == o["body_sha256"]
        for o in bundle["objects"]
    )
    root = object_root(bundle)
    checks["object_root"] = root.hex() == bundle["object_root_sha256"]
    checks["bundle_hash"] = (
        commitments.v2_bundle_hash(
            bundle["bundle_id"],
            bundle["company_id"],
            bytes.fromhex(bundle["expected_master_fingerprint"]),
            bundle["result_count"],
            root,
        ).hex()
        == bundle["bundle_sha256"]
    )
    checks["trust_anchor"] = (
        fingerprint_of_b64u(master_key)
        == master_fp
        == bundle["expected_master_fingerprint"]
        == vector["expected_master_fingerprint"]
    )
    checks["actor_certificate"] = _certificate_ok(actor, master_key, master_fp, envelope["ts_signed"])
    checks["housekeeper_certificate"] = _certificate_ok(
        housekeeper, master_key, master_fp, event["ts_signed"]
    )

    grant_content = canonical_sha256(grant["signed_body"])
    checks["grant_content_hash"] = grant_content.hex() == grant["content_hash"]
    prev = grant["prev_mutation_hash"]
    checks["grant_mutation_hash"] = (
        commitments.recall_authorization_mutation_hash(
            None if prev is None else bytes.fromhex(prev),
            grant_content,
            grant["nonce"],
            grant["ts_signed"],
        ).hex()
        == grant["mutation_hash"]
    )
    checks["grant_signature"] = verify(
        master_key,
        messages.payload_message(grant["signed_body"], grant["nonce"], grant["ts_signed"]),
        b64u_decode(grant["signature_b64u"]),
    )

    checks["request_body_hash"] = (
        canonical_sha256_hex(envelope["request_body"])
        == envelope["request_body_hash"]
        == envelope["outer_request_hash"]
        == receipt["request_hash"]
    )
    checks["command_hash"] = canonical_sha256_hex(envelope["normalized_command"]) == envelope["command_hash"]
    checks["request_signature"] = verify(
        actor["public_key_b64u"],
        messages.request_message(
            envelope["request_body"],
            envelope["signed_method"],
            envelope["signed_path"],
            envelope["nonce"],
            envelope["ts_signed"],
        ),
        b64u_decode(envelope["signature_b64u"]),
    )
    claims = receipt["signed_claims"]
    checks["request_receipt_mutation_hash"] = (
        commitments.request_receipt_mutation_hash(
            None if receipt["prev_mutation_hash"] is None else bytes.fromhex(receipt["prev_mutation_hash"]),
            bytes.fromhex(receipt["request_hash"]),
            None if claims is None else canonical_sha256(claims),
            b64u_decode(receipt["signature_b64u"]),
            receipt["signed_method"],
            receipt["signed_path"],
            receipt["nonce"],
            receipt["ts_signed"],
        ).hex()
        == receipt["mutation_hash"]
    )

    event_content = canonical_sha256(event["signed_body"])
    checks["event_content_hash"] = event_content.hex() == event["content_hash"]
    checks["event_mutation_hash"] = (
        commitments.event_link_hash(
            bytes.fromhex(event["prev_mutation_hash"]),
            event_content,
            event["nonce"],
            event["ts_signed"],
        ).hex()
        == event["mutation_hash"]
    )
    checks["event_signature"] = verify(
        housekeeper["public_key_b64u"],
        messages.payload_message(event["signed_body"], event["nonce"], event["ts_signed"]),
        b64u_decode(event["signature_b64u"]),
    )
    receipt_root = merkle_root(native["merkle_entries"]).hex()
    checks["native_merkle_root"] = (
        receipt_root == native["merkle_root"] == event["signed_body"]["metadata"]["merkle_root"]
    )

    commitment = occurrence_commitment(occurrence["native_body"])
    checks["occurrence_commitment"] = (
        commitment.hex() == occurrence["occurrence_ref"] == occurrence["native_body"]["occurrence_commitment"]
    )
    checks["occurrence_signature"] = occurrence["signer_certificate"] == housekeeper[
        "certificate"
    ] and verify(
        housekeeper["public_key_b64u"],
        commitments.occurrence_v3_signature_message(commitment),
        b64u_decode(occurrence["signature_b64u"]),
    )
    return checks


@pytest.fixture(scope="module")
def valid(p2_vectors: dict[str, Any]) -> dict[str, Any]:
    vector: dict[str, Any] = p2_vectors["recall"]["vectors"][0]
    assert vector["id"] == VALID_ID
    assert vector["expected"] == "valid"
    return vector


@pytest.fixture(scope="module")
def objects(valid: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return _objects(valid["bundle"])


# --- P2-CRYPTO-RECALL-VALID, piece by piece ---------------------------------------------------
def test_object_hashes(valid: dict[str, Any]) -> None:
    objects = valid["bundle"]["objects"]
    assert len(objects) == valid["bundle"]["object_count"] == 18
    for o in objects:
        assert commitments.v2_object_hash(o["kind"], o["schema"], o["body"]).hex() == o["body_sha256"], o[
            "kind"
        ]


def test_object_root_and_bundle_hash(valid: dict[str, Any]) -> None:
    bundle = valid["bundle"]
    root = object_root(bundle)
    assert root.hex() == bundle["object_root_sha256"]
    bundle_hash = commitments.v2_bundle_hash(
        bundle["bundle_id"],
        bundle["company_id"],
        bytes.fromhex(bundle["expected_master_fingerprint"]),
        bundle["result_count"],
        root,
    )
    assert bundle_hash.hex() == bundle["bundle_sha256"]


def test_trust_anchor_fingerprint(valid: dict[str, Any], objects: dict[str, dict[str, Any]]) -> None:
    anchor = objects["trust_anchor"]
    assert fingerprint_of_b64u(anchor["master_public_key_b64u"]) == anchor["master_fingerprint"]
    assert anchor["master_fingerprint"] == valid["expected_master_fingerprint"] == P2_MASTER_FINGERPRINT


@pytest.mark.parametrize("label", ["master", "actor", "housekeeper"])
def test_public_test_key_seeds(label: str, objects: dict[str, dict[str, Any]]) -> None:
    """seed = SHA-256("HOM-AIMOS-P2-PUBLIC-TEST-KEY:" + label) gives the vectors' public keys."""
    key = KeyPair(hashlib.sha256(f"HOM-AIMOS-P2-PUBLIC-TEST-KEY:{label}".encode()).digest())
    published = {
        "master": objects["trust_anchor"]["master_public_key_b64u"],
        "actor": objects["actor_identity_epoch"]["public_key_b64u"],
        "housekeeper": objects["housekeeper_identity_epoch"]["public_key_b64u"],
    }[label]
    assert key.public_b64u == published
    if label == "master":
        assert key.fingerprint == P2_MASTER_FINGERPRINT


@pytest.mark.parametrize("kind", ["actor_identity_epoch", "housekeeper_identity_epoch"])
def test_certificates(kind: str, objects: dict[str, dict[str, Any]]) -> None:
    epoch = objects[kind]
    master_key = objects["trust_anchor"]["master_public_key_b64u"]
    cert = parse_certificate(epoch["certificate"])
    verify_certificate(cert, master_key)  # raises on failure
    assert cert.body["issuer"] == MASTER_ISSUER
    assert cert.fingerprint == epoch["cert_fingerprint"]
    assert cert.agent_id == epoch["agent_id"]
    assert cert.pubkey == epoch["public_key_b64u"]
    assert cert.valid_from == parse_iso_ms(epoch["valid_from"])
    assert cert.valid_until == parse_iso_ms(epoch["valid_until"])


def test_master_grant(objects: dict[str, dict[str, Any]]) -> None:
    grant = objects["effective_recall_grant"]
    content = canonical_sha256(grant["signed_body"])
    assert content.hex() == grant["content_hash"]
    assert grant["prev_mutation_hash"] is None  # the genesis grant: prev enters as 32 zero bytes
    mutation = commitments.recall_authorization_mutation_hash(
        None, content, grant["nonce"], grant["ts_signed"]
    )
    assert mutation.hex() == grant["mutation_hash"]
    message = messages.payload_message(grant["signed_body"], grant["nonce"], grant["ts_signed"])
    master_key = objects["trust_anchor"]["master_public_key_b64u"]
    assert verify(master_key, message, b64u_decode(grant["signature_b64u"]))
    # the native receipt binds the grant's mutation hash as its authority
    assert objects["native_recall_receipt"]["authority_mutation_hash"] == grant["mutation_hash"]


def test_request_envelope(objects: dict[str, dict[str, Any]]) -> None:
    envelope = objects["request_envelope"]
    assert (envelope["request_sig_form"], envelope["signed_method"], envelope["signed_path"]) == (
        3,
        "POST",
        "/aimos/recall",
    )
    message = messages.request_message(
        envelope["request_body"], "POST", "/aimos/recall", envelope["nonce"], envelope["ts_signed"]
    )
    actor_key = objects["actor_identity_epoch"]["public_key_b64u"]
    assert verify(actor_key, message, b64u_decode(envelope["signature_b64u"]))
    assert canonical_sha256_hex(envelope["request_body"]) == envelope["request_body_hash"]
    assert canonical_sha256_hex(envelope["normalized_command"]) == envelope["command_hash"]


def test_request_receipt_mutation_hash(objects: dict[str, dict[str, Any]]) -> None:
    receipt = objects["request_receipt"]
    assert receipt["signed_claims"] is None and receipt["signed_claims_hash"] is None
    assert receipt["request_hash"] == objects["request_envelope"]["request_body_hash"]
    mutation = commitments.request_receipt_mutation_hash(
        bytes.fromhex(receipt["prev_mutation_hash"]),
        bytes.fromhex(receipt["request_hash"]),
        None,
        b64u_decode(receipt["signature_b64u"]),
        receipt["signed_method"],
        receipt["signed_path"],
        receipt["nonce"],
        receipt["ts_signed"],
    )
    assert mutation.hex() == receipt["mutation_hash"]
    assert objects["native_recall_receipt"]["request_receipt_mutation_hash"] == receipt["mutation_hash"]


def test_native_receipt_event_receipt(objects: dict[str, dict[str, Any]]) -> None:
    event = objects["native_recall_receipt"]["event_receipt"]
    housekeeper = objects["housekeeper_identity_epoch"]
    content = canonical_sha256(event["signed_body"])
    assert content.hex() == event["content_hash"]
    mutation = commitments.event_link_hash(
        bytes.fromhex(event["prev_mutation_hash"]), content, event["nonce"], event["ts_signed"]
    )
    assert mutation.hex() == event["mutation_hash"]
    message = messages.payload_message(event["signed_body"], event["nonce"], event["ts_signed"])
    assert verify(housekeeper["public_key_b64u"], message, b64u_decode(event["signature_b64u"]))
    assert event["signer_certificate"] == housekeeper["certificate"]
    # the revocation states are evaluated at this event
    assert objects["actor_revocation_state"]["source_event_mutation_hash"] == event["mutation_hash"]


def test_native_receipt_merkle_root(objects: dict[str, dict[str, Any]]) -> None:
    native = objects["native_recall_receipt"]
    assert len(native["merkle_entries"]) == 3
    root = merkle_root(native["merkle_entries"]).hex()
    assert root == native["merkle_root"]
    assert root == native["event_receipt"]["signed_body"]["metadata"]["merkle_root"]


def test_occurrence_v3(objects: dict[str, dict[str, Any]]) -> None:
    occurrence = objects["occurrence"]
    native = occurrence["native_body"]
    housekeeper = objects["housekeeper_identity_epoch"]
    commitment = occurrence_commitment(native)
    assert commitment.hex() == occurrence["occurrence_ref"] == native["occurrence_commitment"]
    message = commitments.occurrence_v3_signature_message(commitment)
    assert message == b"hom.aimos.memory-occurrence-signature/v3\x00" + commitment
    assert verify(housekeeper["public_key_b64u"], message, b64u_decode(occurrence["signature_b64u"]))
    # the occurrence is bound to the housekeeper epoch that signed it
    cert = parse_certificate(occurrence["signer_certificate"])
    assert native["cert_fingerprint_hex"] == cert.fingerprint == housekeeper["cert_fingerprint"]
    assert native["signer_valid_from_unix_ms"] == cert.valid_from * 1000
    assert native["ts_signed_unix_seconds"] >= cert.valid_from


def test_occurrence_commitment_covers_every_field(objects: dict[str, dict[str, Any]]) -> None:
    """Changing any one native_body input changes the commitment (no field is dropped)."""
    native = objects["occurrence"]["native_body"]
    base = occurrence_commitment(native)
    changes: dict[str, Any] = {
        "company_id": "hom2",
        "occurrence_event_id": "33333333-3333-4333-8333-333333333334",
        "memory_id": "11111111-1111-4111-8111-111111111112",
        "event_type": "SAVE",
        "live_content_hash_hex": "00" * 32,
        "predecessor_present": 0,
        "predecessor_commitment_hex": "00" * 32,
        "agent_id": "housekeeper2",
        "signer_valid_from_unix_ms": native["signer_valid_from_unix_ms"] + 1,
        "cert_fingerprint_hex": "00" * 32,
        "identity_tier": "T2",
        "nonce_hex": "22" * 16,
        "ts_signed_unix_seconds": native["ts_signed_unix_seconds"] + 1,
        "signed_method": "PUT",
        "signed_path": "/aimos/recall",
        "request_body_hash_hex": "00" * 32,
        "request_receipt_present": 0,
        "request_receipt_mutation_hash_hex": "00" * 32,
        "authorization_event_present": 0,
        "authorization_event_id": "44444444-4444-4444-8444-444444444445",
    }
    for field, value in changes.items():
        assert occurrence_commitment({**native, field: value}) != base, field


def test_signature_count(valid: dict[str, Any]) -> None:
    """2 certificates + master grant + request + event + n occurrences = 6 signatures for n = 1."""
    checks = recall_checks(valid)
    signature_checks = [
        "actor_certificate",
        "housekeeper_certificate",
        "grant_signature",
        "request_signature",
        "event_signature",
        "occurrence_signature",
    ]
    assert len(signature_checks) == 2 + 1 + 1 + 1 + valid["bundle"]["result_count"]
    assert all(checks[name] for name in signature_checks)


# --- every recall vector: valid passes everything, each attack breaks exactly its check --------
def test_recall_vector(p2_vectors: dict[str, Any], p2_recall_id: str) -> None:
    vector = _vector(p2_vectors, p2_recall_id)
    failed = {name for name, ok in recall_checks(vector).items() if not ok}
    if vector["expected"] == "valid":
        assert failed == set()
    else:
        assert failed == {ATTACKS[vector["reason"]]}


def test_attack_001_supplies_hash_of_wrong_master(p2_vectors: dict[str, Any]) -> None:
    vector = _vector(p2_vectors, "P2-CRYPTO-RECALL-001")
    assert vector["expected_master_fingerprint"] == hashlib.sha256(b"wrong-master").hexdigest()
