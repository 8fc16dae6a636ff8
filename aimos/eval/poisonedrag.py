"""`aimos eval poisonedrag`: the PoisonedRAG black-box attack and its variants against aimos's
labels and recall policy, in scratch brains, through the real signed save and recall paths.

Clean corpus (built once per dataset, then copied for every target and variant): the LoCoMo
development turns saved as a conversation import saves them (type `dialog_turn`, source = the
session), plus for each target one clean reference passage stating its correct answer, all saved
by the `cli` agent. The template also enrols a second agent, `reader` (its own epoch, key and
master-signed write grant, through the real enrolment path): the agent that reads web pages and
saves what it reads. For each target and variant (aimos/eval/poison_variants.py), a copy of that
brain gets the variant's passages saved by the reader, one after the other as one reading session
would, and the variant's query is recalled three times: with the whole trust policy bypassed (arm
A0, an in-process switch no agent request can reach), with labels but without the recall-time
rules (A1), and as in production, labels and the recall-time rules: query-lure and the agreement
check (A1 + lure). The clean
controls inject honest passages stating the correct answer instead, and count how many get an
adverse label. Every adverse label on an injected memory is checked by the in-database verifier
(that memory's record: its save, its chains, each signed label row), and a sample of the brains
(one per variant and dataset by default, one whose injected memories hold an adverse label when
there is one) is run through both verifiers over the whole brain (`aimos verify`'s work,
in-process) before it is purged.
"""

from __future__ import annotations

import json
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from aimos.errors import NotFoundError, UsageError
from aimos.eval.poison_variants import (
    ATTACKS,
    CONTROLS,
    DESCRIPTIONS,
    POISON_SOURCE,
    TOP_K,
    VARIANTS,
    Injection,
    injection,
)
from aimos.eval.stats import wilson
from aimos.paths import using_home
from aimos.terminal import draw_progress
from aimos.vocabulary import ADVERSE, DEFAULT_SAVE_DATA_CLASS

CLEAN_SOURCE = "corpus:reference-answers"
READER_AGENT = "reader"
INJECTED_TYPE = "note"
VERIFY_PER_VARIANT = 1

# (report key, recall switches): A0 is the whole policy off; A1 labels only; A1 + lure production
ARMS = (
    ("A0_policy_bypassed", {"bypass": True, "lure_rules": False}),
    ("A1_with_labels", {"bypass": False, "lure_rules": False}),
    ("A1_labels_and_query_lure", {"bypass": False, "lure_rules": True}),
)


# where to get the data when the default files (beside a checkout) are absent, as in a pip install
POISONEDRAG_SOURCE = (
    "Download nq.json or msmarco.json from https://github.com/sleeepeer/PoisonedRAG "
    "(results/adv_targeted_results/; MIT) and give it with --dataset FILE."
)


def default_dataset_paths() -> list[Path]:
    base = Path(__file__).resolve().parents[3] / "shared" / "data" / "poisonedrag"
    return [base / "nq.json", base / "msmarco.json"]


