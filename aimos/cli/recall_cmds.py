"""`aimos recall`, `aimos receipt show|verify|list`, `aimos index rebuild [--vectors-only]`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from aimos.cli.options import ANCHORED_MASTER_FINGERPRINT, HISTORY, json_option, signer_option
from aimos.cli.output import emit_json, first_line, line, out, say, table, when
from aimos.plural import plural

if TYPE_CHECKING:
    from aimos.store.connection import Connection

receipt_app = typer.Typer(
    help="Show and verify recall receipts.", no_args_is_help=True, rich_markup_mode=None
)
index_app = typer.Typer(
    help="Rebuild the brain's search indexes and vectors.", no_args_is_help=True, rich_markup_mode=None
)


def register(app: typer.Typer) -> None:
    @app.command("recall")
    def recall_cmd(
        query: str = typer.Argument(..., help="What to look for, in plain words."),
        k: int = typer.Option(10, "-k", "--limit", help="How many results, 1..200."),
        json_out: bool = typer.Option(False, "--json", help="Results plus the full receipt as JSON."),
        show_withheld: bool = typer.Option(
            False, "--show-withheld", help="Also list memories withheld as untrusted (ids, no content)."
        ),
        history: bool = HISTORY,
        guides: bool = typer.Option(
            False,
            "--guides",
            help="Also search aimos's own guides (searched anyway when the query names aimos).",
        ),
        agent: str = signer_option("the recall"),
    ) -> None:
        """Recall memories, with a signed receipt.

        Recall memories through a signed request; every recall returns a signed receipt.

        Only memories that match the query are returned: fewer than the limit, or none (aimos
        abstains, and the receipt records it), rather than memories that share only common words
        with it. Columns: match (how well the memory matches the query, 1.00 for the best match),
        trust (0.72 for a memory nobody has judged, "not judged"; higher once a person supports it,
        lower once it is doubted), weight (learned from feedback). Results are ranked by their
        product, with near-copies of a better result moved down. aimos's own guides (saved at
        install) answer questions about aimos: they are searched when the query names aimos, or
        with --guides, never for anything else.
        """
        from aimos.actions.labels import label_short, withheld_count, withheld_words
        from aimos.actions.recall import NOTHING_MATCHES, recall_as
        from aimos.actions.session import open_brain
        from aimos.memory.redaction import shown_text

        with open_brain(write=True) as brain:
            result = recall_as(brain, agent, query, limit=k, history=history, guides=guides)
        if json_out:
            emit_json(result.to_json(show_withheld=show_withheld))
            return
        if result.results:
            out(
                table(
                    ["#", "id", "match", "trust", "weight", "label", "memory"],
                    [
                        [
                            str(r["rank"]),
                            r["memory_id"][:8],
                            f"{r['relevance']:.2f}",
                            f"{r['trust']:.2f}",
                            f"{r['weight']:.3f}",
                            label_short(r["label"]),
                            first_line(shown_text(r), 70),
                        ]
                        for r in result.results
                    ],
                )
            )
        else:
            say(NOTHING_MATCHES)
        if show_withheld and result.withheld:
            out("")
            out("withheld as untrusted (content not shown):")
            for w in result.withheld:
                out(f"  {w['memory_id']}  {line(withheld_words(w['label'], w['reason']))}")
        elif result.withheld:
            say(f"{withheld_count(len(result.withheld))}; --show-withheld lists them.")
        receipt = result.receipt
        say(f"receipt {receipt['receipt_id']}  root {receipt['merkle_root']}")


@receipt_app.command("show")
def receipt_show(
    receipt_id: str = typer.Argument(..., help="Receipt id (or a unique prefix)."),
    json_out: bool = typer.Option(False, "--json", help="The whole receipt document as JSON."),
) -> None:
    """Show a recall receipt: its evidence and signed event.

    Show a recall receipt: its evidence entries, Merkle root and signed event."""
    from aimos.actions.session import open_brain
    from aimos.recall.receipts import receipt_document

    with open_brain(write=False) as brain:
        doc = receipt_document(brain.conn, receipt_id)
    if json_out:
        emit_json(doc)
        return
    out(f"receipt      {doc['receipt_id']}")
    out(f"created      {when(doc['created_at'])}")
    out(f"agent        {line(doc['request']['agent_id'])}")
    out(f"query        {line(doc['command']['query'])}")
    out(f"merkle root  {doc['merkle_root']}")
    out(f"event        {doc['event']['event_id']}  {doc['event']['mutation_hash']}")
    withheld = doc["decision"].get("withheld") if isinstance(doc["decision"], dict) else None
    count = len(withheld) if isinstance(withheld, list) else "?"
    out(f"results      {doc['result_count']}  (withheld {count})")
    evidence = doc["evidence"]
    if not isinstance(evidence, list) or not all(isinstance(e, dict) for e in evidence):
        say("the evidence is not a list of entries: the receipt was altered (aimos receipt verify says so)")
        return
    from aimos.actions.labels import RECEIPT_COLUMNS, receipt_entry

    out(table(list(RECEIPT_COLUMNS), [receipt_entry(e) for e in evidence]))


@receipt_app.command("verify")
def receipt_verify(
    receipt: str = typer.Argument(..., help="A receipt id in this brain, or a receipt JSON file."),
    master_fingerprint: str = ANCHORED_MASTER_FINGERPRINT,
    json_out: bool = json_option("the checks"),
) -> None:
    """Check a receipt's Merkle root and every signature.

    Recompute a receipt's Merkle root and check every signature; exit 4 if any check fails."""
    from aimos.errors import UsageError, VerificationError
    from aimos.verify.receipt import verdict, verify_receipt_document

    if not receipt.strip():
        raise UsageError("no receipt given", "Give a receipt id or a receipt JSON file.")
    from aimos.actions.session import expected_master_fingerprint

    fingerprint = expected_master_fingerprint(master_fingerprint)
    path = Path(receipt)
    if path.is_dir():
        raise UsageError(f"{path} is a folder, not a receipt file")
    if path.suffix == ".json" or path.exists():
        from aimos import paths
        from aimos.crypto.canonical import json_loads
        from aimos.errors import JSONDepthError

        try:
            doc = json_loads(paths.read_at_most(path), what=f"the receipt file {path}")
        except FileNotFoundError:
            raise UsageError(f"no file {path}") from None
        except JSONDepthError as exc:
            raise VerificationError(
                f"receipt does not verify: {exc.message}", exc.hint, reason=exc.reason
            ) from None
        except (ValueError, UnicodeDecodeError):
            raise UsageError(
                f"{path} is not a JSON receipt", "Export one with `aimos receipt show ID --json`."
            ) from None
        if not isinstance(doc, dict):
            raise UsageError(f"{path} is not a JSON receipt")
        checks = verify_receipt_document(doc, expected_master_fingerprint=fingerprint)
        subject = str(path)
    else:
        from aimos.actions.session import open_brain
        from aimos.recall.receipts import verify_receipt_in_brain

        with open_brain(write=False) as brain:
            checks = verify_receipt_in_brain(brain.conn, receipt, expected_master_fingerprint=fingerprint)
        subject = receipt
    ok = verdict(checks)
    if json_out:
        emit_json({"receipt": subject, "valid": ok, "checks": checks})
    else:
        for c in checks:
            out(
                f"{'ok  ' if c['ok'] else 'FAIL'}  {c['check']}"
                + (f": {line(c['detail'])}" if c["detail"] else "")
            )
        out("valid" if ok else "invalid")
    if not ok:
        failed = next(c for c in checks if not c["ok"])
        raise VerificationError(f"receipt does not verify: {failed['check']} failed")


