"""`aimos label ID poison|not-poison|support|dispute --reason TEXT`: a person's signed judgment."""

from __future__ import annotations

import typer

from aimos.cli.options import MEMORY_ID, json_option
from aimos.cli.output import emit_json, out, say


def register(app: typer.Typer) -> None:
    @app.command("label")
    def label_cmd(
        memory_id: str = MEMORY_ID,
        word: str = typer.Argument(
            ...,
            metavar="JUDGMENT",
            help="poison (withhold it), not-poison (clear a suspicion), support (it is right) or "
            "dispute (it is doubtful).",
        ),
        reason: str = typer.Option(
            None, "--reason", help="Why you judge it so (required; kept in the record)."
        ),
        agent: str = typer.Option("cli", "--as", help="The agent whose key signs the judgment."),
        passphrase_fd: int = typer.Option(
            None, "--passphrase-fd", help="Read the master passphrase (when it is needed) from this fd."
        ),
        json_out: bool = json_option("the transition"),
    ) -> None:
        """Judge a memory: poison, not-poison, support or dispute.

        Record a person's judgment of a memory as a signed, chained label transition.

        A judgment that lowers the memory's trust (poison; dispute of an unjudged memory) is signed
        by the agent alone. One that raises it (not-poison, support, or dispute of a suspected
        poison) also needs the master passphrase: an agent key alone cannot lift a person's
        verdict."""
        from aimos.actions.labels import check_reason, judge_memory, judgment_for, label_change, needs_master
        from aimos.actions.session import open_brain
        from aimos.errors import PassphraseSourceError

        judgment = judgment_for(word)
        check_reason(judgment, reason)  # before the passphrase is asked for
        with open_brain(write=True) as brain:
            master = None
            if needs_master(brain, agent, memory_id, judgment):  # an unknown memory exits 3 first
                try:
                    master = brain.master(passphrase_fd, f"judge a memory {word}")
                except PassphraseSourceError:
                    pass  # no passphrase to be had: the writer refuses, saying why (exit 6)
            moved = judge_memory(brain, agent, memory_id, judgment, reason, master=master)
        if json_out:
            emit_json(moved.to_json())
            return
        out(f"{moved.memory_id}  {label_change(moved.previous_label, moved.label)}")
        if moved.provisional:
            say(
                "Kept for the brain's home device, whose housekeeper alone writes labels: it records "
                "this judgment at its next sync after this device's (`aimos sync`); until then the "
                "label here is unchanged."
            )
            return
        say("The earlier labels stay in `aimos show ID`'s label history.")
