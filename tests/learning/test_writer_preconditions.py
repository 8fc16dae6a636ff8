"""The writer's preconditions (MutMem section 5.6; SPEC sections 1.2, 4 and 6), enforced by the
insert trigger of `weight_projections` on the writer connection (`brain.conn`, which has the
registered SQL functions): each failure is refused with its own `transition_...` reason.

Every crafted transition is built from real rows: one real transition goes through
`record_outcome`, its outcome, REWEIGHT node and projection are read back, and copies (new ids,
re-hashed and re-signed with `brain.housekeeper.key` through aimos.crypto.commitments) are
changed so that exactly the property under test is wrong. A control test shows the unchanged
copies are accepted (and verify), so each refusal is due to the one change.

Each crafted outcome row is about a recall receipt on which the agent has no earlier principal
outcome for that memory (`unused_receipt`): migration 7's trigger refuses a second
authorized_transition outcome for the same agent, receipt and memory before any of the checks
below could run, so reusing the real transition's receipt would test that refusal instead.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import apsw
import pytest
from support.learning import counts, disclosing_receipt, give, now, projections, put, reweight_nodes, weight

from aimos.actions.bodies import build_outcome_body
from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json
from aimos.crypto.encoding import b64u_decode, b64u_encode
from aimos.crypto.messages import new_nonce, payload_message
from aimos.errors import IntegrityError
from aimos.exit_codes import exit_code_for
from aimos.identity.epochs import revoke_epoch
from aimos.identity.requests import sign_request, verify_request
from aimos.learning.outcomes import _record_evidence, _rule_metadata, ledger_of
from aimos.ledger.events import append_event, read_provenance
from aimos.store.cells import compact_provenance_body
from aimos.store.connection import one, rows, write_transaction
from aimos.store.queries.ledger import body_sql
from aimos.store.schema import expected_objects
from aimos.verify.brain.parity import verify_everything
from aimos.verify.brain.verifier import verify_brain
from aimos.verify.kit.valence import Step
from aimos.vocabulary import PATH_OUTCOME, VALENCE_RULE_V2

pytestmark = pytest.mark.timeout(60)

INTEGRITY = 5
TABLES = ("outcomes", "weight_projections", "memory_provenance", "events", "request_nonces", "memories")


@dataclass
class World:
    brain: Any
    a: str  # memory with one real transition (1000 -> 1165)
    b: str  # memory with no transition (1000)
    receipt: str  # the recall a's real transition is about
    spare: list[str]  # recalls disclosing a and b with no outcome yet (for crafted outcomes)
    outcome: dict[str, Any]  # the real rows of a's transition, the templates
    node: dict[str, Any]
    projection: dict[str, Any]
    hk_epoch: dict[str, Any] = field(default_factory=dict)


@pytest.fixture
def world(brain: Any) -> World:
    a = put(brain, "the heron colony nests by the east lake")
    b = put(brain, "a heron eats fish and frogs at dawn")
    receipt = disclosing_receipt(brain, "heron", a, b)
    spare = [disclosing_receipt(brain, "heron", a, b) for _ in range(3)]
    result = give(brain, a, receipt, "good")
    assert result.terminal == "authorized_transition" and weight(brain.conn, a) == 1165
    outcome = one(brain.conn, "SELECT * FROM outcomes WHERE outcome_id = ?", (result.outcome_id,))
    projection = projections(brain.conn, a)[-1]
    node = one(
        brain.conn,
        "SELECT * FROM memory_provenance WHERE mutation_hash = ?",
        (projection["provenance_mutation_hash"],),
    )
    assert outcome and node
    hk = one(
        brain.conn,
        "SELECT * FROM identity_epochs WHERE agent_id = 'housekeeper' AND valid_from = ?",
        (brain.housekeeper.valid_from,),
    )
    assert hk
    return World(brain, a, b, receipt, spare, outcome, node, projection, hk)


# --- building rows ----------------------------------------------------------------------------------
def insert(conn: apsw.Connection, table: str, row: dict[str, Any]) -> None:
    conn.execute(
        f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values())
    )


def unused_receipt(w: World, memory_id: str) -> str:
    """A spare recall on which the `cli` agent has no principal outcome about ``memory_id`` yet
    (the rows crafted earlier in the same transaction count)."""
    for receipt in w.spare:
        taken = one(
            w.brain.conn,
            "SELECT 1 AS x FROM outcomes WHERE receipt_id = ? AND memory_id = ? AND agent_id = ?"
            " AND target_scope = 'principal_state'",
            (receipt, memory_id, w.brain.agent.agent_id),
        )
        if taken is None:
            return receipt
    raise AssertionError("no spare recall left: make more in the `world` fixture")


def new_outcome(
    w: World,
    memory_id: str,
    *,
    outcome: str = "good",
    scope: str = "principal_state",
    terminal: str = "authorized_transition",
    receipt: str | None = None,
) -> str:
    """A fresh, properly signed outcome (request, nonce, evidence event, row) about ``receipt``
    (default: a spare recall with no outcome about the memory yet); call inside the transaction."""
    brain = w.brain
    t = now()
    receipt = unused_receipt(w, memory_id) if receipt is None else receipt
    body = build_outcome_body(memory_id=memory_id, receipt_id=receipt, outcome=outcome, target_scope=scope)
    request = sign_request(brain.agent, body, PATH_OUTCOME, t)
    verified = verify_request(brain.conn, request, path=PATH_OUTCOME, now=t)  # records the nonce
    memory = one(brain.conn, "SELECT * FROM memories WHERE memory_id = ?", (memory_id,))
    assert memory
    outcome_id = str(uuid.uuid4())
    # the writer's own evidence step (housekeeper event, then the outcome row), with the terminal given
    _record_evidence(
        brain.conn,
        brain.housekeeper,
        verified,
        request,
        memory,
        outcome_id,
        scope,
        1 if outcome == "good" else -1,
        terminal,
        t,
    )
    return outcome_id


def rule_step(w: World, memory_id: str, receipt: str, reward: int) -> Step:
    """What rule 2 gives for the `cli` agent's next outcome (call before its row exists)."""
    ledger = ledger_of(w.brain.conn, memory_id)
    return ledger.step(w.brain.agent.agent_id, receipt, reward, VALENCE_RULE_V2)


