"""`aimos verify`, `aimos export --cognitive`, `aimos export-recall`, `aimos export-outcome`,
`aimos verify-bundle`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from aimos.cli.options import ANCHORED_MASTER_FINGERPRINT, json_option
from aimos.cli.output import emit_json, line, out, phase_progress, say, table
from aimos.plural import agree, plural
from aimos.vocabulary import COGNITIVE_EVIDENCE_SCHEMA as COGNITIVE
from aimos.vocabulary import V1_RECALL_CORPUS_SCHEMA as V1_CORPUS
from aimos.vocabulary import V1_RECALL_EVIDENCE_SCHEMA as V1_RECALL
from aimos.vocabulary import V2_MUTATION_BUNDLE_SCHEMA as V2_MUTATION
from aimos.vocabulary import V2_RECALL_BUNDLE_SCHEMA as V2_RECALL


def _export_target(value: str, option: str, example: str) -> Path:
    """The file an export writes: a usage error (before the brain is opened) for no name or a folder."""
    from aimos.errors import UsageError

    target = Path(value)
    if not value.strip() or target.is_dir():
        raise UsageError(f"{option} needs a file name", f"For example: {example}")
    return target


def _export(
    value: str, option: str, example: str, build: Callable[[Any], Any], *, write: bool = False
) -> tuple[Path, Any]:
    """The export's file (checked before the brain is opened) and what ``build`` makes of the brain."""
    from aimos.actions.session import open_brain

    target = _export_target(value, option, example)
    with open_brain(write=write) as brain:
        return target, build(brain)


def _export_text(value: str, memory: str | None, guides: bool) -> None:
    from aimos.actions.export import text_export
    from aimos.errors import UsageError

    if memory is not None:
        raise UsageError("--memory goes with --cognitive; --text exports every current memory")
    kind = "markdown" if value.lower().endswith((".md", ".markdown")) else "jsonl"
    target, made = _export(
        value,
        "--text",
        "aimos export --text memories.jsonl",
        lambda b: text_export(b, kind, guides=guides),
    )
    _write_export(target, made.document.encode("utf-8"))
    say(f"wrote {plural(made.memories, 'memory')} ({kind}) to {target}")
    if made.redacted:
        say(f"left out {plural(made.redacted, 'redacted memory')}: their text is gone")
    if made.guides:
        left = plural(made.guides, "guide memory")
        say(f"left out aimos's {left} (every brain has its own; --guides writes them)")
    say(
        "warning: this file holds your memories in plain text (0600): keep it as private as the brain, "
        "and delete it when it has served"
    )


def _write_export(path: Path, data: bytes) -> None:
    """An export the person named: 0600, atomic; its folder made when missing, never re-moded."""
    from aimos import paths
    from aimos.errors import UsageError

    try:
        paths.write_private_file(path, data, own_folder=False)
    except OSError as e:
        raise UsageError(
            f"cannot write {path}: {e.strerror or type(e).__name__}",
            "Name a file in a folder you can write to.",
        ) from None


def _write_json(path: Path, document: Any) -> None:
    _write_export(path, (json.dumps(document, indent=2, sort_keys=True) + "\n").encode())


def _verify_hint(result: dict[str, Any]) -> str:
    from aimos.meaning.index import REASONS as VECTOR_REASONS
    from aimos.meaning.index import STALE

    reasons = {f["reason"] for f in (result["brain"] or {}).get("failures", [])}
    if reasons == {"brain_unsealed"}:
        return (
            "This brain was made by an aimos from before seals: its next write seals it (for example "
            "`aimos housekeeper run-job heartbeat`); then run `aimos verify` again."
        )
    if reasons and reasons <= {STALE}:
        return "The vectors were made by another model: run `aimos index rebuild` to make them again."
    if reasons and reasons <= {"search_index_mismatch", *VECTOR_REASONS}:
        return "The search indexes or vectors disagree with the memories: run `aimos index rebuild`."
    if "brain_rolled_back" in reasons or "brain_history_mismatch" in reasons:
        return (
            "This brain is older than the one last written (or another one): if you meant to go "
            "back, `aimos restore BACKUP` does it with a signed record; otherwise put the newer "
            "brain file back."
        )
    return (
        "See the failures above: the brain was changed outside aimos. Restore it with `aimos restore BACKUP`."
    )


