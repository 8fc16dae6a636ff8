"""The dependency direction of ARCHITECTURE.md ("Layers"), checked statically and in fresh
subprocesses: the layer map is read from the doc, every package must be in it, no module imports a
package its layer may not, no import circle between modules, no module over the size limit."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 900

# Modules allowed over MAX_LINES while they are being split (empty: none is).
OVERSIZE: set[str] = set()

MAX_FUNCTION_LINES = 120


def read_layers() -> tuple[dict[str, set[str]], set[str]]:
    """(package -> the packages it may import, the common modules) from ARCHITECTURE.md's
    "Layers" section: its ```layers block, one `package: a, b, c` a line, `#` comments."""
    doc = (ROOT / "ARCHITECTURE.md").read_text("utf-8")
    section = re.search(r"^## Layers\n(.*?)(?=^## )", doc, re.S | re.M)
    assert section, "ARCHITECTURE.md has no '## Layers' section"
    block = re.search(r"^```layers\n(.*?)^```", section.group(1), re.S | re.M)
    assert block, "ARCHITECTURE.md's Layers section has no ```layers block"
    allowed: dict[str, set[str]] = {}
    for raw in block.group(1).splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, rest = line.partition(":")
        assert sep and name.strip() not in allowed, f"bad or repeated line in the layers block: {raw!r}"
        allowed[name.strip()] = {p.strip() for p in rest.split(",") if p.strip()}
    common = allowed.pop("common", None)
    assert common, "the layers block has no `common:` line"
    return allowed, common


ALLOWED, COMMON = read_layers()


def module_files() -> Iterator[Path]:
    yield from sorted((ROOT / "aimos").rglob("*.py"))


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in module_files()}


def package_of(module: str) -> str | None:
    """The unit of the layer map a module belongs to: `aimos.X...` -> X (a folder or a top-level
    module), or X.Y where the block places the folder X/Y as a layer of its own (the longest such
    unit); `aimos` (its face) -> ""; None outside."""
    parts = module.split(".")
    if parts[0] != "aimos":
        return None
    if len(parts) == 1:
        return ""
    for length in range(len(parts) - 1, 1, -1):
        unit = ".".join(parts[1 : length + 1])
        if unit in ALLOWED:
            return unit
    return parts[1]


def _known(name: str) -> str | None:
    """The module of ours that importing ``name`` names: itself, or its longest known prefix."""
    parts = name.split(".")
    while parts:
        if ".".join(parts) in MODULES:
            return ".".join(parts)
        parts.pop()
    return None


def imported_modules(path: Path) -> set[str]:
    """Every module of aimos/ that ``path`` imports anywhere: at the top,
    under `if TYPE_CHECKING:`, inside a function. `from a import b` names a.b when b is a module."""
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")
                up = up[: len(up) - (node.level - 1)]
                base = ".".join([*up, base] if base else up)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                targets.append(sub if sub in MODULES else base)
        for target in targets:
            known = _known(target)
            if known is not None and known != me:
                found.add(known)
    return found


def imported_aimos_packages(path: Path) -> set[str]:
    return {p for p in (package_of(m) for m in imported_modules(path)) if p is not None}


def packages_on_disk() -> dict[str, list[Path]]:
    """Each unit of the layer map that exists: its .py files."""
    units: dict[str, list[Path]] = {}
    for module, path in MODULES.items():
        unit = package_of(module)
        if unit:
            units.setdefault(unit, []).append(path)
    return units


UNITS = packages_on_disk()


def test_the_layers_block_is_read() -> None:
    assert {"crypto", "store", "verify", "verify.chains", "verify.brain", "cli", "installer", "purge"} <= set(
        ALLOWED
    )
    assert {
        "errors",
        "exit_codes",
        "locks",
        "paths",
        "plural",
        "terminal",
        "textfold",
        "vocabulary",
    } == COMMON


