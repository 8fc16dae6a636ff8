"""The verifier kit's names are loaded from their modules when first asked for (PEP 562): each is
the very object its module defines, as the imports under TYPE_CHECKING say, and importing the kit
alone loads none of its parts (the store's SQL functions need only inheritance, judgment and
redaction)."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import aimos.verify.kit as kit

ROOT = Path(__file__).resolve().parents[2]


def _declared() -> dict[str, str]:
    """name -> the kit module the package's TYPE_CHECKING imports take it from."""
    tree = ast.parse(Path(kit.__file__).read_text("utf-8"))
    return {
        alias.asname or alias.name: node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("aimos.verify.kit.")
        for alias in node.names
    }


def test_every_name_is_its_modules_own() -> None:
    declared = _declared()
    assert sorted(declared) == sorted(kit.__all__)
    for name, module in declared.items():
        assert getattr(kit, name) is getattr(importlib.import_module(module), name), name


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        kit.no_such_name  # noqa: B018


def test_importing_the_kit_loads_none_of_its_parts() -> None:
    code = "import sys, aimos.verify.kit.inheritance; print(sorted(m for m in sys.modules if m.startswith('aimos.verify.kit')))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['aimos.verify.kit', 'aimos.verify.kit.inheritance']"
