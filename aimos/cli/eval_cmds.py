"""`aimos eval ...`: benchmarks and evaluations in scratch brains (never the user's brain)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from aimos.cli.eval_print import (
    print_age,
    print_folds,
    print_meaning_cost,
    print_poisonedrag,
    print_profile,
    print_sealing,
    say_meaning,
    say_targets,
)
from aimos.cli.options import json_option
from aimos.cli.output import emit_json, out
from aimos.eval.targets import judge
from aimos.plural import plural

eval_app = typer.Typer(
    help="Run benchmarks and evaluations in scratch brains.", no_args_is_help=True, rich_markup_mode=None
)

_LOCOMO_DATA = typer.Option(
    None, "--data", help="LoCoMo JSON (default: ../shared/data/locomo/locomo-dev.json)."
)


def _scratch_memories(default: int) -> Any:
    """`--memories N`: how many memories a scratch brain holds."""
    return typer.Option(default, "--memories", help="Memories in the scratch brain (100..1,000,000).")


def _purged_report(run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Run an evaluation whose scratch brains are purged with signed receipts as they finish."""
    import time

    from aimos import paths
    from aimos.cli.output import say
    from aimos.cli.purge_cmds import scratch_purger
    from aimos.eval import scratch

    receipts_dir = paths.purge_receipts_dir() / f"eval-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
    scratch.set_purger(scratch_purger(receipts_dir))
    try:
        report = run()
        receipts = scratch.receipts()
    finally:
        scratch.set_purger(None)
    report["scratch_brains_purged"] = {"receipts": len(receipts), "receipts_dir": str(receipts_dir)}
    say(f"{plural(len(receipts), 'scratch brain')} purged; their signed receipts are in {receipts_dir}")
    return report


def _purging(run: Callable[[], dict[str, Any]], json_out: bool) -> dict[str, Any] | None:
    """The evaluation's report (run as _purged_report runs it), or None when it was printed as JSON
    (``json_out``)."""
    report = _purged_report(run)
    if json_out:
        emit_json(report)
        return None
    return report


@eval_app.command("verify")
def verify_perf(
    memories: int = typer.Option(10_000, "--memories", help="Size of the scratch brain."),
    runs: int = typer.Option(2, "--runs", help="How many times to verify it."),
    json_out: bool = json_option("the report"),
) -> None:
    """Time `aimos verify` over a scratch brain.

    Time `aimos verify` (both verifiers, parity, seals, schema, indexes) over a scratch brain."""
    from aimos.errors import UsageError
    from aimos.eval.perf import run_verify_perf

    if not 10 <= memories <= 1_000_000 or not 1 <= runs <= 20:
        raise UsageError("--memories must be 10..1,000,000 and --runs 1..20")
    rep = _purging(lambda: run_verify_perf(memories, runs), json_out)
    if rep is None:
        return
    out(
        f"verify over {rep['memories']:,} memories ({rep['brain_bytes'] / 1e6:.1f} MB, built in "
        f"{rep['build_seconds']} s): median {rep['median_seconds']} s"
    )
    load = ", ".join(f"{x:.2f}" for x in rep["load_average"])
    out(f"  {rep['cores']} cores, load average {load} before the runs")
    for i, r in enumerate(rep["runs"], start=1):
        phases = ", ".join(f"{k} {v:.1f} s" for k, v in r["phases"].items())
        checks = ", ".join(f"{k} {v:.1f} s" for k, v in (r["brain_checks"] or {}).items())
        verdict = "ok" if r["ok"] else "FAILED"
        out(
            f"  run {i}: {r['seconds']:.1f} s, {r['cpu_seconds']:.1f} s of CPU ({verdict}): {phases};"
            f" brain checks: {checks}"
        )


