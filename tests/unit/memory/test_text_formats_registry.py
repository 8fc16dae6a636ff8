"""The formats `aimos import` reads are named in one place: aimos/memory/text_formats.py's registry
(IMPORT_FORMATS, its names and AUTO). A format's name written as a literal anywhere else in aimos/
(a field name too) fails here, as tests/architecture/test_vocabulary.py finds protocol words, and
so does a second literal of it inside text_formats.py. The same words meaning something else (the
text export's kinds, the Claude client, other options' "auto") are listed with why."""

from __future__ import annotations

import ast
from pathlib import Path

from aimos.memory import text_formats
from aimos.memory.text_formats import (
    AUTO,
    FOLDER_FORMAT,
    FORMAT_NAMES,
    IMPORT_FORMAT,
    IMPORT_FORMATS,
    by_name,
)

ROOT = Path(__file__).resolve().parents[3]
REGISTRY = ROOT / "aimos" / "memory" / "text_formats.py"

# file -> words it spells in another meaning than an import format
OTHER_MEANINGS: dict[str, set[str]] = {
    "aimos/actions/export.py": {"jsonl", "markdown"},  # `aimos export --text`'s kinds of file
    "aimos/cli/verify_cmds.py": {"jsonl", "markdown"},  # the same, chosen by the file's name
    "aimos/mcp/config.py": {"claude"},  # the Claude Code command that registers the MCP server
    "aimos/mcp/server.py": {"json"},  # a kind of JSON-RPC problem
    "aimos/cli/options.py": {"auto"},  # other options' "auto" (the housekeeper's --service)
    "aimos/identity/keystore.py": {"auto"},
    "aimos/installer/service.py": {"auto"},
}


def spelled(path: Path, words: set[str]) -> list[tuple[int, str]]:
    """(line, word) of every string literal in ``path`` that is one of ``words``."""
    tree = ast.parse(path.read_text("utf-8"))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in words
    ]


def test_no_format_name_is_spelled_outside_the_registry() -> None:
    words = set(FORMAT_NAMES)
    problems = []
    for path in sorted((ROOT / "aimos").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if path == REGISTRY:
            continue
        allowed = OTHER_MEANINGS.get(rel, set())
        problems += [f"{rel}:{line}: {word!r}" for line, word in spelled(path, words) if word not in allowed]
    assert not problems, "import format names outside text_formats' registry:\n" + "\n".join(problems)


def test_the_other_meanings_are_still_there() -> None:
    """An entry of OTHER_MEANINGS that no longer spells its word is taken out of the list."""
    stale = [
        f"{rel}: {word}"
        for rel, allowed in OTHER_MEANINGS.items()
        for word in allowed
        if word not in {w for _, w in spelled(ROOT / rel, {word})}
    ]
    assert not stale, stale


def test_the_registry_names_each_format_once() -> None:
    counts = {word: len([w for _, w in spelled(REGISTRY, {word})]) for word in FORMAT_NAMES}
    assert counts == dict.fromkeys(FORMAT_NAMES, 1), counts


def test_the_scan_finds_a_stray_name(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        'FMT = "chatgpt"\nif fmt in ("auto", "markdown"):\n    pass\n'
        'FINE = "a sentence that mentions markdown notes"\nFIELD = doc.get("json")\n',
        "utf-8",
    )
    assert sorted(spelled(sample, set(FORMAT_NAMES))) == [
        (1, "chatgpt"),
        (2, "auto"),
        (2, "markdown"),
        (5, "json"),
    ]


def test_the_registry_is_whole() -> None:
    """Every format has a name, a line for help and a reader; ``auto`` reads each suffix as one
    format; a folder's notes are one format; a chat export found by its shape is read by it."""
    assert FORMAT_NAMES == (AUTO, *(f.name for f in IMPORT_FORMATS))
    assert len(IMPORT_FORMAT) == len(IMPORT_FORMATS) and AUTO not in IMPORT_FORMAT
    suffixes = [s for f in IMPORT_FORMATS for s in f.suffixes]
    assert len(suffixes) == len(set(suffixes))
    for f in IMPORT_FORMATS:
        assert f.description and "\n" not in f.description and callable(f.read)
        assert all(s.startswith(".") and s == s.lower() for s in f.suffixes)
        assert all(by_name(s) is f for s in f.suffixes)
        assert (f.sniff is None) == (f.conversations is None)
    assert [f for f in IMPORT_FORMATS if f.folder] == [FOLDER_FORMAT]
    assert by_name(".txt") is None and by_name("") is None
    assert text_formats.FORMATS_IN_WORDS == "markdown, json, jsonl, chatgpt or claude"


def test_the_guide_names_every_format_and_suffix() -> None:
    """docs/import-export.md says what --format takes and which names auto reads as which."""
    guide = (ROOT / "docs" / "import-export.md").read_text("utf-8")
    missing = [w for w in FORMAT_NAMES if f"`{w}`" not in guide and f"`--format {w}`" not in guide]
    missing += [s for f in IMPORT_FORMATS for s in f.suffixes if f"`{s}`" not in guide]
    assert not missing, missing
