"""Shared by the tests (moved from tests/recall/test_recall_cli.py)."""

from __future__ import annotations

from typing import Any

from support.cli import (
    UUID_RE,
    parse_json,
    run_aimos,
)


def save(text: str, *options: str) -> str:
    result = run_aimos("save", text, *options).ok()
    memory_id = result.out.strip()
    assert UUID_RE.match(memory_id), result.describe()
    return memory_id


def recall_json(query: str, *options: str) -> dict[str, Any]:
    data: dict[str, Any] = parse_json(run_aimos("recall", query, "--json", *options))
    return data


def ids(data: dict[str, Any]) -> list[str]:
    return [r["memory_id"] for r in data["results"]]
