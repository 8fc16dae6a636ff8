"""The only mapping from aimos errors to process exit codes (SPEC section 15)."""

from __future__ import annotations

from enum import IntEnum

from aimos import errors


class ExitCode(IntEnum):
    OK = 0
    FAILURE = 1
    USAGE = 2
    NOT_FOUND = 3
    VERIFICATION_FAILED = 4
    INTEGRITY = 5
    IDENTITY = 6
    BUSY = 7
    ABORTED = 8
    INTERRUPTED = 130


_BY_CLASS: tuple[tuple[type[BaseException], ExitCode], ...] = (
    (errors.UsageError, ExitCode.USAGE),
    (errors.NotFoundError, ExitCode.NOT_FOUND),
    (errors.VerificationError, ExitCode.VERIFICATION_FAILED),
    (errors.IntegrityError, ExitCode.INTEGRITY),
    (errors.IdentityError, ExitCode.IDENTITY),
    (errors.BusyError, ExitCode.BUSY),
    (errors.AbortedError, ExitCode.ABORTED),
    (KeyboardInterrupt, ExitCode.INTERRUPTED),
)


def exit_code_for(exc: BaseException) -> ExitCode:
    """The exit code for an exception; anything unrecognised is a plain failure (1)."""
    return exit_code_for_class(type(exc))


def exit_code_for_class(kind: type[BaseException]) -> ExitCode:
    """The exit code for an exception class (the first category it belongs to; else failure, 1)."""
    for cls, code in _BY_CLASS:
        if issubclass(kind, cls):
            return code
    return ExitCode.FAILURE