def test_every_package_is_placed_in_a_layer() -> None:
    unplaced = sorted(set(UNITS) - set(ALLOWED) - COMMON)
    assert not unplaced, f"{unplaced} in no layer: add a line for each to the layers block of ARCHITECTURE.md"


def test_every_layer_names_packages_that_exist() -> None:
    named = set(ALLOWED) | COMMON | {p for allowed in ALLOWED.values() for p in allowed}
    assert not sorted(named - set(UNITS)), "the layers block names packages that do not exist"


def test_the_layer_map_has_no_circle() -> None:
    cycle = find_cycle({p: ALLOWED[p] & set(ALLOWED) for p in ALLOWED})
    assert cycle is None, "the layers block lets packages import each other: " + " -> ".join(cycle or [])


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_packages_only_import_downwards(package: str) -> None:
    allowed = ALLOWED[package] | COMMON | {package, ""}
    for module in UNITS[package]:
        bad = imported_aimos_packages(module) - allowed
        assert not bad, f"{module.relative_to(ROOT)} imports {sorted(bad)}"


@pytest.mark.parametrize("module", sorted(COMMON))
def test_common_modules_import_only_each_other(module: str) -> None:
    for path in UNITS[module]:
        bad = imported_aimos_packages(path) - COMMON - {""}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_vocabulary_imports_nothing_of_aimos() -> None:
    assert imported_modules(ROOT / "aimos" / "vocabulary.py") == set()


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of ``graph`` as a path that ends where it starts, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_find_cycle_names_the_circle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]


def test_no_import_circle_between_modules() -> None:
    """A circle is a circle for the reader: imports under TYPE_CHECKING and inside functions count."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(MODULES)))
    graph = {name: imported_modules(path) for name, path in MODULES.items()}
    cycle = find_cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_no_module_over_the_size_limit() -> None:
    sizes = {
        path.relative_to(ROOT).as_posix(): len(path.read_text("utf-8").splitlines())
        for path in MODULES.values()
    }
    over = sorted(p for p, n in sizes.items() if n > MAX_LINES and p not in OVERSIZE)
    assert not over, f"over {MAX_LINES} lines: " + ", ".join(f"{p} ({sizes[p]})" for p in over)
    done = sorted(p for p in OVERSIZE if sizes.get(p, 0) <= MAX_LINES)
    assert not done, f"no longer over {MAX_LINES} lines (or gone): take them out of OVERSIZE: {done}"


def function_lengths() -> dict[str, int]:
    """`path:name` -> lines, of every function and method of aimos/ (a nested one on its own)."""
    lengths: dict[str, int] = {}
    for path in MODULES.values():
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno:
                key = f"{rel}:{node.name}"
                lengths[key] = max(lengths.get(key, 0), node.end_lineno - node.lineno + 1)
    return lengths


def test_no_function_over_the_length_limit() -> None:
    """A procedure longer than a screenful is cut into named steps."""
    lengths = function_lengths()
    over = sorted(f for f, n in lengths.items() if n > MAX_FUNCTION_LINES)
    assert not over, f"over {MAX_FUNCTION_LINES} lines: " + ", ".join(f"{f} ({lengths[f]})" for f in over)


def test_nothing_in_aimos_imports_purge() -> None:
    """Only the CLI's purge command reaches the ceremony (a lazy import); nothing else outside
    aimos/purge/ may."""
    importers = {
        module.relative_to(ROOT).as_posix()
        for module in (ROOT / "aimos").rglob("*.py")
        if "purge" in imported_aimos_packages(module) and package_of(module_name(module)) != "purge"
    }
    assert importers == {"aimos/cli/purge_cmds.py"}, importers


def test_the_purge_command_imports_the_ceremony_lazily() -> None:
    assert not loads(modules_after("import aimos.cli.app, aimos.cli.purge_cmds"), "aimos.purge")
    loaded = modules_after("import aimos.housekeeper.scheduler, aimos.recall.pipeline, aimos.epistemic.chain")
    assert not loads(loaded, "aimos.purge")


def modules_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return set(out.stdout.split())


def loads(loaded: set[str], package: str) -> bool:
    """Whether ``package`` or any module under it is among the ``loaded`` modules."""
    return any(m == package or m.startswith(package + ".") for m in loaded)


def test_runtime_does_not_load_installer_purge_or_textual() -> None:
    loaded = modules_after("import aimos.memory.save, aimos.identity.agents, aimos.ledger.events")
    for forbidden in ("aimos.purge", "aimos.installer", "textual", "apscheduler", "typer"):
        assert not loads(loaded, forbidden), forbidden


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
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else ([node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            )
            if any(n == "textual" or n.startswith("textual.") for n in names):
                importers.add(module.relative_to(ROOT).parts[1])
    assert importers == {"tui"}, importers


def absolute_imports(tree: ast.AST) -> Iterator[tuple[ast.stmt, list[str]]]:
    """Each absolute import statement of ``tree`` (at any depth) and the module names it names."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node, [node.module]
        elif isinstance(node, ast.Import):
            yield node, [a.name for a in node.names]