@receipt_app.command("list")
def receipt_list(
    limit: int = typer.Option(20, "--limit", "-n", min=1, max=10_000, help="How many, newest first."),
    json_out: bool = json_option(None),
) -> None:
    """List recent recall receipts."""
    from aimos.actions.session import open_brain
    from aimos.store.queries.cli import recent_receipts

    with open_brain(write=False) as brain:
        found = recent_receipts(brain.conn, limit)
    if json_out:
        emit_json(found)
        return
    out(
        table(
            ["receipt", "agent", "n", "created", "query"],
            [
                [
                    r["receipt_id"][:8],
                    r["agent_id"],
                    str(r["result_count"]),
                    when(r["created_at"]),
                    first_line(r["query"], 50),
                ]
                for r in found
            ],
        )
    )


@index_app.command("rebuild")
def index_rebuild(
    vectors_only: bool = typer.Option(
        False,
        "--vectors-only",
        help="Only make the vectors memories lack (a brain from before recall by meaning, or after a"
        " model change): the search indexes and the vectors already made are kept.",
    ),
) -> None:
    """Rebuild the search indexes and vectors from the memories.

    Rebuild the search indexes and the memories' vectors from the memories table (they hold
    nothing else). The vectors are made by the embedding model, about 25 ms a memory."""
    from aimos.actions.session import open_brain
    from aimos.recall.candidates import rebuild_indexes
    from aimos.store import vectors
    from aimos.store.connection import write_transaction

    with open_brain(write=True) as brain:
        if not vectors_only:
            with write_transaction(brain.conn):
                count = rebuild_indexes(brain.conn)
                vectors.remove_all(brain.conn)  # made again below, from the memories' text
            out(f"rebuilt the search indexes over {plural(count, 'memory')}")
        _make_vectors(brain.conn)


def _make_vectors(conn: Connection) -> None:
    """Make the vectors memories lack, with a progress line, and say how many and how long; with
    the model unavailable, say they were not made and why."""
    import time

    from aimos.cli.output import phase_progress
    from aimos.errors import ModelUnavailableError
    from aimos.meaning.index import embed_pending
    from aimos.meaning.model import load
    from aimos.store import vectors

    try:
        embedder = load()
    except ModelUnavailableError as exc:
        say(f"vectors were not made: {exc.message}; recall works on words alone until they are")
        return
    total = vectors.pending_count(conn, embedder.name)
    shown = phase_progress(1, "making vectors")  # on stderr, when a terminal
    shown(0, "vectors")
    started = time.perf_counter()
    made = embed_pending(conn, embedder, progress=lambda done: shown.count(done, total))
    shown(1, "done")
    seconds = time.perf_counter() - started
    out(f"made {plural(made, 'vector')} in {seconds:.1f} s ({embedder.name})")
