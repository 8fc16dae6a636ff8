"""Options several commands share, defined once so they read and behave the same everywhere."""

from __future__ import annotations

from typing import Any

import typer

from aimos.vocabulary import CLI_AGENT, DEFAULT_VALIDITY_DAYS, EXPIRY_WARNING_DAYS, MAX_VALIDITY_DAYS


def json_option(what: str | None = "the result") -> Any:
    """`--json`: print ``what`` as JSON instead of in words (None: "Print as JSON.")."""
    return typer.Option(False, "--json", help="Print as JSON." if what is None else f"Print {what} as JSON.")


def signer_option(what: str) -> Any:
    """`--as AGENT`: the enrolled agent that signs ``what`` (default: the CLI's own)."""
    return typer.Option(CLI_AGENT, "--as", help=f"The enrolled agent that signs {what}.")


PASSPHRASE_FD = typer.Option(
    None, "--passphrase-fd", help="Read the master passphrase from this file descriptor."
)
MEMORY_ID = typer.Argument(..., help="Memory id or a unique prefix of it.")
HISTORY = typer.Option(False, "--history", help="Include superseded versions.")
# a new agent's epoch (install, install --add-agent, agent enroll)
VALIDITY_DAYS = typer.Option(
    DEFAULT_VALIDITY_DAYS,
    "--validity-days",
    help=f"Agent epoch validity, 1..{MAX_VALIDITY_DAYS} days (warned about {EXPIRY_WARNING_DAYS} days "
    "ahead; renew with `aimos agent rotate`).",
)
# how the housekeeper runs on this device (install, hub join)
SERVICE = typer.Option(
    "auto",
    "--service",
    envvar="AIMOS_SERVICE",
    help="How the housekeeper runs: auto, systemd, launchd, process or none (env AIMOS_SERVICE).",
)
NO_SERVICE = typer.Option(False, "--no-service", help="Do not register or start the housekeeper.")
# a verifier's trust anchor: the one given, else the one `aimos install` wrote to anchors.json
ANCHORED_MASTER_FINGERPRINT = typer.Option(
    None, "--master-fingerprint", help="Expected master fingerprint (default: anchors.json)."
)


def _old_option_names(name: str) -> str:
    return "as" if name == "agent" else name


# `--as AGENT` names the signing agent everywhere. save, correct and mcp once spelled it `--agent`:
# a command with these settings still reads `--agent` as `--as`, and its help shows only `--as`.
AGENT_ALIAS = {"token_normalize_func": _old_option_names}
