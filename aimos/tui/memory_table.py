"""The memory list: a virtual scroll view over the rowids of every matching memory. Only the
lines on screen are rendered, and rows are fetched from the brain a page at a time, so a list
of 100,000 memories costs one rowid query plus one primary-key lookup per page scrolled."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any, ClassVar

from rich.segment import Segment
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from aimos.tui.format import Column, cell, fit, layout
from aimos.vocabulary import ADVERSE, POISON_REFUTED, SUPPORTED

PAGE = 100
CACHED_PAGES = 64
Fetch = Callable[[list[int]], dict[int, dict[str, Any]]]


class MemoryTable(ScrollView, can_focus=True):
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "memory-table--cursor",
        "memory-table--adverse",
        "memory-table--trusted",
        "memory-table--dim",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open", show=True),
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "jump(0)", "First", show=False),
        Binding("end", "jump(-1)", "Last", show=False),
    ]

    class Opened(Message):
        """The user chose a memory (enter or a click on the cursor row)."""

        def __init__(self, memory_id: str) -> None:
            super().__init__()
            self.memory_id = memory_id

    def __init__(self, fetch: Fetch, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._fetch = fetch
        self.rowids: list[int] = []
        self.cursor = 0
        self._pages: OrderedDict[int, dict[int, dict[str, Any]]] = OrderedDict()
        self.pages_loaded = 0  # how many page fetches this table made (the benchmark reads it)

    # --- data -----------------------------------------------------------------------------------
    def show(self, rowids: list[int], *, keep_cursor: bool = False) -> None:
        """Show these rowids in this order (a new filter or sort); drops the page cache.

        ``keep_cursor`` (the same list, reloaded): the cursor stays on the memory it was on, though
        a signed action or another process moved it in the order (else on the same line)."""
        old = self.rowids[self.cursor] if keep_cursor and 0 <= self.cursor < len(self.rowids) else None
        self.rowids = rowids
        self._pages.clear()
        self.virtual_size = Size(self._width(), len(rowids))
        if not keep_cursor:
            self.cursor = 0
            self.scroll_to(y=0, animate=False)
        else:
            try:
                index = rowids.index(old) if old is not None else self.cursor
            except ValueError:  # no longer listed (superseded by a correction, say)
                index = self.cursor
            self._move_to(index)
        self.refresh()

    def memory_at(self, index: int) -> dict[str, Any] | None:
        if not 0 <= index < len(self.rowids):
            return None
        number = index // PAGE
        page = self._pages.get(number)
        if page is None:
            page = self._fetch(self.rowids[number * PAGE : (number + 1) * PAGE])
            self.pages_loaded += 1
            self._pages[number] = page
            while len(self._pages) > CACHED_PAGES:
                self._pages.popitem(last=False)
        else:
            self._pages.move_to_end(number)
        return page.get(self.rowids[index])

    @property
    def current(self) -> dict[str, Any] | None:
        return self.memory_at(self.cursor)

    # --- drawing --------------------------------------------------------------------------------
    def _width(self) -> int:
        """The width rows are drawn in: inside the vertical scrollbar (never wider, so no
        horizontal scrollbar appears to hide the last row)."""
        return self.scrollable_content_region.width

    def _height(self) -> int:
        return max(self.scrollable_content_region.height, 1)

    def columns(self) -> list[Column]:
        return layout(self._width())

    def on_resize(self, _event: events.Resize) -> None:
        self.virtual_size = Size(self._width(), len(self.rowids))
        self.refresh()

    def render_line(self, y: int) -> Strip:
        index = y + int(self.scroll_offset.y)
        width = self._width()
        memory = self.memory_at(index)
        if memory is None:
            return Strip.blank(width)
        base = self.rich_style
        if index == self.cursor:
            base = base + self.get_component_rich_style(
                "memory-table--cursor" if self.has_focus else "memory-table--dim"
            )
        columns = self.columns()
        show_key = not any(c.name == "key" for c in columns)
        segments: list[Segment] = []
        for n, column in enumerate(columns):
            style = base
            if column.name == "label":
                if memory["epistemic_label"] in ADVERSE:
                    style = base + self.get_component_rich_style("memory-table--adverse", partial=True)
                elif memory["epistemic_label"] in (SUPPORTED, POISON_REFUTED):
                    style = base + self.get_component_rich_style("memory-table--trusted", partial=True)
            segments.append(Segment(fit(cell(column.name, memory, with_key=show_key), column.width), style))
            if n < len(columns) - 1:
                segments.append(Segment(" ", base))
        return Strip(segments).adjust_cell_length(width, base).simplify()

    # --- moving ---------------------------------------------------------------------------------
    def _move_to(self, index: int) -> None:
        if not self.rowids:
            self.cursor = 0
            return
        old = self.cursor
        self.cursor = max(0, min(index, len(self.rowids) - 1))
        top = int(self.scroll_offset.y)
        height = self._height()
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False)
        self.refresh_line(old - int(self.scroll_offset.y))
        self.refresh()

    def action_move(self, delta: int) -> None:
        self._move_to(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self._move_to(self.cursor + direction * max(self._height() - 1, 1))

    def action_jump(self, where: int) -> None:
        self._move_to(0 if where == 0 else len(self.rowids) - 1)

    def action_open(self) -> None:
        memory = self.current
        if memory is not None:
            self.post_message(self.Opened(str(memory["memory_id"])))

    def on_click(self, event: events.Click) -> None:
        index = event.y + int(self.scroll_offset.y)
        if index == self.cursor:
            self.action_open()
        else:
            self._move_to(index)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()
