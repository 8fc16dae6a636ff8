"""`aimos tui`: open the Textual app (imported only here, and only when the command runs)."""

from __future__ import annotations

import sys

import typer

from aimos.cli.options import signer_option


def register(app: typer.Typer) -> None:
    @app.command("tui")
    def tui_cmd(
        agent: str = signer_option("recalls and actions"),
        light: bool = typer.Option(False, "--light", help="Start with the light theme."),
    ) -> None:
        """Browse, recall, judge and verify in the terminal.

        Browse memories, run recalls, inspect receipts, trajectories and labels, verify the brain."""
        from aimos.actions.agents import expiry_warnings
        from aimos.actions.session import open_brain
        from aimos.cli.output import say
        from aimos.errors import UsageError
        from aimos.identity.epochs import latest_epoch
        from aimos.identity.validators import check_agent_id

        check_agent_id(agent)
        with open_brain(write=False) as brain:  # not installed: exit 3 before any screen
            latest_epoch(brain.conn, agent)
            for warning in expiry_warnings(brain, agent):  # the status screen (3) shows it too
                say(warning)
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise UsageError(
                "aimos tui needs a terminal", "Run it in an interactive terminal (not in a pipe or a script)."
            )
        from aimos.tui.app import run

        code = run(agent=agent, light=light)
        if code:
            raise typer.Exit(code)
