"""Each format in text_formats' registry is reachable through `aimos import --format NAME`: a tiny
file of that format, named .txt (which `auto` does not read), is read by that format's reader and
would be saved as one new memory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import run_aimos

from aimos.memory.text_formats import AUTO, IMPORT_FORMAT, by_name

CHATGPT_EXPORT = [
    {
        "id": "c1",
        "title": "Bread",
        "mapping": {
            "r": {
                "message": {"author": {"role": "user"}, "content": {"parts": ["How do I feed a starter?"]}},
                "parent": None,
                "children": [],
            }
        },
        "current_node": "r",
    }
]
CLAUDE_EXPORT = [
    {"uuid": "u1", "name": "Bikes", "chat_messages": [{"sender": "human", "text": "Gears skip."}]}
]
# a tiny file of each format (the format its reader says it read)
SAMPLES = {
    "markdown": ("---\ntitle: Boiler\n---\nThe boiler is serviced every October.\n", "markdown"),
    "json": (json.dumps([{"text": "The spare key is with Priya."}]), "json"),
    "jsonl": (json.dumps({"text": "Renew the car insurance in March."}) + "\n", "jsonl"),
    "chatgpt": (json.dumps(CHATGPT_EXPORT), "chatgpt"),
    "claude": (json.dumps(CLAUDE_EXPORT), "claude"),
}


def test_every_registered_format_has_a_sample() -> None:
    assert set(SAMPLES) == set(IMPORT_FORMAT) and by_name(".txt") is None


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_format_is_reached_by_its_name(installed: Path, tmp_path: Path, name: str) -> None:
    text, read_as = SAMPLES[name]
    sample = tmp_path / "sample.txt"
    sample.write_text(text, "utf-8")
    refused = run_aimos("import", str(sample), "--dry-run", "--format", AUTO)
    assert refused.code != 0 and "no import format for .txt" in refused.err, refused.describe()
    result = run_aimos("import", str(sample), "--dry-run", "--json", "--format", name)
    assert result.code == 0, result.describe()
    planned = result.json()
    assert planned["summary"]["formats"] == [read_as]
    assert [m["status"] for m in planned["memories"]] == ["new"]


@pytest.mark.parametrize("name", sorted(f.name for f in IMPORT_FORMAT.values() if f.sniff))
def test_a_chat_export_format_refuses_other_json(installed: Path, tmp_path: Path, name: str) -> None:
    """Its own reader is reached: a list of memories, which `json` reads, is not this export."""
    sample = tmp_path / "sample.txt"
    sample.write_text(SAMPLES["json"][0], "utf-8")
    result = run_aimos("import", str(sample), "--dry-run", "--format", name)
    assert result.code != 0 and f"this is not a {name} export" in result.err, result.describe()
