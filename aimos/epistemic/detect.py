"""The agreement detector's writer (aimos-memory-epistemic-v2): for each saved memory, in save
order, find its neighbours (the memories its content words find, and the same agent epoch's saves
of the last burst) as the brain stood at its save, run the pure kernel (epistemic.agreement) and
record its verdict on every member of the cluster as a housekeeper-signed classification
transition (epistemic.chain.append_classification), retroactively, never deleting anything.

When: a save only queues its memory (migration 15); the queue is judged in a later write
transaction (judge_pending): inside every recall's and show's own transaction before it reads,
before a correction carries its predecessor's label, after the command that saved it (settle),
and on the housekeeper's schedule. A memory is judged as it would have been inside its save's
transaction: its neighbours, word counts and brain size are bounded to the memories saved up to
it (the index ranks those neighbours by its statistics when the detector runs).

Meaning: where the memories it compares have vectors by the pinned model (store.vectors, made after
the saves: by a recall before its transaction, the housekeeper, the CLI), the kernel groups
paraphrases of one question as one subject (agreement.SUBJECT_COSINE, QUERY_COSINE); a memory
without a vector yet is compared by its words, and with meaning turned off (AIMOS_MEANING=off) no
vector is read: the detector is words alone, as before.

What the writer never overrules: a person's judgment (basis explicit), a label a corrected
version inherited, and a label more adverse than the verdict (the detectors only add distrust,
except that independent support clears a detector's own adverse label)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from aimos.identity.devices import is_home
from aimos.identity.signer import Signer
from aimos.store.connection import Connection
from aimos.store.queries import epistemic_detection as queries
from aimos.store.queries.epistemic_detection import LabelHead, PassageRow
from aimos.store.vectors import of_memories
from aimos.vocabulary import (
    AGREEMENT_DETECTOR_VERSION,
    CLI_AGENT,
    POISON_LIKELY,
    POISON_SUSPECT,
    SYSTEM_SCOPE,
    TRUST_RANK,
    UNVERIFIED,
)

if TYPE_CHECKING:
    from aimos.epistemic.agreement import Features, Passage, Similarity, Verdict
    from aimos.epistemic.chain import Transition
    from aimos.epistemic.nli import PluggedJudge
    from aimos.meaning.vectors import Floats

# The detector's kernel (epistemic.agreement, with the classifier and its wording), the label
# chain it appends to (epistemic.chain) and the NLI judge (epistemic.nli) are imported by the
# functions that judge: a recall whose candidates no origin shares, which is most, never loads
# them (a cold `aimos recall` saves their import).

NEIGHBOURS = 40
# a conversation's turns (an import of one's own chats) are one voice talking, not sources that
# agree or dissent: the detector does not look at them (a cost of ~20-40 ms a turn saved, and a
# chat's names and dates are no answers); the query-lure rules and the reference kernel still do
UNCHECKED_TYPES = frozenset({"dialog_turn", "message"})
QUERY_WORDS = 16
# memories one neighbour scan may score: the words of a save are many (QUERY_WORDS), so each
# match costs more to score than a recall's (about 13 us); a brain of alike memories would
# otherwise make every save score all of them (store.search)
NEIGHBOUR_BUDGET = 300
CLEARABLE = frozenset({POISON_SUSPECT, POISON_LIKELY})


def _passage(row: Mapping[str, Any]) -> Passage:
    from aimos.epistemic.agreement import Passage

    return Passage(
        row["memory_id"],
        row["value"],
        row["source"],
        (row["author_agent_id"], row["author_valid_from"]),
        row["created_at"],
        _rowid(row),
    )


def _rowid(row: Mapping[str, Any]) -> int:
    """A memories row's rowid: the detector's queries name it rowid, a recall's candidates _rowid."""
    return int(row.get("rowid") or row.get("_rowid") or 0)


