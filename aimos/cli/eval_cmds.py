"""`aimos eval ...`: benchmarks and evaluations in scratch brains (never the user's brain)."""

from __future__ import annotations

import typer

from aimos.cli.output import emit_json, out

eval_app = typer.Typer(
    help="Benchmarks and evaluations, in scratch brains.", no_args_is_help=True, rich_markup_mode=None
)


@eval_app.command("perf")
def perf(
    saves: int = typer.Option(None, "--saves", help="Time N signed saves against their bare parts."),
    recall_n: int = typer.Option(None, "--recall", help="Time recalls over a scratch brain of N memories."),
    json_out: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Signed-save cost against its bare parts (--saves N), or recall latency (--recall N)."""
    from aimos.errors import UsageError
    from aimos.eval.perf import run_perf, run_recall_perf

    if recall_n is not None:
        if not 10 <= recall_n <= 1_000_000:
            raise UsageError("--recall must be between 10 and 1,000,000 memories")
        rep = run_recall_perf(recall_n)
        if json_out:
            emit_json(rep)
            return
        built = f"built in {rep['build_seconds']} s"
        out(f"recall over {rep['memories']:,} memories ({built}), {rep['recalls']} recalls")
        for name in ("recall", "cold_help", "cold_recall"):
            s = rep[name]
            out(f"  {name:<12} median {s['median_ms']:>9.2f} ms   p95 {s['p95_ms']:>9.2f} ms")
        out("  share of recall time: " + ", ".join(f"{k} {v:.1%}" for k, v in rep["share"].items()))
        t = rep["targets"]
        out(
            f"  targets: recall p95 <= {t['recall_p95_ms']} ms, --help <= {t['help_ms']} ms, "
            f"cold recall <= {t['cold_recall_ms']} ms"
        )
        return
    saves = 1000 if saves is None else saves
    if not 1 <= saves <= 1_000_000:
        raise UsageError("--saves must be between 1 and 1,000,000")
    report = run_perf(saves)
    if json_out:
        emit_json(report)
        return
    out(f"signed save x{saves} (scratch brain, {report['keystore']} keystore)")
    for name in ("signed_save", "bare_sign", "bare_verify", "bare_durable_commit"):
        s = report[name]
        out(f"  {name:<22} median {s['median_ms']:>9.4f} ms   p95 {s['p95_ms']:>9.4f} ms")
    out(f"  bare parts (sum of medians)   {report['bare_parts_median_ms']:.4f} ms")
    out(
        f"  ratio signed save / bare parts  {report['ratio_save_to_bare_parts']:.3f}"
        f"  (target <= {report['target_ratio']})"
    )


@eval_app.command("locomo")
def locomo(
    data: str = typer.Option(
        None, "--data", help="LoCoMo JSON (default: ../shared/data/locomo/locomo-dev.json)."
    ),
    k: list[int] = typer.Option(None, "-k", help="Cut-offs (repeatable); default 5 10 20 25."),
    json_out: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Turn-level retrieval on LoCoMo in scratch brains, beside a plain FTS5 BM25 baseline."""
    from pathlib import Path

    from aimos.eval.locomo import DEFAULT_KS, run_locomo

    report = run_locomo(Path(data) if data else None, tuple(k) if k else DEFAULT_KS)
    if json_out:
        emit_json(report)
        return
    c = report["counts"]
    out(
        f"LoCoMo {report['data']}: {c['conversations']} conversations, {c['turns']} turns, "
        f"{c['questions']} questions ({c['skipped_no_evidence']} without resolvable evidence skipped), "
        f"{report['seconds']} s"
    )
    ks = report["ks"]
    headers = (
        ["arm / slice", "hit@1", "mrr"]
        + [f"any@{x}" for x in ks]
        + [f"rec@{x}" for x in ks]
        + [f"ndcg@{x}" for x in ks]
    )
    lines = []
    for arm in ("aimos", "bm25"):
        slices = {
            "overall": report[arm]["overall"],
            "no adversarial": report[arm]["overall_without_adversarial"],
        }
        slices.update(report[arm]["per_category"])
        for name, m in slices.items():
            lines.append(
                [f"{arm} {name}", f"{m['hit@1']:.4f}", f"{m['mrr']:.4f}"]
                + [f"{m[f'any_hit@{x}']:.4f}" for x in ks]
                + [f"{m[f'evidence_recall@{x}']:.4f}" for x in ks]
                + [f"{m[f'ndcg@{x}']:.4f}" for x in ks]
            )
    from aimos.cli.output import table

    out(table(headers, lines))


@eval_app.command("mutation")
def mutation(
    transitions: int = typer.Option(200, "--transitions", help="Signed transitions to time (10..100000)."),
    json_out: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """The mutation-integrity suite (MutMem 9.2) and the cost of a signed transition."""
    from aimos.errors import UsageError
    from aimos.eval.mutation import run_mutation

    if not 10 <= transitions <= 100_000:
        raise UsageError("--transitions must be between 10 and 100,000")
    report = run_mutation(transitions)
    if json_out:
        emit_json(report)
        return
    for c in report["cases"]:
        out(
            f"{'ok  ' if c['as_declared'] else 'DIFF'}  {c['case']}: {c['observed']}"
            + ("" if c["as_declared"] else f"  (declared: {c['declared']})")
        )
    t = report["transition"]
    out(
        f"signed transition: median {t['median_ms']:.4f} ms, p95 {t['p95_ms']:.4f} ms (n={t['n']}), "
        f"{report['logical_bytes_per_transition']} logical bytes"
    )
    for name, s in report["bare"].items():
        out(f"  bare {name:<24} median {s['median_ms']:.4f} ms  p95 {s['p95_ms']:.4f} ms")
    tg = report["targets"]
    out(
        f"  ratio to bare parts {report['ratio_to_bare']:.3f}  (targets: median <= {tg['median_ms']} ms, "
        f"p95 <= {tg['p95_ms']} ms, ratio <= {tg['ratio']}, <= {tg['bytes']} bytes)"
    )
    out("all cases as declared" if report["all_as_declared"] else "SOME CASES DIFFER FROM THEIR DECLARATION")
