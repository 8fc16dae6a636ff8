"""Fixtures for the hub tests: a real PostgreSQL, started by the tests (tests/support/hub.py);
this folder is put on sys.path for `support.hub`. Without PostgreSQL's server programs every test
here FAILS with the command that installs them (never a skip).

- `pg_cluster` (session): one private cluster per test process (per pytest-xdist worker), shared by
  the tests; a test never stops it.
- `new_hub_url` (function): a factory, each call a fresh database on that cluster (its URL), every
  one dropped after the test.
- `hub_url` (function): one such database's URL.
- `own_pg_cluster` (function): a cluster of the test's own, for a test that stops, kills or restarts
  the hub.
- `made_pair` (module): two devices of one brain on a hub of the shared cluster (tests/support/hub_devices.py),
  made once for the module that asks; `pair` (function): a copy of it, the test's own to change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.hub import PgCluster, unique_database_name
from support.hub_devices import Pair, copy_pair, make_pair


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


@pytest.fixture(scope="module")
def made_pair(pg_cluster: PgCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    made = make_pair(tmp_path_factory.mktemp("pair"), pg_cluster)
    yield made
    pg_cluster.drop_database(made.database)


@pytest.fixture
def pair(made_pair: Pair, pg_cluster: PgCluster, tmp_path: Path) -> Iterator[Pair]:
    copied = copy_pair(made_pair, tmp_path / "pair", pg_cluster)
    yield copied
    pg_cluster.drop_database(copied.database)