def adjusted_event(w: World, outcome_id: str, row: dict[str, Any], step: Step) -> None:
    """The housekeeper's `cognitive_weight_adjusted` event the writer appends after a transition,
    naming the weight rule's step (the verifiers read the rule an outcome was recorded under here)."""
    conn = w.brain.conn
    evidence = one(
        conn,
        "SELECT event_id FROM events WHERE operation = 'mutation_outcome_evidence_v2'"
        f" AND json_extract({body_sql(conn)}, '$.metadata.outcome_id') = ?",
        (outcome_id,),
    )
    assert evidence
    append_event(
        conn,
        w.brain.housekeeper,
        operation="cognitive_weight_adjusted",
        company_id=row["company_id"],
        metadata={
            "outcome_id": outcome_id,
            "memory_id": row["memory_id"],
            "old_weight_milli": row["old_weight_milli"],
            "new_weight_milli": row["new_weight_milli"],
            "provenance_mutation_hash": row["provenance_mutation_hash"],
            "projection_hash": row["projection_hash"],
            "transition_hash": row["transition_hash"],
            "judge_valence": round(step.j, 6),
            **_rule_metadata(step),
        },
        now=now(),
        subject_memory_id=row["memory_id"],
        parent_event_id=evidence["event_id"],
    )


HEAD = object()  # "the current head", resolved when the row is built


def reweight_node(
    w: World,
    memory_id: str,
    outcome_id: str,
    old: int,
    new: int,
    *,
    company: str = "personal",
    prev: Any = HEAD,
    ts: int | None = None,
) -> dict[str, Any]:
    """A housekeeper-signed REWEIGHT node, a copy of the real one with a new id and body."""
    hk = w.brain.housekeeper
    ts = now() if ts is None else ts
    if prev is HEAD:
        heads = reweight_nodes(w.brain.conn, memory_id)
        prev = heads[-1]["mutation_hash"] if heads else None
    body = dict(
        json_of(read_provenance(w.node)["body_json"]),
        company_id=company,
        memory_id=memory_id,
        old_weight=old / 1000,
        new_weight=new / 1000,
        old_weight_milli=old,
        new_weight_milli=new,
        outcome_id=outcome_id,
        ts_signed=ts,
    )
    body_bytes = canonical_json(body)
    nonce = new_nonce()
    content = commitments.sha256(body_bytes)
    sigma = commitments.provenance_mutation_hash(content, bytes.fromhex(prev) if prev else None, nonce, ts)
    return dict(
        w.node,
        provenance_id=str(uuid.uuid4()),
        memory_id=memory_id,
        company_id=company,
        body_json="",
        body_deflated=compact_provenance_body(body_bytes.decode("utf-8"), memory_id),
        content_hash=content.hex(),
        prev_mutation_hash=prev,
        mutation_hash=sigma.hex(),
        nonce=nonce,
        ts_signed=ts,
        signature_b64u=b64u_encode(hk.key.sign(payload_message(body, nonce, ts, body_bytes=body_bytes))),
        is_genesis=0 if prev else 1,
        created_at=ts,
    )


