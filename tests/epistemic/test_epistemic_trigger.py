"""The writer's guards on the classification chain (migration 5, SPEC 1.1-1.3 and 4): a row that
does not bind the memory's live content, a housekeeper-signed `memory_epistemic_classified` event
binding it, the chain head and a recomputing g_j is refused by the insert trigger; the live label
can only become the newest row's label; classification rows are never updated or deleted.

Each refused insert is a raw INSERT on the writer's own connection (its SQL functions are
registered, so the trigger really runs its checks), differing from an accepted row in exactly one
way; the accepted control row proves the difference is what the trigger refused."""

from __future__ import annotations

import uuid
from typing import Any

import apsw
import pytest
from support.epistemic import (
    CLASSIFIED,
    POISON_1,
    POISON_2,
    chain,
    count,
    g_hash,
    memory_row,
    now,
    q,
    save_text,
    without_judgment_trigger,
)

from aimos.errors import IntegrityError

pytestmark = pytest.mark.timeout(60)


INSERT = (
    "INSERT INTO memory_classifications (classification_id, memory_id, company_id, label, confidence_milli,"
    " basis, live_content_hash, authority_event_id, authority_mutation_hash, prev_classification_hash,"
    " classification_hash, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
)
OTHER_HASH = "ab" * 32


class Rollback(Exception):
    pass


def attempt(
    brain: Any,
    memory_id: str,
    *,
    label: str = "poison_suspect",
    confidence: int = 500,
    signer: Any = None,
    operation: str = CLASSIFIED,
    meta: dict[str, Any] | None = None,
    row: dict[str, Any] | None = None,
    event_of: str | None = None,
) -> None:
    """In one write transaction: sign an authority event (by default exactly what the writer
    would sign for this transition), then INSERT a classification row; ``meta`` overrides what
    the event binds, ``row`` what the row says, ``event_of`` points the row at another event.
    The transaction is always rolled back (Rollback when the insert was accepted)."""
    from aimos.ledger.events import append_event
    from aimos.store.connection import write_transaction

    conn = brain.conn
    memory = memory_row(conn, memory_id)
    head = chain(conn, memory_id)
    prev = head[-1]["classification_hash"] if head else None
    metadata = {
        "memory_id": memory_id,
        "label": label,
        "confidence_milli": confidence,
        "basis": "classifier",
        "live_content_hash": memory["live_content_hash"],
        "prev_classification_hash": prev,
        **(meta or {}),
    }
    with write_transaction(conn):
        event = append_event(
            conn,
            signer or brain.housekeeper,
            operation=operation,
            company_id="personal",
            metadata=metadata,
            now=now(),
            subject_memory_id=memory_id,
        )
        event_id, mutation = event["event_id"], event["mutation_hash"]
        if event_of is not None:
            (other,) = q(
                conn,
                "SELECT event_id, mutation_hash FROM events WHERE operation = ? AND subject_memory_id = ?",
                (event_of, memory_id),
            )
            event_id, mutation = other["event_id"], other["mutation_hash"]
        values = {
            "label": metadata["label"],
            "confidence_milli": metadata["confidence_milli"],
            "basis": metadata["basis"],
            "live_content_hash": metadata["live_content_hash"],
            "prev_classification_hash": metadata["prev_classification_hash"],
            **(row or {}),
        }
        g = g_hash(
            memory_id,
            values["label"],
            values["confidence_milli"],
            values["live_content_hash"],
            mutation,
            values["prev_classification_hash"],
        )
        values.setdefault("classification_hash", g)
        conn.execute(
            INSERT,
            (
                str(uuid.uuid4()),
                memory_id,
                "personal",
                values["label"],
                values["confidence_milli"],
                values["basis"],
                values["live_content_hash"],
                event_id,
                mutation,
                values["prev_classification_hash"],
                values["classification_hash"],
                now(),
            ),
        )
        raise Rollback


@pytest.fixture
def poisons(brain: Any) -> tuple[Any, str, str]:
    """Two same-source poisons: the first has two rows, the second one."""
    first = save_text(brain, POISON_1).memory_id
    second = save_text(brain, POISON_2).memory_id
    assert [r["label"] for r in chain(brain.conn, first)] == ["unverified", "poison_likely"]
    return brain, first, second


