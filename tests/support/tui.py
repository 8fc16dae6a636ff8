"""Helpers for the TUI's Pilot tests: run the real app on a real brain, read what a person would
see (the screen as text, a widget's content as text, which lines are drawn in red), and look at
the brain from outside with the real `sqlite3` shell.

Imported by the test modules of this folder as a plain module (tests/ is not a package; pytest
puts this folder on sys.path). Nothing here mocks aimos: the brain is installed and filled by the
real `aimos` CLI in a subprocess, the app opens it from $AIMOS_HOME as `aimos tui` does.
"""

from __future__ import annotations

import asyncio
import io
import shutil
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict, TypeVar

from rich.console import Console, ConsoleRenderable, RichCast
from rich.text import Text
from textual.app import App
from textual.pilot import Pilot
from textual.visual import VisualType
from textual.widgets import Input, Select, Static

from aimos.tui.detail import MemoryScreen
from aimos.tui.memory_table import MemoryTable
from aimos.tui.recall import RecallScreen
from support.cli import BRAIN, edit_outside, keystore_dir, run_aimos, sqlite_value, table_counts

if TYPE_CHECKING:
    from aimos.tui.app import AimosApp

T = TypeVar("T")

# what a signed action adds to, and what must not move when one is refused or cancelled
SIGNED_TABLES = (
    "memories",
    "events",
    "memory_provenance",
    "memory_supersessions",
    "outcomes",
    "weight_projections",
    "memory_classifications",
    "recall_receipts",
    "request_nonces",
)


# --- running the app --------------------------------------------------------------------------
def drive(
    scenario: Callable[[Pilot[Any]], Awaitable[T]],
    *,
    size: tuple[int, int] = (80, 24),
    agent: str = "cli",
    light: bool = False,
    clock: Callable[[], int] | None = None,
) -> T:
    """Run the real AimosApp headless at ``size`` (with ``clock`` as its clock, when given) and
    play ``scenario`` against it."""
    from aimos.tui.app import AimosApp

    async def main() -> T:
        app = AimosApp(agent=agent, light=light, clock=clock)
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            result = await scenario(pilot)
            await pilot.pause()
            assert app.is_running, "the app stopped during the scenario"
            return result

    return asyncio.run(main())


def aimos_app(pilot: Pilot[Any]) -> AimosApp:
    """The app ``drive`` runs, as the AimosApp it is (a Pilot knows it only as an App)."""
    from aimos.tui.app import AimosApp

    app = pilot.app
    assert isinstance(app, AimosApp), app
    return app


def on_top(app: App[Any]) -> object:
    """The screen on top now, read afresh, to compare by identity (``on_top(app) is screen``):
    after keys are pressed, what an earlier isinstance check of ``app.screen`` found is no longer
    known (a type checker would keep it), and ``screen`` keeps the type it was checked to have."""
    return app.screen


def focused_now(app: App[Any]) -> object:
    """The focused widget now, read afresh, to compare by identity (as ``on_top`` reads the screen)."""
    return app.focused


def memory_id_at(table: MemoryTable, index: int) -> str:
    """The id of the memory in row ``index`` of the list (a row the list holds)."""
    memory = table.memory_at(index)
    assert memory is not None, f"no row {index} in a list of {len(table.rowids)}"
    memory_id: str = memory["memory_id"]
    return memory_id


