"""`aimos eval ...`: benchmarks and evaluations in scratch brains (never the user's brain)."""

from __future__ import annotations

import typer

from aimos.cli.output import emit_json, out

eval_app = typer.Typer(help="Benchmarks and evaluations, in scratch brains.", no_args_is_help=True)


@eval_app.command("perf")
def perf(
    saves: int = typer.Option(1000, "--saves", help="Number of signed saves to time."),
    json_out: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Median and p95 of a signed save against its bare parts (sign, verify, durable commit)."""
    from aimos.errors import UsageError
    from aimos.eval.perf import run_perf

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