def vectors_text(told: dict[str, Any]) -> str:
    """What the vector checks counted, and whether (and how many) were recomputed."""
    if "vectors" not in told:  # the brain checks stopped before they counted (a damaged brain)
        return "not counted: the brain checks stopped at the damage named above"
    having = agree(told["vectors"], "has", "have")
    counted = f"{told['vectors']} of {plural(told['memories'], 'memory')} {having} one"
    if told.get("stale"):
        counted += f" ({told['stale']} by another model)"
    if told.get("skipped"):
        return f"{counted}; form checked, recompute skipped: {told['skipped']}"
    if told.get("recompute") is None:
        return f"{counted}; form checked"
    if not told.get("recomputed"):
        return f"{counted}; form checked, none to recompute"
    which = "every one" if told["recompute"] == "all" else "a sample; --vectors all for every one"
    return f"{counted}; {told['recomputed']} recomputed by the model ({which})"


def _print_verification(result: dict[str, Any]) -> None:
    """`aimos verify`'s report in words: each verifier's verdict and failures, parity, the brain."""
    in_db, portable = result["in_database"], result["portable"]
    out(
        f"in-database verifier  {'ok' if in_db['ok'] else 'FAILED'}  "
        f"{plural(in_db['memories'], 'memory')}, {plural(len(in_db['event_chains']), 'event chain')}"
    )
    out(f"  corpus proof root   {in_db['corpus_proof_root']}")
    for r in in_db["failures"]:
        out(
            f"  FAIL {r['memory_id']}  {r['certification_status']}  {r['reason']}"
            + (f" ({line(r['detail'])})" if r["detail"] else "")
        )
    for c in in_db["event_chains"]:
        if not c["ok"]:
            out(
                f"  FAIL events of {c['signer_agent_id']}  {c['reason']}"
                + (f" ({line(c['detail'])})" if c.get("detail") else "")
            )
    out(
        f"portable verifier     {portable['verdict']}"
        + (f"  {portable['primary_reason']}" if portable["primary_reason"] else "")
        + (f" ({line(portable['detail'])})" if portable["primary_reason"] and portable["detail"] else "")
    )
    out(f"  corpus proof root   {portable['corpus_proof_root']}")
    mismatches = result["parity_mismatches"]
    out(f"parity                {'yes' if result['parity'] else 'NO: ' + ', '.join(mismatches[:5])}")
    brain_state = result["brain"]
    if brain_state is not None:
        anchored = brain_state["anchored_seal"]
        out(
            f"brain                 {'ok' if brain_state['ok'] else 'FAILED'}  "
            f"{plural(brain_state['rows'], 'row')} under {plural(brain_state['seals'], 'seal')},"
            " schema, search indexes, "
            + (
                f"newest seal #{brain_state['head_seal']} (anchored #{anchored})"
                if anchored
                else "no freshness anchor outside the brain"
            )
        )
        for f in brain_state["failures"]:
            out(f"  FAIL {f['check']}  {f['reason']}  ({line(f['detail'])})")
        if brain_state.get("vectors"):
            out(f"vectors               {line(vectors_text(brain_state['vectors']))}")


def verify_cmd(
    memory: str = typer.Option(None, "--memory", help="Verify one memory (id or unique prefix)."),
    master_fingerprint: str = ANCHORED_MASTER_FINGERPRINT,
    vectors: str = typer.Option(
        None,
        "--vectors",
        help="Recompute the memories' vectors by the model: 'sample' (the default: 64 at random"
        " and the newest) or 'all'.",
    ),
    json_out: bool = json_option("the report"),
) -> None:
    """Verify the whole brain with both verifiers.

    Run the in-database and the portable verifier; report verdicts, reasons, roots and parity."""
    from aimos.actions.session import expected_master_fingerprint, open_for_verification
    from aimos.errors import UsageError, VerificationError
    from aimos.meaning.index import RECOMPUTE
    from aimos.memory.versions import resolve_memory_id
    from aimos.verify.brain import outcome as verify_outcome
    from aimos.verify.brain.outcome import keep_outcome
    from aimos.verify.brain.parity import VERIFY_PHASES, verify_everything

    fingerprint = expected_master_fingerprint(master_fingerprint)
    if memory is not None and not memory.strip():
        raise UsageError("--memory is empty", "Give a memory id, or leave --memory out to verify everything.")
    if vectors is not None and (vectors not in RECOMPUTE or memory is not None):
        raise UsageError(
            f"--vectors takes {' or '.join(RECOMPUTE)}, with a verify of the whole brain",
            "For example: aimos verify --vectors all",
        )
    conn = open_for_verification()
    try:
        mid = resolve_memory_id(conn, memory) if memory else None
        shown = phase_progress(len(VERIFY_PHASES), "verifying")  # on stderr, when a terminal
        result = verify_everything(
            conn, fingerprint, mid, progress=shown, count=shown.count, vectors=vectors or RECOMPUTE[0]
        )
        if mid is None:  # a full verification: its outcome is what every command warns of
            keep_outcome(conn, result, fingerprint, verify_outcome.CLI)
    finally:
        conn.close()
    if json_out:
        emit_json(result)
    else:
        _print_verification(result)
    if not result["ok"]:
        raise VerificationError("the brain does not verify", _verify_hint(result))


