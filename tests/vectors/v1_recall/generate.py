"""Generate aimos's own MutMem V1 recall-evidence and recall-corpus fixtures.

Writes, beside this script, one JSON file per fixture (named by the mutation it carries) and
``manifest.json``: for each file its kind (``recall`` or ``corpus``), the check it targets, the
verdict and primary reason aimos must give under the fixture master fingerprint (``expected_*``)
and the ones the HOM-AIMOS reference Python verifier (``recall_verifier.py``, which trusts the
bundle's own anchors) gives (``reference_*``). Those differ only where aimos's caller-pinned trust
anchor decides. The reference reasons were read off the reference verifier's code, check by check;
each fixture's ``targets`` says which check.

    python tests/vectors/v1_recall/generate.py          # rewrite the committed files
    python tests/vectors/v1_recall/generate.py --check  # exit 1 if any has drifted

Everything is deterministic: Ed25519 keys come from seed = SHA-256("aimos-v1-recall-fixtures/v1:" +
label), public fixture material that signs nothing but these files (Ed25519 signatures are
deterministic), and ids and hashes from fixed labels. The bundles are built from the crypto layer's
primitives (canonical JSON, certificates, the event-link hash, the RFC 6962 root), never from the
verifier; ``test_v1_recall_vectors.py`` recomputes the roots by hand with hashlib.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json
from aimos.crypto.certs import issue_certificate
from aimos.crypto.ed25519 import KeyPair
from aimos.crypto.encoding import b64u_encode, iso_ms
from aimos.crypto.merkle import merkle_root
from aimos.crypto.messages import payload_message, request_message

HERE = Path(__file__).resolve().parent
MANIFEST = "manifest.json"
MANIFEST_SCHEMA = "aimos.v1-recall-fixtures/v1"
KEY_SEED_PREFIX = "aimos-v1-recall-fixtures/v1:"
RECALL_SCHEMA = "hom.aimos.mutmem-recall-evidence/v1"
CORPUS_SCHEMA = "hom.aimos.mutmem-recall-corpus/v1"
COMPANY = "hom"
AGENT = "reviewer-fixture"
HOUSEKEEPER = "housekeeper"
TS = 1786500000  # 2026-08-12T00:00:00Z: the request's signing time
WINDOW = 10000  # both certificates are valid TS - WINDOW .. TS + WINDOW
EPISTEMIC_MERKLE_SCHEMA = "hom-aimos/recall-merkle/v2-epistemic-decision"
ZERO_HASH = "00" * 32


def key(label: str) -> KeyPair:
    return KeyPair(hashlib.sha256((KEY_SEED_PREFIX + label).encode("utf-8")).digest())


def sha_hex(label: str) -> str:
    """A stand-in 32-byte hash for an input these fixtures do not derive (named by its label)."""
    return hashlib.sha256(label.encode("utf-8")).hexdigest()


def fixed_uuid(label: str) -> str:
    """A version-4 UUID derived from ``label``."""
    return str(uuid.UUID(bytes=hashlib.sha256(label.encode("utf-8")).digest()[:16], version=4))


def canonical_sha(value: Any) -> str:
    return hashlib.sha256(canonical_json(value)).hexdigest()


@dataclass(frozen=True)
class Keys:
    master: KeyPair
    agent: KeyPair
    housekeeper: KeyPair


FIXTURE_KEYS = Keys(master=key("master"), agent=key("agent"), housekeeper=key("housekeeper"))
ATTACKER_MASTER = key("attacker-master")
STRANGER = key("stranger")


def agent_certificate(
    issuer_key: KeyPair, *, issuer: str = "aimos-master", valid_until: int = TS + WINDOW
) -> str:
    return issue_certificate(
        issuer_key,
        agent_id=AGENT,
        pubkey=FIXTURE_KEYS.agent.public_b64u,
        device_fp="fixture-reviewer-device",
        valid_from=TS - WINDOW,
        valid_until=valid_until,
        issued_at=TS - WINDOW,
        issuer=issuer,
    ).text


def housekeeper_certificate() -> str:
    """Self-issued (issuer = agent_id = housekeeper), as the housekeeper's genesis certificate."""
    return issue_certificate(
        FIXTURE_KEYS.housekeeper,
        agent_id=HOUSEKEEPER,
        pubkey=FIXTURE_KEYS.housekeeper.public_b64u,
        device_fp="fixture-housekeeper-device",
        valid_from=TS - WINDOW,
        valid_until=TS + WINDOW,
        issued_at=TS - WINDOW,
        issuer=HOUSEKEEPER,
    ).text


