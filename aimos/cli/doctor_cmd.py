"""`aimos doctor`: one screen of checks of this home, each with its fix; changes nothing."""

from __future__ import annotations

from typing import Any

import typer

from aimos.cli.options import json_option
from aimos.cli.output import emit_json, line, out, say

_HELP = """Check this home: what needs you, and the fix.

The checks: brain, schema (a pending migration), keystore (each key there, none read out),
anchors (the newest seal and the trust anchor), verify (the newest full verification: the nightly
job's or `aimos verify`'s), meaning (whether recall by meaning is on: the pinned embedding model
loads here), agents (epochs ending), housekeeper (running, its last runs), service, nli (the NLI
judge you provide: off, or on with its pinned files matching), disk and permissions. One line
each: ok, warn, fail (or skip, when what it looks at is missing), what it found and, when not ok,
the fix. Doctor reads only: it migrates, writes and starts nothing, and reads out no secret.
`aimos verify` checks every row and signature.

Exit codes: 0 when no check failed (warnings need no one now); when checks fail, their own code
if they agree (3 no brain, 4 the NLI judge's files changed, 5 the brain is damaged or behind its
anchor, 6 a keystore or identity problem), else 1.
"""


def register(app: typer.Typer) -> None:
    @app.command("doctor", help=_HELP)
    def doctor(json_out: bool = json_option(None)) -> None:
        from aimos.actions.doctor import diagnose
        from aimos.housekeeper.doctor import housekeeper_check
        from aimos.installer.service import service_check

        diagnosis = diagnose(housekeeper=housekeeper_check, service=service_check)
        if json_out:
            emit_json(diagnosis.to_json())
        else:
            _print(diagnosis)
        code = diagnosis.exit_code
        if code:
            raise typer.Exit(code)


def _print(diagnosis: Any) -> None:
    width = max(len(c.name) for c in diagnosis.checks)
    for check in diagnosis.checks:
        out(f"{check.status:<4}  {check.name:<{width}}  {line(check.found)}")
        if check.fix and check.status != "ok":
            out(f"{'':<4}  {'':<{width}}  fix: {line(check.fix)}")
    counts = diagnosis.counts()
    failed, warned = counts["fail"], counts["warn"]
    if failed:
        checks = f"{failed} check{'s' if failed != 1 else ''}"
        say(f"{checks} failed: run the fixes above, then `aimos doctor` again")
    elif warned:
        say(f"no check failed; {warned} warning{'s' if warned != 1 else ''} above")
    else:
        say("every check is ok")
    if counts["skip"] < len(diagnosis.checks) - 3:
        say("For every row and signature: aimos verify")