def export_cmd(
    cognitive: str = typer.Option(None, "--cognitive", help="Write the cognitive-evidence bundle to FILE."),
    text: str = typer.Option(
        None, "--text", help="Write the memories' text to FILE (JSONL; markdown when FILE ends in .md)."
    ),
    memory: str = typer.Option(None, "--memory", help="Only this memory (--cognitive)."),
    guides: bool = typer.Option(
        False, "--guides", help="With --text: also write aimos's own guides (left out by default)."
    ),
) -> None:
    """Export memories as text, or as evidence to verify.

    Export portable evidence (--cognitive: hom.aimos.mutmem-cognitive-evidence/v1, for offline
    verification), or the current memories' text, keys, types, labels and weights (--text:
    plain text, 0600, which `aimos import` reads into another brain)."""
    from aimos.errors import UsageError

    if (cognitive is None) == (text is None):
        raise UsageError(
            "name one export: --cognitive FILE or --text FILE",
            "For example: aimos export --text memories.jsonl",
        )
    if text is not None:
        _export_text(text, memory, guides)
        return
    if guides:
        raise UsageError("--guides goes with --text", "For example: aimos export --text m.jsonl --guides")
    from aimos.actions.export import cognitive_bundle

    example = "aimos export --cognitive brain.json"
    target, bundle = _export(
        cognitive, "--cognitive", example, lambda b: cognitive_bundle(b, memory), write=True
    )
    _write_json(target, bundle)
    say(f"wrote {plural(len(bundle['memories']), 'memory')} to {target}")
    if memory is not None and len(bundle["memories"]) == 1:
        mid = bundle["memories"][0]["memory_id"]
        say(f"a bundle of one memory: verify it with `aimos verify-bundle {target} --memory {mid}`")


def export_recall_cmd(
    receipt: str = typer.Argument(..., help="A recall receipt id (or unique prefix)."),
    output: str = typer.Option(..., "-o", "--output", help="Write the V2 recall envelope to FILE."),
) -> None:
    """Export one recall as a portable evidence bundle.

    Export one recall as a MutMem V2 recall-disclosure envelope (verify it with verify-bundle)."""
    from aimos.actions.export import recall_envelope

    example = "aimos export-recall RECEIPT -o recall.json"
    target, bundle = _export(output, "-o", example, lambda b: recall_envelope(b, receipt))
    _write_json(target, bundle)
    say(f"wrote a V2 recall envelope ({plural(bundle['result_count'], 'result')}) to {target}")


def export_outcome_cmd(
    outcome: str = typer.Argument(..., help="An outcome id (or unique prefix) from `aimos feedback --json`."),
    output: str = typer.Option(
        ..., "-o", "--output", help="Write the V2 mutation bundle to FILE (and FILE.witness.json, ...)."
    ),
) -> None:
    """Export one outcome as a portable evidence bundle.

    Export one outcome as a MutMem V2 mutation bundle, with its witness and trust context."""
    from aimos.actions.export import outcome_bundle

    example = "aimos export-outcome OUTCOME -o outcome.json"
    target, (bundle, witness, trust_context) = _export(
        output, "-o", example, lambda b: outcome_bundle(b, outcome)
    )
    files = (
        (target, bundle),
        (Path(f"{target}.witness.json"), witness),
        (Path(f"{target}.trust-context.json"), trust_context),
    )
    for path, document in files:
        _write_json(path, document)
    say(
        f"wrote a V2 mutation bundle ({bundle['terminal']['kind']}) to {target},"
        f" its witness to {files[1][0]} and its trust context to {files[2][0]}"
    )


