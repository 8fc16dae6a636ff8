"""The classification chain's writer: signed label transitions, the classifier at save time,
retroactive relabelling of a growing cluster, and a person's judgments.

Every change is a housekeeper-signed `memory_epistemic_classified` event plus a chained
`memory_classifications` row (g_j, PROTOCOL-NOTES 3) and the memory's live-label projection, in
the caller's write transaction. Content, weight and retention never change.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from aimos.crypto import commitments
from aimos.crypto.ed25519 import KeyPair
from aimos.crypto.encoding import b64u_encode
from aimos.crypto.messages import payload_message
from aimos.epistemic.classifier import (
    Classification,
    MemoryView,
    classify_features,
    features,
    leading_question,
)
from aimos.errors import MemoryNotFoundError, PassphraseError, UsageError
from aimos.identity.devices import is_home
from aimos.identity.master import master_row
from aimos.identity.requests import SignedRequest, VerifiedRequest
from aimos.identity.signer import Signer
from aimos.identity.trusted import grant_covers
from aimos.ledger.events import append_event
from aimos.store.connection import Connection, write_transaction
from aimos.store.queries import epistemic as queries
from aimos.store.queries.epistemic import ChainHead, ClassifiedMemory, ClusterMember
from aimos.vocabulary import (
    BASIS_CLASSIFIER,
    BASIS_EXPLICIT,
    CLASSIFICATION_SCHEMA,
    DETECTOR_VERSION,
    EPISTEMIC_CLASSIFIED_OPERATION,
    INHERITED_CLASSIFICATION_HASH,
    INHERITED_FROM,
    INHERITED_LABEL,
    INHERITED_REASON,
    JUDGMENT_AUTHORITY_V2,
    JUDGMENTS,
    PATH_LABEL,
    UNVERIFIED,
    carried_by_correction,
    raises_trust,
)


@dataclass(frozen=True)
class Transition:
    memory_id: str
    label: str
    confidence_milli: int
    basis: str
    classification_hash: str
    event_id: str
    previous_label: str
    # a judgment kept for the home device (identity/devices), which records it at its next sync
    provisional: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "memory_id": self.memory_id,
            "label": self.label,
            "previous_label": self.previous_label,
            "confidence_milli": self.confidence_milli,
            "basis": self.basis,
            "classification_hash": self.classification_hash,
            "event_id": self.event_id,
            **({"provisional": True} if self.provisional else {}),
        }


def _memory(conn: Connection, memory_id: str) -> ClassifiedMemory:
    row = queries.classified_memory(conn, memory_id)
    if row is None:
        raise MemoryNotFoundError(f"no memory {memory_id}")
    return row


def _view(row: ClusterMember) -> MemoryView:
    return MemoryView(row["memory_id"], row["value"], row["key"], row["source"], row["memory_type"])


def newest(conn: Connection, memory_id: str) -> ChainHead | None:
    """The memory's newest classification; its basis as the signed event says (not the row)."""
    return queries.newest_classification(conn, memory_id)


def owed_label(conn: Connection, memory_id: str) -> str | None:
    """The label a corrected version carries from the version it corrects (its classification
    that says so), unless a judgment the master signed came after it; else None. The classifier
    never makes the memory more trusting than this (migration 9's trigger reads it the same way)."""
    return queries.carried_label(conn, memory_id)


def inherit_judgment(
    conn: Connection, housekeeper: Signer, memory_id: str, supersedes: str, *, now: int
) -> Transition | None:
    """A correction carries the judgment on the version it corrects (inside the save's write
    transaction, after the new memory's row and before its supersession link, which migration 9's
    trigger refuses otherwise): when ``supersedes`` is less trusted than unverified now
    (vocabulary.carried_by_correction), the new version ``memory_id`` gets a housekeeper-signed
    classification with the same label and confidence, naming the predecessor, its classification
    hash and its label. None when it owes nothing. A person lifts it as any label: a judgment with
    the master's signature."""
    head = newest(conn, supersedes)
    if head is None or not carried_by_correction(str(head["label"])):
        return None
    label = str(head["label"])
    return append_classification(
        conn,
        housekeeper,
        memory_id,
        label=label,
        confidence_milli=int(head["confidence_milli"]),
        basis=BASIS_CLASSIFIER,
        now=now,
        signals={
            INHERITED_FROM: supersedes,
            INHERITED_CLASSIFICATION_HASH: head["classification_hash"],
            INHERITED_LABEL: label,
        },
        reason=INHERITED_REASON,
    )