def _neighbours(
    conn: Connection, company_id: str, mine: Features, upto: int
) -> tuple[list[Features], list[Features]]:
    """The memories the new one's content words find, those the words it shares with the same
    agent epoch's saves of the last burst find (the subject those saves have in common: another
    origin's passage on it may share few words with this one), and those burst saves; and the
    burst saves alone. Only memories saved up to it (rowid ``upto``): the brain at its save."""
    from aimos.epistemic.agreement import BURST_SECONDS

    p = mine.passage
    found: dict[str, PassageRow] = {}
    burst = []
    for row in queries.burst_rows(conn, company_id, p.created_at - BURST_SECONDS, p.author, upto, NEIGHBOURS):
        found[row["memory_id"]] = row
        if row["memory_id"] != p.memory_id:
            burst.append(row["memory_id"])
    shared = {w for w in mine.content if any(w in _features(found[mid]).content for mid in burst)}
    for words in (mine.content, shared):
        for row in _search(conn, company_id, words, upto):
            found.setdefault(row["memory_id"], row)
    found.pop(p.memory_id, None)
    computed = {mid: _features(r) for mid, r in found.items()}
    return list(computed.values()), [computed[mid] for mid in burst]


def _search(conn: Connection, company_id: str, content: Iterable[str], upto: int) -> list[PassageRow]:
    """The NEIGHBOURS memories the longest of ``content``'s words find best (FTS5, any word),
    within the scan budget (store.search: the rarest of those words that fit it, in the newest
    part of the brain when even they match more; a brain of alike memories otherwise made every
    save score all of them), among the memories up to rowid ``upto``."""
    words = sorted(content, key=lambda w: (-len(w), w))[:QUERY_WORDS]
    if not words:
        return []
    return queries.word_neighbours(conn, company_id, words, NEIGHBOUR_BUDGET, upto, NEIGHBOURS)


# each memory's features, computed once per process (a memory's text never changes, except that
# a redaction empties it: the text is part of the key)
_FEATURES: dict[tuple[str, str], Features] = {}
FEATURES_KEPT = 20_000


def _features(row: Mapping[str, Any]) -> Features:
    key = (row["memory_id"], row["value"])
    found = _FEATURES.get(key)
    if found is None:
        from aimos.epistemic.agreement import features

        if len(_FEATURES) >= FEATURES_KEPT:
            _FEATURES.clear()
        found = _FEATURES[key] = features(_passage(row))
    return found


def _frequency(conn: Connection, limit: int, upto: int = 0) -> Callable[[str], int]:
    """How many memories hold a unit (a word or a span, as an FTS5 phrase), counted up to one
    past ``limit`` (rare or not is all the kernel asks) and remembered for the save; ``upto`` > 0:
    among the memories up to that rowid."""
    seen: dict[str, int] = {}

    def count(span: str) -> int:
        if span not in seen:
            seen[span] = queries.memories_holding(conn, span, limit + 1, upto)
        return seen[span]

    return count


def _vectors(conn: Connection, ids: dict[int, str]) -> dict[str, Floats]:
    """memory id -> its vector by the pinned model, for the memories (rowid -> memory id) that have
    one; nothing when meaning is turned off (the vectors a brain holds are then not read)."""
    from aimos.meaning.model import DIMS, MODEL_NAME, turned_off
    from aimos.meaning.vectors import unpack, well_formed

    if turned_off():
        return {}
    found = of_memories(conn, sorted(ids))
    # (an empty form: a memory with no text to embed; another model's: stale until remade)
    return {
        ids[rowid]: unpack(blob)
        for rowid, (model, blob, _) in found.items()
        if model == MODEL_NAME and well_formed(blob, DIMS)
    }


def _similarity(conn: Connection, passages: Sequence[Features]) -> Similarity | None:
    """The passages' cosines by their vectors (agreement.by_vectors), None when the first passage
    (the one judged) has no vector yet or fewer than two have one (words alone). A memory just
    saved has none: its save is judged by words, and again by meaning once a recall or the
    housekeeper made its vector (judge_pending's ``embedded``); the save never loads numpy."""
    from aimos.epistemic.agreement import by_vectors

    first = passages[0].passage.rowid if passages else 0
    if not first or not any(blob for _, blob, _ in of_memories(conn, [first]).values()):
        return None
    found = _vectors(conn, {f.passage.rowid: f.passage.memory_id for f in passages if f.passage.rowid})
    return by_vectors(found) if len(found) >= 2 else None


