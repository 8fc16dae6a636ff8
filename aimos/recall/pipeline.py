"""The recall pipeline: a signed request in, verified results and a signed receipt out.

verify the request (agent epoch, grant, nonce) -> bound the scope by the grant -> open
candidates -> trust, effective score, MMR, withholding, abstention -> verify every result
before disclosure (fail closed) -> evidence entries, Merkle root, signed `recall_receipt` event.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NotRequired, TypeAlias, TypedDict

from aimos.crypto.canonical import canonical_sha256_hex, json_loads
from aimos.epistemic.detect import contested_in_recall, judge_pending
from aimos.errors import DisclosureError, GrantError, MemoryNotFoundError, UsageError
from aimos.identity.requests import SignedRequest, verify_request
from aimos.identity.signer import Signer
from aimos.identity.trusted import grant_covers, grant_excess
from aimos.ledger.events import append_event
from aimos.memory.gates import refuse_secret_fields
from aimos.memory.redaction import redaction_notices
from aimos.recall.candidates import (
    CANDIDATES,
    Channel,
    LexicalChannel,
    MeaningChannel,
    Scope,
    open_candidates,
)
from aimos.recall.disclosure import verify_many
from aimos.recall.envelope import record_v2_receipt
from aimos.recall.policy import Candidate, Scored, decide, trust_of
from aimos.recall.receipts import evidence_entry, record_receipt
from aimos.recall.text import asks_about_aimos, asks_when, query_terms
from aimos.store.connection import Connection, sealer, write_transaction
from aimos.store.queries.recall import memories_by_rowid, memory_row
from aimos.store.seals import check_counts
from aimos.vocabulary import CLEARANCE_MAX, DATA_CLASSES, PATH_RECALL, RECALL_DISCLOSURE_FAILED_OPERATION
from aimos.vocabulary import RECALL_DEFAULT_LIMIT as DEFAULT_LIMIT
from aimos.vocabulary import RECALL_MAX_LIMIT as MAX_LIMIT

if TYPE_CHECKING:
    from aimos.meaning.index import MeaningQuery
    from aimos.memory.versions import MemoryDetail

# the tables whose rows a recall's trust and weight rest on (see store.seals.check_counts)
DECIDING_CHAINS = ("memory_classifications", "weight_projections")

MAX_QUERY_CHARS = 4096
# ``guides`` (only sent when true, so a request without it is signed as before): search aimos's
# own guide memories whatever the question; without it they are searched only for a question
# that names aimos (recall.text.asks_about_aimos)
BODY_FIELDS = {"query", "limit", "history", "company_id", "clearance_level", "data_class", "guides"}


class RecallEntry(TypedDict):
    """One result of a recall (``_result``), in the order it is shown and printed as JSON."""

    rank: int
    memory_id: str
    key: str | None
    value: str
    memory_type: str
    score: float
    relevance: float
    trust: float
    weight: float
    label: str
    created_at: int
    redacted: str | None  # the redaction notice, None when the text is there (memory.redaction)


class WithheldEntry(TypedDict):
    """A memory a recall withheld as untrusted: its id and why, never its content."""

    memory_id: str
    label: str
    reason: str
    untrusted: bool


class ReceiptSummary(TypedDict):
    """The receipt as ``RecallResult.to_json`` prints it."""

    receipt_id: str
    merkle_root: str
    result_count: int
    event_id: str
    request_hash: str
    command_hash: str
    grant_mutation_hash: str
    decision_sha256: str
    evidence: list[dict[str, Any]]


class RecallJson(TypedDict):
    """A recall as JSON (``RecallResult.to_json``): ``withheld`` only when asked for."""

    results: list[RecallEntry]
    abstained: bool
    receipt: ReceiptSummary
    withheld_count: int
    withheld: NotRequired[list[WithheldEntry]]


@dataclass
class RecallResult:
    results: list[RecallEntry]
    withheld: list[WithheldEntry]
    abstained: bool
    receipt: dict[str, Any]
    timings: dict[str, float] = field(default_factory=dict)

    def to_json(self, *, show_withheld: bool = False) -> RecallJson:
        out: RecallJson = {
            "results": self.results,
            "abstained": self.abstained,
            "receipt": {
                "receipt_id": self.receipt["receipt_id"],
                "merkle_root": self.receipt["merkle_root"],
                "result_count": self.receipt["result_count"],
                "event_id": self.receipt["event_id"],
                "request_hash": self.receipt["request_hash"],
                "command_hash": self.receipt["command_hash"],
                "grant_mutation_hash": self.receipt["grant_mutation_hash"],
                "decision_sha256": self.receipt["decision_sha256"],
                "evidence": json_loads(self.receipt["evidence"]),
            },
            "withheld_count": len(self.withheld),
        }
        if show_withheld:
            out["withheld"] = self.withheld
        return out


def _validate(body: dict[str, Any]) -> None:
    unknown = set(body) - BODY_FIELDS
    if unknown:
        raise UsageError(f"unknown recall fields: {', '.join(sorted(unknown))}")
    query = body.get("query")
    if not isinstance(query, str) or not query.strip():
        raise UsageError("the query is empty", 'Give some words to search for: aimos recall "coffee order"')
    if len(query) > MAX_QUERY_CHARS:
        raise UsageError(f"the query is longer than {MAX_QUERY_CHARS} characters")
    # the query is kept in the receipt for good: a secret in it is refused (the transaction
    # this runs in is rolled back, so not even the request's nonce is recorded)
    refuse_secret_fields({"query": query}, outcome="nothing was recalled or recorded")
    limit = body.get("limit", DEFAULT_LIMIT)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise UsageError(f"limit must be an integer from 1 to {MAX_LIMIT}", "Use -k 1..200.")
    if not isinstance(body.get("history", False), bool):
        raise UsageError("history must be true or false")
    if not isinstance(body.get("guides", False), bool):
        raise UsageError(
            "guides must be true or false",
            'Send "guides": true to search aimos\'s own guides too, or leave the field out.',
        )


def _scope(body: dict[str, Any], grant: dict[str, Any]) -> Scope:
    """The grant bounds company, clearance and data class; request fields may only narrow them."""
    if not grant["allowed"]:
        raise GrantError("this agent's grant does not allow recall")
    company = body.get("company_id", grant["company_id"])
    if company != grant["company_id"]:
        raise GrantError(f"the grant does not cover company {company!r}")
    clearance = body.get("clearance_level", grant["clearance_ceiling"])
    if isinstance(clearance, bool) or not isinstance(clearance, int) or not 0 <= clearance <= CLEARANCE_MAX:
        raise UsageError(f"clearance_level must be an integer from 0 to {CLEARANCE_MAX}")
    data_class = body.get("data_class", grant["data_class_ceiling"])
    known = isinstance(data_class, str) and data_class in DATA_CLASSES
    excess = grant_excess(grant, clearance, data_class if known else grant["data_class_ceiling"])
    if excess == "clearance":
        raise GrantError(
            f"requested clearance {clearance} is above the grant's ceiling {grant['clearance_ceiling']}"
        )
    if not known:
        raise UsageError("unknown data class", f"Use one of: {', '.join(DATA_CLASSES)}.")
    if excess == "data_class":
        raise GrantError(
            f"requested data class {data_class} is above the grant's ceiling {grant['data_class_ceiling']}"
        )
    guides = bool(body.get("guides", False)) or asks_about_aimos(body["query"])
    return Scope(company, clearance, data_class, bool(body.get("history", False)), guides)


def _load(conn: Connection, ranked: list[tuple[int, float]]) -> list[tuple[Candidate, dict[str, Any]]]:
    if not ranked:
        return []
    by_rowid = memories_by_rowid(conn, [rowid for rowid, _ in ranked])
    out = []
    for rowid, relevance in ranked:
        m = by_rowid.get(rowid)
        if m is None:
            continue
        out.append(
            (
                Candidate(
                    memory_id=m["memory_id"],
                    value=m["value"],
                    key=m["key"],
                    weight_milli=m["retrieval_weight_milli"],
                    label=m["epistemic_label"],
                    quarantine=bool(m["quarantine"]),
                    relevance=relevance,
                    scope=m["scope"],
                    memory_type=m["memory_type"],
                    source=m["source"],
                ),
                m,
            )
        )
    return out


def _result(ordinal: int, s: Scored, m: dict[str, Any], redacted: str | None) -> RecallEntry:
    return {
        "rank": ordinal + 1,
        "memory_id": m["memory_id"],
        "key": m["key"],
        "value": m["value"],
        "memory_type": m["memory_type"],
        "score": round(s.effective, 6),
        "relevance": round(s.candidate.relevance, 6),
        "trust": s.trust.multiplier,
        "weight": m["retrieval_weight_milli"] / 1000,
        "label": m["epistemic_label"],
        "created_at": m["created_at"],
        "redacted": redacted,
    }


def recall_in_transaction(
    conn: Connection,
    housekeeper: Signer,
    request: SignedRequest,
    now: int,
    *,
    channels: list[Channel] | None = None,
    bypass_trust: bool = False,
    lure_rules: bool = True,
) -> RecallResult:
    import time

    t0 = time.perf_counter()
    verified = verify_request(conn, request, path=PATH_RECALL, now=now)
    check_counts(conn, DECIDING_CHAINS)  # labels and weights below rest on whole chains
    meaning = _meaning_of(channels)
    # the vectors made before the transaction, stored first: the detector reads them
    embedded = meaning.store(conn) if meaning is not None else []
    # what the saves before it queued is judged first, in this transaction: no recall decides
    # while a memory waits for the agreement detector (epistemic.detect); and what was judged by
    # its words alone before its vector existed is judged again, by meaning too
    judge_pending(conn, housekeeper, now, embedded=embedded)
    body = request.body
    _validate(body)
    scope = _scope(body, verified.grant)
    limit = body.get("limit", DEFAULT_LIMIT)
    terms = query_terms(body["query"])
    ranked = open_candidates(
        conn,
        terms,
        scope,
        channels or [LexicalChannel()],
        CANDIDATES,
        when=asks_when(body["query"]),
        words=len(body["query"].split()),
    )
    loaded = _load(conn, ranked)
    rules = lure_rules and not bypass_trust
    asked = (meaning.model, meaning.vector) if meaning is not None else None
    contested = contested_in_recall(conn, body["query"], [m for _, m in loaded], asked) if rules else None
    t1 = time.perf_counter()
    decision = decide(
        [c for c, _ in loaded],
        limit=limit,
        query_sha256=canonical_sha256_hex(body["query"]),
        query=body["query"],
        bypass_trust=bypass_trust,
        lure_rules=lure_rules,
        contested=contested,
    )
    rows_by_id = {m["memory_id"]: m for _, m in loaded}
    chosen = [rows_by_id[s.memory_id] for s in decision.selected]
    # every memory the decision discloses or withholds is checked against what binds its label,
    # weight, quarantine, clearance and company (the label chain, the weight chain, the signed save
    # and its event) before the housekeeper signs the decision: a value edited outside aimos fails
    # the recall closed, never becomes a signed reason
    withheld_rows = [rows_by_id[s.memory_id] for s in decision.withheld]
    checked = verify_many(conn, chosen + withheld_rows, allow_superseded=scope.include_history)
    disclosed = checked[: len(chosen)]
    evidence = [
        evidence_entry(i, s, d) for i, (s, d) in enumerate(zip(decision.selected, disclosed, strict=True))
    ]
    notices = redaction_notices(conn, [m["memory_id"] for m in chosen])
    results = [
        _result(i, s, m, notices.get(m["memory_id"]))
        for i, (s, m) in enumerate(zip(decision.selected, chosen, strict=True))
    ]
    t2 = time.perf_counter()
    withheld: list[WithheldEntry] = [
        {"memory_id": s.memory_id, "label": s.candidate.label, "reason": s.trust.reason, "untrusted": True}
        for s in decision.withheld
    ]
    command = {
        "company_id": scope.company_id,
        "query": body["query"],
        "limit": limit,
        "history": scope.include_history,
        "clearance_level": scope.clearance_ceiling,
        "data_class": scope.data_class_ceiling,
        "trust_bypassed": bypass_trust,
    }
    if scope.include_guides:  # absent otherwise: the command of a recall without guides is as before
        command["guides"] = True
    receipt = record_receipt(
        conn,
        housekeeper,
        company_id=scope.company_id,
        agent_id=verified.agent_id,
        agent_valid_from=verified.valid_from,
        request=request.to_json(),
        request_hash=verified.request_hash,
        command=command,
        grant_mutation_hash=verified.grant["mutation_hash"],
        evidence=evidence,
        decision=decision.body,
        decision_canonical=decision.canonical,
        decision_sha256=decision.sha256,
        now=now,
    )
    record_v2_receipt(
        conn,
        housekeeper,
        verified=verified,
        native_receipt=receipt,
        decision=decision,
        disclosed=disclosed,
        now=now,
    )
    t3 = time.perf_counter()
    return RecallResult(
        results,
        withheld,
        decision.abstained,
        receipt,
        {"retrieval_s": t1 - t0, "verification_s": t2 - t1, "receipt_s": t3 - t2},
    )


def _meaning_of(channels: list[Channel] | None) -> MeaningQuery | None:
    """The prepared question of the recall's meaning channel, if it has one."""
    for channel in channels or ():
        if isinstance(channel, MeaningChannel):
            from aimos.meaning.index import MeaningQuery  # (imported only when meaning is on)

            if isinstance(channel.query, MeaningQuery):
                return channel.query
    return None


