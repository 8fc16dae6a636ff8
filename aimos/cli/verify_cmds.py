"""`aimos verify`, `aimos export --cognitive`, `aimos export-recall`, `aimos export-outcome`,
`aimos verify-bundle`."""

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
        from aimos.errors import UsageError, VerificationError
        from aimos.identity.session import expected_master_fingerprint, open_brain
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
        from aimos.errors import UsageError
        from aimos.identity.session import open_brain
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

    @app.command("export-recall")
    def export_recall_cmd(
        receipt: str = typer.Argument(..., help="A recall receipt id (or unique prefix)."),
        output: str = typer.Option(..., "-o", "--output", help="Write the V2 recall envelope to FILE."),
    ) -> None:
        """Export one recall as a MutMem V2 recall-disclosure envelope (verify it with verify-bundle)."""
        from aimos import paths
        from aimos.errors import UsageError
        from aimos.identity.session import open_brain
        from aimos.recall.export_v2 import build_recall_envelope

        target = Path(output)
        if not output.strip() or target.is_dir():
            raise UsageError(
                "-o needs a file name", "For example: aimos export-recall RECEIPT -o recall.json"
            )
        with open_brain(write=False) as brain:
            bundle = build_recall_envelope(brain.conn, receipt)
        paths.write_private_file(target, (json.dumps(bundle, indent=2, sort_keys=True) + "\n").encode())
        say(f"wrote a V2 recall envelope ({bundle['result_count']} results) to {target}")

    @app.command("export-outcome")
    def export_outcome_cmd(
        outcome: str = typer.Argument(
            ..., help="An outcome id (or unique prefix) from `aimos feedback --json`."
        ),
        output: str = typer.Option(
            ..., "-o", "--output", help="Write the V2 mutation bundle to FILE (and FILE.witness.json, ...)."
        ),
    ) -> None:
        """Export one outcome as a MutMem V2 mutation bundle, with its witness and trust context."""
        from aimos import paths
        from aimos.errors import UsageError
        from aimos.identity.session import open_brain
        from aimos.learning.export_v2 import build_outcome_export

        target = Path(output)
        if not output.strip() or target.is_dir():
            raise UsageError(
                "-o needs a file name", "For example: aimos export-outcome OUTCOME -o outcome.json"
            )
        with open_brain(write=False) as brain:
            bundle, witness, trust_context = build_outcome_export(brain.conn, outcome)
        files = (
            (target, bundle),
            (Path(f"{target}.witness.json"), witness),
            (Path(f"{target}.trust-context.json"), trust_context),
        )
        for path, document in files:
            paths.write_private_file(path, (json.dumps(document, indent=2, sort_keys=True) + "\n").encode())
        say(
            f"wrote a V2 mutation bundle ({bundle['terminal']['kind']}) to {target},"
            f" its witness to {files[1][0]} and its trust context to {files[2][0]}"
        )

    @app.command("verify-bundle")
    def verify_bundle_cmd(
        file: str = typer.Argument(
            ..., help="A bundle: V2 recall, V2 mutation or cognitive evidence (JSON)."
        ),
        master_fingerprint: str = typer.Option(
            None,
            "--master-fingerprint",
            help="Expected master fingerprint (64 hex); required for V2 bundles.",
        ),
        witness: str = typer.Option(None, "--witness", help="V2 mutation: the P2 witness (JSON)."),
        trust_context: str = typer.Option(
            None, "--trust-context", help="V2 mutation: the V2 recall envelope it rests on (JSON)."
        ),
        json_out: bool = typer.Option(False, "--json", help="Print the verdict as JSON."),
    ) -> None:
        """Verify an evidence bundle offline, whoever made it; exit 4 when invalid.

        A valid verdict proves that the bundle is internally consistent and signed by keys that
        chain to the master fingerprint you supplied, so what it says was disclosed or changed is
        what that brain's master authorized. It does not prove that the memories are true, that
        the bundle is the brain's only evidence, or that the master key was not misused.
        """
        from aimos.crypto.encoding import is_hex64
        from aimos.errors import UsageError, VerificationError

        path = Path(file)
        if not path.is_file():
            raise UsageError(f"no file {file}", "Give the path of a bundle file.")
        schema = _bundle_schema(path)
        if schema in (V2_RECALL, V2_MUTATION):
            if master_fingerprint is None:
                raise UsageError(
                    "a V2 bundle is verified against a master fingerprint you supply",
                    "Add --master-fingerprint HEX (the fingerprint `aimos install` printed).",
                )
            if not is_hex64(master_fingerprint):
                raise UsageError("the master fingerprint must be 64 lowercase hex characters")
            verdict = _verify_v2(path, schema, master_fingerprint, witness, trust_context)
            if json_out:
                emit_json({"schema": schema, **verdict.to_json()})
            else:
                where = f" at {verdict.where}" if verdict.where else ""
                out(f"{verdict.verdict}" + (f": {verdict.reason}{where}" if verdict.reason else ""))
                if verdict.detail and verdict.reason:
                    out(f"  {verdict.detail}")
                out(f"signatures verified: {verdict.signatures_verified}")
            if verdict.verdict != "valid":
                raise VerificationError(f"the bundle is {verdict.verdict}: {verdict.reason}")
            return
        from aimos.identity.session import expected_master_fingerprint
        from aimos.verify.cognitive import verify_cognitive_file

        fingerprint = expected_master_fingerprint(master_fingerprint)
        verdict_c = verify_cognitive_file(path, expected_master_fingerprint=fingerprint)
        result = {
            "verdict": verdict_c.verdict,
            "primary_reason": verdict_c.primary_reason,
            "corpus_proof_root": verdict_c.corpus_proof_root,
            "bundle_sha256": verdict_c.bundle_sha256,
            "records": verdict_c.records,
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
                        for r in verdict_c.records
                    ],
                )
            )
            out(
                f"{verdict_c.verdict}" + (f": {verdict_c.primary_reason}" if verdict_c.primary_reason else "")
            )
            out(f"corpus proof root {verdict_c.corpus_proof_root}")
        if verdict_c.verdict != "valid":
            raise VerificationError(f"the bundle is {verdict_c.verdict}: {verdict_c.primary_reason}")