def _heads(conn: Connection, ids: list[str]) -> dict[str, LabelHead]:
    """Each memory's newest classification as its signed event says: its label and basis, and
    whether the memory carries a judgment of the version it corrects (any row of its chain: the
    store refuses a label more trusting than the carried one, so it is never cleared)."""
    if not ids:
        return {}
    out: dict[str, LabelHead] = {}
    for row in queries.label_heads(conn, ids):
        carried = out[row["memory_id"]]["inherited"] if row["memory_id"] in out else None
        if carried is not None:
            row = {**row, "inherited": carried}
        out[row["memory_id"]] = row  # the last row per memory is its newest (carrying: any row)
    return out


def _applies(verdict: Verdict, current: str, head: LabelHead | None) -> bool:
    if head is not None and (head["basis"] == "explicit" or head["inherited"] is not None):
        return False
    if verdict.label == UNVERIFIED:
        return current in CLEARABLE
    return TRUST_RANK.get(verdict.label, 0) < TRUST_RANK.get(current, 0)


def pending(conn: Connection) -> int:
    """How many saved memories the detector has yet to judge (migration 15's queue past its last
    run): two index lookups."""
    return queries.detection_backlog(conn)


def judge_pending(
    conn: Connection,
    housekeeper: Signer,
    now: int,
    *,
    times: list[float] | None = None,
    embedded: Sequence[int] = (),
) -> list[Transition]:
    """Judge every queued memory the detector has not judged, in save order, each as at its save
    (judge_saved), and record the run; the caller holds the write transaction (a recall's or a
    show's own, before it reads anything: no recall decides while a save waits to be judged).
    ``embedded``: the rowids of memories whose vectors the caller has just stored: those judged
    before (by their words alone: a CLI save is judged before its vector exists) are judged again
    as at their save, now by meaning too. ``times``: each memory's judgment in seconds is appended
    (eval perf)."""
    if not is_home(conn):  # the home alone appends to label chains; it judges these on arrival
        return []
    queued = queries.queued_unjudged(conn)
    done: list[Transition] = []
    judge = None
    if queued:
        from aimos.epistemic.nli import active_judge

        judge = active_judge()  # the NLI judge a person enabled, or None
    for entry in queued:
        started = time.perf_counter()
        done += judge_saved(conn, housekeeper, str(entry["memory_id"]), now, judge)
        if times is not None:
            times.append(time.perf_counter() - started)
    if queued:
        queries.insert_detection_run(conn, int(queued[-1]["seq"]), now)
    judged = {str(entry["memory_id"]) for entry in queued}
    for memory_id in _judged_before(conn, embedded):
        if memory_id not in judged:
            done += judge_saved(conn, housekeeper, memory_id, now)
    return done


def _judged_before(conn: Connection, embedded: Sequence[int]) -> list[str]:
    """The memories among ``embedded`` (rowids) saved up to the last one the detector has judged
    (the queue is in save order, as rowids are), oldest first."""
    if not embedded:
        return []
    through = queries.last_judged_rowid(conn)
    wanted = sorted(r for r in embedded if r <= through)
    if not wanted:
        return []
    return queries.memory_ids_at(conn, wanted)


def settle(conn: Connection, housekeeper: Signer, now: int) -> int:
    """Judge what the detector has yet to, in a write transaction of its own when there is any
    (after a save has answered; on the housekeeper's schedule); how many memories it judged."""
    from aimos.store.connection import write_transaction

    if not pending(conn) or not is_home(conn):
        return 0
    with write_transaction(conn, housekeeper):
        waiting = pending(conn)
        judge_pending(conn, housekeeper, now)
    return waiting


