"""`aimos hub init|join|status` and `aimos sync`: one brain on several devices, through a
PostgreSQL hub the person runs (the extra aimos[hub])."""

from __future__ import annotations

import sys
from typing import Any

import typer

from aimos.cli.options import NO_SERVICE, PASSPHRASE_FD, SERVICE, VALIDITY_DAYS, json_option
from aimos.cli.output import emit_json, out, say, when
from aimos.plural import plural
from aimos.vocabulary import DEFAULT_GRANT_DATA_CLASS

hub_app = typer.Typer(
    help="Sync this brain with its other devices through a hub.",
    no_args_is_help=True,
)

URL_ARG = typer.Argument(
    ...,
    metavar="URL",
    help="The hub's PostgreSQL URL, e.g. postgresql://aimos@db.home/aimos. Keep any password out of "
    "it (use ~/.pgpass or PGPASSFILE): a command line is visible to other programs.",
)


def _progress(label: str) -> object:
    if not sys.stderr.isatty():
        return None

    def told(n: int) -> None:
        sys.stderr.write(f"\r{label}: {n:,} records")
        sys.stderr.flush()

    return told


@hub_app.command("init")
def init_cmd(
    url: str = URL_ARG,
    passphrase_fd: int = PASSPHRASE_FD,
    json_out: bool = json_option(),
) -> None:
    """Put this brain on a hub, this device its home.

    Creates the hub's tables in the database (if it has none), stores the brain's keys there (the
    master key sealed with your passphrase, the content key wrapped under the master) and pushes
    every row, each encrypted: the hub sees sizes, times and counts, never a memory's text. This
    device becomes the home, the one whose housekeeper writes weights and labels. Asks for the
    master passphrase."""
    from aimos.actions.session import now, open_brain
    from aimos.hub.device import init
    from aimos.store.postgres import check_url

    check_url(url)
    with open_brain(write=True) as brain:
        master = brain.master(passphrase_fd, "put this brain on a hub")
        done = init(brain.conn, brain.keystore, master, brain.housekeeper, url, now(), _progress("pushed"))  # type: ignore[arg-type]
    if json_out:
        emit_json(done)
        return
    out(f"brain {done['brain_id']} is on the hub at {done['url']}")
    say(f"pushed {done['records']:,} records ({done['bytes']:,} bytes, encrypted); this device is the home")
    say("on another device: aimos hub join URL")


@hub_app.command("join")
def join_cmd(
    url: str = URL_ARG,
    brain: str = typer.Option(None, "--brain", help="The brain's id, when the hub holds more than one."),
    agent_id: str = typer.Option("cli", "--agent-id", help="This device's agent (the CLI)."),
    keystore: str = typer.Option(
        None, "--keystore", help="os (the OS keychain), file (aimos's 0600 files) or auto (default)."
    ),
    validity_days: int = VALIDITY_DAYS,
    clearance: int = typer.Option(10, "--clearance", help="The agent's clearance ceiling, 0..10."),
    data_class: str = typer.Option(
        DEFAULT_GRANT_DATA_CLASS, "--data-class", help="The agent's data-class ceiling: public..restricted."
    ),
    passphrase_fd: int = PASSPHRASE_FD,
    service: str = SERVICE,
    no_service: bool = NO_SERVICE,
    json_out: bool = json_option(),
) -> None:
    """Make this device one more device of a brain on a hub.

    Asks for the brain's master passphrase, enrols this device's own housekeeper and agent under
    the master, pulls every record (each verified as if written here) and seals it into a new
    brain in this AIMOS_HOME. A wrong passphrase, or a record that does not verify, leaves nothing
    behind."""
    from aimos.actions.session import now
    from aimos.errors import UsageError
    from aimos.identity.keystore import keystore_env_override
    from aimos.identity.passphrase import read_passphrase
    from aimos.installer.join import join
    from aimos.installer.setup import InstallOptions, installed_brain_id, refuse_foreign_file, validate
    from aimos.store.postgres import check_url

    check_url(url)
    existing = installed_brain_id()
    if existing is not None:
        raise UsageError(
            f"this home already holds brain {existing}",
            "Join from a new AIMOS_HOME (or another device); a home holds one brain.",
        )
    options = InstallOptions(
        agent_id=agent_id,
        keystore=keystore or keystore_env_override(),
        validity_days=validity_days,
        clearance=clearance,
        data_class=data_class,
        guides=False,
        service="none" if no_service else service,
    )
    validate(options)
    refuse_foreign_file()
    passphrase = read_passphrase(fd=passphrase_fd, purpose="join the brain on the hub")
    done = join(url, passphrase, options, now(), brain_id=brain, told=_progress("pulled"))  # type: ignore[arg-type]
    if json_out:
        emit_json(done.to_json())
        return
    out(f"joined brain {done.brain_id} from {done.url}")
    say(f"pulled {done.records:,} records ({done.memories:,} memories), every one verified")
    say(f"this device is {done.device}; its agent {done.agent_id} signs here")
    if done.service:
        say(f"housekeeper started ({done.service['manager']}): it syncs with the hub every few minutes")
    say(f"master fingerprint {done.master_fingerprint}: compare it with the one `aimos install` printed")