V2_RECALL = "hom.aimos.mutmem-portable-evidence/v2"
V2_MUTATION = "hom.aimos.mutmem-portable-mutation-evidence/v2"
MAX_V2_BYTES = 16 * 1024 * 1024


def _strict_load(path: Path) -> Any:
    """Strict JSON (no duplicate keys, no NaN, depth <= 32) of at most MAX_V2_BYTES; raises
    ValueError (JSONDepthError for nesting deeper than the canonical limit)."""
    from aimos.verify.cognitive import strict_json_loads

    data = path.read_bytes()
    if len(data) > MAX_V2_BYTES:
        raise ValueError(f"over {MAX_V2_BYTES} bytes")
    return strict_json_loads(data.decode("utf-8"))


def _bundle_schema(path: Path) -> str | None:
    try:
        document = _strict_load(path)
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    fmt = document.get("format") if isinstance(document, dict) else None
    schema = fmt.get("schema") if isinstance(fmt, dict) else None
    return schema if isinstance(schema, str) else None


def _verify_v2(
    path: Path, schema: str, fingerprint: str, witness: str | None, trust_context: str | None
) -> Any:
    from aimos.errors import UsageError
    from aimos.verify.v2_mutation import verify_mutation_bundle
    from aimos.verify.v2_recall import verify_recall_envelope

    bundle = _strict_load(path)
    if schema == V2_RECALL:
        return verify_recall_envelope(bundle, fingerprint)
    documents: list[Any] = []
    for name, given in (("--witness", witness), ("--trust-context", trust_context)):
        if given is None:
            documents.append(None)
            continue
        try:
            documents.append(_strict_load(Path(given)))
        except FileNotFoundError:
            raise UsageError(f"no file {given}", f"Give {name} the path of a JSON file.") from None
        except (OSError, ValueError, UnicodeDecodeError):
            documents.append(f"unreadable {name}")
    return verify_mutation_bundle(
        bundle, witness=documents[0], trust_context=documents[1], expected_master_fingerprint=fingerprint
    )
