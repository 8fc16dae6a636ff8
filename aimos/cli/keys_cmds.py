"""`aimos passphrase change` and `aimos keystore move`: the master's passphrase and where the
brain's keys live."""

from __future__ import annotations

import os
from typing import Any

import typer

from aimos.cli.options import PASSPHRASE_FD, json_option
from aimos.cli.output import emit_json, out, say
from aimos.plural import plural

passphrase_app = typer.Typer(
    help="Change the master passphrase.", no_args_is_help=True, rich_markup_mode=None
)
keystore_app = typer.Typer(
    help="Move the brain's keys to another keystore.\n\nWhere the brain's keys live: move them between the"
    " OS keychain and the file keystore.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

NEW_PASSPHRASE_FD = typer.Option(
    None,
    "--new-passphrase-fd",
    help="Read the new passphrase from this file descriptor. The same N as --passphrase-fd: "
    "two lines on it, the current passphrase then the new one.",
)


@passphrase_app.command("change")
def change(
    passphrase_fd: int = PASSPHRASE_FD,
    new_passphrase_fd: int = NEW_PASSPHRASE_FD,
    json_out: bool = json_option(),
) -> None:
    """Re-seal the master key under a new passphrase.

    Re-seal the master key under a new passphrase (at least 8 characters). The current one
    (from --passphrase-fd, AIMOS_PASSPHRASE_FILE or a prompt) is checked first; the new one comes
    from --new-passphrase-fd or is typed twice. A kill at any moment leaves exactly one of the two
    working."""
    from aimos.actions import keys
    from aimos.actions.session import open_brain
    from aimos.identity.passphrase import (
        ENV_FILE,
        read_new_passphrase,
        read_old_and_new_from_fd,
        read_passphrase,
    )

    both = passphrase_fd is not None and passphrase_fd == new_passphrase_fd
    with open_brain(write=True) as brain:
        if both:
            old, new = read_old_and_new_from_fd(passphrase_fd)
        else:
            old = read_passphrase(fd=passphrase_fd, purpose="current")
        brain.master_with(old)  # a wrong current passphrase is refused before the new one is asked for
        if not both:
            new = read_new_passphrase(fd=new_passphrase_fd)
        result = keys.change_passphrase(brain, old, new)
        shared = _share_with_hub(brain)
    if json_out:
        emit_json(result.to_json())
    else:
        if result.settled:
            say(f"an earlier passphrase change that was cut off was {result.settled} first")
        out(f"master passphrase changed (master {result.master_fingerprint}, {result.keystore} keystore)")
    if result.record_problem:
        say(f"warning: the change is done, but its signed event was not written: {result.record_problem}")
    if passphrase_fd is None and os.environ.get(ENV_FILE):
        say(f"note: {ENV_FILE} ({os.environ[ENV_FILE]}) holds the old passphrase: put the new one there.")
    if shared is not None:
        say(
            f"sync hub: {shared}; the hub keeps the older sealings too (append-only): if the old "
            "passphrase leaked, see docs/sync.md"
        )


def _share_with_hub(brain: Any) -> str | None:
    """The new sealing of the master to the brain's sync hub, when it has one."""
    from aimos.hub.device import hub_url, share_sealed_master

    if hub_url(brain.keystore) is None:
        return None
    return share_sealed_master(brain.keystore, brain.meta["brain_id"])


@keystore_app.command("move")
def move(
    to: str = typer.Option(
        ..., "--to", help="os (the OS keychain) or file (aimos's own 0600 file keystore)."
    ),
    passphrase_fd: int = PASSPHRASE_FD,
    json_out: bool = json_option(),
) -> None:
    """Move every key of the brain to the other keystore.

    Move every key of the brain to the other keystore (master passphrase): each copied and
    read back, then the brain switched to it (a signed event), and only then the old items removed.
    A failure before the switch removes the copies and leaves the brain as it was."""
    from aimos.actions import keys
    from aimos.actions.session import open_brain

    with open_brain(write=True) as brain:
        keys.check_move(brain, to)
        master = brain.master(passphrase_fd, f"move the keys to the {to} keystore")
        result = keys.move_keystore(brain, master, to)
    if json_out:
        emit_json(result.to_json())
    else:
        moved = plural(len(result.items), "key")
        out(f"moved {moved} from the {result.source} keystore to the {result.target_detail}")
        if result.not_kept:
            say(
                f"{len(result.not_kept)} older epochs' keys were not in the {result.source} keystore "
                "(removed when they were revoked or rotated away); they are not needed"
            )
    if result.left_behind:
        say(
            f"warning: the brain now uses the {result.target} keystore, but these items could not be "
            f"removed from the {result.source} keystore: {', '.join(result.left_behind)}; remove them by hand"
        )
