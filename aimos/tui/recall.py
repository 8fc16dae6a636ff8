"""The recall screen (a signed recall, its results with score parts, the withheld) and the
receipt screen (evidence entries, Merkle root, the signed event; v verifies it on screen)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Header, Input, Static

from aimos.actions.labels import RECEIPT_COLUMNS, label_short, receipt_entry, withheld_words
from aimos.actions.recall import NOTHING_MATCHES
from aimos.memory.redaction import shown_text
from aimos.plural import plural
from aimos.recall.receipts import receipt_document, verify_receipt_in_brain
from aimos.tui.format import cells, first_line, plain_line, when
from aimos.tui.guard import Failure, attempt
from aimos.tui.host import HostedScreen
from aimos.vocabulary import ADVERSE, HOUSEKEEPER

if TYPE_CHECKING:
    from aimos.recall.pipeline import RecallResult


class RecallScreen(HostedScreen):
    SUB_TITLE = "recall · 1 memories · 3 status"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "focus_query", "Query"),
        Binding("escape", "leave_query", "Leave box", show=False),
        Binding("t", "receipt", "Receipt"),
        Binding("w", "toggle_withheld", "Withheld"),
        Binding("g", "feedback(True)", "Good"),
        Binding("b", "feedback(False)", "Bad"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.result: RecallResult | None = None
        self.show_withheld = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="recall: ask in plain words; enter runs it, esc leaves the box", id="query")
        yield Static(
            "Only memories that match come back; every recall returns a signed receipt.",
            id="recall-summary",
        )
        table: DataTable[Any] = DataTable(id="results", cursor_type="row", zebra_stripes=True)
        table.add_columns("#", "id", "match", "trust", "weight", "label", "memory")
        yield table
        yield Static("", id="withheld")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        from aimos.meaning.model import warm

        warm()  # loaded while the question is typed, and kept for the TUI's life
        self.query_one("#withheld").display = False
        self.query_one("#query", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        query = event.value.strip()
        if not query:
            self.query_one("#recall-summary", Static).update(
                Text("Type what to look for first.", style=self.aimos.ink("yellow"))
            )
            return
        result = self.aimos.run_recall(query)
        if result is None:
            return
        self.result = result
        self._show()
        self.query_one("#results", DataTable).focus()

    def _show(self) -> None:
        assert self.result is not None
        r = self.result
        table = self.query_one("#results", DataTable)
        table.clear()
        for row in r.results:
            label = plain_line(
                label_short(row["label"]), style=self.aimos.ink("red") if row["label"] in ADVERSE else ""
            )
            table.add_row(
                *cells(
                    str(row["rank"]),
                    row["memory_id"][:8],
                    f"{row['relevance']:.2f}",
                    f"{row['trust']:.2f}",
                    f"{row['weight']:.3f}",
                    label,
                    first_line(shown_text(row), 200),
                ),
                key=row["memory_id"],
            )
        receipt = r.receipt
        summary = Text()
        if r.results:
            summary.append(plural(len(r.results), "result"))
        else:
            summary.append(NOTHING_MATCHES, style=self.aimos.ink("yellow"))
        if r.withheld:
            summary.append(f"  ·  {len(r.withheld)} withheld as untrusted (w)", style=self.aimos.ink("red"))
        summary.append(
            f"\nreceipt {receipt['receipt_id'][:8]}  root {receipt['merkle_root'][:32]}…  (t opens it)"
        )
        self.query_one("#recall-summary", Static).update(summary)
        self._show_withheld()

    def repaint(self) -> None:
        """Redraw in the current theme's colours."""
        if self.result is not None:
            self._show()

    def on_screen_resume(self) -> None:
        self.repaint()  # the theme may have changed while another screen was in front

    def _show_withheld(self) -> None:
        widget = self.query_one("#withheld", Static)
        withheld = self.result.withheld if self.result else []
        widget.display = self.show_withheld and bool(withheld)
        text = Text("withheld as untrusted (content not shown):\n", style=self.aimos.ink("bold red"))
        for w in withheld:
            text.append(
                plain_line(
                    f"  {w['memory_id']}  {withheld_words(w['label'], w['reason'])}",
                    style=self.aimos.ink("red"),
                )
            )
            text.append("\n")
        widget.update(text)

    def _selected(self) -> str | None:
        table = self.query_one("#results", DataTable)
        if not self.result or not self.result.results or table.cursor_row < 0:
            return None
        return str(self.result.results[table.cursor_row]["memory_id"])

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value:
            self.aimos.open_memory(str(event.row_key.value))

    def action_leave_query(self) -> None:
        self.query_one("#results", DataTable).focus()

    def action_focus_query(self) -> None:
        self.query_one("#query", Input).focus()

    def action_toggle_withheld(self) -> None:
        self.show_withheld = not self.show_withheld
        if self.result is not None and not self.result.withheld and self.show_withheld:
            self.notify("This recall withheld nothing.")
        self._show_withheld()

    def action_receipt(self) -> None:
        if self.result is None:
            self.notify("Run a recall first: every recall returns a receipt.")
            return
        self.app.push_screen(ReceiptScreen(str(self.result.receipt["receipt_id"])))

    def action_feedback(self, good: bool) -> None:
        memory_id = self._selected()
        if memory_id is None or self.result is None:
            self.notify("Select a result first.")
            return
        self.aimos.feedback(memory_id, good, receipt_id=str(self.result.receipt["receipt_id"]))


