"""V2 recall checks 33-37 (Merkle entries and root, the housekeeper's signed event, the
revocation binding) and the 7 P2 cryptographic checks."""

from __future__ import annotations

from typing import Any

from aimos.crypto import commitments
from aimos.crypto.certs import parse_certificate, verify_certificate
from aimos.crypto.ed25519 import verify
from aimos.crypto.merkle import merkle_root
from aimos.crypto.messages import payload_message, request_message
from aimos.errors import AimosError
from aimos.verify.kit import (
    canonical_sha256_hex,
    is_dict,
    is_hex64,
    is_int,
    is_text,
    parse_time,
    same,
    sha256_hex,
    signature_bytes,
)
from aimos.verify.v2.recall_profile import (
    ACTOR_CERTIFICATE_SIGNATURE_INVALID,
    ACTOR_REQUEST_SIGNATURE_INVALID,
    EVENT_RECEIPT_BINDING_INVALID,
    EVENT_RECEIPT_COMMITMENT_INVALID,
    EXPECTED_TRUST_ANCHOR_REQUIRED,
    HOUSEKEEPER_CERTIFICATE_SIGNATURE_INVALID,
    HOUSEKEEPER_EVENT_SIGNATURE_INVALID,
    HOUSEKEEPER_IDENTITY_INVALID,
    HOUSEKEEPER_OCCURRENCE_SIGNATURE_INVALID,
    MASTER_GRANT_SIGNATURE_INVALID,
    MERKLE_ENTRY_BINDING_INVALID,
    MERKLE_ROOT_MISMATCH,
    REVOCATION_EVENT_BINDING_INVALID,
    result_object_ordinal,
    singleton_where,
)
from aimos.verify.v2.recall_run import RecallRun
from aimos.vocabulary import HOUSEKEEPER as HOUSEKEEPER
from aimos.vocabulary import MASTER_ISSUER as MASTER_ISSUER
from aimos.vocabulary import MASTER_SIGNED_RECALL_GRANT as MASTER_GRANT
from aimos.vocabulary import PATH_RECALL as REQUEST_PATH
from aimos.vocabulary import RECALL_RECEIPT_OPERATION
from aimos.vocabulary import REQUEST_METHOD as REQUEST_METHOD


