"""Every error aimos raises on purpose is defined in aimos/errors.py, and each maps to a non-zero
exit code of SPEC section 15 (through aimos.exit_codes, the only mapping)."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import aimos
from aimos import errors
from aimos.exit_codes import ExitCode, exit_code_for, exit_code_for_class

# SPEC 15: "exit codes 0 ok, 1 failure, 2 usage, 3 not found, 4 verification failed, 5 integrity,
# 6 identity or keychain, 7 busy, 8 aborted, 130 interrupted".
SPEC_15 = {
    0: "ok",
    1: "failure",
    2: "usage",
    3: "not found",
    4: "verification failed",
    5: "integrity",
    6: "identity or keychain",
    7: "busy",
    8: "aborted",
    130: "interrupted",
}
SPEC = Path(__file__).resolve().parents[3] / "shared" / "SPEC.md"


def _import_everything() -> None:
    """Every module of aimos (its installer and purge too), so every subclass defined anywhere exists."""
    for module in pkgutil.walk_packages(aimos.__path__, "aimos."):
        if not module.name.endswith(".__main__"):  # running it would start the CLI
            importlib.import_module(module.name)


def _subclasses(cls: type) -> set[type]:
    found: set[type] = set()
    sub: type
    for sub in cls.__subclasses__():
        found |= {sub} | _subclasses(sub)
    return found


_import_everything()
ERRORS = sorted(_subclasses(errors.AimosError), key=lambda c: c.__name__)


def test_the_walk_finds_the_errors() -> None:
    assert len(ERRORS) >= 30 and errors.UsageError in ERRORS and errors.SealError in ERRORS


@pytest.mark.parametrize("error", ERRORS, ids=lambda c: c.__name__)
def test_each_error_is_defined_in_errors_py(error: type) -> None:
    assert error.__module__ == "aimos.errors", (
        f"{error.__module__}.{error.__name__} subclasses AimosError outside aimos/errors.py: move it there"
    )
    assert getattr(errors, error.__name__) is error


@pytest.mark.parametrize("error", [errors.AimosError, *ERRORS], ids=lambda c: c.__name__)
def test_each_error_maps_to_a_non_zero_exit_code_named_in_spec_15(error: type[BaseException]) -> None:
    code = exit_code_for_class(error)
    assert code != ExitCode.OK and int(code) in SPEC_15, (error.__name__, code)
    if error is not errors.AimosError and error.__init__ is errors.AimosError.__init__:
        assert exit_code_for(error("x")) == code  # the instance maps as its class does


def test_the_exit_codes_are_the_ones_spec_15_names() -> None:
    assert {int(code) for code in ExitCode} == set(SPEC_15)
    if SPEC.exists():  # beside the repository in the workspace; not shipped with it
        section = SPEC.read_text("utf-8").split("## 15.", 1)[1].split("\n## ", 1)[0]
        listed = " ".join(section.split())
        for code, name in SPEC_15.items():
            assert re.search(rf"\b{code} {name}\b", listed), (code, name)
