"""The signed save (SPEC section 5): verify the request, gate it, and append in one transaction."""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json
from aimos.crypto.encoding import b64u_decode, b64u_encode, iso_ms
from aimos.crypto.messages import CLOCK_SKEW_SECONDS
from aimos.errors import GrantError, UsageError, ValueTooLargeError
from aimos.identity.devices import is_home, keep_for_home
from aimos.identity.requests import SignedRequest, VerifiedRequest, record_nonce, verify_request
from aimos.identity.signer import Signer
from aimos.identity.trusted import grant_excess
from aimos.identity.validators import check_clearance, data_class_rank
from aimos.ledger.events import append_event
from aimos.memory.gates import CanaryScan, refuse_secret_fields, scan_canary
from aimos.store.connection import Connection, write_transaction
from aimos.store.queries import memory as queries
from aimos.store.queries.memory import MemoryTwin
from aimos.vocabulary import (
    CANARY_QUARANTINED_OPERATION,
    CLEARANCE_MAX,
    HOUSEKEEPER,
    INITIAL_WEIGHT_ATTESTED_OPERATION,
    INITIAL_WEIGHT_SCHEMA,
    MEMORY_SAVED_OPERATION,
    OCCURRENCE_RECORDED_OPERATION,
    ORIGINATED_AT,
    PATH_SAVE,
    SAVE_REASSERT_EVENT,
    SYSTEM_SCOPE,
    UNVERIFIED,
)

MAX_CANONICAL_BYTES = 1_048_576
BODY_FIELDS = (
    "company_id",
    "key",
    "value",
    "scope",
    "memory_type",
    "clearance_level",
    "data_class",
    "source",
    "supersedes",
    ORIGINATED_AT,
)
# ``originated_at`` (optional, integer Unix seconds): when the memory was first made before it came
# to this brain (an import of another brain's export keeps its creation time so), signed with the
# rest of the body and hashed into its provenance content hash; the save's own time stays its
# signed ``ts``. Never later than the save (within the clock skew), never before 1970. A body
# without it is the body it always was: no byte of any other save changes.
QUARANTINE_WEIGHT_MILLI = 100
DEFAULT_WEIGHT_MILLI = 1000
BINDING_SCHEMA_VERSION = 2
MAX_ORIGINATED_AT = 253402300799  # 9999-12-31T23:59:59Z
FORWARDED = "forwarded"  # SaveResult.status of a correction kept for the home device


@dataclass(frozen=True)
class SaveResult:
    memory_id: str
    status: str  # saved | duplicate | quarantined | forwarded (a correction kept for the home)
    live_content_hash: str
    save_mutation_hash: str
    event_id: str
    supersedes: str | None = None
    # a duplicate kept for the home device, which records the occurrence (no event of it here yet)
    provisional: bool = False

    def forwarded_words(self) -> str:
        """What a front end says of a correction kept for the home device."""
        return (
            f"kept for the home device, which saves this new version of {self.supersedes} at its next sync "
            "(the versions of a memory are one chain, written there); `aimos sync` sends it"
        )

    def duplicate_words(self) -> str:
        """What a front end says of a duplicate (CLI, MCP, TUI)."""
        if self.provisional:
            return (
                f"already in the brain as {self.memory_id}: kept for the home device, which records "
                "that it was seen again at its next sync"
            )
        return (
            f"already in the brain as {self.memory_id}: recorded a signed occurrence instead of a second copy"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "memory_id": self.memory_id,
            "status": self.status,
            "live_content_hash": self.live_content_hash,
            "save_mutation_hash": self.save_mutation_hash,
            "event_id": self.event_id,
            "supersedes": self.supersedes,
            **({"provisional": True} if self.provisional else {}),
        }


def _nonempty_text(body: dict[str, Any], field: str) -> str:
    value = body.get(field)
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{field} must be non-empty text", f"Give a {field.replace('_', ' ')}.")
    return value


def originated_problem(value: object, signed_at: int | None) -> str | None:
    """What is wrong with a save's ``originated_at`` (None when nothing is): not a whole number of
    seconds, before 1970, or after ``signed_at`` (the save's time; None: not checked) by more than
    the clock skew."""
    if not isinstance(value, int) or isinstance(value, bool):
        return f"its creation time is not a whole number of seconds (a {type(value).__name__})"
    if not 0 <= value <= MAX_ORIGINATED_AT:
        return f"its creation time {value} is not a time between 1970 and 9999"
    if signed_at is not None and value > signed_at + CLOCK_SKEW_SECONDS:
        return f"its creation time {iso_ms(value)} is in the future (after its save, {iso_ms(signed_at)})"
    return None


