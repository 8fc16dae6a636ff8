"""`aimos purge`: the offline purge ceremony (the `purge` package, imported here lazily and
nowhere else in aimos) and `aimos purge verify-receipt`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from aimos.cli.options import PASSPHRASE_FD, json_option
from aimos.cli.output import emit_json, out, read_confirmation, say
from aimos.plural import plural

purge_app = typer.Typer(
    help="Destroy this brain for good, with a signed receipt.\n\nDestroy this brain, offline, with a signed"
    " categorical receipt (dry run by default).",
    invoke_without_command=True,
)


def scratch_purger(receipts_dir: Path) -> Any:
    """What the evaluation commands hand their finished scratch brains to: the ceremony for a
    batch of one eval-* brain, confirmed by the evaluation that made it, a receipt in
    ``receipts_dir`` (outside the scratch home, which is removed afterwards)."""

    def purge_one(home: Path, passphrase: str) -> str:
        from aimos.paths import using_home
        from aimos.purge import ceremony
        from aimos.purge.batch import batch_confirmation, purge_scratch_batch

        with using_home(home):
            inv = ceremony.inventory()
        confirmation = batch_confirmation(inv.company_id, [f"{inv.brain_name}:{inv.brain_id}"])
        return purge_scratch_batch([(home, passphrase)], confirmation, receipts_dir)[0]

    return purge_one


def inventory() -> Any:
    """The ceremony's inventory of the brain here (`purge.inventory.Inventory`; NotFound without one)."""
    from aimos.purge import ceremony

    return ceremony.inventory()


def print_inventory(inv: Any) -> None:
    out(f"brain        {inv.brain_name} ({inv.brain_id}) of company {inv.company_id}")
    out(f"path         {inv.brain_path}")
    out(f"keystore     {inv.keystore_kind}, {plural(len(inv.key_items), 'item')}")
    out("rows by class:")
    for c in inv.classes:
        out(f"  {c['class']:<24} {c['row_count']}")
    out(f"owned files  {len(inv.files)} besides the brain, removed with it")
    for f in inv.files:
        out(f"  {f}")
    out(f"kept         {len(inv.kept)}, and why")
    for k in inv.kept:
        out(f"  {k['what']}: {k['where']}: {k['why']}")


def ceremony_pending() -> bool:
    """True when a ceremony for the brain here was interrupted (its next run finishes it)."""
    from aimos.purge import ceremony

    return bool(ceremony.interrupted())


