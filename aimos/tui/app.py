"""The aimos Textual app: three screens (memories, recall, status) over the same library calls
the CLI makes, and the signed actions the CLI has (feedback, label, correct), each asked first."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen

from aimos.identity.session import Brain, expected_master_fingerprint, open_brain
from aimos.store.connection import code_schema_version, schema_version
from aimos.tui.detail import MemoryScreen
from aimos.tui.dialogs import (
    ConfirmDialog,
    CorrectDialog,
    HelpScreen,
    LabelDialog,
    MessageDialog,
    event_lines,
)
from aimos.tui.guard import Failure, attempt
from aimos.tui.memories import MemoriesScreen
from aimos.tui.recall import RecallScreen
from aimos.tui.status import StatusScreen

T = TypeVar("T")


class AimosApp(App[None]):
    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses may live elsewhere
    TITLE = "aimos"
    MODES: ClassVar[dict[str, str | Callable[[], Screen[Any]]]] = {
        "memories": MemoriesScreen,
        "recall": RecallScreen,
        "status": StatusScreen,
    }
    DEFAULT_MODE = "memories"
    BINDINGS: ClassVar[list[BindingType]] = [
        # screens: listed in the help (?) and the header; the footer keeps room for each screen's keys
        Binding("1", "switch_mode('memories')", "Memories", show=False),
        Binding("2", "switch_mode('recall')", "Recall", show=False),
        Binding("3", "switch_mode('status')", "Status", show=False),
        Binding("question_mark", "help", "Help"),
        Binding("t", "toggle_theme", "Theme", show=False),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(
        self,
        *,
        agent: str = "cli",
        clock: Callable[[], int] | None = None,
        light: bool = False,
        master_fingerprint: str | None = None,
    ) -> None:
        super().__init__()
        self.agent = agent
        self._clock = clock
        self._master_fingerprint = master_fingerprint
        self.brain: Brain = open_brain(write=False)  # the reading connection every screen shares
        if schema_version(self.brain.conn) < code_schema_version():
            # a brain from an older aimos: migrate it as any writing command would, then read
            self.brain.close()
            open_brain(write=True).close()
            self.brain = open_brain(write=False)
        self.title = f"aimos: {self.brain.meta.get('brain_name') or 'brain'} ({agent})"
        if light:
            self.theme = "textual-light"

    @property
    def reader(self) -> Any:
        return self.brain.conn

    def now(self) -> int:
        return self._clock() if self._clock is not None else int(time.time())

    def on_unmount(self) -> None:
        self.brain.close()

    # --- reading and signing, with errors on screen -------------------------------------------
    def _fail(self, failure: Failure) -> None:
        self.push_screen(MessageDialog(failure.title, failure.text().splitlines(), error=True))

    def read(self, call: Callable[[], T], *, doing: str, quiet: bool = False) -> T | None:
        """``call()``, or None with the error on screen: in a dialog, or (``quiet``: a screen
        refreshing itself as it comes back to the front, where closing a dialog would bring it to
        the front again, and fail again) in a notification."""
        outcome = attempt(call, doing=doing)
        if isinstance(outcome, Failure):
            if quiet:
                self.notify(outcome.text(), title=outcome.title, severity="error", timeout=10)
            else:
                self._fail(outcome)
            return None
        return outcome

    def signed(self, call: Callable[[Brain], T], *, doing: str) -> T | None:
        """``call`` with a writing connection of its own; an error is shown with its fix and,
        since every signed write is one transaction, nothing is changed."""

        def run() -> T:
            with open_brain(write=True) as brain:
                return call(brain)

        outcome = attempt(run, doing=doing)
        if isinstance(outcome, Failure):
            outcome.message += "\nNothing was signed or changed."
            self._fail(outcome)
            return None
        return outcome

    def anchor(self) -> str | None:
        """The master fingerprint to verify against: the one given, else anchors.json's."""
        fixed = self._master_fingerprint
        return self.read(
            lambda: expected_master_fingerprint(fixed, announce=False), doing="find the trust anchor"
        )

    # --- navigation ---------------------------------------------------------------------------
    def open_memory(self, memory_id: str) -> None:
        self.push_screen(MemoryScreen(memory_id))

    def action_toggle_theme(self) -> None:
        self.theme = "textual-dark" if self.theme == "textual-light" else "textual-light"

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    # --- the signed actions -------------------------------------------------------------------
    def run_recall(self, query: str) -> Any:
        from aimos.identity.requests import PATH_RECALL, sign_request
        from aimos.recall.pipeline import build_recall_body, recall

        def call(brain: Brain) -> Any:
            signer = brain.signer(self.agent)
            housekeeper = brain.housekeeper()
            body = build_recall_body(query=query, limit=10)
            return recall(
                brain.conn, housekeeper, sign_request(signer, body, PATH_RECALL, self.now()), self.now()
            )

        return self.signed(call, doing="recall")

    def feedback(
        self, memory_id: str, good: bool, *, receipt_id: str | None, then: Callable[[], None] | None = None
    ) -> None:
        from aimos.learning.outcomes import give_feedback

        about = (
            f"recall receipt {receipt_id[:8]}" if receipt_id else f"agent {self.agent}'s latest recall of it"
        )
        body = (
            f"Outcome: {'GOOD (it helped)' if good else 'BAD (it did not help)'}\n"
            f"Memory:  {memory_id}\nAbout:   {about}\nSigned by agent {self.agent}; the housekeeper "
            "authorizes the reweight."
        )

        def answered(yes: bool | None) -> None:
            if not yes:
                return
            result = self.signed(
                lambda brain: give_feedback(brain, self.agent, memory_id, good=good, receipt_ref=receipt_id),
                doing="give feedback",
            )
            if result is None:
                return
            lines = event_lines(
                {
                    "outcome": result.outcome_id,
                    "terminal": result.terminal,
                    "weight": f"{result.old_weight_milli / 1000:.3f} → {result.new_weight_milli / 1000:.3f}",
                    "transition": result.transition_hash or "-",
                    "event": result.event_id or "-",
                }
            )
            self.push_screen(MessageDialog("Signed outcome recorded", lines))
            if then is not None:
                then()

        self.push_screen(ConfirmDialog("Sign feedback?", body), answered)

    def label(self, memory_id: str, *, then: Callable[[], None] | None = None) -> None:
        from aimos.epistemic.chain import judge_memory
        from aimos.epistemic.classifier import TRUST_RAISING

        def answered(choice: dict[str, str] | None) -> None:
            if not choice:
                return
            judgment, reason = choice["judgment"], choice["reason"]
            # the passphrase leaves the dict the dialog returned (Textual's frames hold it) and is
            # dropped as soon as the master key is unlocked: no frame that runs after the signing
            # (drawing the result, refreshing the screen) holds it, so a traceback printed with
            # its locals could not show it
            secret = [choice.pop("passphrase", "")]

            def call(brain: Brain) -> Any:
                passphrase, secret[0] = secret[0], ""
                master = brain.master_with(passphrase) if judgment in TRUST_RAISING else None
                del passphrase
                return judge_memory(brain, self.agent, memory_id, judgment, reason, master=master)

            moved = self.signed(call, doing=f"{judgment} the memory")
            secret[0] = ""
            if moved is None:
                return
            lines = event_lines(
                {
                    "memory": moved.memory_id,
                    "label": f"{moved.previous_label} → {moved.label}",
                    "basis": moved.basis,
                    "classification": moved.classification_hash,
                    "event": moved.event_id,
                }
            )
            self.push_screen(MessageDialog("Signed label recorded", lines))
            if then is not None:
                then()

        self.push_screen(LabelDialog(memory_id, self.agent), answered)

    def correct(self, memory_id: str, value: str) -> None:
        from aimos.epistemic.chain import correct_memory

        def answered(text: str | None) -> None:
            if text is None:
                return
            saved = self.signed(
                lambda brain: correct_memory(brain, self.agent, memory_id, text), doing="save the correction"
            )
            if saved is None:
                return
            lines = event_lines(
                {
                    "new memory": saved.memory_id,
                    "status": saved.status,
                    "supersedes": saved.supersedes or "-",
                    "event": saved.event_id,
                }
            )
            self.open_memory(saved.memory_id)
            self.push_screen(MessageDialog("Signed new version saved", lines))

        self.push_screen(CorrectDialog(memory_id, value, self.agent), answered)


def run(*, agent: str, light: bool) -> None:
    AimosApp(agent=agent, light=light).run()
