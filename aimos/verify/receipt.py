"""Offline verification of an exported recall receipt (pure: no store, no I/O).

The trust anchor is the master fingerprint the caller supplies, never the document's own.
Each check is reported by name, so an edited file says which check it broke: a check holds when
it returns True or None, fails with its message when it returns a string or raises the kit's
:class:`~aimos.verify.kit.CheckFailed`, and fails with the exception's name when reading the
document raises.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
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


@dataclass(frozen=True)
class _Receipt:
    """The receipt document's parts, as each check reads them, and the caller's trust anchor."""

    doc: dict[str, Any]
    expected_master_fingerprint: str
    master: dict[str, Any]
    event: dict[str, Any]
    request: dict[str, Any]
    grant: dict[str, Any] | None
    housekeeper: dict[str, Any]

    @classmethod
    def of(cls, doc: dict[str, Any], expected_master_fingerprint: str) -> _Receipt:
        return cls(
            doc,
            expected_master_fingerprint,
            master=doc.get("master") or {},
            event=doc.get("event") or {},
            request=doc.get("request") or {},
            grant=doc.get("grant"),
            housekeeper=doc.get("housekeeper") or {},
        )

    def event_body(self) -> dict[str, Any]:
        body: dict[str, Any] = json_loads(self.event["signed_body"])
        return body


def _master_matches(r: _Receipt) -> bool:
    expected = r.expected_master_fingerprint
    return (
        is_hex64(expected)
        and r.master.get("fingerprint") == expected
        and fingerprint_of_b64u(r.master["public_key_b64u"]) == expected
    )


def _merkle_root_recomputes(r: _Receipt) -> bool:
    doc = r.doc
    return (
        merkle_root(doc["evidence"]).hex() == doc["merkle_root"]
        and doc["result_count"] == len(doc["evidence"])
        and [e["ordinal"] for e in doc["evidence"]] == list(range(len(doc["evidence"])))
    )


def _event_body_canonical(r: _Receipt) -> bool:
    event = r.event
    holds: bool = (
        canonical_json(r.event_body()).decode() == event["signed_body"]
        and sha256_hex(event["signed_body"]) == event["content_hash"]
    )
    return holds


def _event_link_recomputes(r: _Receipt) -> bool:
    event = r.event
    holds: bool = (
        commitments.event_link_hash(
            bytes.fromhex(event["prev_mutation_hash"]),
            bytes.fromhex(event["content_hash"]),
            event["nonce"],
            event["ts_signed"],
        ).hex()
        == event["mutation_hash"]
    )
    return holds


def _event_binds(r: _Receipt) -> bool | str:
    doc, grant = r.doc, r.grant
    meta = r.event_body()["metadata"]
    expected = {
        "receipt_id": doc["receipt_id"],
        "merkle_root": doc["merkle_root"],
        "result_count": doc["result_count"],
        "evidence": doc["evidence"],
        "decision_sha256": doc["decision_sha256"],
        "command_hash": doc["command_hash"],
        "request_hash": r.request.get("request_hash"),
        "grant_mutation_hash": grant.get("mutation_hash") if grant else None,
    }
    diff = [k for k, v in expected.items() if meta.get(k) != v]
    return True if not diff else "event metadata differs in " + ", ".join(diff)


def _unsigned_fields_match(r: _Receipt) -> bool | str:
    doc, event = r.doc, r.event
    body = r.event_body()
    diff = []
    if doc.get("company_id") != body.get("company_id"):
        diff.append("company_id")
    if doc.get("created_at") != body.get("ts_signed") or event.get("ts_signed") != body.get("ts_signed"):
        diff.append("created_at")
    if iso_ms(int(r.housekeeper.get("valid_from", -1))) != body.get("signer_valid_from"):
        diff.append("housekeeper.valid_from")
    if event.get("event_id") != body.get("event_id"):
        diff.append("event.event_id")
    if event.get("prev_mutation_hash") != body.get("prev_mutation_hash"):
        diff.append("event.prev_mutation_hash")
    return True if not diff else "differs from the signed event in " + ", ".join(diff)


def _event_is_housekeepers_receipt(r: _Receipt) -> bool:
    holds: bool = (
        r.event_body()["operation"] == vocabulary.RECALL_RECEIPT_OPERATION
        and r.event_body()["signer_agent_id"] == vocabulary.HOUSEKEEPER
    )
    return holds


def _housekeeper_cert(r: _Receipt) -> bool:
    housekeeper = r.housekeeper
    cert = parse_certificate(housekeeper["certificate"])
    verify_certificate(cert, r.master["public_key_b64u"], at=r.event["ts_signed"])
    return (
        cert.agent_id == vocabulary.HOUSEKEEPER
        and cert.pubkey == housekeeper["public_key_b64u"]
        and cert.valid_from == housekeeper["valid_from"]
    )


def _housekeeper_signature(r: _Receipt) -> bool:
    event = r.event
    return verify(
        r.housekeeper["public_key_b64u"],
        payload_message(None, event["nonce"], event["ts_signed"], body_bytes=event["signed_body"].encode()),
        b64u_decode(event["signature_b64u"]),
    )


def _agent_request(r: _Receipt) -> bool | str:
    request = r.request
    cert = parse_certificate(request["certificate"])
    verify_certificate(cert, r.master["public_key_b64u"], at=request["ts_signed"])
    if cert.agent_id != request["agent_id"] or cert.valid_from != request["agent_valid_from"]:
        return "certificate is not the requesting epoch's"
    if request["ts_signed"] > r.event["ts_signed"]:
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


def _grant_ok(r: _Receipt) -> bool | str:
    grant, request = r.grant, r.request
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
        r.master["public_key_b64u"],
        payload_message(body, grant["nonce"], grant["ts_signed"]),
        b64u_decode(grant["signature_b64u"]),
    )


# the receipt's checks, by name, in the order they run and are reported
_CHECKS: tuple[tuple[str, Callable[[_Receipt], bool | str | None]], ...] = (
    (
        f"schema is {vocabulary.RECALL_RECEIPT_SCHEMA}",
        lambda r: r.doc.get("schema") == vocabulary.RECALL_RECEIPT_SCHEMA,
    ),
    ("every field of the document is one the receipt binds", lambda r: _field_problems(r.doc)),
    ("master key matches the expected fingerprint", _master_matches),
    ("Merkle root recomputes from the evidence entries", _merkle_root_recomputes),
    (
        "decision hash recomputes",
        lambda r: canonical_sha256_hex(r.doc["decision"]) == r.doc["decision_sha256"],
    ),
    ("command hash recomputes", lambda r: canonical_sha256_hex(r.doc["command"]) == r.doc["command_hash"]),
    ("event body is canonical and its content hash recomputes", _event_body_canonical),
    ("event link hash recomputes", _event_link_recomputes),
    ("signed event binds the receipt (root, count, evidence, request, command, grant)", _event_binds),
    (
        "company, time, event id, chain link and housekeeper epoch agree with the signed event",
        _unsigned_fields_match,
    ),
    ("event is a recall_receipt signed by the housekeeper", _event_is_housekeepers_receipt),
    ("housekeeper certificate is issued by the master", _housekeeper_cert),
    ("housekeeper signature on the event verifies", _housekeeper_signature),
    ("agent's signed recall request verifies (request form 3)", _agent_request),
    ("master-signed grant verifies and covers the agent", _grant_ok),
)


def verify_receipt_document(doc: dict[str, Any], *, expected_master_fingerprint: str) -> list[Check]:
    """Every check of the receipt, in order, each reported by name (see the module's docstring)."""
    receipt = _Receipt.of(doc, expected_master_fingerprint)
    checks: list[Check] = []
    for name, check in _CHECKS:
        _run(checks, name, partial(check, receipt))
    return checks


def verdict(checks: list[Check]) -> bool:
    return all(c["ok"] for c in checks)
