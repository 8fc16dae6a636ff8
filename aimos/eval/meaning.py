"""`aimos eval meaning`: personal memories asked for in other words, and questions nothing answers.

The probe (aimos/eval/data/meaning-probe.json, or a file of the same form) holds first-person
memories and questions. An answerable question shares no content word with its answer, and other
memories (distractors) share its words without answering it; a question with no answer shares no
content word with any memory, so a recall by words returns nothing for it, and a recall by meaning
must return nothing too rather than the nearest memory. Every memory is saved through the signed
save into one scratch brain, every vector made, and every question asked through the signed recall
by words alone and with meaning in the same run. Reported: hit@1, hit@3 and MRR over the answerable
questions, how many of them returned nothing (false abstention), and how many of the others
returned nothing (abstention); the same figures for each fusion setting the LoCoMo folds compare
(recall.candidates.combine over the channels' results, no recall policy), and for recall's fusion
with the words' results left out (``meaning_alone``: what the abstention threshold lets through when
no memory shares a word with the question, as if the distractors were not there).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from aimos.errors import NotFoundError, UsageError
from aimos.terminal import draw_progress

PROBE_FILE = "meaning-probe.json"
LIMIT = 10  # results asked of each recall (MRR counts within them)


@dataclass(frozen=True)
class Case:
    question: str
    answers: frozenset[str]  # memory ids; empty: nothing in the brain answers


@dataclass(frozen=True)
class Probe:
    memories: dict[str, str]  # id -> text, in file order
    cases: list[Case]


def default_probe_text() -> str:
    return resources.files("aimos.eval").joinpath("data", PROBE_FILE).read_text("utf-8")


def load_probe(path: Path | None = None) -> Probe:
    """The probe shipped with aimos, or the file at ``path``: {"memories": [{"id", "text"}],
    "questions": [{"q", "answers": [memory ids]}]}. A malformed file is refused whole."""
    label = str(path) if path else PROBE_FILE
    try:
        data = json.loads(path.read_text("utf-8") if path else default_probe_text())
    except FileNotFoundError:
        raise NotFoundError(f"no probe file at {path}", "Give a probe file with --data FILE.") from None
    except (OSError, ValueError, UnicodeDecodeError):
        raise UsageError(f"{label} is not a JSON probe file", _FORM) from None
    memories, cases = _parsed(data, label)
    return Probe(memories, cases)


_FORM = (
    'A probe is {"memories": [{"id": ..., "text": ...}], "questions": [{"q": ..., "answers": [ids]}]}, '
    "with unique memory ids, non-empty texts and answers among the memories."
)


def _parsed(data: object, label: str) -> tuple[dict[str, str], list[Case]]:
    if not isinstance(data, dict):
        raise UsageError(f"{label} is not a probe", _FORM)
    raw_memories, raw_questions = data.get("memories"), data.get("questions")
    if not isinstance(raw_memories, list) or not isinstance(raw_questions, list) or not raw_questions:
        raise UsageError(f"{label} has no memories or no questions", _FORM)
    memories: dict[str, str] = {}
    for m in raw_memories:
        ok = isinstance(m, dict) and isinstance(m.get("id"), str) and isinstance(m.get("text"), str)
        if not ok or not m["text"].strip() or m["id"] in memories:
            raise UsageError(f"{label}: a memory without an id and a text, or with an id used twice", _FORM)
        memories[m["id"]] = m["text"]
    cases = []
    for q in raw_questions:
        answers = q.get("answers") if isinstance(q, dict) else None
        if (
            not isinstance(q, dict)
            or not isinstance(q.get("q"), str)
            or not q["q"].strip()
            or not isinstance(answers, list)
            or not all(isinstance(a, str) and a in memories for a in answers)
        ):
            raise UsageError(
                f"{label}: a question without text, or whose answers are not its memories", _FORM
            )
        cases.append(Case(q["q"], frozenset(answers)))
    return memories, cases


def figures(ranks: Sequence[int | bool | None], cases: Sequence[Case]) -> dict[str, Any]:
    """The probe's figures from each case's outcome: for an answerable case the rank of its first
    answer (None: not among the results) or False when the recall returned nothing; for an
    unanswerable case True when it returned nothing, else False. Pure."""
    answerable = [r for r, c in zip(ranks, cases, strict=True) if c.answers]
    others = [r for r, c in zip(ranks, cases, strict=True) if not c.answers]
    found = [r for r in answerable if isinstance(r, int) and not isinstance(r, bool)]
    n = len(answerable)
    return {
        "answerable": n,
        "unanswerable": len(others),
        "hit@1": round(sum(1 for r in found if r == 1) / n, 4) if n else 0.0,
        "hit@3": round(sum(1 for r in found if r <= 3) / n, 4) if n else 0.0,
        "mrr": round(sum(1.0 / r for r in found) / n, 4) if n else 0.0,
        "false_abstention": round(sum(1 for r in answerable if r is False) / n, 4) if n else 0.0,
        "abstention": round(sum(1 for r in others if r is True) / len(others), 4) if others else 0.0,
    }


def outcome(ranked: Sequence[str], case: Case) -> int | bool | None:
    """One case's outcome from the ids a recall returned, best first (see ``figures``). Pure."""
    if not case.answers:
        return not ranked
    if not ranked:
        return False
    return next((i for i, m in enumerate(ranked, start=1) if m in case.answers), None)


