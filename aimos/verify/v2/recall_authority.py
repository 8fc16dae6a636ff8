"""V2 recall checks 3-20: the trust anchor, the actor and housekeeper identity epochs and
revocation states, the effective grant (master-signed or the housekeeper system principal), the
request envelope and its receipt, in the reference's check order."""

from __future__ import annotations

from typing import Any

from aimos.crypto import commitments
from aimos.verify import kit
from aimos.verify.v2.recall_profile import (
    AUTHORITY_MUTATION_BINDING_INVALID,
    COMMAND_HASH_MISMATCH,
    DECISION_HASH_MALFORMED,
    GRANT_COMMITMENT_INVALID,
    GRANT_NOT_EFFECTIVE,
    GRANT_SCOPE_MISMATCH,
    HOUSEKEEPER_IDENTITY_INVALID,
    HOUSEKEEPER_REVOCATION_STATE_INVALID,
    HOUSEKEEPER_SYSTEM_PRINCIPAL_INVALID,
    IDENTITY_CERTIFICATE_BINDING_INVALID,
    IDENTITY_EPOCH_INVALID,
    IDENTITY_SCOPE_MISMATCH,
    REQUEST_BODY_HASH_MISMATCH,
    REQUEST_CONTEXT_INVALID,
    REQUEST_RECEIPT_BINDING_INVALID,
    REQUEST_RECEIPT_COMMITMENT_INVALID,
    REVOCATION_STATE_INVALID,
    SYSTEM_PRINCIPAL_FORBIDDEN,
    TRUST_ANCHOR_KEY_MISMATCH,
    TRUST_ROOT_MISMATCH,
    singleton_where,
)
from aimos.verify.v2.recall_run import RecallRun
from aimos.vocabulary import CLEARANCE_MAX as MAX_CLEARANCE
from aimos.vocabulary import DATA_CLASSES as DATA_CLASSES
from aimos.vocabulary import HOUSEKEEPER as HOUSEKEEPER
from aimos.vocabulary import HOUSEKEEPER_SYSTEM_PRINCIPAL as SYSTEM_PRINCIPAL
from aimos.vocabulary import HOUSEKEEPER_TIERS as HOUSEKEEPER_TIERS
from aimos.vocabulary import MASTER_SIGNED_RECALL_GRANT as MASTER_GRANT
from aimos.vocabulary import PATH_RECALL as REQUEST_PATH
from aimos.vocabulary import RECALL_AUTHORIZATION_SCHEMA as RECALL_AUTHORIZATION_SCHEMA
from aimos.vocabulary import REQUEST_METHOD as REQUEST_METHOD
from aimos.vocabulary import REQUEST_SIG_FORM as REQUEST_SIG_FORM
from aimos.vocabulary import RESTRICTED


