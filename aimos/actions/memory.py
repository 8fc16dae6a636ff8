"""Save, correct and show a memory: signed requests as the CLI, the TUI and MCP run them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from aimos.actions.bodies import build_save_body
from aimos.actions.session import Brain, now
from aimos.epistemic.classifier import leading_question
from aimos.epistemic.detect import judge_pending, pending, settle
from aimos.identity.epochs import latest_epoch
from aimos.identity.requests import SignedRequest, sign_request
from aimos.identity.signer import Signer
from aimos.identity.trusted import verified_grant
from aimos.identity.validators import data_class_rank
from aimos.memory.save import SaveResult, save_in_transaction
from aimos.store.connection import Connection, write_transaction
from aimos.vocabulary import CLI_AGENT, DEFAULT_SAVE_CLEARANCE, DEFAULT_SAVE_DATA_CLASS, PATH_SAVE, PATH_SHOW

if TYPE_CHECKING:
    from aimos.recall.pipeline import ShowResult

# what a corrected version keeps of the memory it supersedes: everything but the text and the
# source (a correction's source is its signer's, as its author is)
KEPT_BY_CORRECTION = ("company_id", "key", "scope", "memory_type", "clearance_level", "data_class")


def own_source(agent_id: str) -> str:
    """The source a save through the aimos command declares when none is given: ``cli`` for the
    person's own agent, ``cli:<agent>`` for another one (as MCP saves declare ``mcp:<agent>``), so
    one agent's saves never pass for another's."""
    return CLI_AGENT if agent_id == CLI_AGENT else f"{CLI_AGENT}:{agent_id}"


@dataclass(frozen=True)
class NewMemory:
    """What a save asks for. A clearance or data class left as None is the default for a save
    (clearance 5, internal), lowered to the saving agent's grant ceilings when those are lower,
    so an agent with a narrow grant can save without naming them; a value given is kept as
    given (the grant check refuses it if it exceeds the grant)."""

    value: str
    key: str | None = None
    memory_type: str = "note"
    scope: str = "personal"
    clearance: int | None = None
    data_class: str | None = None
    source: str | None = None  # None: the signing agent's own (own_source)


def default_ceilings(
    brain: Brain, agent: str, clearance: int | None, data_class: str | None
) -> tuple[int, str]:
    grant = None
    if clearance is None or data_class is None:
        grant = verified_grant(brain.conn, agent, latest_epoch(brain.conn, agent)["valid_from"])
    if clearance is None:
        clearance = DEFAULT_SAVE_CLEARANCE
        if grant:
            clearance = min(clearance, grant["clearance_ceiling"])
    if data_class is None:
        ceiling = grant["data_class_ceiling"] if grant else DEFAULT_SAVE_DATA_CLASS
        lower = data_class_rank(ceiling) < data_class_rank(DEFAULT_SAVE_DATA_CLASS)
        data_class = ceiling if lower else DEFAULT_SAVE_DATA_CLASS
    return clearance, data_class


def save_and_classify(conn: Connection, housekeeper: Signer, req: SignedRequest, now: int) -> SaveResult:
    """A signed save: the memory writer, then the classifier, in one write transaction (all or
    nothing). The one composition every save takes (CLI, TUI, MCP, the installer's guides, eval).
    A correction of a memory less trusted than unverified carries its label (inherit_judgment,
    before the supersession link); the classifier may then lower it, never raise it. The
    agreement detector judges the memory later (epistemic.detect: a recall judges what waits
    before it reads; ``settle`` after the save has answered)."""
    with write_transaction(conn, housekeeper):
        return _classified_save(conn, housekeeper, req, now)


def save_forwarded(
    conn: Connection, housekeeper: Signer, req: SignedRequest, now: int, received: int
) -> SaveResult:
    """On the home: a save another device kept for it (content that device found already saved),
    checked against the time that device received it; the caller holds the write transaction."""
    return _classified_save(conn, housekeeper, req, now, received=received)


def _classified_save(
    conn: Connection, housekeeper: Signer, req: SignedRequest, now: int, *, received: int | None = None
) -> SaveResult:
    """The save and the classifier, the memory queued for the detector; the caller holds the
    write transaction. A correction first has the detector judge what waits: the label it carries
    is its predecessor's as the detector has judged it."""
    if req.body.get("supersedes"):
        judge_pending(conn, housekeeper, now)
    # only a correction carries a judgment: a plain save does not load the label chain's module
    carry = None
    if req.body.get("supersedes") is not None:
        from aimos.epistemic.chain import inherit_judgment

        carry = partial(inherit_judgment, conn, housekeeper, now=now)
    result = save_in_transaction(conn, housekeeper, req, now, carry_judgment=carry, received=received)
    # most memories do not open with a question: skip the classifier's reads for them
    if result.status in ("saved", "quarantined") and leading_question(str(req.body.get("value", ""))):
        from aimos.epistemic.chain import classify_at_save

        classify_at_save(conn, housekeeper, result.memory_id, now)
    return result


def settle_detections(brain: Brain) -> int:
    """The agreement detector on what the brain's saves queued, after they have answered (its own
    write transaction when anything waits); how many memories it judged."""
    if not pending(brain.conn):
        return 0  # (the housekeeper's key is not loaded for nothing)
    return settle(brain.conn, brain.housekeeper(), now())


def settle_after_save(brain: Brain) -> int:
    """After a save answered (an MCP server, which keeps the model): the agreement detector on what
    it queued, then the vectors still missing (the new memory's, a few older ones first when a
    backlog waits), so the next recall finds the memory by meaning without making it. Returns how
    many vectors were made (none without the model: its words still find it)."""
    from aimos.meaning.index import RECALL_BACKLOG, embed_pending
    from aimos.meaning.model import load_or_none

    settle_detections(brain)
    embedder = load_or_none()
    return embed_pending(brain.conn, embedder, limit=RECALL_BACKLOG) if embedder is not None else 0


def save_all(
    brain: Brain,
    signer: Signer,
    bodies: Sequence[dict[str, Any]],
    each: Callable[[int], None] | None = None,
) -> list[SaveResult]:
    """Sign and save every body as ``signer``, each as save_and_classify would, then have the
    agreement detector judge them, all in one write transaction: every one is saved or none is (an
    import saves a file this way); ``each(done)`` is told after each save."""
    housekeeper = brain.housekeeper()
    results = []
    with write_transaction(brain.conn, housekeeper):
        for done, body in enumerate(bodies, 1):
            at = now()
            request = sign_request(signer, body, PATH_SAVE, at)
            results.append(_classified_save(brain.conn, housekeeper, request, at))
            if each is not None:
                each(done)
        judge_pending(brain.conn, housekeeper, now())
    return results


def _signed_save(brain: Brain, signer: Signer, body: dict[str, Any], *, settled: bool = True) -> SaveResult:
    """The signed save and the agreement detector on what it queued, in one write transaction
    (a command that answers when it ends: one commit); with ``settled`` off the save alone, its
    caller settling later (an MCP server, after it has answered)."""
    housekeeper = brain.housekeeper()
    request = sign_request(signer, body, PATH_SAVE, now())
    if not settled:
        return save_and_classify(brain.conn, housekeeper, request, now())
    with write_transaction(brain.conn, housekeeper):
        saved = _classified_save(brain.conn, housekeeper, request, now())
        judge_pending(brain.conn, housekeeper, now())
    return saved


def save(brain: Brain, agent: str, memory: NewMemory, *, settled: bool = True) -> SaveResult:
    """Sign ``memory`` as ``agent`` (POST /aimos/save), save it and classify it; ``settled`` off
    leaves the agreement detector's queue to the caller's settle_detections (a recall or a show
    judges what waits in its own transaction either way)."""
    signer = brain.signer(agent)  # an unknown or reserved agent fails before any grant read
    clearance, data_class = default_ceilings(brain, signer.agent_id, memory.clearance, memory.data_class)
    given = {name: getattr(memory, name) for name in ("value", "key", "scope", "memory_type")}
    given["source"] = memory.source or own_source(signer.agent_id)
    company = brain.company_id
    body = build_save_body(company_id=company, clearance_level=clearance, data_class=data_class, **given)
    return _signed_save(brain, signer, body, settled=settled)


def correct(brain: Brain, agent: str, memory_ref: str, value: str, source: str | None = None) -> SaveResult:
    """A corrected version that supersedes ``memory_ref``, with its key, type, scope and ceilings;
    its source is the one given, else the signer's own."""
    from aimos.memory.versions import get_memory

    signer = brain.signer(agent)
    old = get_memory(brain.conn, memory_ref, agent_id=signer.agent_id)  # above its grant: not found
    kept = {name: old[name] for name in KEPT_BY_CORRECTION}
    source = source or own_source(signer.agent_id)
    body = build_save_body(value=value, supersedes=old["memory_id"], source=source, **kept)
    return _signed_save(brain, signer, body)


def carried_label(brain: Brain, memory_id: str) -> str | None:
    """The label a corrected version carries from the version it corrects (poison or disputed),
    unless a judgment the master signed lifted it; None when it carries none."""
    from aimos.epistemic.chain import owed_label

    return owed_label(brain.conn, memory_id)


def show(brain: Brain, agent: str, memory_id: str) -> ShowResult:
    """One memory read by ``agent`` through a signed request (POST /aimos/show), held to what a
    recall would disclose (see recall.pipeline.show)."""
    from aimos.recall import pipeline  # here: a save need not load the recall pipeline

    signer = brain.signer(agent)
    request = sign_request(signer, {"memory_id": memory_id}, PATH_SHOW, now())
    return pipeline.show(brain.conn, request, now())
