"""`aimos verify`, `aimos export --cognitive`, `aimos verify-bundle`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from aimos.cli.output import emit_json, out, say, table


def _portable(bundle: dict[str, Any], fingerprint: str | None) -> Any:
    from aimos.verify.cognitive import verify_cognitive_bundle

    return verify_cognitive_bundle(bundle, expected_master_fingerprint=fingerprint)


def register(app: typer.Typer) -> None:
    @app.command("verify")
    def verify_cmd(
        memory: str = typer.Option(None, "--memory", help="Verify one memory (id or unique prefix)."),
        master_fingerprint: str = typer.Option(
            None, "--master-fingerprint", help="Expected master fingerprint (default: anchors.json)."
        ),
        json_out: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    ) -> None:
        """Run the in-database and the portable verifier; report verdicts, reasons, roots and parity."""
        from aimos.cli.context import expected_master_fingerprint, open_brain
        from aimos.errors import UsageError, VerificationError
        from aimos.learning.verifier import verify_everything
        from aimos.memory.versions import resolve_memory_id

        fingerprint = expected_master_fingerprint(master_fingerprint)
        if memory is not None and not memory.strip():
            raise UsageError(
                "--memory is empty", "Give a memory id, or leave --memory out to verify everything."
            )
        with open_brain(write=True) as brain:
            mid = resolve_memory_id(brain.conn, memory) if memory else None
            result = verify_everything(brain.conn, fingerprint, mid)
        in_db, portable = result["in_database"], result["portable"]
        if json_out:
            emit_json(result)
        else:
            out(
                f"in-database verifier  {'ok' if in_db['ok'] else 'FAILED'}  {in_db['memories']} memories, "
                f"{len(in_db['event_chains'])} event chains"
            )
            out(f"  corpus proof root   {in_db['corpus_proof_root']}")
            for r in in_db["failures"]:
                out(
                    f"  FAIL {r['memory_id']}  {r['certification_status']}  {r['reason']}"
                    + (f" ({r['detail']})" if r["detail"] else "")
                )
            for c in in_db["event_chains"]:
                if not c["ok"]:
                    out(f"  FAIL events of {c['signer_agent_id']}  {c['reason']}")
            out(
                f"portable verifier     {portable['verdict']}"
                + (f"  {portable['primary_reason']}" if portable["primary_reason"] else "")
            )
            out(f"  corpus proof root   {portable['corpus_proof_root']}")
            mismatches = result["parity_mismatches"]
            out(f"parity                {'yes' if result['parity'] else 'NO: ' + ', '.join(mismatches[:5])}")
        if not result["ok"]:
            raise VerificationError(
                "the brain does not verify", "See the failing memories above; restore from a backup."
            )

    @app.command("export")
    def export_cmd(
        cognitive: str = typer.Option(
            ..., "--cognitive", help="Write the cognitive-evidence bundle to FILE."
        ),
        memory: str = typer.Option(None, "--memory", help="Only this memory."),
    ) -> None:
        """Export portable evidence (hom.aimos.mutmem-cognitive-evidence/v1) for offline verification."""
        from aimos import paths
        from aimos.cli.context import open_brain
        from aimos.errors import UsageError
        from aimos.learning.export import export_cognitive
        from aimos.memory.versions import resolve_memory_id

        target = Path(cognitive)
        if not cognitive.strip() or target.is_dir():
            raise UsageError(
                "--cognitive needs a file name", "For example: aimos export --cognitive brain.json"
            )
        with open_brain(write=True) as brain:
            mid = resolve_memory_id(brain.conn, memory) if memory else None
            bundle = export_cognitive(brain.conn, memory_id=mid)
        paths.write_private_file(target, (json.dumps(bundle, indent=2, sort_keys=True) + "\n").encode())
        say(f"wrote {len(bundle['memories'])} memories to {target}")

    @app.command("verify-bundle")
    def verify_bundle_cmd(
        file: str = typer.Argument(..., help="A cognitive-evidence bundle (JSON)."),
        master_fingerprint: str = typer.Option(
            None, "--master-fingerprint", help="Expected master fingerprint (64 hex)."
        ),
        json_out: bool = typer.Option(False, "--json", help="Print the verdict as JSON."),
    ) -> None:
        """Verify a cognitive-evidence bundle offline, whoever made it; exit 4 when invalid."""
        from aimos.cli.context import expected_master_fingerprint
        from aimos.errors import UsageError, VerificationError
        from aimos.verify.cognitive import verify_cognitive_file

        fingerprint = expected_master_fingerprint(master_fingerprint)
        if not Path(file).is_file():
            raise UsageError(f"no file {file}")
        verdict = verify_cognitive_file(Path(file), expected_master_fingerprint=fingerprint)
        result = {
            "verdict": verdict.verdict,
            "primary_reason": verdict.primary_reason,
            "corpus_proof_root": verdict.corpus_proof_root,
            "bundle_sha256": verdict.bundle_sha256,
            "records": verdict.records,
        }
        if json_out:
            emit_json(result)
        else:
            out(
                table(
                    ["memory", "status", "ok", "chain", "sigs", "reason"],
                    [
                        [
                            r["memory_id"][:8],
                            r["certification_status"],
                            str(r["ok"]),
                            str(r["chain_length"]),
                            str(r["sigs_verified"]),
                            r["reason"] or "-",
                        ]
                        for r in verdict.records
                    ],
                )
            )
            out(f"{verdict.verdict}" + (f": {verdict.primary_reason}" if verdict.primary_reason else ""))
            out(f"corpus proof root {verdict.corpus_proof_root}")
        if verdict.verdict != "valid":
            raise VerificationError(f"the bundle is {verdict.verdict}: {verdict.primary_reason}")
