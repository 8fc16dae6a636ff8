"""`aimos install`: create a brain with its master, housekeeper and first agent."""

from __future__ import annotations

import sys

import typer

from aimos.cli.output import emit_json, out, say


def register(app: typer.Typer) -> None:
    @app.command("install")
    def install(
        brain_name: str = typer.Option("personal", "--brain-name", help="A name for this brain."),
        company: str = typer.Option("personal", "--company", help="The tenant the memories belong to."),
        agent_id: str = typer.Option("cli", "--agent-id", help="The first agent to enrol (the CLI)."),
        keystore: str = typer.Option(
            None, "--keystore", help="os (the OS keychain, default), file (aimos's 0600 files) or auto."
        ),
        validity_days: int = typer.Option(30, "--validity-days", help="Agent epoch validity, 1..365."),
        clearance: int = typer.Option(10, "--clearance", help="Agent clearance ceiling, 0..10."),
        data_class: str = typer.Option(
            "confidential", "--data-class", help="Agent data-class ceiling: public..restricted."
        ),
        read_only: bool = typer.Option(False, "--read-only", help="The agent may recall but not save."),
        passphrase_fd: int = typer.Option(
            None, "--passphrase-fd", help="Read the new master passphrase from this file descriptor."
        ),
        yes: bool = typer.Option(False, "--yes", "-y", help="Ask no questions; use flags and defaults."),
        json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    ) -> None:
        """Set up a brain: keystore, master key, housekeeper and agent epochs, grant."""
        from aimos import paths
        from aimos.cli.context import now
        from aimos.identity.keystore import keystore_env_override
        from aimos.identity.passphrase import read_passphrase
        from installer.setup import InstallOptions, installed_brain_id, validate
        from installer.setup import install as do_install

        existing = installed_brain_id()
        if existing is not None:
            from aimos.store.connection import one, open_reader

            conn = open_reader()
            try:
                master = one(conn, "SELECT fingerprint FROM master_identity")
            finally:
                conn.close()
            fingerprint = master["fingerprint"] if master else "?"
            if json_out:
                emit_json(
                    {
                        "status": "already_installed",
                        "brain_id": existing,
                        "brain_path": str(paths.brain_path()),
                        "master_fingerprint": fingerprint,
                    }
                )
            else:
                out(f"aimos is already installed at {paths.brain_path()}; nothing was changed.")
                out(f"master fingerprint: {fingerprint}")
                say("To enrol another agent: aimos agent enroll ID")
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
        )
        if not yes and sys.stdin.isatty() and passphrase_fd is None:
            options.brain_name = typer.prompt("Brain name", default=options.brain_name)
            options.company_id = typer.prompt("Company", default=options.company_id)
            options.agent_id = typer.prompt("Agent id for this CLI", default=options.agent_id)
        validate(options)
        passphrase = read_passphrase(fd=passphrase_fd, confirm=True, purpose="choose one")
        result = do_install(options, passphrase, now())
        if json_out:
            emit_json(result.to_json())
            return
        out(f"Installed brain {options.brain_name!r} at {result.brain_path}")
        out(f"keystore: {result.keystore_note}")
        out(f"master fingerprint: {result.master_fingerprint}")
        out(
            f"agent: {result.agent_id} (grant: clearance <= {options.clearance}, "
            f"data class <= {options.data_class}{', read-only' if options.read_only else ''})"
        )
        say(f"The master fingerprint is also in {result.anchors_path}; keep a copy elsewhere.")
        say('Next: aimos save "something worth remembering"   then   aimos list')