def recall(
    conn: Connection,
    housekeeper: Signer,
    request: SignedRequest,
    now: int,
    *,
    channels: list[Channel] | None = None,
    bypass_trust: bool = False,
    lure_rules: bool = True,
    meaning: bool = True,
) -> RecallResult:
    """One signed recall in its own write transaction. A result that fails verification fails
    the whole recall closed: nothing is disclosed, and a signed failure event is recorded.

    Without ``channels``: the lexical channel, fused with the meaning channel when the embedding
    model is available here (and ``meaning``); before the transaction, the question is embedded
    and a few missing vectors are made (meaning/index.prepare)."""
    if channels is None and meaning:
        from aimos.meaning.model import turned_off

        meaning = not turned_off()  # (then neither the index nor the socket is imported)
    if channels is None and meaning:
        from aimos.meaning.index import prepare

        prepared = prepare(conn, request.body.get("query"))
        if prepared is not None:
            channels = [LexicalChannel(), MeaningChannel(prepared)]
    try:
        with write_transaction(conn, housekeeper):
            return recall_in_transaction(
                conn,
                housekeeper,
                request,
                now,
                channels=channels,
                bypass_trust=bypass_trust,
                lure_rules=lure_rules,
            )
    except DisclosureError as exc:
        with write_transaction(conn, housekeeper):
            append_event(
                conn,
                housekeeper,
                operation=RECALL_DISCLOSURE_FAILED_OPERATION,
                company_id=request.body.get("company_id") or _company(conn),
                metadata={
                    "memory_id": exc.memory_id,
                    "reason": exc.reason,
                    "request_hash": canonical_sha256_hex(request.body),
                },
                now=now,
                subject_memory_id=exc.memory_id,
            )
        raise


