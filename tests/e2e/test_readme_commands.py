"""The README's commands, run as a newcomer runs them: its quickstart line in a fresh home with no
OS keychain (no D-Bus session, no aimos variables), then its "Everyday use" block in the same
shell state, each line a real `bash -c` of the `aimos` this environment installed.

The quickstart's first step (a venv in the checkout and `pip install -e .`) is what `.ci/run` and
this environment already did; the test checks that step is the one it leaves out and runs the rest
word for word. The MCP section is followed by tests/mcp/test_mcp_readme.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(300)
README = Path(__file__).resolve().parents[2] / "README.md"
VENV_STEP = 'python3 -m venv .venv && .venv/bin/pip install -q -e . && export PATH="$PWD/.venv/bin:$PATH" && '
INTERACTIVE = {"aimos tui"}  # a full-screen app: tests/tui drives it with Textual's pilot


def sh_block(text: str) -> list[str]:
    block = re.search(r"^```sh\n(.*?)^```", text, re.M | re.S)
    assert block, "no sh block"
    return [line.strip() for line in block.group(1).splitlines() if line.strip()]


def section(title: str) -> str:
    text = README.read_text("utf-8")
    assert f"\n## {title}\n" in text, f"the README has no section {title!r}"
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def newcomer(home: Path) -> dict[str, str]:
    """A shell in a fresh home on a machine with no OS keychain, `aimos` on PATH as the
    quickstart's venv puts it (AIMOS_SERVICE=none, the suite's own, keeps the housekeeper off)."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("AIMOS_", "XDG_", "DBUS_", "GNOME_KEYRING"))
    }
    env |= {"HOME": str(home), "AIMOS_SERVICE": "none"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def bash(command: str, env: dict[str, str], home: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, env=env, cwd=home, timeout=240, check=False
    )
    assert done.returncode == 0, f"{command}\nexit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    return done


def test_the_quickstart_then_everyday_use_in_a_fresh_home_without_a_keychain(tmp_path: Path) -> None:
    home = tmp_path / "newcomer"
    home.mkdir(mode=0o700)
    env = newcomer(home)
    opening = README.read_text("utf-8").split("\n## ", 1)[0]
    (quickstart,) = sh_block(opening)
    assert quickstart.startswith(VENV_STEP), "the quickstart's first step changed: update VENV_STEP"

    done = bash(quickstart.removeprefix(VENV_STEP), env, home)
    assert "keystore: file keystore" in done.stdout  # --keystore auto, with no OS keychain to use
    assert re.search(r"^1 +[0-9a-f]{8} .*Northside Heating", done.stdout, re.M), done.stdout
    assert (home / ".aimos-passphrase").stat().st_mode & 0o777 == 0o600
    assert (home / ".local" / "share" / "aimos" / "brain.sqlite3").is_file()  # where the README says

    env["AIMOS_PASSPHRASE_FILE"] = str(home / ".aimos-passphrase")  # the quickstart's export
    (home / "Notes").mkdir()
    (home / "Notes" / "bike.md").write_text(
        "---\ntitle: Bike\n---\nThe bike lock code is on the garage calendar.\n"
    )
    memory_id = ""
    ran = []
    for line in sh_block(section("Everyday use")):
        command = line.split("  #", 1)[0].strip()
        if command in INTERACTIVE:
            continue
        if "ID" in command.split():
            assert memory_id, f"{command}: no memory saved before it"
            command = re.sub(r"\bID\b", memory_id, command)
        done = bash(command, env, home)
        ran.append(command)
        if command.startswith("aimos save") and not memory_id:
            memory_id = done.stdout.strip()
            assert re.fullmatch(r"[0-9a-f-]{36}", memory_id), done.stdout
    assert any(c.startswith("aimos import") for c in ran) and any(c.startswith("aimos verify") for c in ran)
    assert (home / "memories.jsonl").stat().st_mode & 0o777 == 0o600
    assert "bike lock code" in (home / "memories.jsonl").read_text("utf-8")