@eval_app.command("perf")
def perf(
    saves: int = typer.Option(None, "--saves", help="Time N signed saves against their bare parts."),
    recall_n: int = typer.Option(None, "--recall", help="Time recalls over a scratch brain of N memories."),
    profile: int = typer.Option(
        0, "--profile", help="Also the N functions with the most own time per operation (0..100)."
    ),
    cold: int = typer.Option(
        None,
        "--cold",
        help="Time N cold starts of `aimos save`, `aimos recall` and `aimos --help` (1..100).",
    ),
    json_out: bool = json_option("the report"),
) -> None:
    """Time signed saves, recalls and cold starts.

    Signed-save cost against its bare parts (--saves N), recall latency (--recall N), or cold
    starts of the command line (--cold N)."""
    from aimos.errors import UsageError
    from aimos.eval.perf import run_perf, run_recall_perf

    if not 0 <= profile <= 100:
        raise UsageError("--profile must be between 0 and 100 functions")
    if cold is not None:
        _cold_perf(cold, json_out)
        return
    if recall_n is not None:
        if not 10 <= recall_n <= 1_000_000:
            raise UsageError("--recall must be between 10 and 1,000,000 memories")
        rep = _purging(lambda: run_recall_perf(recall_n, profile=profile), json_out)
        if rep is None:
            return
        built = f"built in {rep['build_seconds']} s"
        out(f"recall over {rep['memories']:,} memories ({built}), {rep['recalls']} recalls")
        for name in ("recall", "recall_unbounded", "recall_meaning", "cold_help", "cold_recall"):
            s = rep[name]
            out(f"  {name:<17} median {s['median_ms']:>9.2f} ms   p95 {s['p95_ms']:>9.2f} ms")
        print_meaning_cost(rep["meaning"], rep["load_average"])
        found = rep["known_item_found"]
        out(
            f"  unbounded / bounded p95 {rep['ratio_unbounded_to_recall_p95']:.2f}x; the memory the query"
            f" came from in the top 10: {found['recall']:.1%} bounded,"
            f" {found['recall_unbounded']:.1%} unbounded"
        )
        out("  share of recall time: " + ", ".join(f"{k} {v:.1%}" for k, v in rep["share"].items()))
        w = rep["withheld_check_per_memory"]
        out(f"  each withheld memory's checks add: median {w['median_ms']:.2f} ms, p95 {w['p95_ms']:.2f} ms")
        t = rep["targets"]
        say_targets(
            [
                judge("recall median", rep["recall"]["median_ms"], t["recall_median_ms"], " ms"),
                judge("recall p95", rep["recall"]["p95_ms"], t["recall_p95_ms"], " ms"),
                judge("cold --help median", rep["cold_help"]["median_ms"], t["help_ms"], " ms"),
                judge("cold recall median", rep["cold_recall"]["median_ms"], t["cold_recall_ms"], " ms"),
                judge(
                    "meaning adds (median)",
                    rep["meaning"]["added_median_ms"],
                    t["meaning_added_median_ms"],
                    " ms",
                ),
            ]
        )
        print_profile(rep.get("profile"), "recall")
        return
    saves = 1000 if saves is None else saves
    if not 1 <= saves <= 1_000_000:
        raise UsageError("--saves must be between 1 and 1,000,000")
    report = _purging(lambda: run_perf(saves, profile=profile), json_out)
    if report is None:
        return
    out(f"signed save x{saves} (scratch brain, {report['keystore']} keystore)")
    for name in ("signed_save", "bare_sign", "bare_verify", "bare_durable_commit"):
        s = report[name]
        out(f"  {name:<22} median {s['median_ms']:>9.4f} ms   p95 {s['p95_ms']:>9.4f} ms")
    out(f"  bare parts (sum of medians)   {report['bare_parts_median_ms']:.4f} ms")
    out(f"  ratio signed save / bare parts  {report['ratio_save_to_bare_parts']:.3f}")
    d = report["detector_after_save"]
    out(
        f"  agreement detector, after the save answered: median {d['median_ms']:.4f} ms"
        f"   p95 {d['p95_ms']:.4f} ms per memory (epistemic.detect.judge_pending)"
    )
    print_sealing(report["sealing"], "save")
    print_profile(report.get("profile"), "save")
    say_targets(
        [
            judge("signed save median", report["signed_save"]["median_ms"], report["target_ms"], " ms"),
            judge(
                "signed save / bare parts", report["ratio_save_to_bare_parts"], report["target_ratio"], "x"
            ),
        ]
    )


