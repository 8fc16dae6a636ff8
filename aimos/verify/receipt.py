"""Offline verification of an exported recall receipt (pure: no store, no I/O).

The trust anchor is the master fingerprint the caller supplies, never the document's own.
Each check is reported by name, so an edited file says which check it broke: a check holds when
it returns True or None, fails with its message when it returns a string or raises the kit's
:class:`~aimos.verify.kit.CheckFailed`, and fails with the exception's name when reading the
document raises.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aimos import vocabulary
from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json, json_loads
from aimos.crypto.certs import parse_certificate, verify_certificate
from aimos.crypto.ed25519 import fingerprint_of_b64u, verify
from aimos.crypto.encoding import b64u_decode, iso_ms, parse_iso_ms
from aimos.crypto.merkle import merkle_root
from aimos.crypto.messages import payload_message, request_message
from aimos.errors import AimosError
from aimos.verify.kit import CheckFailed, canonical_sha256_hex, is_hex64, sha256_hex

Check = dict[str, Any]

# every field a receipt document holds, by object: a field outside these is refused, never ignored
_SIGNED_ROW = frozenset(
    "signed_body content_hash nonce ts_signed signature_b64u prev_mutation_hash mutation_hash".split()
)
DOCUMENT_FIELDS: dict[str, frozenset[str]] = {
    "": frozenset(
        "schema receipt_id company_id created_at merkle_root result_count evidence decision"
        " decision_sha256 command command_hash request grant event master".split()
    )
    | {vocabulary.HOUSEKEEPER},
    "request": frozenset(
        "agent_id agent_valid_from body request_hash method path nonce ts_signed signature_b64u"
        " certificate".split()
    ),
    "grant": _SIGNED_ROW,
    "event": _SIGNED_ROW | {"event_id"},
    vocabulary.HOUSEKEEPER: frozenset(("valid_from", "public_key_b64u", "certificate")),
    "master": frozenset(("fingerprint", "public_key_b64u")),
}


# the fields that are whole numbers wherever they occur (seconds, counts, epochs)
_INTEGERS = frozenset(("result_count", "created_at", "valid_from", "agent_valid_from", "ts_signed"))


def _field_problems(doc: dict[str, Any]) -> bool | str:
    """Each object holds exactly the fields it must, whole numbers as integers (a null grant or
    housekeeper is refused by its own check); extra, missing or loosely typed fields are named."""
    problems = []
    for where, fields in DOCUMENT_FIELDS.items():
        obj = doc if not where else doc.get(where)
        if obj is None and where in ("grant", vocabulary.HOUSEKEEPER):
            continue
        if not isinstance(obj, dict):
            problems.append(f"{where} is not an object")
            continue
        label = f"{where}." if where else ""
        problems += [f"unknown field {label}{k}" for k in sorted(set(obj) - fields)]
        problems += [f"missing field {label}{k}" for k in sorted(fields - set(obj))]
        problems += [
            f"{label}{k} is not an integer"
            for k in sorted(fields & _INTEGERS)
            if k in obj and type(obj[k]) is not int  # exactly: not a bool, a float or a string
        ]
    return True if not problems else "; ".join(problems)


def _run(checks: list[Check], name: str, fn: Callable[[], bool | str | None]) -> bool:
    try:
        result = fn()
    except CheckFailed as failure:
        result = failure.detail or False
    except (AimosError, KeyError, TypeError, ValueError, AttributeError) as exc:
        checks.append({"check": name, "ok": False, "detail": f"{type(exc).__name__}: {exc}"})
        return False
    ok = result is True or result is None
    detail = None if ok else (result if isinstance(result, str) else "does not hold")
    checks.append({"check": name, "ok": ok, "detail": detail})
    return ok


def verify_receipt_document(doc: dict[str, Any], *, expected_master_fingerprint: str) -> list[Check]:  # noqa: C901 (the verifier's checks in order)
    checks: list[Check] = []
    master = doc.get("master") or {}
    event = doc.get("event") or {}
    request = doc.get("request") or {}
    grant = doc.get("grant")
    housekeeper = doc.get("housekeeper") or {}

    _run(
        checks,
        f"schema is {vocabulary.RECALL_RECEIPT_SCHEMA}",
        lambda: doc.get("schema") == vocabulary.RECALL_RECEIPT_SCHEMA,
    )
    _run(checks, "every field of the document is one the receipt binds", lambda: _field_problems(doc))
    _run(
        checks,
        "master key matches the expected fingerprint",
        lambda: (
            is_hex64(expected_master_fingerprint)
            and master.get("fingerprint") == expected_master_fingerprint
            and fingerprint_of_b64u(master["public_key_b64u"]) == expected_master_fingerprint
        ),
    )
    _run(
        checks,
        "Merkle root recomputes from the evidence entries",
        lambda: (
            merkle_root(doc["evidence"]).hex() == doc["merkle_root"]
            and doc["result_count"] == len(doc["evidence"])
            and [e["ordinal"] for e in doc["evidence"]] == list(range(len(doc["evidence"])))
        ),
    )
    _run(
        checks,
        "decision hash recomputes",
        lambda: canonical_sha256_hex(doc["decision"]) == doc["decision_sha256"],
    )
    _run(
        checks, "command hash recomputes", lambda: canonical_sha256_hex(doc["command"]) == doc["command_hash"]
    )

    def event_body() -> dict[str, Any]:
        body: dict[str, Any] = json_loads(event["signed_body"])
        return body

    _run(
        checks,
        "event body is canonical and its content hash recomputes",
        lambda: (
            canonical_json(event_body()).decode() == event["signed_body"]
            and sha256_hex(event["signed_body"]) == event["content_hash"]
        ),
    )
    _run(
        checks,
        "event link hash recomputes",
        lambda: (
            commitments.event_link_hash(
                bytes.fromhex(event["prev_mutation_hash"]),
                bytes.fromhex(event["content_hash"]),
                event["nonce"],
                event["ts_signed"],
            ).hex()
            == event["mutation_hash"]
        ),
    )

    def event_binds() -> bool | str:
        meta = event_body()["metadata"]
        expected = {
            "receipt_id": doc["receipt_id"],
            "merkle_root": doc["merkle_root"],
            "result_count": doc["result_count"],
            "evidence": doc["evidence"],
            "decision_sha256": doc["decision_sha256"],
            "command_hash": doc["command_hash"],
            "request_hash": request.get("request_hash"),
            "grant_mutation_hash": grant.get("mutation_hash") if grant else None,
        }
        diff = [k for k, v in expected.items() if meta.get(k) != v]
        return True if not diff else "event metadata differs in " + ", ".join(diff)

    _run(
        checks, "signed event binds the receipt (root, count, evidence, request, command, grant)", event_binds
    )

    def unsigned_fields_match() -> bool | str:
        body = event_body()
        diff = []
        if doc.get("company_id") != body.get("company_id"):
            diff.append("company_id")
        if doc.get("created_at") != body.get("ts_signed") or event.get("ts_signed") != body.get("ts_signed"):
            diff.append("created_at")
        if iso_ms(int(housekeeper.get("valid_from", -1))) != body.get("signer_valid_from"):
            diff.append("housekeeper.valid_from")
        if event.get("event_id") != body.get("event_id"):
            diff.append("event.event_id")
        if event.get("prev_mutation_hash") != body.get("prev_mutation_hash"):
            diff.append("event.prev_mutation_hash")
        return True if not diff else "differs from the signed event in " + ", ".join(diff)

    _run(
        checks,
        "company, time, event id, chain link and housekeeper epoch agree with the signed event",
        unsigned_fields_match,
    )
    _run(
        checks,
        "event is a recall_receipt signed by the housekeeper",
        lambda: (
            event_body()["operation"] == vocabulary.RECALL_RECEIPT_OPERATION
            and event_body()["signer_agent_id"] == vocabulary.HOUSEKEEPER
        ),
    )

    def housekeeper_cert() -> bool:
        cert = parse_certificate(housekeeper["certificate"])
        verify_certificate(cert, master["public_key_b64u"], at=event["ts_signed"])
        return (
            cert.agent_id == vocabulary.HOUSEKEEPER
            and cert.pubkey == housekeeper["public_key_b64u"]
            and cert.valid_from == housekeeper["valid_from"]
        )

    _run(checks, "housekeeper certificate is issued by the master", housekeeper_cert)
    _run(
        checks,
        "housekeeper signature on the event verifies",
        lambda: verify(
            housekeeper["public_key_b64u"],
            payload_message(
                None, event["nonce"], event["ts_signed"], body_bytes=event["signed_body"].encode()
            ),
            b64u_decode(event["signature_b64u"]),
        ),
    )

    def agent_request() -> bool | str:
        cert = parse_certificate(request["certificate"])
        verify_certificate(cert, master["public_key_b64u"], at=request["ts_signed"])
        if cert.agent_id != request["agent_id"] or cert.valid_from != request["agent_valid_from"]:
            return "certificate is not the requesting epoch's"
        if request["ts_signed"] > event["ts_signed"]:
            return "the request was signed after the receipt"
        if canonical_sha256_hex(request["body"]) != request["request_hash"]:
            return "request hash does not recompute"
        if request["method"] != vocabulary.REQUEST_METHOD or request["path"] != vocabulary.PATH_RECALL:
            return "request method and path are not the recall request's (the signature binds them)"
        message = request_message(
            request["body"],
            vocabulary.REQUEST_METHOD,
            vocabulary.PATH_RECALL,
            request["nonce"],
            request["ts_signed"],
        )
        return verify(cert.pubkey, message, b64u_decode(request["signature_b64u"]))

    _run(checks, "agent's signed recall request verifies (request form 3)", agent_request)

    def grant_ok() -> bool | str:
        if grant is None:
            return "grant missing"
        body = json_loads(grant["signed_body"])
        content = commitments.sha256(grant["signed_body"].encode())
        prev = bytes.fromhex(grant["prev_mutation_hash"]) if grant["prev_mutation_hash"] else None
        if content.hex() != grant["content_hash"]:
            return "grant content hash does not recompute"
        if (
            commitments.recall_authorization_mutation_hash(
                prev, content, grant["nonce"], grant["ts_signed"]
            ).hex()
            != grant["mutation_hash"]
        ):
            return "grant mutation hash does not recompute"
        if body.get("subject_agent_id") != request.get("agent_id"):
            return "grant is for another agent"
        if parse_iso_ms(str(body.get("subject_valid_from"))) != request.get("agent_valid_from"):
            return "grant is for another epoch of the agent"
        return verify(
            master["public_key_b64u"],
            payload_message(body, grant["nonce"], grant["ts_signed"]),
            b64u_decode(grant["signature_b64u"]),
        )

    _run(checks, "master-signed grant verifies and covers the agent", grant_ok)
    return checks


def verdict(checks: list[Check]) -> bool:
    return all(c["ok"] for c in checks)
