"""Helpers shared by the attack tests (imported as a plain module, like aimos_cli_support)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import apsw

from support.cli import (
    BRAIN,
    PASSPHRASE_ENV,
    UUID_RE,
    Result,
    run_aimos,
    sqlite,
    sqlite_value,
)

VERIFICATION_FAILED = 4
INTEGRITY = 5


def save(text: str, *options: str) -> str:
    result = run_aimos("save", text, *options).ok()
    memory_id = result.out.strip()
    assert UUID_RE.match(memory_id), result.describe()
    return memory_id


@contextlib.contextmanager
def home_from(template: Path, root: Path, passphrase: str) -> Iterator[Path]:
    """A copy of an installed home at ``root / "home"``, AIMOS_HOME and the passphrase file set
    for the commands run inside (a module's used brain is built this way); the environment put
    back after."""
    home = root / "home"
    shutil.copytree(template, home)
    pass_file = root / "passphrase"
    pass_file.write_text(passphrase + "\n")
    pass_file.chmod(0o600)
    saved = dict(os.environ)
    os.environ.update({"AIMOS_HOME": str(home), PASSPHRASE_ENV: str(pass_file)})
    os.environ.pop("AIMOS_KEYSTORE", None)
    try:
        yield home
    finally:
        os.environ.clear()
        os.environ.update(saved)


def drop_guards(home: Path, table: str) -> None:
    """Drop ``table``'s BEFORE UPDATE / DELETE guard triggers with the sqlite3 shell."""
    names = sqlite(
        home / BRAIN,
        f"SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = '{table}'"
        " AND (sql LIKE '%BEFORE UPDATE%' OR sql LIKE '%BEFORE DELETE%')",
    ).stdout.split()
    assert names, f"no guard triggers on {table}?"
    done = sqlite(home / BRAIN, " ".join(f"DROP TRIGGER {n};" for n in names))
    assert done.returncode == 0, done.stderr


def run_sql(home: Path, sql: str) -> None:
    done = sqlite(home / BRAIN, sql)
    assert done.returncode == 0, done.stderr


def assert_refused_closed(result: Result, code: int, *words: str, never: tuple[str, ...] = ()) -> None:
    """Exit ``code``, an `error:` naming ``words`` and a `hint:`, nothing on stdout, no traceback,
    no internal error, and none of ``never`` anywhere."""
    assert result.code == code, result.describe()
    assert "Traceback" not in result.both, result.describe()
    assert "internal error" not in result.both, result.describe()
    assert "error:" in result.err and "hint:" in result.err, result.describe()
    assert result.out == "", f"a refused command printed data\n{result.describe()}"
    for word in words:
        assert word in result.err, f"stderr does not name {word!r}\n{result.describe()}"
    for text in never:
        assert text not in result.both, f"{text!r} was shown\n{result.describe()}"


PASSPHRASE = "correct horse battery staple"  # what tests/conftest.py's aimos_home writes


def attack(home: Path, sql: str, *tables: str, recreate: bool = True, before: str = "") -> None:
    """Run ``sql`` on the brain in one transaction, from a plain apsw connection (none of aimos's
    functions; apsw, not the sqlite3 shell, because the shell here (3.40) cannot open the search
    indexes' `contentless_delete` tables), the triggers of ``tables`` dropped first and
    (``recreate``) re-created exactly afterwards. ``before`` runs outside the transaction (ATTACH)."""
    db = home / BRAIN
    found = triggers_of(db, *tables)
    assert found or not tables, f"no triggers on {tables}?"
    drops = "".join(f'DROP TRIGGER "{name}";\n' for name, _ in found)
    creates = "".join(f"{text};\n" for _, text in found) if recreate else ""
    conn = apsw.Connection(str(db))
    try:
        if before:
            conn.execute(before)
        conn.execute(f"BEGIN;\n{drops}{sql};\n{creates}COMMIT;").fetchall()  # runs every statement
    finally:
        conn.close()
    if recreate:
        assert sorted(triggers_of(db, *tables)) == sorted(found)


def rowid_of(home: Path, memory_id: str) -> int:
    return int(sqlite_value(home / BRAIN, f"SELECT rowid FROM memories WHERE memory_id = '{memory_id}'"))


# --- the attacker ----------------------------------------------------------------------------------
def triggers_of(db: Path, *tables: str) -> list[tuple[str, str]]:
    """(name, sql) of every trigger on ``tables``, in schema order."""
    names = ", ".join(f"'{t}'" for t in tables)
    proc = sqlite(
        db,
        f"SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN ({names}) ORDER BY rowid",
        "-json",
    )
    assert proc.returncode == 0, proc.stderr
    return [(t["name"], t["sql"]) for t in json.loads(proc.stdout or "[]")]
