"""The everyday CLI, end to end through real subprocesses, with the file keystore.

SPEC sections 3-5 and 15: help, install (fingerprint, anchors, file modes), save / show / list /
correct / status / agent list, stdin, --json everywhere, prefix ids, supersession, duplicates.
"""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

import pytest
from support.cli import (
    BRAIN,
    HEX64_RE,
    UUID_RE,
    Result,
    assert_refused,
    brain_id,
    keystore_dir,
    parse_json,
    run_aimos,
    table_counts,
)

pytestmark = pytest.mark.timeout(120)

COMMANDS = (
    "install",
    "uninstall",
    "save",
    "show",
    "list",
    "correct",
    "recall",
    "feedback",
    "label",
    "verify",
    "export",
    "export-recall",
    "export-outcome",
    "verify-bundle",
    "status",
    "doctor",
    "restore",
    "anchor",
    "redact",
    "tui",
    "housekeeper",
    "receipt",
    "index",
    "agent",
    "passphrase",
    "keystore",
    "eval",
    "purge",
    "mcp",
    "backup",
    "import",
    "model",
    "guides",
    "hub",
    "sync",
)


def saved_id(result: Result) -> str:
    result.ok()
    assert UUID_RE.match(result.out.strip()), result.describe()
    return result.out.strip()


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# --- help ----------------------------------------------------------------------------------
def test_help_lists_every_command_with_one_line_help() -> None:
    # Wide columns so a one-line help is printed on one line whatever the formatter.
    result = run_aimos("--help", env={"COLUMNS": "200"}).ok()
    found: dict[str, str] = {}
    for raw in result.out.splitlines():
        line = raw.strip().strip("│|").strip()
        match = re.match(r"^([a-z-]+)\s{2,}(\S.*)$", line)
        if match and match.group(1) in COMMANDS:
            found[match.group(1)] = match.group(2).strip()
    assert sorted(found) == sorted(COMMANDS), f"commands in --help: {sorted(found)}\n{result.out}"
    for name, help_text in found.items():
        assert len(help_text.split()) >= 3, f"{name}: help {help_text!r} is not a sentence"
    # inside the Commands section every line is "name  help": no help spills onto a second line
    lines = result.out.splitlines()
    start = next(i for i, line in enumerate(lines) if "Commands" in line)
    section = []
    for raw in lines[start + 1 :]:
        line = raw.strip().strip("│|").strip()
        if not line or raw.strip().startswith("╰"):
            break
        section.append(line)
    assert len(section) == len(COMMANDS), "\n".join(section)
    for line in section:
        assert re.match(r"^[a-z-]+\s{2,}\S", line), f"a help line wrapped: {line!r}"


def test_no_arguments_shows_help() -> None:
    result = run_aimos(env={"COLUMNS": "200"})
    assert "Traceback" not in result.both
    assert "install" in result.both and "save" in result.both


# --- install -------------------------------------------------------------------------------
def test_install_prints_fingerprint_and_keystore_and_writes_anchors(aimos_home: Path) -> None:
    result = run_aimos("install", "--yes", "--no-guides", "--keystore", "file").ok()
    match = re.search(r"master fingerprint: ([0-9a-f]+)\s*$", result.out, re.MULTILINE)
    assert match, result.describe()
    fingerprint = match.group(1)
    assert HEX64_RE.match(fingerprint), fingerprint
    assert re.search(r"^keystore: .*file keystore", result.out, re.MULTILINE), result.describe()

    anchors = json.loads((aimos_home / "config" / "anchors.json").read_text("utf-8"))
    bid = brain_id(aimos_home)
    assert anchors["brains"][bid]["master_fingerprint"] == fingerprint

    status = parse_json(run_aimos("status", "--json"))
    assert status["master_fingerprint"] == fingerprint
    assert status["brain_id"] == bid
    assert status["keystore"]["kind"] == "file"