def _classifier_may_record(label: str, owed: str | None) -> bool:
    """The classifier's label stands unless the memory owes a label it would be more trusting
    than, or as trusting as (a person's poison_confirmed is kept over the classifier's
    poison_likely): it may lower a carried judgment, never raise it."""
    return owed is None or raises_trust(label, owed)


def append_classification(
    conn: Connection,
    housekeeper: Signer,
    memory_id: str,
    *,
    label: str,
    confidence_milli: int,
    basis: str,
    now: int,
    signals: dict[str, Any] | None = None,
    reason: str | None = None,
    evidence: dict[str, Any] | None = None,
    detector_version: str = DETECTOR_VERSION,
) -> Transition:
    """One signed label transition (call inside a write transaction); ``detector_version`` names
    the detector whose verdict it records (the reference kernel's unless said)."""
    memory = _memory(conn, memory_id)
    head = newest(conn, memory_id)
    prev = head["classification_hash"] if head else None
    metadata = {
        "schema": CLASSIFICATION_SCHEMA,
        "detector_version": detector_version,
        "memory_id": memory_id,
        "label": label,
        "confidence_milli": confidence_milli,
        "basis": basis,
        "live_content_hash": memory["live_content_hash"],
        "prev_classification_hash": prev,
        "previous_label": memory["epistemic_label"],
        "signals": signals,
        "reason": reason,
        "evidence": evidence,
    }
    event = append_event(
        conn,
        housekeeper,
        operation=EPISTEMIC_CLASSIFIED_OPERATION,
        company_id=memory["company_id"],
        metadata=metadata,
        now=now,
        subject_memory_id=memory_id,
    )
    g = commitments.epistemic_classification_hash(
        memory_id,
        label,
        confidence_milli,
        bytes.fromhex(memory["live_content_hash"]),
        bytes.fromhex(event["mutation_hash"]),
        bytes.fromhex(prev) if prev else None,
    ).hex()
    queries.insert_classification(
        conn,
        {
            "classification_id": str(uuid.uuid4()),
            "memory_id": memory_id,
            "company_id": memory["company_id"],
            "label": label,
            "confidence_milli": confidence_milli,
            "basis": basis,
            "live_content_hash": memory["live_content_hash"],
            "authority_event_id": event["event_id"],
            "authority_mutation_hash": event["mutation_hash"],
            "prev_classification_hash": prev,
            "classification_hash": g,
            "created_at": now,
        },
    )
    if memory["epistemic_label"] != label:
        queries.set_label(conn, memory_id, label)
    return Transition(
        memory_id, label, confidence_milli, basis, g, event["event_id"], memory["epistemic_label"]
    )


def classify_at_save(conn: Connection, housekeeper: Signer, memory_id: str, now: int) -> list[Transition]:
    """Run the classifier on a newly saved memory (inside the save's transaction). A memory with
    no leading question gets no row (it stays `unverified`, the implicit genesis). A fingerprinted
    one gets its first classification; when it grows a cluster, every earlier member whose label
    the larger cluster changes gets a new transition (its first judgment stays in its chain), except
    members a person has judged. A corrected version that carries a label (owed_label) takes the
    classifier's label only when it is less trusted than the carried one."""
    memory = _memory(conn, memory_id)
    lq = leading_question(memory["value"])
    if lq is None:
        return []
    queries.insert_fingerprint(conn, memory_id, memory["company_id"], lq.fingerprint, now)
    members = queries.cluster_members(conn, memory["company_id"], lq.fingerprint)
    computed = {m["memory_id"]: features(_view(m)) for m in members}  # each member's once
    views = list(computed.values())
    done = []
    result = classify_features(computed[memory_id], views)
    if _classifier_may_record(result.label, owed_label(conn, memory_id)):
        done.append(_record(conn, housekeeper, memory_id, result, now, retroactive_for=None))
    if is_home(conn):  # the other members' chains are the home's to append to
        done += _relabel_members(conn, housekeeper, memory_id, members, computed, now)
    return done


