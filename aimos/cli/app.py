"""The `aimos` command: Typer app, error handling and exit codes.

Heavy imports (apsw, nacl, textual, apscheduler) stay inside the commands so `--help` is fast.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import time
import warnings
from typing import Any

import typer

from aimos import __version__
from aimos.cli.output import say
from aimos.errors import AimosError, ExpiryWarning
from aimos.exit_codes import ExitCode, exit_code_for
from aimos.vocabulary import HOUSEKEEPER

# The command line's parts in the order `aimos --help` lists them: the module of aimos.cli that
# adds them, its Typer group added under that one word (None: the module's register(app) adds its
# words itself), and the top-level words the part adds (tests/cli/test_cold_start.py holds the
# table to what each part really adds).
_PARTS: tuple[tuple[str, str | None, tuple[str, ...]], ...] = (
    ("install_cmd", None, ("install",)),
    ("uninstall_cmd", None, ("uninstall",)),
    ("memory_cmds", None, ("save", "correct", "show", "list")),
    ("import_cmd", None, ("import",)),
    ("recall_cmds", None, ("recall",)),
    ("learning_cmds", None, ("feedback",)),
    ("label_cmds", None, ("label",)),
    ("verify_cmds", None, ("verify", "export", "export-recall", "export-outcome", "verify-bundle")),
    ("status_cmd", None, ("status",)),
    ("doctor_cmd", None, ("doctor",)),
    ("restore_cmd", None, ("restore",)),
    ("anchor_cmd", None, ("anchor",)),
    ("redact_cmd", None, ("redact",)),
    ("housekeeper_cmds", None, (HOUSEKEEPER,)),  # (the command is named after the identity)
    ("tui_cmd", None, ("tui",)),
    ("recall_cmds", "receipt_app", ("receipt",)),
    ("recall_cmds", "index_app", ("index",)),
    ("guides_cmds", "guides_app", ("guides",)),
    ("agent_cmds", "agent_app", ("agent",)),
    ("keys_cmds", "passphrase_app", ("passphrase",)),
    ("keys_cmds", "keystore_app", ("keystore",)),
    ("eval_cmds", "eval_app", ("eval",)),
    ("purge_cmds", "purge_app", ("purge",)),
    ("mcp_cmds", "mcp_app", ("mcp",)),
    ("backup_cmds", "backup_app", ("backup",)),
    ("model_cmds", "model_app", ("model",)),
    ("hub_cmds", "hub_app", ("hub",)),
    ("hub_cmds", None, ("sync",)),
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"aimos {__version__}")
        raise typer.Exit()


def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """aimos: a local-first memory brain for AI agents."""


def build_app(word: str | None = None) -> typer.Typer:
    """The `aimos` Typer app: every part (``word`` None), or only the part that adds the top-level
    command ``word``. A command's own process builds only its part: the other command modules are
    not imported and their Click commands not built, and what the command says (its help, its
    usage errors, its output) is the same as in the whole app, since a command's Click command
    depends on nothing but its own definition and the root's settings."""
    import importlib

    app = typer.Typer(
        name="aimos",
        help="aimos: a local-first memory brain for AI agents. Every save is signed; nothing is forgotten.",
        no_args_is_help=True,
        add_completion=True,
        pretty_exceptions_enable=False,
        pretty_exceptions_show_locals=False,
        rich_markup_mode=None,  # plain help: no rich import on the --help path
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(_root)
    for module_name, group, words in _PARTS:
        if word is not None and word not in words:
            continue
        module = importlib.import_module(f"aimos.cli.{module_name}")
        if group is None:
            module.register(app)
        else:
            app.add_typer(getattr(module, group), name=words[0])
    return app


def __getattr__(name: str) -> Any:
    """``aimos.cli.app.app``, the whole Typer app, built when first asked for (PEP 562)."""
    if name == "app":
        return _whole_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def _whole_app() -> typer.Typer:
    return build_app()


# Click's exception classes as this Typer raises them (recent Typer vendors Click as typer._click;
# older ones use click itself): found from the public typer.BadParameter
_CLICK = {cls.__name__: cls for cls in typer.BadParameter.__mro__}
ClickException: type[Any] = _CLICK["ClickException"]
ClickUsageError: type[Any] = _CLICK["UsageError"]


def secret_in(text: str) -> str | None:
    """The kind of secret ``text`` would show, or None: every text the CLI would echo from its
    arguments (a usage error quotes them) passes here first."""
    from aimos.memory.gates import secret_kind  # here: --help never loads the gate

    return secret_kind(text)


def _not_echoed(kind: str) -> tuple[str, str]:
    from aimos.memory.gates import NOT_ECHOED, NOT_ECHOED_HINT

    return NOT_ECHOED.format(kind=kind), NOT_ECHOED_HINT


def _report(exc: AimosError) -> None:
    from aimos.errors import SecretDetectedError

    kind = None if isinstance(exc, SecretDetectedError) else secret_in(f"{exc.message}\n{exc.hint}")
    if kind is not None:
        words, hint = _not_echoed(kind)
        say(f"error: {words}")
        say(f"hint: {hint}")
        return
    say(f"error: {exc.message}")
    if exc.hint:
        say(f"hint: {exc.hint}")


def _report_usage(exc: Any) -> None:
    """Click's usage error as Click shows it (usage line, help pointer, message), unless its
    message quotes a secret from the command line: then the kind of secret instead."""
    # `aimos` alone shows the help as a usage error: aimos's own text, nothing from argv in it
    own_help = type(exc).__name__ == "NoArgsIsHelpError"
    kind = None if own_help else secret_in(exc.format_message())
    if kind is not None:
        words = ". ".join(_not_echoed(kind))
        ctx = exc.ctx if isinstance(exc, ClickUsageError) else None
        screened = ClickUsageError(words, ctx=ctx) if ctx is not None else ClickException(words)
        screened.exit_code = exc.exit_code
        exc = screened
    exc.show()


_python_warning = warnings.showwarning


def _show_warning(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
    """An agent's epoch ending soon (ExpiryWarning, raised when the agent signs) is said on stderr
    as its one line; any other warning as Python shows it."""
    if issubclass(category, ExpiryWarning):
        say(str(message))
    else:
        _python_warning(message, category, *args, **kwargs)


_COMPLETE_VAR = "_AIMOS_COMPLETE"  # set by the shell completion scripts (Typer's `_{PROG}_COMPLETE`)


def _first_word(args: list[str]) -> str | None:
    """The top-level command ``args`` run, when it alone is needed: the whole tree for anything
    else (no command, an option first, an unknown word or a typo the group suggests a command
    for, a shell completion request)."""
    if not args or os.environ.get(_COMPLETE_VAR) or not any(args[0] in words for *_, words in _PARTS):
        return None
    return args[0]


def whole_summaries(command: Any) -> Any:
    """``command`` with every subcommand's summary (its line in a help's command table) set to the
    first line of its help, whole: a short sentence (tests/cli/test_help_summaries.py holds each
    to one). Click would otherwise make one from the help's first paragraph and cut it to the
    table's room with "...", a room that shrinks with the terminal."""
    for sub in getattr(command, "commands", {}).values():
        if sub.short_help is None and sub.help:
            sub.short_help = inspect.cleandoc(sub.help).partition("\n")[0]
        whole_summaries(sub)
    return command


@functools.cache
def _command_tree(word: str | None = None) -> Any:
    """The Click command tree Typer builds from the app (build_app(word)), built once per process
    and word: main runs it (as ``app(...)`` would, less Typer's excepthook, since main lets no
    exception out) and _log reads its command names."""
    from aimos.cli.coercion import native_first

    app = build_app(word)
    if word is not None:  # that command alone: the other commands of its part are not built
        app.registered_commands = [c for c in app.registered_commands if c.name in (word, None)]
    return native_first(whole_summaries(typer.main.get_command(app)))


def _log(command: list[str], code: int, error: BaseException | None) -> None:
    """One line per command in the log dir: command word, exit code, error class. No arguments."""
    try:
        from aimos import paths

        log_dir = paths.log_dir()
        paths.ensure_private_dir(log_dir)
        # Only the command's name (and sub-command for groups): never arguments, which can
        # hold memory text.
        root = _command_tree(_first_word(command))
        words: list[str] = []
        group: Any = root
        for word in command[:2]:
            commands = getattr(group, "commands", None)
            sub = commands.get(word) if isinstance(commands, dict) else None
            if sub is None:
                break
            words.append(word)
            group = sub
        words = words or ["<unknown>"]
        line = f"{int(time.time())} aimos {' '.join(words)} exit={code}"
        if error is not None:
            line += f" error={type(error).__name__}"
        fd = os.open(log_dir / "aimos.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (line + "\n").encode())
        finally:
            os.close(fd)
    except OSError:
        pass


def _full_verify(args: list[str]) -> bool:
    return args[0] == "verify" and not any(a == "--memory" or a.startswith("--memory=") for a in args)


def _warn_unverified() -> None:
    """After every command: while the brain's newest full verification failed (the nightly job's,
    or `aimos verify`'s), one line on stderr says so and what to run. One stat of a file in the
    state folder; the brain is not opened (verify/brain/outcome.py)."""
    from aimos.verify.brain.outcome import notice_line

    try:
        warning = notice_line()
        if warning is not None:
            say(warning)
    except OSError:  # a state folder that cannot be looked at, a closed stderr: no warning
        pass


def main(argv: list[str] | None = None) -> Any:
    """Console entry point: no traceback reaches a user; exit codes follow SPEC section 15.

    Typer runs outside standalone mode: its usage errors (exit 2), aimos's own errors and anything
    unexpected propagate out of it and are reported here, each screened for a secret it would
    quote from the command line.
    """
    os.umask(0o077)
    warnings.showwarning = _show_warning
    args = list(sys.argv[1:] if argv is None else argv)
    code: int = ExitCode.OK
    error: BaseException | None = None
    try:
        # not standalone: Click hands its usage errors here (see _report_usage) instead of
        # printing them; typer.Exit and --help come back as the exit code
        returned = _command_tree(_first_word(args)).main(args=args, prog_name="aimos", standalone_mode=False)
        code = returned if isinstance(returned, int) and not isinstance(returned, bool) else ExitCode.OK
    except ClickException as exc:
        _report_usage(exc)
        code = exc.exit_code
    except typer.Abort:
        say("Aborted!")
        code = ExitCode.FAILURE
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except AimosError as exc:
        error = exc
        _report(exc)
        code = exit_code_for(exc)
    except KeyboardInterrupt as exc:
        error = exc
        say("interrupted: nothing was changed")
        code = ExitCode.INTERRUPTED
    except BrokenPipeError:
        code = ExitCode.OK
    except Exception as exc:  # a bug: say so plainly, without a traceback or locals
        error = exc
        say(
            f"error: internal error ({type(exc).__name__}); nothing secret was printed\n"
            "hint: run again with AIMOS_DEBUG=1 to see the traceback, and report it"
        )
        if os.environ.get("AIMOS_DEBUG") == "1":
            import traceback

            traceback.print_exc()
        code = ExitCode.FAILURE
    if args and args[0] not in ("--help", "-h", "--version"):
        _log(args, int(code), error)
        if not _full_verify(args):  # that one has just said what it found
            _warn_unverified()
    sys.exit(int(code))


if __name__ == "__main__":  # pragma: no cover
    main()
