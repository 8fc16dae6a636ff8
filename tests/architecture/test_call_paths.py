"""A save and a recall cross each package at most once (ARCHITECTURE.md, "Data flow").

The calls of one real save, correct, label, feedback and recall through `aimos.actions` are
traced on an installed brain; on every call stack the aimos packages, in order, must never return
to a package the stack already left (front end -> action -> writer -> store, never back up). The
common modules (errors, vocabulary, paths, exit_codes) are words and exceptions, not layers, and
are left out.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

COMMON = {"errors", "vocabulary", "paths", "exit_codes", "__init__"}


def package_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "aimos" or len(parts) < 2 or parts[1] in COMMON:
        return None
    return parts[1]


def returns(stack: list[str]) -> str | None:
    """The first package a stack of packages (outermost first) returns to after leaving it."""
    runs: list[str] = []
    for package in stack:
        if not runs or runs[-1] != package:
            runs.append(package)
    seen: set[str] = set()
    for package in runs:
        if package in seen:
            return " -> ".join(runs)
        seen.add(package)
    return None


@contextmanager
def traced() -> Iterator[list[str]]:
    """Collects each call stack (as packages) that returns to a package it left."""
    found: list[str] = []

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event != "call":
            return
        stack: list[str] = []
        f: FrameType | None = frame
        while f is not None:
            package = package_of(str(f.f_globals.get("__name__", "")))
            if package is not None:
                stack.append(package)
            f = f.f_back
        path = returns(stack[::-1])
        if path is not None and path not in found:
            found.append(path)

    sys.setprofile(profile)
    try:
        yield found
    finally:
        sys.setprofile(None)


def test_the_check_sees_a_return() -> None:
    assert returns(["actions", "memory", "epistemic", "memory"]) == "actions -> memory -> epistemic -> memory"
    assert returns(["cli", "actions", "actions", "memory", "store"]) is None


def run_actions(step: Callable[[Any], Any]) -> list[str]:
    from aimos.actions.session import open_brain

    with open_brain(write=True) as brain:
        brain.housekeeper()
        brain.signer("cli")  # keys loaded before tracing: the keystore is not what is measured
        with traced() as found:
            step(brain)
    return found


@pytest.fixture
def saved(installed: Path) -> str:
    from aimos.actions.memory import NewMemory, save
    from aimos.actions.session import open_brain

    with open_brain(write=True) as brain:
        return save(brain, "cli", NewMemory(value="What colour is the shed? The shed is green")).memory_id


def test_a_save_crosses_each_package_once(installed: Path) -> None:
    from aimos.actions.memory import NewMemory, save

    found = run_actions(lambda b: save(b, "cli", NewMemory(value="Which day is bin day? Bin day is Tuesday")))
    assert not found, found


def test_a_recall_crosses_each_package_once(saved: str) -> None:
    from aimos.actions.recall import recall_as

    found = run_actions(lambda b: recall_as(b, "cli", "shed colour"))
    assert not found, found


def test_correct_label_and_feedback_cross_each_package_once(saved: str) -> None:
    from aimos.actions.feedback import give_feedback
    from aimos.actions.labels import judge_memory
    from aimos.actions.memory import correct
    from aimos.actions.recall import recall_as

    def steps(brain: Any) -> None:
        recall_as(brain, "cli", "shed colour")
        give_feedback(brain, "cli", saved, good=True)
        judge_memory(brain, "cli", saved, "dispute", "it was repainted", master=None)
        correct(brain, "cli", saved, "What colour is the shed? The shed is blue")

    found = run_actions(steps)
    assert not found, found
