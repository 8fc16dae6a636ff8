"""`aimos agent enroll | rotate | revoke | list`: agent epochs and their master-signed grants."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from aimos.cli.options import PASSPHRASE_FD, VALIDITY_DAYS, json_option
from aimos.cli.output import emit_json, out, say, table
from aimos.vocabulary import DEFAULT_GRANT_DATA_CLASS, EXPIRY_WARNING_DAYS

if TYPE_CHECKING:
    from aimos.identity.signer import Signer

agent_app = typer.Typer(
    help="Enrol, rotate, revoke and list agent identities.", no_args_is_help=True, rich_markup_mode=None
)


@agent_app.command("enroll")
def enroll(
    agent_id: str = typer.Argument(..., help="Agent id: 1-64 letters, digits, '_' or '-'."),
    validity_days: int = VALIDITY_DAYS,
    clearance: int = typer.Option(10, "--clearance", help="Clearance ceiling, 0..10."),
    data_class: str = typer.Option(DEFAULT_GRANT_DATA_CLASS, "--data-class", help="Data-class ceiling."),
    read_only: bool = typer.Option(False, "--read-only", help="Recall only; no saves."),
    passphrase_fd: int = PASSPHRASE_FD,
    json_out: bool = json_option(),
) -> None:
    """Enrol a new agent with a master-signed grant.

    The agent gets a master-issued epoch certificate and a master-signed grant."""
    from aimos.actions.agents import Enrolment

    enrol(Enrolment(agent_id, validity_days, clearance, data_class, not read_only), passphrase_fd, json_out)


def enrol(enrolment: Any, passphrase_fd: int | None, json_out: bool) -> None:
    """`aimos agent enroll` and `aimos install --add-agent`: sign the enrolment, print the result."""
    from aimos.actions import agents
    from aimos.actions.session import open_brain
    from aimos.crypto.encoding import iso_ms

    enrolment.checked()
    with open_brain(write=True) as brain:
        master = brain.master(passphrase_fd, "enrol an agent")
        signer, grant = agents.enroll(brain, master, enrolment)
    result = {
        "agent_id": enrolment.agent_id,
        "valid_from": iso_ms(signer.valid_from),
        "valid_until": iso_ms(signer.valid_until),
        "cert_fingerprint": signer.cert_fingerprint,
        "grant_mutation_hash": grant["mutation_hash"],
    }
    if json_out:
        emit_json(result)
    else:
        out(
            f"enrolled {enrolment.agent_id}: valid until {result['valid_until']}, "
            f"clearance <= {enrolment.clearance}, data class <= {enrolment.data_class}"
            f"{'' if enrolment.write_allowed else ', read-only'}"
        )


@agent_app.command("rotate")
def rotate(
    agent_id: str = typer.Argument(None, help="The agent to give a new epoch."),
    expiring: bool = typer.Option(
        False, "--expiring", help="Rotate every agent whose epoch ends within --within days (or has ended)."
    ),
    within: int = typer.Option(
        EXPIRY_WARNING_DAYS, "--within", metavar="DAYS", help="With --expiring: how many days ahead."
    ),
    validity_days: int = typer.Option(
        None, "--validity-days", help="Validity of the new epoch (default: as long as the old one's)."
    ),
    passphrase_fd: int = PASSPHRASE_FD,
    json_out: bool = json_option(),
) -> None:
    """Give an agent a new key and epoch, with the same grant.

    New key and epoch for an agent (or every one about to expire, with one passphrase), same
    grant ceilings; the old epoch is revoked."""
    from aimos.actions import agents
    from aimos.actions.session import open_brain
    from aimos.errors import UsageError
    from aimos.identity.validators import check_validity_days

    if (agent_id is None) == (not expiring):
        raise UsageError(
            "say which agent to rotate", "Name one (`aimos agent rotate AGENT`) or use --expiring, not both."
        )
    if validity_days is not None:
        check_validity_days(validity_days)
    with open_brain(write=True) as brain:
        due = [d.agent_id for d in agents.due(brain, within)] if expiring else [agent_id]
        if not due:  # nothing to sign: no passphrase asked for
            if json_out:
                emit_json([])
            else:
                out(f"no agent's epoch ends within {within} days: nothing to rotate")
            return
        master = brain.master(passphrase_fd, "rotate " + ("the expiring agents" if expiring else "an agent"))
        done = []
        for agent in due:
            signer, grant, revoked = agents.rotate(brain, master, agent, validity_days)
            done.append(_rotated(agent, signer, grant, revoked, json_out))
    if json_out:
        emit_json(done if expiring else done[0])


def _rotated(
    agent_id: str, signer: Signer, grant: dict[str, Any], revoked: bool, json_out: bool
) -> dict[str, Any]:
    """One rotation's result; printed at once unless the results go out as JSON at the end."""
    from aimos.crypto.encoding import iso_ms

    result = {
        "agent_id": agent_id,
        "valid_from": iso_ms(signer.valid_from),
        "valid_until": iso_ms(signer.valid_until),
        "previous_epoch_revoked": revoked,
        "grant_mutation_hash": grant["mutation_hash"],
    }
    if not json_out:
        out(
            f"rotated {agent_id}: new epoch valid until {result['valid_until']}"
            + ("; the previous epoch is revoked" if revoked else "")
        )
    return result


@agent_app.command("revoke")
def revoke(
    agent_id: str = typer.Argument(..., help="The agent whose current epoch to revoke."),
    reason: str = typer.Option("revoked by the owner", "--reason", help="Why (kept in the signed record)."),
    passphrase_fd: int = PASSPHRASE_FD,
    json_out: bool = json_option(),
) -> None:
    """Revoke an agent's current epoch, signed by the master."""
    from aimos.actions import agents
    from aimos.actions.session import open_brain

    with open_brain(write=True) as brain:
        agents.require_revocable(brain, agent_id, reason)
        master = brain.master(passphrase_fd, "revoke an agent")
        record = agents.revoke(brain, master, agent_id, reason)
    if json_out:
        emit_json({k: record[k] for k in ("revocation_id", "agent_id", "revoked_at", "mutation_hash")})
    else:
        out(f"revoked {agent_id}'s current epoch; requests it signs from now on are refused")
        say(f"To give it a new key: aimos agent rotate {agent_id}")


@agent_app.command("list")
def list_agents(json_out: bool = json_option(None)) -> None:
    """List agents and the housekeeper, with state and grant.

    Each identity epoch: the agents' and the housekeeper's, with its state and grant."""
    from aimos.actions import agents
    from aimos.actions.session import open_brain

    with open_brain(write=False) as brain:
        listing = agents.listing(brain)
        warnings = agents.expiry_warnings(brain)
    if json_out:
        emit_json(listing)
    else:
        _print_listing(listing)
    for warning in warnings:
        say(warning)


def _print_listing(listing: list[dict[str, Any]]) -> None:
    out(
        table(
            ["agent", "role", "state", "valid from", "valid until", "grant"],
            [
                [
                    e["agent_id"],
                    e["role"],
                    e["state"],
                    e["valid_from"][:19],
                    e["valid_until"][:19],
                    "-"
                    if e["grant"] is None
                    else f"clearance<={e['grant']['clearance_ceiling']} {e['grant']['data_class_ceiling']}"
                    + ("" if e["grant"]["write_allowed"] else " read-only"),
                ]
                for e in listing
            ],
        )
    )
