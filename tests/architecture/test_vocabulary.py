"""One vocabulary: every protocol word is defined in aimos/vocabulary.py and nowhere else.

A schema string, domain, request path, label, data class or the housekeeper's name written as a
literal anywhere else in aimos/ (its installer and purge too) fails here, and so does one spelled inside
SQL text (SQL takes them from `vocabulary.sql_word(s)` or as bound parameters). The landed
migrations cannot change, so their CHECK lists are held equal to the vocabulary's tuples instead.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from aimos import vocabulary
from aimos.store.schema import migrated_in_memory

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "aimos"]


def protocol_words() -> dict[str, str]:
    """word -> the vocabulary name that defines it (words distinctive enough to search for:
    generic English such as the judgments' verbs or the role "agent" are left out)."""
    words: dict[str, str] = {}
    for name, value in vars(vocabulary).items():
        if not name.isupper():
            continue
        if isinstance(value, bytes):
            words.setdefault(value.rstrip(b"\x00").decode("utf-8"), name)
        elif isinstance(value, str) and (
            name.endswith(("_SCHEMA", "_VERSION", "_PROFILE", "_OPERATION", "_EVENT", "_KIND"))
            or name.startswith("PATH_")
        ):
            words.setdefault(value, name)
    for group in ("LABELS", "DATA_CLASSES", "RESERVED_AGENT_IDS", "OPERATIONS", "EVENT_TYPES"):
        for word in getattr(vocabulary, group):
            words.setdefault(word, group)
    words.setdefault(vocabulary.MASTER_ISSUER, "MASTER_ISSUER")
    return words


def python_files() -> list[Path]:
    files = [p for base in SOURCES for p in sorted(base.rglob("*.py"))]
    return [p for p in files if p != ROOT / "aimos" / "vocabulary.py"]


SQL_HINT = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|WHERE|CREATE)\b")


def _field_names(tree: ast.AST) -> set[int]:
    """ids of the constants used as a field name of a JSON object (a dict key, a subscript or
    `.get`'s first argument): a document's key "housekeeper" is a field, not the word."""
    names: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            names.update(id(k) for k in node.keys if k is not None)
        elif isinstance(node, ast.Subscript):
            names.add(id(node.slice))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            names.update(id(a) for a in node.args[:1])
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            # a collection bound to a name ending in _FIELDS holds a document's field names
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id.endswith("_FIELDS") for t in targets):
                names.update(id(c) for c in ast.walk(node.value) if isinstance(c, ast.Constant))
    return names


def stray_words(path: Path, words: dict[str, str]) -> list[str]:
    found: list[str] = []
    tree = ast.parse(path.read_text("utf-8"))
    fields = _field_names(tree)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or id(node) in fields:
            continue
        text = node.value
        if text in words:
            found.append(f"line {node.lineno}: {text!r} is vocabulary.{words[text]}")
        elif SQL_HINT.search(text):
            found += [
                f"line {node.lineno}: SQL spells '{w}' (vocabulary.{words[w]}; use sql_word or a parameter)"
                for w in words
                if f"'{w}'" in text
            ]
    return found


def test_no_protocol_word_is_written_outside_the_vocabulary() -> None:
    words = protocol_words()
    problems = []
    for path in python_files():
        rel = path.relative_to(ROOT).as_posix()
        problems += [f"{rel} {p}" for p in stray_words(path, words)]
    assert not problems, "protocol words outside aimos/vocabulary.py:\n" + "\n".join(problems)