def test_only_aimos_mcp_server_imports_the_mcp_sdk() -> None:
    """The SDK (and the pydantic, anyio and HTTP stack under it) loads only when `aimos mcp` serves."""
    importers = set()
    for module in (ROOT / "aimos").rglob("*.py"):
        for _, names in absolute_imports(ast.parse(module.read_text("utf-8"))):
            if any(n == "mcp" or n.startswith("mcp.") or n.startswith("mcp_types") for n in names):
                importers.add(module.relative_to(ROOT).as_posix())
    assert importers == {"aimos/mcp/server.py"}, importers
    for statement in ("import aimos.cli.app, aimos.cli.mcp_cmds, aimos.mcp.config", "import aimos.tui.app"):
        loaded = modules_after(statement)
        assert not {"mcp", "mcp_types", "pydantic", "starlette", "uvicorn"} & loaded, statement
    assert "mcp" in modules_after("import aimos.mcp.server")


def test_only_the_nli_judge_imports_its_runtime_and_only_when_asked() -> None:
    """onnxruntime and tokenizers (the extra aimos[nli]) are imported by aimos/epistemic/nli.py
    alone, inside a function: the detector, the recall pipeline and the CLI load neither (the
    judge loads them when it is on and the detector first asks it; the detector imports the judge's
    module only when it judges)."""
    runtime = ("onnxruntime", "tokenizers", "onnx")
    importers = set()
    for module in (ROOT / "aimos").rglob("*.py"):
        tree = ast.parse(module.read_text("utf-8"))
        top_level = {id(n) for n in tree.body}
        for node, names in absolute_imports(tree):
            if any(n.split(".")[0] in runtime for n in names):
                importers.add(module.relative_to(ROOT).as_posix())
                assert id(node) not in top_level, f"{module}: {names} imported at module level"
    assert importers == {"aimos/epistemic/nli.py"}, importers
    loaded = modules_after(
        "import aimos.epistemic.detect, aimos.epistemic.nli, aimos.recall.pipeline, aimos.cli.model_cmds"
    )
    assert "aimos.epistemic.nli" in loaded
    assert not any(loads(loaded, r) for r in runtime), sorted(m for m in loaded if m.split(".")[0] in runtime)


def test_only_the_store_imports_psycopg_and_only_when_it_syncs() -> None:
    """psycopg (the extra aimos[hub]) is imported by aimos/store/postgres.py alone, inside a function:
    aimos without a hub installs and runs as before, and a save, a recall or the housekeeper's
    scheduler never load it (the sync job imports the hub when it runs)."""
    importers = set()
    for module in (ROOT / "aimos").rglob("*.py"):
        tree = ast.parse(module.read_text("utf-8"))
        top_level = {id(n) for n in tree.body}
        for node, names in absolute_imports(tree):
            if any(n.split(".")[0] in ("psycopg", "psycopg_binary") for n in names):
                importers.add(module.relative_to(ROOT).as_posix())
                assert id(node) not in top_level, f"{module}: {names} imported at module level"
    assert importers == {"aimos/store/postgres.py"}, importers
    loaded = modules_after(
        "import aimos.actions.memory, aimos.actions.recall, aimos.actions.feedback, aimos.housekeeper.scheduler"
    )
    assert not loads(loaded, "psycopg") and not loads(loaded, "aimos.hub"), sorted(
        m for m in loaded if m.startswith(("psycopg", "aimos.hub"))
    )
    assert loads(modules_after("import aimos.store.postgres; aimos.store.postgres._psycopg()"), "psycopg")


