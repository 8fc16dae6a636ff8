"""aimos's own guides in a person's view.

The guides are the memories `aimos install` saves in scope system (memory.versions.GUIDE_SQL says
what one is): they answer questions about aimos, so recall searches them only when asked (`recall
--guides`) or when the question names aimos. A person may also leave them out of `aimos list` and
the TUI's memory list. That is a view setting of this home (paths.view_setting_path, 0600), not
brain data: hiding or showing the guides signs nothing and writes nothing to the brain. A setting
that cannot be read as aimos writes it shows the guides (it can only ever hide aimos's own) and
says why.
"""

from __future__ import annotations

import json
import stat
from dataclasses import dataclass
from typing import Any

from aimos import paths
from aimos.crypto.canonical import json_loads

GUIDES = "guides"
HIDDEN, SHOWN = "hidden", "shown"
SETTING_BYTES = 64 << 10
REWRITE = "`aimos guides hide` or `aimos guides show` writes it again"


@dataclass(frozen=True)
class View:
    """The person's view setting: whether the guides are hidden, and what was wrong with the
    setting file when it could not be read (the guides are shown then)."""

    guides_hidden: bool = False
    problem: str | None = None


def _read() -> dict[str, Any]:
    """The setting file's object ({} when there is none); ValueError or OSError when it cannot be
    read as aimos writes it."""
    path = paths.view_setting_path()
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a pipe would block the open; a device never ends
            raise ValueError("not a file")
        data = paths.read_at_most(path, SETTING_BYTES)
    except FileNotFoundError:
        return {}
    doc = json_loads(data, what="the view setting")  # nesting depth bounded: no RecursionError
    if not isinstance(doc, dict) or doc.get(GUIDES, SHOWN) not in (HIDDEN, SHOWN):
        raise ValueError("not the view setting aimos writes")
    return doc


def view() -> View:
    """The person's view setting (guides shown when there is none)."""
    try:
        return View(guides_hidden=_read().get(GUIDES) == HIDDEN)
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not the setting aimos writes"
        return View(
            problem=f"the view setting {paths.view_setting_path()} cannot be read ({why}): "
            f"aimos's guides are shown; {REWRITE}"
        )


def set_guides_hidden(hidden: bool) -> bool:
    """Hide or show aimos's guides in the lists; whether that changed the setting. A setting file
    that cannot be read is written anew."""
    try:
        doc = _read()
    except (OSError, ValueError):
        doc = {}
    before = doc.get(GUIDES) == HIDDEN
    doc[GUIDES] = HIDDEN if hidden else SHOWN
    text = json.dumps(doc, indent=2, sort_keys=True) + "\n"
    paths.write_private_file(paths.view_setting_path(), text.encode("utf-8"))
    return before != hidden


def hidden_note(count: int) -> str:
    """What a list says, once, of the guides it left out."""
    return f"{count} {'guide' if count == 1 else 'guides'} hidden (aimos guides show)"