def recall_command(body: dict[str, Any]) -> dict[str, Any]:
    """The server's normalized recall command for the plain bodies these fixtures use."""
    query = str(body.get("query", body.get("q", ""))).strip()
    return {
        **body,
        "query": query,
        "q": query,
        "key": None if body.get("key") is None else str(body["key"]).strip(),
        "memory_id": None if body.get("memory_id") is None else str(body["memory_id"]).strip(),
        "company_id": "hom" if body.get("company_id") is None else str(body["company_id"]),
        "agent_id": None if body.get("agent_id") is None else str(body["agent_id"]),
        "limit": 10 if body.get("limit") is None else body["limit"],
        "clearance_level": body.get("clearance_level"),
        "max_hops": body.get("max_hops"),
    }


def sign_request(bundle: dict[str, Any], signer: KeyPair = FIXTURE_KEYS.agent) -> None:
    request = bundle["request"]
    message = request_message(
        request["body"], "POST", "/aimos/recall", request["nonce"], request["ts_signed"]
    )
    request["signature"] = b64u_encode(signer.sign(message))


def seal_event(bundle: dict[str, Any]) -> None:
    """Recompute the event's content and mutation hashes and the housekeeper's signature."""
    event = bundle["recall_receipt"]["event_receipt"]
    body = event["signed_body"]
    content = hashlib.sha256(canonical_json(body)).digest()
    prev = bytes.fromhex(event["prev_mutation_hash"])
    event["content_hash"] = content.hex()
    event["mutation_hash"] = commitments.event_link_hash(
        prev, content, event["nonce"], event["ts_signed"]
    ).hex()
    message = payload_message(body, event["nonce"], event["ts_signed"])
    event["signature"] = b64u_encode(FIXTURE_KEYS.housekeeper.sign(message))


