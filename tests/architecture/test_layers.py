"""The dependency direction of DESIGN.md, checked statically and in fresh subprocesses."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# package -> aimos packages it may import (besides itself, errors, exit_codes, paths and __init__)
ALLOWED: dict[str, set[str]] = {
    "crypto": set(),
    "store": {"crypto"},
    "identity": {"crypto", "store"},
    "ledger": {"crypto", "store", "identity"},
    "memory": {"crypto", "store", "identity", "ledger"},
    "verify": {"crypto"},
    "recall": {"crypto", "store", "identity", "ledger", "memory", "verify"},
    "learning": {"crypto", "store", "identity", "ledger", "memory", "recall", "verify"},
    "epistemic": {"crypto", "store", "identity", "ledger", "memory"},
    "housekeeper": {"actions", "crypto", "store", "identity", "ledger", "memory", "recall", "learning", "verify", "epistemic"},
    "actions": {"crypto", "store", "identity", "ledger", "memory", "recall", "learning", "verify", "epistemic"},
    "eval": {
        "actions",
        "crypto", "store", "identity", "ledger", "memory", "recall", "learning", "verify", "installer", "epistemic",
    },
    "tui": {"actions", 
        "crypto", "store", "identity", "ledger", "memory", "recall", "learning", "verify", "epistemic", "housekeeper",
        "eval",  # only its benchmark (aimos/tui/bench.py) builds a scratch brain with eval's builder
    },
    "mcp": {"actions", "crypto", "store", "identity", "ledger", "memory", "recall", "learning", "verify", "epistemic"},
    "cli": {"actions", 
        "crypto", "store", "identity", "ledger", "memory", "recall", "learning", "verify", "eval", "installer", "cli",
        "housekeeper", "epistemic", "purge", "tui", "mcp",
    },
}
COMMON = {"errors", "exit_codes", "paths", "vocabulary", ""}


def imported_aimos_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "aimos":
                found.add(parts[1] if len(parts) > 1 else "")
            elif parts[0] in ("installer", "purge"):
                found.add(parts[0])
    return found


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_packages_only_import_downwards(package: str) -> None:
    allowed = ALLOWED[package] | COMMON | {package}
    for module in sorted((ROOT / "aimos" / package).rglob("*.py")):
        bad = imported_aimos_packages(module) - allowed
        assert not bad, f"{module.relative_to(ROOT)} imports {sorted(bad)}"


def test_nothing_in_aimos_imports_purge() -> None:
    """Only the CLI's purge command reaches the ceremony (a lazy import); nothing else may."""
    importers = {
        module.relative_to(ROOT).as_posix()
        for module in (ROOT / "aimos").rglob("*.py")
        if "purge" in imported_aimos_packages(module)
    }
    assert importers == {"aimos/cli/purge_cmds.py"}, importers


def test_the_purge_command_imports_the_ceremony_lazily() -> None:
    loaded = modules_after("import aimos.cli.app, aimos.cli.purge_cmds")
    assert not any(m == "purge" or m.startswith("purge.") for m in loaded)
    loaded = modules_after("import aimos.housekeeper.scheduler, aimos.recall.pipeline, aimos.epistemic.chain")
    assert not any(m == "purge" or m.startswith("purge.") for m in loaded)


def modules_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return set(out.stdout.split())


def test_runtime_does_not_load_installer_purge_or_textual() -> None:
    loaded = modules_after("import aimos.memory.save, aimos.identity.agents, aimos.ledger.events")
    for forbidden in ("purge", "installer", "textual", "apscheduler", "typer"):
        assert forbidden not in loaded, forbidden


def test_importing_aimos_does_not_import_textual() -> None:
    """Textual is the TUI's alone: the package, the runtime, the CLI and every layer but tui load
    without it; the TUI app loads it."""
    every_layer = ", ".join(
        f"aimos.{p}" for p in sorted(ALLOWED) if p != "tui" and (ROOT / "aimos" / p / "__init__.py").exists()
    )
    for statement in ("import aimos", f"import {every_layer}", "import aimos.cli.app, aimos.cli.tui_cmd"):
        loaded = modules_after(statement)
        assert not any(m == "textual" or m.startswith("textual.") for m in loaded), statement
    assert "textual" in modules_after("import aimos.tui.app")


def test_only_the_tui_imports_textual() -> None:
    importers = set()
    for module in (ROOT / "aimos").rglob("*.py"):
        tree = ast.parse(module.read_text("utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            )
            if any(n == "textual" or n.startswith("textual.") for n in names):
                importers.add(module.relative_to(ROOT).parts[1])
    assert importers == {"tui"}, importers


def test_only_aimos_mcp_server_imports_the_mcp_sdk() -> None:
    """The SDK (and the pydantic, anyio and HTTP stack under it) loads only when `aimos mcp` serves."""
    importers = set()
    for module in (ROOT / "aimos").rglob("*.py"):
        for node in ast.walk(ast.parse(module.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            if any(n == "mcp" or n.startswith("mcp.") or n.startswith("mcp_types") for n in names):
                importers.add(module.relative_to(ROOT).as_posix())
    assert importers == {"aimos/mcp/server.py"}, importers
    for statement in ("import aimos.cli.app, aimos.cli.mcp_cmds, aimos.mcp.config", "import aimos.tui.app"):
        loaded = modules_after(statement)
        assert not {"mcp", "mcp_types", "pydantic", "starlette", "uvicorn"} & loaded, statement
    assert "mcp" in modules_after("import aimos.mcp.server")


def test_cli_help_path_stays_light() -> None:
    loaded = modules_after("import aimos.cli.app")
    for heavy in ("apsw", "nacl", "textual", "apscheduler", "installer", "purge", "keyring"):
        assert heavy not in loaded, heavy


def test_portable_verifier_loads_no_store() -> None:
    loaded = modules_after("import aimos.verify.receipt")
    for io_module in ("apsw", "keyring", "aimos.store", "aimos.identity", "aimos.recall"):
        assert io_module not in loaded, io_module


def test_crypto_kernel_has_no_io_dependencies() -> None:
    loaded = modules_after("import aimos.crypto.commitments, aimos.crypto.certs, aimos.crypto.merkle")
    for io_module in ("apsw", "keyring", "aimos.store", "aimos.identity"):
        assert io_module not in loaded, io_module


def test_installer_module_is_aimos_own() -> None:
    out = subprocess.run(
        [sys.executable, "-c", "import installer, installer.setup; print(installer.__file__)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(out.stdout.strip()).resolve() == (ROOT / "installer" / "__init__.py").resolve()