def test_the_check_finds_a_stray_word(tmp_path: Path) -> None:
    """The scan itself can fail: a schema string, a label, an SQL-spelled role, an operation word
    and an SQL-spelled event type are all found; field names (a _FIELDS set among them) are not."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        'SCHEMA = "aimos.recall-receipt/v1"\n'
        'LABEL = "poison_likely"\n'
        "SQL = \"SELECT 1 FROM identity_epochs WHERE agent_id = 'housekeeper'\"\n"
        'FINE = "a sentence that mentions the housekeeper"\n'
        'FIELD = document.get("housekeeper") or document["housekeeper"]\n'
        'event = append_event(conn, signer, operation="memory_saved")\n'
        'BUNDLE_FIELDS = frozenset({"recall_receipt", "request"})\n'
        "Q = \"SELECT 1 FROM memory_provenance WHERE event_type = 'REWEIGHT'\"\n",
        "utf-8",
    )
    found = stray_words(sample, protocol_words())
    assert sorted(f.split(":")[0] for f in found) == ["line 1", "line 2", "line 3", "line 6", "line 8"], found


def test_the_vocabulary_imports_nothing_of_aimos() -> None:
    tree = ast.parse((ROOT / "aimos" / "vocabulary.py").read_text("utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.module == "__future__" or not (node.module or "").startswith("aimos"), node.module
            assert node.module in ("__future__", "typing"), f"vocabulary.py imports {node.module}"
        assert not isinstance(node, ast.Import), "vocabulary.py imports a module"


def _check_lists(column: str) -> list[set[str]]:
    conn = migrated_in_memory()
    try:
        sqls = [str(r[0]) for r in conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL")]
    finally:
        conn.close()
    pattern = re.compile(rf"\b{column}\s+IN\s*\(([^)]*)\)", re.IGNORECASE)
    return [
        {w.strip().strip("'") for w in m.group(1).split(",")} for sql in sqls for m in pattern.finditer(sql)
    ]


@pytest.mark.parametrize(
    ("column", "expected"),
    [
        ("data_class", set(vocabulary.DATA_CLASSES)),
        ("data_class_ceiling", set(vocabulary.DATA_CLASSES)),
        ("label", set(vocabulary.LABELS)),
        ("role", set(vocabulary.ROLES)),
    ],
)
def test_the_schema_checks_hold_the_vocabulary(column: str, expected: set[str]) -> None:
    """The CHECK lists the migrations spelled out are the vocabulary's words, all of them."""
    lists = _check_lists(column)
    assert lists, f"no CHECK list for {column} found in the migrated schema"
    for words in lists:
        assert words == expected, f"{column}: {sorted(words)} != {sorted(expected)}"


def test_the_domains_are_distinct_and_null_terminated() -> None:
    values = list(vocabulary.DOMAINS.values())
    assert len(set(values)) == len(values)
    assert all(v.endswith(b"\x00") and v.count(b"\x00") == 1 for v in values)
    assert vocabulary.JUDGED == {label: j for j, (label, _c) in vocabulary.JUDGMENTS.items()}
    assert set(vocabulary.TRUST_RAISING_LABELS) <= set(vocabulary.LABELS)
    assert vocabulary.CLASSIFIER_LABELS <= set(vocabulary.LABELS)
    assert vocabulary.sql_words(("a", "b'c")) == "'a', 'b''c'"


def test_every_operation_event_and_domain_is_in_its_group() -> None:
    """OPERATIONS, EVENT_TYPES and DOMAINS gather their words by name: each `*_OPERATION`,
    `*_EVENT` and bytes constant of the module is in its group, wherever in the module it is
    written (a word written below a group gathered mid-module would be missing)."""
    groups: list[tuple[str, type, set[object]]] = [
        ("_OPERATION", str, set(vocabulary.OPERATIONS)),
        ("_EVENT", str, set(vocabulary.EVENT_TYPES)),
        ("", bytes, set(vocabulary.DOMAINS.values())),
    ]
    missing = [
        f"{name} = {value!r}"
        for suffix, kind, group in groups
        for name, value in vars(vocabulary).items()
        if name.isupper() and name.endswith(suffix) and isinstance(value, kind) and value not in group
    ]
    assert not missing, "vocabulary words missing from their group:\n" + "\n".join(missing)
    assert len(set(vocabulary.OPERATIONS)) == len(vocabulary.OPERATIONS)
    assert set(vocabulary.EVENT_TYPES) == {"SAVE_REASSERT", "REWEIGHT", "VALENCE", "REVOKE_AGENT_IDENTITY"}


def test_operation_and_event_words_keep_their_names() -> None:
    """One name for each operation and event word: none is imported from the vocabulary under
    another name (`RECALL_RECEIPT_OPERATION as RECALL_OPERATION` made two)."""
    renamed = []
    for path in python_files():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "aimos.vocabulary":
                renamed += [
                    f"{path.relative_to(ROOT).as_posix()} line {node.lineno}: {a.name} as {a.asname}"
                    for a in node.names
                    if a.asname and a.asname != a.name and a.name.endswith(("_OPERATION", "_EVENT"))
                ]
    assert not renamed, renamed
