"""`aimos eval locomo`: turn-level retrieval on LoCoMo through the real signed paths.

Each conversation gets its own scratch brain under a temporary home. Every dialog turn is saved
through the signed save (value `[session date] Speaker: text [image: caption]`, type
`dialog_turn`, source = the session), every question is asked through the signed recall, and
the returned memories are mapped back to dialog ids. A plain FTS5 BM25 baseline (the memory's
own text only, no context, no policy) is computed on the same brains in the same run.
"""

from __future__ import annotations

import json
import re
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from aimos.errors import NotFoundError, UsageError
from aimos.eval.embeddings import eval_embedder
from aimos.eval.metrics import mean_scores, scores_for
from aimos.eval.scratch import install_scratch, open_scratch, scratch_home
from aimos.terminal import draw_progress
from aimos.vocabulary import DEFAULT_GRANT_CLEARANCE, DEFAULT_GRANT_DATA_CLASS, DEFAULT_SAVE_DATA_CLASS

DEFAULT_KS = (5, 10, 20, 25)
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


# where to get the data when the default file (beside a checkout) is absent, as in a pip install
LOCOMO_SOURCE = (
    "Download locomo10.json from https://github.com/snap-research/LoCoMo (data/locomo10.json; "
    "CC BY-NC 4.0) and give it with --data FILE."
)


def default_data_path() -> Path:
    return Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo" / "locomo-dev.json"


