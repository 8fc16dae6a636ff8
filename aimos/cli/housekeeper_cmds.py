"""`aimos housekeeper run|start|stop|status|run-job`: the scheduler of the housekeeper's jobs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from aimos.cli.options import PASSPHRASE_FD, json_option
from aimos.cli.output import emit_json, line, out, readable, say, table, when
from aimos.vocabulary import HOUSEKEEPER

housekeeper_app = typer.Typer(
    help="Run and watch the housekeeper and its jobs.\n\nThe housekeeper: five scheduled jobs, each on the"
    " signed record.",
    no_args_is_help=True,
)


def _require_brain() -> None:
    from aimos.actions.session import require_brain

    require_brain()


def print_readiness(report: dict[str, Any]) -> None:
    service = report["service"]
    manager = f" via {service['manager']}" if service else ""
    if report["running"]:
        ready = "ready" if report["ready"] else "NOT ready"
        out(f"housekeeper  running{manager} (pid {report['pid']}), {ready}")
    else:
        out(f"housekeeper  not running{manager}")
        say("Start the housekeeper with: aimos housekeeper start")
    out(f"jobs         {report['jobs_registered']} of {len(report['jobs'])} registered")
    rows = []
    for job in report["jobs"]:
        last = job["last_run"]
        rows.append(
            [
                job["name"],
                "yes" if job["registered"] else "no",
                when(last["finished_at"]) if last else "never",
                last["status"] if last else "-",
                when(job["next_run"]),
            ]
        )
    out(table(["job", "registered", "last run", "result", "next run"], rows))


def register(app: typer.Typer) -> None:
    app.add_typer(housekeeper_app, name=HOUSEKEEPER)


@housekeeper_app.command("run")
def run_cmd() -> None:
    """Run the housekeeper in the foreground.

    This is what the service runs.

    Ctrl-C or SIGTERM lets the running job finish, then exits."""
    from aimos.housekeeper.scheduler import Housekeeper

    _require_brain()
    raise typer.Exit(Housekeeper().run())


@housekeeper_app.command("run-job")
def run_job_cmd(
    name: str = typer.Argument(
        ..., help="heartbeat, bottleneck-scan, nightly-dream, weekly-assessment or weekly-audit."
    ),
    json_out: bool = json_option("the run"),
) -> None:
    """Run one job now, on the signed record.

    Exit 1 when the job fails."""
    from aimos.errors import AimosError
    from aimos.housekeeper.jobs import job_spec
    from aimos.housekeeper.runs import run_job

    spec = job_spec(name)
    _require_brain()
    run = run_job(spec, trigger="manual")
    if json_out:
        emit_json(run.to_json())
    else:
        from aimos.actions.labels import label_short

        out(f"{run.job}  {run.status}  {run.duration_ms} ms  (run {run.run_id})")
        for key, value in run.result.items():
            if key == "labels" and isinstance(value, dict):  # the audit's count of each label
                value = {label_short(str(label)): n for label, n in value.items()}
            out(f"  {key}: {line(readable(value))}")
    for item in run.attention:
        say(f"attention: {line(item)}")
    if run.status == "FAILED":
        raise AimosError(f"the {run.job} job failed: {run.error}", "The signed terminal event records it.")


def _service_step(
    step: Callable[[], dict[str, Any]], json_out: bool, words: Callable[[dict[str, Any]], str]
) -> None:
    """Start or stop the installed brain's housekeeper: its result as JSON, or in ``words``."""
    _require_brain()
    result = step()
    if json_out:
        emit_json(result)
    else:
        out(words(result))


@housekeeper_app.command("start")
def start_cmd(json_out: bool = json_option(None)) -> None:
    """Start the housekeeper (exit 7 when it already runs)."""
    from aimos.installer.service import start

    _service_step(
        start,
        json_out,
        lambda started: (
            f"housekeeper started via {started['manager']} (pid {started['pid']}), 5 jobs registered"
        ),
    )


@housekeeper_app.command("stop")
def stop_cmd(json_out: bool = json_option(None)) -> None:
    """Stop the housekeeper once its running job ends.

    Exit 3 when none runs."""
    from aimos.installer.service import stop

    _service_step(stop, json_out, lambda stopped: f"housekeeper stopped (pid {stopped['pid']})")


@housekeeper_app.command("rotate-key")
def rotate_key_cmd(
    passphrase_fd: int = PASSPHRASE_FD,
    json_out: bool = json_option(),
) -> None:
    """Give the housekeeper a new key and epoch.

    New housekeeper key and epoch (master passphrase), for a key that may have leaked.

    The old epoch is revoked in the same step; what it signed before stays verifiable. Also
    brings back a brain whose housekeeper an older aimos let `aimos agent revoke` revoke."""
    from aimos.actions import agents
    from aimos.actions.session import open_brain
    from aimos.crypto.encoding import iso_ms

    _require_brain()
    with open_brain(write=True) as brain:
        agents.require_housekeeper(brain)
        master = brain.master(passphrase_fd, "rotate the housekeeper's key")
        rotation = agents.rotate_housekeeper(brain, master)
    result = {
        "agent_id": HOUSEKEEPER,
        "valid_from": iso_ms(rotation.signer.valid_from),
        "cert_fingerprint": rotation.signer.cert_fingerprint,
        "key_fingerprint": rotation.signer.key.fingerprint,
        "previous_valid_from": iso_ms(rotation.previous["valid_from"]),
        "previous_epoch_revoked": rotation.revoked_now,
        "grant_mutation_hash": rotation.grant["mutation_hash"] if rotation.grant else None,
    }
    if json_out:
        emit_json(result)
        return
    out(f"rotated the housekeeper's key: new epoch valid from {result['valid_from']}")
    out(
        "the previous epoch is revoked"
        if rotation.revoked_now
        else "the previous epoch was already revoked (by an older aimos); writes work again"
    )
    say("Check the brain with: aimos verify")


@housekeeper_app.command("status")
def status_cmd(json_out: bool = json_option(None)) -> None:
    """Show whether it runs, and each job's runs.

    Running or not; each job's last run, its result and its next run."""
    from aimos.housekeeper.scheduler import readiness

    _require_brain()
    report = readiness()
    if json_out:
        emit_json(report)
    else:
        print_readiness(report)
