"""The store is the only part of aimos that speaks to the database engines (ARCHITECTURE.md,
"Layers"): apsw is imported under aimos/store/ alone, and SQL text and `.execute` calls stand only
there; every other package calls the store's query functions (aimos/store/queries/) and meets the
engines' errors as aimos errors."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# SQL as statements are written: a clause keyword (upper case, as aimos writes SQL) followed by
# what only SQL puts after it. Docstrings are prose and are not read.
SQL = re.compile(
    r"\b(SELECT\s[\s\S]*\bFROM\b|INSERT\s+(OR\s+\w+\s+)?INTO\b|UPDATE\s+\w+\s+SET\b|DELETE\s+FROM\b"
    r"|CREATE\s+(TEMP\s+|TEMPORARY\s+|UNIQUE\s+|VIRTUAL\s+)?(TABLE|INDEX|TRIGGER|VIEW)\b|PRAGMA\s+\w+"
    r"|WHERE\s+[\w.]+\s*(=|IN\b|IS\b|<|>|LIKE\b|BETWEEN\b)|\bJOIN\s+\w+(\s+\w+)?\s+ON\b"
    r"|^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b|ORDER\s+BY\b|GROUP\s+BY\b)"
)


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        kinds = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        if isinstance(node, kinds) and node.body and isinstance(node.body[0], ast.Expr):
            if isinstance(node.body[0].value, ast.Constant):
                found.add(id(node.body[0].value))
    return found


def engine_uses(source: str) -> list[str]:
    """What in ``source`` speaks to a database engine: an apsw import, SQL text, an `.execute`
    or `.executemany` call; each as `line N: what`."""
    tree = ast.parse(source)
    prose = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):  # an f-string is read whole, each field as a name
            prose.update(id(part) for part in node.values)
            text = "".join(str(p.value) if isinstance(p, ast.Constant) else "x" for p in node.values)
            if SQL.search(str(text)):
                found.append(f"line {node.lineno}: SQL {str(text).strip()[:50]!r}")
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "apsw" for a in node.names):
            found.append(f"line {node.lineno}: import apsw")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "apsw":
            found.append(f"line {node.lineno}: from apsw import")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            if SQL.search(node.value):
                found.append(f"line {node.lineno}: SQL {node.value.strip()[:50]!r}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("execute", "executemany", "executescript"):
                found.append(f"line {node.lineno}: .{node.func.attr}(...)")
    return found


def outside_the_store() -> dict[str, list[str]]:
    found = {}
    for path in sorted((ROOT / "aimos").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("aimos/store/"):
            continue
        uses = engine_uses(path.read_text("utf-8"))
        if uses:
            found[rel] = uses
    return found


def test_only_the_store_speaks_to_the_engines() -> None:
    found = {rel: uses[:3] for rel, uses in outside_the_store().items()}
    assert not found, f"SQL, apsw or .execute outside aimos/store/ (move it to aimos/store/queries/): {found}"


@pytest.mark.parametrize(
    "source",
    [
        "import apsw\n",
        "from apsw import Connection\n",
        "Q = 'SELECT memory_id FROM memories WHERE memory_id = ?'\n",
        "def f(c, t):\n    return f'UPDATE {t} SET x = 1'\n",
        "def f(c):\n    c.execute(q)\n",
        "Q = '''INSERT OR IGNORE INTO seals (a) VALUES (?)'''\n",
        "Q = 'PRAGMA user_version'\n",
    ],
)
def test_the_scan_finds_each_kind(source: str) -> None:
    assert engine_uses(source), source


@pytest.mark.parametrize(
    "source",
    [
        '"""Select the newest memory from the brain where it is kept."""\n',
        "MESSAGE = 'the brain is busy: update it later from this device'\n",
        "def f():\n    '''SELECT * FROM x WHERE a = 1 in prose'''\n",
    ],
)
def test_the_scan_leaves_prose_alone(source: str) -> None:
    assert not engine_uses(source), source
