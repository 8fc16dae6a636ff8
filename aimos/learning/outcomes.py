"""Outcome evidence and the one writer of retrieval weights.

An outcome is a request signed by an agent epoch (`POST /aimos/outcome`) about a memory that a
recall receipt disclosed. In one transaction: the outcome row and its housekeeper event; then
either an occurrence observation (no weight authority), a signed no-op (the quantized weight
does not move), or an authorized transition: a housekeeper-signed REWEIGHT provenance node, the
signed transition commitment t_i, the projection h_i, and the live weight. The store's triggers
re-check every precondition of MutMem section 5.6 before any of it exists.
"""

from __future__ import annotations

import uuid
import weakref
from dataclasses import dataclass, replace
from typing import Any

from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json
from aimos.crypto.encoding import b64u_encode
from aimos.crypto.messages import new_nonce, payload_message
from aimos.errors import GrantError, MemoryNotFoundError, ReceiptMissingError, UsageError
from aimos.identity.devices import keep_for_home
from aimos.identity.requests import SignedRequest, verify_request
from aimos.identity.signer import Signer
from aimos.learning.outcome_export import RecallBinding, recall_binding, sign_valence_row
from aimos.ledger.events import append_event
from aimos.store.cells import compact_provenance_body
from aimos.store.connection import Connection, insert, write_transaction
from aimos.store.engine import rolled_back
from aimos.store.queries import learning as q
from aimos.store.queries.ledger import body_sql
from aimos.store.queries.recall import memory_row
from aimos.store.seals import quiet_since_checked
from aimos.verify.kit.valence import SHARE_START_MILLI, Step, WeightLedger
from aimos.vocabulary import (
    MUTATION_OUTCOME_OPERATION,
    OBSERVATION_RETAINED_OPERATION,
    PATH_OUTCOME,
    REWEIGHT_EVENT,
    TARGET_OCCURRENCE_OBSERVATION,
    VALENCE_RULE_V2,
    WEIGHT_ADJUSTED_OPERATION,
    WEIGHT_UNCHANGED_OPERATION,
)

OUTCOMES = {"good": 1, "bad": -1}
SCOPES = ("principal_state", "occurrence_observation")
BODY_FIELDS = {"memory_id", "receipt_id", "outcome", "target_scope"}


@dataclass(frozen=True)
class OutcomeResult:
    outcome_id: str
    memory_id: str
    receipt_id: str
    terminal: str  # authorized_transition | signed_noop | occurrence_observation
    old_weight_milli: int
    new_weight_milli: int
    projection_hash: str | None
    transition_hash: str | None
    event_id: str
    weight_bearing: bool = True  # False: kept as evidence with no weight authority
    agent_good: int = 0  # the signing agent's weight-bearing outcomes on this memory, with this one
    agent_bad: int = 0
    share_old_milli: int = SHARE_START_MILLI  # the agent's share of the weight (rule 2)
    share_new_milli: int = SHARE_START_MILLI
    valence_rule: str | None = None
    reward_sign: int = 0  # +1 good, -1 bad
    agent_id: str = ""
    # True on a device that is not the home: what the home will record, once it applies the
    # signed request this device kept for it (forward_outcome); no id of it exists yet
    provisional: bool = False

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def latest_receipt_for(conn: Connection, memory_id: str, agent_id: str) -> str:
    """The newest recall receipt that disclosed ``memory_id`` to ``agent_id``."""
    receipt_id = q.latest_disclosing_receipt(conn, memory_id, agent_id)
    if receipt_id is None:
        raise ReceiptMissingError(f"no recall by agent {agent_id} has disclosed memory {memory_id}")
    return receipt_id


def _validate(body: dict[str, Any]) -> None:
    unknown = set(body) - BODY_FIELDS
    if unknown:
        raise UsageError(f"unknown outcome fields: {', '.join(sorted(unknown))}")
    if body.get("outcome") not in OUTCOMES:
        raise UsageError("an outcome is good or bad", "Use --good or --bad.")
    if body.get("target_scope", "principal_state") not in SCOPES:
        raise UsageError(f"target_scope must be one of {', '.join(SCOPES)}")
    for field in ("memory_id", "receipt_id"):
        if not isinstance(body.get(field), str):
            raise UsageError(f"{field} is required")


