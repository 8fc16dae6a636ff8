"""The hub tests' PostgreSQL (support.hub.PgCluster and this folder's fixtures): a real server of the
tests' own, on a Unix socket only, that comes back with its data after a stop or a kill, and a
fresh database for each test."""

from __future__ import annotations

import os
import pwd
import stat
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest
from support.hub import OS_USER_FOR_ROOT, PgCluster, find_pg_bin, unique_database_name
from support.process import pid_alive


def rows(url: str, query: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(query).fetchall()


def test_the_server_programs_are_found() -> None:
    folder = find_pg_bin()
    assert (folder / "initdb").is_file(), folder
    assert os.access(folder / "postgres", os.X_OK), folder


def test_a_client_reaches_the_cluster_over_its_unix_socket_alone(pg_cluster: PgCluster) -> None:
    assert pg_cluster.url.startswith("postgresql:///aimos_hub?host=/tmp/aimos-pg-"), pg_cluster.url
    assert rows(pg_cluster.url, "SELECT 1") == [(1,)]
    # a session over a Unix socket has no server address; TCP would give one
    assert rows(pg_cluster.url, "SELECT inet_server_addr() IS NULL, current_database(), current_user") == [
        (True, "aimos_hub", pg_cluster.user)
    ]
    assert rows(pg_cluster.url, "SHOW listen_addresses") == [("",)]
    socket = pg_cluster.sockets / ".s.PGSQL.5432"
    assert stat.S_ISSOCK(socket.stat().st_mode), socket
    assert len(str(socket).encode()) < 108, socket


def test_the_cluster_runs_as_a_user_postgresql_accepts(pg_cluster: PgCluster) -> None:
    """As root (CI), the server and its files belong to `postgres`; otherwise to this user."""
    assert pg_cluster.pid is not None
    server_uid = Path(f"/proc/{pg_cluster.pid}/status").read_text().split("Uid:")[1].split()[1]
    expected = pg_cluster.owner.pw_uid if pg_cluster.owner else os.geteuid()
    assert int(server_uid) == expected != 0
    assert pg_cluster.data.stat().st_uid == expected
    assert pg_cluster.user == (OS_USER_FOR_ROOT if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name)


def test_each_hub_url_is_a_database_of_its_own(hub_url: str, new_hub_url: Callable[[], str]) -> None:
    other = new_hub_url()
    assert other != hub_url
    with psycopg.connect(hub_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE rows_here (n int)")
        conn.execute("INSERT INTO rows_here VALUES (1)")
        (mine,) = conn.execute("SELECT current_database()").fetchone() or ("",)
    (theirs,) = rows(other, "SELECT current_database()")[0]
    assert mine != theirs
    assert rows(other, "SELECT to_regclass('rows_here') IS NULL") == [(True,)]
    assert rows(hub_url, "SELECT n FROM rows_here") == [(1,)]


def test_a_dropped_database_is_gone_even_with_a_session_open(pg_cluster: PgCluster) -> None:
    """What `new_hub_url` does after each test."""
    name = unique_database_name()
    url = pg_cluster.create_database(name)
    listed = f"SELECT count(*) FROM pg_database WHERE datname = '{name}'"
    assert rows(pg_cluster.url, listed) == [(1,)]
    with psycopg.connect(url) as still_open:
        pg_cluster.drop_database(name)
        assert rows(pg_cluster.url, listed) == [(0,)]
        with pytest.raises(psycopg.OperationalError):
            still_open.execute("SELECT 1")


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_stopped_then_started_the_hub_keeps_its_rows(own_pg_cluster: PgCluster, mode: str) -> None:
    cluster = own_pg_cluster
    with cluster.connect() as conn:
        conn.execute("CREATE TABLE kept (n int)")
        conn.execute("INSERT INTO kept SELECT generate_series(1, 100)")
        conn.execute("CHECKPOINT")  # asynchronous commit: made durable before an immediate stop
    cluster.stop(mode)  # type: ignore[arg-type]
    assert not cluster.running
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(cluster.url, connect_timeout=2)
    cluster.start()
    assert rows(cluster.url, "SELECT count(*), sum(n) FROM kept") == [(100, 5050)]


def test_a_killed_hub_refuses_connections_then_recovers(own_pg_cluster: PgCluster) -> None:
    cluster = own_pg_cluster
    with cluster.connect() as conn:
        conn.execute("CREATE TABLE kept (n int)")
        conn.execute("INSERT INTO kept VALUES (7)")
        conn.execute("CHECKPOINT")
        # a synchronous commit is in the WAL when it returns, past the checkpoint: recovery replays it
        conn.execute("SET synchronous_commit = on")
        conn.execute("INSERT INTO kept VALUES (8)")
        server = cluster.pid
        cluster.kill()
        assert server is not None and not pid_alive(server)
        with pytest.raises(psycopg.OperationalError):
            conn.execute("SELECT 1")
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(cluster.url, connect_timeout=2)
    cluster.start()
    assert cluster.pid != server
    assert rows(cluster.url, "SELECT n FROM kept ORDER BY n") == [(7,), (8,)]
    assert "database system was interrupted" in cluster.log.read_text()


def test_leaving_the_cluster_stops_it_and_removes_its_folder() -> None:
    with PgCluster() as cluster:
        server = cluster.pid
        assert server is not None and pid_alive(server)
        assert cluster.root.is_dir()
    assert not pid_alive(server)
    assert not cluster.root.exists()