CASES: dict[str, tuple[dict[str, Any], str]] = {
    "wrong-prev": (
        {"meta": {"prev_classification_hash": OTHER_HASH}},
        "must chain to the memory's newest one",
    ),
    "second-genesis": ({"meta": {"prev_classification_hash": None}}, "must chain to the memory's newest one"),
    "wrong-live-hash": ({"meta": {"live_content_hash": OTHER_HASH}}, "binds the memory's live content"),
    "memory-saved-event": ({"event_of": "memory_saved"}, "signed authority event"),
    "other-operation": ({"operation": "memory_epistemic_note"}, "signed authority event"),
    # an agent cannot even append the authority event (the events table's own guard)
    "agent-signed": ({"signer": "agent"}, "events are signed by the housekeeper"),
    "event-binds-another-label": ({"row": {"label": "poison_refuted"}}, "signed authority event"),
    "event-binds-another-confidence": ({"row": {"confidence_milli": 1000}}, "signed authority event"),
    "event-binds-another-prev": ({"row": {"prev_classification_hash": None}}, "signed authority event"),
    "wrong-classification-hash": ({"row": {"classification_hash": OTHER_HASH}}, "does not recompute"),
}


def test_the_control_row_is_accepted(poisons: tuple[Any, str, str]) -> None:
    brain, first, _ = poisons
    with pytest.raises(Rollback):
        attempt(brain, first)
    assert len(chain(brain.conn, first)) == 2  # rolled back


@pytest.mark.parametrize("case", list(CASES))
def test_a_forged_row_is_refused(poisons: tuple[Any, str, str], case: str) -> None:
    brain, first, _ = poisons
    conn = brain.conn
    kwargs, message = CASES[case]
    if kwargs.get("signer") == "agent":
        kwargs = {**kwargs, "signer": brain.agent}
    before = (count(conn, "memory_classifications"), count(conn, "events"))
    with pytest.raises(IntegrityError, match=message):  # the writer's translation of the abort
        attempt(brain, first, **kwargs)
    assert (count(conn, "memory_classifications"), count(conn, "events")) == before
    assert memory_row(conn, first)["epistemic_label"] == "poison_likely"


def test_a_row_of_another_memory_cannot_be_chained_here(poisons: tuple[Any, str, str]) -> None:
    """The second memory's authority event is bound to it: reusing its head as prev (a fork
    between chains) is refused."""
    brain, first, second = poisons
    other_head = chain(brain.conn, second)[-1]["classification_hash"]
    with pytest.raises(IntegrityError, match="newest one"):
        attempt(brain, first, meta={"prev_classification_hash": other_head})


def test_the_live_label_only_follows_the_newest_row(poisons: tuple[Any, str, str]) -> None:
    brain, first, second = poisons
    conn = brain.conn
    plain = save_text(brain, "a plain note about the ferry timetable", source="cli").memory_id
    for mid, label in (
        (plain, "supported"),  # no row at all
        (second, "supported"),  # newest row says poison_likely
        (first, "unverified"),  # an older row's label is not the newest
        (second, "poison_refuted"),
    ):
        with pytest.raises(apsw.ConstraintError, match="may only follow a signed classification"):
            conn.execute("UPDATE memories SET epistemic_label = ? WHERE memory_id = ?", (label, mid))
    conn.execute(
        "UPDATE memories SET epistemic_label = 'poison_likely' WHERE memory_id = ?", (second,)
    )  # no-op
    assert [memory_row(conn, m)["epistemic_label"] for m in (plain, first, second)] == [
        "unverified",
        "poison_likely",
        "poison_likely",
    ]


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE memory_classifications SET label = 'poison_refuted' WHERE memory_id = ?",
        "UPDATE memory_classifications SET confidence_milli = 1 WHERE memory_id = ?",
        "DELETE FROM memory_classifications WHERE memory_id = ?",
        "DELETE FROM epistemic_fingerprints WHERE memory_id = ?",
        "UPDATE epistemic_fingerprints SET fingerprint = 'x' WHERE memory_id = ?",
    ],
)
def test_classifications_are_append_only(poisons: tuple[Any, str, str], sql: str) -> None:
    brain, first, _ = poisons
    conn = brain.conn
    before = chain(conn, first)
    with pytest.raises(apsw.ConstraintError, match="append-only"):
        conn.execute(sql, (first,))
    assert chain(conn, first) == before


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"judgment": "forgive"}, "UsageError"),
        ({"reason": "   "}, "UsageError"),
        ({"reason": None}, "UsageError"),
        ({"company_id": "acme"}, "GrantError"),
        ({"memory_id": "0b6f1c1e-3a52-4d7e-9c55-2f1d8f0e9a11"}, "MemoryNotFoundError"),
    ],
    ids=["unknown-judgment", "blank-reason", "no-reason", "other-company", "unknown-memory"],
)
def test_the_writer_refuses_a_bad_signed_judgment(
    poisons: tuple[Any, str, str], change: dict[str, Any], error: str
) -> None:
    """`judge` itself (not only the CLI) refuses a signed judgment body it cannot apply."""
    from aimos import errors
    from aimos.actions.bodies import build_label_body
    from aimos.epistemic.chain import judge
    from aimos.identity.requests import sign_request
    from aimos.vocabulary import PATH_LABEL

    brain, first, _ = poisons
    conn = brain.conn
    body = build_label_body(company_id="personal", memory_id=first, judgment="refute", reason="checked")
    body.update(change)
    before = (count(conn, "memory_classifications"), count(conn, "events"), count(conn, "request_nonces"))
    t = now()
    with pytest.raises(getattr(errors, error)):
        judge(conn, brain.housekeeper, sign_request(brain.agent, body, PATH_LABEL, t), t)
    assert (
        count(conn, "memory_classifications"),
        count(conn, "events"),
        count(conn, "request_nonces"),
    ) == before
    assert memory_row(conn, first)["epistemic_label"] == "poison_likely"
    moved = judge(
        conn,
        brain.housekeeper,
        sign_request(
            brain.agent,
            build_label_body(company_id="personal", memory_id=first, judgment="refute", reason="checked"),
            PATH_LABEL,
            now(),
        ),
        now(),
        master=brain.master,  # refute raises trust: the master signs too
    )
    assert (moved.label, moved.basis, moved.previous_label) == ("poison_refuted", "explicit", "poison_likely")
    assert chain(conn, first)[-1]["body"]["metadata"]["evidence"]["agent_id"] == "cli"