def principal_outcomes(conn: Connection, memory_id: str | None = None) -> list[q.PrincipalOutcome]:
    """Every retained principal outcome (of one memory, or all), in write order, each with the
    weight rule (``valence_rule``) its terminal event records (None: MutMem's rule)."""
    found = q.principal_outcome_rows(conn, memory_id)
    body = body_sql(conn)
    rules = (
        {r["outcome_id"]: r["valence_rule"] for r in q.valence_rules(conn, body, memory_id)} if found else {}
    )
    for o in found:
        o["valence_rule"] = rules.get(o["outcome_id"])
    return found


def ledger_of(conn: Connection, memory_id: str) -> WeightLedger:
    """The memory's weight ledger after every outcome it has (the writer's next step starts here):
    replayed from the rows, or a copy of the one this connection last left for the memory when the
    memory's principal outcomes are still exactly those it had (their count and the newest's id)
    and no other connection has written since (a warm server's steps then cost the same on the
    hundredth outcome of a memory as on the first)."""
    mark = _outcomes_mark(conn, memory_id)
    kept = _LEDGERS.get(conn, {}).get(memory_id)
    if kept is not None and kept[0] == mark and quiet_since_checked(conn):
        return kept[1].copy()
    outcomes = principal_outcomes(conn, memory_id)
    ledger = WeightLedger(int(outcomes[0]["baseline"] or 1000) if outcomes else 1000)
    for o in outcomes:
        ledger.step(o["agent_id"], o["receipt_id"], int(o["reward_sign"]), o["valence_rule"])
    return ledger


# per connection: memory id -> (its principal outcomes' mark, the ledger after them)
_LEDGERS: weakref.WeakKeyDictionary[Connection, dict[str, tuple[tuple[Any, ...], WeightLedger]]] = (
    weakref.WeakKeyDictionary()
)
LEDGERS_KEPT = 256


def _outcomes_mark(conn: Connection, memory_id: str) -> tuple[Any, ...]:
    """How many principal outcomes the memory has and the id of the newest (a rowid a rolled-back
    write used may come back; an outcome id never does)."""
    return q.principal_outcomes_mark(conn, memory_id)


def _keep_ledger(conn: Connection, memory_id: str, ledger: WeightLedger) -> None:
    """After the outcome row of ``ledger``'s newest step is written: kept for the next step."""
    kept = _LEDGERS.setdefault(conn, {})
    kept.pop(memory_id, None)
    kept[memory_id] = (_outcomes_mark(conn, memory_id), ledger)
    while len(kept) > LEDGERS_KEPT:
        kept.pop(next(iter(kept)))


def _record_evidence(
    conn: Connection,
    housekeeper: Signer,
    verified: Any,
    request: SignedRequest,
    memory: dict[str, Any],
    outcome_id: str,
    scope: str,
    reward: int,
    terminal: str,
    now: int,
    binding: RecallBinding | None = None,
) -> dict[str, Any]:
    """The housekeeper's evidence event, then the outcome row (its trigger requires the event).

    With a V2-bound recall (``binding``) the event is the V2 outcome event: its parent is the V2
    recall_receipt event and its metadata names the disclosed occurrence."""
    body = request.body
    company = memory["company_id"]
    # the housekeeper's evidence event first: the outcomes trigger requires it
    evidence_event = append_event(
        conn,
        housekeeper,
        operation=MUTATION_OUTCOME_OPERATION,
        company_id=company,
        metadata={
            "outcome_id": outcome_id,
            "memory_id": memory["memory_id"],
            "receipt_id": body["receipt_id"],
            "reward_sign": reward,
            "target_scope": scope,
            "request_hash": verified.request_hash,
            "live_content_hash": memory["live_content_hash"],
            **({"occurrence_ref": binding.occurrence_ref} if binding is not None else {}),
        },
        now=now,
        actor_agent_id=verified.agent_id,
        actor_valid_from=verified.valid_from,
        subject_memory_id=memory["memory_id"],
        parent_event_id=binding.event_id if binding is not None else None,
    )
    q.insert_outcome(
        conn,
        {
            "outcome_id": outcome_id,
            "company_id": company,
            "memory_id": memory["memory_id"],
            "receipt_id": body["receipt_id"],
            "target_scope": scope,
            "reward_sign": reward,
            "live_content_hash": memory["live_content_hash"],
            "agent_id": verified.agent_id,
            "agent_valid_from": verified.valid_from,
            "request_body": verified.body_bytes.decode("utf-8"),
            "request_hash": verified.request_hash,
            "request_nonce": request.nonce,
            "request_ts": request.ts,
            "request_signature_b64u": request.signature_b64u,
            "terminal": terminal,
            "created_at": now,
        },
    )
    return evidence_event


