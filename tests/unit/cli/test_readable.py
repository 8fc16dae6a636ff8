"""aimos.cli.output.readable: a job's details for a person, not a Python repr."""

from __future__ import annotations

from aimos.cli.output import readable


def test_readable_values() -> None:
    assert readable({"memories": 13, "events": 30}) == "memories 13, events 30"
    assert readable(True) == "yes" and readable(False) == "no" and readable(None) == "-"
    assert readable(["a", "b"]) == "a, b" and readable([]) == "none" and readable({}) == "none"
    assert readable({"by_kind": {"a": 1}, "ids": [1, 2]}) == "by_kind (a 1), ids (1, 2)"
    assert readable(0.066) == "0.066"