def verify_bundle_cmd(
    file: str = typer.Argument(
        ...,
        help="A bundle (JSON): V2 recall or mutation, V1 recall evidence or corpus, or cognitive.",
    ),
    master_fingerprint: str = typer.Option(
        None,
        "--master-fingerprint",
        help="Expected master fingerprint (64 hex); required for V2 bundles, else anchors.json's.",
    ),
    witness: str = typer.Option(None, "--witness", help="V2 mutation: the P2 witness (JSON)."),
    trust_context: str = typer.Option(
        None, "--trust-context", help="V2 mutation: the V2 recall envelope it rests on (JSON)."
    ),
    memory: str = typer.Option(
        None,
        "--memory",
        help="Cognitive: the bundle was exported for this one memory (its full id), with"
        " `aimos export --cognitive FILE --memory ID`; without it the bundle must hold every"
        " memory its events name.",
    ),
    json_out: bool = json_option("the verdict"),
) -> None:
    """Verify an evidence bundle offline, whoever made it.

    Exit 4 when it is invalid.

    A valid verdict proves that the bundle is internally consistent and signed by keys that
    chain to the master fingerprint you supplied, so what it says was disclosed or changed is
    what that brain's master authorized. It does not prove that the memories are true, that
    the bundle is the brain's only evidence, or that the master key was not misused.
    """
    from aimos.errors import UsageError

    path = Path(file)
    if not path.is_file():
        raise UsageError(f"no file {file}", "Give the path of a bundle file.")
    document = _load_document(path)
    kind, schema = _bundle_kind(document)
    if kind == "unknown":
        _unsupported(schema, json_out)
    if memory is not None and (kind != "cognitive" or not memory.strip()):
        raise UsageError(
            "--memory names the one memory a cognitive bundle was exported for",
            "Give the full memory id with a cognitive bundle, or leave --memory out.",
        )
    if kind == "v2":
        assert schema is not None
        _verify_bundle_v2(path, schema, master_fingerprint, witness, trust_context, json_out)
        return
    if kind in ("v1_recall", "v1_corpus"):
        _verify_v1_recall(document, kind == "v1_corpus", master_fingerprint, json_out)
        return
    _verify_cognitive(path, master_fingerprint, memory, json_out)


def _verify_bundle_v2(
    path: Path,
    schema: str,
    master_fingerprint: str | None,
    witness: str | None,
    trust_context: str | None,
    json_out: bool,
) -> None:
    """verify-bundle of a V2 recall envelope or mutation bundle, against the master fingerprint the
    caller supplies (required); with a mutation bundle's witness and trust context when given."""
    from aimos.crypto.encoding import is_hex64
    from aimos.errors import UsageError, VerificationError

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
        if verdict.detail and verdict.reason:
            out(f"  {line(verdict.detail)}")
        where = f" at {verdict.where}" if verdict.where else ""
        reason = f"{verdict.reason}{where}" if verdict.reason else None
        out(_summary(verdict.verdict, reason, [_checked(verdict.signatures_verified)]))
    if verdict.verdict != "valid":
        missing = [
            f"{name} {path}.{suffix}"
            for name, given, suffix in (
                ("--witness", witness, "witness.json"),
                ("--trust-context", trust_context, "trust-context.json"),
            )
            if given is None and schema != V2_RECALL
        ]
        hint = (
            "A mutation bundle is checked with its witness and trust context: "
            f"add {' '.join(missing)} (`aimos export-outcome` writes them beside the bundle)."
            if missing
            else None
        )
        raise VerificationError(f"the bundle is {verdict.verdict}: {verdict.reason}", hint)


def register(app: typer.Typer) -> None:
    app.command("verify")(verify_cmd)
    app.command("export")(export_cmd)
    app.command("export-recall")(export_recall_cmd)
    app.command("export-outcome")(export_outcome_cmd)
    app.command("verify-bundle")(verify_bundle_cmd)