class ReceiptScreen(HostedScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("v", "verify", "Verify"),
    ]

    def __init__(self, receipt_id: str) -> None:
        super().__init__()
        self.receipt_id = receipt_id
        self.checks: list[dict[str, Any]] | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="receipt"):
            yield Static("", id="receipt-head", classes="section")
            yield Static("", id="receipt-evidence", classes="section")
            yield Static(
                "press v to verify: recompute the Merkle root and check every signature",
                id="receipt-verify",
                classes="section",
            )
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        doc = self.aimos.read(
            lambda: receipt_document(self.aimos.reader, self.receipt_id), doing="read the receipt"
        )
        if doc is None:
            return
        self.sub_title = f"receipt {self.receipt_id[:8]}"
        # a receipt edited outside aimos may hold anything: show what it holds, or say it cannot
        # be shown, and leave v to say what is wrong with it
        drawn = attempt(lambda: self._draw(doc), doing="show the receipt")
        if isinstance(drawn, Failure):
            self.query_one("#receipt-head", Static).update(
                plain_line(
                    f"✗ receipt {self.receipt_id}: what it records cannot be shown ({drawn.message})."
                    " Press v to verify it.",
                    style=self.aimos.ink("bold red"),
                )
            )
        self.query_one("#receipt").focus()

    def _draw(self, doc: dict[str, Any]) -> None:
        head = Table.grid(padding=(0, 2))
        head.add_column(style="bold", no_wrap=True)
        head.add_column(overflow="fold")
        hk = doc[HOUSEKEEPER]
        for k, v in (
            ("receipt", doc["receipt_id"]),
            ("created", when(doc["created_at"], seconds=True)),
            ("agent", doc["request"]["agent_id"]),
            ("query", doc["command"].get("query", "?")),
            ("merkle root", doc["merkle_root"]),
            ("signed event", f"{doc['event']['event_id']}"),
            ("event hash", doc["event"]["mutation_hash"]),
            ("signed by", f"housekeeper (epoch {hk['valid_from'] if hk else '?'})"),
            ("results", f"{doc['result_count']}  (withheld {len(doc['decision'].get('withheld', []))})"),
        ):
            head.add_row(k, plain_line(v))
        ev = Table(box=None, padding=(0, 1), header_style="bold")
        for h in (*RECEIPT_COLUMNS, "content hash"):
            ev.add_column(h, overflow="fold")
        for e in doc["evidence"]:
            ev.add_row(*cells(*receipt_entry(e, id_width=8), str(e.get("live_content_hash", ""))[:16] + "…"))
        self.query_one("#receipt-head", Static).update(head)
        self.query_one("#receipt-evidence", Static).update(ev)

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_verify(self) -> None:
        fingerprint = self.aimos.anchor()
        if fingerprint is None:
            return
        checks = self.aimos.read(
            lambda: verify_receipt_in_brain(
                self.aimos.reader, self.receipt_id, expected_master_fingerprint=fingerprint
            ),
            doing="verify the receipt",
        )
        if checks is None:
            return
        self.checks = checks
        self._show_checks(checks)

    def repaint(self) -> None:
        """Redraw in the current theme's colours."""
        self.on_mount()
        if self.checks is not None:
            self._show_checks(self.checks)

    def _show_checks(self, checks: list[dict[str, Any]]) -> None:
        ok = all(c["ok"] for c in checks)
        text = Text()
        text.append(
            "VALID: every check passed\n" if ok else "INVALID: a check failed\n",
            style=self.aimos.ink("bold green" if ok else "bold red"),
        )
        for c in checks:
            mark, style = ("✓", self.aimos.ink("green")) if c["ok"] else ("✗", self.aimos.ink("bold red"))
            text.append(
                plain_line(f"{mark} {c['check']}" + (f": {c['detail']}" if c["detail"] else ""), style)
            )
            text.append("\n")
        widget = self.query_one("#receipt-verify", Static)
        widget.set_class(not ok, "failed")
        widget.update(text)
