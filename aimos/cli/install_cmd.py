"""`aimos install`: onboarding. Interactive by default, every prompt also a flag; `--yes` asks
nothing, `--dry-run` prints the plan and changes nothing, `--add-agent ID` enrols another agent."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import typer

from aimos.cli.options import NO_SERVICE, PASSPHRASE_FD, SERVICE, VALIDITY_DAYS, json_option
from aimos.cli.output import emit_json, out, say
from aimos.terminal import json_escaped
from aimos.vocabulary import DEFAULT_GRANT_DATA_CLASS

T = TypeVar("T")


def _ask(label: str, default: T, check: Callable[[T], object], kind: type[T]) -> T:
    """Prompt until the answer passes ``check``; each refusal says what is wrong and how to fix it."""
    from aimos.errors import AimosError

    while True:
        value: T = typer.prompt(label, default=default, type=kind, show_default=default != "", err=True)
        try:
            check(value)
            return value
        except AimosError as exc:
            say(f"  {exc.message}. {exc.hint}")


def _interview(options: Any) -> None:
    """What a person is asked: the brain's name (what it is for). The rest keeps its flag or
    default (company, agent id, model, validity, clearance, data class, read-only), said once."""
    from aimos.installer.setup import InstallOptions, validate

    options.brain_name = _ask(
        "Brain name (what this brain is for, e.g. personal or work)",
        options.brain_name,
        lambda v: validate(InstallOptions(brain_name=v)),
        str,
    )
    say(
        f"The rest keeps its setting: company {options.company_id}, agent {options.agent_id} "
        f"(valid {options.validity_days} days, clearance <= {options.clearance}, data class <= "
        f"{options.data_class}{', read-only' if options.read_only else ''}). "
        "`aimos install --help` lists the flags that change them."
    )


def _settle_keystore(options: Any, interactive: bool) -> None:
    """The keystore, settled before any question: an explicit choice the machine cannot honour is
    refused now; with no OS keychain the file keystore stands in, said in plain words (and, on a
    terminal with no --keystore given, asked, default yes)."""
    from aimos.errors import AbortedError
    from aimos.identity.keystore import file_keystore_means, settle_keystore

    choice = options.keystore
    settled = settle_keystore(choice)
    if settled.stands_in is not None:
        say(f"No OS keychain can be used here ({settled.stands_in}).")
        say(file_keystore_means())
        if interactive and choice is None:
            if not typer.confirm("Keep this brain's keys in the file keystore?", default=True, err=True):
                raise AbortedError(
                    "nothing was installed: no OS keychain answered and the file keystore was declined",
                    "Start the desktop session's keyring (Secret Service, macOS Keychain) and run "
                    "`aimos install` again, or accept the file keystore.",
                )
        else:
            say("Using the file keystore (`--keystore file` chooses it without this note).")
    options.keystore = settled.kind
    options.keystore_note = settled.note


def _already_installed(
    json_out: bool,
    brain_id: str,
    keystore: str | None = None,
    *,
    started: dict[str, Any] | None = None,
    would_register: str | None = None,
) -> None:
    """An installed brain is reused as it is; ``started`` is the housekeeper this run registered
    and started again (after `aimos uninstall`), ``would_register`` the manager a dry run would."""
    from aimos import paths
    from aimos.errors import IdentityError
    from aimos.identity.master import master_row
    from aimos.store.connection import open_reader
    from aimos.store.meta import brain_meta

    conn = open_reader()
    try:
        try:
            fingerprint = str(master_row(conn)["fingerprint"])
        except IdentityError:  # no master identity: said as "?"
            fingerprint = "?"
        kind = brain_meta(conn).get("keystore")
    finally:
        conn.close()
    if json_out:
        document: dict[str, Any] = {
            "status": "reused" if started else "already_installed",
            "brain_id": brain_id,
            "brain_path": str(paths.brain_path()),
            "master_fingerprint": fingerprint,
            "service": started,
        }
        if would_register:
            document["would_register_service"] = would_register
        emit_json(document)
        return
    if started:
        out(f"aimos is already installed at {paths.brain_path()}: reused it as it was (brain, keys, guides).")
        out(f"housekeeper: registered and started via {started['manager']} (pid {started['pid']}), 5 jobs")
    else:
        out(f"aimos is already installed at {paths.brain_path()}; nothing was changed.")
    out(f"master fingerprint: {fingerprint}")
    if would_register:
        say(
            "dry run: the housekeeper is not registered; `aimos install` would register and start it "
            f"via {would_register}"
        )
    say("To enrol another agent: aimos install --add-agent ID   (or: aimos agent enroll ID)")
    say("Housekeeper: aimos housekeeper status")
    if keystore in ("os", "file") and keystore != kind:  # --keystore chooses for a new brain only
        say(f"This brain's keys are in the {kind} keystore; move them: aimos keystore move --to {keystore}")


def install(
    brain_name: str = typer.Option(
        "personal", "--brain-name", help="What this brain is for, as a short name (asked on a terminal)."
    ),
    company: str = typer.Option("personal", "--company", help="The tenant the memories belong to."),
    agent_id: str = typer.Option("cli", "--agent-id", help="The first agent to enrol (the CLI)."),
    model_provider: str = typer.Option(
        None, "--model-provider", help="The agent's model provider (optional)."
    ),
    model: str = typer.Option(None, "--model", help="The agent's model identifier (optional)."),
    keystore: str = typer.Option(
        None,
        "--keystore",
        help="os (the OS keychain; refused without one), file (aimos's 0600 files) or auto. "
        "Default: the OS keychain, else the file keystore (asked on a terminal).",
    ),
    validity_days: int = VALIDITY_DAYS,
    clearance: int = typer.Option(10, "--clearance", help="Agent clearance ceiling, 0..10."),
    data_class: str = typer.Option(
        DEFAULT_GRANT_DATA_CLASS, "--data-class", help="Agent data-class ceiling: public..restricted."
    ),
    read_only: bool = typer.Option(False, "--read-only", help="The agent may recall but not save."),
    passphrase_fd: int = PASSPHRASE_FD,
    service: str = SERVICE,
    no_service: bool = NO_SERVICE,
    no_guides: bool = typer.Option(False, "--no-guides", help="Do not save the 8 guide memories."),
    add_agent: str = typer.Option(None, "--add-agent", help="On an installed brain: enrol another agent."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan and its hash; change nothing."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Ask no questions; use flags and defaults."),
    json_out: bool = json_option(),
) -> None:
    """Set up a brain, its keys and the housekeeper.

    On a terminal it asks for the brain's name and the master passphrase (twice); the other
    settings take the flags below or their defaults. With no OS keychain (a server, WSL, a
    container) the keys go to aimos's own file keystore, said before anything is asked.
    """
    from aimos.identity.keystore import keystore_env_override
    from aimos.installer.setup import InstallOptions, installed_brain_id

    if no_service:
        service = "none"
    existing = installed_brain_id()
    if add_agent is not None:
        fixed = {
            "--brain-name": brain_name != "personal",
            "--company": company != "personal",
            "--agent-id": agent_id != "cli",
            "--model-provider": model_provider is not None,
            "--model": model is not None,
            "--keystore": keystore is not None,
            "--no-guides": no_guides,
        }
        grant = (validity_days, clearance, data_class, read_only)
        _add_agent(add_agent, existing, fixed, grant, passphrase_fd, dry_run=dry_run, json_out=json_out)
        return
    if existing is not None:
        _reuse_installed(existing, service, keystore, dry_run=dry_run, json_out=json_out)
        return
    options = InstallOptions(
        brain_name=brain_name,
        company_id=company,
        agent_id=agent_id,
        keystore=keystore or keystore_env_override(),
        validity_days=validity_days,
        clearance=clearance,
        data_class=data_class,
        read_only=read_only,
        model_provider=model_provider,
        model=model,
        guides=not no_guides,
        service=service,
    )
    interactive = not yes and not dry_run and sys.stdin.isatty() and passphrase_fd is None
    _install_new(options, interactive, passphrase_fd, dry_run=dry_run, json_out=json_out)


def _add_agent(
    agent: str,
    existing: str | None,
    fixed: dict[str, bool],
    grant: tuple[int, int, str, bool],
    passphrase_fd: int | None,
    *,
    dry_run: bool,
    json_out: bool,
) -> None:
    """`aimos install --add-agent ID`: enrol another agent on the installed brain. ``fixed`` says
    which of the flags fixed at install time were given (refused); ``grant`` is the validity in
    days, clearance, data class and read-only the new agent gets."""
    from aimos.crypto.canonical import canonical_json
    from aimos.errors import UsageError

    if existing is None:
        raise UsageError("--add-agent needs an installed brain", "Run `aimos install` first.")
    given = [flag for flag, used in fixed.items() if used]
    if given:
        raise UsageError(
            f"{', '.join(given)} do not apply with --add-agent",
            "--add-agent takes --validity-days, --clearance, --data-class, --read-only and "
            "--passphrase-fd; the rest was fixed when the brain was installed.",
        )
    from aimos.actions.agents import Enrolment
    from aimos.cli.agent_cmds import enrol

    validity_days, clearance, data_class, read_only = grant
    enrolment = Enrolment(agent, validity_days, clearance, data_class, not read_only)
    if dry_run:
        plan = enrolment.checked().plan()
        if json_out:
            emit_json(plan)
        else:
            out(json_escaped(canonical_json(plan).decode("utf-8")))  # still JSON, once escaped
        say("dry run: nothing was changed")
        return

    enrol(enrolment, passphrase_fd, json_out)


def _reuse_installed(
    existing: str, service: str, keystore: str | None, *, dry_run: bool, json_out: bool
) -> None:
    """An installed brain is reused as it is; only a housekeeper service `aimos uninstall`
    removed is set up again."""
    from aimos.installer.setup import missing_service, restore_service

    manager = missing_service(service)
    started = restore_service(existing, manager) if manager and not dry_run else None
    _already_installed(
        json_out, existing, keystore, started=started, would_register=manager if dry_run else None
    )


def _install_new(
    options: Any, interactive: bool, passphrase_fd: int | None, *, dry_run: bool, json_out: bool
) -> None:
    """A new brain: the flags checked, the keystore settled, the questions asked (on a terminal),
    then the plan printed (--dry-run) or carried out and reported."""
    from aimos.actions.session import now
    from aimos.identity.passphrase import read_passphrase
    from aimos.installer.setup import install as do_install
    from aimos.installer.setup import refuse_foreign_file, validate

    validate(options)  # a bad flag is refused before anything is asked
    refuse_foreign_file()
    if interactive:
        say("Setting up aimos. Press Enter to keep a default.")
    _settle_keystore(options, interactive)
    if interactive:
        _interview(options)
        validate(options)
    if dry_run:
        _print_plan(options, json_out)
        return
    passphrase = read_passphrase(fd=passphrase_fd, confirm=True, purpose="choose one")
    result = do_install(options, passphrase, now())
    if json_out:
        emit_json(result.to_json())
        return
    _report(options, result)


def _print_plan(options: Any, json_out: bool) -> None:
    """`aimos install --dry-run`: the plan and its hash; nothing is changed."""
    from aimos.crypto.canonical import canonical_json
    from aimos.installer.service import choose_manager
    from aimos.installer.setup import build_plan, plan_sha256

    plan = build_plan(options, choose_manager(options.service))
    document = {"plan": plan, "plan_sha256": plan_sha256(plan)}
    if json_out:
        emit_json(document)
    else:
        out(json_escaped(canonical_json(plan).decode("utf-8")))  # still JSON, once escaped
        out(f"plan_sha256 {document['plan_sha256']}")
        say("dry run: nothing was changed")


def register(app: typer.Typer) -> None:
    app.command("install")(install)


def _report(options: Any, result: Any) -> None:
    out(f"Installed brain {options.brain_name!r} at {result.brain_path}")
    out(f"keystore: {result.keystore_note}")
    out(f"master fingerprint: {result.master_fingerprint}")
    out(
        f"agent: {result.agent_id} (grant: clearance <= {options.clearance}, "
        f"data class <= {options.data_class}{', read-only' if options.read_only else ''})"
    )
    out(f"guide memories: {len(result.guide_memory_ids)}")
    if result.service:
        out(f"housekeeper: running via {result.service['manager']} (pid {result.service.get('pid')}), 5 jobs")
    else:
        out("housekeeper: not started (--no-service); start it with `aimos housekeeper start`")
    out(f"receipt: {result.receipt_path}")
    say(f"The master fingerprint is also in {result.anchors_path}; keep a copy elsewhere.")
    say("Next, try:")
    say('  aimos recall "how does aimos verify a recall"')
    say('  aimos save "something worth remembering"')
    say("  aimos status")
