"""Modal dialogs: confirm before signing, a judgment with its reason, a correction, the signed
result, an error, and the help screen. What a dialog says about the brain (ids, agents, results,
errors that may quote stored text) is drawn as plain Text with controls escaped, never as markup."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static, TextArea

from aimos.actions.labels import JUDGMENT_MEANING, JUDGMENT_WORDS, judgment_list, label_words
from aimos.terminal import visible
from aimos.tui.format import plain, plain_line
from aimos.vocabulary import JUDGMENTS, raises_trust


def signing_footer(note: str, sign: str, sign_id: str) -> ComposeResult:
    """A signing dialog's last lines: what signing does, the error line, Sign and Cancel."""
    yield Static(plain(note), classes="dialog-body")
    yield Static("", id="dialog-error", classes="error")
    with Horizontal(classes="dialog-buttons"):
        yield Button(sign, variant="primary", id=sign_id)
        yield Button("Cancel", id="cancel")


class ConfirmDialog(ModalScreen[bool]):
    """Asks before anything is signed: says what will be signed and by whom."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Sign"),
        Binding("n,escape", "answer(False)", "Cancel"),
    ]

    def __init__(self, title: str, body: str) -> None:
        super().__init__()
        self._title = title
        self._body = body

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(plain_line(self._title), classes="dialog-title")
            yield Static(plain(self._body), classes="dialog-body")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Sign (y)", variant="primary", id="yes")
                yield Button("Cancel (n)", id="no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class LabelDialog(ModalScreen["dict[str, str] | None"]):
    """A person's judgment in plain words (poison, not-poison, support, dispute) with a reason,
    and the master passphrase when the judgment would raise the memory's trust from its current
    label."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, memory_id: str, agent: str, current_label: str) -> None:
        super().__init__()
        self._memory_id = memory_id
        self._agent = agent
        self._current = current_label

    def _raises(self, judgment: object) -> bool:
        return judgment in JUDGMENTS and raises_trust(self._current, JUDGMENTS[str(judgment)][0])

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog"):  # scrolls rather than hide its buttons on a small screen
            yield Label(
                plain_line(f"Label memory {self._memory_id[:8]} (now: {label_words(self._current)})"),
                classes="dialog-title",
            )
            yield Select(
                [(f"{word}: {JUDGMENT_MEANING[word]}", j) for word, j in JUDGMENT_WORDS.items()],
                prompt="judgment",
                id="judgment",
                compact=True,
            )
            yield Input(placeholder="reason (kept in the record)", id="reason", compact=True)
            yield Input(
                placeholder="master passphrase (this judgment raises trust)",
                password=True,
                id="passphrase",
                compact=True,
            )
            yield from signing_footer(
                f"Signed by agent {self._agent}; a judgment that raises trust also by the master.",
                "Sign",
                "sign",
            )

    def on_mount(self) -> None:
        self.query_one("#passphrase", Input).display = False

    def on_select_changed(self, event: Select.Changed) -> None:
        self.query_one("#passphrase", Input).display = self._raises(event.value)

    def on_input_submitted(self, _event: Input.Submitted) -> None:
        self._submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "sign":
            self._submit()
        else:
            self.action_cancel()

    def _submit(self) -> None:
        judgment = self.query_one("#judgment", Select).value
        reason = self.query_one("#reason", Input).value.strip()
        passphrase = self.query_one("#passphrase", Input).value
        error = self.query_one("#dialog-error", Static)
        if judgment not in JUDGMENTS:
            error.update("Choose a judgment.")
            return
        if not reason:
            error.update("Give a reason: it is kept with the label.")
            return
        raises = self._raises(judgment)
        if raises and not passphrase:
            error.update("This judgment raises the memory's trust: type the master passphrase.")
            return
        self.query_one("#passphrase", Input).clear()  # the box does not keep it once it is handed over
        kept = passphrase if raises else ""  # only a judgment that raises trust uses it
        self.dismiss({"judgment": str(judgment), "reason": reason, "passphrase": kept})

    def action_cancel(self) -> None:
        self.query_one("#passphrase", Input).clear()
        self.dismiss(None)