def load_conversations(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise NotFoundError(f"no LoCoMo file at {path}", LOCOMO_SOURCE) from None
    except (ValueError, UnicodeDecodeError):
        raise UsageError(f"{path} is not LoCoMo JSON", "Give locomo10.json or a split of it.") from None
    if not isinstance(data, list) or not all(isinstance(c, dict) and "conversation" in c for c in data):
        raise UsageError(f"{path} is not a list of LoCoMo conversations")
    return data


def turns_of(conversation: dict[str, Any]) -> list[dict[str, str]]:
    c = conversation["conversation"]
    sessions = sorted(
        (k for k in c if re.fullmatch(r"session_\d+", k) and isinstance(c[k], list)),
        key=lambda k: int(k.split("_")[1]),
    )
    turns = []
    for session in sessions:
        date = c.get(f"{session}_date_time", "")
        for t in c[session]:
            text = t["text"]
            if t.get("blip_caption"):
                text += f" [image: {t['blip_caption']}]"
            turns.append(
                {
                    "dia_id": t["dia_id"],
                    "value": f"[{date}] {t['speaker']}: {text}",
                    "source": f"locomo:{conversation.get('sample_id', '?')}:{session}",
                }
            )
    return turns


def run_locomo(
    path: Path | None = None,
    ks: Sequence[int] = DEFAULT_KS,
    progress: Callable[[int, int, str], None] = draw_progress,
    folds: bool = False,
) -> dict[str, Any]:
    """The report: the signed recall with meaning (``aimos``; by words alone when the model does
    not load here) and by words alone (``aimos_words``), beside BM25; with ``folds`` also the
    cross-conversation validation of the lexical channel's settings and of the fusion's (aimos.eval.folds)
    on the same brains."""
    from aimos.eval.folds import (
        BEFORE,
        FIRST_GUESS,
        FUSION_GRID,
        GRID,
        WORDS,
        default_fusion,
        default_setting,
    )

    ks = tuple(sorted(set(ks)))
    if not ks or ks[0] < 1 or ks[-1] > 200:
        raise UsageError("-k values must be between 1 and 200")
    conversations = load_conversations(path or default_data_path())
    embedder, why_not = eval_embedder()
    run = _Run(ks, progress, sum(len(c.get("qa", [])) for c in conversations), embedder)
    if folds:
        run.lexical = list(dict.fromkeys([*GRID, default_setting(), BEFORE]))
        if embedder is not None:
            run.fusions = list(dict.fromkeys([*FUSION_GRID, default_fusion(), WORDS, FIRST_GUESS]))
    started = time.perf_counter()
    try:
        for conv in conversations:
            run.conversation(conv)
    finally:
        if embedder is not None:
            embedder.close()
    report: dict[str, Any] = {
        "data": str(path or default_data_path()),
        "ks": list(ks),
        "counts": run.counts,
        "meaning": {
            "model": embedder.name if embedder is not None else None,
            "unavailable": why_not,
            "made_by_the_model": dict(embedder.made) if embedder is not None else {},
        },
    }
    for arm, by_cat in run.rows.items():
        everything = [r for cat_rows in by_cat.values() for r in cat_rows]
        report[arm] = {
            "overall": mean_scores(everything),
            "overall_without_adversarial": mean_scores([r for c, rs in by_cat.items() if c != 5 for r in rs]),
            "per_category": {
                f"{c} {CATEGORY_NAMES.get(c, '?')} (n={len(rs)})": mean_scores(rs)
                for c, rs in sorted(by_cat.items())
            },
        }
    if folds:
        report["folds"] = run.cross_validated()
    report["targets"] = TARGETS
    report["seconds"] = round(time.perf_counter() - started, 1)
    return report


ARMS = ("aimos", "aimos_words", "bm25")
# what issue 37 asked of the aimos arm over the whole dev set (any question, k = 25)
TARGETS = {"hit@1": 0.62, "mrr": 0.72, "any_hit@25": 0.95, "evidence_recall@25": 0.92}


class _Run:
    """One evaluation's state: each conversation's scratch brain is built, its vectors made, and
    its questions asked through every arm (and every setting the folds compare)."""

    def __init__(
        self, ks: tuple[int, ...], progress: Callable[[int, int, str], None], total: int, embedder: Any
    ):
        self.ks = ks
        self.progress = progress
        self.total = total
        self.embedder = embedder
        self.asked = 0
        self.rows: dict[str, dict[int, list[dict[str, float]]]] = {arm: defaultdict(list) for arm in ARMS}
        self.counts = {"conversations": 0, "turns": 0, "questions": 0, "skipped_no_evidence": 0}
        self.lexical: list[Any] = []  # the lexical channel's settings the folds compare
        self.fusions: list[Any] = []  # ... and the fusion's
        self.by_lexical: list[dict[Any, list[dict[str, float]]]] = []
        self.by_fusion: list[dict[Any, list[dict[str, float]]]] = []

    def cross_validated(self) -> dict[str, Any]:
        from aimos.eval.folds import FIRST_GUESS, FUSION_GRID, WORDS, cross_validate, default_fusion

        k = max(self.ks)
        fusion = (
            cross_validate(
                self.by_fusion, k, FUSION_GRID, default_fusion(), {"words": WORDS, "first_guess": FIRST_GUESS}
            )
            if self.fusions
            else None
        )
        return {"lexical": cross_validate(self.by_lexical, k), "fusion": fusion}

    def conversation(self, conv: dict[str, Any]) -> None:
        from aimos.actions.bodies import build_save_body
        from aimos.actions.memory import save_and_classify
        from aimos.identity.requests import sign_request
        from aimos.meaning.index import embed_pending
        from aimos.vocabulary import PATH_SAVE

        with scratch_home("aimos-eval-locomo-"):
            install_scratch("locomo")
            conn, agent, housekeeper = open_scratch()
            try:
                dia_of: dict[str, set[str]] = defaultdict(set)
                turns = turns_of(conv)
                for turn in turns:
                    body = build_save_body(
                        company_id="personal",
                        value=turn["value"],
                        source=turn["source"],
                        memory_type="dialog_turn",
                        clearance_level=5,
                        data_class=DEFAULT_SAVE_DATA_CLASS,
                    )
                    t = int(time.time())
                    saved = save_and_classify(conn, housekeeper, sign_request(agent, body, PATH_SAVE, t), t)
                    dia_of[saved.memory_id].add(turn["dia_id"])
                    self.counts["turns"] += 1
                if self.embedder is not None:  # every turn's vector before the questions
                    embed_pending(
                        conn, self.embedder, progress=lambda n: self.progress(n, len(turns), "vectors")
                    )
                    self.progress(len(turns), len(turns), "vectors")
                self.questions(conn, agent, housekeeper, conv.get("qa", []), dia_of)
            finally:
                conn.close()
        self.counts["conversations"] += 1

    def questions(
        self, conn: Any, agent: Any, housekeeper: Any, qas: list[dict[str, Any]], dia_of: dict[str, set[str]]
    ) -> None:
        from aimos.store.queries.eval import memory_ids_by_rowid

        memory_of = memory_ids_by_rowid(conn)
        known = {d for ids in dia_of.values() for d in ids}
        per_lexical: dict[Any, list[dict[str, float]]] = defaultdict(list)
        per_fusion: dict[Any, list[dict[str, float]]] = defaultdict(list)
        self.by_lexical.append(per_lexical)
        self.by_fusion.append(per_fusion)
        for qa in qas:
            self.asked += 1
            self.progress(self.asked, self.total, "locomo")
            relevant = set(qa.get("evidence", [])) & known
            if not relevant:
                self.counts["skipped_no_evidence"] += 1
                continue
            self.counts["questions"] += 1
            question, category = qa["question"], int(qa.get("category", 0))
            for arm, memory_ids in self.signed(conn, agent, housekeeper, question, memory_of).items():
                self.rows[arm][category].append(scores_for(_expand(memory_ids, dia_of), relevant, self.ks))
            for per, rankings in zip((per_lexical, per_fusion), self.channels(conn, question), strict=True):
                for setting, rowids in rankings.items():
                    found = _expand([memory_of[r] for r in rowids], dia_of)
                    per[setting].append(scores_for(found, relevant, self.ks))

    def signed(
        self, conn: Any, agent: Any, housekeeper: Any, question: str, memory_of: dict[int, str]
    ) -> dict[str, list[str]]:
        """Each arm's ranked memory ids: the signed recall with meaning and by words alone, and
        BM25 on the memories' own text (no context, no policy)."""
        from aimos.actions.bodies import build_recall_body
        from aimos.identity.requests import sign_request
        from aimos.recall.candidates import PreciseChannel, open_candidates
        from aimos.recall.pipeline import recall
        from aimos.recall.text import query_terms
        from aimos.vocabulary import PATH_RECALL

        got: dict[str, list[str]] = {}
        for arm, meaning in (("aimos_words", False), ("aimos", True)):
            t = int(time.time())
            req = sign_request(agent, build_recall_body(query=question, limit=max(self.ks)), PATH_RECALL, t)
            got[arm] = [r["memory_id"] for r in recall(conn, housekeeper, req, t, meaning=meaning).results]
        base = open_candidates(conn, query_terms(question), _scope(), [PreciseChannel()], max(self.ks))
        got["bm25"] = [memory_of[r] for r, _ in base]
        return got

    def channels(self, conn: Any, question: str) -> tuple[dict[Any, list[int]], dict[Any, list[int]]]:
        """The folds' rankings (rowids) of one question: by each lexical channel setting, and by
        each fusion setting (``fusion_rankings``)."""
        from aimos.recall.candidates import CANDIDATES, LexicalChannel
        from aimos.recall.text import asks_when, query_terms

        k = max(self.ks)
        terms, when = query_terms(question), asks_when(question)
        lexical: dict[Any, list[int]] = {}
        for setting in self.lexical:
            hits = LexicalChannel(**dict(setting)).search(conn, terms, _scope(), CANDIDATES, when=when)
            lexical[setting] = [r for r, _ in hits[:k]]
        fused = fusion_rankings(conn, self.embedder, question, self.fusions, k) if self.fusions else {}
        return lexical, fused


def fusion_rankings(
    conn: Any, embedder: Any, question: str, settings: Sequence[Any], k: int, *, words_found: bool = True
) -> dict[Any, list[int]]:
    """The best ``k`` rowids of one question under each fusion setting (aimos.eval.folds' form of
    recall.candidates.Fusion): the default lexical channel and the meaning channel searched once,
    and their results fused per setting by recall.candidates.combine, as a recall fuses them.
    Without ``words_found``, the lexical channel's results are left out (meaning alone)."""
    from aimos.meaning.index import MeaningQuery
    from aimos.recall.candidates import CANDIDATES, Fusion, LexicalChannel, MeaningChannel, combine
    from aimos.recall.text import asks_when, query_terms

    terms, when = query_terms(question), asks_when(question)
    words = LexicalChannel()
    found = words.search(conn, terms, _scope(), CANDIDATES, when=when) if words_found else []
    meaning = MeaningChannel(MeaningQuery(embedder.name, embedder.dims, embedder.query(question)))
    near = meaning.search(conn, terms, _scope(), CANDIDATES, when=when)
    out = {}
    for setting in settings:
        ranked = combine([found, near], [words, meaning], CANDIDATES, Fusion(**dict(setting)))
        out[setting] = [r for r, _ in ranked[:k]]
    return out


def _scope() -> Any:
    from aimos.recall.candidates import Scope

    return Scope("personal", DEFAULT_GRANT_CLEARANCE, DEFAULT_GRANT_DATA_CLASS)


def _expand(memory_ids: list[str], dia_of: dict[str, set[str]]) -> list[str]:
    """Memories to dialog ids, in rank order (a memory saved for two identical turns counts for both)."""
    out: list[str] = []
    for mid in memory_ids:
        out.extend(sorted(dia_of.get(mid, ())))
    return out
