"""`aimos eval secrets`: the secret gate's false positives on ordinary text and the shapes it
catches, in one run.

Ordinary text: every LoCoMo turn as the LoCoMo eval saves it and every LoCoMo question (a recall
query), the 8 guide memories, and the PoisonedRAG questions and passages (both go through the
gate when their evals run). Secrets: the realistic shapes of ``secret_corpus`` (built from parts
at run time). The gate is a pure function of the text, so no brain is needed: the CLI and MCP
tests drive the same gate through the real save, recall and label paths.

A false positive is reported by where it is (its source and the kind the gate named), never
with the text.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from aimos.errors import NotFoundError, UsageError
from aimos.eval.secret_corpus import ORDINARY, shapes
from aimos.memory.gates import find_secret, where


def ordinary_texts(
    locomo: Path | None = None, poisonedrag: list[Path] | None = None
) -> Iterator[tuple[str, str, str]]:
    """(group, where it comes from, text) for every ordinary text the gate must let through."""
    from aimos.eval.locomo import default_data_path, load_conversations, turns_of
    from aimos.eval.poisonedrag import POISONEDRAG_SOURCE, default_dataset_paths
    from aimos.installer.guide_corpus import load_verified

    for conversation in load_conversations(locomo or default_data_path()):
        sample = conversation.get("sample_id", "?")
        for turn in turns_of(conversation):
            yield "locomo turns", f"{sample} {turn['dia_id']}", turn["value"]
        for i, qa in enumerate(conversation.get("qa", [])):
            yield "locomo questions", f"{sample} question {i + 1}", str(qa["question"])
    guides, _ = load_verified()
    for guide in guides:
        yield "guides", guide.path, guide.text
    for path in poisonedrag if poisonedrag is not None else default_dataset_paths():
        try:
            targets = json.loads(path.read_text("utf-8"))
        except FileNotFoundError:
            raise NotFoundError(f"no PoisonedRAG targets at {path}", POISONEDRAG_SOURCE) from None
        except (OSError, ValueError):
            raise UsageError(f"no PoisonedRAG targets at {path}") from None
        for tid, target in targets.items():
            yield "poisonedrag questions", f"{path.name} {tid}", str(target["question"])
            for j, passage in enumerate(target.get("adv_texts", [])):
                yield "poisonedrag passages", f"{path.name} {tid} passage {j + 1}", str(passage)
    for i, text in enumerate(ORDINARY):
        yield "ordinary sentences", f"sentence {i + 1}", text


def run_secrets(locomo: Path | None = None, poisonedrag: list[Path] | None = None) -> dict[str, Any]:
    started = time.perf_counter()
    groups: dict[str, dict[str, int]] = {}
    false_positives: list[dict[str, Any]] = []
    for group, origin, text in ordinary_texts(locomo, poisonedrag):
        counts = groups.setdefault(group, {"texts": 0, "false_positives": 0})
        counts["texts"] += 1
        found = find_secret(text)
        if found is not None:
            counts["false_positives"] += 1
            line, char = where(text, found.start)
            false_positives.append(
                {"group": group, "where": origin, "kind": found.kind, "line": line, "char": char}
            )
    kinds: dict[str, dict[str, Any]] = {}
    for shape in shapes():
        found = find_secret(shape.text)
        kinds[shape.kind] = {"caught": found is not None, "as": found.kind if found else None}
    texts = sum(g["texts"] for g in groups.values())
    fp = sum(g["false_positives"] for g in groups.values())
    caught = sum(1 for k in kinds.values() if k["caught"])
    return {
        "ordinary": groups,
        "ordinary_texts": texts,
        "false_positives": fp,
        "false_positive_rate": fp / texts if texts else 0.0,
        "false_positive_places": false_positives,
        "shapes": kinds,
        "shapes_total": len(kinds),
        "shapes_caught": caught,
        "missed": [name for name, k in kinds.items() if not k["caught"]],
        "seconds": round(time.perf_counter() - started, 2),
    }