def relabel_arrivals(conn: Connection, housekeeper: Signer, memory_ids: Iterable[str], now: int) -> int:
    """On the home, after a pull: the clusters that memories saved on other devices grew (their
    own first label came with them, made at their save), relabelled as a save here would; the
    caller holds the write transaction. How many labels changed."""
    changed = 0
    for memory_id in memory_ids:
        found = queries.fingerprint_of(conn, memory_id)
        if found is None:
            continue
        members = queries.cluster_members(conn, found["company_id"], found["fingerprint"])
        computed = {m["memory_id"]: features(_view(m)) for m in members}
        changed += len(_relabel_members(conn, housekeeper, memory_id, members, computed, now))
    return changed


def _relabel_members(
    conn: Connection,
    housekeeper: Signer,
    memory_id: str,
    members: list[ClusterMember],
    computed: dict[str, Any],
    now: int,
) -> list[Transition]:
    """Every earlier member of ``memory_id``'s cluster whose label the grown cluster changes gets
    a new transition (except members a person has judged)."""
    views = list(computed.values())
    done = []
    for member in members:
        if member["memory_id"] == memory_id:
            continue
        head = newest(conn, member["memory_id"])
        if head is not None and head["basis"] == BASIS_EXPLICIT:
            continue  # a person's judgment is not overruled by the classifier
        again = classify_features(computed[member["memory_id"]], views)
        if again.label != member["epistemic_label"] and _classifier_may_record(
            again.label, owed_label(conn, member["memory_id"])
        ):
            done.append(
                _record(conn, housekeeper, member["memory_id"], again, now, retroactive_for=memory_id)
            )
    return done


def _record(
    conn: Connection,
    housekeeper: Signer,
    memory_id: str,
    result: Classification,
    now: int,
    *,
    retroactive_for: str | None,
) -> Transition:
    signals = dict(result.signals)
    if retroactive_for is not None:
        signals["retroactive"] = True
        signals["cluster_grew_with"] = retroactive_for
    return append_classification(
        conn,
        housekeeper,
        memory_id,
        label=result.label,
        confidence_milli=result.confidence_milli,
        basis=BASIS_CLASSIFIER,
        now=now,
        signals=signals,
        reason="cluster grew" if retroactive_for else "classified at save",
    )


def judge(
    conn: Connection, housekeeper: Signer, req: SignedRequest, now: int, *, master: KeyPair | None = None
) -> Transition:
    """Record a person's judgment (confirm | refute | support | dispute) carried by an agent's
    signed request; the housekeeper signs the transition with the request as its evidence. A
    judgment that raises the memory's trust from its current label (vocabulary.raises_trust) also
    needs the master's signature over the same request (``master``): an agent alone can lower
    trust, never raise it (the store's trigger and both verifiers check the same)."""
    check_judgment_body(req.body)
    signature = None if master is None else master_signature(conn, master, req)
    with write_transaction(conn, housekeeper):
        return judge_in_transaction(conn, housekeeper, req, now, master_signature=signature)


def check_judgment_body(body: dict[str, Any]) -> None:
    if body.get("judgment") not in JUDGMENTS:
        raise UsageError(f"unknown judgment {body.get('judgment')!r}", f"Use one of: {', '.join(JUDGMENTS)}.")
    reason = body.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise UsageError("a judgment needs a reason", 'Add --reason "why you judge it so".')