def validate_body(
    body: dict[str, Any], body_bytes: bytes | None = None, *, signed_at: int | None = None
) -> None:
    """Every field of a save body checked (``signed_at``: the save's time, which an
    ``originated_at`` may not be after)."""
    unknown = set(body) - set(BODY_FIELDS)
    if unknown:
        raise UsageError(f"unknown save fields: {', '.join(sorted(unknown))}")
    size = len(body_bytes if body_bytes is not None else canonical_json(body))
    if size > MAX_CANONICAL_BYTES:
        raise ValueTooLargeError(
            f"the memory is {size:,} bytes as canonical JSON, over the 1 MiB limit "
            f"({MAX_CANONICAL_BYTES:,} bytes)"
        )
    _nonempty_text(body, "value")
    for field in ("company_id", "scope", "memory_type", "source"):
        _nonempty_text(body, field)
    if body.get("key") is not None and not isinstance(body["key"], str):
        raise UsageError("key must be text")
    clearance = body.get("clearance_level")
    if not isinstance(clearance, int) or isinstance(clearance, bool):
        raise UsageError("clearance_level must be an integer", "Use --clearance 0..12.")
    check_clearance(clearance, ceiling=CLEARANCE_MAX)
    if not isinstance(body.get("data_class"), str):
        raise UsageError("data_class must be text")
    data_class_rank(body["data_class"])
    if ORIGINATED_AT in body:
        problem = originated_problem(body[ORIGINATED_AT], signed_at)
        if problem is not None:
            raise UsageError(problem, "Give the time the memory was first made, in the past.")


def _check_grant(verified: VerifiedRequest, body: dict[str, Any]) -> None:
    grant = verified.grant
    who = f"agent {verified.agent_id!r}"
    if (body["scope"] == SYSTEM_SCOPE) != (verified.agent_id == HOUSEKEEPER):
        raise GrantError(
            "the system scope holds aimos's own guide memories, written by the housekeeper alone",
            "Save with another scope (the default is personal).",
        )
    if not grant["write_allowed"]:
        raise GrantError(f"{who} has a read-only grant", "Enrol the agent without --read-only to save.")
    if body["company_id"] != grant["company_id"]:
        raise GrantError(f"{who} has no grant for company {body['company_id']!r}")
    excess = grant_excess(grant, body["clearance_level"], body["data_class"])
    if excess == "clearance":
        raise GrantError(
            f"clearance {body['clearance_level']} is above {who}'s grant ceiling "
            f"{grant['clearance_ceiling']}",
            f"Use --clearance {grant['clearance_ceiling']} or lower.",
        )
    if excess == "data_class":
        raise GrantError(
            f"data class {body['data_class']!r} is above {who}'s grant ceiling "
            f"{grant['data_class_ceiling']!r}",
            f"Use --data-class {grant['data_class_ceiling']} or lower.",
        )