def judge_saved(
    conn: Connection, housekeeper: Signer, memory_id: str, now: int, judge: PluggedJudge | None = None
) -> list[Transition]:
    """Run the agreement detector on a saved memory as it stood at its save: its neighbours, the
    counts of its words and the brain's size among the memories saved up to it (its rowid); a
    conversation turn is not looked at (UNCHECKED_TYPES). ``judge``: the NLI judge a person
    enabled (epistemic.nli), which decides the relations it is sure of."""
    from aimos.epistemic.agreement import analyse, other_origins, rare_limit

    found = queries.saved_row(conn, memory_id)
    if found is None:
        return []
    if found["memory_type"] in UNCHECKED_TYPES or found["scope"] == SYSTEM_SCOPE:
        return []
    mine = _features(found)
    if len(mine.content) < 3:
        return []
    company = found["company_id"]
    # the brain's size at its save, near enough (rowids are never reused: nothing is deleted)
    size = upto = int(found["upto"])
    neighbours, recent = _neighbours(conn, company, mine, upto)
    limit = rare_limit(len(neighbours), size)
    frequency = _frequency(conn, limit, upto)
    done = []
    similar = _similarity(conn, [mine, *neighbours])
    verdict = _pinned(analyse(mine, neighbours, frequency, size, recent, judge, similar), judge)
    if verdict is not None:
        done += _record(conn, housekeeper, verdict, memory_id, now, cause="cluster_grew_with")
    # the clusters of other origins on the subject, judged again with the new memory among their
    # neighbours: truth saved after the poison contradicts it now (only a contradiction is
    # recorded: a new memory clears its own cluster, never another's)
    for other in other_origins(mine, neighbours, frequency, size, similar=similar):
        # its own neighbours too: what supports it may share few words with the new memory
        around = {f.passage.memory_id: f for f in neighbours}
        for row in _search(conn, company, other.content, upto):
            around.setdefault(row["memory_id"], _features(row))
        around[memory_id] = mine
        around.pop(other.passage.memory_id, None)
        peers = list(around.values())
        similar_peers = _similarity(conn, [other, *peers]) if similar is not None else None
        again = _pinned(analyse(other, peers, frequency, size, judge=judge, similar=similar_peers), judge)
        if again is not None and again.label == POISON_LIKELY:  # a contradiction, nothing less
            done += _record(conn, housekeeper, again, memory_id, now, cause="contradicted_by")
    return done


def _pinned(verdict: Verdict | None, judge: PluggedJudge | None) -> Verdict | None:
    """A verdict reached with an NLI judge names its model (the pinned SHA-256's first 16 digits)."""
    if verdict is None or judge is None:
        return verdict
    return replace(verdict, signals={**verdict.signals, "nli_model": judge.digest[:16]})


def _record(
    conn: Connection,
    housekeeper: Signer,
    verdict: Verdict,
    saved: str,
    now: int,
    *,
    cause: str,
) -> list[Transition]:
    """``verdict`` on each member it changes, as a housekeeper-signed classification transition;
    ``saved``: the memory just saved (a member other than it is judged retroactively, its signals
    naming ``saved`` under ``cause``)."""
    from aimos.epistemic.chain import append_classification

    heads = _heads(conn, list(verdict.members))
    done = []
    for member in verdict.members:
        current = str(heads[member]["label"]) if member in heads else UNVERIFIED
        if not _applies(verdict, current, heads.get(member)):
            continue
        signals = dict(verdict.signals)
        if member != saved:
            signals.update({"retroactive": True, cause: saved})
        done.append(
            append_classification(
                conn,
                housekeeper,
                member,
                label=verdict.label,
                confidence_milli=verdict.confidence_milli,
                basis="classifier",
                now=now,
                signals=signals,
                reason=_reason(verdict, member == saved, cause),
                detector_version=AGREEMENT_DETECTOR_VERSION,
            )
        )
    return done


def _reason(verdict: Verdict, at_save: bool, cause: str) -> str:
    if verdict.label == UNVERIFIED:
        return "cleared: another origin states the same answer"
    said = (
        "agreement cluster contradicted by another origin"
        if verdict.signals["dissenting"]
        else ("one origin repeats the same question")
    )
    if at_save:
        return said
    why = "cluster grew" if cause == "cluster_grew_with" else "a new memory contradicts it"
    return f"{said} ({why})"


