"""The aimos Textual app: three screens (memories, recall, status) over the same library calls
the CLI makes, and the signed actions the CLI has (feedback, label, correct), each asked first."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Input

from aimos.actions.session import Brain, expected_master_fingerprint, open_brain
from aimos.store.connection import code_schema_version, schema_version
from aimos.terminal import visible, visible_line
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
from aimos.tui.host import Host
from aimos.tui.memories import MemoriesScreen
from aimos.tui.recall import RecallScreen
from aimos.tui.status import StatusScreen

T = TypeVar("T")
INK_VARIABLES = {
    "green": "text-success",
    "red": "text-error",
    "yellow": "text-warning",
    "cyan": "text-primary",
}


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
        Binding("ctrl+t", "toggle_theme", "Theme", show=False),
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
        self._inks: dict[str, str] = {}
        self.brain: Brain = open_brain(write=False)  # the reading connection every screen shares
        if schema_version(self.brain.conn) < code_schema_version():
            # a brain from an older aimos: migrate it as any writing command would, then read
            self.brain.close()
            open_brain(write=True).close()
            self.brain = open_brain(write=False)
        self.title = visible_line(f"aimos: {self.brain.meta.get('brain_name') or 'brain'} ({agent})")
        if light:
            self.theme = "textual-light"

    def ink(self, style: str) -> str:
        """A Rich style with its colour words (green, red, yellow, cyan) in the current theme's
        text colours for success, error, warning and primary: readable on light and dark."""
        if self._inks.get("theme") != self.theme:
            variables = self.get_css_variables()
            self._inks = {
                "theme": self.theme,
                **{word: variables[var] for word, var in INK_VARIABLES.items()},
            }
        return " ".join(self._inks.get(word, word) for word in style.split())

    def watch_theme(self) -> None:
        """Screens draw with the theme's colours: redraw the ones open when the theme changes."""
        if not self.is_running:
            return
        for screen in self.screen_stack:
            repaint = getattr(screen, "repaint", None)
            if callable(repaint):
                repaint()

    @property
    def reader(self) -> Any:
        return self.brain.conn

    def now(self) -> int:
        return self._clock() if self._clock is not None else int(time.time())

    def _fatal_error(self) -> None:
        """A bug reached Textual: say so in one line, as the CLI does. Textual's own report is a
        traceback with every frame's local variables, which may hold memory text or a passphrase;
        it is shown only with AIMOS_DEBUG=1."""
        if os.environ.get("AIMOS_DEBUG") == "1":
            super()._fatal_error()
            return
        from rich.text import Text

        name = type(self._exception).__name__ if self._exception is not None else "error"
        self.bell()
        self._exit_renderables.append(
            Text(
                f"error: internal error in aimos tui ({name}); nothing secret was printed\n"
                "hint: every signed action is one transaction, so nothing was half done; run again with "
                "AIMOS_DEBUG=1 to see the traceback, and report it"
            )
        )
        self._close_messages_no_wait()

    def on_unmount(self) -> None:
        self.brain.close()

    def on_input_changed(self, event: Input.Changed) -> None:
        """A box (filter, query, reason) draws its text as it is, so a control character pasted
        into one would reach the terminal: it is written out escaped in the box instead, and what
        the box holds (what is searched or signed) is what it shows. A password box shows no text."""
        box = event.input
        if not box.password and visible_line(box.value) != box.value:
            box.value = visible_line(box.value)
            box.cursor_position = len(box.value)

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
                self.notify(
                    visible(outcome.text()),
                    title=visible_line(outcome.title),
                    severity="error",
                    timeout=10,
                    markup=False,
                )
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
        from aimos.actions.recall import recall_as

        return self.signed(lambda brain: recall_as(brain, self.agent, query, limit=10), doing="recall")

    def feedback(self, memory_id: str, good: bool, *, receipt_id: str | None) -> None:
        from aimos.actions.feedback import explain, give_feedback
        from aimos.actions.labels import outcome_result_words

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
                    "outcome": result.outcome_id or "-",
                    "result": outcome_result_words(result.terminal),
                    "weight": f"{result.old_weight_milli / 1000:.3f} → {result.new_weight_milli / 1000:.3f}",
                    "why": explain(result),
                    "transition": result.transition_hash or "-",
                    "event": result.event_id or "-",
                }
            )
            title = "Outcome kept for the home device" if result.provisional else "Signed outcome recorded"
            self.push_screen(MessageDialog(title, lines))

        self.push_screen(ConfirmDialog("Sign feedback?", body), answered)

    def label(self, memory_id: str, current_label: str) -> None:
        from aimos.actions.labels import basis_words, judge_memory, judgment_word, label_change, needs_master

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
                master = (
                    brain.master_with(passphrase)
                    if needs_master(brain, self.agent, memory_id, judgment)
                    else None
                )
                del passphrase
                return judge_memory(brain, self.agent, memory_id, judgment, reason, master=master)

            moved = self.signed(call, doing=f"record your judgment ({judgment_word(judgment)})")
            secret[0] = ""
            if moved is None:
                return
            lines = event_lines(
                {
                    "memory": moved.memory_id,
                    "label": label_change(moved.previous_label, moved.label),
                    "by": basis_words(moved.basis),
                    "classification": moved.classification_hash or "-",
                    "event": moved.event_id or "-",
                }
            )
            title = "Judgment kept for the home device" if moved.provisional else "Signed label recorded"
            self.push_screen(MessageDialog(title, lines))

        self.push_screen(LabelDialog(memory_id, self.agent, current_label), answered)

    def correct(self, memory_id: str, value: str) -> None:
        from aimos.actions.memory import correct

        def answered(text: str | None) -> None:
            if text is None:
                return
            saved = self.signed(
                lambda brain: correct(brain, self.agent, memory_id, text), doing="save the correction"
            )
            if saved is None:
                return
            if not saved.memory_id:  # kept for the home device, which saves it
                self.push_screen(
                    MessageDialog("Correction kept for the home device", [saved.forwarded_words()])
                )
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


if TYPE_CHECKING:
    _HOST: type[Host] = AimosApp  # the app is what its screens type against (mypy checks it here)


def run(*, agent: str, light: bool) -> int:
    """Run the app; its return code (1 after an internal error)."""
    app = AimosApp(agent=agent, light=light)
    app.run()
    return int(app.return_code or 0)