# -- 3..20: trust anchor, identities, revocations, grant, request, receipt --
def check_authority(run: RecallRun) -> None:
    trust, identity, revocation, hk, hk_revocation, grant, request, receipt, native = run.bodies(
        "trust_anchor actor_identity_epoch actor_revocation_state housekeeper_identity_epoch "
        "housekeeper_revocation_state effective_recall_grant request_envelope request_receipt "
        "native_recall_receipt"
    )
    company = run.company

    run.at(TRUST_ROOT_MISMATCH, singleton_where("trust_anchor"))
    # reference quirk: a malformed fingerprint here reports DECISION_HASH_MALFORMED
    master_fp = run.hex64(trust.get("master_fingerprint"), "master_fingerprint", DECISION_HASH_MALFORMED)
    run.need(master_fp == run.fingerprint, "master_fingerprint differs from expected_master_fingerprint")

    run.at(TRUST_ANCHOR_KEY_MISMATCH, singleton_where("trust_anchor"))
    master_key = kit.b64u(trust.get("master_public_key_b64u"), nonempty=True)
    run.need(master_key is not None, "master_public_key_b64u is not canonical base64url")
    assert master_key is not None
    run.need(kit.sha256_hex(master_key) == master_fp, "H(master public key) differs from master_fingerprint")

    run.at(IDENTITY_CERTIFICATE_BINDING_INVALID, singleton_where("actor_identity_epoch"))
    agent_id = identity.get("agent_id")
    valid_from = run.iso(identity.get("valid_from"), "actor valid_from", IDENTITY_SCOPE_MISMATCH)
    cert_fp = run.hex64(identity.get("cert_fingerprint"), "actor cert_fingerprint", IDENTITY_SCOPE_MISMATCH)
    certificate = run.certificate_binds(identity, cert_fp, "actor")

    run.at(IDENTITY_SCOPE_MISMATCH, singleton_where("actor_identity_epoch"))
    run.need(kit.is_text(agent_id), "actor agent_id must be a non-empty string")
    assert isinstance(agent_id, str)
    run.need(identity.get("company_id") == company, "actor epoch company differs from the bundle's")
    for kind, body, agent_field in (
        ("request_envelope", request, "actor_agent_id"),
        ("request_receipt", receipt, "actor_agent_id"),
    ):
        run.where = singleton_where(kind)
        run.need(body.get("company_id") == company, f"{kind} company differs from the bundle's")
        run.need(body.get(agent_field) == agent_id, f"{kind} actor differs from the actor epoch's")
        run.need(
            run.iso(body.get("actor_valid_from"), f"{kind} actor_valid_from") == valid_from,
            f"{kind} actor_valid_from differs from the actor epoch's",
        )
        run.need(
            body.get("cert_fingerprint") == cert_fp,
            f"{kind} cert_fingerprint differs from the actor epoch's",
        )
    run.agent_id, run.valid_from, run.cert_fingerprint = agent_id, valid_from, cert_fp

    run.at(HOUSEKEEPER_IDENTITY_INVALID, singleton_where("housekeeper_identity_epoch"))
    hk_valid_from = run.iso(hk.get("valid_from"), "housekeeper valid_from")
    hk_fp = run.hex64(hk.get("cert_fingerprint"), "housekeeper cert_fingerprint")
    run.need(hk.get("company_id") == company, "housekeeper epoch company differs from the bundle's")
    run.need(hk.get("agent_id") == HOUSEKEEPER, "housekeeper epoch agent_id must be housekeeper")
    hk_certificate = run.certificate_binds(hk, hk_fp, HOUSEKEEPER)
    run.hk_valid_from, run.hk_fingerprint = hk_valid_from, hk_fp

    if agent_id == HOUSEKEEPER:
        run.at(HOUSEKEEPER_SYSTEM_PRINCIPAL_INVALID, singleton_where("actor_identity_epoch"))
        run.need(
            identity.get("identity_tier") in HOUSEKEEPER_TIERS,
            "the housekeeper actor's tier must be T1 or T1_SYSTEM_SELF",
        )
        run.need(
            valid_from == hk_valid_from
            and cert_fp == hk_fp
            and certificate == hk_certificate
            and kit.same(identity.get("public_key_b64u"), hk.get("public_key_b64u")),
            "the housekeeper actor epoch differs from the housekeeper epoch",
        )

    run.at(IDENTITY_EPOCH_INVALID, singleton_where("request_envelope"))
    request_ts = request.get("ts_signed")
    run.need(kit.is_int(request_ts), "request ts_signed must be a safe integer")
    assert isinstance(request_ts, int)
    run.where = singleton_where("actor_identity_epoch")
    valid_until = run.iso(identity.get("valid_until"), "actor valid_until")
    start, end = kit.parse_time(valid_from), kit.parse_time(valid_until)
    assert start is not None and end is not None
    run.need(
        start <= request_ts <= end,
        f"request ts_signed {request_ts} is outside the actor epoch [{start}, {end}]",
    )
    run.request_ts = request_ts

    run.at(REVOCATION_STATE_INVALID, singleton_where("actor_revocation_state"))
    check_revocation_state(run, revocation, agent_id, valid_from, "actor")
    evaluated = revocation["evaluated_at_unix_seconds"]
    assert isinstance(evaluated, int)
    run.need(evaluated >= request_ts, "actor revocation state was evaluated before the request")

    run.at(HOUSEKEEPER_REVOCATION_STATE_INVALID, singleton_where("housekeeper_revocation_state"))
    check_revocation_state(run, hk_revocation, HOUSEKEEPER, hk_valid_from, HOUSEKEEPER)

    check_grant(run, grant, request)
    check_request(run, request)
    check_request_receipt(run, request, receipt, native)

    run.at(AUTHORITY_MUTATION_BINDING_INVALID, singleton_where("native_recall_receipt"))
    run.need(
        kit.is_hex64(grant.get("mutation_hash"))
        and native.get("authority_mutation_hash") == grant["mutation_hash"],
        "native receipt authority_mutation_hash differs from the grant's mutation_hash",
    )
    run.bind(
        (REQUEST_CONTEXT_INVALID, "native_recall_receipt", field, request.get(field), detail)
        for field, detail in (
            ("outer_request_hash", "native receipt outer_request_hash differs from the request's"),
            ("command_hash", "native receipt command_hash differs from the request's"),
        )
    )