def make_bundle(bundle_id: str, memory_count: int = 2, *, epistemic: bool = False) -> dict[str, Any]:
    """A valid recall-evidence bundle: ``memory_count`` recalled memories, optionally with the
    epistemic-decision Merkle profile."""
    body = {
        "company_id": COMPANY,
        "agent_id": AGENT,
        "q": f"portable recall proof {bundle_id}",
        "source_filter": f"fixture:{bundle_id}",
        "memory_type_filter": "session_exchange",
        "limit": memory_count,
        "clearance_level": 10,
        "cache": False,
        "answer_shape": "full_detail",
        "ts_signed": TS,
    }
    memories: list[dict[str, Any]] = [
        {
            "id": fixed_uuid(f"memory:{bundle_id}:{ordinal}"),
            "source": body["source_filter"],
            "memory_type": body["memory_type_filter"],
            "provenance_proof": {
                "live_content_hash": sha_hex(f"live:{bundle_id}:{ordinal}"),
                "save_mutation_hash": sha_hex(f"save:{bundle_id}:{ordinal}"),
                "binding_mutation_hash": sha_hex(f"binding:{bundle_id}:{ordinal}"),
            },
        }
        for ordinal in range(memory_count)
    ]
    evidence = [
        {
            "ordinal": ordinal,
            "memory_id": memory["id"],
            **memory["provenance_proof"],
            "truth_state": "current",
            "raw_calibration_score": round(0.75 - ordinal * 0.1, 6),
            "calibrated_score": round(0.75 - ordinal * 0.1, 6),
            "calibration_event_id": None,
            "calibration_mutation_hash": None,
            "calibration_formula_version": None,
        }
        for ordinal, memory in enumerate(memories)
    ]
    decision = sha_hex(f"epistemic:{bundle_id}")
    entries = (
        [{"entry_type": "epistemic_decision", "decision_sha256": decision}, *evidence]
        if epistemic
        else evidence
    )
    command_hash = canonical_sha(recall_command(body))
    outer_hash = canonical_sha(body)
    root = merkle_root(entries).hex()
    housekeeper_cert = housekeeper_certificate()
    housekeeper_cert_sha = hashlib.sha256(housekeeper_cert.encode("ascii")).hexdigest()
    merkle_fields: dict[str, Any] = (
        {
            "merkle_schema": EPISTEMIC_MERKLE_SCHEMA,
            "epistemic_decision_sha256": decision,
            "merkle_entries": entries,
        }
        if epistemic
        else {}
    )
    receipt_id = fixed_uuid(f"request-receipt:{bundle_id}")
    event_body = {
        "ledger_version": 1,
        "event_id": fixed_uuid(f"event:{bundle_id}"),
        "company_id": COMPANY,
        "subject_agent_id": AGENT,
        "actor_agent_id": AGENT,
        "actor_valid_from": iso_ms(TS - WINDOW),
        "signer_agent_id": HOUSEKEEPER,
        "signer_valid_from": iso_ms(TS - WINDOW),
        "cert_fingerprint": housekeeper_cert_sha,
        "identity_tier": "T1",
        "authority_kind": "housekeeper_observation_of_verified_request",
        "request_envelope_digest": sha_hex(f"request-envelope:{bundle_id}"),
        "operation": "recall_receipt",
        "key": command_hash,
        "metadata": {
            "command_hash": command_hash,
            "outer_request_hash": outer_hash,
            "authority_mutation_hash": sha_hex(f"authority:{bundle_id}"),
            "request_receipt_id": receipt_id,
            "request_receipt_mutation_hash": sha_hex(f"request-receipt:{bundle_id}"),
            "authorization_event_id": fixed_uuid(f"authorization:{bundle_id}"),
            "transport": "rest",
            "result_count": len(evidence),
            "merkle_root": root,
            "evidence": evidence,
            **merkle_fields,
        },
        "parent_event_id": None,
        "ledger_seq": 1,
        "prev_mutation_hash": sha_hex(f"event-prev:{bundle_id}"),
        "ts_signed": TS + 1,
    }
    bundle: dict[str, Any] = {
        "format": {
            "schema": RECALL_SCHEMA,
            "version": 1,
            "authority": "descriptive_only",
            "canonicalization": "hom-aimos/canonical-json/v1",
            "hash": "sha256",
            "signature": "ed25519",
        },
        "bundle_id": bundle_id,
        "company_id": COMPANY,
        "trust_anchors": {
            "master": {
                "public_key_b64u": FIXTURE_KEYS.master.public_b64u,
                "fingerprint": FIXTURE_KEYS.master.fingerprint,
            },
            "certificates": [
                {
                    "certificate_sha256": housekeeper_cert_sha,
                    "public_key_b64u": FIXTURE_KEYS.housekeeper.public_b64u,
                }
            ],
        },
        "request": {
            "body": body,
            "method": "POST",
            "path": "/aimos/recall",
            "nonce": f"request-{bundle_id}",
            "ts_signed": TS,
            "signature": "",
            "certificate": agent_certificate(FIXTURE_KEYS.master),
        },
        "memories": memories,
        "recall_receipt": {
            "command_hash": command_hash,
            "outer_request_hash": outer_hash,
            "authority_mutation_hash": sha_hex(f"authority:{bundle_id}"),
            "request_receipt_id": receipt_id,
            "request_receipt_mutation_hash": sha_hex(f"request-receipt:{bundle_id}"),
            "merkle_root": root,
            "evidence": evidence,
            **merkle_fields,
            "event_receipt": {
                "event_id": event_body["event_id"],
                "proof_required": True,
                "ledger_version": 1,
                "ledger_seq": 1,
                "signed_body": event_body,
                "content_hash": "",
                "mutation_hash": "",
                "prev_mutation_hash": event_body["prev_mutation_hash"],
                "signer_agent_id": HOUSEKEEPER,
                "signer_valid_from": event_body["signer_valid_from"],
                "cert_fingerprint": housekeeper_cert_sha,
                "signer_certificate": housekeeper_cert,
                "identity_tier": "T1",
                "ts_signed": TS + 1,
                "nonce": f"event-{bundle_id}",
                "signature": "",
            },
        },
    }
    sign_request(bundle)
    seal_event(bundle)
    return bundle


