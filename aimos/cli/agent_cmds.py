"""`aimos agent enroll | rotate | revoke | list`: agent epochs and their master-signed grants."""

from __future__ import annotations

import typer

from aimos.cli.output import emit_json, out, say, table
from aimos.vocabulary import DEFAULT_GRANT_DATA_CLASS

agent_app = typer.Typer(
    help="Enrol, rotate, revoke and list agent identities.", no_args_is_help=True, rich_markup_mode=None
)

_PASS_FD = typer.Option(None, "--passphrase-fd", help="Read the master passphrase from this file descriptor.")


@agent_app.command("enroll")
def enroll(
    agent_id: str = typer.Argument(..., help="Agent id: 1-64 letters, digits, '_' or '-'."),
    validity_days: int = typer.Option(30, "--validity-days", help="Epoch validity, 1..365 days."),
    clearance: int = typer.Option(10, "--clearance", help="Clearance ceiling, 0..10."),
    data_class: str = typer.Option(DEFAULT_GRANT_DATA_CLASS, "--data-class", help="Data-class ceiling."),
    read_only: bool = typer.Option(False, "--read-only", help="Recall only; no saves."),
    passphrase_fd: int = _PASS_FD,
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Enrol a new agent: a master-issued epoch certificate and a master-signed grant."""
    from aimos.actions.session import now, open_brain
    from aimos.crypto.encoding import iso_ms
    from aimos.identity.agents import enroll_agent
    from aimos.identity.epochs import check_agent_id, check_clearance, check_validity_days, data_class_rank

    check_agent_id(agent_id)
    check_validity_days(validity_days)
    check_clearance(clearance, ceiling=10)
    data_class_rank(data_class)
    with open_brain(write=True) as brain:
        master = brain.master(passphrase_fd, "enrol an agent")
        signer, grant = enroll_agent(
            brain.conn,
            master,
            brain.keystore,
            agent_id=agent_id,
            now=now(),
            validity_days=validity_days,
            clearance=clearance,
            data_class=data_class,
            write_allowed=not read_only,
        )
    result = {
        "agent_id": agent_id,
        "valid_from": iso_ms(signer.valid_from),
        "valid_until": iso_ms(signer.valid_until),
        "cert_fingerprint": signer.cert_fingerprint,
        "grant_mutation_hash": grant["mutation_hash"],
    }
    if json_out:
        emit_json(result)
    else:
        out(
            f"enrolled {agent_id}: valid until {result['valid_until']}, clearance <= {clearance}, "
            f"data class <= {data_class}{', read-only' if read_only else ''}"
        )


@agent_app.command("rotate")
def rotate(
    agent_id: str = typer.Argument(..., help="The agent to give a new epoch."),
    validity_days: int = typer.Option(None, "--validity-days", help="Validity of the new epoch."),
    passphrase_fd: int = _PASS_FD,
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """New key and epoch for an agent, same grant ceilings; the old epoch is revoked."""
    from aimos.actions.session import now, open_brain
    from aimos.crypto.encoding import iso_ms
    from aimos.identity.agents import rotate_agent
    from aimos.identity.epochs import check_validity_days

    if validity_days is not None:
        check_validity_days(validity_days)
    with open_brain(write=True) as brain:
        master = brain.master(passphrase_fd, "rotate an agent")
        signer, grant, revoked = rotate_agent(
            brain.conn, master, brain.keystore, agent_id=agent_id, now=now(), validity_days=validity_days
        )
    result = {
        "agent_id": agent_id,
        "valid_from": iso_ms(signer.valid_from),
        "valid_until": iso_ms(signer.valid_until),
        "previous_epoch_revoked": revoked,
        "grant_mutation_hash": grant["mutation_hash"],
    }
    if json_out:
        emit_json(result)
    else:
        out(
            f"rotated {agent_id}: new epoch valid until {result['valid_until']}"
            + ("; the previous epoch is revoked" if revoked else "")
        )


@agent_app.command("revoke")
def revoke(
    agent_id: str = typer.Argument(..., help="The agent whose current epoch to revoke."),
    reason: str = typer.Option("revoked by the owner", "--reason", help="Why (kept in the signed record)."),
    passphrase_fd: int = _PASS_FD,
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Revoke an agent's current epoch with a master-signed revocation."""
    from aimos.actions.session import now, open_brain
    from aimos.identity.agents import revoke_agent
    from aimos.identity.epochs import latest_epoch

    with open_brain(write=True) as brain:
        latest_epoch(brain.conn, agent_id)
        master = brain.master(passphrase_fd, "revoke an agent")
        record = revoke_agent(brain.conn, master, brain.keystore, agent_id=agent_id, reason=reason, now=now())
    if json_out:
        emit_json({k: record[k] for k in ("revocation_id", "agent_id", "revoked_at", "mutation_hash")})
    else:
        out(f"revoked {agent_id}'s current epoch; requests it signs from now on are refused")
        say(f"To give it a new key: aimos agent rotate {agent_id}")


@agent_app.command("list")
def list_agents(json_out: bool = typer.Option(False, "--json", help="Print as JSON.")) -> None:
    """List identity epochs: agents and the housekeeper, with state and grant."""
    from aimos.actions.session import now, open_brain
    from aimos.identity.agents import agent_listing
    from aimos.identity.trusted import check_identities

    with open_brain(write=False) as brain:
        check_identities(brain.conn)  # a deleted revocation must not list a revoked agent as active
        listing = agent_listing(brain.conn, now())
    if json_out:
        emit_json(listing)
        return
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