# -- 33..37: Merkle entries, root, the housekeeper's event, revocation binding --
def check_merkle_and_event(run: RecallRun) -> None:
    native = run.body("native_recall_receipt")
    identity = run.body("actor_identity_epoch")
    hk = run.body("housekeeper_identity_epoch")
    native_where = singleton_where("native_recall_receipt")

    run.at(MERKLE_ENTRY_BINDING_INVALID, native_where)
    entries: list[Any] = [
        {"entry_type": "epistemic_decision", "decision_sha256": run.epistemic_hash},
        {"entry_type": "canary_final_security_closure", "decision_sha256": run.security_hash},
        *run.evidence,
    ]
    run.need(same(native.get("merkle_entries"), entries), "merkle_entries differ from the expected entries")

    run.at(MERKLE_ROOT_MISMATCH, native_where)
    root = merkle_root(entries).hex()
    run.need(native.get("merkle_root") == root, "native receipt merkle_root does not recompute")

    run.at(EVENT_RECEIPT_BINDING_INVALID, native_where)
    event = native.get("event_receipt")
    run.need(is_dict(event), "event_receipt is missing")
    assert isinstance(event, dict)
    body = event.get("signed_body")
    run.need(is_dict(body), "event_receipt signed_body is missing")
    assert isinstance(body, dict)
    metadata = body.get("metadata")
    run.need(is_dict(metadata), "event_receipt metadata is missing")
    assert isinstance(metadata, dict)
    run.need(body.get("operation") == RECALL_RECEIPT_OPERATION, "event operation is not recall_receipt")
    run.need(
        body.get("company_id") == identity.get("company_id")
        and body.get("actor_agent_id") == identity.get("agent_id"),
        "event company or actor differs from the actor epoch",
    )
    run.need(
        run.iso(body.get("actor_valid_from"), "event actor_valid_from") == run.valid_from,
        "event actor_valid_from differs from the actor epoch's",
    )
    for field in (
        "command_hash",
        "outer_request_hash",
        "authority_mutation_hash",
        "request_receipt_id",
        "request_receipt_mutation_hash",
    ):
        run.need(same(metadata.get(field), native.get(field)), f"event metadata {field} differs")
    run.need(metadata.get("merkle_root") == root, "event metadata merkle_root differs")
    run.need(
        is_int(metadata.get("result_count"), len(run.evidence), len(run.evidence)),
        "event metadata result_count differs",
    )
    run.need(same(metadata.get("evidence"), run.evidence), "event metadata evidence differs")
    run.need(
        same(metadata.get("return_projection"), native.get("return_projection")),
        "event metadata return_projection differs",
    )

    run.at(HOUSEKEEPER_IDENTITY_INVALID, native_where)
    run.need(body.get("signer_agent_id") == HOUSEKEEPER, "event signer is not the housekeeper")
    run.need(
        run.iso(body.get("signer_valid_from"), "event signer_valid_from") == run.hk_valid_from,
        "event signer_valid_from differs from the housekeeper epoch's",
    )
    run.need(
        body.get("cert_fingerprint") == run.hk_fingerprint,
        "event cert_fingerprint differs from the housekeeper epoch's",
    )
    signer_certificate = event.get("signer_certificate")
    run.need(
        isinstance(signer_certificate, str)
        and signer_certificate == hk.get("certificate")
        and sha256_hex(signer_certificate.encode("utf-8")) == run.hk_fingerprint,
        "event signer_certificate is not the housekeeper epoch's certificate",
    )

    run.at(EVENT_RECEIPT_COMMITMENT_INVALID, native_where)
    content = canonical_sha256_hex(body)
    run.need(event.get("content_hash") == content, "event content_hash is not H(canonical signed_body)")
    prev = run.hex64(event.get("prev_mutation_hash"), "event prev_mutation_hash")
    nonce, ts = event.get("nonce"), event.get("ts_signed")
    run.need(is_text(nonce) and is_int(ts) and ts >= 0, "event nonce or ts_signed is malformed")
    assert isinstance(nonce, str) and isinstance(ts, int)
    mutation = commitments.event_link_hash(bytes.fromhex(prev), bytes.fromhex(content), nonce, ts)
    run.need(event.get("mutation_hash") == mutation.hex(), "event mutation_hash does not recompute")
    run.need(
        body.get("prev_mutation_hash") == prev and is_int(body.get("ts_signed"), ts, ts),
        "event signed_body prev_mutation_hash / ts_signed differ from the event's",
    )
    run.need(
        signature_bytes(event.get("signature_b64u")) is not None,
        "event signature_b64u is not 64 bytes of canonical base64url",
    )

    for kind in ("actor_revocation_state", "housekeeper_revocation_state"):
        run.at(REVOCATION_EVENT_BINDING_INVALID, singleton_where(kind))
        state = run.body(kind)
        run.need(
            state.get("source_event_mutation_hash") == event["mutation_hash"]
            and is_int(state.get("evaluated_at_unix_seconds"), ts, ts),
            f"{kind} is not evaluated at the recall event",
        )


