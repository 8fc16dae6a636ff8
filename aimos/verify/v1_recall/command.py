"""The pieces of a V1 recall bundle read on their own: a certificate, the recall command the
request body names (normalized as the reference server does), one memory's binding to its receipt
evidence entry, and the epistemic-decision Merkle entries. Each fails the check through the kit."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aimos.crypto.canonical import canonical_json
from aimos.crypto.certs import CERT_FIELDS, Certificate, parse_certificate
from aimos.errors import AimosError, CanonicalJSONError
from aimos.verify.kit import (
    b64u,
    fail,
    fields_are,
    is_dict,
    is_hex64,
    is_int,
    is_uuid,
    same,
    strict_json_loads,
)
from aimos.verify.v1_recall.shape import (
    CLEARANCE_MAX,
    CLEARANCE_MIN,
    COMMAND_FIELDS,
    EVIDENCE_FIELDS,
    LIMIT_DEFAULT,
    LIMIT_MAX,
    LIMIT_MIN,
    MAX_HOPS_MAX,
    MAX_HOPS_MIN,
    MEMORY_FIELDS,
    PROOF_HASH_FIELDS,
    R,
)
from aimos.vocabulary import DEFAULT_COMPANY as DEFAULT_COMPANY
from aimos.vocabulary import EPISTEMIC_DECISION_ENTRY as EPISTEMIC_ENTRY_TYPE
from aimos.vocabulary import RECALL_MERKLE_EPISTEMIC_SCHEMA as EPISTEMIC_MERKLE_SCHEMA


def metadata(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The signed body's metadata object (absent reads as empty, as the reference reads it)."""
    meta = body.get("metadata", {})
    return meta if is_dict(meta) else None


def read_certificate(text: object, what: str) -> Certificate:
    """base64url canonical JSON ``{body, sig}`` with exactly the eight body fields."""
    raw = b64u(text)
    try:
        if raw is None:
            raise ValueError("not base64url")
        outer = strict_json_loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        fail(R.CERT_MALFORMED, f"the {what} certificate is not base64url JSON")
    if (
        not fields_are(outer, frozenset({"body", "sig"}))
        or not fields_are(outer["body"], CERT_FIELDS)
        or not isinstance(outer["sig"], str)
    ):
        fail(R.CERT_SCHEMA, f"the {what} certificate is not {{body, sig}} with the eight body fields")
    try:
        canonical = canonical_json(outer) == raw
    except CanonicalJSONError as exc:
        fail(exc.reason or R.CANONICAL_INVALID, f"the {what} certificate: {exc.message}")
    if not canonical:
        fail(R.CERT_SCHEMA, f"the {what} certificate's JSON is not canonical")
    assert isinstance(text, str)  # b64u accepted it
    try:
        return parse_certificate(text)
    except AimosError:
        fail(R.CERT_SCHEMA, f"the {what} certificate needs v 1, integer times and a non-empty window")


def _bounded_int(value: object, default: int, low: int, high: int) -> int:
    number = default if value is None else value
    if not is_int(number) or not low <= number <= high:
        fail(R.INTEGER_INVALID, f"{value!r} is not an integer in {low}..{high}")
    return number


def recall_command(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The recall command the request body names, normalized as the reference server does; its
    canonical hash is the receipt's ``command_hash``. Fails the check on a body it would refuse."""
    for name in raw:
        if name not in COMMAND_FIELDS:
            fail(f"{R.UNKNOWN_FIELD}:{name}", f"the request body has the unknown field {name!r}")
    # str() of the value, as the reference Python verifier computes it (None reads as "None")
    query = str(raw.get("query", raw.get("q", ""))).strip()
    key = None if raw.get("key") is None else str(raw["key"]).strip()
    memory_id = None if raw.get("memory_id") is None else str(raw["memory_id"]).strip()
    if not query and not key and not memory_id:
        fail(R.QUERY_OR_IDENTIFIER_REQUIRED, "the request names no query, key or memory id")
    if memory_id and not is_uuid(memory_id, rfc4122=True, any_case=True):
        fail(R.MEMORY_ID_INVALID, "the request's memory_id is not a UUID")
    command = dict(raw)
    command.update(
        {
            "query": query,
            "q": query,
            "key": key,
            "memory_id": memory_id,
            "company_id": DEFAULT_COMPANY if raw.get("company_id") is None else str(raw["company_id"]),
            "agent_id": None if raw.get("agent_id") is None else str(raw["agent_id"]),
            "limit": _bounded_int(raw.get("limit"), LIMIT_DEFAULT, LIMIT_MIN, LIMIT_MAX),
            "clearance_level": None
            if raw.get("clearance_level") is None
            else _bounded_int(raw["clearance_level"], 0, CLEARANCE_MIN, CLEARANCE_MAX),
            "max_hops": None
            if raw.get("max_hops") is None
            else _bounded_int(raw["max_hops"], 0, MAX_HOPS_MIN, MAX_HOPS_MAX),
        }
    )
    return command


def memory_binding(index: int, memory: object, evidence: object, command: Mapping[str, Any]) -> None:
    reason = f"{R.MEMORY_BINDING_INVALID}:{index}"
    where = f"memories[{index}] / recall_receipt.evidence[{index}]"
    if (
        not fields_are(memory, MEMORY_FIELDS)
        or not fields_are(memory["provenance_proof"], frozenset(PROOF_HASH_FIELDS))
        or not fields_are(evidence, EVIDENCE_FIELDS)
    ):
        fail(reason, f"{where}: missing or unknown fields")
    proof = memory["provenance_proof"]
    type_filter = command.get("memory_type_filter")
    if not (
        same(evidence["ordinal"], index)
        and same(evidence["memory_id"], memory["id"])
        and same(memory["source"], command.get("source_filter"))
        and (type_filter is None or same(memory["memory_type"], type_filter))
    ):
        fail(reason, f"{where}: ordinal, memory id, source or memory type does not match the request")
    for name in PROOF_HASH_FIELDS:
        if not is_hex64(evidence[name]) or not same(evidence[name], proof[name]):
            fail(
                reason, f"{where}: {name} differs from the memory's provenance proof or is not lowercase hex"
            )


def epistemic_entries(receipt: Mapping[str, Any]) -> list[Any]:
    decision = receipt.get("epistemic_decision_sha256")
    entries = receipt.get("merkle_entries")
    evidence = receipt["evidence"]
    if not (
        receipt.get("merkle_schema") == EPISTEMIC_MERKLE_SCHEMA
        and is_hex64(decision)
        and isinstance(entries, list)
        and len(entries) == len(evidence) + 1
        and same(entries[0], {"entry_type": EPISTEMIC_ENTRY_TYPE, "decision_sha256": decision})
        and same(entries[1:], evidence)
    ):
        fail(R.EPISTEMIC_BINDING_INVALID, "merkle_entries must be the epistemic decision, then the evidence")
    return entries