def record_outcome_in_transaction(
    conn: Connection,
    housekeeper: Signer,
    request: SignedRequest,
    now: int,
    *,
    received: int | None = None,
) -> OutcomeResult:
    """``received``: a request another device forwarded to the home (verify_request)."""
    verified = verify_request(conn, request, path=PATH_OUTCOME, now=now, received=received)
    body = request.body
    _validate(body)
    memory = memory_row(conn, body["memory_id"])
    if memory is None:
        raise MemoryNotFoundError(f"no memory with id {body['memory_id']}")
    receipt = q.receipt_evidence(conn, body["receipt_id"])
    if receipt is None:
        raise ReceiptMissingError(f"no recall receipt {body['receipt_id']}")
    if receipt["agent_id"] != verified.agent_id:
        raise GrantError(
            f"receipt {body['receipt_id']} is another agent's recall",
            "An agent reports outcomes about what its own recalls disclosed.",
        )
    if not verified.grant["write_allowed"]:
        raise GrantError(f"agent {verified.agent_id} has a read-only grant: its outcomes do not move weights")
    if memory["memory_id"] not in receipt["evidence"]:
        raise ReceiptMissingError(
            f"receipt {body['receipt_id']} did not disclose memory {memory['memory_id']}",
            "Give the receipt of a recall that returned this memory, or leave --receipt out.",
        )
    scope = body.get("target_scope", "principal_state")
    reward = OUTCOMES[body["outcome"]]
    old = int(memory["retrieval_weight_milli"])
    outcome_id = str(uuid.uuid4())
    step: Step | None = None
    if scope == "occurrence_observation":
        terminal, new, j = "occurrence_observation", old, 0.0
    else:
        ledger = ledger_of(conn, memory["memory_id"])
        step = ledger.step(verified.agent_id, body["receipt_id"], reward, VALENCE_RULE_V2)
        # the replayed weight is the live weight the store's triggers hold to the chain; a brain
        # where they differ is damaged, and the transition (old must be the live weight) is refused
        terminal, new, j = step.terminal, step.new_milli, step.j
    company = memory["company_id"]
    binding = recall_binding(conn, receipt["event_id"], memory["memory_id"], memory["live_content_hash"])
    evidence_event = _record_evidence(
        conn, housekeeper, verified, request, memory, outcome_id, scope, reward, terminal, now, binding
    )
    if step is not None:
        _keep_ledger(conn, memory["memory_id"], ledger)
    # the signed V2 valence row (one signature), carried in the terminal event's metadata
    valence = (
        sign_valence_row(
            housekeeper,
            binding,
            company_id=company,
            memory_id=memory["memory_id"],
            outcome_id=outcome_id,
            target_scope=scope,
            reward_sign=reward,
            outcome_event=evidence_event,
            now=now,
        )
        if binding is not None
        else None
    )
    v2_metadata: dict[str, Any] = {} if step is None else _rule_metadata(step)
    if valence is not None:
        v2_metadata.update({"valence_row_hash": valence["row_hash"], "valence_row": valence})
        if terminal == "occurrence_observation":
            v2_metadata["occurrence_ref"] = binding.occurrence_ref if binding is not None else None
    if terminal != "authorized_transition":
        operation = (
            OBSERVATION_RETAINED_OPERATION
            if terminal == TARGET_OCCURRENCE_OBSERVATION
            else WEIGHT_UNCHANGED_OPERATION
        )
        event = append_event(
            conn,
            housekeeper,
            operation=operation,
            company_id=company,
            metadata={
                "outcome_id": outcome_id,
                "memory_id": memory["memory_id"],
                "weight_milli": old,
                "judge_valence": round(j, 6),
                "projection_appended": False,
                **v2_metadata,
            },
            now=now,
            subject_memory_id=memory["memory_id"],
            parent_event_id=evidence_event["event_id"],
        )
        return _told(
            OutcomeResult(
                outcome_id,
                memory["memory_id"],
                body["receipt_id"],
                terminal,
                old,
                old,
                None,
                None,
                event["event_id"],
            ),
            step,
            reward,
            verified.agent_id,
        )
    moved = _transition(
        conn, housekeeper, memory, outcome_id, old, new, j, evidence_event["event_id"], now, v2_metadata
    )
    return _told(moved, step, reward, verified.agent_id)