def check_revocation_state(
    run: RecallRun, state: dict[str, Any], agent_id: str, valid_from: str, who: str
) -> None:
    run.need(state.get("company_id") == run.company, f"{who} revocation state company differs")
    run.need(state.get("agent_id") == agent_id, f"{who} revocation state agent differs")
    run.need(
        run.iso(state.get("valid_from"), f"{who} revocation valid_from") == valid_from,
        f"{who} revocation state valid_from differs from the epoch's",
    )
    run.need(state.get("revoked") is False, f"{who} revocation state must have revoked = false")
    run.need(
        kit.is_int(state.get("evaluated_at_unix_seconds")),
        f"{who} revocation evaluated_at_unix_seconds must be a safe integer",
    )


def check_grant(run: RecallRun, grant: dict[str, Any], request: dict[str, Any]) -> None:
    where = singleton_where("effective_recall_grant")
    run.at(GRANT_SCOPE_MISMATCH, where)
    run.need(grant.get("company_id") == run.company, "grant company differs from the bundle's")
    run.need(grant.get("subject_agent_id") == run.agent_id, "grant subject differs from the actor")
    run.need(
        run.iso(grant.get("subject_valid_from"), "grant subject_valid_from") == run.valid_from,
        "grant subject_valid_from differs from the actor epoch's",
    )
    run.need(
        grant.get("master_fingerprint") == run.fingerprint,
        "grant master_fingerprint differs from expected_master_fingerprint",
    )
    clearance = grant.get("clearance_ceiling")
    run.need(
        kit.is_int(clearance) and 0 <= clearance <= MAX_CLEARANCE,
        f"grant clearance_ceiling must be an integer 0..{MAX_CLEARANCE}",
    )
    assert isinstance(clearance, int)
    requested = request.get("requested_clearance_level")
    requested = clearance if requested is None else requested
    run.need(
        kit.is_int(requested) and 0 <= requested <= clearance,
        "requested_clearance_level must be an integer 0..clearance_ceiling",
    )
    ceiling = grant.get("data_class_ceiling")
    run.need(ceiling in DATA_CLASSES, "grant data_class_ceiling is not a known data class")

    run.at(GRANT_NOT_EFFECTIVE, where)
    run.need(grant.get("allowed") is True, "grant allowed is not true")
    requested_class = request.get("requested_data_class")
    if requested_class is not None:
        run.where = singleton_where("request_envelope")
        run.need(requested_class in DATA_CLASSES, "requested_data_class is not a known data class")
        run.need(
            DATA_CLASSES.index(requested_class) <= DATA_CLASSES.index(ceiling),
            "requested_data_class ranks above the grant's data_class_ceiling",
        )

    kind = grant.get("authority_kind")
    if kind == MASTER_GRANT:
        check_master_grant(run, grant, clearance, ceiling)
    elif kind == SYSTEM_PRINCIPAL:
        check_system_principal(run, grant, clearance, ceiling)
    else:
        run.at(GRANT_COMMITMENT_INVALID, where)
        run.fail("grant authority_kind is unknown")