def _company(conn: Connection) -> str:
    from aimos.ledger.events import brain_company

    return brain_company(conn)


# What ``show`` returns: the memory's detail (memory.versions.memory_detail) with ``withheld`` set,
# always (why its text is withheld, its ``value`` then "", or None).
ShowResult: TypeAlias = "MemoryDetail"


def show(conn: Connection, request: SignedRequest, now: int) -> ShowResult:
    """One memory read by an agent through a signed request (POST /aimos/show), held to what a
    recall would disclose: the request is verified and recorded like any other (its nonce row),
    the memory must be within the agent's grant (company, clearance, data class), its signed
    record is re-verified before anything is shown (failing closed, as recall does), and the text
    of a memory recall would withhold as untrusted is withheld here too (``withheld`` says why)."""
    from aimos.memory.versions import memory_detail, resolve_memory_id
    from aimos.vocabulary import PATH_SHOW

    memory_id = str(request.body.get("memory_id", ""))
    with write_transaction(conn):
        verified = verify_request(conn, request, path=PATH_SHOW, now=now)
        grant = verified.grant
        check_counts(conn, DECIDING_CHAINS)
        judge_pending(conn, sealer(conn), now)  # as a recall does, before it reads
        mid = resolve_memory_id(conn, memory_id, company_id=grant["company_id"])
        detail = memory_detail(conn, mid)
        if not grant_covers(grant, detail["clearance_level"], detail["data_class"]):
            # the answer for an id that does not exist, word for word: an agent learns nothing of
            # a memory above its grant, not even that it exists
            raise MemoryNotFoundError(f"no memory with id {memory_id.strip().lower()}")
    memory = memory_row(conn, mid)
    if memory is None:  # gone since it was resolved (a purge in between)
        raise MemoryNotFoundError(f"no memory with id {mid}")
    verify_many(conn, [memory], allow_superseded=True)
    trust = trust_of(
        Candidate(
            memory_id=mid,
            value=detail["value"],
            key=detail["key"],
            weight_milli=detail["retrieval_weight_milli"],
            label=detail["epistemic_label"],
            quarantine=detail["quarantine"],
            relevance=1.0,
            scope=detail["scope"],
            memory_type=detail["memory_type"],
        )
    )
    detail["withheld"] = trust.reason if trust.untrusted else None
    if trust.untrusted:
        detail["value"] = ""
    return detail
