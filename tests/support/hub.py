"""A private PostgreSQL for the hub tests: its own cluster in a fresh folder under /tmp, reached over
a Unix socket only (no TCP), started and stopped by the test's own process.

Imported by the test modules of this folder as a plain module (tests/ is not a package; this
folder's conftest.py puts it on sys.path). Nothing is mocked: `initdb` makes a real cluster and the
real `postgres` serves it. PostgreSQL refuses to run as root; as root (CI), the cluster's files
belong to the `postgres` user (made by Debian's `postgresql` package) and initdb and the server run
as that user, while the tests (and the aimos they run) connect as root over the socket, as the
database user `postgres`.

The server is this process's own child, not pg_ctl's: a server pg_ctl starts is left to PID 1, and
in a container PID 1 may leave a killed server a zombie for a while; its pid still answers, so its
lock file looks alive and the next start is refused ("lock file postmaster.pid already exists").
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from types import TracebackType
from typing import Any, Literal
from urllib.parse import quote

import psycopg
import pytest
from psycopg import sql

from support.process import pid_alive, wait_for

INSTALL = "apt-get install postgresql"
TOOLS = ("initdb", "postgres")
# the socket file is `.s.PGSQL.<port>` in the socket folder; no TCP port is opened
PORT = 5432
# who runs the cluster when the tests run as root (initdb and postgres refuse root)
OS_USER_FOR_ROOT = "postgres"
START_TIMEOUT = 60.0
# speed over durability, for a throwaway cluster: no fsync and no full pages. With asynchronous
# commit, a commit reported done is lost if the server is killed (`kill`, or `stop("immediate")`)
# before the WAL writer writes it out (a fraction of a second); a CHECKPOINT, or a session's own
# `SET synchronous_commit = on`, makes it durable first.
SERVER_SETTINGS = {
    "listen_addresses": "",
    "fsync": "off",
    "full_page_writes": "off",
    "synchronous_commit": "off",
}
# how `stop` asks the server to end (pg_ctl's modes, sent as pg_ctl sends them)
STOP_SIGNALS = {"fast": signal.SIGINT, "immediate": signal.SIGQUIT}


def _has_tools(folder: Path) -> bool:
    return all(os.access(folder / tool, os.X_OK) for tool in TOOLS)


def _version_key(folder: Path) -> tuple[int, ...]:
    """/usr/lib/postgresql/15/bin -> (15,); a folder not named by a version sorts first."""
    return tuple(int(part) for part in re.findall(r"\d+", folder.parent.name)) or (-1,)


def find_pg_bin() -> Path:
    """The folder holding PostgreSQL's server programs (initdb, postgres): `pg_config --bindir`, else
    the newest /usr/lib/postgresql/*/bin (Debian keeps them off PATH), else PATH. Fails the test, with
    the command that installs them, when there are none (never a skip)."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        found = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
        if found.returncode == 0 and found.stdout.strip():
            candidates.append(Path(found.stdout.strip()))
    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=_version_key, reverse=True)
    on_path = shutil.which(TOOLS[0])
    if on_path:
        candidates.append(Path(on_path).parent)
    for folder in candidates:
        if _has_tools(folder):
            return folder
    pytest.fail(
        "PostgreSQL's server programs (initdb, postgres) were not found (pg_config --bindir, "
        f"/usr/lib/postgresql/*/bin, PATH): the hub tests start a private cluster; run `{INSTALL}`",
        pytrace=False,
    )