@hub_app.command("home")
def home_cmd(
    force: bool = typer.Option(
        False, "--force", help="The old home is lost: take over now and cut it off (it must join again)."
    ),
    passphrase_fd: int = PASSPHRASE_FD,
    json_out: bool = json_option(),
) -> None:
    """Make this device the home, which writes weights and labels.

    Asks for the master passphrase. The old home keeps writing until it learns of the move at its
    next sync; it then hands over, and this device takes over at its own next sync. Two homes
    never write at once. If the old home is lost, `--force` takes over at once: what the old home
    wrote after the newest of its records this device holds is refused everywhere."""
    from aimos.actions.session import now, open_brain
    from aimos.hub.device import move_home

    with open_brain(write=True) as brain:
        master = brain.master(passphrase_fd, "make this device the home")
        done = move_home(brain.conn, master, brain.housekeeper, now(), force=force)
    if json_out:
        emit_json(done)
        return
    if force:
        say(
            f"this device ({done['device']}) is the home now; {done['from_device']} is cut off and must "
            "join again. Run `aimos sync` to tell the other devices"
        )
        return
    say(
        f"this device ({done['device']}) is named the home; it takes over once {done['from_device']} "
        "syncs and hands over. Run `aimos sync` here now, and again after the old home has synced"
    )


@hub_app.command("devices")
def devices_cmd(json_out: bool = json_option("the devices")) -> None:
    """List the brain's devices: this one, the home, revoked ones."""
    from aimos.actions.session import open_brain
    from aimos.hub.device import devices

    with open_brain(write=False) as brain:
        found = devices(brain.conn)
    if json_out:
        emit_json(found)
        return
    for d in found:
        marks = [
            w
            for w, on in (("this device", d["this_device"]), ("home", d["home"]), ("revoked", d["revoked"]))
            if on
        ]
        agents = ", ".join(d["agents"]) or "no agent"
        out(
            f"{d['device']}  since {when(d['since'])}  {agents}"
            + (f"  ({', '.join(marks)})" if marks else "")
        )


@hub_app.command("revoke")
def revoke_cmd(
    device: str = typer.Argument(..., help="The device's id, or the start of it (`aimos hub devices`)."),
    reason: str = typer.Option(..., "--reason", help="Why (kept in the master's signed revocation)."),
    passphrase_fd: int = PASSPHRASE_FD,
    json_out: bool = json_option(),
) -> None:
    """Revoke another device: its housekeeper and agents.

    A lost or retired device: the master revokes every epoch it holds. At their next sync every
    device refuses what it signs from then on; what it signed before stays valid. The brain's
    content key is replaced on the hub in the same step (the hub must answer), and the revoked
    device is not given the new one: it cannot read what is written from then on. Asks for the
    master passphrase; then run `aimos sync`."""
    from aimos.actions.session import now, open_brain
    from aimos.hub.device import revoke_device
    from aimos.memory.gates import refuse_secret_fields

    refuse_secret_fields({"reason": reason}, outcome="nothing was revoked")
    with open_brain(write=True) as brain:
        master = brain.master(passphrase_fd, "revoke a device")
        _pull_before_cut(brain)
        done = revoke_device(brain.conn, brain.keystore, master, brain.housekeeper, device, reason, now())
    if json_out:
        emit_json(done)
        return
    say(
        f"revoked {done['device']}: {len(done['revoked'])} epochs; run `aimos sync` to tell the other devices"
    )
    if done["content_key_generation"] is not None:
        say(
            f"the brain's content key is replaced on the hub (generation {done['content_key_generation']}): "
            "the other devices take it at their next sync, the revoked device cannot read what is written now"
        )