def test_cli_help_path_stays_light() -> None:
    loaded = modules_after("import aimos.cli.app")
    heavy_ones = (
        "apsw",
        "nacl",
        "textual",
        "apscheduler",
        "aimos.installer",
        "aimos.purge",
        "keyring",
        "detect_secrets",
        "numpy",
        "aimos.meaning",
    )
    for heavy in heavy_ones:
        assert not loads(loaded, heavy), heavy


def test_detect_secrets_loads_only_for_a_text_that_could_hold_a_token() -> None:
    """detect-secrets (with requests and yaml under it: ~0.2 s to import) is imported by the
    secret gate alone, inside a function, and only for a text with a word long enough to be a
    token that holds a piece of one of its patterns (secret_shapes._LIBRARY_MAY_MATCH): the
    writers, the help path and a prose save or query never pay for it. Its verify() (the one
    network call in the library) is never called: tests/e2e/test_no_network.py."""
    importers = set()
    for module in (ROOT / "aimos").rglob("*.py"):
        tree = ast.parse(module.read_text("utf-8"))
        top_level = {id(n) for n in tree.body}
        for node in ast.walk(tree):
            text = ast.unparse(node) if isinstance(node, ast.Import | ast.ImportFrom | ast.Call) else ""
            if "detect_secrets" in text:
                importers.add(module.relative_to(ROOT).as_posix())
                assert id(node) not in top_level, f"{module}: detect_secrets imported at module level"
    assert importers == {"aimos/memory/secret_shapes.py"}, importers
    prose = "from aimos.memory.gates import find_secret; find_secret('my wifi password is BlueDog77 ok')"
    loaded = modules_after(f"import aimos.memory.save, aimos.recall.pipeline; {prose}")
    assert "detect_secrets" not in loaded and "requests" not in loaded
    # a long word alone does not load it (a path, a URL, a hash); one that could be a token does
    long_word = "from aimos.memory.gates import find_secret; find_secret('x' * 40)"
    assert "detect_secrets" not in modules_after(long_word)
    token = "from aimos.memory.gates import find_secret; find_secret('AKIA' + 'x' * 36)"
    assert "detect_secrets" in modules_after(token)


def test_portable_verifier_loads_no_store() -> None:
    loaded = modules_after("import aimos.verify.receipt")
    for io_module in ("apsw", "keyring", "aimos.store", "aimos.identity", "aimos.recall"):
        assert io_module not in loaded, io_module


def test_crypto_kernel_has_no_io_dependencies() -> None:
    loaded = modules_after("import aimos.crypto.commitments, aimos.crypto.certs, aimos.crypto.merkle")
    for io_module in ("apsw", "keyring", "aimos.store", "aimos.identity"):
        assert io_module not in loaded, io_module


def test_installer_and_purge_live_inside_aimos() -> None:
    """No import root but `aimos`: a top-level `installer` would clash with PyPA's package of that
    name (tests/packaging/test_beside_pypa_installer.py installs the two side by side)."""
    assert not (ROOT / "installer").exists() and not (ROOT / "purge").exists()
    code = (
        "import aimos.installer.setup as s, aimos.purge.ceremony as c; print(s.__file__); print(c.__file__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    found = [Path(line).resolve() for line in out.stdout.split()]
    assert found == [ROOT / "aimos" / "installer" / "setup.py", ROOT / "aimos" / "purge" / "ceremony.py"]