def check_master_grant(run: RecallRun, grant: dict[str, Any], clearance: int, ceiling: object) -> None:
    run.at(GRANT_COMMITMENT_INVALID, singleton_where("effective_recall_grant"))
    run.need(run.agent_id != HOUSEKEEPER, "the housekeeper cannot hold a master-signed recall grant")
    body = grant.get("signed_body")
    run.need(kit.is_dict(body), "grant signed_body is not an object")
    assert isinstance(body, dict)
    run.need(body.get("schema") == RECALL_AUTHORIZATION_SCHEMA, "grant signed_body schema is wrong")
    run.need(
        body.get("company_id") == grant.get("company_id")
        and body.get("subject_agent_id") == grant.get("subject_agent_id"),
        "grant signed_body company or subject differs from the grant",
    )
    run.need(
        run.iso(body.get("subject_valid_from"), "signed_body subject_valid_from") == run.valid_from,
        "grant signed_body subject_valid_from differs from the actor epoch's",
    )
    run.need(body.get("allowed") is True, "grant signed_body allowed is not true")
    run.need(
        kit.is_int(body.get("clearance_ceiling"), clearance, clearance)
        and body.get("data_class_ceiling") == ceiling
        and body.get("master_fingerprint") == grant.get("master_fingerprint"),
        "grant signed_body ceilings or master fingerprint differ from the grant",
    )
    content = kit.canonical_sha256_hex(body)
    run.need(grant.get("content_hash") == content, "grant content_hash is not H(canonical signed_body)")
    prev = grant.get("prev_mutation_hash")
    run.need(prev is None or kit.is_hex64(prev), "grant prev_mutation_hash is neither null nor a hash")
    nonce, ts = grant.get("nonce"), grant.get("ts_signed")
    run.need(isinstance(nonce, str) and kit.is_int(ts), "grant nonce or ts_signed is malformed")
    assert isinstance(nonce, str) and isinstance(ts, int)
    mutation = commitments.recall_authorization_mutation_hash(
        None if prev is None else bytes.fromhex(prev), bytes.fromhex(content), nonce, ts
    )
    run.need(grant.get("mutation_hash") == mutation.hex(), "grant mutation_hash does not recompute")
    run.need(
        kit.signature_bytes(grant.get("signature_b64u")) is not None,
        "grant signature_b64u is not 64 bytes of canonical base64url",
    )


def check_system_principal(run: RecallRun, grant: dict[str, Any], clearance: int, ceiling: object) -> None:
    run.at(HOUSEKEEPER_SYSTEM_PRINCIPAL_INVALID, singleton_where("effective_recall_grant"))
    run.need(run.agent_id == HOUSEKEEPER, "only the housekeeper acts as the system principal")
    present = [field for field in SYSTEM_PRINCIPAL_FORBIDDEN if field in grant]
    run.need(not present, f"a system-principal grant must not carry {present}")
    system = grant.get("system_principal_body")
    run.need(kit.is_dict(system), "system_principal_body is not an object")
    assert isinstance(system, dict)
    valid_from = run.iso(system.get("valid_from"), "system_principal_body valid_from")
    run.need(
        system.get("kind") == SYSTEM_PRINCIPAL
        and system.get("company_id") == run.company
        and system.get("agent_id") == HOUSEKEEPER
        and valid_from == run.valid_from,
        "system_principal_body does not name this company's housekeeper epoch",
    )
    run.need(
        clearance == MAX_CLEARANCE and ceiling == RESTRICTED,
        "the system principal has clearance 12 and data class restricted",
    )
    principal = {
        "kind": SYSTEM_PRINCIPAL,
        "company_id": run.company,
        "agent_id": HOUSEKEEPER,
        "valid_from": valid_from,
    }
    run.need(
        grant.get("mutation_hash") == kit.canonical_sha256_hex(principal),
        "grant mutation_hash is not the system-principal hash",
    )