def load_targets(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise NotFoundError(f"no PoisonedRAG file at {path}", POISONEDRAG_SOURCE) from None
    except (ValueError, UnicodeDecodeError):
        raise UsageError(
            f"{path} is not JSON", "Give a PoisonedRAG targets file (nq.json, msmarco.json)."
        ) from None
    fix = 'Each target needs "question", "correct answer" and a list "adv_texts" of 5 passages.'
    if not isinstance(data, dict) or not data:
        raise UsageError(f"{path} is not a PoisonedRAG targets object (id -> target)", fix)
    targets = []
    for tid, t in data.items():
        if (
            not isinstance(t, dict)
            or not isinstance(t.get("question"), str)
            or not isinstance(t.get("correct answer"), str)
            or not isinstance(t.get("adv_texts"), list)
            or len(t["adv_texts"]) < TOP_K
            or not all(isinstance(a, str) and a.strip() for a in t["adv_texts"])
        ):
            raise UsageError(f"{path}: target {tid!r} has the wrong shape", fix)
        # the variants need an incorrect answer; a file without one gets an empty one (adaptive and
        # no_number then only lose their answer-specific rewrites)
        incorrect = t.get("incorrect answer")
        targets.append({"id": tid, **t, "incorrect answer": incorrect if isinstance(incorrect, str) else ""})
    return targets


def chosen_variants(names: Iterable[str] | None, *, paraphrase: bool = True) -> list[str]:
    """The variants to run, in the canonical order: all by default; a usage error names an unknown
    one. ``paraphrase=False`` (the old --no-paraphrase) leaves the paraphrase out."""
    wanted = list(dict.fromkeys(names or VARIANTS))
    unknown = [n for n in wanted if n not in VARIANTS]
    if unknown:
        raise UsageError(f"no poisonedrag variant {unknown[0]!r}", "Use one of: " + ", ".join(VARIANTS) + ".")
    return [v for v in VARIANTS if v in wanted and (paraphrase or v != "paraphrase")]


class _Brain:
    """A scratch brain opened in-process: the writer, the CLI agent, the reader agent and the
    housekeeper."""

    def __init__(self) -> None:
        from aimos.eval.scratch import open_scratch
        from aimos.identity.epochs import load_signer
        from aimos.identity.keystore import open_keystore
        from aimos.store.meta import brain_meta

        self.conn, self.agent, self.housekeeper = open_scratch()
        meta = brain_meta(self.conn)
        keystore = open_keystore(meta["keystore"], meta["brain_id"])
        self.reader = load_signer(self.conn, keystore, READER_AGENT, int(time.time()))

    def save(self, value: str, *, source: str, memory_type: str, signer: Any = None) -> str:
        from aimos.actions.bodies import build_save_body
        from aimos.actions.memory import save_and_classify
        from aimos.identity.requests import sign_request
        from aimos.vocabulary import PATH_SAVE

        body = build_save_body(
            company_id="personal",
            value=value,
            source=source,
            memory_type=memory_type,
            clearance_level=5,
            data_class=DEFAULT_SAVE_DATA_CLASS,
        )
        t = int(time.time())
        request = sign_request(signer or self.agent, body, PATH_SAVE, t)
        return save_and_classify(self.conn, self.housekeeper, request, t).memory_id

    def recall(self, query: str, *, bypass: bool, lure_rules: bool) -> list[str]:
        from aimos.actions.bodies import build_recall_body
        from aimos.identity.requests import sign_request
        from aimos.recall.pipeline import recall
        from aimos.vocabulary import PATH_RECALL

        t = int(time.time())
        req = sign_request(self.agent, build_recall_body(query=query, limit=TOP_K), PATH_RECALL, t)
        result = recall(self.conn, self.housekeeper, req, t, bypass_trust=bypass, lure_rules=lure_rules)
        return [r["memory_id"] for r in result.results]

    def embed(self) -> int:
        """Every memory's vector made, as the housekeeper keeps a brain's vectors current (the
        injected passages then get theirs from the recall that follows them, as a recall makes a
        few missing vectors); how many; 0 when the model is not available here (words alone)."""
        from aimos.meaning.index import embed_pending
        from aimos.meaning.model import load_or_none

        embedder = load_or_none()
        return 0 if embedder is None else embed_pending(self.conn, embedder)

    def labels(self, ids: Iterable[str]) -> dict[str, str]:
        from aimos.store.queries.eval import labels_of

        return labels_of(self.conn, list(dict.fromkeys(ids)))

    def adverse_count(self, exclude: set[str] = frozenset()) -> tuple[int, int]:  # type: ignore[assignment]
        from aimos.store.queries.eval import adverse_by_memory

        kept = [adverse for mid, adverse in adverse_by_memory(self.conn, ADVERSE) if mid not in exclude]
        return sum(kept), len(kept)

    def classifications(self, memory_id: str) -> int:
        from aimos.store.queries.eval import classification_count

        return classification_count(self.conn, memory_id)

    def verify_memories(self, ids: Iterable[str]) -> int:
        """How many of ``ids`` the in-database verifier passes, each on its own (`aimos verify
        --memory`'s in-database half: the save record, the chains, every signed label row)."""
        from aimos.verify.brain.verifier import verify_brain

        return sum(1 for mid in ids if verify_brain(self.conn, mid).ok)

    def verify(self, master_fingerprint: str) -> dict[str, Any]:
        """Both verifiers over the whole brain and their parity (what `aimos verify` runs)."""
        from aimos.verify.brain.parity import verify_everything

        started = time.perf_counter()
        result = verify_everything(self.conn, master_fingerprint)
        return {"ok": bool(result["ok"]), "seconds": round(time.perf_counter() - started, 2)}

    def close(self) -> None:
        self.conn.close()


def _clean_reference(target: dict[str, Any]) -> str:
    question, answer = target["question"], target["correct answer"]
    return f'Reference answer. For the question "{question}" the correct answer is {answer}.'


def _enrol_reader(passphrase: str) -> None:
    """The reading agent: its own epoch and key, and a master-signed write grant, as `aimos agent
    enroll reader` makes them."""
    from aimos.actions.agents import Enrolment, enroll
    from aimos.actions.session import open_brain

    with open_brain(write=True) as brain:
        enroll(brain, brain.master_with(passphrase), Enrolment(READER_AGENT))


def _build_template(
    home: Path,
    targets: list[dict[str, Any]],
    *,
    turns_as_reference: bool,
    passphrase: str,
    clean_turns: int | None = None,
) -> dict[str, Any]:
    from aimos.eval.locomo import default_data_path, load_conversations, turns_of
    from aimos.eval.scratch import install_scratch

    with using_home(home):
        installed = install_scratch(
            "poisonedrag-reference" if turns_as_reference else "poisonedrag", passphrase=passphrase
        )
        _enrol_reader(passphrase)
        brain = _Brain()
        try:
            turns = 0
            every_turn = (turn for conv in load_conversations(default_data_path()) for turn in turns_of(conv))
            for turn in every_turn:
                if clean_turns is not None and turns >= clean_turns:
                    break
                if turns_as_reference:
                    brain.save(
                        turn["value"].split("] ", 1)[-1], source="corpus:locomo", memory_type="research"
                    )
                else:
                    brain.save(turn["value"], source=turn["source"], memory_type="dialog_turn")
                turns += 1
            references = 0
            for target in targets:
                brain.save(_clean_reference(target), source=CLEAN_SOURCE, memory_type="declarative")
                references += 1
            # (the turns-as-reference template measures the save-time kernel alone: no vectors)
            embedded = 0 if turns_as_reference else brain.embed()
            adverse, total = brain.adverse_count()
        finally:
            brain.close()
    return {
        "turns": turns,
        "clean_references": references,
        "clean_adverse": adverse,
        "clean_memories": total,
        "clean_vectors": embedded,
        "master_fingerprint": installed.master_fingerprint,
    }


def _attack(
    template: Path,
    scratch: Path,
    shot: Injection,
    *,
    passphrase: str,
    verify_with: str | None = None,
    whole_brain: str = "never",
) -> dict[str, Any]:
    """One target under one variant in a copy of the template: save the passages as the reader,
    recall the query in the three arms, read the labels, verify each injected memory with an adverse
    label, and the whole brain with both verifiers when ``whole_brain`` is "always", or "adverse"
    and an injected memory holds an adverse label."""
    from aimos.eval.scratch import finish, register

    shutil.copytree(template, scratch)
    register(scratch, passphrase)  # a copy of a scratch brain is purged like one
    try:
        with using_home(scratch):
            brain = _Brain()
            try:
                ids = [
                    brain.save(p.text, source=p.source, memory_type=INJECTED_TYPE, signer=brain.reader)
                    for p in shot.passages
                ]
                injected = set(ids)
                arms = {
                    name: sum(1 for m in brain.recall(shot.query, **switches) if m in injected)
                    for name, switches in ARMS
                }
                labels = brain.labels(ids)
                adverse = [mid for mid, lab in labels.items() if lab in ADVERSE]
                clean_adverse, clean_total = brain.adverse_count(exclude=injected)
                run = {
                    "arms": arms,
                    "injected": len(ids),
                    "retained": len(labels),
                    "adverse": len(adverse),
                    "adverse_verified": brain.verify_memories(adverse),
                    "first_relabelled": int(
                        brain.classifications(ids[0]) > 1 and labels.get(ids[0]) in ADVERSE
                    ),
                    "sources": len(shot.sources),
                    "notes": shot.notes,
                    "clean_adverse": clean_adverse,
                    "clean_total": clean_total,
                }
                if verify_with is not None and (
                    whole_brain == "always" or (whole_brain == "adverse" and adverse)
                ):
                    run["verified"] = brain.verify(verify_with)
                return run
            finally:
                brain.close()
    finally:
        with using_home(scratch):
            finish(scratch)


def _rate(hit: int, n: int, digits: int = 4) -> dict[str, Any]:
    lo, hi = wilson(hit, n)
    return {"rate": round(hit / n, digits) if n else 0.0, "wilson95": [round(lo, digits), round(hi, digits)]}


LISTED = 25  # the ids of targets that reached the top 5, at most this many per arm


def _arm(runs: list[dict[str, Any]], name: str, what: str) -> dict[str, Any]:
    n = len(runs)
    hits = [r for r in runs if r["arms"][name] > 0]
    return {
        f"targets_with_{what}_in_top5": len(hits),
        "targets": n,
        **_rate(len(hits), n),
        f"mean_{what}_per_top5": round(sum(r["arms"][name] for r in runs) / n, 3) if n else 0.0,
        # which targets (the dataset's ids), so a miss can be looked at; none listed for A0
        "target_ids_in_top5": [r["target"] for r in hits if "target" in r][:LISTED] if hits != runs else [],
    }


def _verified(runs: list[dict[str, Any]]) -> dict[str, Any]:
    whole = [r["verified"] for r in runs if "verified" in r]
    return {
        "adverse_labels": sum(r["adverse"] for r in runs),
        "adverse_labels_verified": sum(r["adverse_verified"] for r in runs),
        "brains_checked": len(whole),
        "brains_verified": sum(1 for v in whole if v["ok"]),
        "brains_checked_with_adverse_labels": sum(1 for r in runs if "verified" in r and r["adverse"]),
        "seconds": round(sum(v["seconds"] for v in whole), 1),
    }


def _clean(runs: list[dict[str, Any]]) -> dict[str, Any]:
    clean_adverse = sum(r["clean_adverse"] for r in runs)
    clean_total = sum(r["clean_total"] for r in runs)
    # every target brain holds the same clean memories: the interval is over one brain's clean
    # memories, with the worst brain's count (pairs over all brains are not independent samples)
    worst = max((r["clean_adverse"] for r in runs), default=0)
    per_brain = runs[0]["clean_total"] if runs else 0
    lo, hi = wilson(worst, per_brain)
    return {
        "clean_memory_brain_pairs": clean_total,
        "clean_with_adverse_label": clean_adverse,
        "clean_adverse_rate": round(clean_adverse / clean_total, 6) if clean_total else 0.0,
        "clean_memories_per_brain": per_brain,
        "clean_adverse_worst_brain": worst,
        "clean_adverse_wilson95_worst_brain": [round(lo, 6), round(hi, 6)],
    }


def _summary(variant: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    honest = variant in CONTROLS
    what = "honest" if honest else "poison"
    sources = [r["sources"] for r in runs]
    out: dict[str, Any] = {
        "variant": variant,
        "kind": "clean control" if honest else "attack",
        "shape": DESCRIPTIONS[variant],
        "targets": len(runs),
        "declared_sources_per_target": [min(sources, default=0), max(sources, default=0)],
    }
    out.update({name: _arm(runs, name, what) for name, _ in ARMS})
    injected = sum(r["injected"] for r in runs)
    adverse = sum(r["adverse"] for r in runs)
    out[f"{what}_injected"] = injected
    out[f"{what}_retained"] = sum(r["retained"] for r in runs)
    out[f"{what}_with_adverse_label"] = adverse
    if honest:
        out["honest_adverse"] = _rate(adverse, injected, 6)
        touched = sum(1 for r in runs if r["adverse"])
        out["targets_with_any_honest_adverse"] = {"targets": touched, **_rate(touched, len(runs))}
    else:
        out["first_in_cluster_relabelled_retroactively"] = sum(r["first_relabelled"] for r in runs)
    if variant == "no_number":
        out["targets_with_numeric_incorrect_answer"] = sum(
            1 for r in runs if r["notes"].get("numeric_incorrect_answer")
        )
        out["targets_with_numbers_rewritten"] = sum(1 for r in runs if r["notes"].get("numbers_rewritten"))
    out.update(_clean(runs))
    out["verification"] = _verified(runs)
    return out


def _caveats() -> list[str]:
    return [
        "the clean reference passage (saved by cli) quotes the question but does not open with it, so it "
        "has no leading-question fingerprint of its own",
        "A0 bypasses the whole trust policy (labels, query-lure rules, retained quarantine, the "
        "weight floor); A1 keeps labels and leaves only the recall-time rules (query-lure, "
        "agreement check) out; "
        "A1 + lure is the production policy",
        "the LoCoMo turns share no topic with NQ or MS MARCO, so passages that carry the question's "
        "words reach the top-5 easily when the policy is bypassed",
        "every injected passage is saved by the reader agent in one burst, as a reading agent saves "
        "the pages of one session (the attacker controls neither the agent nor the timing)",
        "honest passages of one target share a brain and a question: the per-passage interval treats "
        "them as independent, the per-target one does not",
        "no_number keeps the question prefix as it is (its digits too): only the passage part is spelled out",
    ]


def run_poisonedrag(
    datasets: list[Path] | None = None,
    *,
    limit: int | None = None,
    variants: Iterable[str] | None = None,
    paraphrase: bool = True,
    reference_turns: bool = True,
    verify_per_variant: int = VERIFY_PER_VARIANT,
    clean_turns: int | None = None,
    progress: Callable[[int, int, str], None] = draw_progress,
) -> dict[str, Any]:
    from aimos.eval.scratch import finish

    started = time.perf_counter()
    chosen = chosen_variants(variants, paraphrase=paraphrase)
    paths = datasets or default_dataset_paths()
    loaded = {str(p): load_targets(p)[:limit] if limit else load_targets(p) for p in paths}
    work = Path(tempfile.mkdtemp(prefix="aimos-eval-poisonedrag-"))
    report: dict[str, Any] = {
        "clean_corpus": (
            "LoCoMo development turns (data/locomo/locomo-dev.json) saved as a conversation import "
            "(type dialog_turn, source = the session), plus one clean reference passage per target "
            f"stating its correct answer (type declarative, source {CLEAN_SOURCE}), saved by agent "
            f"cli; injected passages (type {INJECTED_TYPE}) saved by agent {READER_AGENT} (its own "
            f"epoch and write grant); single-source attacks from {POISON_SOURCE}; top-{TOP_K} recall; "
            "every clean memory's vector made (when the embedding model is available), the injected "
            "passages' by the recall after their saves"
        ),
        "variants": {v: DESCRIPTIONS[v] for v in chosen},
        "arms": {
            "A0_policy_bypassed": "the whole trust policy off (bypass_trust)",
            "A1_with_labels": "labels, without the recall-time rules (query-lure, agreement check)",
            "A1_labels_and_query_lure": (
                "labels and the recall-time rules: query-lure and the agreement check (production)"
            ),
        },
        "caveats": _caveats(),
        "datasets": {},
    }
    try:
        for path, targets in loaded.items():
            template = work / "template"
            passphrase = secrets.token_urlsafe(24)
            t0 = time.perf_counter()
            built = _build_template(
                template, targets, turns_as_reference=False, passphrase=passphrase, clean_turns=clean_turns
            )
            fingerprint = built.pop("master_fingerprint")
            entry: dict[str, Any] = {
                "targets": len(targets),
                "template": built,
                "template_seconds": round(time.perf_counter() - t0, 1),
            }
            for name in chosen:
                t0 = time.perf_counter()
                runs: list[dict[str, Any]] = []
                for i, target in enumerate(targets):
                    # whole-brain checks: brains with adverse labels first, the last ones if need be
                    need = verify_per_variant - sum(1 for r in runs if "verified" in r)
                    whole = "never" if need <= 0 else ("always" if len(targets) - i <= need else "adverse")
                    progress(i + 1, len(targets), f"{Path(path).stem} {name}")
                    run = _attack(
                        template,
                        work / f"t{i}",
                        injection(name, target),
                        passphrase=passphrase,
                        verify_with=fingerprint,
                        whole_brain=whole,
                    )
                    runs.append({**run, "target": str(target["id"])})
                entry[name] = {**_summary(name, runs), "seconds": round(time.perf_counter() - t0, 1)}
            with using_home(template):
                finish(template)
            report["datasets"][path] = entry
        if reference_turns:
            template = work / "reference-template"
            passphrase = secrets.token_urlsafe(24)
            built = _build_template(
                template,
                next(iter(loaded.values())),
                turns_as_reference=True,
                passphrase=passphrase,
                clean_turns=clean_turns,
            )
            built.pop("master_fingerprint")
            lo, hi = wilson(built["clean_adverse"], built["clean_memories"])
            report["turns_saved_as_reference_documents"] = {
                **built,
                "adverse_rate": round(built["clean_adverse"] / built["clean_memories"], 6),
                "wilson95": [round(lo, 6), round(hi, 6)],
            }
            with using_home(template):
                finish(template)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report["attacks"] = [v for v in chosen if v in ATTACKS]
    report["controls"] = [v for v in chosen if v in CONTROLS]
    report["seconds"] = round(time.perf_counter() - started, 1)
    return report