def _rule_metadata(step: Step) -> dict[str, Any]:
    """What the terminal event records of the weight rule's step (VALENCE_RULE_V2)."""
    return {
        "valence_rule": step.rule,
        "weight_bearing": step.weight_bearing,
        "agent_good": step.good,
        "agent_bad": step.bad,
        "agent_share_old_milli": step.share_old_milli,
        "agent_share_new_milli": step.share_new_milli,
    }


def _told(result: OutcomeResult, step: Step | None, reward: int, agent_id: str) -> OutcomeResult:
    """The result with what the rule's step says about it (for the words a person reads)."""
    result = replace(result, reward_sign=reward, agent_id=agent_id)
    if step is None:
        return replace(result, weight_bearing=False)
    return replace(
        result,
        weight_bearing=step.weight_bearing,
        agent_good=step.good,
        agent_bad=step.bad,
        share_old_milli=step.share_old_milli,
        share_new_milli=step.share_new_milli,
        valence_rule=step.rule,
    )


@dataclass(frozen=True)
class _Move:
    """What the steps of one authorized transition share."""

    memory_id: str
    company_id: str
    outcome_id: str
    old: int
    new: int
    j: float
    now: int


def _transition(
    conn: Connection,
    housekeeper: Signer,
    memory: dict[str, Any],
    outcome_id: str,
    old: int,
    new: int,
    j: float,
    parent_event_id: str,
    now: int,
    v2_metadata: dict[str, Any],
) -> OutcomeResult:
    """The housekeeper-signed REWEIGHT node, the projection and the live weight, then the terminal
    event naming them."""
    move = _Move(memory["memory_id"], memory["company_id"], outcome_id, old, new, j, now)
    sigma = _append_reweight_node(conn, housekeeper, move, v2_metadata)
    h_i, t_i = _append_projection(conn, housekeeper, move, sigma)
    mid = move.memory_id
    event = append_event(
        conn,
        housekeeper,
        operation=WEIGHT_ADJUSTED_OPERATION,
        company_id=move.company_id,
        metadata={
            "outcome_id": outcome_id,
            "memory_id": mid,
            "old_weight_milli": old,
            "new_weight_milli": new,
            "provenance_mutation_hash": sigma.hex(),
            "projection_hash": h_i.hex(),
            "transition_hash": t_i.hex(),
            "judge_valence": round(j, 6),
            **v2_metadata,
        },
        now=now,
        subject_memory_id=mid,
        parent_event_id=parent_event_id,
    )
    return OutcomeResult(
        outcome_id, mid, "", "authorized_transition", old, new, h_i.hex(), t_i.hex(), event["event_id"]
    )


def _reweight_body(move: _Move, v2_metadata: dict[str, Any]) -> dict[str, Any]:
    """The signed body of the transition's REWEIGHT provenance node."""
    return {
        "event_type": REWEIGHT_EVENT,
        "company_id": move.company_id,
        "memory_id": move.memory_id,
        "old_weight": move.old / 1000,
        "new_weight": move.new / 1000,
        "old_weight_milli": move.old,
        "new_weight_milli": move.new,
        "judge_valence": round(move.j, 6),
        "governor_flag": "SIGNED_VALENCE_REFERENCE_POINT",
        "reason": "outcome_evidence",
        "outcome_id": move.outcome_id,
        "ts_signed": move.now,
        **{k: v2_metadata[k] for k in ("valence_row_hash", "valence_rule") if k in v2_metadata},
    }