def _cluster_owner() -> pwd.struct_passwd | None:
    """The account the cluster runs as: None for this process's own user; `postgres` as root."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(OS_USER_FOR_ROOT)
    except KeyError:
        pytest.fail(
            f"the tests run as root, which PostgreSQL refuses, and there is no `{OS_USER_FOR_ROOT}` "
            f"user to run the cluster as: `{INSTALL}` makes one (or run the tests as another user)",
            pytrace=False,
        )


class PgCluster:
    """A private PostgreSQL cluster: `with PgCluster() as cluster:` makes it (initdb into a fresh
    folder), starts it and creates `database`; leaving the block stops it and removes the folder.

    `url` is the database's `postgresql://` URL (Unix socket, no TCP); `url_for(name)` another
    database's. `stop(mode)`, `start()` and `kill()` take the server down and back up on the same
    data folder, for tests of a hub that goes away.
    """

    def __init__(self, database: str = "aimos_hub") -> None:
        self.bin = find_pg_bin()
        self.owner = _cluster_owner()
        self.user = self.owner.pw_name if self.owner else pwd.getpwuid(os.geteuid()).pw_name
        self.database = database
        # short: a Unix socket's path must fit in about 107 bytes
        self.root = Path(tempfile.mkdtemp(prefix="aimos-pg-", dir="/tmp"))
        self.data = self.root / "data"
        self.sockets = self.root / "run"
        self.log = self.root / "server.log"
        self.sockets.mkdir(mode=0o700)
        if self.owner:
            for folder in (self.root, self.sockets):
                os.chown(folder, self.owner.pw_uid, self.owner.pw_gid)
        self._server: subprocess.Popen[bytes] | None = None

    # -- the URL a client (a test, the aimos under test) connects with ------------------------------
    def url_for(self, database: str) -> str:
        """`postgresql:///<database>?host=<socket folder>&port=...&user=...`: libpq reads a host
        that starts with / as the folder of a Unix socket."""
        return (
            f"postgresql:///{quote(database, safe='')}?host={quote(str(self.sockets), safe='/')}"
            f"&port={PORT}&user={quote(self.user, safe='')}"
        )

    @property
    def url(self) -> str:
        return self.url_for(self.database)

    def connect(self, database: str | None = None, **kwargs: Any) -> psycopg.Connection[Any]:
        """A psycopg connection to ``database`` (default: `database`), autocommit unless told."""
        kwargs.setdefault("autocommit", True)
        return psycopg.connect(self.url_for(database or self.database), **kwargs)

    # -- databases on the cluster -------------------------------------------------------------------
    def create_database(self, name: str, template: str | None = None) -> str:
        """CREATE DATABASE ``name`` (a copy of database ``template`` when given: no session may be
        connected to it); returns its URL."""
        with self.connect("postgres") as conn:
            if template is None:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            else:
                copy = sql.SQL("CREATE DATABASE {} TEMPLATE {}")
                conn.execute(copy.format(sql.Identifier(name), sql.Identifier(template)))
        return self.url_for(name)

    def drop_database(self, name: str) -> None:
        """DROP DATABASE ``name``, ending any session still connected to it."""
        with self.connect("postgres") as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))

    # -- the server ---------------------------------------------------------------------------------
    def _as_owner(self) -> dict[str, Any]:
        """Popen's arguments that run a program as the cluster's owner, in the cluster's folder.
        As root: that user, its group alone (none of root's groups kept)."""
        if self.owner is None:
            return {"cwd": self.root}
        return {
            "cwd": self.root,
            "user": self.owner.pw_uid,
            "group": self.owner.pw_gid,
            "extra_groups": [],
        }

    def _log_tail(self) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-20:])
        return "(no server log)"

    def _initdb(self) -> None:
        made = subprocess.run(
            [
                str(self.bin / "initdb"),
                "-D",
                str(self.data),
                "-U",
                self.user,
                "-A",
                "trust",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ],
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT,
            check=False,
            **self._as_owner(),
        )
        if made.returncode != 0:
            pytest.fail(
                f"initdb failed (exit {made.returncode}):\n{made.stdout}\n{made.stderr}", pytrace=False
            )

    @property
    def pid(self) -> int | None:
        """The running server's process id (the postmaster), None when it is not running."""
        if self._server is None or self._server.poll() is not None:
            return None
        return self._server.pid

    @property
    def running(self) -> bool:
        return self.pid is not None

    def start(self) -> None:
        """Start the server (the first time: initdb, then CREATE DATABASE `database`) and wait until
        it accepts connections."""
        assert not self.running, "the cluster is already running"
        first = not self.data.exists()
        if first:
            self._initdb()
        options = ["-k", str(self.sockets), "-p", str(PORT)]
        for name, value in SERVER_SETTINGS.items():
            options += ["-c", f"{name}={value}"]
        with self.log.open("ab") as log:
            # a session of its own, as pg_ctl gives it: a Ctrl-C at the terminal is not a shutdown,
            # and `kill` reaches every server process through the group
            self._server = subprocess.Popen(
                [str(self.bin / "postgres"), "-D", str(self.data), *options],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
                **self._as_owner(),
            )
        self._wait_ready()
        if first:
            self.create_database(self.database)

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if not self.running:
                pytest.fail(
                    f"the PostgreSQL server exited while starting:\n{self._log_tail()}", pytrace=False
                )
            try:
                with self.connect("postgres", connect_timeout=5) as conn:
                    conn.execute("SELECT 1")
                return
            except psycopg.OperationalError as error:
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"PostgreSQL did not accept connections within {START_TIMEOUT:.0f} s ({error}):\n"
                        f"{self._log_tail()}",
                        pytrace=False,
                    )
            time.sleep(0.02)

    def stop(self, mode: Literal["fast", "immediate"] = "fast") -> None:
        """Shut the server down as `pg_ctl stop -m <mode>` does: fast ends the sessions and writes
        a checkpoint; immediate quits at once (the next start recovers from the WAL)."""
        server = self._server
        assert server is not None and self.running, "the cluster is not running"
        server.send_signal(STOP_SIGNALS[mode])
        server.wait(timeout=START_TIMEOUT)

    def kill(self) -> None:
        """SIGKILL every process of the server (a crash, a power cut for the clients); the next
        `start` recovers from the WAL. Returns once none of them runs."""
        server = self._server
        assert server is not None and self.running, "the cluster is not running"
        group = self._group(server.pid)
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=START_TIMEOUT)
        wait_for(lambda: not any(pid_alive(pid) for pid in group), "the killed server's processes to end")

    @staticmethod
    def _group(leader: int) -> list[int]:
        """The processes of ``leader``'s process group (the server and its backends)."""
        members = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, IndexError, ValueError):
                if int(stat.read_text().rsplit(")", 1)[1].split()[2]) == leader:
                    members.append(int(stat.parent.name))
        return members

    def close(self) -> None:
        """Stop the server (immediate: its data is thrown away) and remove the cluster's folder."""
        try:
            if self.running:
                self.stop("immediate")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PgCluster:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


def unique_database_name() -> str:
    return f"hub_{uuid.uuid4().hex[:16]}"