def projection(
    w: World,
    memory_id: str,
    outcome_id: str,
    old: int,
    new: int,
    sigma: str,
    *,
    company: str = "personal",
    prev: Any = HEAD,
    created_at: int | None = None,
    signer_valid_from: int | None = None,
) -> dict[str, Any]:
    """A projection row with h_i and a housekeeper-signed t_i, a copy of the real one."""
    if prev is HEAD:
        chain = projections(w.brain.conn, memory_id)
        prev = chain[-1]["projection_hash"] if chain else None
    sigma_b = bytes.fromhex(sigma)
    prev_b = bytes.fromhex(prev) if prev else None
    try:
        t_i = commitments.transition_commitment(company, memory_id, old, new, sigma_b)
    except Exception:  # out of bounds or a no-op: the commitment cannot exist
        t_i = hashlib.sha256(b"no commitment for an invalid transition").digest()
    h_i = commitments.projection_hash(memory_id, old, new, sigma_b, prev_b)
    return dict(
        w.projection,
        projection_id=str(uuid.uuid4()),
        company_id=company,
        memory_id=memory_id,
        outcome_id=outcome_id,
        old_weight_milli=old,
        new_weight_milli=new,
        provenance_mutation_hash=sigma,
        prev_projection_hash=prev,
        projection_hash=h_i.hex(),
        transition_hash=t_i.hex(),
        transition_signature_b64u=b64u_encode(w.brain.housekeeper.key.sign(t_i)),
        signer_valid_from=w.brain.housekeeper.valid_from if signer_valid_from is None else signer_valid_from,
        created_at=now() if created_at is None else created_at,
    )


def json_of(text: str) -> dict[str, Any]:
    import json

    value: dict[str, Any] = json.loads(text)
    return value


def flip(b64u: str) -> str:
    raw = bytearray(b64u_decode(b64u))
    raw[7] ^= 0x01
    return b64u_encode(bytes(raw))


def next_for_a(w: World, *, old: int | None = None, new: int = 1357) -> tuple[str, dict[str, Any]]:
    """Outcome + inserted REWEIGHT node for the next transition of memory a; (outcome_id, node)."""
    old = weight(w.brain.conn, w.a) if old is None else old
    oid = new_outcome(w, w.a)
    node = reweight_node(w, w.a, oid, old, new)
    insert(w.brain.conn, "memory_provenance", node)
    return oid, node


@pytest.fixture
def refused(world: World) -> Iterator[Any]:
    """``refused(reason, build)``: run ``build`` in a write transaction, expect the trigger to refuse
    it with ``reason``, and check that nothing was kept."""
    conn = world.brain.conn

    def check(reason: str, build: Any) -> IntegrityError:
        before = counts(conn, TABLES)
        weights = {m: weight(conn, m) for m in (world.a, world.b)}
        with pytest.raises(IntegrityError) as caught:
            with write_transaction(conn):
                build()
        assert f"{reason}:" in caught.value.message, caught.value.message
        assert exit_code_for(caught.value) == INTEGRITY
        assert counts(conn, TABLES) == before
        assert {m: weight(conn, m) for m in (world.a, world.b)} == weights
        report = verify_brain(conn)
        assert report.ok, [r for r in report.records if not r.ok]
        return caught.value

    yield check


# --- the control: unchanged copies are accepted ----------------------------------------------------------
def test_control_crafted_copies_of_real_rows_are_accepted_and_verify(world: World) -> None:
    conn = world.brain.conn
    # crafted rows with the weights rule 2 gives, each outcome about a recall with no outcome yet,
    # and the terminal event naming the rule, as the writer records them (the verifier replays the
    # rule over the outcomes)
    with write_transaction(conn):
        step_a = rule_step(world, world.a, unused_receipt(world, world.a), 1)
        assert (step_a.terminal, step_a.old_milli, step_a.new_milli) == ("authorized_transition", 1165, 1413)
        oid, node = next_for_a(world, new=1413)
        row_a = projection(world, world.a, oid, 1165, 1413, node["mutation_hash"])
        insert(conn, "weight_projections", row_a)
        conn.execute("UPDATE memories SET retrieval_weight_milli = 1413 WHERE memory_id = ?", (world.a,))
        adjusted_event(world, oid, row_a, step_a)
        step_b = rule_step(world, world.b, unused_receipt(world, world.b), -1)
        assert (step_b.old_milli, step_b.new_milli) == (1000, 859)
        oid_b = new_outcome(world, world.b, outcome="bad")
        node_b = reweight_node(world, world.b, oid_b, 1000, 859)
        insert(conn, "memory_provenance", node_b)
        row_b = projection(world, world.b, oid_b, 1000, 859, node_b["mutation_hash"])
        insert(conn, "weight_projections", row_b)
        conn.execute("UPDATE memories SET retrieval_weight_milli = 859 WHERE memory_id = ?", (world.b,))
        adjusted_event(world, oid_b, row_b, step_b)
    assert (weight(conn, world.a), weight(conn, world.b)) == (1413, 859)
    report = verify_brain(conn)
    assert report.ok, report.records
    by_id = {r.memory_id: r for r in report.records}
    assert (by_id[world.a].chain_length, by_id[world.a].sigs_verified) == (2, 2)
    assert (by_id[world.b].chain_length, by_id[world.b].sigs_verified) == (1, 1)