def _cold_perf(runs: int, json_out: bool) -> None:
    from aimos.errors import UsageError
    from aimos.eval.perf import run_cold_perf

    if not 1 <= runs <= 100:
        raise UsageError("--cold must be between 1 and 100 runs")
    rep = _purging(lambda: run_cold_perf(runs), json_out)
    if rep is None:
        return
    out(f"cold command line x{rep['runs']} each: new processes; brains of {rep['memories']} memories")
    labels = {
        "bare": f"bare `python -c '{rep['baseline']}'`",
        "help": "aimos --help",
        "save_file": "aimos save (keys in aimos's files)",
        "recall_file": "aimos recall (keys in aimos's files)",
        "save_os": "aimos save (keys in the OS keychain)",
        "recall_os": "aimos recall (keys in the OS keychain)",
        "recall_socket": "aimos recall, the housekeeper's model (socket)",
        "recall_model": "aimos recall, loading the model itself",
        "recall_words": "aimos recall, words only (AIMOS_MEANING=off)",
    }
    for name, s in rep["commands"].items():
        ratio = f"   {rep['ratio_to_bare'][name]:.2f}x bare" if name != "bare" else ""
        cpu = rep["cpu"][name]["median_ms"]
        out(
            f"  {labels[name]:<48} median {s['median_ms']:>8.1f} ms   p95 {s['p95_ms']:>8.1f} ms"
            f"   cpu {cpu:>6.1f} ms{ratio}"
        )
    if rep["meaning_note"]:
        out(f"  {rep['meaning_note']}")
    t, c = rep["targets"], rep["commands"]
    goals = {
        "save_file": t["save_median_ms"],
        "save_os": t["save_median_ms"],
        "recall_file": t["recall_median_ms"],
        "recall_os": t["recall_median_ms"],
        "recall_words": t["recall_median_ms"],
        "recall_socket": t["recall_socket_median_ms"],
        "recall_model": t["recall_model_median_ms"],
    }
    say_targets(
        [judge(f"{labels[n]}, median", c[n]["median_ms"], goal, " ms") for n, goal in goals.items() if n in c]
    )
    load = ", ".join(f"{x:.2f}" for x in rep["load_average"])
    out(f"  load average at the end: {load} ({rep['cores']} cores)")


@eval_app.command("storage")
def storage(
    memories: int = _scratch_memories(10_000),
    recalls: int = typer.Option(200, "--recalls", help="Recalls after the memories (1..100,000)."),
    outcomes: int = typer.Option(200, "--outcomes", help="Outcomes about what they disclosed (1..100,000)."),
    json_out: bool = json_option("the report"),
) -> None:
    """Measure where a brain's bytes go.

    Where a brain's bytes go: per memory, per recall and per outcome, table by table, and the
    time verification takes, on a scratch brain."""
    from aimos.errors import UsageError
    from aimos.eval.storage import run_storage

    if not 100 <= memories <= 1_000_000:
        raise UsageError("--memories must be between 100 and 1,000,000")
    for name, value in (("--recalls", recalls), ("--outcomes", outcomes)):
        if not 1 <= value <= 100_000:
            raise UsageError(f"{name} must be between 1 and 100,000")
    rep = _purging(lambda: run_storage(memories, recalls, outcomes), json_out)
    if rep is None:
        return
    out(
        f"storage over {rep['memories']:,} memories, {rep['recalls']} recalls, {rep['outcomes']} outcomes"
        f" ({rep['transitions']} weight transitions); brain file {rep['brain_file_bytes']:,} bytes"
    )
    out(f"  file bytes per memory  {rep['file_bytes_per_memory']:,.1f}")
    for name in ("per_memory", "per_recall", "per_outcome"):
        part = rep[name]
        out(f"  {name:<12} stored {part['stored']:>9,.1f} B   payload {part['payload']:>9,.1f} B")
        for table, v in list(part["tables"].items())[:6]:
            out(f"      {table:<28} stored {v['stored']:>9,.1f} B   payload {v['payload']:>9,.1f} B")
    verdict = "ok" if rep["verify_ok"] else "FAILED"
    out(f"  verify (both verifiers, parity, brain checks): {rep['verify_seconds']:.2f} s ({verdict})")
    t = rep["targets"]
    at_size = rep["verify_seconds"] if rep["memories"] >= 100_000 else None
    say_targets(
        [
            judge("stored per memory", rep["per_memory"]["stored"], t["bytes_per_memory"], " B"),
            # each outcome a weight transition or not: the outcome's bytes stand for the transition's
            judge("stored per outcome", rep["per_outcome"]["stored"], t["bytes_per_transition"], " B"),
            judge("verify at 100,000 memories", at_size, t["verify_seconds_at_100000"], " s"),
        ]
    )


