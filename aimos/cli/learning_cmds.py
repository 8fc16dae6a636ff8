"""`aimos feedback`: signed outcome evidence that moves a memory's retrieval weight."""

from __future__ import annotations

import typer

from aimos.cli.options import json_option, signer_option
from aimos.cli.output import emit_json, out, say


def register(app: typer.Typer) -> None:
    @app.command("feedback")
    def feedback_cmd(
        memory_id: str = typer.Argument(..., help="The memory (id or unique prefix) a recall returned."),
        good: bool = typer.Option(False, "--good", help="It helped: good evidence about it."),
        bad: bool = typer.Option(False, "--bad", help="It did not help: bad evidence about it."),
        receipt: str = typer.Option(
            None, "--receipt", help="The recall receipt that disclosed it (default: latest)."
        ),
        occurrence: bool = typer.Option(
            False, "--occurrence", help="Evidence about this occurrence only: kept, with no weight authority."
        ),
        agent: str = signer_option("the outcome"),
        json_out: bool = json_option(),
    ) -> None:
        """Say whether a recalled memory helped.

        Report an outcome for a recalled memory; a signed, housekeeper-authorized reweight follows.

        The weight follows the balance of your agent's evidence on the memory, not the last report:
        after two --good, a --bad leaves the balance at +1, so the weight still rises (the output
        says so). One outcome per recall moves the weight; more about the same recall are kept as
        evidence only. One agent's evidence scales a weight at most between half and double."""
        from aimos.actions.feedback import explain, give_feedback, weight_words
        from aimos.actions.session import open_brain
        from aimos.errors import UsageError

        if good == bad:
            raise UsageError("say whether the memory helped", "Give exactly one of --good or --bad.")
        if receipt is not None and not receipt.strip():
            raise UsageError("--receipt is empty", "Give a receipt id, or leave --receipt out.")
        with open_brain(write=True) as brain:
            result = give_feedback(
                brain, agent, memory_id, good=good, receipt_ref=receipt, occurrence=occurrence
            )
        if json_out:
            emit_json({**result.to_json(), "why": explain(result)})
            return
        out(weight_words(result))
        say(explain(result))
        if result.transition_hash:
            say(f"signed transition {result.transition_hash}")
        if result.outcome_id:
            say(f"outcome {result.outcome_id} (aimos export-outcome {result.outcome_id} -o FILE exports it)")
