"""Typed reads of apsw row cells. apsw types every cell as int | float | bytes | str | None; a test
that reads a column whose type it knows says so here, as an assertion that fails if it is wrong."""

from __future__ import annotations


def cell_int(value: object) -> int:
    """A cell the test knows holds an INTEGER (a rowid, a count, an integer column)."""
    assert isinstance(value, int), f"expected an integer cell, got {value!r}"
    return value


def cell_str(value: object) -> str:
    """A cell the test knows holds TEXT."""
    assert isinstance(value, str), f"expected a text cell, got {value!r}"
    return value
