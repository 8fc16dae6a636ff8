"""Running a brain call from the TUI: aimos's own errors become a message on screen with the fix,
a busy brain says so, and nothing unexpected reaches the user as a traceback."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from aimos import paths
from aimos.errors import AimosError, BusyError, DamagedBrainError, StoreError
from aimos.store.connection import engine_error_name, translate_errors

T = TypeVar("T")


class Failure:
    """What went wrong, worded for a person: a title, the problem and the fix."""

    def __init__(self, title: str, message: str, hint: str | None) -> None:
        self.title = title
        self.message = message
        self.hint = hint

    def text(self) -> str:
        return self.message + (f"\n{self.hint}" if self.hint else "")


def attempt(call: Callable[[], T], *, doing: str) -> T | Failure:
    """``call()``, or a Failure saying what ``doing`` could not do and why."""
    try:
        # the database engine's errors that reach here (not met by the store on their way) as
        # aimos errors, worded by engine_failure; aimos's own errors say what they say (every file
        # the TUI reads through the engine is the brain: one it cannot open is named)
        with translate_errors(path=paths.brain_path()):
            try:
                return call()
            except AimosError as exc:
                return Failure(f"Could not {doing}", exc.message, exc.hint)
    except AimosError as exc:
        return engine_failure(exc, doing)
    except Exception as exc:  # a bug or an environment problem: no traceback, no locals
        return internal_failure(engine_error_name(exc), doing)


def engine_failure(exc: AimosError, doing: str) -> Failure:
    """What an engine error (translated by the store into ``exc``) tells the user: the words the
    CLI says (a file that cannot be opened, one that is not a database, a damaged one)."""
    if isinstance(exc, BusyError):  # the brain busy or locked
        return Failure(
            f"Could not {doing}", "the brain is busy (another process holds its write lock)", "Try again."
        )
    if isinstance(exc, DamagedBrainError | StoreError):
        return Failure(f"Could not {doing}", exc.message, exc.hint)
    # anything else the engine raised is a bug here: named as the engine named it
    return internal_failure(engine_error_name(exc), doing)


def internal_failure(name: str, doing: str) -> Failure:
    return Failure(
        f"Could not {doing}",
        f"internal error ({name})",
        "Nothing was changed. Run the same action with the `aimos` CLI (AIMOS_DEBUG=1) to see why.",
    )