def test_install_creates_private_files_and_directories(aimos_home: Path) -> None:
    run_aimos("install", "--yes", "--no-guides", "--keystore", "file").ok()
    run_aimos("save", "one memory so every file exists").ok()
    brain = aimos_home / BRAIN
    assert mode(brain) == 0o600
    assert mode(aimos_home / "config" / "anchors.json") == 0o600
    keys = keystore_dir(aimos_home)
    directories = [aimos_home / "config", aimos_home / "logs", aimos_home / "state", keys.parent, keys]
    for directory in directories:
        assert directory.is_dir(), directory
        assert mode(directory) == 0o700, f"{directory} is {oct(mode(directory))}"
    key_files = sorted(keys.iterdir())
    names = {p.name for p in key_files}
    assert "master.key" in names
    assert any(n.startswith("housekeeper@") for n in names), names
    assert any(n.startswith("cli@") for n in names), names
    for path in key_files:
        assert mode(path) == 0o600, f"{path} is {oct(mode(path))}"
    for path in (aimos_home / "logs").iterdir():
        assert mode(path) == 0o600, f"{path} is {oct(mode(path))}"
    for path in aimos_home.rglob("*"):
        if path.is_file():
            assert mode(path) & 0o077 == 0, f"{path} is readable by others: {oct(mode(path))}"
        elif path.is_dir():
            assert mode(path) == 0o700, f"{path} is {oct(mode(path))}"


def test_install_auto_without_a_keychain_chooses_the_file_keystore_and_says_so(aimos_home: Path) -> None:
    result = run_aimos(
        "install",
        "--yes",
        "--keystore",
        "auto",
        unset=("DBUS_SESSION_BUS_ADDRESS", "GNOME_KEYRING_CONTROL", "PYTHON_KEYRING_BACKEND"),
    ).ok()
    assert re.search(r"^keystore: file keystore", result.out, re.MULTILINE), result.describe()
    assert parse_json(run_aimos("status", "--json"))["keystore"]["kind"] == "file"
    assert (keystore_dir(aimos_home) / "master.key").is_file()
    saved_id(run_aimos("save", "saved with the fallback keystore"))


# --- save / show / list ----------------------------------------------------------------------
def test_save_prints_only_the_id(installed: Path) -> None:
    result = run_aimos("save", "I prefer dark roast coffee", "--key", "preference:coffee")
    memory_id = saved_id(result)
    assert result.out == memory_id + "\n", f"stdout must carry only the id: {result.out!r}"
    shown = parse_json(run_aimos("show", memory_id, "--json"))
    assert shown["memory_id"] == memory_id
    assert shown["value"] == "I prefer dark roast coffee"
    assert shown["key"] == "preference:coffee"
    assert shown["weight"] == 1.0
    assert shown["epistemic_label"] == "unverified"
    assert [p["signer_agent_id"] for p in shown["provenance"]] == ["cli"]
    assert "memory_saved" in [e["operation"] for e in shown["events"]]


def test_save_from_stdin(installed: Path) -> None:
    memory_id = saved_id(run_aimos("save", input="text from a pipe\n"))
    assert parse_json(run_aimos("show", memory_id, "--json"))["value"].strip() == "text from a pipe"
    dash_id = saved_id(run_aimos("save", "-", input="another text from a pipe"))
    assert parse_json(run_aimos("show", dash_id, "--json"))["value"] == "another text from a pipe"
    listed = [m["memory_id"] for m in parse_json(run_aimos("list", "--json"))["memories"]]
    assert memory_id in listed and dash_id in listed


def test_json_outputs_parse(installed: Path) -> None:
    saved = parse_json(run_aimos("save", "a memory for json", "--json"))
    assert saved["status"] == "saved"
    assert UUID_RE.match(saved["memory_id"])
    assert HEX64_RE.match(saved["live_content_hash"])

    shown = parse_json(run_aimos("show", saved["memory_id"], "--json"))
    assert shown["memory_id"] == saved["memory_id"]
    assert shown["live_content_hash"] == saved["live_content_hash"]
    assert shown["save_mutation_hash"] == saved["save_mutation_hash"]

    listed = parse_json(run_aimos("list", "--json"))
    assert listed["total"] == 1 and listed["guides_hidden"] == 0 and listed["filters"] == {}
    assert [m["memory_id"] for m in listed["memories"]] == [saved["memory_id"]]

    status = parse_json(run_aimos("status", "--json"))
    assert status["counts"]["memories"] == 1
    assert status["keystore"]["kind"] == "file"
    assert HEX64_RE.match(status["master_fingerprint"])

    agents = parse_json(run_aimos("agent", "list", "--json"))
    by_id = {(a["agent_id"], a["role"]): a for a in agents}
    assert by_id[("cli", "agent")]["state"] == "active"
    assert by_id[("cli", "agent")]["grant"]["clearance_ceiling"] == 10
    assert by_id[("housekeeper", "housekeeper")]["state"] == "active"