def check_request(run: RecallRun, request: dict[str, Any]) -> None:
    run.at(REQUEST_CONTEXT_INVALID, singleton_where("request_envelope"))
    run.need(
        kit.is_int(request.get("request_sig_form"), REQUEST_SIG_FORM, REQUEST_SIG_FORM),
        "request_sig_form must be 3",
    )
    run.need(
        request.get("signed_method") == REQUEST_METHOD and request.get("signed_path") == REQUEST_PATH,
        "the request must be POST /aimos/recall",
    )
    run.need(kit.is_text(request.get("nonce")), "request nonce must be a non-empty string")
    run.need(
        kit.signature_bytes(request.get("signature_b64u")) is not None,
        "request signature_b64u is not 64 bytes of canonical base64url",
    )
    run.need(kit.is_dict(request.get("request_body")), "request_body is not an object")

    run.at(REQUEST_BODY_HASH_MISMATCH, singleton_where("request_envelope"))
    run.request_hash = kit.canonical_sha256_hex(request["request_body"])
    run.need(
        request.get("request_body_hash") == run.request_hash,
        "request_body_hash is not H(canonical request_body)",
    )
    run.need(
        request.get("outer_request_hash") == run.request_hash,
        "outer_request_hash is not H(canonical request_body)",
    )

    run.at(COMMAND_HASH_MISMATCH, singleton_where("request_envelope"))
    command = request.get("normalized_command")
    run.need(kit.is_dict(command), "normalized_command is not an object")
    run.need(
        request.get("command_hash") == kit.canonical_sha256_hex(command),
        "command_hash is not H(canonical normalized_command)",
    )


def check_request_receipt(
    run: RecallRun, request: dict[str, Any], receipt: dict[str, Any], native: dict[str, Any]
) -> None:
    run.at(REQUEST_RECEIPT_BINDING_INVALID, singleton_where("request_receipt"))
    receipt_id = receipt.get("request_receipt_id")
    run.need(kit.is_uuid(receipt_id, rfc4122=True), "request_receipt_id is not a lowercase UUID")
    run.need(
        kit.is_int(receipt.get("request_sig_form"), REQUEST_SIG_FORM, REQUEST_SIG_FORM)
        and kit.is_int(receipt.get("ts_signed"), run.request_ts, run.request_ts),
        "receipt request_sig_form or ts_signed differs from the request's",
    )
    for field in ("signed_method", "signed_path", "nonce"):
        run.need(
            kit.same(receipt.get(field), request.get(field)), f"receipt {field} differs from the request's"
        )
    run.need(receipt.get("request_hash") == run.request_hash, "receipt request_hash differs")
    run.where = singleton_where("native_recall_receipt")
    run.need(native.get("request_receipt_id") == receipt_id, "native receipt request_receipt_id differs")
    run.need(
        kit.same(native.get("request_receipt_mutation_hash"), receipt.get("mutation_hash")),
        "native receipt request_receipt_mutation_hash differs from the receipt's",
    )

    run.at(REQUEST_RECEIPT_COMMITMENT_INVALID, singleton_where("request_receipt"))
    claims = receipt.get("signed_claims")
    claims_hash = None if claims is None else kit.canonical_sha256_hex(claims)
    run.need(
        kit.same(receipt.get("signed_claims_hash"), claims_hash),
        "signed_claims_hash is not H(canonical signed_claims) (or null)",
    )
    run.need(
        receipt.get("signature_b64u") == request.get("signature_b64u"),
        "receipt signature differs from the request signature",
    )
    signature = kit.signature_bytes(receipt.get("signature_b64u"))
    run.need(signature is not None, "receipt signature_b64u is not 64 bytes of canonical base64url")
    assert signature is not None
    prev = receipt.get("prev_mutation_hash")
    run.need(prev is None or kit.is_hex64(prev), "receipt prev_mutation_hash is neither null nor a hash")
    mutation = commitments.request_receipt_mutation_hash(
        None if prev is None else bytes.fromhex(prev),
        bytes.fromhex(run.request_hash),
        None if claims_hash is None else bytes.fromhex(claims_hash),
        signature,
        request["signed_method"],
        request["signed_path"],
        request["nonce"],
        run.request_ts,
    )
    run.need(receipt.get("mutation_hash") == mutation.hex(), "receipt mutation_hash does not recompute")