# --- housekeeper scope ------------------------------------------------------------------------------------
def test_signer_epoch_that_is_no_housekeeper_epoch(world: World, refused: Any) -> None:
    def build() -> None:
        oid, node = next_for_a(world)
        row = projection(
            world,
            world.a,
            oid,
            1165,
            1357,
            node["mutation_hash"],
            signer_valid_from=world.brain.housekeeper.valid_from + 7,
        )
        insert(world.brain.conn, "weight_projections", row)

    refused("transition_scope", build)


def test_transition_outside_the_housekeeper_epoch_window(world: World, refused: Any) -> None:
    def build() -> None:
        oid, node = next_for_a(world)
        late = int(world.hk_epoch["valid_until"]) + 1
        insert(
            world.brain.conn,
            "weight_projections",
            projection(world, world.a, oid, 1165, 1357, node["mutation_hash"], created_at=late),
        )

    refused("transition_scope", build)


def test_transition_by_a_revoked_housekeeper_epoch(world: World, refused: Any) -> None:
    brain = world.brain

    def build() -> None:
        oid, node = next_for_a(world)
        revoke_epoch(
            brain.conn,
            brain.master,
            company_id="personal",
            agent_id="housekeeper",
            valid_from=brain.housekeeper.valid_from,
            reason="test",
            now=now() + 1,
        )
        insert(
            brain.conn,
            "weight_projections",
            projection(world, world.a, oid, 1165, 1357, node["mutation_hash"]),
        )

    refused("transition_scope", build)


# --- bounds and no-op -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("old", "new"),
    [(1165, 3001), (1165, 99), (1165, 0), (1165, 5000), (99, 1000), (3001, 1000)],
    ids=["new-3001", "new-99", "new-0", "new-5000", "old-99", "old-3001"],
)
def test_weights_outside_100_to_3000(world: World, refused: Any, old: int, new: int) -> None:
    def build() -> None:
        oid, node = next_for_a(world, old=old, new=new)
        insert(
            world.brain.conn,
            "weight_projections",
            projection(world, world.a, oid, old, new, node["mutation_hash"]),
        )

    refused("transition_bounds", build)


def test_no_op_transition_old_equals_new(world: World, refused: Any) -> None:
    def build() -> None:
        oid, node = next_for_a(world, new=1165)
        insert(
            world.brain.conn,
            "weight_projections",
            projection(world, world.a, oid, 1165, 1165, node["mutation_hash"]),
        )

    refused("transition_bounds", build)


# --- the REWEIGHT provenance node ---------------------------------------------------------------------
def test_node_that_is_not_reweight_the_save_node(world: World, refused: Any) -> None:
    save_hash = one(
        world.brain.conn, "SELECT save_mutation_hash FROM memories WHERE memory_id = ?", (world.a,)
    )

    def build() -> None:
        oid = new_outcome(world, world.a)
        assert save_hash
        row = projection(world, world.a, oid, 1165, 1357, save_hash["save_mutation_hash"])
        insert(world.brain.conn, "weight_projections", row)

    refused("transition_provenance", build)


def test_node_of_another_memory_cross_memory_proof_reuse(world: World, refused: Any) -> None:
    """A REWEIGHT node that binds memory a, used for a transition of memory b (same weights)."""

    def build() -> None:
        oid_b = new_outcome(world, world.b)
        node_a = reweight_node(world, world.a, oid_b, 1000, 1165)  # a's body, b's outcome id
        insert(world.brain.conn, "memory_provenance", node_a)
        row = projection(world, world.b, oid_b, 1000, 1165, node_a["mutation_hash"])
        insert(world.brain.conn, "weight_projections", row)

    refused("transition_provenance", build)