@eval_app.command("age")
def age(
    memories: int = typer.Option(20_000, "--memories", help="Memories saved in the year (10..1,000,000)."),
    recalls: int = typer.Option(
        20_000, "--recalls", help="Recalls, interleaved with the saves (1..1,000,000)."
    ),
    outcomes: int = typer.Option(
        None, "--outcomes", help="Outcomes on what recalls disclosed (default: a fifth of the recalls)."
    ),
    judgments: int = typer.Option(
        None, "--judgments", help="A person's judgments of memories (default: one in 100 memories)."
    ),
    imported: int = typer.Option(
        None,
        "--imported",
        help="Of the memories, how many come by `aimos import` of markdown notes (default: a tenth).",
    ),
    checkpoint: list[int] = typer.Option(
        None, "--checkpoint", help="Brain sizes to measure at (repeatable; default 1000 5000 20000)."
    ),
    window: int = typer.Option(500, "--window", help="Saves measured before each checkpoint (1..100,000)."),
    nights: int = typer.Option(12, "--nights", help="Times every housekeeper job runs (0..366)."),
    json_out: bool = json_option("the report"),
) -> None:
    """Live a scaled year of use in a scratch brain.

    A scaled year of use in a scratch brain: saves (an import among them), recalls, outcomes,
    judgments and the housekeeper's jobs through the real signed paths; size, bytes per unit and
    time per operation at checkpoints, verify and backup at the end, beside the bare parts."""
    from aimos.cli.output import phase_progress
    from aimos.eval.age import checkpoints_for, plan_windows, run_age

    outcomes = recalls // 5 if outcomes is None else outcomes
    judgments = memories // 100 if judgments is None else judgments
    imported = memories // 10 if imported is None else imported
    _age_limits(memories, recalls, outcomes, judgments, imported, window, nights)
    marks = checkpoints_for(memories, checkpoint)
    plan_windows(marks, window, imported)  # a plan that does not fit is refused before any brain
    shown = phase_progress(memories, "a year")  # on stderr, when a terminal
    rep = _purging(
        lambda: run_age(
            _housekeeping(), memories, recalls, outcomes, judgments, imported, marks, window, nights, shown
        ),
        json_out,
    )
    if rep is None:
        return
    print_age(rep)


def _housekeeping() -> Any:
    """The housekeeper's parts `eval age` runs (the evaluations sit below the housekeeper)."""
    from aimos.eval.age import Housekeeping
    from aimos.housekeeper.jobs import job_specs
    from aimos.housekeeper.jobs.nightly_dream import check_backup, online_backup
    from aimos.housekeeper.runs import run_job

    def night() -> dict[str, dict[str, Any]]:
        import time

        jobs = {}
        for spec in job_specs():
            run = run_job(spec, trigger="schedule", scheduled_for=int(time.time()))
            jobs[spec.name] = {"status": run.status, "ms": run.duration_ms, "error": run.error}
        return jobs

    return Housekeeping(night, online_backup, check_backup)


