"""Fixtures for the hub tests: a real PostgreSQL, started by the tests (tests/hub/hub_support.py);
this folder is put on sys.path for `hub_support`. Without PostgreSQL's server programs every test
here FAILS with the command that installs them (never a skip).

- `pg_cluster` (session): one private cluster per test process (per pytest-xdist worker), shared by
  the tests; a test never stops it.
- `new_hub_url` (function): a factory, each call a fresh database on that cluster (its URL), every
  one dropped after the test.
- `hub_url` (function): one such database's URL.
- `own_pg_cluster` (function): a cluster of the test's own, for a test that stops, kills or restarts
  the hub.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hub_support import PgCluster, unique_database_name


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    with PgCluster() as cluster:
        yield cluster


@pytest.fixture
def new_hub_url(pg_cluster: PgCluster) -> Iterator[Callable[[], str]]:
    made: list[str] = []

    def new() -> str:
        made.append(unique_database_name())
        return pg_cluster.create_database(made[-1])

    yield new
    for name in made:
        pg_cluster.drop_database(name)


@pytest.fixture
def hub_url(new_hub_url: Callable[[], str]) -> str:
    return new_hub_url()


@pytest.fixture
def own_pg_cluster() -> Iterator[PgCluster]:
    with PgCluster() as cluster:
        yield cluster