def _record_occurrence(
    conn: Connection,
    housekeeper: Signer,
    verified: VerifiedRequest,
    existing: MemoryTwin,
    now: int,
) -> SaveResult:
    req = verified.request
    prev = queries.last_occurrence_commitment(conn, existing["memory_id"])
    occurrence_id = str(uuid.uuid4())
    commitment = commitments.occurrence_v3_commitment(
        company_id=existing["company_id"],
        occurrence_event_id=occurrence_id,
        memory_id=existing["memory_id"],
        event_type=SAVE_REASSERT_EVENT,
        live_hash=bytes.fromhex(existing["live_content_hash"]),
        predecessor=bytes.fromhex(prev) if prev else None,
        agent_id=verified.agent_id,
        signer_valid_from_ms=verified.valid_from * 1000,
        cert_fingerprint=bytes.fromhex(verified.cert_fingerprint),
        identity_tier=verified.identity_tier,
        sig_form_version=3,
        nonce=b64u_decode(req.nonce),
        ts_signed=req.ts,
        signed_method=req.method,
        signed_path=req.path,
        request_body_hash=bytes.fromhex(verified.request_hash),
        request_receipt_mutation_hash=None,
        authorization_event_id=None,
    )
    signature = housekeeper.key.sign(commitments.occurrence_v3_signature_message(commitment))
    queries.insert_occurrence(
        conn,
        {
            "occurrence_id": occurrence_id,
            "memory_id": existing["memory_id"],
            "company_id": existing["company_id"],
            "event_type": SAVE_REASSERT_EVENT,
            "live_content_hash": existing["live_content_hash"],
            "agent_id": verified.agent_id,
            "agent_valid_from": verified.valid_from,
            "request_body_hash": verified.request_hash,
            "request_nonce": req.nonce,
            "request_ts": req.ts,
            "request_signature_b64u": req.signature_b64u,
            "predecessor_commitment": prev,
            "commitment": commitment.hex(),
            "signer_valid_from": housekeeper.valid_from,
            "signature_b64u": b64u_encode(signature),
            "created_at": now,
        },
    )
    event = append_event(
        conn,
        housekeeper,
        operation=OCCURRENCE_RECORDED_OPERATION,
        company_id=existing["company_id"],
        metadata={
            "memory_id": existing["memory_id"],
            "occurrence_id": occurrence_id,
            "occurrence_commitment": commitment.hex(),
            "live_content_hash": existing["live_content_hash"],
            "request_hash": verified.request_hash,
        },
        now=now,
        actor_agent_id=verified.agent_id,
        actor_valid_from=verified.valid_from,
        subject_memory_id=existing["memory_id"],
    )
    return SaveResult(
        existing["memory_id"],
        "duplicate",
        existing["live_content_hash"],
        existing["save_mutation_hash"],
        event["event_id"],
    )


@dataclass(frozen=True)
class _Checked:
    """A save request verified, validated and gated: what the save's later steps read."""

    verified: VerifiedRequest
    body: dict[str, Any]
    canary: CanaryScan
    live_hash: str
    company: str
    supersedes: str | None


def _checked(conn: Connection, req: SignedRequest, now: int, received: int | None) -> _Checked:
    """The request verified (its nonce not yet recorded), its body validated, the agent's grant,
    the secret and canary gates passed, and a correction's predecessor checked to be a current
    version."""
    verified = verify_request(conn, req, path=PATH_SAVE, now=now, received=received, record=False)
    body = req.body
    validate_body(body, verified.body_bytes, signed_at=req.ts)
    _check_grant(verified, body)
    # every string field, the value first: a refusal names the field, the kind and the place
    refuse_secret_fields({"value": body["value"], **{k: v for k, v in body.items() if k != "value"}})
    canary = scan_canary(body.get("key"), body["value"])
    live_hash = commitments.live_content_hash(body).hex()
    company = body["company_id"]
    supersedes = body.get("supersedes")
    if supersedes is not None:
        from aimos.memory.versions import head_of, resolve_memory_id  # (a correction alone reads them)

        old = resolve_memory_id(conn, supersedes, company_id=company)
        if old != supersedes:
            raise UsageError("supersedes must be a full memory id")
        head = head_of(conn, old)
        if head != old:
            raise UsageError(
                f"memory {old} was already corrected; its current version is {head}",
                f"Correct the current version: `aimos correct {head} TEXT`.",
            )
    return _Checked(verified, body, canary, live_hash, company, supersedes)


def _not_a_new_memory(
    conn: Connection, housekeeper: Signer, checked: _Checked, now: int
) -> SaveResult | None:
    """The answer to a save that makes no memory here (a correction or a duplicate kept for the
    home device, a duplicate's signed occurrence, a correction that repeats a memory), or None: a
    new memory, the request's nonce recorded."""
    verified, supersedes = checked.verified, checked.supersedes
    existing = queries.oldest_twin(conn, checked.company, checked.live_hash)
    if supersedes is not None and existing is None and not is_home(conn):
        # a memory's versions are one chain: the home links the new one (two devices correcting the
        # same memory offline would fork it); it saves this correction at its next sync
        keep_for_home(conn, verified, now)
        return SaveResult("", FORWARDED, checked.live_hash, "", "", supersedes, provisional=True)
    if existing is not None:
        if supersedes is not None:
            raise UsageError(
                f"a memory with exactly this content already exists ({existing['memory_id']})",
                "Change the text of the correction.",
            )
        if not is_home(conn):
            keep_for_home(conn, verified, now)
            return SaveResult(
                existing["memory_id"],
                "duplicate",
                existing["live_content_hash"],
                existing["save_mutation_hash"],
                "",
                provisional=True,
            )
        record_nonce(conn, verified, now)
        return _record_occurrence(conn, housekeeper, verified, existing, now)
    record_nonce(conn, verified, now)
    return None