def _append_reweight_node(
    conn: Connection, housekeeper: Signer, move: _Move, v2_metadata: dict[str, Any]
) -> bytes:
    """The housekeeper-signed REWEIGHT node, linked to the memory's newest one; its mutation hash
    (sigma)."""
    mid, now = move.memory_id, move.now
    prev_node_hash = q.last_reweight_hash(conn, mid)
    body = _reweight_body(move, v2_metadata)
    body_bytes = canonical_json(body)
    nonce = new_nonce()
    signature = housekeeper.key.sign(payload_message(body, nonce, now, body_bytes=body_bytes))
    content = commitments.sha256(body_bytes)
    sigma = commitments.provenance_mutation_hash(
        content, bytes.fromhex(prev_node_hash) if prev_node_hash else None, nonce, now
    )
    insert(
        conn,
        "memory_provenance",
        {
            "provenance_id": str(uuid.uuid4()),
            "memory_id": mid,
            "company_id": move.company_id,
            "event_type": REWEIGHT_EVENT,
            "body_json": "",
            "body_deflated": compact_provenance_body(body_bytes.decode("utf-8"), mid),
            "content_hash": content.hex(),
            "prev_mutation_hash": prev_node_hash,
            "mutation_hash": sigma.hex(),
            "nonce": nonce,
            "ts_signed": now,
            "signature_b64u": b64u_encode(signature),
            "signature_form": 1,
            "signed_method": None,
            "signed_path": None,
            "signer_agent_id": housekeeper.agent_id,
            "signer_valid_from": housekeeper.valid_from,
            "cert_fingerprint": housekeeper.cert_fingerprint,
            "identity_tier": housekeeper.identity_tier,
            "is_genesis": 0 if prev_node_hash else 1,
            "backfilled": 0,
            "binding_schema_version": 2,
            "created_at": now,
        },
    )
    return sigma


def _append_projection(
    conn: Connection, housekeeper: Signer, move: _Move, sigma: bytes
) -> tuple[bytes, bytes]:
    """The signed projection of the REWEIGHT node ``sigma`` onto the memory's weight chain, and the
    live weight moved to it; (h_i, t_i)."""
    mid, company, old, new = move.memory_id, move.company_id, move.old, move.new
    prev_hash = q.last_projection_hash(conn, mid)
    prev_h = bytes.fromhex(prev_hash) if prev_hash is not None else None
    t_i = commitments.transition_commitment(company, mid, old, new, sigma)
    h_i = commitments.projection_hash(mid, old, new, sigma, prev_h)
    q.insert_projection(
        conn,
        {
            "projection_id": str(uuid.uuid4()),
            "company_id": company,
            "memory_id": mid,
            "outcome_id": move.outcome_id,
            "old_weight_milli": old,
            "new_weight_milli": new,
            "provenance_mutation_hash": sigma.hex(),
            "prev_projection_hash": prev_h.hex() if prev_h else None,
            "projection_hash": h_i.hex(),
            "transition_hash": t_i.hex(),
            "transition_signature_b64u": b64u_encode(housekeeper.key.sign(t_i)),
            "signer_valid_from": housekeeper.valid_from,
            "created_at": move.now,
        },
    )
    q.set_retrieval_weight(conn, mid, new)
    return h_i, t_i


def record_outcome(conn: Connection, housekeeper: Signer, request: SignedRequest, now: int) -> OutcomeResult:
    with write_transaction(conn, housekeeper):
        result = record_outcome_in_transaction(conn, housekeeper, request, now)
    if not result.receipt_id:
        result = OutcomeResult(**{**result.to_json(), "receipt_id": request.body["receipt_id"]})
    return result


# --- outcomes reported on a device that is not the home (aimos/identity/devices.py) ------------
def forward_outcome(conn: Connection, housekeeper: Signer, request: SignedRequest, now: int) -> OutcomeResult:
    """Keep an outcome's signed request for the home, which alone appends to weight chains: the
    request is checked as the home will check it (the whole outcome is written, then rolled back:
    what it would do is the provisional effect this device shows), then kept in hub_requests, one
    write transaction."""
    with write_transaction(conn, housekeeper):
        with rolled_back(conn, "aimos_forward_trial"):
            trial = record_outcome_in_transaction(conn, housekeeper, request, now)
        keep_for_home(conn, verify_request(conn, request, path=PATH_OUTCOME, now=now, record=False), now)
    return replace(
        trial, outcome_id="", event_id="", projection_hash=None, transition_hash=None, provisional=True
    )
