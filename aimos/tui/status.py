"""The status screen: a warning for each agent whose epoch ends soon, brain, keystore, identities
and epochs, the housekeeper's jobs, the last attested corpus proof root, and Verify all (both
verifiers and parity, with a progress bar)."""

from __future__ import annotations

import time
from typing import Any, ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, ProgressBar, Static

from aimos.housekeeper.brain_status import status_report
from aimos.plural import plural
from aimos.tui.format import cells, plain, plain_line, when
from aimos.tui.host import HostedScreen
from aimos.verify.brain.outcome import TUI, keep_outcome
from aimos.verify.brain.parity import VERIFY_PHASES, verify_everything
from aimos.vocabulary import HOUSEKEEPER


def _table(*headers: str) -> Table:
    table = Table(box=None, padding=(0, 1), header_style="bold")
    for h in headers:
        table.add_column(h, overflow="fold")
    return table


class StatusScreen(HostedScreen):
    SUB_TITLE = "status · 1 memories · 2 recall"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("v", "verify_all", "Verify all"),
        Binding("r", "refresh_status", "Refresh"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.verifying = False
        self.verdict: dict[str, Any] | None = None
        self._phase: tuple[int, str, float] | None = None  # (phase index, name, when verifying began)

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="status"):
            yield Static("", id="status-expiry", classes="section")
            yield Static("", id="status-brain", classes="section")
            yield Static("", id="status-root", classes="section")
            yield Static("press v to verify everything", id="status-verify", classes="section")
            yield ProgressBar(total=len(VERIFY_PHASES), show_eta=False, id="verify-progress")
            yield Static("", id="status-housekeeper", classes="section")
            yield Static("", id="status-identities", classes="section")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one("#verify-progress").display = False
        self.set_interval(1.0, self._show_phase)
        self.action_refresh_status()
        self.query_one("#status").focus()

    def on_screen_resume(self) -> None:
        """Back from another screen or a dialog: counts, jobs and identities as they are now."""
        if self.is_mounted:
            self.refresh_status(quiet=True)

    def repaint(self) -> None:
        """Redraw in the current theme's colours (the last verdict too)."""
        self.refresh_status(quiet=True)
        if self.verdict is not None and not self.verifying:
            self._verified(self.verdict)

    def action_refresh_status(self) -> None:
        self.refresh_status()

    def refresh_status(self, *, quiet: bool = False) -> None:
        report = self.aimos.read(
            lambda: status_report(self.aimos.now()), doing="read the brain's status", quiet=quiet
        )
        if report is None:
            return
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column(overflow="fold")
        for k, v in (
            ("brain", f"{report['brain_name']} ({report['brain_id']})"),
            ("path", report["brain_path"]),
            ("company", report["company_id"]),
            ("schema", str(report["schema_version"])),
            ("keystore", report["keystore"]["detail"]),
            ("master", report["master_fingerprint"]),
            ("counts", ", ".join(f"{k.replace('_', ' ')} {n:,}" for k, n in report["counts"].items())),
        ):
            grid.add_row(k, plain_line(v))
        self.query_one("#status-brain", Static).update(grid)
        expiry = self.query_one("#status-expiry", Static)
        expiry.display = bool(report["expiry_warnings"])
        expiry.update(plain("\n".join(report["expiry_warnings"]), style=self.aimos.ink("bold yellow")))
        root = report["last_corpus_root"]
        if root is None:
            root_text = Text(
                "last corpus proof root: none yet (the housekeeper's nightly job attests one)", style="dim"
            )
        else:
            root_text = Text()
            root_text.append("last corpus proof root  ", style="bold")
            root_text.append(f"{root['corpus_proof_root']}\n")
            memories = plural(root["memories"], "memory")
            root_text.append(f"  attested {when(root['computed_at'])} over {memories}, ")
            root_text.append(
                "verified" if root["verified"] else "NOT verified",
                style=self.aimos.ink("green" if root["verified"] else "bold red"),
            )
        self.query_one("#status-root", Static).update(root_text)
        self._show_housekeeper(report[HOUSEKEEPER])
        ids = _table("identity", "role", "state", "valid until", "grant")
        for e in report["identities"]:
            grant = e["grant"]
            g = (
                "-"
                if grant is None
                else (
                    f"≤{grant['clearance_ceiling']} {grant['data_class_ceiling']}"
                    + ("" if grant["write_allowed"] else " read-only")
                )
            )
            state = plain_line(e["state"], style="" if e["state"] == "active" else self.aimos.ink("yellow"))
            ids.add_row(*cells(e["agent_id"], e["role"], state, e["valid_until"][:16].replace("T", " "), g))
        self.query_one("#status-identities", Static).update(ids)

    def _show_housekeeper(self, hk: dict[str, Any]) -> None:
        head = Text()
        if hk["running"]:
            head.append(f"housekeeper running (pid {hk['pid']}), ", style="bold")
            head.append(
                "ready" if hk["ready"] else "not ready",
                style=self.aimos.ink("green" if hk["ready"] else "yellow"),
            )
            head.append(f", {plural(hk['jobs_registered'], 'job')} registered\n")
        else:
            head.append("housekeeper NOT running", style=self.aimos.ink("bold yellow"))
            head.append(": start it with `aimos housekeeper start`\n")
        jobs = _table("job", "last run", "result", "next run")
        for j in hk["jobs"]:
            last = j["last_run"] or {}
            result = str(last.get("status", "-"))
            jobs.add_row(
                *cells(
                    j["name"],
                    when(last.get("finished_at") or last.get("started_at")) if last else "never",
                    plain_line(
                        result,
                        style=self.aimos.ink(
                            {
                                "SUCCESS": "green",
                                "ATTENTION": "yellow",
                                "FAILED": "red",
                                "INTERRUPTED": "yellow",
                            }.get(result, "")
                        ),
                    ),
                    when(j["next_run"]),
                )
            )
        self.query_one("#status-housekeeper", Static).update(Group(head, jobs))

    # --- verify all ---------------------------------------------------------------------------
    def action_verify_all(self) -> None:
        if self.verifying:
            self.notify("Verification is already running.")
            return
        fingerprint = self.aimos.anchor()
        if fingerprint is None:
            return
        self.verifying = True
        bar = self.query_one("#verify-progress", ProgressBar)
        bar.update(total=len(VERIFY_PHASES), progress=0)
        bar.display = True
        self.query_one("#status-verify", Static).update("verifying: starting…")
        self.query_one("#status-verify", Static).scroll_visible(animate=False)
        self._verify(fingerprint)

    @work(thread=True, exclusive=True, group="verify")
    def _verify(self, fingerprint: str) -> None:
        """Both verifiers, in a daemon thread this worker waits for. Quitting cancels the worker:
        it stops waiting, and the daemon thread (a read-only connection: nothing to lose) ends
        with the process, instead of holding the terminal until a long verification finishes."""
        import threading

        from textual.worker import get_current_worker

        from aimos.actions.session import open_brain
        from aimos.tui.guard import Failure, attempt

        worker = get_current_worker()
        done: list[Any] = []

        def tell(step: int, phase: str) -> None:
            if not worker.is_cancelled:
                self.app.call_from_thread(self._progress, step, phase)

        def run() -> dict[str, Any]:
            with open_brain(write=False) as brain:  # its own connection: this is another thread
                report = verify_everything(brain.conn, fingerprint, progress=tell)
                keep_outcome(brain.conn, report, fingerprint, TUI)  # what every command warns of
                return report

        def answer() -> None:
            done.append(attempt(run, doing="verify the brain"))

        thread = threading.Thread(target=answer, name="aimos-verify", daemon=True)
        thread.start()
        while thread.is_alive():
            thread.join(0.1)
            if worker.is_cancelled:
                return
        outcome = done[0] if done else Failure("Could not verify the brain", "it stopped early", "Press v.")
        if isinstance(outcome, Failure):
            self.app.call_from_thread(self._failed, outcome)
        else:
            self.app.call_from_thread(self._verified, outcome)

    def _progress(self, done: int, phase: str) -> None:
        self.query_one("#verify-progress", ProgressBar).update(progress=done)
        if done < len(VERIFY_PHASES):
            began = self._phase[2] if self._phase is not None and done > 0 else time.monotonic()
            self._phase = (done, phase, began)
            self._show_phase()

    def _show_phase(self) -> None:
        """The phase under way and the time so far (a phase of a big brain takes many seconds)."""
        if not self.verifying or self._phase is None:
            return
        done, phase, started = self._phase
        elapsed = int(time.monotonic() - started)
        self.query_one("#status-verify", Static).update(
            f"verifying: {phase} ({done + 1} of {len(VERIFY_PHASES)}), {elapsed} s so far…"
        )

    def _failed(self, failure: Any) -> None:
        self.verifying = False
        widget = self.query_one("#status-verify", Static)
        widget.update(plain(f"✗ {failure.text()}", style=self.aimos.ink("bold red")))
        self.call_after_refresh(widget.scroll_visible, animate=False)

    def _verified(self, result: dict[str, Any]) -> None:
        self.verifying = False
        self.verdict = result
        in_db, portable = result["in_database"], result["portable"]
        text = Text()
        if result["ok"]:
            text.append(
                f"✓ the brain verifies: {plural(in_db['memories'], 'memory', grouped=True)}, "
                f"{plural(len(in_db['event_chains']), 'event chain')}, both verifiers agree\n",
                style=self.aimos.ink("bold green"),
            )
        else:
            text.append("✗ THE BRAIN DOES NOT VERIFY\n", style=self.aimos.ink("bold red"))
        text.append(
            f"  in-database verifier  {'ok' if in_db['ok'] else 'FAILED'}\n",
            style="" if in_db["ok"] else self.aimos.ink("red"),
        )
        text.append(
            f"  portable verifier     {portable['verdict']}"
            + (f" ({portable['primary_reason']})" if portable["primary_reason"] else "")
            + "\n",
            style="" if portable["verdict"] == "valid" else self.aimos.ink("red"),
        )
        text.append(
            f"  parity                {'yes' if result['parity'] else 'NO'}\n",
            style="" if result["parity"] else self.aimos.ink("red"),
        )
        brain = result.get("brain")
        if brain is not None:
            rows = plural(brain["rows"], "row", grouped=True)
            seals = plural(brain["seals"], "seal", grouped=True)
            text.append(
                f"  rows, schema, indexes {'ok' if brain['ok'] else 'FAILED'} ({rows} under {seals})\n",
                style="" if brain["ok"] else self.aimos.ink("red"),
            )
        text.append(f"  corpus proof root     {in_db['corpus_proof_root']}\n")
        for f in (brain or {}).get("failures", [])[:20]:
            text.append(
                plain_line(f"  ✗ {f['check']}: {f['reason']} ({f['detail']})", self.aimos.ink("bold red"))
            )
            text.append("\n")
        for f in in_db["failures"][:20]:
            text.append(
                plain_line(
                    f"  ✗ memory {f['memory_id']}: {f['reason']}"
                    + (f" ({f['detail']})" if f["detail"] else ""),
                    self.aimos.ink("bold red"),
                )
            )
            text.append("\n")
        if len(in_db["failures"]) > 20:
            text.append(
                f"  … and {len(in_db['failures']) - 20} more (aimos verify --json lists all)\n",
                style=self.aimos.ink("red"),
            )
        for c in in_db["event_chains"]:
            if not c["ok"]:
                text.append(
                    plain_line(
                        f"  ✗ events of {c['signer_agent_id']}: {c['reason']}", self.aimos.ink("bold red")
                    )
                )
                text.append("\n")
        widget = self.query_one("#status-verify", Static)
        widget.set_class(not result["ok"], "failed")
        widget.update(text)
        self.call_after_refresh(widget.scroll_visible, animate=False)
