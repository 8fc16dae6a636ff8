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
from aimos.eval.metrics import mean_scores, scores_for
from aimos.eval.scratch import install_scratch, scratch_home
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


def run_locomo(  # noqa: PLR0915 (an evaluation: build, run and report in one readable sequence)
    path: Path | None = None,
    ks: Sequence[int] = DEFAULT_KS,
    progress: Callable[[int, int, str], None] = draw_progress,
    folds: bool = False,
) -> dict[str, Any]:
    """The report; with ``folds`` also the cross-conversation validation of the lexical channel's
    settings (aimos.eval.folds) on the same brains."""
    from aimos.actions.bodies import build_recall_body, build_save_body
    from aimos.actions.memory import save_and_classify
    from aimos.eval.folds import BEFORE, GRID, cross_validate, default_setting
    from aimos.identity.epochs import load_signer
    from aimos.identity.keystore import open_keystore
    from aimos.identity.requests import sign_request
    from aimos.recall.candidates import CANDIDATES, LexicalChannel, PreciseChannel, Scope, open_candidates
    from aimos.recall.pipeline import recall
    from aimos.recall.text import asks_when, query_terms
    from aimos.store.connection import open_writer, seal_with
    from aimos.vocabulary import HOUSEKEEPER, PATH_RECALL, PATH_SAVE

    ks = tuple(sorted(set(ks)))
    if not ks or ks[0] < 1 or ks[-1] > 200:
        raise UsageError("-k values must be between 1 and 200")
    conversations = load_conversations(path or default_data_path())
    total_q = sum(len(c.get("qa", [])) for c in conversations)
    rows: dict[str, dict[int, list[dict[str, float]]]] = {
        "aimos": defaultdict(list),
        "bm25": defaultdict(list),
    }
    counts = {"conversations": 0, "turns": 0, "questions": 0, "skipped_no_evidence": 0}
    settings = list(dict.fromkeys([*GRID, default_setting(), BEFORE])) if folds else []
    channels = {s: LexicalChannel(**dict(s)) for s in settings}  # type: ignore[arg-type]
    by_setting: list[dict[Any, list[dict[str, float]]]] = []
    started = time.perf_counter()
    asked = 0
    for conv in conversations:
        with scratch_home("aimos-eval-locomo-"):
            now = int(time.time())
            result = install_scratch("locomo")
            conn = open_writer()
            try:
                store = open_keystore(result.keystore_kind, result.brain_id)
                agent = load_signer(conn, store, "cli", now)
                housekeeper = load_signer(conn, store, HOUSEKEEPER, now)
                seal_with(conn, housekeeper)  # its writes are sealed by the housekeeper
                dia_of: dict[str, set[str]] = defaultdict(set)
                rowid_to_memory: dict[int, str] = {}
                for turn in turns_of(conv):
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
                    counts["turns"] += 1
                for rowid, mid in conn.execute("SELECT rowid, memory_id FROM memories"):
                    rowid_to_memory[rowid] = mid
                known = {d for ids in dia_of.values() for d in ids}
                scope = Scope("personal", DEFAULT_GRANT_CLEARANCE, DEFAULT_GRANT_DATA_CLASS)
                per_setting: dict[Any, list[dict[str, float]]] = defaultdict(list)
                by_setting.append(per_setting)
                for qa in conv.get("qa", []):
                    asked += 1
                    progress(asked, total_q, "locomo")
                    relevant = set(qa.get("evidence", [])) & known
                    if not relevant:
                        counts["skipped_no_evidence"] += 1
                        continue
                    counts["questions"] += 1
                    t = int(time.time())
                    req = sign_request(
                        agent, build_recall_body(query=qa["question"], limit=max(ks)), PATH_RECALL, t
                    )
                    got = recall(conn, housekeeper, req, t)
                    ranked = _expand([r["memory_id"] for r in got.results], dia_of)
                    base = open_candidates(
                        conn, query_terms(qa["question"]), scope, [PreciseChannel()], max(ks)
                    )
                    base_ranked = _expand([rowid_to_memory[r] for r, _ in base], dia_of)
                    category = int(qa.get("category", 0))
                    rows["aimos"][category].append(scores_for(ranked, relevant, ks))
                    rows["bm25"][category].append(scores_for(base_ranked, relevant, ks))
                    terms, when = query_terms(qa["question"]), asks_when(qa["question"])
                    for setting, channel in channels.items():
                        hits = channel.search(conn, terms, scope, CANDIDATES, when=when)[: max(ks)]
                        found = _expand([rowid_to_memory[r] for r, _ in hits], dia_of)
                        per_setting[setting].append(scores_for(found, relevant, ks))
            finally:
                conn.close()
        counts["conversations"] += 1
    report: dict[str, Any] = {"data": str(path or default_data_path()), "ks": list(ks), "counts": counts}
    for arm, by_cat in rows.items():
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
        report["folds"] = cross_validate(by_setting, max(ks))
    report["seconds"] = round(time.perf_counter() - started, 1)
    return report


def _expand(memory_ids: list[str], dia_of: dict[str, set[str]]) -> list[str]:
    """Memories to dialog ids, in rank order (a memory saved for two identical turns counts for both)."""
    out: list[str] = []
    for mid in memory_ids:
        out.extend(sorted(dia_of.get(mid, ())))
    return out