def _checked(signatures: int) -> str:
    return f"{plural(signatures, 'signature')} checked"


def _summary(verdict: str, reason: str | None, counts: list[str]) -> str:
    """verify-bundle's last line: the verdict, the reason for any other than valid, and what was
    counted ("valid: 2 memories, 4 signatures checked")."""
    counted = ", ".join(counts)
    if reason:
        return f"{verdict}: {reason}" + (f" ({counted})" if counted else "")
    return f"{verdict}: {counted}" if counted else verdict


MAX_V2_BYTES = 16 * 1024 * 1024
# Top-level fields that say which verifier a document without a known schema was meant for, so
# that a bundle whose format was tampered with still gets that verifier's own reason.
_COGNITIVE_FIELDS = frozenset({"master_identity", "event_streams", "sql_records"})
_V1_RECALL_FIELDS = frozenset({"trust_anchors", "request", "recall_receipt"})
_V1_CORPUS_FIELDS = frozenset({"intended_n", "members", "corpus_root"})


def _strict_load(path: Path) -> Any:
    """Strict JSON (no duplicate keys, no NaN, depth <= 32) of at most MAX_V2_BYTES; raises
    ValueError (JSONDepthError for nesting deeper than the canonical limit)."""
    from aimos.paths import read_at_most
    from aimos.verify.cognitive import strict_json_loads

    return strict_json_loads(read_at_most(path, MAX_V2_BYTES).decode("utf-8"))


def _load_document(path: Path) -> Any:
    """The file as strict JSON, or None when it is not (the cognitive verifier then says why)."""
    from aimos.verify.kit import MAX_BUNDLE_BYTES, BundleParseError, load_bundle

    try:
        with path.open("rb") as handle:
            return load_bundle(handle.read(MAX_BUNDLE_BYTES + 1))
    except (OSError, BundleParseError):
        return None


def _bundle_kind(document: Any) -> tuple[str, str | None]:
    """Which verifier takes the document ("v2", "v1_recall", "v1_corpus", "cognitive" or "unknown"), and its
    format.schema. A document that is not a JSON object goes to the cognitive verifier, which
    reports why it cannot be read, as the reference does."""
    from aimos.verify.v1_recall import document_schema

    schema = document_schema(document)
    if schema in (V2_RECALL, V2_MUTATION):
        return "v2", schema
    if schema == V1_RECALL:
        return "v1_recall", schema
    if schema == V1_CORPUS:
        return "v1_corpus", schema
    if schema == COGNITIVE or not isinstance(document, dict):
        return "cognitive", schema
    fields = set(document)
    if fields & _COGNITIVE_FIELDS:
        return "cognitive", schema
    if fields & _V1_RECALL_FIELDS:
        return "v1_recall", schema
    if fields & _V1_CORPUS_FIELDS:
        return "v1_corpus", schema
    return "unknown", schema


def _unsupported(schema: str | None, json_out: bool) -> None:
    from aimos.errors import VerificationError

    said = f"format.schema {schema!r}" if schema is not None else "no format.schema"
    detail = f"the file is a JSON object with {said}, not an evidence bundle verify-bundle knows"
    if json_out:
        emit_json(
            {"schema": schema, "verdict": "invalid", "primary_reason": "unsupported_schema", "detail": detail}
        )
    else:
        out(f"  {detail}")
        out(_summary("invalid", "unsupported_schema", []))
    raise VerificationError(
        f"the bundle is invalid: unsupported_schema ({said})",
        "verify-bundle takes MutMem V2 recall and mutation bundles, V1 recall evidence and corpora"
        " (hom.aimos.mutmem-recall-evidence/v1, hom.aimos.mutmem-recall-corpus/v1) and cognitive"
        " evidence (hom.aimos.mutmem-cognitive-evidence/v1).",
    )