def test_an_agent_alone_cannot_raise_trust_and_the_verifiers_check_the_master_evidence(poisons) -> None:  # type: ignore[no-untyped-def]
    """A judgment that raises trust (here: refute, support and dispute of a poison_likely memory)
    needs the master's signature; the writer refuses it without, and so does the trigger for a
    housekeeper-signed row whose evidence lacks it. When such a row gets in anyway (a writer without
    the trigger), both verifiers fail it with epistemic_evidence_invalid."""
    import json

    from aimos import errors
    from aimos.actions.bodies import build_label_body
    from aimos.epistemic.chain import append_classification, judge
    from aimos.identity.requests import sign_request
    from aimos.store.connection import write_transaction
    from aimos.verify.brain.parity import verify_everything
    from aimos.vocabulary import JUDGMENT_AUTHORITY_V2, PATH_LABEL

    brain, first, second = poisons
    conn = brain.conn
    for judgment in ("refute", "support", "dispute"):
        body = build_label_body(company_id="personal", memory_id=first, judgment=judgment, reason="trust me")
        t = now()
        with pytest.raises(errors.PassphraseError, match="master"):
            judge(conn, brain.housekeeper, sign_request(brain.agent, body, PATH_LABEL, t), t)
    assert memory_row(conn, first)["epistemic_label"] == "poison_likely"
    # confirm lowers trust: an agent's judgment alone
    t = now()
    body = build_label_body(company_id="personal", memory_id=second, judgment="confirm", reason="planted")
    assert (
        judge(conn, brain.housekeeper, sign_request(brain.agent, body, PATH_LABEL, t), t).label
        == "poison_confirmed"
    )
    t = now()
    request = sign_request(
        brain.agent,
        build_label_body(company_id="personal", memory_id=first, judgment="refute", reason="forged"),
        PATH_LABEL,
        t,
    )
    evidence = {
        "judgment": "refute",
        "authority_rule": JUDGMENT_AUTHORITY_V2,
        "nonce": request.nonce,
        "ts": request.ts,
        "body": request.body,
    }
    # a housekeeper-signed explicit 'poison_refuted' row whose evidence has no master signature
    with pytest.raises(errors.IntegrityError, match="master"), write_transaction(conn):
        append_classification(
            conn,
            brain.housekeeper,
            first,
            label="poison_refuted",
            confidence_milli=1000,
            basis="explicit",
            now=now(),
            reason="forged",
            evidence=evidence,
        )
    assert memory_row(conn, first)["epistemic_label"] == "poison_likely"
    with without_judgment_trigger(conn), write_transaction(conn):
        append_classification(
            conn,
            brain.housekeeper,
            first,
            label="poison_refuted",
            confidence_milli=1000,
            basis="explicit",
            now=now(),
            reason="forged",
            evidence=evidence,
        )
    report = verify_everything(conn, brain.master.fingerprint)
    failures = {f["memory_id"]: f["reason"] for f in report["in_database"]["failures"]}
    assert failures == {first: "epistemic_evidence_invalid"}
    assert report["portable"]["verdict"] == "invalid"
    assert report["portable"]["primary_reason"] == "epistemic_evidence_invalid"
    assert json.dumps(report)  # plain data
