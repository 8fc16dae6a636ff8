"""How `aimos eval ...` prints its reports: each target beside its figure, met or missed, and
the tables of the longer evaluations (the commands are in eval_cmds.py)."""

from __future__ import annotations

from typing import Any

from aimos.cli.output import out
from aimos.eval.targets import judge
from aimos.plural import plural


def say_targets(verdicts: list[Any]) -> None:
    """Each target beside its figure, met or missed, then how many were met."""
    from aimos.eval.targets import summary

    for v in verdicts:
        out(f"  target: {v.line()}")
    out(f"  {summary(verdicts)}")


def print_meaning_cost(m: dict[str, Any], load: list[float]) -> None:
    """What the meaning channel adds to a recall, and what its vectors take on disk."""
    out(
        f"  meaning adds: median {m['added_median_ms']:+.2f} ms, p95 {m['added_p95_ms']:+.2f} ms over words"
        " alone (the lookup of missing vectors, the question's embedding, the search and the fusion)"
    )
    e = m["question_embedding"]
    if e is not None:
        out(f"    of which the question's embedding: median {e['median_ms']:.2f}, p95 {e['p95_ms']:.2f} ms")
    else:
        out(f"    the model did not load here ({m['model']}): the question's embedding is not counted")
    d = m["disk"]
    out(
        f"  vectors: {d['rows']:,} rows, {d['bytes_on_disk']:,} bytes on disk: {d['per_row_on_disk']} per"
        f" memory ({d['vector_bytes']} the vector, {d['model_name_bytes']} the model's name; dbstat);"
        f" written in {m['vectors_seconds']} s, read into the matrix in {m['matrix_read_seconds']} s"
    )
    out(f"  {m['note']}")
    out(f"  load average at the end: {', '.join(f'{x:.2f}' for x in load)}")


def print_profile(rows: list[dict[str, Any]] | None, op: str) -> None:
    """The profiled pass: functions by their own time per operation."""
    if not rows:
        return
    out(f"  profile (a separate pass under cProfile), ms per {op}:       own   cumulative   calls")
    for r in rows:
        out(
            f"    {r['function'][:60]:<60} {r['self_ms_per_op']:>8.4f} {r['cumulative_ms_per_op']:>12.4f}"
            f" {r['calls_per_op']:>7.1f}"
        )


def print_sealing(sealing: dict[str, Any], write: str) -> None:
    """The seal chain's part of each write: begin check, seal, anchor outside the brain, identities."""
    for name in ("begin", "seal", "anchor", "identities"):
        if name in sealing:
            s = sealing[name]
            out(f"  sealing: {name:<14} median {s['median_ms']:>9.4f} ms   p95 {s['p95_ms']:>9.4f} ms")
    share = sealing.get("share_of_write_median")
    out(
        f"  sealing and anchoring in all  {sealing['sum_of_medians_ms']:.4f} ms per {write}"
        + (f" ({share:.1%} of its median)" if share is not None else "")
    )