def run_meaning(
    path: Path | None = None, progress: Callable[[int, int, str], None] = draw_progress
) -> dict[str, Any]:
    from aimos.eval.embeddings import eval_embedder
    from aimos.eval.folds import FIRST_GUESS, FUSION_GRID, WORDS, default_fusion

    probe = load_probe(path)
    embedder, why_not = eval_embedder()
    started = time.perf_counter()
    settings = list(dict.fromkeys([default_fusion(), WORDS, FIRST_GUESS, *FUSION_GRID])) if embedder else []
    outcomes: dict[str, list[int | bool | None]] = {"aimos_words": [], "aimos": []}
    if embedder is not None:
        outcomes["meaning_alone"] = []  # recall's fusion with the words' results left out
    by_setting: dict[Any, list[int | bool | None]] = {s: [] for s in settings}
    try:
        _ask_all(probe, embedder, progress, outcomes, by_setting)
    finally:
        if embedder is not None:
            embedder.close()
    return {
        "data": str(path) if path else f"aimos/eval/data/{PROBE_FILE}",
        "memories": len(probe.memories),
        "meaning": {
            "model": embedder.name if embedder else None,
            "unavailable": why_not,
            "made_by_the_model": dict(embedder.made) if embedder else {},
        },
        "arms": {arm: figures(o, probe.cases) for arm, o in outcomes.items()},
        "misses": {
            arm: [c.question for c, o in zip(probe.cases, got, strict=True) if o is not True and o != 1]
            for arm, got in outcomes.items()
        },
        "default": dict(default_fusion()),
        "settings": [{"setting": dict(s), **figures(o, probe.cases)} for s, o in by_setting.items()],
        "seconds": round(time.perf_counter() - started, 1),
    }


def _ask_all(
    probe: Probe,
    embedder: Any,
    progress: Callable[[int, int, str], None],
    outcomes: dict[str, list[int | bool | None]],
    by_setting: dict[Any, list[int | bool | None]],
) -> None:
    from aimos.actions.bodies import build_recall_body, build_save_body
    from aimos.actions.memory import save_and_classify
    from aimos.eval.locomo import fusion_rankings
    from aimos.eval.scratch import install_scratch, open_scratch, scratch_home
    from aimos.identity.requests import sign_request
    from aimos.meaning.index import embed_pending
    from aimos.recall.pipeline import recall
    from aimos.store.queries.eval import memory_ids_by_rowid
    from aimos.vocabulary import PATH_RECALL, PATH_SAVE

    with scratch_home("aimos-eval-meaning-"):
        install_scratch("meaning")
        conn, agent, housekeeper = open_scratch()
        try:
            id_of: dict[str, str] = {}
            for key, text in probe.memories.items():
                t = int(time.time())
                body = build_save_body(company_id="personal", value=text)
                saved = save_and_classify(conn, housekeeper, sign_request(agent, body, PATH_SAVE, t), t)
                id_of[saved.memory_id] = key
            if embedder is not None:
                total = len(probe.memories)
                embed_pending(conn, embedder, progress=lambda n: progress(n, total, "vectors"))
                progress(total, total, "vectors")
            key_of = {r: id_of.get(m, "") for r, m in memory_ids_by_rowid(conn).items()}
            for i, case in enumerate(probe.cases, start=1):
                progress(i, len(probe.cases), "meaning")
                for arm, meaning in (("aimos_words", False), ("aimos", True)):
                    t = int(time.time())
                    req = sign_request(
                        agent, build_recall_body(query=case.question, limit=LIMIT), PATH_RECALL, t
                    )
                    got = recall(conn, housekeeper, req, t, meaning=meaning).results
                    outcomes[arm].append(outcome([id_of.get(r["memory_id"], "") for r in got], case))
                if by_setting:
                    for setting, rowids in fusion_rankings(
                        conn, embedder, case.question, list(by_setting), LIMIT
                    ).items():
                        by_setting[setting].append(outcome([key_of[r] for r in rowids], case))
                    default = next(iter(by_setting))
                    alone = fusion_rankings(
                        conn, embedder, case.question, [default], LIMIT, words_found=False
                    )
                    outcomes["meaning_alone"].append(outcome([key_of[r] for r in alone[default]], case))
        finally:
            conn.close()
