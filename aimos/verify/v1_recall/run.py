"""One verification run over a V1 recall bundle, in the reference's order: envelope, trust
anchors, the request (its certificate, context, signature and command), the receipt, the
housekeeper's event receipt, and aimos's own last check of the caller's master. Each step fails
through the kit; absent mandatory evidence fails with ``recall_mandatory_evidence_missing``, which
the entry point reports as *indeterminate*."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aimos import vocabulary
from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json
from aimos.crypto.certs import verify_certificate
from aimos.crypto.ed25519 import fingerprint_of_der, verify
from aimos.crypto.merkle import merkle_root
from aimos.crypto.messages import payload_message, request_message
from aimos.errors import AimosError
from aimos.verify.kit import (
    b64u,
    canonical_sha256_hex,
    fail,
    fields_are,
    is_dict,
    is_hex64,
    is_int,
    is_text,
    same,
    same_object,
    sha256_hex,
    spki_der,
)
from aimos.verify.v1_recall.command import (
    epistemic_entries,
    memory_binding,
    metadata,
    read_certificate,
    recall_command,
)
from aimos.verify.v1_recall.shape import (
    CERTIFICATE_ANCHOR_FIELDS,
    EVENT_RECEIPT_FIELDS,
    LEDGER_VERSION,
    MASTER_ANCHOR_FIELDS,
    MAX_CERTIFICATE_ANCHORS,
    RECALL_FIELDS,
    RECALL_FORMAT,
    RECEIPT_OPTIONAL_FIELDS,
    RECEIPT_REQUIRED_FIELDS,
    REQUEST_FIELDS,
    TRUST_ANCHOR_FIELDS,
    R,
)
from aimos.vocabulary import PATH_RECALL as RECALL_PATH
from aimos.vocabulary import RECALL_RECEIPT_OPERATION
from aimos.vocabulary import REQUEST_METHOD as RECALL_METHOD


@dataclass
class Trusted:
    body: dict[str, Any]
    fingerprint: str
    under_master: bool


class RecallRun:
    def __init__(self, bundle: dict[str, Any]) -> None:
        self.bundle = bundle
        self.signatures = 0
        self.request_under_master = False
        self.command_hash: str | None = None
        self.outer_hash: str | None = None
        self.root: str | None = None
        self.leaves: int | None = None

    # -- envelope and anchors --
    def envelope(self) -> None:
        b = self.bundle
        if set(b) != RECALL_FIELDS:
            extra, missing = sorted(set(b) - RECALL_FIELDS), sorted(RECALL_FIELDS - set(b))
            fail(R.BUNDLE_SCHEMA_INVALID, f"top-level fields: unknown {extra}, missing {missing}")
        if not same_object(b["format"], RECALL_FORMAT):
            fail(R.BUNDLE_SCHEMA_INVALID, f"format must be exactly {dict(RECALL_FORMAT)}")
        if not is_text(b["bundle_id"]) or not is_text(b["company_id"]):
            fail(R.BUNDLE_SCHEMA_INVALID, "bundle_id and company_id must be non-empty strings")
        if not isinstance(b["memories"], list):
            fail(R.BUNDLE_SCHEMA_INVALID, "memories is not a list")

    def trust_anchors(self) -> None:
        anchors = self.bundle["trust_anchors"]
        if not fields_are(anchors, TRUST_ANCHOR_FIELDS):
            fail(R.TRUST_ANCHOR_SCHEMA_INVALID, "trust_anchors must be exactly {master, certificates}")
        master = anchors["master"]
        if master is not None:
            if not fields_are(master, MASTER_ANCHOR_FIELDS):
                fail(
                    R.TRUST_ANCHOR_SCHEMA_INVALID, "the master anchor must be {public_key_b64u, fingerprint}"
                )
            if not is_hex64(master["fingerprint"]):
                fail(R.TRUST_ANCHOR_SCHEMA_INVALID, "the master fingerprint is not 64 lowercase hex")
            key = master["public_key_b64u"]
            if not is_text(key) or len(key) % 4 == 1:
                fail(R.MASTER_KEY_INVALID, "the master public key is not base64url")
            der = b64u(key)
            if der is None or fingerprint_of_der(der) != master["fingerprint"]:
                fail(R.TRUST_ANCHOR_SCHEMA_INVALID, "the master fingerprint is not H(public key DER)")
        certificates = anchors["certificates"]
        if not isinstance(certificates, list) or len(certificates) > MAX_CERTIFICATE_ANCHORS:
            fail(
                R.TRUST_ANCHOR_SCHEMA_INVALID,
                f"certificates must be a list of at most {MAX_CERTIFICATE_ANCHORS}",
            )
        seen: set[str] = set()
        for index, anchor in enumerate(certificates):
            where = f"trust_anchors.certificates[{index}]"
            if not fields_are(anchor, CERTIFICATE_ANCHOR_FIELDS):
                fail(
                    R.TRUST_ANCHOR_SCHEMA_INVALID, f"{where} must be {{certificate_sha256, public_key_b64u}}"
                )
            digest = anchor["certificate_sha256"]
            if not is_hex64(digest) or digest in seen:
                fail(R.TRUST_ANCHOR_SCHEMA_INVALID, f"{where}: certificate_sha256 is malformed or repeated")
            if spki_der(anchor["public_key_b64u"]) is None:
                fail(R.PUBLIC_KEY_INVALID, f"{where}: public_key_b64u is not an Ed25519 SPKI key")
            seen.add(digest)

    def certificate(self, text: object, signed_at: object, what: str) -> Trusted:
        """The certificate ``text`` checked against the bundle's anchors at time ``signed_at``."""
        cert = read_certificate(text, what)
        body = cert.body
        fingerprint = sha256_hex(cert.text)
        anchors = self.bundle["trust_anchors"]
        authority: str | None = None
        under_master = False
        if same(body["issuer"], body["agent_id"]):
            for anchor in anchors["certificates"]:
                if anchor["certificate_sha256"] == fingerprint and same(
                    anchor["public_key_b64u"], body["pubkey"]
                ):
                    authority = anchor["public_key_b64u"]
                    break
        else:
            master = anchors["master"]
            if master is not None and (
                body["issuer"] == vocabulary.MASTER_ISSUER or same(body["issuer"], master["fingerprint"])
            ):
                authority, under_master = master["public_key_b64u"], True
        if authority is None:
            fail(R.TRUST_ANCHOR_MISSING, f"the {what} certificate chains to no trust anchor of the bundle")
        try:
            verify_certificate(cert, authority, accepted_issuers=(body["issuer"],))
        except AimosError:
            fail(R.CERT_SIG_INVALID, f"the {what} certificate's issuer signature does not verify")
        self.signatures += 1
        if not is_int(signed_at) or not cert.valid_from <= signed_at <= cert.valid_until:
            fail(R.CERT_EPOCH_INVALID, f"the {what} was not signed within its certificate's validity")
        return Trusted(body, fingerprint, under_master)

    # -- the request and the command --
    def request(self) -> dict[str, Any]:
        request = self.bundle["request"]
        if not fields_are(request, REQUEST_FIELDS) or not is_dict(request["body"]):
            fail(
                R.REQUEST_SCHEMA_INVALID,
                "request must be exactly {body (an object), method, path, nonce, "
                "ts_signed, signature, certificate}",
            )
        body: dict[str, Any] = request["body"]
        trusted = self.certificate(request["certificate"], request["ts_signed"], "request")
        self.request_under_master = trusted.under_master
        if not same(trusted.body["agent_id"], body.get("agent_id")):
            fail(R.REQUEST_IDENTITY_INVALID, "the request certificate is not the body's agent_id")
        nonce, ts = request["nonce"], request["ts_signed"]
        if (
            request["method"] != RECALL_METHOD
            or request["path"] != RECALL_PATH
            or not same(body.get("ts_signed"), ts)
            or not is_text(nonce)
        ):
            fail(
                R.REQUEST_CONTEXT_INVALID,
                f"the request must be {RECALL_METHOD} {RECALL_PATH} with the body's ts_signed and a nonce",
            )
        signature = b64u(request["signature"])
        message = request_message(body, RECALL_METHOD, RECALL_PATH, nonce, ts)
        pubkey = trusted.body["pubkey"]
        if signature is None or not isinstance(pubkey, str) or not verify(pubkey, message, signature):
            fail(R.REQUEST_SIGNATURE_INVALID, "the agent's request signature does not verify")
        self.signatures += 1
        return recall_command(body)

    # -- the receipt --
    def receipt(self, command: Mapping[str, Any]) -> None:
        if not same(command["company_id"], self.bundle["company_id"]):
            fail(R.SCOPE_BINDING_INVALID, "the recall command's company is not the bundle's")
        receipt = self.bundle["recall_receipt"]
        if not is_dict(receipt) or not isinstance(receipt.get("evidence"), list):
            fail(R.MANDATORY_EVIDENCE_MISSING, "the recall receipt or its evidence list is absent")
        if not RECEIPT_REQUIRED_FIELDS <= set(receipt) <= RECEIPT_REQUIRED_FIELDS | RECEIPT_OPTIONAL_FIELDS:
            fail(R.RECEIPT_SCHEMA_INVALID, "recall_receipt has missing or unknown fields")
        evidence: list[Any] = receipt["evidence"]
        memories: list[Any] = self.bundle["memories"]
        if len(evidence) != len(memories):
            fail(R.EVIDENCE_COUNT_MISMATCH, f"{len(evidence)} evidence entries for {len(memories)} memories")
        for index, memory in enumerate(memories):
            memory_binding(index, memory, evidence[index], command)
        entries = evidence
        if receipt.get("merkle_schema") is not None:
            entries = epistemic_entries(receipt)
        command_hash = canonical_sha256_hex(dict(command))
        outer_hash = canonical_sha256_hex(self.bundle["request"]["body"])
        root = merkle_root(entries).hex()
        if not (
            same(receipt["command_hash"], command_hash)
            and same(receipt["outer_request_hash"], outer_hash)
            and same(receipt["merkle_root"], root)
            and is_hex64(receipt["authority_mutation_hash"])
            and is_hex64(receipt["request_receipt_mutation_hash"])
        ):
            fail(
                R.CRYPTOGRAPHIC_BINDING_INVALID,
                "the receipt's command hash, outer request hash, Merkle root "
                "or mutation hashes do not match the request and evidence",
            )
        self.command_hash, self.outer_hash, self.root, self.leaves = (
            command_hash,
            outer_hash,
            root,
            len(entries),
        )

    def event(self) -> None:
        receipt: dict[str, Any] = self.bundle["recall_receipt"]
        event = receipt.get("event_receipt")
        if event is None:
            fail(R.MANDATORY_EVIDENCE_MISSING, "the housekeeper's event receipt is absent")
        if not fields_are(event, EVENT_RECEIPT_FIELDS):
            fail(R.EVENT_RECEIPT_SCHEMA_INVALID, "event_receipt has missing or unknown fields")
        trusted = self.certificate(event["signer_certificate"], event["ts_signed"], "event receipt")
        body = event["signed_body"]
        if not is_dict(body):
            fail(R.EVENT_BODY_INVALID, "the event's signed_body is not an object")
        if not is_hex64(event["prev_mutation_hash"]):
            fail(R.EVENT_PREVIOUS_HASH_INVALID, "the event's prev_mutation_hash is not 64 lowercase hex")
        ts: int = event["ts_signed"]  # an integer: the certificate epoch check passed
        nonce = str(event["nonce"])
        content = commitments.sha256(canonical_json(body))
        mutation = commitments.event_link_hash(bytes.fromhex(event["prev_mutation_hash"]), content, nonce, ts)
        meta = metadata(body)
        evidence = receipt["evidence"]
        bound = (
            event["proof_required"] is True
            and same(event["ledger_version"], LEDGER_VERSION)
            and same(body.get("ledger_version"), LEDGER_VERSION)
            and same(event["event_id"], body.get("event_id"))
            and same(event["signer_agent_id"], body.get("signer_agent_id"))
            and same(event["signer_valid_from"], body.get("signer_valid_from"))
            and same(event["ts_signed"], body.get("ts_signed"))
            and same(event["cert_fingerprint"], trusted.fingerprint)
            and same(body.get("cert_fingerprint"), trusted.fingerprint)
            and same(event["content_hash"], content.hex())
            and same(event["mutation_hash"], mutation.hex())
            and same(event["prev_mutation_hash"], body.get("prev_mutation_hash"))
            and same(body.get("company_id"), self.bundle["company_id"])
            and same(body.get("operation"), RECALL_RECEIPT_OPERATION)
            and same(body.get("key"), self.command_hash)
            and meta is not None
            and same(meta.get("command_hash"), self.command_hash)
            and same(meta.get("outer_request_hash"), self.outer_hash)
            and same(meta.get("merkle_root"), self.root)
            and same(meta.get("result_count"), len(evidence))
            and same(meta.get("evidence"), evidence)
        )
        if not bound:
            fail(R.EVENT_BINDING_INVALID, "the event's hashes or signed body do not bind this receipt")
        signature = b64u(event["signature"])
        pubkey = trusted.body["pubkey"]
        message = payload_message(body, nonce, ts)
        if signature is None or not isinstance(pubkey, str) or not verify(pubkey, message, signature):
            fail(R.EVENT_SIGNATURE_INVALID, "the housekeeper's event signature does not verify")
        self.signatures += 1

    def pinned(self, expected_master_fingerprint: str | None) -> None:
        """aimos's own last check: the caller's master, not merely the bundle's (module doc)."""
        if expected_master_fingerprint is None:
            return
        master = self.bundle["trust_anchors"]["master"]
        expected = (
            expected_master_fingerprint.strip().lower()
            if isinstance(expected_master_fingerprint, str)
            else None
        )
        if master is None or master["fingerprint"] != expected:
            fail(R.MASTER_MISMATCH, "the bundle's master anchor is not the expected master fingerprint")
        if not self.request_under_master:
            fail(R.MASTER_MISMATCH, "the request certificate is not issued by the expected master")