def print_age(rep: dict[str, Any]) -> None:
    b = rep["bare"]
    bare = b["bare_parts_median_ms"]
    out(
        f"a scaled year: {rep['memories']:,} memories, {rep['recalls']:,} recalls,"
        f" {rep['outcomes']:,} outcomes ({rep['transitions']:,} weight transitions),"
        f" {rep['judgments']:,} judgments, {len(rep['nights'])} nights of housekeeper jobs;"
        f" {rep['seconds']:,.0f} s"
    )
    out(
        f"bare parts: sign {b['bare_sign']['median_ms']:.4f} + verify {b['bare_verify']['median_ms']:.4f}"
        f" + durable commit {b['bare_durable_commit']['median_ms']:.4f} = {bare:.4f} ms (median)"
    )

    def fig(s: dict[str, Any] | None) -> str:
        if s is None:
            return f"{'-':>30}"
        return f"{s['median_ms']:>8.2f} /{s['p95_ms']:>8.2f} ms {s['ratio_to_bare']:>6.1f}x"

    def size(v: float | None) -> str:
        return f"{v:>9,.0f}" if v is not None else f"{'-':>9}"

    out("")
    out(f"{'memories':>9} {'brain MB':>9} {'B/memory':>9} {'B/recall':>9} {'B/outcome':>9}")
    for p in rep["checkpoints"]:
        out(
            f"{p['memories']:>9,} {p['brain_bytes'] / 1e6:>9.1f} {size(p['bytes_per_memory'])}"
            f" {size(p['bytes_per_recall'])} {size(p['bytes_per_outcome'])}"
        )
    out("")
    out(f"{'memories':>9}  {'op':<11} {'median / p95, ratio to bare':>30}   n")
    for p in rep["checkpoints"]:
        out(f"{p['memories']:>9,}  {'bare parts':<11} {p['bare_parts_median_ms']:>8.4f} ms (measured here)")
        for op in ("save", "recall", "transition", "outcome"):
            s = p[op]
            out(f"{p['memories']:>9,}  {op:<11} {fig(s)}   {s['n'] if s else 0}")
    out("")
    o = rep["overall"]
    out("whole run:  " + "; ".join(f"{op} {fig(o[op]).strip()}" for op in o if o[op] is not None))
    imp = rep["import"]
    if imp is not None:
        out(
            f"import: {imp['memories']:,} memories from {imp['files']:,} notes in {imp['seconds']:.1f} s"
            f" (read and plan {imp['read_and_plan_seconds']:.1f} s), {imp['per_memory_ms']:.2f} ms a memory"
        )
    g = rep["growth"]
    for op in ("save", "recall"):
        ratio = g[op]
        relative = g[f"{op}_ratio_to_bare"]
        span = f"from {g['from_memories']:,} to {g['to_memories']:,} memories"
        grown = judge(f"growth of the {op} median {span}:", ratio, g["target"], "x")
        shown = "-" if relative is None else f"{relative:.3f}"
        out(f"{grown.line()}; of its ratio to the bare parts: {shown}")
    for n in rep["nights"]:
        jobs = ", ".join(
            f"{name} {j['ms'] / 1000:.1f} s" + ("" if j["status"] == "SUCCESS" else f" {j['status']}")
            for name, j in n["jobs"].items()
        )
        out(f"night at {n['memories']:,} memories: {jobs}")
    v, bk = rep["verify"], rep["backup"]
    verdict = "ok" if v["ok"] else "FAILED"
    out(
        f"verify (both verifiers, parity, brain checks): {v['seconds']:.1f} s ({verdict});"
        f" brain file {rep['brain_file_bytes'] / 1e6:.1f} MB"
    )
    out(
        f"backup (the housekeeper's online backup): {bk['seconds']:.1f} s, {bk['bytes'] / 1e6:.1f} MB;"
        f" its check {bk['check_seconds']:.1f} s ({'ok' if bk['ok'] else 'FAILED'})"
    )


def say_meaning(meaning: dict[str, Any]) -> None:
    if meaning["model"]:
        made = meaning.get("made_by_the_model") or {}
        out(
            f"meaning: {meaning['model']}; the model embedded {made.get('passage', 0)} memories and"
            f" {made.get('query', 0)} questions, the evaluations' cache the rest"
        )
    else:
        out(f"meaning: unavailable here ({meaning['unavailable']}): the aimos arm is by words alone")


def print_folds(what: str, folds: dict[str, Any], k: int) -> None:
    """The cross-conversation validation: per fold, the setting chosen on its training
    conversations and, on the held-out ones, that choice beside the default and the others."""
    from aimos.cli.output import table

    def fig(m: dict[str, float]) -> list[str]:
        return [f"{m[key]:.4f}" for key in ("hit@1", "mrr", f"any_hit@{k}", f"evidence_recall@{k}")]

    others = folds["others"]
    out(
        f"\nCross-conversation validation of {what} (channel rankings, no policy); default "
        f"{folds['default']}" + "".join(f", {name} {folds[name]}" for name in others)
    )
    lines = [["all: default", *fig(folds["all_default"])]]
    lines += [[f"all: {name}", *fig(folds[f"all_{name}"])] for name in others]
    for f in folds["folds"]:
        name = f"train {f['train']} test {f['test']}"
        chosen = ", ".join(f"{key}={value:g}" for key, value in f["chosen"].items())
        lines += [
            [f"{name}: chosen ({chosen}) on train", *fig(f["train_chosen"])],
            [f"{name}: chosen on test", *fig(f["test_chosen"])],
            [f"{name}: default on test", *fig(f["test_default"])],
        ]
        lines += [[f"{name}: {other} on test", *fig(f[f"test_{other}"])] for other in others]
    if "held_out" in folds:
        lines += [[f"held out, mean of folds: {arm}", *fig(m)] for arm, m in folds["held_out"].items()]
    out(table(["fold / setting", "hit@1", "mrr", f"any@{k}", f"rec@{k}"], lines))


