"""The memories screen: filter, sort and scroll every memory in the brain; enter opens one."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.timer import Timer
from textual.widgets import Footer, Header, Input, Select, Static

from aimos.actions.guides import hidden_note, view
from aimos.actions.labels import label_short
from aimos.memory.versions import SORTS, browse, distinct_values, rows_by_rowid
from aimos.terminal import visible, visible_line
from aimos.tui.format import header_text
from aimos.tui.host import HostedScreen
from aimos.tui.memory_table import MemoryTable

EMPTY_BRAIN = """\
This brain has no memories yet.

Save one from a shell:      aimos save "The boiler is serviced every October"
Or connect an agent:        aimos install --add-agent ID
Then press r here to reload."""

FILTERS = (
    ("filter-type", "memory_type", "type"),
    ("filter-label", "epistemic_label", "label"),
    ("filter-scope", "scope", "scope"),
)

COLUMNS = tuple(column for _w, column, _p in FILTERS)


class MemoriesScreen(HostedScreen):
    SUB_TITLE = "memories · 2 recall · 3 status"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "focus_filter", "Filter"),
        Binding("o", "cycle_sort", "Sort"),
        Binding("v", "reverse", "Rev"),
        Binding("h", "toggle_history", "Hist"),
        Binding("r", "reload", "Reload", show=False),
        Binding("escape", "clear_filter", "Clear", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.sort = "created"
        self.descending = True
        self.include_history = False
        self.total = 0
        self.guides_hidden = 0  # of aimos's guides the list leaves out (`aimos guides hide`)
        self._debounce: Timer | None = None
        self._fetch_failed = False
        self._shown = False  # the first ScreenResume comes right after on_mount has loaded

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="filters"):
            yield Input(placeholder="filter: any part of the key or text (/)", id="filter-text")
            for widget_id, _column, prompt in FILTERS:
                yield Select[str]([], prompt=prompt, id=widget_id, classes="filter-select")
        yield Static("", id="list-summary")
        yield Static("", id="list-header")
        yield MemoryTable(self._fetch, id="memory-table")
        yield Static(EMPTY_BRAIN, id="empty-brain")
        yield Footer(compact=True, show_command_palette=False)

    def _fetch(self, rowids: list[int]) -> dict[int, dict[str, Any]]:
        """One page of rows, for drawing: a failure leaves those lines blank and is said once (in
        a notification: this runs while the screen is being drawn), until the next reload."""
        from aimos.tui.guard import Failure, attempt

        found = attempt(lambda: rows_by_rowid(self.aimos.reader, rowids), doing="read the memories")
        if isinstance(found, Failure):
            if not self._fetch_failed:
                self._fetch_failed = True
                self.app.call_later(
                    lambda: self.app.notify(
                        visible(found.text()),
                        title=visible_line(found.title),
                        severity="error",
                        timeout=10,
                        markup=False,
                    )
                )
            return {}
        return found

    def on_mount(self) -> None:
        problem = view().problem  # a view setting that cannot be read: the guides are shown
        if problem:
            self.app.notify(visible(problem), severity="warning", timeout=10, markup=False)
        self.reload()
        self.query_one(MemoryTable).focus()
        # the filter choices need a scan of the brain: after the first paint, not before it
        self.call_after_refresh(self._load_filter_choices)

    def on_screen_resume(self) -> None:
        """Back from a memory, a dialog or another screen: show what signed actions changed (not
        on the first showing, which on_mount has just loaded)."""
        if not self._shown:
            self._shown = True
            return
        if self.is_mounted and self.query(MemoryTable):
            self.reload(keep_cursor=True, quiet=True)

    def _load_filter_choices(self) -> None:
        hide = view().guides_hidden
        reader = self.aimos.reader
        found = self.aimos.read(
            lambda: {column: distinct_values(reader, column, hide_guides=hide) for column in COLUMNS},
            doing="read the filter choices",
            quiet=True,
        )
        if found is None:
            return
        for widget_id, column, _prompt in FILTERS:
            values = found[column]
            select = self.query_one(f"#{widget_id}", Select)
            current = select.value
            shown = label_short if column == "epistemic_label" else str  # a label in people's words
            # a stored type or scope: drawn as text (no markup), on one line however narrow the box
            choices = [(Text(visible_line(shown(v)), no_wrap=True, overflow="ellipsis"), v) for v in values]
            select.set_options(choices)
            if current in values:
                select.value = current

    # --- the query ----------------------------------------------------------------------------
    def _filters(self) -> dict[str, Any]:
        chosen: dict[str, Any] = {}
        for widget_id, column, _prompt in FILTERS:
            value = self.query_one(f"#{widget_id}", Select).value
            chosen[column] = None if value is Select.NULL else str(value)
        return {
            "text": self.query_one("#filter-text", Input).value,
            "memory_type": chosen["memory_type"],
            "label": chosen["epistemic_label"],
            "scope": chosen["scope"],
        }

    def reload(self, *, keep_cursor: bool = False, quiet: bool = False) -> None:
        """Query the list again (a failure is shown and leaves the list as it was)."""
        filters = self._filters()
        filtered = bool(filters["text"].strip()) or any(
            filters[k] is not None for k in ("memory_type", "label", "scope")
        )

        hide = view().guides_hidden  # read each time: `aimos guides hide|show` in a shell, then r

        def query() -> tuple[list[int], int, int]:
            found = browse(
                self.aimos.reader,
                **filters,
                include_history=self.include_history,
                hide_guides=hide,
                sort=self.sort,
                descending=self.descending,
            )
            if not filtered:
                return found.rowids, len(found.rowids), found.guides_hidden
            if self.total:
                return found.rowids, self.total, self.guides_hidden
            every = browse(self.aimos.reader, include_history=self.include_history, hide_guides=hide)
            return found.rowids, len(every.rowids), every.guides_hidden

        found = self.aimos.read(query, doing="list the memories", quiet=quiet)
        if found is None:
            return
        rowids, self.total, self.guides_hidden = found
        self._fetch_failed = False
        self._shown = False  # the first ScreenResume comes right after on_mount has loaded
        table = self.query_one(MemoryTable)
        table.show(rowids, keep_cursor=keep_cursor)
        empty = self.total == 0 and not filtered
        table.display = not empty
        self.query_one("#empty-brain").display = empty
        self._describe(len(rowids), filtered)

    def _describe(self, shown: int, filtered: bool) -> None:
        what = "memories" if not self.include_history else "memories and superseded versions"
        parts = [f"{shown:,} of {self.total:,} {what}" if filtered else f"{shown:,} {what}"]
        parts.append(f"sorted by {self.sort} {'▼' if self.descending else '▲'}")
        if filtered and shown == 0:
            parts.append("nothing matches: escape clears the filter")
        if self.guides_hidden:
            parts.append(hidden_note(self.guides_hidden))
        self.query_one("#list-summary", Static).update("  ·  ".join(parts))
        table = self.query_one(MemoryTable)
        self.query_one("#list-header", Static).update(
            header_text(table.columns(), self.sort, self.descending)
        )

    def on_resize(self) -> None:
        table = self.query_one(MemoryTable)
        self.query_one("#list-header", Static).update(
            header_text(table.columns(), self.sort, self.descending)
        )

    # --- events -------------------------------------------------------------------------------
    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id != "filter-text":
            return
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(0.15, self.reload)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter-text":
            if self._debounce is not None:
                self._debounce.stop()
            self.reload()
            self.query_one(MemoryTable).focus()

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id and event.select.id.startswith("filter-"):
            self.reload()

    def on_memory_table_opened(self, event: MemoryTable.Opened) -> None:
        self.aimos.open_memory(event.memory_id)

    # --- actions ------------------------------------------------------------------------------
    def action_focus_filter(self) -> None:
        self.query_one("#filter-text", Input).focus()

    def action_clear_filter(self) -> None:
        with self.prevent(Input.Changed, Select.Changed):  # one reload, not one per box cleared
            self.query_one("#filter-text", Input).value = ""
            for widget_id, _column, _prompt in FILTERS:
                self.query_one(f"#{widget_id}", Select).clear()
        self.reload()
        self.query_one(MemoryTable).focus()

    def action_cycle_sort(self) -> None:
        names = list(SORTS)
        self.sort = names[(names.index(self.sort) + 1) % len(names)]
        self.reload()

    def action_reverse(self) -> None:
        self.descending = not self.descending
        self.reload()

    def action_toggle_history(self) -> None:
        self.include_history = not self.include_history
        self.total = 0
        self.reload()

    def action_reload(self) -> None:
        self.total = 0
        self.reload(keep_cursor=True)
        self._load_filter_choices()