def test_real_node_of_another_memory_reused(world: World, refused: Any) -> None:
    """a's real, already used REWEIGHT node (1000 -> 1165) offered as proof for b's 1000 -> 1165."""

    def build() -> None:
        oid_b = new_outcome(world, world.b)
        row = projection(world, world.b, oid_b, 1000, 1165, world.node["mutation_hash"])
        insert(world.brain.conn, "weight_projections", row)

    refused("transition_provenance", build)


def test_node_binding_other_weights(world: World, refused: Any) -> None:
    def build() -> None:
        oid, node = next_for_a(world, new=1300)
        row = projection(world, world.a, oid, 1165, 1357, node["mutation_hash"])
        insert(world.brain.conn, "weight_projections", row)

    refused("transition_provenance", build)


def test_node_binding_another_outcome(world: World, refused: Any) -> None:
    def build() -> None:
        _, node = next_for_a(world)
        other = new_outcome(world, world.a)
        row = projection(world, world.a, other, 1165, 1357, node["mutation_hash"])
        insert(world.brain.conn, "weight_projections", row)

    refused("transition_provenance", build)


def test_projection_in_another_company_than_its_node(world: World, refused: Any) -> None:
    """Node signed for company `personal`; the projection (t_i re-signed) claims another company."""

    def build() -> None:
        oid, node = next_for_a(world)
        row = projection(world, world.a, oid, 1165, 1357, node["mutation_hash"], company="someone-else")
        insert(world.brain.conn, "weight_projections", row)

    refused("transition_company", build)


def test_transition_bound_to_another_company_than_the_memory(world: World) -> None:
    """SPEC 6 / MutMem 5.6: the terminal REWEIGHT node must bind *the same company* as the memory.
    Here the node, t_i and the projection all consistently say `someone-else`, while memory a lives
    in company `personal`: the writer must refuse (the REWEIGHT node already, which must bind the
    memory's company), and were such rows ever in the brain, the verifier must not certify them."""
    conn = world.brain.conn
    before = counts(conn, TABLES)
    try:
        with write_transaction(conn):
            oid = new_outcome(world, world.a)
            node = reweight_node(world, world.a, oid, 1165, 1357, company="someone-else")
            insert(conn, "memory_provenance", node)
            row = projection(world, world.a, oid, 1165, 1357, node["mutation_hash"], company="someone-else")
            insert(conn, "weight_projections", row)
            conn.execute("UPDATE memories SET retrieval_weight_milli = 1357 WHERE memory_id = ?", (world.a,))
    except IntegrityError as exc:
        assert "does not bind this memory" in exc.message or "transition_company:" in exc.message, exc.message
        assert counts(conn, TABLES) == before
        return
    record = next(r for r in verify_brain(conn).records if r.memory_id == world.a)
    pytest.fail(
        "a transition bound to company 'someone-else' was accepted for a memory of company 'personal' "
        f"(live weight now {weight(conn, world.a)}); the verifier then says ok={record.ok} "
        f"reason={record.reason} for it"
    )


def test_node_that_is_not_terminal(world: World, refused: Any) -> None:
    """The projection names a REWEIGHT node of this memory that a newer node already follows."""

    def build() -> None:
        oid, node = next_for_a(world)
        later = reweight_node(world, world.a, new_outcome(world, world.a), 1165, 1357)
        insert(world.brain.conn, "memory_provenance", later)
        assert reweight_nodes(world.brain.conn, world.a)[-1]["mutation_hash"] == later["mutation_hash"]
        row = projection(world, world.a, oid, 1165, 1357, node["mutation_hash"])
        insert(world.brain.conn, "weight_projections", row)

    refused("transition_provenance", build)


# --- the transition signature ----------------------------------------------------------------------------
def test_transition_signature_with_a_flipped_byte(world: World, refused: Any) -> None:
    def build() -> None:
        oid, node = next_for_a(world)
        row = projection(world, world.a, oid, 1165, 1357, node["mutation_hash"])
        row["transition_signature_b64u"] = flip(row["transition_signature_b64u"])
        insert(world.brain.conn, "weight_projections", row)

    refused("transition_signature", build)


def test_transition_signed_by_another_key(world: World, refused: Any) -> None:
    def build() -> None:
        oid, node = next_for_a(world)
        row = projection(world, world.a, oid, 1165, 1357, node["mutation_hash"])
        row["transition_signature_b64u"] = b64u_encode(
            world.brain.agent.key.sign(bytes.fromhex(row["transition_hash"]))
        )
        insert(world.brain.conn, "weight_projections", row)

    refused("transition_signature", build)