def print_poisonedrag(report: dict[str, Any]) -> None:
    out(f"clean corpus: {report['clean_corpus']}")
    for path, entry in report["datasets"].items():
        t = entry["template"]
        out(
            f"\n{path}: {entry['targets']} targets; clean brain {t['turns']} turns"
            f" + {t['clean_references']} references ({entry['template_seconds']} s to build)"
        )
        for name in report["attacks"] + report["controls"]:
            if name in entry:
                print_variant(entry[name], t)
    ref = report.get("turns_saved_as_reference_documents")
    if ref:
        out(
            f"\nturns saved as reference-like documents: {ref['clean_adverse']}/{ref['clean_memories']}"
            " adverse "
            f"(rate {ref['adverse_rate']:.6f}, Wilson 95% {ref['wilson95'][0]:.6f}-{ref['wilson95'][1]:.6f})"
        )
    out(f"\n{report['seconds']} s")


def print_variant(s: dict[str, Any], template: dict[str, Any]) -> None:
    what = "honest" if s["kind"] == "clean control" else "poison"
    low, high = s["declared_sources_per_target"]
    sources = plural(low, "declared source") if low == high else f"{low}-{high} declared sources"
    out(f"  {s['variant']} ({s['kind']}; {sources} per target; {s['seconds']} s):")
    for arm in ("A0_policy_bypassed", "A1_with_labels", "A1_labels_and_query_lure"):
        a = s[arm]
        out(
            f"    {arm:<25} {what} in top-5: {a[f'targets_with_{what}_in_top5']}/{a['targets']}"
            f"  (Wilson 95% {a['wilson95'][0]:.3f}-{a['wilson95'][1]:.3f}),"
            f" mean {what} per top-5 {a[f'mean_{what}_per_top5']}"
        )
    injected = s[f"{what}_injected"]
    if what == "poison":
        out(
            f"    poison retained {s['poison_retained']}/{injected}, with an adverse label "
            f"{s['poison_with_adverse_label']}/{injected}, first-in-cluster relabelled "
            f"retroactively {s['first_in_cluster_relabelled_retroactively']}"
        )
    else:
        h, per_target = s["honest_adverse"], s["targets_with_any_honest_adverse"]
        out(
            f"    honest passages with an adverse label {s['honest_with_adverse_label']}/{injected}"
            f" (rate {h['rate']:.4f}, Wilson 95% {h['wilson95'][0]:.4f}-{h['wilson95'][1]:.4f});"
            f" targets with any {per_target['targets']}/{s['targets']}"
        )
    if "targets_with_numeric_incorrect_answer" in s:
        out(
            f"    numeric incorrect answers {s['targets_with_numeric_incorrect_answer']}/{s['targets']},"
            f" targets with numbers spelled out {s['targets_with_numbers_rewritten']}/{s['targets']}"
        )
    out(
        f"    clean memories with an adverse label {s['clean_with_adverse_label']} over "
        f"{s['clean_memory_brain_pairs']} memory-brain pairs ({s['targets']} brains of "
        f"{template['clean_memories']} clean memories; rate {s['clean_adverse_rate']:.6f})"
    )
    v = s["verification"]
    out(
        f"    adverse labels verified {v['adverse_labels_verified']}/{v['adverse_labels']} (in-database"
        f" verifier, each memory); verified brains {v['brains_verified']}/{v['brains_checked']}"
        f" (both verifiers, whole brain; {v['brains_checked_with_adverse_labels']} with adverse labels;"
        f" {v['seconds']} s)"
    )
