"""Running a brain call from the TUI: aimos's own errors become a message on screen with the fix,
a busy brain says so, and nothing unexpected reaches the user as a traceback."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from aimos.errors import AimosError, BusyError, DamagedBrainError, StoreError
from aimos.store.connection import translate_errors

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
        # aimos errors, worded by engine_failure; aimos's own errors say what they say
        with translate_errors():
            try:
                return call()
            except AimosError as exc:
                return Failure(f"Could not {doing}", exc.message, exc.hint)
    except AimosError as exc:
        return engine_failure(exc, doing)
    except Exception as exc:  # a bug or an environment problem: no traceback, no locals
        return internal_failure(type(exc).__name__, doing)


def engine_failure(exc: AimosError, doing: str) -> Failure:
    """What an engine error (translated by the store into ``exc``) tells the user."""
    if isinstance(exc, BusyError):  # the brain busy or locked
        return Failure(
            f"Could not {doing}", "the brain is busy (another process holds its write lock)", "Try again."
        )
    if isinstance(exc, DamagedBrainError) and isinstance(exc.__cause__, UnicodeDecodeError):
        # a read outside the store's helpers met text that is not UTF-8
        return Failure(f"Could not {doing}", exc.message, exc.hint)
    if type(exc) is StoreError:  # the file is not a database, or a damaged one
        return Failure(
            f"Could not {doing}",
            "the brain file, or one of its search indexes, is damaged",
            "If only the word filter fails, `aimos index rebuild` rebuilds the search indexes (they hold"
            " nothing else). Otherwise run `aimos verify` and restore from a backup in the brain's"
            " backups folder.",
        )
    # anything else the engine raised is a bug here: named as the engine named it
    return internal_failure(type(exc.__cause__ or exc).__name__, doing)


def internal_failure(name: str, doing: str) -> Failure:
    return Failure(
        f"Could not {doing}",
        f"internal error ({name})",
        "Nothing was changed. Run the same action with the `aimos` CLI (AIMOS_DEBUG=1) to see why.",
    )