def test_transition_hash_that_does_not_recompute(world: World, refused: Any) -> None:
    """t_i over other weights, correctly signed: the signature verifies but t_i does not bind the row."""

    def build() -> None:
        oid, node = next_for_a(world)
        row = projection(world, world.a, oid, 1165, 1357, node["mutation_hash"])
        wrong = commitments.transition_commitment(
            "personal", world.a, 1165, 1400, bytes.fromhex(node["mutation_hash"])
        )
        row["transition_hash"] = wrong.hex()
        row["transition_signature_b64u"] = b64u_encode(world.brain.housekeeper.key.sign(wrong))
        insert(world.brain.conn, "weight_projections", row)

    refused("transition_signature", build)


# --- chain position ------------------------------------------------------------------------------------
def test_stale_predecessor(world: World, refused: Any) -> None:
    later = disclosing_receipt(world.brain, "heron", world.a)  # a recall of its own
    give(world.brain, world.a, later, "good")  # a second real transition: 1165 -> 1413
    chain = projections(world.brain.conn, world.a)
    assert len(chain) == 2 and weight(world.brain.conn, world.a) == 1413

    def build() -> None:
        oid, node = next_for_a(world, new=1724)
        row = projection(
            world, world.a, oid, 1413, 1724, node["mutation_hash"], prev=chain[0]["projection_hash"]
        )
        insert(world.brain.conn, "weight_projections", row)

    refused("transition_predecessor", build)


def test_fork_a_second_genesis(world: World, refused: Any) -> None:
    def build() -> None:
        oid, node = next_for_a(world)
        row = projection(world, world.a, oid, 1165, 1357, node["mutation_hash"], prev=None)
        insert(world.brain.conn, "weight_projections", row)

    refused("transition_predecessor", build)


def test_predecessor_of_another_memory(world: World, refused: Any) -> None:
    def build() -> None:
        oid = new_outcome(world, world.b)
        node = reweight_node(world, world.b, oid, 1000, 1165)
        insert(world.brain.conn, "memory_provenance", node)
        row = projection(
            world, world.b, oid, 1000, 1165, node["mutation_hash"], prev=world.projection["projection_hash"]
        )
        insert(world.brain.conn, "weight_projections", row)

    refused("transition_predecessor", build)


def test_old_weight_is_not_the_live_weight(world: World, refused: Any) -> None:
    def build() -> None:
        oid, node = next_for_a(world, old=1100, new=1357)
        row = projection(world, world.a, oid, 1100, 1357, node["mutation_hash"])
        insert(world.brain.conn, "weight_projections", row)

    refused("transition_live_weight", build)


def test_first_transition_not_starting_at_1000(world: World, refused: Any) -> None:
    """Only the genesis rule is wrong: the live weight was moved to 900 (the guard trigger dropped
    inside the same, rolled-back transaction) and the first transition starts there."""
    conn = world.brain.conn

    def build() -> None:
        guard = one(
            conn, "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'memories_no_update'"
        )
        assert guard
        conn.execute("DROP TRIGGER memories_no_update")
        conn.execute("UPDATE memories SET retrieval_weight_milli = 900 WHERE memory_id = ?", (world.b,))
        conn.execute(guard["sql"])
        oid = new_outcome(world, world.b)
        node = reweight_node(world, world.b, oid, 900, 1000)
        insert(conn, "memory_provenance", node)
        insert(conn, "weight_projections", projection(world, world.b, oid, 900, 1000, node["mutation_hash"]))

    refused("transition_genesis", build)
    assert one(
        conn, "SELECT 1 AS x FROM sqlite_master WHERE type = 'trigger' AND name = 'memories_no_update'"
    )


def test_projection_hash_that_does_not_recompute(world: World, refused: Any) -> None:
    def build() -> None:
        oid, node = next_for_a(world)
        row = projection(world, world.a, oid, 1165, 1357, node["mutation_hash"])
        row["projection_hash"] = hashlib.sha256(b"not h_i").hexdigest()
        insert(world.brain.conn, "weight_projections", row)

    refused("transition_hash", build)


def test_projection_hash_chained_from_zeros_instead_of_the_predecessor(world: World, refused: Any) -> None:
    def build() -> None:
        oid, node = next_for_a(world)
        row = projection(world, world.a, oid, 1165, 1357, node["mutation_hash"])
        row["projection_hash"] = commitments.projection_hash(
            world.a, 1165, 1357, bytes.fromhex(node["mutation_hash"]), None
        ).hex()
        insert(world.brain.conn, "weight_projections", row)

    refused("transition_hash", build)