def contested_in_recall(
    conn: Connection,
    query: str,
    candidates: Sequence[dict[str, Any]],
    asked: tuple[str, Floats] | None = None,
) -> dict[str, str]:
    """The recall-time agreement check (agreement.contested_at_recall) over a recall's candidate
    rows (memories rows, in retrieval order): memory id -> why, for the members of an origin the
    check contests. Only the candidates that may be on the query's subject are read (a cheap test
    of their text first), and only when an origin can be among them (3 or more, not the person's
    own agent and not conversation turns, with one declared source or saved by one agent epoch
    within a burst): most recalls read no text here. ``asked``: the query's vector and the model
    that made it (the recall's meaning channel), None for words alone: a candidate near the query
    in meaning is on its subject whatever its words."""
    eligible = [
        r
        for r in candidates
        if r["memory_type"] not in UNCHECKED_TYPES
        and r["author_agent_id"] != CLI_AGENT
        and r["scope"] != SYSTEM_SCOPE  # aimos's own guides: no agent's claims, as at save
    ]
    if not _may_share_origin(eligible):
        return {}  # (the person's own brain, or a conversation import: no text is read)
    from aimos.epistemic.agreement import (
        QUERY_COSINE,
        contested_at_recall,
        may_hold_subject,
        rare_limit,
        subject_of,
    )
    from aimos.epistemic.nli import active_judge

    subject = subject_of(query)
    cosines = _query_cosines(conn, candidates, asked)
    near = [
        r
        for r in candidates
        if (subject and may_hold_subject(subject, r["value"]))
        or cosines.get(r["memory_id"], 0.0) >= QUERY_COSINE
    ]
    close = {r["memory_id"] for r in near}
    judged = [r for r in eligible if r["memory_id"] in close]
    if not _may_share_origin(judged):
        return {}
    size = queries.newest_rowid(conn)
    found = [_features(r) for r in near]
    frequency = _frequency(conn, rare_limit(len(candidates), size))
    return contested_at_recall(
        query,
        found,
        frequency,
        size,
        {r["memory_id"] for r in judged},
        seen=len(candidates),
        judge=active_judge(),
        near_query=(lambda f: cosines.get(f.passage.memory_id)) if cosines else None,
    )


def _query_cosines(
    conn: Connection, candidates: Sequence[dict[str, Any]], asked: tuple[str, Floats] | None
) -> dict[str, float]:
    """memory id -> the candidate's cosine with the query, for those with a vector by the model
    that embedded the query (the pinned one); nothing without a query vector."""
    from aimos.meaning.model import MODEL_NAME
    from aimos.meaning.vectors import cosine

    if asked is None or asked[0] != MODEL_NAME:
        return {}
    vectors = _vectors(conn, {_rowid(r): r["memory_id"] for r in candidates if _rowid(r)})
    return {mid: cosine(v, asked[1]) for mid, v in vectors.items()}


def _may_share_origin(candidates: Sequence[dict[str, Any]], least: int = 3) -> bool:
    """Whether ``least`` of ``candidates`` have one declared source, or one agent epoch within a
    burst (the origins a near-duplicate alone makes are left to the save-time detector)."""
    if len(candidates) < least:
        return False
    by_source: dict[str, int] = {}
    by_author: dict[tuple[str, int], list[int]] = {}
    for r in candidates:
        by_source[r["source"]] = by_source.get(r["source"], 0) + 1
        by_author.setdefault((r["author_agent_id"], r["author_valid_from"]), []).append(r["created_at"])
    if max(by_source.values()) >= least:
        return True
    from aimos.epistemic.agreement import BURST_SECONDS

    for times in by_author.values():
        times.sort()
        if any(times[i + least - 1] - times[i] <= BURST_SECONDS for i in range(len(times) - least + 1)):
            return True
    return False