def make_corpus(bundles: list[dict[str, Any]]) -> dict[str, Any]:
    members = [
        {"ordinal": i, "bundle_id": b["bundle_id"], "bundle_sha256": canonical_sha(b), "bundle": b}
        for i, b in enumerate(bundles)
    ]
    corpus = {
        "format": {"schema": CORPUS_SCHEMA, "version": 1, "authority": "descriptive_only"},
        "intended_n": len(members),
        "members": members,
        "corpus_root": "",
    }
    reroot(corpus)
    return corpus


def reroot(corpus: dict[str, Any]) -> None:
    """Recompute every member hash and the corpus root (for corpora whose members were changed)."""
    for member in corpus["members"]:
        member["bundle_sha256"] = canonical_sha(member["bundle"])
    summaries = [{k: m[k] for k in ("ordinal", "bundle_id", "bundle_sha256")} for m in corpus["members"]]
    corpus["corpus_root"] = commitments.recall_corpus_root(corpus["intended_n"], summaries).hex()


def nested_lists(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


# --- the fixtures --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Fixture:
    name: str
    kind: str  # "recall" | "corpus"
    targets: str  # the reference check this fixture exercises
    document: dict[str, Any]
    expected: tuple[str, str | None]  # aimos, under the fixture master fingerprint
    reference: tuple[str, str | None] | None = None  # when the reference verifier says otherwise


def _mutated(base: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    document = copy.deepcopy(base)
    change(document)
    return document


def fixtures() -> list[Fixture]:
    base = make_bundle("AIMOS-V1-R-002")  # two memories: the base of every mutation
    epistemic = make_bundle("AIMOS-V1-R-EPI", epistemic=True)
    out: list[Fixture] = [
        Fixture("valid-one-memory", "recall", "all checks pass", make_bundle("AIMOS-V1-R-001", 1), ("valid", None)),
        Fixture("valid-two-memories", "recall", "all checks pass", base, ("valid", None)),
        Fixture("valid-three-memories", "recall", "all checks pass (odd Merkle tree)",
                make_bundle("AIMOS-V1-R-003", 3), ("valid", None)),
        Fixture("valid-epistemic", "recall", "all checks pass (epistemic-decision Merkle profile)",
                epistemic, ("valid", None)),
    ]  # fmt: skip

    def bad(name: str, targets: str, reason: str, change: Callable[[dict[str, Any]], None],
            source: dict[str, Any] = base, verdict: str = "invalid") -> None:  # fmt: skip
        out.append(Fixture(name, "recall", targets, _mutated(source, change), (verdict, reason)))

    # 1. the document canonicalizes (the reference canonicalizes as it parses)
    bad("depth-over-limit", "canonical JSON depth <= 32", "canonical_json_depth_limit",
        lambda b: b["recall_receipt"]["evidence"][0].__setitem__("truth_state", nested_lists(40)))  # fmt: skip
    # 2. the envelope
    bad("bundle-extra-field", "envelope: exactly seven fields", "recall_bundle_schema_invalid",
        lambda b: b.__setitem__("note", "extra"))  # fmt: skip
    bad("bundle-format-version", "envelope: exact format object", "recall_bundle_schema_invalid",
        lambda b: b["format"].__setitem__("version", 2))  # fmt: skip
    bad("bundle-empty-id", "envelope: non-empty bundle_id", "recall_bundle_schema_invalid",
        lambda b: b.__setitem__("bundle_id", ""))  # fmt: skip

    # 3. trust anchors
    bad("anchors-extra-field", "trust anchors: exactly {master, certificates}", "recall_trust_anchor_schema_invalid",
        lambda b: b["trust_anchors"].__setitem__("extra", []))  # fmt: skip
    bad("anchors-master-fingerprint", "trust anchors: master fingerprint = H(key DER)",
        "recall_trust_anchor_schema_invalid",
        lambda b: b["trust_anchors"]["master"].__setitem__("fingerprint", sha_hex("another master")))  # fmt: skip
    bad("anchors-master-key-empty", "trust anchors: master key decodes", "master_key_invalid",
        lambda b: b["trust_anchors"]["master"].__setitem__("public_key_b64u", ""))  # fmt: skip
    bad("anchors-certificate-repeated", "trust anchors: certificate hashes distinct",
        "recall_trust_anchor_schema_invalid",
        lambda b: b["trust_anchors"]["certificates"].append(dict(b["trust_anchors"]["certificates"][0])))  # fmt: skip
    bad("anchors-certificate-key", "trust anchors: anchor key is a public key", "public_key_invalid",
        lambda b: b["trust_anchors"]["certificates"][0].__setitem__("public_key_b64u", b64u_encode(b"not a key")))  # fmt: skip

    # 4. the request, its certificate and the command
    bad("request-extra-field", "request: exactly seven fields", "recall_request_schema_invalid",
        lambda b: b["request"].__setitem__("claims", {}))  # fmt: skip
    bad("request-certificate-not-json", "certificate: base64url JSON", "cert_malformed",
        lambda b: b["request"].__setitem__("certificate", b64u_encode(b"not json")))  # fmt: skip

    def noncanonical_certificate(b: dict[str, Any]) -> None:
        decoded = json.loads(base64url_decode(b["request"]["certificate"]))
        b["request"]["certificate"] = b64u_encode(json.dumps(decoded, indent=1).encode("utf-8"))

    bad("request-certificate-noncanonical", "certificate: canonical JSON {body, sig}", "cert_schema",
        noncanonical_certificate)  # fmt: skip
    bad("request-certificate-unknown-issuer", "certificate: chains to a trust anchor", "recall_trust_anchor_missing",
        lambda b: b["request"].__setitem__("certificate", agent_certificate(FIXTURE_KEYS.master, issuer="someone")))  # fmt: skip
    bad("request-certificate-wrong-signer", "certificate: the issuer's signature", "cert_sig_invalid",
        lambda b: b["request"].__setitem__("certificate", agent_certificate(STRANGER)))  # fmt: skip
    bad("request-certificate-expired", "certificate: signed within its window", "cert_epoch_invalid",
        lambda b: b["request"].__setitem__("certificate", agent_certificate(FIXTURE_KEYS.master, valid_until=TS - 1)))  # fmt: skip
    bad("request-agent-mismatch", "request: certificate names the body's agent", "recall_request_identity_invalid",
        lambda b: b["request"]["body"].__setitem__("agent_id", "someone-else"))  # fmt: skip
    bad("request-path", "request: POST /aimos/recall", "recall_request_context_invalid",
        lambda b: b["request"].__setitem__("path", "/aimos/save"))  # fmt: skip
    bad("request-ts-mismatch", "request: ts_signed equals the body's", "recall_request_context_invalid",
        lambda b: b["request"].__setitem__("ts_signed", TS + 1))  # fmt: skip
    bad("request-signature", "request: the agent's signature (request form 3)", "recall_request_signature_invalid",
        lambda b: b["request"].__setitem__("signature", b64u_encode(bytes(64))))  # fmt: skip

    def resigned(change: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
        """Change the request body, then sign it again: only the command check can fail."""

        def apply(b: dict[str, Any]) -> None:
            change(b["request"]["body"])
            sign_request(b)

        return apply

    bad("command-unknown-field", "command: known fields only", "recall_unknown_field:colour",
        resigned(lambda body: body.__setitem__("colour", "blue")))  # fmt: skip
    bad("command-no-query", "command: a query, key or memory id", "recall_query_or_identifier_required",
        resigned(lambda body: body.__setitem__("q", "   ")))  # fmt: skip
    bad("command-memory-id", "command: memory_id is a UUID", "recall_memory_id_invalid",
        resigned(lambda body: body.__setitem__("memory_id", "not-a-uuid")))  # fmt: skip
    bad("command-limit", "command: limit in 1..200", "recall_integer_invalid",
        resigned(lambda body: body.__setitem__("limit", 0)))  # fmt: skip
    bad("command-clearance", "command: clearance_level in 0..12", "recall_integer_invalid",
        resigned(lambda body: body.__setitem__("clearance_level", 13)))  # fmt: skip
    # 5. scope
    bad("scope-company", "the command's company is the bundle's", "recall_scope_binding_invalid",
        resigned(lambda body: body.__setitem__("company_id", "another-company")))  # fmt: skip

    # 6. the receipt
    bad("receipt-absent", "a receipt with an evidence list (else indeterminate)", "recall_mandatory_evidence_missing",
        lambda b: b.__setitem__("recall_receipt", None), verdict="indeterminate")  # fmt: skip
    bad("receipt-extra-field", "receipt: known fields only", "recall_receipt_schema_invalid",
        lambda b: b["recall_receipt"].__setitem__("note", "extra"))  # fmt: skip
    bad("receipt-evidence-count", "receipt: one evidence entry per memory", "recall_receipt_evidence_count_mismatch",
        lambda b: b["memories"].pop())  # fmt: skip

    # 7. memory bindings (reason suffixed with the memory index)
    bad("binding-live-hash", "memory binding: the live content hash", "recall_receipt_memory_binding_invalid:0",
        lambda b: b["recall_receipt"]["evidence"][0].__setitem__("live_content_hash", ZERO_HASH))  # fmt: skip
    bad("binding-order", "memory binding: ordinal and memory id", "recall_receipt_memory_binding_invalid:0",
        lambda b: b["recall_receipt"]["evidence"].reverse())  # fmt: skip
    bad("binding-source", "memory binding: the request's source filter", "recall_receipt_memory_binding_invalid:0",
        lambda b: b["memories"][0].__setitem__("source", "fixture:wrong"))  # fmt: skip
    bad("binding-second-memory-type", "memory binding: the request's memory-type filter",
        "recall_receipt_memory_binding_invalid:1",
        lambda b: b["memories"][1].__setitem__("memory_type", "fact"))  # fmt: skip

    def uppercase_second(b: dict[str, Any]) -> None:
        upper = b["memories"][1]["provenance_proof"]["save_mutation_hash"].upper()
        b["memories"][1]["provenance_proof"]["save_mutation_hash"] = upper
        b["recall_receipt"]["evidence"][1]["save_mutation_hash"] = upper

    bad("binding-second-uppercase-hash", "memory binding: lowercase hex hashes",
        "recall_receipt_memory_binding_invalid:1", uppercase_second)  # fmt: skip
    bad("binding-missing-proof-field", "memory binding: exact provenance proof fields",
        "recall_receipt_memory_binding_invalid:0",
        lambda b: b["memories"][0]["provenance_proof"].pop("binding_mutation_hash"))  # fmt: skip

    # 8. the epistemic Merkle profile
    bad("epistemic-decision-hash", "epistemic profile: the decision entry", "recall_receipt_epistemic_binding_invalid",
        lambda b: b["recall_receipt"]["merkle_entries"][0].__setitem__("decision_sha256", ZERO_HASH),
        source=epistemic)  # fmt: skip

    # 9. the receipt's hashes
    bad("receipt-merkle-root", "receipt: the Merkle root", "recall_receipt_cryptographic_binding_invalid",
        lambda b: b["recall_receipt"].__setitem__("merkle_root", ZERO_HASH))  # fmt: skip
    bad("receipt-command-hash", "receipt: the command hash", "recall_receipt_cryptographic_binding_invalid",
        lambda b: b["recall_receipt"].__setitem__("command_hash", sha_hex("another command")))  # fmt: skip
    bad("receipt-authority-hash-form", "receipt: mutation hashes are lowercase hex",
        "recall_receipt_cryptographic_binding_invalid",
        lambda b: b["recall_receipt"].__setitem__("authority_mutation_hash", "not-a-hash"))  # fmt: skip

    # 10. the housekeeper's event receipt
    bad("event-absent", "event receipt present (else indeterminate)", "recall_mandatory_evidence_missing",
        lambda b: b["recall_receipt"].pop("event_receipt"), verdict="indeterminate")  # fmt: skip
    bad("event-extra-field", "event receipt: exact fields", "recall_event_receipt_schema_invalid",
        lambda b: b["recall_receipt"]["event_receipt"].__setitem__("note", "extra"))  # fmt: skip
    bad("event-certificate-unanchored", "event certificate: anchored in trust_anchors.certificates",
        "recall_trust_anchor_missing", lambda b: b["trust_anchors"].__setitem__("certificates", []))  # fmt: skip
    bad("event-outside-certificate", "event certificate: signed within its window", "cert_epoch_invalid",
        lambda b: b["recall_receipt"]["event_receipt"].__setitem__("ts_signed", TS + WINDOW + 1))  # fmt: skip
    bad("event-body-not-object", "event: the signed body is an object", "recall_event_body_invalid",
        lambda b: b["recall_receipt"]["event_receipt"].__setitem__("signed_body", "recall_receipt"))  # fmt: skip
    bad("event-previous-hash", "event: prev_mutation_hash is lowercase hex", "recall_event_previous_hash_invalid",
        lambda b: b["recall_receipt"]["event_receipt"].__setitem__("prev_mutation_hash", "zz"))  # fmt: skip
    bad("event-mutation-hash", "event: the event-link mutation hash", "recall_event_binding_invalid",
        lambda b: b["recall_receipt"]["event_receipt"].__setitem__("mutation_hash", ZERO_HASH))  # fmt: skip

    def resealed_metadata(b: dict[str, Any]) -> None:
        """A correctly hashed and signed event whose body binds another Merkle root."""
        b["recall_receipt"]["event_receipt"]["signed_body"]["metadata"]["merkle_root"] = ZERO_HASH
        seal_event(b)

    bad("event-binds-other-root", "event: the signed body binds the receipt's Merkle root",
        "recall_event_binding_invalid", resealed_metadata)  # fmt: skip
    bad("event-signature", "event: the housekeeper's signature (payload form 1)", "recall_event_signature_invalid",
        lambda b: b["recall_receipt"]["event_receipt"].__setitem__("signature", b64u_encode(bytes(64))))  # fmt: skip

    # aimos's caller-pinned master: bundles the reference accepts on the strength of their own anchors
    def attacker_master(b: dict[str, Any]) -> None:
        b["trust_anchors"]["master"] = {
            "public_key_b64u": ATTACKER_MASTER.public_b64u,
            "fingerprint": ATTACKER_MASTER.fingerprint,
        }
        b["request"]["certificate"] = agent_certificate(ATTACKER_MASTER)

    def self_issued_request(b: dict[str, Any]) -> None:
        cert = agent_certificate(FIXTURE_KEYS.agent, issuer=AGENT)
        b["request"]["certificate"] = cert
        b["trust_anchors"]["certificates"].append(
            {
                "certificate_sha256": hashlib.sha256(cert.encode("ascii")).hexdigest(),
                "public_key_b64u": FIXTURE_KEYS.agent.public_b64u,
            }
        )

    for name, targets, change in (
        ("pin-attacker-master", "aimos: the bundle's master is the caller's", attacker_master),
        ("pin-self-issued-request", "aimos: the request certificate is under the caller's master",
         self_issued_request),
    ):  # fmt: skip
        out.append(
            Fixture(name, "recall", targets, _mutated(base, change),
                    ("invalid", "recall_trust_anchor_master_mismatch"), reference=("valid", None))
        )  # fmt: skip

    def attacker_master_and_no_event(b: dict[str, Any]) -> None:
        attacker_master(b)
        b["recall_receipt"].pop("event_receipt")

    out.append(
        Fixture("pin-and-event-absent", "recall", "aimos: the pin decides before an indeterminate verdict",
                _mutated(base, attacker_master_and_no_event),
                ("invalid", "recall_trust_anchor_master_mismatch"),
                reference=("indeterminate", "recall_mandatory_evidence_missing"))
    )  # fmt: skip

    out.extend(corpus_fixtures())
    return out


def base64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def corpus_fixtures() -> list[Fixture]:
    one = make_bundle("AIMOS-V1-CORPUS-001")
    two = make_bundle("AIMOS-V1-CORPUS-002", 1, epistemic=True)
    valid = make_corpus([one, two])
    out = [Fixture("corpus-valid", "corpus", "all checks pass, both members valid", valid, ("valid", None))]

    def bad(
        name: str, targets: str, verdict: str, reason: str, change: Callable[[dict[str, Any]], None]
    ) -> None:
        out.append(Fixture(name, "corpus", targets, _mutated(valid, change), (verdict, reason)))

    bad("corpus-extra-field", "corpus: exactly four fields", "invalid", "recall_corpus_schema_invalid",
        lambda c: c.__setitem__("note", "extra"))  # fmt: skip
    bad("corpus-format-version", "corpus: exact format (reported as intended_n)", "invalid",
        "recall_corpus_intended_n_invalid", lambda c: c["format"].__setitem__("version", 2))  # fmt: skip
    bad("corpus-member-missing", "corpus: members number intended_n", "invalid", "recall_corpus_intended_n_invalid",
        lambda c: c["members"].pop())  # fmt: skip
    bad("corpus-intended-n", "corpus: intended_n equals the members", "invalid", "recall_corpus_intended_n_invalid",
        lambda c: c.__setitem__("intended_n", 3))  # fmt: skip
    bad("corpus-members-reversed", "corpus member: ordinal", "invalid", "recall_corpus_member_invalid",
        lambda c: c["members"].reverse())  # fmt: skip

    def duplicate_id(c: dict[str, Any]) -> None:
        c["members"][1]["bundle_id"] = c["members"][0]["bundle_id"]
        c["members"][1]["bundle"]["bundle_id"] = c["members"][0]["bundle_id"]

    bad("corpus-duplicate-bundle-id", "corpus member: distinct bundle ids", "invalid", "recall_corpus_member_invalid",
        duplicate_id)  # fmt: skip
    bad("corpus-member-hash", "corpus member: bundle_sha256 = H(bundle)", "invalid", "recall_corpus_member_invalid",
        lambda c: c["members"][0].__setitem__("bundle_sha256", ZERO_HASH))  # fmt: skip
    bad("corpus-root", "corpus: the corpus root", "invalid", "recall_corpus_root_mismatch",
        lambda c: c.__setitem__("corpus_root", ZERO_HASH))  # fmt: skip

    def tampered_member(c: dict[str, Any]) -> None:
        c["members"][1]["bundle"]["recall_receipt"]["evidence"][0]["live_content_hash"] = ZERO_HASH
        reroot(c)

    bad("corpus-invalid-member", "corpus: a member's own verdict (hashes and root consistent)", "invalid",
        "recall_receipt_memory_binding_invalid:0", tampered_member)  # fmt: skip

    def indeterminate_member(c: dict[str, Any]) -> None:
        c["members"][0]["bundle"]["recall_receipt"].pop("event_receipt")
        reroot(c)

    bad("corpus-indeterminate-member", "corpus: an indeterminate member", "indeterminate",
        "recall_mandatory_evidence_missing", indeterminate_member)  # fmt: skip

    def both(c: dict[str, Any]) -> None:
        c["members"][0]["bundle"]["recall_receipt"].pop("event_receipt")
        c["members"][1]["bundle"]["request"]["signature"] = b64u_encode(bytes(64))
        reroot(c)

    bad("corpus-invalid-beats-indeterminate", "corpus: an invalid member outranks an earlier indeterminate one",
        "invalid", "recall_request_signature_invalid", both)  # fmt: skip
    return out


# --- files --------------------------------------------------------------------------------------
def render(document: Any) -> bytes:
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def build() -> dict[str, bytes]:
    """Every file this script writes, by name."""
    files: dict[str, bytes] = {}
    entries = []
    for fixture in fixtures():
        name = f"{fixture.name}.json"
        assert name not in files, name
        files[name] = render(fixture.document)
        reference = fixture.reference or fixture.expected
        entries.append(
            {
                "file": name,
                "kind": fixture.kind,
                "targets": fixture.targets,
                "expected_verdict": fixture.expected[0],
                "expected_primary_reason": fixture.expected[1],
                "reference_verdict": reference[0],
                "reference_primary_reason": reference[1],
                "sha256": hashlib.sha256(files[name]).hexdigest(),
            }
        )
    manifest = {
        "schema": MANIFEST_SCHEMA,
        "master_fingerprint": FIXTURE_KEYS.master.fingerprint,
        "key_seed": f'SHA-256("{KEY_SEED_PREFIX}" + label), labels master, agent, housekeeper, '
        "attacker-master, stranger",
        "expected": "aimos's verdict with --master-fingerprint master_fingerprint",
        "reference": "the reference verifier's verdict (it trusts the bundle's own anchors)",
        "fixtures": entries,
    }
    files[MANIFEST] = render(manifest)
    return files


def main(argv: list[str]) -> int:
    files = build()
    if "--check" in argv:
        drifted = [
            n for n, data in files.items() if not (HERE / n).is_file() or (HERE / n).read_bytes() != data
        ]
        stale = sorted(p.name for p in HERE.glob("*.json") if p.name not in files)
        for name in drifted + stale:
            print(f"drifted: {name}", file=sys.stderr)
        return 1 if drifted or stale else 0
    for stale_file in HERE.glob("*.json"):
        if stale_file.name not in files:
            stale_file.unlink()
    for name, data in files.items():
        (HERE / name).write_bytes(data)
    print(f"wrote {len(files)} files to {HERE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
