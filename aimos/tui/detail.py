"""One memory: its value and fields, whether its chains verify, the version chain, provenance,
the weight trajectory (a chart and the evidence behind each step), the label history and the
events. g/b give signed feedback, l labels, c corrects; each asks before it signs."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, Static

from aimos.actions.labels import (
    event_words,
    judged_by,
    label_short,
    label_words,
    outcome_result_words,
    provenance_words,
    verified_words,
)
from aimos.memory.redaction import shown_text
from aimos.memory.versions import CREATED_ELSEWHERE, MemoryDetail, memory_detail, originated
from aimos.plural import plural
from aimos.tui.format import cells, chart, first_line, plain, plain_line, trajectory_points, when
from aimos.tui.host import HostedScreen
from aimos.verify.brain.verifier import verify_brain
from aimos.verify.chains.labels import label_history
from aimos.verify.chains.weights import weight_trajectory
from aimos.vocabulary import ADVERSE


def _grid() -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    return grid


def _table(*headers: str) -> Table:
    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
    for h in headers:
        table.add_column(h, overflow="fold")
    return table


def load(conn: Any, memory_id: str) -> MemoryDetail:
    """Everything the screen shows about one memory, read in one go (tests use it too)."""
    detail = memory_detail(conn, memory_id)
    mid = detail["memory_id"]
    detail["label_history"] = label_history(conn, mid)
    detail["trajectory"] = weight_trajectory(conn, mid)
    record = verify_brain(conn, mid).records[0]
    detail["verification"] = {
        "ok": record.ok,
        "status": record.certification_status,
        "reason": record.reason,
        "detail": record.detail,
        "chain_length": record.chain_length,
        "sigs_verified": record.sigs_verified,
    }
    return detail


class MemoryScreen(HostedScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("g", "feedback(True)", "Good"),
        Binding("b", "feedback(False)", "Bad"),
        Binding("l", "label", "Label"),
        Binding("c", "correct", "Correct"),
    ]

    def __init__(self, memory_id: str) -> None:
        super().__init__()
        self.memory_id = memory_id
        self.detail: MemoryDetail | None = None  # None until it is read

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="detail"):
            for name in (
                "value",
                "fields",
                "verification",
                "versions",
                "trajectory",
                "labels",
                "provenance",
                "events",
            ):
                yield Static("", id=f"detail-{name}", classes="section")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.refresh_detail()
        self.query_one("#detail").focus()

    def repaint(self) -> None:
        """Redraw in the current theme's colours."""
        if self.detail:
            self.refresh_detail()

    def on_screen_resume(self) -> None:
        if self.detail:
            self.refresh_detail(quiet=True)

    def refresh_detail(self, *, quiet: bool = False) -> None:
        found = self.aimos.read(
            lambda: load(self.aimos.reader, self.memory_id), doing="read the memory", quiet=quiet
        )
        if found is None:
            return
        self.detail = found
        # what the brain holds may have been edited outside aimos: a part that cannot be drawn is
        # said (the parts before it, the verification verdict among them, are already shown)
        self.aimos.read(lambda: self._draw(found), doing="show all of the memory", quiet=quiet)

    def _draw(self, d: MemoryDetail) -> None:
        self.sub_title = f"memory {d['memory_id'][:8]}"
        self.query_one("#detail-value", Static).update(plain(shown_text(d)))
        v = d["version"]
        first = originated(d)
        created = [] if first is None else [("created", f"{when(first)} ({CREATED_ELSEWHERE})")]
        fields = _grid()
        for k, val in (
            ("id", d["memory_id"]),
            ("key", d["key"] or "-"),
            ("type / scope", f"{d['memory_type']} / {d['scope']}"),
            ("clearance", f"{d['clearance_level']} ({d['data_class']})"),
            ("source", d["source"]),
            *created,
            ("saved by", f"{d['author_agent_id']} at {when(d['created_at'])}"),
            ("weight", f"{d['weight']:.3f}" + (" (retained quarantine)" if d["quarantine"] else "")),
            ("label", label_words(d["epistemic_label"])),
            ("version", f"{v['number']} of {v['of']} ({v['state']})"),
            ("live content hash", d["live_content_hash"]),
            ("occurrences", str(len(d["occurrences"]))),
        ):
            adverse = k == "label" and d["epistemic_label"] in ADVERSE
            style = self.aimos.ink("bold red") if adverse else ""
            fields.add_row(k, plain_line(val, style=style))
        self.query_one("#detail-fields", Static).update(fields)
        self._show_verification(d["verification"])
        self._show_versions(d)
        self._show_trajectory(d["trajectory"])
        self._show_labels(d["label_history"])
        prov = _table("provenance", "signed by", "form", "at", "mutation hash")
        for p in d["provenance"]:
            prov.add_row(
                *cells(
                    provenance_words(p["event_type"]),
                    p["signer_agent_id"],
                    str(p["signature_form"]),
                    when(p["ts_signed"]),
                    p["mutation_hash"][:16] + "…",
                )
            )
        self.query_one("#detail-provenance", Static).update(prov)
        events = _table("event", "by", "ledger #", "at")
        for e in d["events"]:
            events.add_row(
                *cells(
                    event_words(e["operation"]),
                    e["signer_agent_id"],
                    f"#{e['ledger_seq']}",
                    when(e["ts_signed"]),
                )
            )
        self.query_one("#detail-events", Static).update(events)

    def _show_verification(self, ver: dict[str, Any]) -> None:
        widget = self.query_one("#detail-verification", Static)
        widget.set_class(not ver["ok"], "failed")
        if ver["ok"]:
            widget.update(Text(f"✓ verifies: {verified_words(ver)}", style=self.aimos.ink("green")))
        else:
            why = ver["reason"] + (f" ({ver['detail']})" if ver["detail"] else "")
            widget.update(plain_line(f"✗ DOES NOT VERIFY: {why}", style=self.aimos.ink("bold red")))

    def _show_versions(self, d: MemoryDetail) -> None:
        chain = d["version"]["chain"]
        table = _table("version", "memory", "state")
        for n, mid in enumerate(chain, start=1):
            state = "current" if n == len(chain) else "superseded"
            marker = "▶ " if mid == d["memory_id"] else "  "
            table.add_row(*cells(f"{marker}{n}", mid, state))
        self.query_one("#detail-versions", Static).update(table)

    def _show_trajectory(self, trajectory: dict[str, Any]) -> None:
        points = trajectory_points(trajectory)
        body = Text()
        start = trajectory["start"]
        body.append(
            f"weight trajectory: {plural(len(points), 'point')},"
            f" {points[0] / 1000:.3f} → {points[-1] / 1000:.3f}"
            f"  (started at {'a signed' if start['basis'] != 'default' else 'the default'} weight,"
            f" {when(start['at'])})\n",
            style="bold",
        )
        for line in chart(points, height=3, width=max(self.size.width - 8, 10)):
            body.append(line + "\n", style=self.aimos.ink("cyan"))
        steps = _table("at", "outcome", "by", "weight", "result", "receipt")
        for s in trajectory["steps"]:
            moved = (
                f"{s['old_weight_milli'] / 1000:.3f} → {s['new_weight_milli'] / 1000:.3f}"
                if s["new_weight_milli"] is not None
                else "no move"
            )
            steps.add_row(
                *cells(
                    when(s["at"]),
                    s["outcome"],
                    s["agent_id"],
                    moved,
                    outcome_result_words(s["terminal"]),
                    s["receipt_id"][:8],
                )
            )
        group: list[Any] = [body]
        if trajectory["steps"]:
            group.append(steps)
        else:
            group.append(Text("no outcomes yet: give feedback after a recall (g / b)", style="dim"))
        from rich.console import Group

        self.query_one("#detail-trajectory", Static).update(Group(*group))

    def _show_labels(self, history: list[dict[str, Any]]) -> None:
        if not history:
            self.query_one("#detail-labels", Static).update(
                Text("label history: none (not judged since saved)", style="dim")
            )
            return
        table = _table("at", "label", "who", "reason")
        table.caption = (
            "each label is a transition the housekeeper signed; a judgment carries the judge's request"
        )
        table.caption_justify = "left"
        for h in history:
            adverse = self.aimos.ink("red") if h["label"] in ADVERSE else ""
            label = plain_line(label_short(h["label"]), style=adverse)
            reason = str(h["reason"]) if h["reason"] is not None else "-"
            table.add_row(*cells(when(h["created_at"]), label, judged_by(h), first_line(reason, 60)))
        self.query_one("#detail-labels", Static).update(table)

    # --- actions ------------------------------------------------------------------------------
    def action_back(self) -> None:
        self.app.pop_screen()

    def action_feedback(self, good: bool) -> None:
        self.aimos.feedback(self.memory_id, good, receipt_id=None)  # the screen refreshes on return

    def action_label(self) -> None:
        if self.detail:
            self.aimos.label(self.memory_id, str(self.detail["epistemic_label"]))

    def action_correct(self) -> None:
        if self.detail:
            self.aimos.correct(self.memory_id, self.detail["value"])
