"""Typed reads of apsw row cells. apsw types every cell as int | float | bytes | str | None; a test
that reads a column whose type it knows says so here, as an assertion that fails if it is wrong."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # nothing of aimos is imported with this module (the root conftest uses it)
    import apsw


def cell_int(value: object) -> int:
    """A cell the test knows holds an INTEGER (a rowid, a count, an integer column)."""
    assert isinstance(value, int), f"expected an integer cell, got {value!r}"
    return value


def cell_str(value: object) -> str:
    """A cell the test knows holds TEXT."""
    assert isinstance(value, str), f"expected a text cell, got {value!r}"
    return value


def the_row(conn: apsw.Connection, sql: str, params: Any = ()) -> dict[str, Any]:
    """`aimos.store.connection.one` for a query the test knows finds a row (a COUNT, a row it
    made): the row, asserted to be there."""
    from aimos.store.connection import one

    row = one(conn, sql, params)
    assert row is not None, f"no row for {sql!r} {params!r}"
    return row


def cell_bytes(value: object) -> bytes:
    """A cell the test knows holds a BLOB."""
    assert isinstance(value, bytes), f"expected a blob cell, got {value!r}"
    return value
