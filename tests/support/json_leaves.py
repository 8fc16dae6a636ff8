"""Every-leaf tampering of JSON documents (a bundle changed in one place, nothing recomputed)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def leaves(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(path, value) of every leaf; an empty object or list counts as a leaf."""
    if isinstance(node, dict) and node:
        for key, value in node.items():
            yield from leaves(value, (*path, key))
    elif isinstance(node, list) and node:
        for index, value in enumerate(node):
            yield from leaves(value, (*path, index))
    else:
        yield path, node


def changed(value: Any) -> Any:
    """A different JSON value of a nearby kind."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value + 0.5
    if isinstance(value, str):
        if not value:
            return "x"
        return value[:-1] + ("0" if value[-1] != "0" else "1")
    if value is None:
        return "x"
    if isinstance(value, list):  # an empty list
        return ["x"]
    return {"x": 1}  # an empty object


def set_at(document: Any, path: tuple[Any, ...], value: Any) -> None:
    node = document
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
