"""`aimos status`: the brain, its keystore, identities and counts (no passphrase needed)."""

from __future__ import annotations

from typing import Any

import typer

from aimos.cli.options import json_option
from aimos.cli.output import emit_json, line, out, say, table, when
from aimos.vocabulary import HOUSEKEEPER


def register(app: typer.Typer) -> None:
    @app.command("status")
    def status(json_out: bool = json_option(None)) -> None:
        """Show the brain, its keys, counts and housekeeper.

        Show the brain, keystore, master fingerprint, counts, housekeeper and identities."""
        from aimos.housekeeper.brain_status import status_report

        report = status_report()
        if json_out:
            emit_json(report)
        else:
            _print(report)
        for warning in report["expiry_warnings"]:
            say(warning)
        _refuse_damaged(report)


def _print(report: dict[str, Any]) -> None:
    """The report as `aimos status` prints it (the warnings follow on stderr)."""
    out(f"brain        {report['brain_name']} ({report['brain_id']})")
    out(f"path         {report['brain_path']}")
    out(f"company      {report['company_id']}")
    out(f"schema       {report['schema_version']}")
    out(f"keystore     {line(report['keystore']['detail'])}")
    out(f"master       {report['master_fingerprint']}")
    out("counts       " + ", ".join(f"{k} {v}" for k, v in report["counts"].items()))
    root = report["last_corpus_root"]
    attested = f"{root['corpus_proof_root']} (attested {when(root['computed_at'])})" if root else None
    out("corpus root  " + (attested or "none yet (the nightly job attests one)"))
    out("verify       " + _last_verify(report["last_verify"]))
    out(f"meaning      {line(report['meaning']['text'])}")
    fresh = report["freshness"]
    out(f"freshness    {fresh['state']}: {line(fresh['detail'])}")
    if report["identities_problem"]:
        out(f"identities   FAILED: {line(report['identities_problem'])}")
    out("")
    from aimos.cli.housekeeper_cmds import print_readiness

    print_readiness(report[HOUSEKEEPER])
    out("")
    out(
        table(
            ["identity", "role", "state", "valid until"],
            [[e["agent_id"], e["role"], e["state"], e["valid_until"][:19]] for e in report["identities"]],
        )
    )


def _last_verify(outcome: dict[str, Any] | None) -> str:
    """The newest full verification: FAILED with what it found and the fix, or when it passed."""
    from aimos.verify.brain.outcome import FIX, outcome_text

    if outcome is None:
        return "none yet (the nightly job runs one; `aimos verify` runs one now)"
    if outcome["ok"]:
        return f"ok: {line(outcome_text(outcome))}"
    return f"FAILED: {line(outcome_text(outcome))}: {FIX}"


def _refuse_damaged(report: dict[str, Any]) -> None:
    """After the report: a brain behind its anchor, or with identity rows that do not verify,
    exits 5 with the fix."""
    from aimos.errors import IntegrityError

    fresh = report["freshness"]
    if fresh["state"] in ("brain_rolled_back", "brain_history_mismatch"):
        raise IntegrityError(
            f"this brain is not the newest one aimos wrote here: {fresh['detail']}",
            "If you put an older copy or a backup back on purpose, `aimos restore BACKUP` does it with a "
            "signed record; otherwise put the newer brain file back. `aimos verify` shows the details.",
            reason=fresh["state"],
        )
    if report["identities_problem"]:
        raise IntegrityError(
            f"the brain's identity rows do not verify: {report['identities_problem']}",
            "Run `aimos verify` for details, then `aimos restore BACKUP`.",
            reason="identities_invalid",
        )
