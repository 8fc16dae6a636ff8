"""`aimos status`: the brain, its keystore, identities and counts (no passphrase needed)."""

from __future__ import annotations

import typer

from aimos.cli.output import emit_json, out, table, when


def register(app: typer.Typer) -> None:
    @app.command("status")
    def status(json_out: bool = typer.Option(False, "--json", help="Print as JSON.")) -> None:
        """Show the brain, keystore, master fingerprint, counts, housekeeper and identities."""
        from aimos.housekeeper.brain_status import status_report

        report = status_report()
        if json_out:
            emit_json(report)
            return
        out(f"brain        {report['brain_name']} ({report['brain_id']})")
        out(f"path         {report['brain_path']}")
        out(f"company      {report['company_id']}")
        out(f"schema       {report['schema_version']}")
        out(f"keystore     {report['keystore']['detail']}")
        out(f"master       {report['master_fingerprint']}")
        out("counts       " + ", ".join(f"{k} {v}" for k, v in report["counts"].items()))
        root = report["last_corpus_root"]
        attested = f"{root['corpus_proof_root']} (attested {when(root['computed_at'])})" if root else None
        out("corpus root  " + (attested or "none yet (the nightly job attests one)"))
        out("")
        from aimos.cli.housekeeper_cmds import print_readiness

        print_readiness(report["housekeeper"])
        out("")
        out(
            table(
                ["identity", "role", "state", "valid until"],
                [[e["agent_id"], e["role"], e["state"], e["valid_until"][:19]] for e in report["identities"]],
            )
        )
