"""A brain made before the newest migration upgrades in place: the migration runs when aimos next
opens it, and the brain keeps verifying and taking writes (the migration log's new row is not left
unsealed: the schema check binds that table, not the seals)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from support.cli import run_aimos

pytestmark = pytest.mark.timeout(180)

PASSPHRASE = "correct horse battery staple"


def test_a_brain_from_before_the_newest_migration_upgrades_and_verifies(aimos_home: Path) -> None:
    from aimos.installer.setup import InstallOptions, install
    from aimos.store import connection

    every = connection.migrations()
    older = every[:-1]
    older_files = connection._migration_files()[:-1]
    with pytest.MonkeyPatch.context() as patched:  # the aimos of one migration ago installs it
        patched.setattr(connection, "_migration_files", lambda: older_files)
        install(InstallOptions(keystore="file", guides=False), PASSPHRASE, int(time.time()))
    brain = aimos_home / "brain.sqlite3"

    def versions() -> list[Any]:
        with sqlite3.connect(brain) as db:
            return [r[0] for r in db.execute("SELECT version FROM schema_migrations ORDER BY version")]

    assert versions() == [v for v, _n, _s in older]
    saved = run_aimos("save", "the boiler is serviced in may", "--json").json()
    assert versions() == [v for v, _n, _s in every]
    recalled = run_aimos("recall", "boiler service", "--json").json()
    assert [r["memory_id"] for r in recalled["results"]][:1] == [saved["memory_id"]]
    verified = run_aimos("verify")
    assert verified.code == 0, verified.describe()
    assert "row_unsealed" not in verified.both
