"""Running a brain call from the TUI: aimos's own errors become a message on screen with the fix,
a busy brain says so, and nothing unexpected reaches the user as a traceback."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import apsw

from aimos.errors import AimosError

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
        return call()
    except AimosError as exc:
        return Failure(f"Could not {doing}", exc.message, exc.hint)
    except (apsw.BusyError, apsw.LockedError):
        return Failure(
            f"Could not {doing}", "the brain is busy (another process holds its write lock)", "Try again."
        )
    except UnicodeDecodeError:  # a read outside the store's helpers met text that is not UTF-8
        from aimos.store.connection import damaged_text_error

        damaged = damaged_text_error(None)
        return Failure(f"Could not {doing}", damaged.message, damaged.hint)
    except (apsw.CorruptError, apsw.NotADBError):
        return Failure(
            f"Could not {doing}",
            "the brain file, or one of its search indexes, is damaged",
            "If only the word filter fails, `aimos index rebuild` rebuilds the search indexes (they hold"
            " nothing else). Otherwise run `aimos verify` and restore from a backup in the brain's"
            " backups folder.",
        )
    except Exception as exc:  # a bug or an environment problem: no traceback, no locals
        return Failure(
            f"Could not {doing}",
            f"internal error ({type(exc).__name__})",
            "Nothing was changed. Run the same action with the `aimos` CLI (AIMOS_DEBUG=1) to see why.",
        )