def _age_limits(
    memories: int, recalls: int, outcomes: int, judgments: int, imported: int, window: int, nights: int
) -> None:
    from aimos.errors import UsageError

    for name, value, low, high in (
        ("--memories", memories, 10, 1_000_000),
        ("--recalls", recalls, 1, 1_000_000),
        ("--outcomes", outcomes, 0, recalls),
        ("--judgments", judgments, 0, memories),
        ("--imported", imported, 0, memories // 2),
        ("--window", window, 1, 100_000),
        ("--nights", nights, 0, 366),
    ):
        if not low <= value <= high:
            raise UsageError(f"{name} must be between {low:,} and {high:,}")


@eval_app.command("mcp")
def mcp_perf(
    calls: int = typer.Option(50, "--calls", help="Calls of each tool per mode (1..10,000)."),
    keystore: str = typer.Option("os", "--keystore", help="os (the default) or file."),
    json_out: bool = json_option("the report"),
) -> None:
    """Time an MCP tool call against its baselines.

    What an MCP tool call costs with the server's keys read once, read at every call, and with
    the brain opened anew at every call (the baseline)."""
    from aimos.errors import UsageError
    from aimos.eval.mcp_bench import run_mcp_perf
    from aimos.identity.keystore import os_keychain_problem

    if not 1 <= calls <= 10_000:
        raise UsageError("--calls must be between 1 and 10,000")
    if keystore not in ("os", "file"):
        raise UsageError(f"unknown keystore {keystore!r}", "Use --keystore os or file.")
    if keystore == "os" and (problem := os_keychain_problem()) is not None:
        raise UsageError(
            f"no OS keychain to measure: {problem.message}", "Run it where one is, or use --keystore file."
        )
    rep = _purging(lambda: run_mcp_perf(calls, keystore), json_out)
    if rep is None:
        return
    from aimos.eval.mcp_bench import MODES

    out(f"MCP tool calls x{rep['calls']} each ({rep['keystore']} keystore), in process; until the answer,")
    out("  and after it (a save's agreement detector, the WAL moved into the brain file)")
    for mode in MODES:
        for call in ("save", "recall"):
            s, a = rep[mode][call], rep[mode][f"{call}_after"]
            out(
                f"  {mode:<13} {call:<7} median {s['median_ms']:>8.2f} ms   p95 {s['p95_ms']:>8.2f} ms"
                f"   after it: median {a['median_ms']:>7.2f} ms"
            )
    out(
        f"  no cache / cache: save {rep['ratio_save_no_cache_to_cache']:.2f}x,"
        f" recall {rep['ratio_recall_no_cache_to_cache']:.2f}x; new session / kept: save"
        f" {rep['ratio_save_new_session_to_cache']:.2f}x,"
        f" recall {rep['ratio_recall_new_session_to_cache']:.2f}x"
    )
    say_targets(
        [
            judge(f"{mode} {call} median", rep[mode][call]["median_ms"], rep["target_ms"], " ms")
            for mode in MODES
            for call in ("save", "recall")
        ]
    )


@eval_app.command("tui")
def tui_perf(
    memories: int = _scratch_memories(100_000),
    runs: int = typer.Option(5, "--runs", help="Cold first-paint runs (1..50)."),
    json_out: bool = json_option("the report"),
) -> None:
    """Time the TUI's first paint and page loads.

    Time to first paint of `aimos tui` and to load a page while scrolling, on a scratch brain."""
    from aimos.errors import UsageError
    from aimos.eval.tui_bench import run_tui_perf

    if not 100 <= memories <= 1_000_000:
        raise UsageError("--memories must be between 100 and 1,000,000")
    if not 1 <= runs <= 50:
        raise UsageError("--runs must be between 1 and 50")
    rep = _purging(lambda: run_tui_perf(memories, runs), json_out)
    if rep is None:
        return
    out(
        f"aimos tui over {rep['memories']:,} memories"
        f" ({rep['brain_mb']} MB, built in {rep['build_seconds']} s)"
    )
    for name in (
        "first_paint",
        "import_app",
        "cli_list_20",
        "cli_list_filtered",
        "press_with_fetch",
        "press_cached",
        "open_memory",
        "filter",
    ):
        s = rep[name]
        if s is not None:
            out(f"  {name:<18} median {s['median_ms']:>9.2f} ms   p95 {s['p95_ms']:>9.2f} ms   n {s['n']}")
    out(f"  jump to the end    {rep['jump_to_end_ms']:.2f} ms over {rep['rows']:,} rows")
    out(f"  filter {rep['filter_word']!r} matched {rep['filter_matches']:,}")
    out(f"  first paint / `aimos list -n 20`  {rep['ratio_first_paint_to_cli_list']:.2f}")
    say_targets(
        [judge("first paint median", rep["first_paint"]["median_ms"], rep["target_first_paint_ms"], " ms")]
    )


@eval_app.command("locomo")
def locomo(
    data: str = _LOCOMO_DATA,
    k: list[int] = typer.Option(None, "-k", help="Cut-offs (repeatable); default 5 10 20 25."),
    json_out: bool = json_option("the report"),
    folds: bool = typer.Option(
        False,
        "--folds",
        help="Also validate recall's settings (the lexical channel's and its fusion with meaning) across "
        "conversations: choose on some, measure on the others (a few minutes more).",
    ),
) -> None:
    """Measure turn-level retrieval on LoCoMo.

    Turn-level retrieval on LoCoMo in scratch brains: aimos with meaning and by words alone,
    beside a plain FTS5 BM25 baseline."""
    from pathlib import Path

    from aimos.eval.locomo import ARMS, DEFAULT_KS, run_locomo

    report = _purging(
        lambda: run_locomo(Path(data) if data else None, tuple(k) if k else DEFAULT_KS, folds=folds), json_out
    )
    if report is None:
        return
    c = report["counts"]
    out(
        f"LoCoMo {report['data']}: {c['conversations']} conversations, {c['turns']} turns, "
        f"{c['questions']} questions ({c['skipped_no_evidence']} without resolvable evidence skipped), "
        f"{report['seconds']} s"
    )
    say_meaning(report["meaning"])
    ks = report["ks"]
    headers = (
        ["arm / slice", "hit@1", "mrr"]
        + [f"any@{x}" for x in ks]
        + [f"rec@{x}" for x in ks]
        + [f"ndcg@{x}" for x in ks]
    )
    lines = []
    for arm in ARMS:
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
    overall = report["aimos"]["overall"]
    say_targets(
        [
            judge(f"aimos overall {name}", overall.get(name), goal, at_least=True)
            for name, goal in report["targets"].items()
        ]
    )
    if "folds" in report:
        print_folds("the lexical channel's settings", report["folds"]["lexical"], max(ks))
        if report["folds"]["fusion"] is not None:
            print_folds("the fusion of words and meaning", report["folds"]["fusion"], max(ks))


@eval_app.command("meaning")
def meaning(
    data: str = typer.Option(
        None, "--data", help="A probe file of the same form (default: the probe aimos ships)."
    ),
    json_out: bool = json_option("the report"),
) -> None:
    """Measure recall of memories asked for in other words.

    Personal memories asked for in other words, among distractors that share the question's
    words, and questions nothing answers: by words alone and with meaning, in a scratch brain."""
    from pathlib import Path

    from aimos.eval.meaning import load_probe, run_meaning

    path = Path(data) if data else None
    load_probe(path)  # a wrong file is refused before any brain is built
    report = _purging(lambda: run_meaning(path), json_out)
    if report is None:
        return
    from aimos.cli.output import table

    arms = report["arms"]
    first = next(iter(arms.values()))
    out(
        f"meaning probe {report['data']}: {report['memories']} memories, {first['answerable']} answerable"
        f" and {first['unanswerable']} unanswerable questions, {report['seconds']} s"
    )
    say_meaning(report["meaning"])
    names = ("hit@1", "hit@3", "mrr", "false_abstention", "abstention")
    labels = {"meaning_alone": "channels: recall's fusion, the words' results left out"}
    lines = [
        [labels.get(arm, f"signed recall: {arm}"), *(f"{m[n]:.4f}" for n in names)] for arm, m in arms.items()
    ]
    for row in report["settings"]:
        s = row["setting"]
        label = ", ".join(f"{key}={value:g}" for key, value in s.items())
        mark = " (default)" if s == report["default"] else ""
        lines.append([f"channels: {label}{mark}", *(f"{row[n]:.4f}" for n in names)])
    out(table(["arm / fusion setting", "hit@1", "hit@3", "mrr", "false abst.", "abstention"], lines))
    for arm, missed in report["misses"].items():
        if missed:
            out(f"  {arm}: not first or not abstained: " + "; ".join(missed))


@eval_app.command("secrets")
def secrets(
    data: str = _LOCOMO_DATA,
    json_out: bool = json_option("the report"),
) -> None:
    """Measure what the secret gate catches and wrongly stops.

    The secret gate: false positives on LoCoMo, the guides and PoisonedRAG; secret shapes caught."""
    from pathlib import Path

    from aimos.eval.secrets import run_secrets

    report = run_secrets(Path(data) if data else None)
    if json_out:
        emit_json(report)
        return
    out(f"false positives: {report['false_positives']} / {report['ordinary_texts']} ordinary texts")
    for group, g in report["ordinary"].items():
        out(f"  {group:<24} {g['false_positives']} / {g['texts']}")
    for fp in report["false_positive_places"]:
        place = f"line {fp['line']}, char {fp['char']}"
        out(f"  FALSE POSITIVE {fp['group']} {fp['where']}: {fp['kind']} at {place}")
    out(f"secret shapes caught: {report['shapes_caught']} / {report['shapes_total']}")
    for kind, k in report["shapes"].items():
        out(
            f"  {'caught' if k['caught'] else 'MISSED':<7} {kind}"
            + (f"  (as {k['as']})" if k["caught"] else "")
        )
    out(f"{report['seconds']} s")


@eval_app.command("mutation")
def mutation(
    transitions: int = typer.Option(200, "--transitions", help="Signed transitions to time (10..100000)."),
    json_out: bool = json_option("the report"),
) -> None:
    """Run the mutation-integrity suite and time a transition.

    The mutation-integrity suite (MutMem 9.2) and the cost of a signed transition."""
    from aimos.errors import UsageError
    from aimos.eval.mutation import run_mutation

    if not 10 <= transitions <= 100_000:
        raise UsageError("--transitions must be between 10 and 100,000")
    report = _purging(lambda: run_mutation(transitions), json_out)
    if report is None:
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
    print_sealing(report["sealing"], "transition")
    tg = report["targets"]
    out(f"  ratio to bare parts {report['ratio_to_bare']:.3f}")
    say_targets(
        [
            judge("signed transition median", t["median_ms"], tg["median_ms"], " ms"),
            judge("signed transition p95", t["p95_ms"], tg["p95_ms"], " ms"),
            judge("ratio to the bare parts", report["ratio_to_bare"], tg["ratio"], "x"),
            judge("logical bytes a transition", report["logical_bytes_per_transition"], tg["bytes"], " B"),
        ]
    )
    out("all cases as declared" if report["all_as_declared"] else "SOME CASES DIFFER FROM THEIR DECLARATION")


@eval_app.command("poisonedrag")
def poisonedrag(
    dataset: list[str] = typer.Option(
        None, "--dataset", help="PoisonedRAG targets JSON (repeatable; default nq.json and msmarco.json)."
    ),
    limit: int = typer.Option(None, "--limit", min=1, help="Only the first N targets of each dataset."),
    variant: list[str] = typer.Option(
        None,
        "--variant",
        help="An attack variant or clean control to run (repeatable; default all): question_prefix, "
        "paraphrase, capitalized, capitalized_dot, declarative, spread_sources, no_number, adaptive, "
        "honest_same_shape, honest_paraphrase.",
    ),
    no_paraphrase: bool = typer.Option(False, "--no-paraphrase", help="Skip the paraphrase variant."),
    verify_brains: int = typer.Option(
        1, "--verify-brains", min=0, help="Attack brains per variant and dataset run through both verifiers."
    ),
    turns: int = typer.Option(
        None, "--turns", min=1, help="Only the first N LoCoMo turns in the clean corpus (quick runs)."
    ),
    no_reference_turns: bool = typer.Option(
        False, "--no-reference-turns", help="Skip the turns-saved-as-reference-documents measurement."
    ),
    json_out: bool = json_option("the report"),
) -> None:
    """Measure PoisonedRAG poisoning in scratch brains.

    PoisonedRAG poisoning and its variants in scratch brains: poison in top-5 with the policy
    bypassed, with labels, and with labels and the recall-time rules (query-lure, agreement check);
    honest controls."""
    from pathlib import Path

    from aimos.eval.poisonedrag import chosen_variants, load_targets, run_poisonedrag

    paths = [Path(d) for d in dataset] if dataset else None
    for p in paths or []:
        load_targets(p)  # a wrong file is refused before any brain is built
    chosen = chosen_variants(variant, paraphrase=not no_paraphrase)  # an unknown one is refused here too
    report = _purging(
        lambda: run_poisonedrag(
            paths,
            limit=limit,
            variants=chosen,
            reference_turns=not no_reference_turns,
            verify_per_variant=verify_brains,
            clean_turns=turns,
        ),
        json_out,
    )
    if report is None:
        return
    print_poisonedrag(report)


@eval_app.command("sync")
def sync_perf(
    hub: str = typer.Option(
        ...,
        "--hub",
        help="An empty PostgreSQL database to use as the hub (postgresql://...); the scratch "
        "brains stay in it.",
    ),
    memories: int = _scratch_memories(10_000),
    json_out: bool = json_option("the report"),
) -> None:
    """Measure how fast a brain moves through a hub.

    Puts a scratch brain on the hub (every row pushed, encrypted), joins it from a second scratch
    home (every record pulled, verified and sealed), then syncs a hundred more saves: memories per
    second each way and the bytes the hub holds per memory."""
    from aimos.errors import UsageError
    from aimos.eval.sync import run_sync_eval, targets
    from aimos.store.postgres import check_url

    check_url(hub)
    if not 100 <= memories <= 1_000_000:
        raise UsageError("--memories must be between 100 and 1,000,000")
    rep = _purged_report(lambda: run_sync_eval(hub, memories))
    if json_out:
        emit_json({**rep, "targets": [v.line() for v in targets(rep)]})
        return
    p, j, m = rep["push"], rep["join"], rep["more"]
    out(f"sync through a hub: {rep['memories']:,} memories (built in {rep['build_seconds']} s)")
    out(
        f"  push (hub init)  {p['records']:,} records, {p['bytes']:,} bytes"
        f" ({p['bytes_per_memory']:,} per memory) in {p['seconds']} s:"
        f" {p['memories_per_second']:,} memories/s"
    )
    out(
        f"  join (pull)      {j['records']:,} records in {j['seconds']} s:"
        f" {j['memories_per_second']:,} memories/s"
    )
    out(
        f"  {m['memories']} more saves: pushed {m['pushed']} records in {m['push_seconds']} s,"
        f" pulled {m['pulled']} in {m['pull_seconds']} s"
    )
    out(f"  {rep['cores']} cores, load average {', '.join(str(x) for x in rep['load_average'])}")
    say_targets(targets(rep))