def _verify_v1_recall(document: Any, corpus: bool, master_fingerprint: str | None, json_out: bool) -> None:
    """MutMem V1 recall evidence or a recall corpus, against the caller's master fingerprint."""
    from aimos.actions.session import expected_master_fingerprint
    from aimos.errors import VerificationError
    from aimos.verify.v1_recall import RecallCorpusVerdict, verify_v1_recall_document

    fingerprint = expected_master_fingerprint(master_fingerprint)
    verdict = verify_v1_recall_document(document, expected_master_fingerprint=fingerprint, corpus=corpus)
    if json_out:
        emit_json(verdict.as_dict())
    elif isinstance(verdict, RecallCorpusVerdict):
        if verdict.members:
            out(
                table(
                    ["member", "bundle", "verdict", "reason"],
                    [
                        [str(m.ordinal), m.bundle_id, m.verdict, m.primary_reason or "-"]
                        for m in verdict.members
                    ],
                )
            )
        if verdict.detail:
            out(f"  {line(verdict.detail)}")
        out(f"corpus root {verdict.corpus_root}")
        intended, observed = verdict.intended_n, verdict.observed_n or 0
        members = [] if intended is None else [f"{observed} of {plural(intended, 'intended member')}"]
        out(_summary(verdict.verdict, verdict.primary_reason, members))
    else:
        if verdict.detail:
            out(f"  {line(verdict.detail)}")
        if verdict.merkle_root:
            out(f"merkle root {verdict.merkle_root}")
        if verdict.bundle_sha256:
            out(f"bundle sha256 {verdict.bundle_sha256}")
        counts = [
            plural(value, noun, nouns)
            for noun, nouns, value in (
                ("memory", None, verdict.memories),
                ("Merkle leaf", "Merkle leaves", verdict.recall_leaves),
            )
            if value is not None
        ]
        counts.append(_checked(verdict.signatures_verified))
        out(_summary(verdict.verdict, verdict.primary_reason, counts))
    if verdict.verdict == "indeterminate":
        raise VerificationError(
            f"the bundle is indeterminate: {verdict.primary_reason}",
            "Mandatory evidence is missing, so nothing is proved either way: ask its producer for the"
            " complete bundle.",
        )
    if verdict.verdict != "valid":
        raise VerificationError(f"the bundle is {verdict.verdict}: {verdict.primary_reason}")


def _verify_cognitive(path: Path, master_fingerprint: str | None, memory: str | None, json_out: bool) -> None:
    """A cognitive-evidence bundle, against the caller's master fingerprint (and, for a bundle of
    one memory, the caller's memory id)."""
    from aimos.actions.session import expected_master_fingerprint
    from aimos.errors import VerificationError
    from aimos.verify.cognitive import verify_cognitive_file

    fingerprint = expected_master_fingerprint(master_fingerprint)
    verdict_c = verify_cognitive_file(
        path, expected_master_fingerprint=fingerprint, memory_id=memory.strip() if memory else None
    )
    result = {
        "verdict": verdict_c.verdict,
        "primary_reason": verdict_c.primary_reason,
        "detail": verdict_c.detail,
        "corpus_proof_root": verdict_c.corpus_proof_root,
        "bundle_sha256": verdict_c.bundle_sha256,
        "records": verdict_c.records,
    }
    if json_out:
        emit_json(result)
    else:
        from aimos.actions.labels import weight_history

        records = verdict_c.records
        if records:
            out(
                table(
                    ["memory", "verifies", "weight history", "signatures", "problem"],
                    [
                        [
                            r["memory_id"][:8],
                            "yes" if r["ok"] else "NO",
                            weight_history(r["certification_status"], r["chain_length"]),
                            str(r["sigs_verified"]),
                            r["reason"] or "-",
                        ]
                        for r in records
                    ],
                )
            )
        if verdict_c.detail and verdict_c.primary_reason:
            out(f"  {line(verdict_c.detail)}")
        if verdict_c.corpus_proof_root is not None:
            out(f"corpus proof root {verdict_c.corpus_proof_root}")
        counts = [
            plural(len(records), "memory"),
            plural(sum(r["chain_length"] for r in records), "signed weight change"),
            _checked(sum(r["sigs_verified"] for r in records)),
        ]
        out(_summary(verdict_c.verdict, verdict_c.primary_reason, counts))
    if verdict_c.verdict != "valid":
        from aimos.verify.cognitive import R

        hint = None
        if verdict_c.primary_reason == R.MEMORY_MISSING and memory is None:
            hint = (
                "The bundle lacks memories its events name: do not trust it as the whole brain. If it was"
                " exported for one memory (`aimos export --cognitive FILE --memory ID`), add --memory ID."
            )
        raise VerificationError(f"the bundle is {verdict_c.verdict}: {verdict_c.primary_reason}", hint)


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