def test_show_accepts_id_prefixes(installed: Path) -> None:
    memory_id = saved_id(run_aimos("save", "prefixes are enough"))
    for prefix in (memory_id[:4], memory_id[:8], memory_id[:13], memory_id.upper()[:8], memory_id):
        shown = parse_json(run_aimos("show", prefix, "--json"))
        assert shown["memory_id"] == memory_id, prefix
    plain = run_aimos("show", memory_id[:8]).ok()
    assert plain.out.startswith("prefixes are enough\n")
    assert memory_id in plain.out


def test_list_is_newest_first_and_respects_limit(installed: Path) -> None:
    ids = [saved_id(run_aimos("save", f"memory number {i}")) for i in range(3)]
    listed = [m["memory_id"] for m in parse_json(run_aimos("list", "--json"))["memories"]]
    assert listed == list(reversed(ids))
    two = parse_json(run_aimos("list", "--json", "--limit", "2"))
    assert [m["memory_id"] for m in two["memories"]] == listed[:2] and two["total"] == 3
    text = run_aimos("list").ok().out
    assert all(i[:8] in text for i in ids)


# --- correct ---------------------------------------------------------------------------------
def test_correct_makes_a_new_head_and_keeps_the_old_version(installed: Path) -> None:
    old_id = saved_id(run_aimos("save", "I prefer dark roast"))
    result = run_aimos("correct", old_id[:8], "I prefer medium roast now")
    new_id = saved_id(result)
    assert new_id != old_id

    old = parse_json(run_aimos("show", old_id, "--json"))
    assert old["value"] == "I prefer dark roast", "the old version must be kept as it was"
    assert old["version"]["state"] == "superseded"
    assert old["version"]["superseded_by"] == new_id
    new = parse_json(run_aimos("show", new_id, "--json"))
    assert new["version"]["state"] == "current"
    assert new["version"]["supersedes"] == old_id
    assert new["version"]["chain"] == [old_id, new_id]

    heads = [m["memory_id"] for m in parse_json(run_aimos("list", "--json"))["memories"]]
    assert heads == [new_id]
    history = [m["memory_id"] for m in parse_json(run_aimos("list", "--json", "--history"))["memories"]]
    assert sorted(history) == sorted([old_id, new_id])

    counts = table_counts(installed / BRAIN)
    assert counts["memories"] == 2

    # correcting the superseded version again is refused and points at the head
    again = run_aimos("correct", old_id, "yet another roast")
    assert_refused(again, 2, new_id)
    assert table_counts(installed / BRAIN) == counts


# --- duplicates --------------------------------------------------------------------------------
def test_duplicate_save_prints_the_same_id_and_records_an_occurrence(installed: Path) -> None:
    first = saved_id(run_aimos("save", "a thought worth keeping once"))
    before = table_counts(installed / BRAIN)
    second_run = run_aimos("save", "a thought worth keeping once")
    second = saved_id(second_run)
    assert second == first
    assert "occurrence" in second_run.err
    shown = parse_json(run_aimos("show", first, "--json"))
    assert len(shown["occurrences"]) == 1
    assert shown["occurrences"][0]["agent_id"] == "cli"
    after = table_counts(installed / BRAIN)
    assert after["memories"] == before["memories"], "a duplicate must not add a second row"
    assert after["memory_provenance"] == before["memory_provenance"]
    assert after["events"] == before["events"] + 1, "the occurrence is recorded in the ledger"
    assert after["request_nonces"] == before["request_nonces"] + 1
    as_json = parse_json(run_aimos("save", "a thought worth keeping once", "--json"))
    assert as_json["status"] == "duplicate" and as_json["memory_id"] == first
    assert len(parse_json(run_aimos("show", first, "--json"))["occurrences"]) == 2