def master_signature(conn: Connection, master: KeyPair, req: SignedRequest) -> str | None:
    """The master's signature over a judgment's request (payload form 1), beside the agent's;
    None for a key that is not this brain's master (the judgment then has none)."""
    if master.fingerprint != master_row(conn)["fingerprint"]:
        return None
    return b64u_encode(master.sign(payload_message(req.body, req.nonce, req.ts)))


def judge_in_transaction(
    conn: Connection,
    housekeeper: Signer,
    req: SignedRequest,
    now: int,
    *,
    master_signature: str | None = None,
    received: int | None = None,
    record: bool = True,
) -> Transition:
    """``judge`` inside the caller's write transaction, with the master's signature already made
    (a judgment another device kept for the home carries it: ``received`` is when that device
    received the request, identity.requests.verify_request); ``record`` off: the request's nonce
    is left unrecorded (a device that keeps the judgment for the home tries it first)."""
    from aimos.crypto.ed25519 import verify
    from aimos.crypto.encoding import b64u_decode
    from aimos.errors import GrantError
    from aimos.identity.requests import verify_request

    body = req.body
    check_judgment_body(body)
    judgment, reason = str(body["judgment"]), str(body["reason"])
    verified: VerifiedRequest = verify_request(
        conn, req, path=PATH_LABEL, now=now, received=received, record=record
    )
    if not verified.grant["write_allowed"]:
        raise GrantError(f"agent {verified.agent_id!r} has a read-only grant", "Judge with a writing agent.")
    memory = _memory(conn, str(body.get("memory_id")))
    if memory["company_id"] != verified.grant["company_id"] or body.get("company_id") != memory["company_id"]:
        raise GrantError(f"agent {verified.agent_id!r} has no grant for this memory's company")
    if not grant_covers(verified.grant, memory["clearance_level"], memory["data_class"]):
        raise GrantError(f"agent {verified.agent_id!r} may not see this memory, so it may not judge it")
    label, confidence = JUDGMENTS[judgment]
    current = current_label(conn, memory["memory_id"])
    evidence: dict[str, Any] = {
        "judgment": judgment,
        "authority_rule": JUDGMENT_AUTHORITY_V2,
        "agent_id": verified.agent_id,
        "agent_valid_from": verified.valid_from,
        "request_hash": verified.request_hash,
        "nonce": req.nonce,
        "ts": req.ts,
        "signature_b64u": req.signature_b64u,
        "body": body,
    }
    if raises_trust(current, label):
        master = master_row(conn)
        message = payload_message(body, req.nonce, req.ts)
        if master_signature is None or not verify(
            master["public_key_b64u"], message, b64u_decode(master_signature)
        ):
            raise PassphraseError(
                f"{judgment} raises this memory's trust (it is {current} now) and needs the "
                "master's signature beside the agent's",
                "Give the master passphrase (a terminal prompt, --passphrase-fd N or "
                "AIMOS_PASSPHRASE_FILE); an agent key alone may only lower trust.",
            )
        evidence["master_fingerprint"] = master["fingerprint"]
        evidence["master_signature_b64u"] = master_signature
    return append_classification(
        conn,
        housekeeper,
        memory["memory_id"],
        label=label,
        confidence_milli=confidence,
        basis=BASIS_EXPLICIT,
        now=now,
        reason=reason.strip(),
        evidence=evidence,
    )


def current_label(conn: Connection, memory_id: str) -> str:
    """The memory's label as its classification chain ends (the trigger's reading, not the
    memory row's projection)."""
    head = newest(conn, memory_id)
    return str(head["label"]) if head else UNVERIFIED


def check_judgment(judgment: str, reason: str | None) -> str:
    """The judgment's reason, stripped; a usage error naming the fix for a bad pair."""
    if judgment not in JUDGMENTS:
        raise UsageError(
            f"unknown judgment {judgment!r}",
            f"Use one of: {', '.join(JUDGMENTS)}.",
        )
    if reason is None or not reason.strip():
        raise UsageError("a judgment needs a reason", f'Add --reason "why you {judgment} it".')
    return reason.strip()
