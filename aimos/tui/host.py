"""What the screens need from the app that hosts them: the shared reading connection, the theme's
inks, the clock, reads and signed actions with their errors on screen, and navigation. The screens
type against this; aimos.tui.app.AimosApp provides it (mypy checks that in app.py), so the app
imports its screens and no screen imports the app. A screen reaches its host through
HostedScreen.aimos."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar, cast

from textual.screen import Screen

T = TypeVar("T")


class Host(Protocol):
    @property
    def reader(self) -> Any:
        """The reading connection every screen shares."""
        ...

    def ink(self, style: str) -> str:
        """A Rich style with its colour words in the current theme's colours."""
        ...

    def now(self) -> int: ...

    def read(self, call: Callable[[], T], *, doing: str, quiet: bool = False) -> T | None:
        """``call()``, or None with the error on screen."""
        ...

    def anchor(self) -> str | None:
        """The master fingerprint to verify against."""
        ...

    def open_memory(self, memory_id: str) -> None: ...

    def run_recall(self, query: str) -> Any: ...

    def feedback(self, memory_id: str, good: bool, *, receipt_id: str | None) -> None: ...

    def label(self, memory_id: str, current_label: str) -> None: ...

    def correct(self, memory_id: str, value: str) -> None: ...


class HostedScreen(Screen[None]):
    """A screen of aimos's TUI: ``self.aimos`` is the app hosting it, typed as a Host."""

    @property
    def aimos(self) -> Host:
        return cast(Host, self.app)