def run_ceremony(
    passphrase: str,
    *,
    recreate: bool = False,
    receipt_file: Path | None = None,
    stop_housekeeper: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """The live ceremony (or the end of an interrupted one): its typed confirmation read here,
    then everything of the brain removed and the signed receipt written."""
    from aimos.purge import ceremony

    try:
        result: dict[str, Any] = ceremony.start(
            passphrase,
            read_confirmation,
            recreate=recreate,
            receipt_file=receipt_file,
            stop_housekeeper=stop_housekeeper,
        )
    except KeyboardInterrupt:
        if ceremony.interrupted():
            say("interrupted: the ceremony's intent is signed; `aimos purge --live` finishes it")
            raise typer.Exit(130) from None
        raise
    return result


def print_purged(result: dict[str, Any]) -> None:
    out(f"purged: ceremony {result['ceremony_id']}")
    out(f"receipt: {result['receipt']}")
    out(f"intent:  {result['intent']}")
    say(
        f"Check it any time: aimos purge verify-receipt {result['receipt']} "
        f"--master-fingerprint {result['master_fingerprint']}"
    )


@purge_app.callback()
def purge(
    ctx: typer.Context,
    live: bool = typer.Option(
        False, "--live", help="Execute (after the master passphrase and the typed text)."
    ),
    recreate: bool = typer.Option(False, "--recreate", help="Leave an empty migrated brain in its place."),
    receipt_file: str = typer.Option(
        None, "--receipt-file", help="Write the receipt here (intent beside it)."
    ),
    passphrase_fd: int = PASSPHRASE_FD,
    json_out: bool = json_option("the inventory or the result"),
) -> None:
    """Dry run: the inventory and the confirmation text. --live: the ceremony."""
    if ctx.invoked_subcommand is not None:
        return
    from aimos.purge import ceremony

    pending = ceremony.interrupted()
    if not live:
        if pending:
            say(
                f"an interrupted purge ceremony ({pending[0]['ceremony_id']}) was found: its intent is "
                "signed; `aimos purge --live` finishes it"
            )
            if "brain" in pending[0].get("done", []) or not Path(pending[0]["brain_path"]).exists():
                if json_out:
                    emit_json({"interrupted": pending[0]["ceremony_id"], "done": pending[0].get("done", [])})
                return
        inv = inventory()
        if json_out:
            emit_json(inv.to_json())
            return
        print_inventory(inv)
        out("")
        out(f"To destroy it: aimos purge --live   and type exactly: {inv.confirmation}")
        say("dry run: nothing was changed")
        return
    from aimos.identity.passphrase import read_passphrase
    from aimos.installer.service import Paused

    passphrase = read_passphrase(fd=passphrase_fd, purpose="purge this brain")
    paused = Paused("the purge", say)  # stopped once the confirmation is typed; not started again
    try:
        result = run_ceremony(
            passphrase,
            recreate=recreate,
            receipt_file=Path(receipt_file) if receipt_file else None,
            stop_housekeeper=paused.stop,
        )
    except BaseException:
        if not ceremony.interrupted():  # refused before its signed intent: nothing was removed
            paused.start_again("the purge did not start, so nothing was removed: ")
        raise
    if json_out:
        emit_json(result)
        return
    print_purged(result)


@purge_app.command("verify-receipt")
def verify_receipt_cmd(
    file: str = typer.Argument(..., help="A purge receipt (its .intent.json must be beside it)."),
    master_fingerprint: str = typer.Option(
        ..., "--master-fingerprint", help="The brain's master fingerprint."
    ),
    json_out: bool = json_option("the verdict"),
) -> None:
    """Check a purge receipt's signature and binding.

    Check a purge receipt: signature, intent binding and master fingerprint (exit 4 if not)."""
    from aimos.crypto.canonical import json_loads
    from aimos.crypto.encoding import is_hex64
    from aimos.errors import JSONDepthError, NotFoundError, UsageError, VerificationError
    from aimos.paths import read_at_most
    from aimos.purge.artifacts import verify_purge_receipt

    if not is_hex64(master_fingerprint):
        raise UsageError("the master fingerprint must be 64 lowercase hex characters")
    path = Path(file)
    intent_path = Path(str(path).removesuffix(".receipt.json").removesuffix(".json") + ".intent.json")
    documents = []
    too_deep: str | None = None
    for p, role in ((path, "receipt"), (intent_path, "intent")):
        try:
            documents.append(json_loads(read_at_most(p)))
        except FileNotFoundError:
            raise NotFoundError(
                f"no file {p}", "The intent is written beside the receipt; keep them together."
            ) from None
        except JSONDepthError as exc:
            too_deep = too_deep or f"{role}:{exc.reason}"
            documents.append(None)
        except (OSError, ValueError, UnicodeDecodeError):
            documents.append(None)
    reason = too_deep or verify_purge_receipt(documents[0], documents[1], master_fingerprint)
    verdict = {"valid": reason is None, "reason": reason, "receipt": str(path), "intent": str(intent_path)}
    if reason is None:
        body = documents[0]["body"]
        verdict.update(
            ceremony_id=body["ceremony_id"],
            completed_at=body["completed_at"],
            postcondition=body["postcondition"]["mode"],
            affected_table_classes=body["affected_table_classes"],
        )
    if json_out:
        emit_json(verdict)
    else:
        out(f"{'valid' if reason is None else 'INVALID'}  {path}" + (f"  {reason}" if reason else ""))
    if reason is not None:
        raise VerificationError(f"the purge receipt does not verify: {reason}", "Do not rely on it.")