def _pull_before_cut(brain: Any) -> None:
    """A sync before a revocation: the cut then names the revoked device's newest record the hub
    holds, so what any device may have pulled of it stays valid everywhere. A sync that fails (the
    device misbehaves) does not stop its revocation: the cut names what this device holds."""
    from aimos.errors import AimosError
    from aimos.hub.device import hub_url, run_sync

    if hub_url(brain.keystore) is None:
        return
    try:
        run_sync(brain.conn, brain.keystore, brain.housekeeper)
    except AimosError as exc:
        # (the sync's own failures are each an AimosError: the hub's driver, the push log and the
        # state folder say theirs as one, with the fix)
        say(f"could not sync first ({exc.message}); the cut names the records this device holds")
        say(f"hint: {exc.hint}")


@hub_app.command("status")
def status_cmd(json_out: bool = json_option("the status")) -> None:
    """What waits each way, and when this device last synced."""
    from aimos.actions.session import open_brain
    from aimos.hub.device import repair_words, status
    from aimos.hub.heads import said

    with open_brain(write=False) as brain:
        found = status(brain.conn, brain.keystore)
    if json_out:
        emit_json(found)
        return
    out(f"hub           {found['url']}")
    out(f"this device   {found['device']}{'  (home)' if found['this_device_is_home'] else ''}")
    out(f"home          {found['home']}")
    if found["home_waiting"]:
        out(f"named home    {found['home_waiting']} (takes over when the home hands over at its next sync)")
    out(f"last sync     {when(found['last_sync']) if found['last_sync'] else 'never'}")
    out(f"content key   generation {found['content_key_generation']}")
    if found["last_error"]:
        out(f"last failure  {when(found['last_error']['at'])}: {found['last_error']['message']}")
    out(f"to push       at most {found['to_push_at_most']:,} rows")
    for request_id, why in found["requests_refused"].items():
        out(f"refused here  request {request_id} another device kept for this home: {why}")
    for why in found["redactions_refused"]:
        out(f"refused here  {why}")
    for entry in found["behind"]:
        out(f"behind        {said(entry)}")
    last = found["last_repair"]
    if last:
        out(f"hub repaired  {when(last['at'])}: " + "; ".join(repair_words(last)))
    if found["reachable"]:
        if found["hub_lost_of_this_device"]:
            out(
                f"hub lost      {found['hub_lost_of_this_device']:,} records this device pushed"
                " (restored from an older copy, or deleted): the next sync sends them again"
            )
        if found["hub_went_back"]:
            out(
                "hub went back it no longer holds the record this device pulled last (restored from"
                " an older copy, or deleted): the next sync reads it again from the start"
            )
        out(f"to pull       {found['to_pull']:,} records")
        for d in found["hub"]["devices"]:
            out(f"  {d['device']}  {d['records']:,} records, {d['bytes']:,} bytes, newest {d['newest']}")
    else:
        out(f"to pull       unknown: {found['unreachable_because']}")


def register(app: typer.Typer) -> None:
    @app.command("sync")
    def sync_cmd(
        json_out: bool = json_option("what was synced"),
    ) -> None:
        """Push what the hub lacks and pull what this device lacks.

        Every pulled record is verified before it is applied; one that does not verify refuses the
        whole batch by name, and nothing of it is applied. An interrupted sync is finished by the
        next one, with nothing lost or sent twice. A hub that lost records (restored from an older
        copy) gets this device's again, the same bytes. With the hub down, the brain works as before."""
        from aimos.actions.session import open_brain
        from aimos.hub.device import run_sync
        from aimos.hub.heads import said

        with open_brain(write=True) as brain:
            done = run_sync(brain.conn, brain.keystore, brain.housekeeper)
        if json_out:
            emit_json(done)
            return
        say(
            f"synced with {done['url']}: pushed {done['pushed']:,} records, pulled {done['pulled']:,} "
            f"({done['memories']:,} memories) in {done['seconds']:.1f} s"
        )
        for line in done["repairs"]:
            say(line)
        for refused in done["refused"]:
            say(f"refused {refused}")
        if done["redacted"]:
            say(f"removed the text of {plural(len(done['redacted']), 'memory')} the master redacted")
        for refused in done["redactions_refused"]:
            say(f"refused {refused}")
        if done["caught_up"]:
            say(f"took {done['caught_up']:,} records the hub had given another device and not this one")
        for entry in done["behind"]:
            say(f"warning: {said(entry)}")
        for refused in done.get("forwarded_refused", []):
            say(f"the home refused a request kept for it ({refused['request_id']}): {refused['why']}")
