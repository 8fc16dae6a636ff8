"""The V2 recall vectors' shared parts: the reference's files loaded once, the public P2 test keys
(seed = SHA-256("HOM-AIMOS-P2-PUBLIC-TEST-KEY:" + label)) and the `Builder` that re-derives a
recall bundle with them, as tests/vectors/test_v2_recall_vectors.py uses them."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_sha256, canonical_sha256_hex
from aimos.crypto.ed25519 import KeyPair
from aimos.crypto.encoding import b64u_decode, b64u_encode
from aimos.crypto.merkle import merkle_root
from aimos.crypto.messages import payload_message, request_message
from aimos.verify import v2_recall
from aimos.verify.v2_recall import (
    RECALL_REASONS,
    V2Verdict,
    verify_recall_envelope,
)

# the same place tests/vectors/conftest.py reads the reference data from (needed at collection time)
REFERENCE_DIR = Path(__file__).resolve().parents[3] / "shared" / "reference" / "hom-aimos"
V2_DIR = REFERENCE_DIR / "verifiers" / "mutmem-conformance" / "v2"


def _load(name: str) -> Any:
    path = V2_DIR / name
    if not path.is_file():
        raise pytest.UsageError(f"reference data missing: {path}")
    return json.loads(path.read_bytes())


VECTORS_FILE: dict[str, Any] = _load("vectors.json")
P2_FILE: dict[str, Any] = _load("p2-crypto-vectors.json")
PROTOCOL_MANIFEST: dict[str, Any] = _load("protocol-manifest.json")
STRUCTURAL = {v["id"]: v for v in VECTORS_FILE["vectors"]}
P2_RECALL = {v["id"]: v for v in P2_FILE["recall"]["vectors"]}
P2_VALID = P2_RECALL["P2-CRYPTO-RECALL-VALID"]
P2_FINGERPRINT = P2_VALID["expected_master_fingerprint"]
MASTER_GRANT = "master_signed_recall_grant"


def _key(label: str) -> KeyPair:
    return KeyPair(hashlib.sha256(f"HOM-AIMOS-P2-PUBLIC-TEST-KEY:{label}".encode()).digest())


MASTER, ACTOR, HOUSEKEEPER = _key("master"), _key("actor"), _key("housekeeper")


def _verify(bundle: Any, fingerprint: Any = None, *, structural_only: bool = False) -> V2Verdict:
    """verify_recall_envelope, plus the invariants every verdict must satisfy."""
    result = verify_recall_envelope(bundle, fingerprint, structural_only=structural_only)
    assert result.verdict in ("valid", "invalid")
    if result.verdict == "valid":
        assert result.reason is None and result.detail is None and result.where is None
    else:
        assert result.reason in RECALL_REASONS, result
        assert isinstance(result.detail, str) and result.detail
    assert isinstance(result.signatures_verified, int) and result.signatures_verified >= 0
    json.dumps(result.to_json())
    return result


def _full(bundle: Any) -> V2Verdict:
    return _verify(bundle, P2_FINGERPRINT)


def _p2() -> dict[str, Any]:
    bundle: dict[str, Any] = copy.deepcopy(P2_VALID["bundle"])
    return bundle


def _body(bundle: dict[str, Any], kind: str, result: int | None = None) -> dict[str, Any]:
    for obj in bundle["objects"]:
        if obj["kind"] == kind and obj["result_ordinal"] == result:
            body: dict[str, Any] = obj["body"]
            return body
    raise KeyError(kind)


def reseal(bundle: dict[str, Any]) -> dict[str, Any]:
    """Recompute the envelope commitments (body hashes, object root, bundle hash) after an edit."""
    for obj in bundle["objects"]:
        obj["body_sha256"] = commitments.v2_object_hash(obj["kind"], obj["schema"], obj["body"]).hex()
    fields = ("ordinal", "kind", "schema", "subject_id", "result_ordinal", "body_sha256")
    root = merkle_root([{f: o[f] for f in fields} for o in bundle["objects"]])
    bundle["object_root_sha256"] = root.hex()
    bundle["bundle_sha256"] = commitments.v2_bundle_hash(
        bundle["bundle_id"],
        bundle["company_id"],
        bytes.fromhex(bundle["expected_master_fingerprint"]),
        bundle["result_count"],
        root,
    ).hex()
    return bundle


def _sign(key: KeyPair, message: bytes) -> str:
    return b64u_encode(key.sign(message))


def _occurrence_commitment(native: dict[str, Any]) -> bytes:
    return commitments.occurrence_v3_commitment(
        company_id=native["company_id"],
        occurrence_event_id=native["occurrence_event_id"],
        memory_id=native["memory_id"],
        event_type=native["event_type"],
        live_hash=bytes.fromhex(native["live_content_hash_hex"]),
        predecessor=bytes.fromhex(native["predecessor_commitment_hex"])
        if native["predecessor_present"]
        else None,
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
        authorization_event_id=native["authorization_event_id"]
        if native["authorization_event_present"]
        else None,
    )


class Builder:
    """A P2 recall bundle taken apart, edited, and re-derived: every hash, binding and signature
    (the public P2 test keys sign), so that the result is valid unless a test breaks it."""

    def __init__(self, bundle: dict[str, Any] | None = None) -> None:
        self.bundle = copy.deepcopy(bundle if bundle is not None else P2_VALID["bundle"])
        self.s: dict[str, dict[str, Any]] = {
            o["kind"]: o["body"] for o in self.bundle["objects"] if o["result_ordinal"] is None
        }
        self.groups: list[dict[str, dict[str, Any]]] = [
            {o["kind"]: o["body"] for o in self.bundle["objects"] if o["result_ordinal"] == r}
            for r in range(self.bundle["result_count"])
        ]

    def with_results(self, n: int) -> Builder:
        template = copy.deepcopy(self.groups[0])
        self.groups = []
        for r in range(n):
            group = copy.deepcopy(template)
            memory_id = f"{r + 1:08x}-abcd-4ef0-8abc-{r + 1:012x}"
            live = hashlib.sha256(f"live-{r}".encode()).hexdigest()
            for body in group.values():
                body["memory_id"] = memory_id
            for kind in ("memory_state", "provenance_chain", "epistemic_projection", "receipt_evidence"):
                group[kind]["live_content_hash"] = live
            occurrence = group["occurrence"]
            occurrence["live_content_hash_hex"] = live
            native = occurrence["native_body"]
            native.update(memory_id=memory_id, live_content_hash_hex=live)
            commitment = _occurrence_commitment(native)
            native["occurrence_commitment"] = occurrence["occurrence_ref"] = commitment.hex()
            occurrence["signature_b64u"] = _sign(
                HOUSEKEEPER, commitments.occurrence_v3_signature_message(commitment)
            )
            entry = group["receipt_evidence"]
            entry.update(ordinal=r, occurrence_ref=commitment.hex(), calibrated_score=0.5 + r / 10)
            self.groups.append(group)
        return self

    def as_housekeeper(self) -> Builder:
        """The housekeeper recalls for itself: the system-principal grant, no master signature."""
        hk = self.s["housekeeper_identity_epoch"]
        actor = self.s["actor_identity_epoch"]
        actor.update({k: v for k, v in hk.items() if k != "schema"})
        actor["identity_tier"] = "T1"
        self.s["actor_revocation_state"].update(agent_id="housekeeper", valid_from=hk["valid_from"])
        company = self.bundle["company_id"]
        system = {
            "kind": "housekeeper_system_principal",
            "company_id": company,
            "agent_id": "housekeeper",
            "valid_from": hk["valid_from"],
        }
        self.s["effective_recall_grant"] = {
            "allowed": True,
            "authority_kind": "housekeeper_system_principal",
            "clearance_ceiling": 12,
            "company_id": company,
            "data_class_ceiling": "restricted",
            "master_fingerprint": self.bundle["expected_master_fingerprint"],
            "mutation_hash": canonical_sha256_hex(system),
            "schema": "hom.aimos.mutmem-effective-recall-grant/v2",
            "subject_agent_id": "housekeeper",
            "subject_valid_from": hk["valid_from"],
            "system_principal_body": system,
            "write_allowed": True,
        }
        for kind in ("request_envelope", "request_receipt"):
            self.s[kind].update(
                actor_agent_id="housekeeper",
                actor_valid_from=hk["valid_from"],
                cert_fingerprint=hk["cert_fingerprint"],
            )
        return self

    def seal(self) -> dict[str, Any]:
        s, n = self.s, len(self.groups)
        actor = s["actor_identity_epoch"]
        actor_key = HOUSEKEEPER if actor["agent_id"] == "housekeeper" else ACTOR
        grant = s["effective_recall_grant"]
        if grant["authority_kind"] == MASTER_GRANT:
            content = canonical_sha256(grant["signed_body"])
            grant["content_hash"] = content.hex()
            grant["mutation_hash"] = commitments.recall_authorization_mutation_hash(
                None, content, grant["nonce"], grant["ts_signed"]
            ).hex()
            grant["signature_b64u"] = _sign(
                MASTER, payload_message(grant["signed_body"], grant["nonce"], grant["ts_signed"])
            )
        request = s["request_envelope"]
        request["request_body_hash"] = request["outer_request_hash"] = canonical_sha256_hex(
            request["request_body"]
        )
        request["command_hash"] = canonical_sha256_hex(request["normalized_command"])
        request["signature_b64u"] = _sign(
            actor_key,
            request_message(
                request["request_body"], "POST", "/aimos/recall", request["nonce"], request["ts_signed"]
            ),
        )
        receipt = s["request_receipt"]
        receipt["request_hash"] = request["request_body_hash"]
        receipt["signature_b64u"] = request["signature_b64u"]
        receipt["mutation_hash"] = commitments.request_receipt_mutation_hash(
            bytes.fromhex(receipt["prev_mutation_hash"]),
            bytes.fromhex(receipt["request_hash"]),
            None,
            b64u_decode(receipt["signature_b64u"]),
            receipt["signed_method"],
            receipt["signed_path"],
            receipt["nonce"],
            receipt["ts_signed"],
        ).hex()

        evidence = [{k: v for k, v in g["receipt_evidence"].items() if k != "schema"} for g in self.groups]
        ids = [g["memory_state"]["memory_id"] for g in self.groups]
        live = [g["memory_state"]["live_content_hash"] for g in self.groups]
        s["content_state_projection"]["selected_occurrence_refs"] = [
            g["occurrence"]["occurrence_ref"] for g in self.groups
        ]
        s["epistemic_recall_decision"]["selected_memory_ids"] = list(ids)
        s["final_security_closure"]["selected_clean_memory_ids"] = list(ids)
        projection = s["return_projection"]
        projection.update(
            projected_memory_ids=list(ids),
            projected_live_content_hashes=live,
            projected_output_count=n,
            selected_clean_count=n,
        )
        native = s["native_recall_receipt"]
        entries = [
            {"entry_type": "epistemic_decision", "decision_sha256": native["epistemic_decision_sha256"]},
            {
                "entry_type": "canary_final_security_closure",
                "decision_sha256": native["canary_final_security_closure_sha256"],
            },
            *evidence,
        ]
        native.update(
            result_count=n,
            evidence=copy.deepcopy(evidence),
            return_projection=copy.deepcopy(projection),
            authority_mutation_hash=grant["mutation_hash"],
            request_receipt_id=receipt["request_receipt_id"],
            request_receipt_mutation_hash=receipt["mutation_hash"],
            outer_request_hash=request["outer_request_hash"],
            command_hash=request["command_hash"],
            merkle_entries=copy.deepcopy(entries),
            merkle_root=merkle_root(entries).hex(),
        )
        event = native["event_receipt"]
        body = event["signed_body"]
        body.update(actor_agent_id=actor["agent_id"], actor_valid_from=actor["valid_from"])
        body["metadata"].update(
            {
                field: native[field]
                for field in (
                    "command_hash",
                    "outer_request_hash",
                    "authority_mutation_hash",
                    "request_receipt_id",
                    "request_receipt_mutation_hash",
                    "merkle_root",
                    "result_count",
                )
            }
        )
        body["metadata"].update(evidence=copy.deepcopy(evidence), return_projection=copy.deepcopy(projection))
        content = canonical_sha256(body)
        event["content_hash"] = content.hex()
        event["mutation_hash"] = commitments.event_link_hash(
            bytes.fromhex(event["prev_mutation_hash"]), content, event["nonce"], event["ts_signed"]
        ).hex()
        event["signature_b64u"] = _sign(
            HOUSEKEEPER, payload_message(body, event["nonce"], event["ts_signed"])
        )
        for kind in ("actor_revocation_state", "housekeeper_revocation_state"):
            s[kind]["source_event_mutation_hash"] = event["mutation_hash"]
            s[kind]["evaluated_at_unix_seconds"] = event["ts_signed"]

        schemas = v2_recall.OBJECT_SCHEMAS
        objects: list[dict[str, Any]] = [
            {
                "kind": kind,
                "schema": schemas[kind],
                "subject_id": None,
                "result_ordinal": None,
                "body": s[kind],
            }
            for kind in v2_recall.SINGLETON_KINDS
        ]
        for r, group in enumerate(self.groups):
            objects += [
                {
                    "kind": kind,
                    "schema": schemas[kind],
                    "subject_id": group["memory_state"]["memory_id"],
                    "result_ordinal": r,
                    "body": group[kind],
                }
                for kind in v2_recall.RESULT_KINDS
            ]
        bundle = copy.deepcopy(self.bundle)
        bundle["objects"] = [
            {
                "ordinal": i,
                **{k: o[k] for k in ("kind", "schema", "subject_id", "result_ordinal")},
                "body_sha256": "",
                "body": copy.deepcopy(o["body"]),
            }
            for i, o in enumerate(objects)
        ]
        bundle.update(result_count=n, object_count=len(objects))
        return reseal(bundle)


def _signature_count(bundle: dict[str, Any]) -> int:
    master_grant = _body(bundle, "effective_recall_grant")["authority_kind"] == MASTER_GRANT
    results: int = bundle["result_count"]
    return 2 + (1 if master_grant else 0) + 1 + 1 + results
