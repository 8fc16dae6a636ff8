"""`aimos status`: the brain, its keystore, identities and counts (no passphrase needed)."""

from __future__ import annotations

from typing import Any

import typer

from aimos.cli.output import emit_json, out, table


def status_report() -> dict[str, Any]:
    from aimos import paths
    from aimos.cli.context import now, open_brain
    from aimos.identity.agents import agent_listing
    from aimos.identity.epochs import master_row
    from aimos.store.connection import code_schema_version, one, schema_version

    with open_brain(write=False) as brain:
        conn = brain.conn
        counts = {
            name: int(one(conn, f"SELECT COUNT(*) AS n FROM {table_name}")["n"])  # type: ignore[index]
            for name, table_name in (
                ("memories", "memories"),
                ("events", "events"),
                ("provenance_nodes", "memory_provenance"),
                ("occurrences", "memory_occurrences"),
                ("supersessions", "memory_supersessions"),
            )
        }
        schema = schema_version(conn)
        from aimos.housekeeper.scheduler import readiness

        return {
            "brain_id": brain.meta["brain_id"],
            "brain_name": brain.meta.get("brain_name"),
            "company_id": brain.company_id,
            "brain_path": str(paths.brain_path()),
            "schema_version": schema,
            "code_schema_version": code_schema_version(),
            "keystore": {"kind": brain.keystore.kind, "detail": brain.keystore.describe()},
            "master_fingerprint": master_row(conn)["fingerprint"],
            "anchors_path": str(paths.anchors_path()),
            "identities": agent_listing(conn, now()),
            "counts": counts,
            "housekeeper": readiness(),
        }


def register(app: typer.Typer) -> None:
    @app.command("status")
    def status(json_out: bool = typer.Option(False, "--json", help="Print as JSON.")) -> None:
        """Show the brain, keystore, master fingerprint, counts, housekeeper and identities."""
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
