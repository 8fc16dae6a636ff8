"""`aimos label ID confirm|refute|support|dispute --reason TEXT`: a person's signed judgment."""

from __future__ import annotations

import typer

from aimos.cli.output import emit_json, out, say


def register(app: typer.Typer) -> None:
    @app.command("label")
    def label_cmd(
        memory_id: str = typer.Argument(..., help="Memory id or a unique prefix of it."),
        judgment: str = typer.Argument(
            ..., help="confirm (poison), refute (not poison), support or dispute."
        ),
        reason: str = typer.Option(
            None, "--reason", help="Why you judge it so (required; kept in the record)."
        ),
        agent: str = typer.Option("cli", "--as", help="The agent whose key signs the judgment."),
        passphrase_fd: int = typer.Option(
            None, "--passphrase-fd", help="Read the master passphrase (refute, support) from this fd."
        ),
        json_out: bool = typer.Option(False, "--json", help="Print the transition as JSON."),
    ) -> None:
        """Record a person's judgment of a memory as a signed, chained label transition.

        confirm and dispute are signed by the agent; refute and support raise trust, so they also
        need the master passphrase."""
        from aimos.actions.labels import judge_memory, needs_master
        from aimos.actions.session import open_brain
        from aimos.epistemic.chain import check_judgment
        from aimos.memory.versions import resolve_memory_id

        check_judgment(judgment, reason)  # before the passphrase is asked for
        with open_brain(write=True) as brain:
            resolve_memory_id(brain.conn, memory_id)  # an unknown memory exits 3 before the prompt
            master = (
                brain.master(passphrase_fd, f"{judgment} a memory") if needs_master(judgment) else None
            )
            moved = judge_memory(brain, agent, memory_id, judgment, reason, master=master)
        if json_out:
            emit_json(moved.to_json())
            return
        out(f"{moved.memory_id}  {moved.previous_label} -> {moved.label}")
        say("The earlier labels stay in `aimos show ID`'s label history.")