def save_in_transaction(
    conn: Connection,
    housekeeper: Signer,
    req: SignedRequest,
    now: int,
    *,
    carry_judgment: Callable[[str, str], object] | None = None,
    received: int | None = None,
) -> SaveResult:
    """The save itself; the caller holds the write transaction. A correction's
    ``carry_judgment(new_id, old_id)`` runs once the new memory's row exists and before its
    supersession link: the save composition (actions.memory.save_and_classify) passes
    epistemic.chain.inherit_judgment, so the new version carries the old one's adverse label, which
    migration 9's trigger on the link requires. ``received``: a save another device forwarded to
    the home (identity.requests.verify_request).

    On a device that is not the home, a save of content already saved (an occurrence, whose chain
    is the home's to append to) is kept for the home (hub_requests) and answered as a provisional
    duplicate."""
    checked = _checked(conn, req, now, received)
    answered = _not_a_new_memory(conn, housekeeper, checked, now)
    if answered is not None:
        return answered
    return _append_memory(conn, housekeeper, checked, now, carry_judgment)


def _append_memory(
    conn: Connection,
    housekeeper: Signer,
    checked: _Checked,
    now: int,
    carry_judgment: Callable[[str, str], object] | None,
) -> SaveResult:
    """The new memory: its signed save node, the housekeeper's event, its row, a correction's
    supersession link (after ``carry_judgment``) and a canary's retained quarantine."""
    verified, body, company, supersedes = checked.verified, checked.body, checked.company, checked.supersedes
    req, live_hash = verified.request, checked.live_hash
    memory_id = str(uuid.uuid4())
    provenance_id = str(uuid.uuid4())
    content_hash = bytes.fromhex(verified.request_hash)  # H(canonicalJSON(body))
    mutation = commitments.provenance_mutation_hash(content_hash, None, req.nonce, req.ts).hex()
    _insert_save_node(conn, checked, memory_id, provenance_id, content_hash, mutation, now)
    quarantine = 1 if checked.canary.detected else 0
    # The housekeeper's event first: the memories trigger requires it.
    event = append_event(
        conn,
        housekeeper,
        operation=MEMORY_SAVED_OPERATION,
        company_id=company,
        metadata={
            "memory_id": memory_id,
            "live_content_hash": live_hash,
            "save_mutation_hash": mutation,
            "request_hash": verified.request_hash,
            "supersedes": supersedes,
            "retained_quarantine": bool(quarantine),
        },
        now=now,
        actor_agent_id=verified.agent_id,
        actor_valid_from=verified.valid_from,
        subject_memory_id=memory_id,
    )
    queries.insert_memory(
        conn,
        {
            "memory_id": memory_id,
            "company_id": company,
            "key": body.get("key"),
            "value": body["value"],
            "scope": body["scope"],
            "memory_type": body["memory_type"],
            "clearance_level": body["clearance_level"],
            "data_class": body["data_class"],
            "source": body["source"],
            "author_agent_id": verified.agent_id,
            "author_valid_from": verified.valid_from,
            "created_at": now,
            "live_content_hash": live_hash,
            "save_provenance_id": provenance_id,
            "save_mutation_hash": mutation,
            "quarantine": quarantine,
            "retrieval_weight_milli": QUARANTINE_WEIGHT_MILLI if quarantine else DEFAULT_WEIGHT_MILLI,
            "epistemic_label": UNVERIFIED,
        },
    )
    if supersedes is not None:
        if carry_judgment is not None:
            carry_judgment(memory_id, supersedes)
        queries.insert_supersession(conn, supersedes, memory_id, company, mutation, now)
    if checked.canary.detected:
        _retain_quarantine(conn, housekeeper, checked, memory_id, event["event_id"], now)
    return SaveResult(
        memory_id,
        "quarantined" if quarantine else "saved",
        live_hash,
        mutation,
        event["event_id"],
        supersedes,
    )