# --- the outcome behind the transition --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("scope", "terminal"),
    [("occurrence_observation", "occurrence_observation"), ("principal_state", "signed_noop")],
)
def test_outcome_without_weight_authority(world: World, refused: Any, scope: str, terminal: str) -> None:
    def build() -> None:
        oid = new_outcome(world, world.a, scope=scope, terminal=terminal)
        node = reweight_node(world, world.a, oid, 1165, 1357)
        insert(world.brain.conn, "memory_provenance", node)
        insert(
            world.brain.conn,
            "weight_projections",
            projection(world, world.a, oid, 1165, 1357, node["mutation_hash"]),
        )

    refused("transition_outcome", build)


def test_outcome_about_another_memory(world: World, refused: Any) -> None:
    def build() -> None:
        oid = new_outcome(world, world.b)
        node = reweight_node(world, world.a, oid, 1165, 1357)
        insert(world.brain.conn, "memory_provenance", node)
        insert(
            world.brain.conn,
            "weight_projections",
            projection(world, world.a, oid, 1165, 1357, node["mutation_hash"]),
        )

    refused("transition_outcome", build)


# --- the REWEIGHT node trigger (the node must exist before a projection can name it) ----------------------
def test_reweight_node_signed_by_an_agent_is_refused(world: World) -> None:
    conn = world.brain.conn
    before = counts(conn, TABLES)
    with pytest.raises(IntegrityError) as caught:
        with write_transaction(conn):
            oid = new_outcome(world, world.a)
            node = reweight_node(world, world.a, oid, 1165, 1357)
            body = json_of(read_provenance(node)["body_json"])
            agent = world.brain.agent
            node.update(
                signer_agent_id=agent.agent_id,
                signer_valid_from=agent.valid_from,
                cert_fingerprint=agent.cert_fingerprint,
                signature_b64u=b64u_encode(
                    agent.key.sign(payload_message(body, node["nonce"], node["ts_signed"]))
                ),
            )
            insert(conn, "memory_provenance", node)
    assert "housekeeper" in caught.value.message
    assert counts(conn, TABLES) == before


def test_reweight_node_with_a_flipped_signature_is_refused(world: World) -> None:
    conn = world.brain.conn
    before = counts(conn, TABLES)
    with pytest.raises(IntegrityError) as caught:
        with write_transaction(conn):
            oid = new_outcome(world, world.a)
            node = reweight_node(world, world.a, oid, 1165, 1357)
            node["signature_b64u"] = flip(node["signature_b64u"])
            insert(conn, "memory_provenance", node)
    assert "signature" in caught.value.message
    assert counts(conn, TABLES) == before


# --- the live weight follows only the newest projection --------------------------------------------------
def test_direct_update_of_the_live_weight_is_refused(world: World) -> None:
    conn = world.brain.conn
    for memory_id, value in (
        (world.a, 1000),
        (world.a, 1357),
        (world.a, 3000),
        (world.b, 1165),
        (world.b, 100),
    ):
        with pytest.raises(IntegrityError) as caught:
            with write_transaction(conn):
                conn.execute(
                    "UPDATE memories SET retrieval_weight_milli = ? WHERE memory_id = ?", (value, memory_id)
                )
        assert "live weight may only follow" in caught.value.message
        assert exit_code_for(caught.value) == INTEGRITY
    assert (weight(conn, world.a), weight(conn, world.b)) == (1165, 1000)


def test_update_to_the_newest_projections_weight_is_allowed(world: World) -> None:
    conn = world.brain.conn
    with write_transaction(conn):
        conn.execute("UPDATE memories SET retrieval_weight_milli = 1165 WHERE memory_id = ?", (world.a,))
    assert weight(conn, world.a) == 1165
    assert verify_brain(conn).ok


def test_crafted_rows_never_reach_the_table_without_the_registered_functions(world: World) -> None:
    """A connection without the writer's SQL functions (like the sqlite3 shell) cannot append a
    projection even with perfect rows: the trigger cannot run."""
    conn = world.brain.conn
    with write_transaction(conn):
        oid, node = next_for_a(world)
        row = projection(world, world.a, oid, 1165, 1357, node["mutation_hash"])
    plain = apsw.Connection(str(world.brain.home / "brain.sqlite3"))
    try:
        with pytest.raises(apsw.Error):
            insert(plain, "weight_projections", row)
    finally:
        plain.close()
    assert len(projections(conn, world.a)) == 1
    assert (
        rows(conn, "SELECT 1 FROM weight_projections WHERE projection_id = ?", (row["projection_id"],)) == []
    )