async def settle(pilot: Pilot[Any]) -> None:
    """Let workers finish and every message and refresh run."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


async def choose(pilot: Pilot[Any], select: Select[Any], value: str) -> None:
    """Pick ``value`` in a Select with the keyboard: focus, enter opens the list, arrows, enter."""
    values = [v for _prompt, v in select._options]
    assert value in values, f"{value!r} is not offered by {select.id}: {values}"
    current = values.index(select.value) if select.value in values else 0
    select.focus()
    await pilot.pause()
    await pilot.press("enter")
    await pilot.pause()
    steps = values.index(value) - current
    await pilot.press(*(["down"] * steps if steps >= 0 else ["up"] * -steps))
    await pilot.press("enter")
    await pilot.pause()
    assert select.value == value, f"{select.id} shows {select.value!r}, not {value!r}"


async def type_text(pilot: Pilot[Any], text: str) -> None:
    """Type ``text`` key by key (a space is the `space` key)."""
    await pilot.press(*["space" if c == " " else c for c in text])


async def paste(pilot: Pilot[Any], text: str) -> None:
    """Paste ``text`` into the focused widget, as a terminal's bracketed paste does (one event:
    much faster than typing a long passphrase key by key)."""
    from textual import events

    await pilot.pause()  # a focus() just made takes effect first
    assert pilot.app.focused is not None, "nothing has the focus to paste into"
    pilot.app.post_message(events.Paste(text))  # the app forwards it to the focused widget
    await pilot.pause()


# --- reading what is on screen -----------------------------------------------------------------
def screen_text(app: Any) -> str:
    """The whole terminal as plain text, dialogs over the screens below them (as a person sees it)."""
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        force_terminal=True,
        color_system="truecolor",
        record=True,
        legacy_windows=False,
        safe_box=False,
    )
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


def notifications(app: Any) -> list[str]:
    """The messages of the toasts (app.notify) currently shown."""
    return [str(n.message) for n in app._notifications]


def _console(width: int) -> Console:
    return Console(
        width=width, file=io.StringIO(), color_system="truecolor", force_terminal=True, record=True
    )


def content_of(widget: Static) -> VisualType:
    return widget.content  # what the app last gave update(): a str, a rich Text, Table or Group


def text_of(widget_or_content: Any, *, width: int = 200) -> str:
    """A Static's content (or any rich renderable) as plain text, whatever its height on screen."""
    content = content_of(widget_or_content) if isinstance(widget_or_content, Static) else widget_or_content
    if isinstance(content, str):
        return content
    if isinstance(content, Text):
        return content.plain
    console = _console(width)
    console.print(content)
    return console.export_text()


def styled_lines(widget_or_content: Any, *, width: int = 200) -> list[tuple[str, set[str]]]:
    """Each rendered line of a content with the colour names used on its non-blank text."""
    content = content_of(widget_or_content) if isinstance(widget_or_content, Static) else widget_or_content
    if isinstance(content, str):
        content = Text(content)
    assert isinstance(content, ConsoleRenderable | RichCast), content  # what render_lines can render
    console = _console(width)
    lines = console.render_lines(content, console.options.update_width(width), pad=False)
    found = []
    for segments in lines:
        colours: set[str] = set()
        for seg in segments:
            if seg.text.strip() and seg.style is not None and seg.style.color is not None:
                colours.add(seg.style.color.name)
        found.append(("".join(seg.text for seg in segments).rstrip(), colours))
    return found


def lines_in(widget: Static, colour: str, *, width: int = 200) -> list[str]:
    """The rendered lines of a widget drawn (at least partly) in ``colour``: green, red, yellow or
    cyan, as the app inks them in its current theme (the theme's success, error, warning and
    primary text colours)."""
    from aimos.tui.app import AimosApp

    app = widget.app
    assert isinstance(app, AimosApp), app
    wanted = app.ink(colour).split()[-1].lower()
    return [
        line for line, colours in styled_lines(widget, width=width) if wanted in {c.lower() for c in colours}
    ]


def table_rows(widget: Static) -> int:
    """How many rows the rich Table (or the last Table of a Group) in a Static holds."""
    from rich.console import Group
    from rich.table import Table

    content = content_of(widget)
    if isinstance(content, Group):
        tables = [r for r in content.renderables if isinstance(r, Table)]
        if not tables:
            return 0
        content = tables[-1]
    if not isinstance(content, Table):
        return 0
    return content.row_count


# --- the brain, through the real CLI and the sqlite3 shell --------------------------------------
_SAVE_OPTIONS: dict[str, Literal["key", "memory_type", "scope"]] = {
    "--key": "key",
    "--type": "memory_type",
    "--scope": "scope",
}


class _SaveFields(TypedDict, total=False):
    key: str
    memory_type: str
    scope: str


def save(text: str, *options: str) -> str:
    """What `aimos save TEXT OPTIONS` does (the same library call, in this process: a subprocess
    per save would make the suite slow): a signed save by agent cli. The new memory's id."""
    from aimos.actions.memory import NewMemory
    from aimos.actions.memory import save as signed_save
    from aimos.actions.session import open_brain

    assert len(options) % 2 == 0 and all(o in _SAVE_OPTIONS for o in options[::2]), options
    fields: _SaveFields = {}
    for o, v in zip(options[::2], options[1::2], strict=True):
        fields[_SAVE_OPTIONS[o]] = v
    with open_brain(write=True) as brain:
        result = signed_save(brain, "cli", NewMemory(value=text, **fields))
    assert result.status == "saved", result
    return str(result.memory_id)