def _insert_save_node(
    conn: Connection,
    checked: _Checked,
    memory_id: str,
    provenance_id: str,
    content_hash: bytes,
    mutation: str,
    now: int,
) -> None:
    """The new memory's signed save: the genesis node of its provenance chain."""
    verified = checked.verified
    req = verified.request
    queries.insert_save_provenance(
        conn,
        {
            "provenance_id": provenance_id,
            "memory_id": memory_id,
            "company_id": checked.company,
            "event_type": "SAVE",
            "body_json": verified.body_bytes.decode("utf-8"),
            "content_hash": content_hash.hex(),
            "prev_mutation_hash": None,
            "mutation_hash": mutation,
            "nonce": req.nonce,
            "ts_signed": req.ts,
            "signature_b64u": req.signature_b64u,
            "signature_form": 3,
            "signed_method": req.method,
            "signed_path": req.path,
            "signer_agent_id": verified.agent_id,
            "signer_valid_from": verified.valid_from,
            "cert_fingerprint": verified.cert_fingerprint,
            "identity_tier": verified.identity_tier,
            "is_genesis": 1,
            "backfilled": 0,
            "binding_schema_version": BINDING_SCHEMA_VERSION,
            "created_at": now,
        },
    )


def _retain_quarantine(
    conn: Connection, housekeeper: Signer, checked: _Checked, memory_id: str, saved_event: str, now: int
) -> None:
    """A canary's memory kept at the quarantine weight: its signed baseline and the event that
    says why (a child of the save's event)."""
    verified, company = checked.verified, checked.company
    attest_baseline(conn, housekeeper, memory_id, company, checked.live_hash, QUARANTINE_WEIGHT_MILLI, now)
    append_event(
        conn,
        housekeeper,
        operation=CANARY_QUARANTINED_OPERATION,
        company_id=company,
        metadata={
            "memory_id": memory_id,
            "reason": "canary_detected_retained_quarantine",
            "marker_count": checked.canary.count,
            "weight_milli": QUARANTINE_WEIGHT_MILLI,
        },
        now=now,
        actor_agent_id=verified.agent_id,
        actor_valid_from=verified.valid_from,
        subject_memory_id=memory_id,
        parent_event_id=saved_event,
    )


def attest_baseline(
    conn: Connection,
    housekeeper: Signer,
    memory_id: str,
    company: str,
    live_hash: str,
    milli: int,
    now: int,
) -> None:
    """The housekeeper's signed retained baseline for a memory that starts away from 1.000:
    a `cognitive_initial_weight_attested` event and the `aimos.cognitive-baseline/v1` commitment."""
    observed_float4 = struct.pack(">f", milli / 1000).hex()
    event = append_event(
        conn,
        housekeeper,
        operation=INITIAL_WEIGHT_ATTESTED_OPERATION,
        company_id=company,
        metadata={
            "schema": INITIAL_WEIGHT_SCHEMA,
            "observed_weight_float4": observed_float4,
            "weight_milli": milli,
            "observed_ts": now,
            "memory_content_hash": live_hash,
            "historical_origin_claimed": False,
            "canonical_memory_mutation": False,
        },
        now=now,
        subject_memory_id=memory_id,
        key=memory_id,
    )
    baseline = commitments.cognitive_baseline_hash(
        company,
        memory_id,
        event["event_id"],
        bytes.fromhex(event["mutation_hash"]),
        bytes.fromhex(live_hash),
        milli / 1000,
        milli,
        now,
        housekeeper.valid_from,
        bytes.fromhex(housekeeper.cert_fingerprint),
    )
    queries.insert_weight_baseline(
        conn,
        {
            "memory_id": memory_id,
            "company_id": company,
            "live_content_hash": live_hash,
            "observed_weight_float4": observed_float4,
            "observed_weight_milli": milli,
            "observed_at": now,
            "attestation_reason": "retained_nondefault_weight_baseline",
            "signer_valid_from": housekeeper.valid_from,
            "certificate_fingerprint": housekeeper.cert_fingerprint,
            "event_id": event["event_id"],
            "event_mutation_hash": event["mutation_hash"],
            "baseline_hash": baseline.hex(),
            "signature_b64u": b64u_encode(housekeeper.key.sign(baseline)),
        },
    )


def save(conn: Connection, housekeeper: Signer, req: SignedRequest, now: int) -> SaveResult:
    """Verify and apply one signed save in its own write transaction (all or nothing)."""
    with write_transaction(conn, housekeeper):
        return save_in_transaction(conn, housekeeper, req, now)