class CorrectDialog(ModalScreen["str | None"]):
    """The corrected text; the old memory is kept and the new version supersedes it.

    The editor starts with the text as the screens show it: a control character or escape sequence
    in it is written out escaped (``\\x1b[2J``), since the editor would send it to the terminal
    as is. What is saved is the text as it stands in the editor, so a correction made here drops
    those characters (the old version keeps them, and `aimos correct` can save any text)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "save", "Sign new version"),
    ]

    def __init__(self, memory_id: str, value: str, agent: str) -> None:
        super().__init__()
        self._memory_id = memory_id
        self._value = visible(value)  # what the editor starts with (and "nothing changed" means)
        self._escaped = self._value != value
        self._agent = agent

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(plain_line(f"Correct memory {self._memory_id[:8]}"), classes="dialog-title")
            yield TextArea(self._value, id="correction")
            escaped = (
                " Control characters in the old text are shown escaped, and saved as shown."
                if self._escaped
                else ""
            )
            yield from signing_footer(
                f"Saves a new version signed by agent {self._agent}; the old one is kept.{escaped}",
                "Sign new version (ctrl+s)",
                "save",
            )

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self.action_save()
        else:
            self.dismiss(None)

    def action_save(self) -> None:
        text = self.query_one("#correction", TextArea).text
        if not text.strip():
            self.query_one("#dialog-error", Static).update("The corrected text is empty.")
            return
        if text == self._value:
            self.query_one("#dialog-error", Static).update("Nothing changed: edit the text first.")
            return
        self.dismiss(text)

    def action_cancel(self) -> None:
        self.dismiss(None)


class MessageDialog(ModalScreen[None]):
    """A result or an error, with the lines that matter (the signed event, or the fix)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,enter", "close", "Close")]

    def __init__(self, title: str, lines: list[str], *, error: bool = False) -> None:
        super().__init__()
        self._title = title
        self._lines = lines
        self._error = error

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog error-dialog" if self._error else "dialog"):
            yield Label(
                plain_line(self._title), classes="dialog-title error" if self._error else "dialog-title"
            )
            with VerticalScroll(classes="dialog-scroll"):
                yield Static(plain("\n".join(self._lines)), classes="dialog-body")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Close", id="close")

    def on_button_pressed(self, _event: Button.Pressed) -> None:
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)


HELP = f"""\
aimos tui: browse your brain, run recalls, inspect receipts and sign actions.

Everywhere
  1 / 2 / 3     memories, recall, status
  ?             this help             q   quit
  ctrl+t        light or dark theme   ctrl+p  command palette
  ctrl+q        quit, even while typing in a box

Memories
  /             filter by words       escape  clear the filter
  o / v         sort column / reverse h       include superseded versions
  enter         open the memory       arrows, page keys, home/end scroll

A memory
  g / b         signed feedback: good / bad (about your latest recall of it)
  l             label: {judgment_list()}, with a reason
  c             correct: a new version that supersedes it (the old one is kept)
  escape        back

Recall
  enter         run the recall (signed; every recall gets a receipt)
  t             the receipt: evidence, Merkle root, the signed event; v verifies it
  g / b         feedback on the selected result, about this receipt
  w             show or hide memories withheld as untrusted
  enter         (on a result) open the memory

Status
  v             verify everything (both verifiers and their parity)
  r             refresh

Every action asks before it signs, and nothing is ever deleted or overwritten.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,question_mark,q", "close", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog help"):
            yield Static(HELP)

    def action_close(self) -> None:
        self.dismiss(None)


def event_lines(result: dict[str, Any]) -> list[str]:
    """A signed result as `key  value` lines, in the order given."""
    width = max((len(k) for k in result), default=0)
    return [f"{k.ljust(width)}  {v}" for k, v in result.items()]
