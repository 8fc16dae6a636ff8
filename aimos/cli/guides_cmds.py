"""`aimos guides`: aimos's own guides (the memories `aimos install` saves to answer questions about
aimos), and `aimos guides hide|show`: whether `aimos list` and the TUI's memory list show them. A
view setting of this home (actions/guides.py), not brain data: nothing is signed or written to
the brain."""

from __future__ import annotations

import typer

from aimos.cli.options import json_option
from aimos.cli.output import emit_json, first_line, out, say, table

guides_app = typer.Typer(
    invoke_without_command=True,
    rich_markup_mode=None,
)

_RECALL = "recall searches them only when asked (aimos recall --guides) or when the question names aimos"


@guides_app.callback()
def guides_cmd(
    ctx: typer.Context,
    json_out: bool = json_option("the guides and the setting"),
) -> None:
    """List aimos's guides, or hide or show them.

    Alone, it lists them and says whether your lists show them. The guides answer questions
    about aimos; `aimos guides hide` leaves them out of `aimos list` and the TUI's memory list,
    `aimos guides show` brings them back. It is your view setting, kept in aimos's config folder:
    the brain and its signed records are not touched."""
    if ctx.invoked_subcommand is not None:
        return
    from aimos import paths
    from aimos.actions.guides import view
    from aimos.actions.session import open_brain
    from aimos.memory.redaction import shown_text
    from aimos.memory.versions import guide_memories

    seen = view()
    with open_brain(write=False) as brain:
        guides = guide_memories(brain.conn)
    if json_out:
        emit_json(
            {
                "hidden": seen.guides_hidden,
                "setting": str(paths.view_setting_path()),
                "problem": seen.problem,
                "guides": guides,
            }
        )
        return
    if seen.problem:
        say(seen.problem)
    if not guides:
        say("This brain has no guides (it was installed without them).")
        return
    out(
        table(
            ["id", "key", "title"],
            [
                [g["memory_id"][:8], g["key"] or "-", first_line(shown_text(g).removeprefix("# "))]
                for g in guides
            ],
        )
    )
    if seen.guides_hidden:
        say(f"{len(guides)} guides, hidden from aimos list and the TUI (aimos guides show); {_RECALL}.")
    else:
        say(f"{len(guides)} guides, shown in aimos list and the TUI (aimos guides hide); {_RECALL}.")


def _set(hidden: bool) -> None:
    from aimos.actions.guides import set_guides_hidden

    changed = set_guides_hidden(hidden)
    where = "left out of" if hidden else "shown in"
    again = "" if changed else "already "
    back = "aimos guides show" if hidden else "aimos guides hide"
    say(f"aimos's guides are {again}{where} aimos list and the TUI's memory list ({back}); {_RECALL}.")


@guides_app.command("hide")
def hide_cmd() -> None:
    """Leave aimos's guides out of your lists.

    `aimos list` and the TUI's memory list leave them out and say how many; a view setting of
    yours, not the brain's data."""
    _set(True)


@guides_app.command("show")
def show_cmd() -> None:
    """Show aimos's guides in your lists again."""
    _set(False)
