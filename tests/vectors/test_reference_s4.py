"""The crypto kernel against the reference's 18 focused V2-S4 cognitive fixtures.

Every hash and signature a fixture carries is recomputed with ``aimos.crypto`` and compared with
the stored value. Each comparison is a named check; a valid fixture must pass them all, and each
invalid fixture must fail exactly the checks its tampering breaks (the tampering was established by
diffing each invalid fixture against its valid sibling; see ``TAMPERED``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from aimos.crypto import commitments, messages
from aimos.crypto.canonical import canonical_sha256_hex
from aimos.crypto.certs import parse_certificate, verify_certificate
from aimos.crypto.ed25519 import fingerprint_of_b64u, verify
from aimos.crypto.encoding import float4_be, iso_ms
from aimos.errors import AimosError
from aimos.vocabulary import MASTER_ISSUER

# vector id -> the checks that fail, and why (each established against the valid sibling).
TAMPERED: dict[str, tuple[set[str], str]] = {
    "S4-CV-008": (
        {"m0.p0.transition_signature"},
        "first signature byte of S4-CV-005's transition signature replaced by 00",
    ),
    "S4-CV-009": (
        {"m0.p0.content_hash"},
        "stored provenance content_hash altered (first byte ed -> 00); body, mutation hash and "
        "signature untouched",
    ),
    "S4-CV-010": (
        {"m0.terminal_weight"},
        "memory retrieval weight 1200 while the chain ends at 1300",
    ),
    "S4-CV-011": (
        {"m0.p1.continuity", "m0.p1.projection_hash", "m0.p1.transition_hash"},
        "second projection's old weight 1300 -> 1200; stored h_1 / t_1 (and their signature) are S4-CV-006's",
    ),
    "S4-CV-012": (
        {"m0.p1.chain_link", "m0.p1.projection_hash"},
        "second projection's previous_projection_hash set to null (a second genesis)",
    ),
    "S4-CV-013": (
        {"m0.p2.chain_link", "m0.p2.projection_hash"},
        "third projection links to h_0 instead of h_1 (a fork)",
    ),
    "S4-CV-014": (
        {"m0.p1.chain_link", "m0.p1.projection_hash"},
        "second projection links to ab..ab, a hash of no projection (disconnected)",
    ),
    "S4-CV-015": (set(), "format.version is 2 (structural: no hash or signature is involved)"),
    "S4-CV-016": (set(), "unknown top-level critical_extension (structural)"),
    "S4-CV-017": ({"master_fingerprint"}, "master_identity.fingerprint is 00..00"),
    "S4-CV-018": (
        {"e0.ev0.certificate"},
        "housekeeper certificate issuer 'unexpected-root' (its signature is the master's)",
    ),
}


def _h(text: str | None) -> bytes | None:
    return None if text is None else bytes.fromhex(text)


def _hh(text: str) -> bytes:
    return bytes.fromhex(text)


def _certificate_check(
    certificate: str, *, agent_id: str, pubkey: str, master_key: str, master_fp: str, at: int
) -> bool:
    """Parse + verify: self-signed when issuer == agent_id, else under the master key."""
    try:
        cert = parse_certificate(certificate)
        if cert.body["issuer"] == agent_id:
            verify_certificate(cert, pubkey, at=at, accepted_issuers=(agent_id,))
        else:
            verify_certificate(cert, master_key, at=at, accepted_issuers=(MASTER_ISSUER, master_fp))
    except AimosError:
        return False
    return cert.agent_id == agent_id and cert.pubkey == pubkey


def _projection_checks(
    prefix: str, index: int, p: dict[str, Any], prior: dict[str, Any] | None, master: dict[str, Any]
) -> dict[str, bool]:
    prov = p["provenance"]
    identity = prov["identity"]
    pubkey = identity["pubkey_b64u"]
    checks: dict[str, bool] = {}

    content = commitments.provenance_content_hash(prov["body"])
    checks["content_hash"] = content.hex() == prov["content_hash"]
    mutation = commitments.provenance_mutation_hash(
        content, _h(prov["previous_mutation_hash"]), prov["nonce"], prov["signed_at"]
    )
    checks["mutation_hash"] = mutation.hex() == prov["mutation_hash"]
    expected_prev_mutation = None if prior is None else prior["provenance"]["mutation_hash"]
    checks["provenance_link"] = prov["previous_mutation_hash"] == expected_prev_mutation
    checks["sigma"] = p["provenance_mutation_hash"] == prov["mutation_hash"]

    checks["certificate"] = _certificate_check(
        identity["certificate_b64u"],
        agent_id=prov["signer_agent_id"],
        pubkey=pubkey,
        master_key=master["public_key_b64u"],
        master_fp=master["fingerprint"],
        at=prov["signed_at"],
    )
    checks["certificate_fingerprint"] = (
        hashlib.sha256(identity["certificate_b64u"].encode("ascii")).hexdigest()
        == prov["certificate_fingerprint"]
    )
    checks["signature"] = verify(
        pubkey,
        messages.payload_message(prov["body"], prov["nonce"], prov["signed_at"]),
        _hh(prov["signature"]),
    )

    sigma = _hh(p["provenance_mutation_hash"])
    h = commitments.projection_hash(
        p["memory_id"],
        p["old_weight_milli"],
        p["new_weight_milli"],
        sigma,
        _h(p["previous_projection_hash"]),
    )
    checks["projection_hash"] = h.hex() == p["projection_hash"]
    expected_prev = None if prior is None else prior["projection_hash"]
    checks["chain_link"] = p["previous_projection_hash"] == expected_prev
    if prior is not None:
        checks["continuity"] = p["old_weight_milli"] == prior["new_weight_milli"]
    t = commitments.transition_commitment(
        p["company_id"], p["memory_id"], p["old_weight_milli"], p["new_weight_milli"], sigma
    )
    checks["transition_hash"] = t.hex() == p["transition_hash"]
    checks["transition_signature"] = verify(pubkey, _hh(p["transition_hash"]), _hh(p["transition_signature"]))
    checks["weight_float4"] = (
        float4_be(p["old_weight_milli"] / 1000).hex() == p["old_weight_float4"]
        and float4_be(p["new_weight_milli"] / 1000).hex() == p["new_weight_float4"]
    )
    return {f"{prefix}.p{index}.{name}": ok for name, ok in checks.items()}


def _event_stream_checks(index: int, stream: dict[str, Any], master: dict[str, Any]) -> dict[str, bool]:
    identity = stream["identity"]
    pubkey = identity["pubkey_b64u"]
    checks: dict[str, bool] = {}
    prev: str | None = None
    for k, event in enumerate(stream["events"]):
        checks[f"ev{k}.certificate"] = _certificate_check(
            identity["certificate_b64u"],
            agent_id=stream["signer_agent_id"],
            pubkey=pubkey,
            master_key=master["public_key_b64u"],
            master_fp=master["fingerprint"],
            at=event["signed_at"],
        )
        if prev is None:
            genesis = commitments.event_genesis_predecessor(
                event["company_id"], event["signer_agent_id"], event["signer_valid_from"]
            )
            checks[f"ev{k}.genesis_predecessor"] = genesis.hex() == event["previous_mutation_hash"]
        else:
            checks[f"ev{k}.link"] = event["previous_mutation_hash"] == prev
        checks[f"ev{k}.signed_valid_from"] = event["signed_body"]["signer_valid_from"] == iso_ms(
            event["signer_valid_from"]
        )
        content = commitments.provenance_content_hash(event["signed_body"])
        checks[f"ev{k}.content_hash"] = content.hex() == event["content_hash"]
        link = commitments.event_link_hash(
            _hh(event["previous_mutation_hash"]), content, event["nonce"], event["signed_at"]
        )
        checks[f"ev{k}.mutation_hash"] = link.hex() == event["mutation_hash"]
        checks[f"ev{k}.certificate_fingerprint"] = (
            hashlib.sha256(identity["certificate_b64u"].encode("ascii")).hexdigest()
            == event["certificate_fingerprint"]
        )
        checks[f"ev{k}.signature"] = verify(
            pubkey,
            messages.payload_message(event["signed_body"], event["nonce"], event["signed_at"]),
            _hh(event["signature"]),
        )
        prev = event["mutation_hash"]
    return {f"e{index}.{name}": ok for name, ok in checks.items()}


def fixture_checks(bundle: dict[str, Any]) -> dict[str, bool]:
    """Every cryptographic recomputation of one S4 fixture, by name."""
    master = bundle["master_identity"]
    checks = {"master_fingerprint": fingerprint_of_b64u(master["public_key_b64u"]) == master["fingerprint"]}
    for m, memory in enumerate(bundle["memories"]):
        projections = memory["projections"]
        prior = None
        for i, projection in enumerate(projections):
            checks.update(_projection_checks(f"m{m}", i, projection, prior, master))
            prior = projection
        if projections:
            checks[f"m{m}.terminal_weight"] = (
                memory["retrieval_weight_milli"] == projections[-1]["new_weight_milli"]
            )
        checks[f"m{m}.weight_float4"] = (
            float4_be(memory["retrieval_weight_milli"] / 1000).hex() == memory["retrieval_weight_float4"]
        )
    for e, stream in enumerate(bundle["event_streams"]):
        checks.update(_event_stream_checks(e, stream, master))
    return checks


@pytest.fixture
def fixture_bytes(s4_fixtures_dir: Path, s4_member: dict[str, Any]) -> bytes:
    filename: str = s4_member["filename"]
    return (s4_fixtures_dir / filename).read_bytes()


def test_manifest_sidecar(s4_fixtures_dir: Path) -> None:
    raw = (s4_fixtures_dir / "manifest.json").read_bytes()
    sidecar = (s4_fixtures_dir / "manifest.json.sha256").read_text("ascii")
    assert sidecar == f"{hashlib.sha256(raw).hexdigest()}  manifest.json\n"
    manifest = json.loads(raw)
    assert manifest["vector_count"] == len(manifest["vectors"]) == 18


def test_fixture_sha256(fixture_bytes: bytes, s4_member: dict[str, Any]) -> None:
    assert hashlib.sha256(fixture_bytes).hexdigest() == s4_member["fixture_sha256"]


def test_bundle_sha256_is_canonical_hash(fixture_bytes: bytes, s4_member: dict[str, Any]) -> None:
    assert canonical_sha256_hex(json.loads(fixture_bytes)) == s4_member["expected_bundle_sha256"]


def test_recomputed_commitments(fixture_bytes: bytes, s4_member: dict[str, Any]) -> None:
    bundle = json.loads(fixture_bytes)
    checks = fixture_checks(bundle)
    failed = {name for name, ok in checks.items() if not ok}
    if s4_member["expected_verdict"] == "valid":
        assert failed == set()
    else:
        expected_failed, tampering = TAMPERED[s4_member["vector_id"]]
        assert failed == expected_failed, tampering
    # Nothing was vacuous: a fixture with projections really exercised h_i, t_i and signatures.
    n_projections = sum(len(m["projections"]) for m in bundle["memories"])
    assert sum(name.endswith(".transition_signature") for name in checks) == n_projections
    assert sum(name.endswith(".signature") and ".ev" in name for name in checks) == sum(
        len(s["events"]) for s in bundle["event_streams"]
    )


def test_structural_tampering_is_what_the_table_says(s4_fixtures_dir: Path) -> None:
    """The two fixtures whose tampering involves no crypto: pin the tampered field."""
    v015 = json.loads((s4_fixtures_dir / "S4-CV-015.json").read_bytes())
    v016 = json.loads((s4_fixtures_dir / "S4-CV-016.json").read_bytes())
    assert v015["format"]["version"] == 2
    assert "critical_extension" not in v015
    assert v016["format"]["version"] == 1
    assert v016["critical_extension"] is True


def test_corpus_proof_root(fixture_bytes: bytes, s4_member: dict[str, Any]) -> None:
    expected = s4_member["expected_proof_root"]
    if expected is None:
        # S4-CV-015..017 fail before any proof record is built: the manifest has no root.
        assert s4_member["vector_id"] in {"S4-CV-015", "S4-CV-016", "S4-CV-017"}
        return
    records = [
        {**r, "sigs_verified": r["signatures_verified"]} for r in json.loads(fixture_bytes)["sql_records"]
    ]
    assert commitments.corpus_proof_root(records).hex() == expected


def test_every_invalid_fixture_is_in_the_table(s4_fixtures_dir: Path) -> None:
    manifest = json.loads((s4_fixtures_dir / "manifest.json").read_bytes())
    invalid = {m["vector_id"] for m in manifest["vectors"] if m["expected_verdict"] == "invalid"}
    assert invalid == set(TAMPERED)