# --- one weight-bearing outcome per agent, recall and memory (migration 7) -----------------------------
TRIGGER = "outcomes_one_weight_bearing_per_disclosure"


def test_a_second_transition_about_the_same_recall_is_refused(world: World) -> None:
    """The outcome row itself is refused: a's real transition was about `world.receipt`."""

    def build() -> None:
        new_outcome(world, world.a, receipt=world.receipt)

    with pytest.raises(IntegrityError) as caught:
        with write_transaction(world.brain.conn):
            build()
    assert "a further outcome about the same disclosure has no weight authority" in caught.value.message
    assert exit_code_for(caught.value) == INTEGRITY

    # and the whole crafted transition (outcome, REWEIGHT node, projection) with it
    def whole() -> None:
        oid = new_outcome(world, world.a, receipt=world.receipt)
        node = reweight_node(world, world.a, oid, 1165, 1413)
        insert(world.brain.conn, "memory_provenance", node)
        insert(
            world.brain.conn,
            "weight_projections",
            projection(world, world.a, oid, 1165, 1413, node["mutation_hash"]),
        )

    with pytest.raises(IntegrityError) as again:
        with write_transaction(world.brain.conn):
            whole()
    assert "no weight authority" in again.value.message
    assert len(projections(world.brain.conn, world.a)) == 1 and weight(world.brain.conn, world.a) == 1165
    assert verify_brain(world.brain.conn).ok


def forge_second_transition(world: World, *, with_event: bool, new: int = 1413) -> str:
    """a's second transition (1165 -> ``new``) about the recall its first one was about, written past
    migration 7's trigger (dropped in this connection, then recreated from its definition); with
    ``with_event``, also the terminal event the writer appends (naming rule 2). Its outcome id."""
    conn = world.brain.conn
    definition = expected_objects()[TRIGGER][2]
    assert definition
    # what a transition 1165 -> 1413 on a recall of its own would record (the writer's step)
    step = rule_step(world, world.a, unused_receipt(world, world.a), 1)
    with write_transaction(conn):
        conn.execute(f"DROP TRIGGER {TRIGGER}")
        oid = new_outcome(world, world.a, receipt=world.receipt)
        node = reweight_node(world, world.a, oid, 1165, new)
        insert(conn, "memory_provenance", node)
        row = projection(world, world.a, oid, 1165, new, node["mutation_hash"])
        insert(conn, "weight_projections", row)
        conn.execute("UPDATE memories SET retrieval_weight_milli = ? WHERE memory_id = ?", (new, world.a))
        if with_event:
            adjusted_event(world, oid, row, step)
        conn.execute(definition)
    assert one(conn, "SELECT sql FROM sqlite_master WHERE name = ?", (TRIGGER,)) == {"sql": definition}
    assert weight(conn, world.a) == new
    return oid


def test_a_forged_second_transition_about_the_same_recall_is_named_by_the_verifiers(world: World) -> None:
    """Written past the trigger with everything the writer records (the terminal event names rule
    2), the transition is signed and chained, yet it is not what the rule gives: a further outcome
    about a recall that already moved the weight has no weight authority."""
    oid = forge_second_transition(world, with_event=True)
    conn = world.brain.conn
    report = verify_brain(conn)
    target = next(r for r in report.records if r.memory_id == world.a)
    assert not report.ok and not target.ok
    assert (target.reason, target.detail) == (
        "valence_replay_mismatch",
        f"outcome {oid} is not what the rule gives",
    )
    assert target.chain_length == 2  # the chain itself is whole: only the rule's replay fails
    assert all(r.ok for r in report.records if r.memory_id != world.a)
    both = verify_everything(conn, world.brain.master.fingerprint)
    assert not both["ok"]
    assert [f["memory_id"] for f in both["in_database"]["failures"]] == [world.a]
    assert both["portable"]["verdict"] != "valid"


def test_a_forged_second_transition_without_its_terminal_event_is_named_by_the_verifiers(
    world: World,
) -> None:
    """The same forgery as above, but without the terminal event the writer always appends, and with
    the weight MutMem's rule gives (1165 * e^(0.2 tanh 1) = 1357): no outcome recorded after
    migration 7 is under MutMem's rule, so this is not what any rule the writer applies gives."""
    forge_second_transition(world, with_event=False, new=1357)
    conn = world.brain.conn
    report = verify_brain(conn)
    target = next(r for r in report.records if r.memory_id == world.a)
    assert not target.ok, "a second transition about one recall, with no terminal event, verifies"
    assert not verify_everything(conn, world.brain.master.fingerprint)["ok"]