def cli_save(text: str, *options: str) -> str:
    """`aimos save TEXT OPTIONS` in a subprocess (as from another shell): the new memory's id."""
    return run_aimos("save", text, *options).ok().out.strip()


def recall(query: str) -> dict[str, Any]:
    """What `aimos recall QUERY` does, in this process: a recall signed by agent cli. Its
    results and receipt."""
    from aimos.actions.bodies import build_recall_body
    from aimos.actions.session import now, open_brain
    from aimos.identity.requests import sign_request
    from aimos.recall.pipeline import recall as run
    from aimos.vocabulary import PATH_RECALL

    with open_brain(write=True) as brain:
        request = sign_request(brain.signer("cli"), build_recall_body(query=query), PATH_RECALL, now())
        result = run(brain.conn, brain.housekeeper(), request, now())
    return {"results": result.results, "withheld": result.withheld, "receipt": result.receipt}


def counts(home: Path, tables: Iterable[str] = SIGNED_TABLES) -> dict[str, int]:
    return table_counts(home / BRAIN, tables)


def value(home: Path, sql: str) -> str:
    return sqlite_value(home / BRAIN, sql)


def memory_field(home: Path, memory_id: str, column: str) -> str:
    return value(home, f"SELECT {column} FROM memories WHERE memory_id = '{memory_id}'")


def break_initial_weight(home: Path, memory_id: str, weight_milli: int = 1500) -> None:
    """Change a memory's live weight outside aimos, so its weight chain no longer attests the
    weight it has: the verifiers must say so (unattested_initial_weight)."""
    edit_outside(
        home,
        "memories",
        f"UPDATE memories SET retrieval_weight_milli = {weight_milli} WHERE memory_id = '{memory_id}';",
    )


def lock_keystore(home: Path) -> Path:
    """Make the file keystore unreadable to aimos (as a locked keychain is): move its folder away.
    Returns where it went."""
    keys = keystore_dir(home)
    assert keys.is_dir(), keys
    aside = home.parent / "keys-moved-away"
    shutil.move(str(keys), str(aside))
    return aside


async def run_recall(pilot: Pilot[Any], query: str) -> RecallScreen:
    """2, type the query, enter: the recall screen after a signed recall (or an error dialog)."""

    await pilot.press("2")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, RecallScreen)
    assert pilot.app.focused is screen.query_one("#query", Input)
    await paste(pilot, query)
    await pilot.press("enter")
    await pilot.pause()
    return screen


async def fill_label(pilot: Pilot[Any], judgment: str, reason: str, passphrase: str | None = None) -> Any:
    """On a memory's screen: l, choose the judgment, type the reason (and the passphrase); the
    label dialog, not yet submitted."""

    await pilot.press("l")
    await pilot.pause()
    dialog = pilot.app.screen
    await choose(pilot, dialog.query_one("#judgment", Select), judgment)
    dialog.query_one("#reason", Input).focus()
    await type_text(pilot, reason)
    if passphrase is not None:
        dialog.query_one("#passphrase", Input).focus()
        await paste(pilot, passphrase)
    return dialog


async def open_memory(pilot: Pilot[Any], memory_id: str) -> MemoryScreen:
    """From the memories list: move the cursor to ``memory_id`` and press enter."""
    app = pilot.app
    table = app.screen.query_one(MemoryTable)
    ids = [memory_id_at(table, i) for i in range(len(table.rowids))]
    await pilot.press("home", *["down"] * ids.index(memory_id))
    await pilot.press("enter")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, MemoryScreen), screen
    assert screen.memory_id == memory_id
    return screen


def section(screen: MemoryScreen, name: str) -> str:
    return text_of(screen.query_one(f"#detail-{name}", Static))


def shown_ids(pilot: Pilot[Any]) -> list[str]:
    """The memory ids the list holds, top to bottom (all of them, not only the visible rows)."""
    table = pilot.app.screen.query_one(MemoryTable)
    return [memory_id_at(table, i) for i in range(len(table.rowids))]


def summary(pilot: Pilot[Any]) -> str:
    return text_of(pilot.app.screen.query_one("#list-summary", Static))
