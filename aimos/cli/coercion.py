"""Argument values the way Typer converts them, without Typer's cost for the plain ones.

Typer (0.29) converts every parameter's value through a pydantic TypeAdapter it builds on first use:
importing pydantic and building the adapters is most of a cold command's argument handling (~0.1 s
of a command that needs ~0.1 s in all). Most of aimos's parameters are plain: a ``str``, an
``int`` or a ``bool`` with no parser, choices, range or path checks. For those, the values whose
conversion is certain are converted here: a value of the parameter's own type is itself; for an
``int``, a decimal numeral of up to 18 digits is its number; no value stays None. Every other value (a number
written any other way, a value that is wrong) goes to Typer's own conversion, built then, so its
result and its error message are Typer's. tests/cli/test_cold_start.py checks, for every plain
parameter of the command line, that both ways agree on any value the first one takes.
"""

from __future__ import annotations

import re
from typing import Any

_DECIMAL = re.compile(r"0|-?[1-9][0-9]{0,17}")
# the types whose values are converted here (a bool flag's value is already a bool, or None)
PLAIN_TYPES = (str, int, bool)
_MISSING = object()


class _NativeFirst:
    """A parameter's conversion (Typer's RuntimeParam.coerce): the certain values here, the rest
    through Typer's conversion for the parameter, built the first time one needs it."""

    def __init__(self, param: Any) -> None:
        self.param = param
        self.annotation = param.type_descriptor.annotation
        self._typer: Any = None

    def native(self, value: Any) -> Any:
        """The converted value, or _MISSING when Typer must convert it."""
        if value is None or type(value) is self.annotation:
            return value
        if self.annotation is int and type(value) is str and _DECIMAL.fullmatch(value):
            return int(value)
        return _MISSING

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        converted = self.native(value)
        if converted is not _MISSING:
            return converted
        if self._typer is None:
            from typer._coercion import build_runtime_param

            self._typer = build_runtime_param(self.param.type_descriptor)
        return self._typer.coerce(value, param=param, ctx=ctx)


def plain(param: Any) -> bool:
    """Whether ``param`` is one this module converts: a single ``str``, ``int`` or ``bool`` with none
    of the checks Typer adds (parser, choices, min/max, path or file)."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None or getattr(param, "_runtime_param", _MISSING) is not None:
        return False  # not Typer's parameter as this module knows it, or its conversion is built
    info = descriptor.parameter_info
    return (
        descriptor.annotation in PLAIN_TYPES
        and param.nargs == 1
        and not param.multiple
        and getattr(info, "parser", None) is None
        and not (descriptor.is_choice or descriptor.is_path or descriptor.is_file or descriptor.is_ranged)
    )


def _native(param: Any) -> Any:
    if param is not None and plain(param):
        param._runtime_param = _NativeFirst(param)
    return param


def native_first(command: Any) -> Any:
    """``command`` (a Click command tree Typer built) with each plain parameter's conversion done
    here first (see the module's doc); returns ``command``."""
    for param in command.params:
        _native(param)
    help_option = command.get_help_option  # the --help option Click makes when a context asks

    def get_help_option(ctx: Any) -> Any:
        return _native(help_option(ctx))

    command.get_help_option = get_help_option
    for sub in getattr(command, "commands", {}).values():
        native_first(sub)
    return command