# -- P2: signatures --
def check_cryptography(run: RecallRun, expected_master_fingerprint: object) -> None:
    trust = run.body("trust_anchor")
    identity = run.body("actor_identity_epoch")
    hk = run.body("housekeeper_identity_epoch")
    grant = run.body("effective_recall_grant")
    request = run.body("request_envelope")
    native = run.body("native_recall_receipt")
    event = native["event_receipt"]

    run.at(EXPECTED_TRUST_ANCHOR_REQUIRED)
    expected = expected_master_fingerprint.lower() if isinstance(expected_master_fingerprint, str) else None
    run.need(is_hex64(expected), "an expected master fingerprint (64 hex) must be supplied by the caller")
    run.need(
        expected == run.fingerprint,
        "the supplied master fingerprint differs from the bundle's expected_master_fingerprint",
    )
    assert isinstance(expected, str)
    master_key = trust["master_public_key_b64u"]

    run.at(ACTOR_CERTIFICATE_SIGNATURE_INVALID, singleton_where("actor_identity_epoch"))
    check_certificate(run, identity, identity["agent_id"], master_key, expected, run.request_ts)
    run.at(HOUSEKEEPER_CERTIFICATE_SIGNATURE_INVALID, singleton_where("housekeeper_identity_epoch"))
    check_certificate(run, hk, HOUSEKEEPER, master_key, expected, event["ts_signed"])

    if grant["authority_kind"] == MASTER_GRANT:
        run.at(MASTER_GRANT_SIGNATURE_INVALID, singleton_where("effective_recall_grant"))
        message = payload_message(grant["signed_body"], grant["nonce"], grant["ts_signed"])
        check_signature(run, master_key, message, grant["signature_b64u"], "master grant")

    run.at(ACTOR_REQUEST_SIGNATURE_INVALID, singleton_where("request_envelope"))
    message = request_message(
        request["request_body"], REQUEST_METHOD, REQUEST_PATH, request["nonce"], run.request_ts
    )
    check_signature(run, identity["public_key_b64u"], message, request["signature_b64u"], "actor request")

    run.at(HOUSEKEEPER_EVENT_SIGNATURE_INVALID, singleton_where("native_recall_receipt"))
    message = payload_message(event["signed_body"], event["nonce"], event["ts_signed"])
    check_signature(run, hk["public_key_b64u"], message, event["signature_b64u"], "housekeeper event")

    for r, group in enumerate(run.results):
        run.at(HOUSEKEEPER_OCCURRENCE_SIGNATURE_INVALID, f"result {r}")
        occurrence = group["occurrence"]["body"]
        ordinal = result_object_ordinal(r, "occurrence")
        run.need(
            occurrence.get("occurrence_form") == "v3",
            f"objects[{ordinal}]: only a v3 occurrence carries a housekeeper signature",
        )
        run.need(
            occurrence.get("signer_certificate") == hk["certificate"],
            f"objects[{ordinal}]: the occurrence signer certificate is not the housekeeper's",
        )
        message = commitments.occurrence_v3_signature_message(run.commitments[r])
        check_signature(
            run,
            hk["public_key_b64u"],
            message,
            occurrence.get("signature_b64u"),
            f"objects[{ordinal}] occurrence",
        )


def check_certificate(
    run: RecallRun, epoch: dict[str, Any], agent_id: str, master_key: str, expected: str, at: int
) -> None:
    try:
        cert = parse_certificate(epoch["certificate"])
    except AimosError as exc:
        run.fail(f"the certificate cannot be parsed ({exc.reason or exc.message})")
    run.need(
        cert.agent_id == agent_id and cert.pubkey == epoch.get("public_key_b64u"),
        "the certificate names another agent or public key than the epoch",
    )
    try:
        verify_certificate(cert, master_key, at=at, accepted_issuers=(MASTER_ISSUER, expected))
    except AimosError as exc:
        run.fail(
            f"the certificate does not verify under the master key at {at} ({exc.reason or exc.message})"
        )
    run.signatures += 1
    run.need(
        cert.valid_from == parse_time(epoch.get("valid_from"))
        and cert.valid_until == parse_time(epoch.get("valid_until")),
        "the certificate window differs from the epoch's valid_from / valid_until",
    )


def check_signature(
    run: RecallRun, public_key: object, message: bytes, signature_b64u: object, what: str
) -> None:
    signature = signature_bytes(signature_b64u)
    run.need(
        isinstance(public_key, str) and signature is not None and verify(public_key, message, signature),
        f"the {what} signature does not verify",
    )
    run.signatures += 1
