"""Helpers for the CLI tests: run the real `aimos` CLI (in-process, or in a subprocess: see `run_aimos`)
and look at a brain from outside.

Imported by the test modules of this folder as a plain module (tests/ is not a package; pytest puts
this folder on sys.path). Nothing here mocks aimos: the CLI is aimos's own `main` (in this process
or a real subprocess), the brain a real SQLite file read with the real `sqlite3` shell.
"""

from __future__ import annotations

import gc
import hashlib
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

SQLITE3 = "/usr/bin/sqlite3"
BRAIN = "brain.sqlite3"
PASSPHRASE_ENV = "AIMOS_PASSPHRASE_FILE"
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
HEX64_RE = re.compile(r"^[0-9a-f]{64}$")

# The tables whose row counts must not move when the brain refuses something.
SNAPSHOT_TABLES = (
    "memories",
    "events",
    "memory_provenance",
    "request_nonces",
    "identity_epochs",
    "recall_grants",
    "agent_revocations",
)


@dataclass
class Result:
    """One finished `aimos` process."""

    args: tuple[str, ...]
    code: int
    out: str
    err: str

    @property
    def both(self) -> str:
        return self.out + self.err

    def describe(self) -> str:
        return (
            f"aimos {' '.join(self.args)[:200]} -> exit {self.code}\nstdout:\n{self.out}\nstderr:\n{self.err}"
        )

    def ok(self) -> Result:
        """Assert success (exit 0, no traceback) and return self, for chaining."""
        assert self.code == 0, self.describe()
        assert "Traceback" not in self.both, self.describe()
        return self

    def json(self) -> Any:
        """Assert success and parse stdout as JSON."""
        self.ok()
        return json.loads(self.out)


# Where `run_aimos` runs the CLI. In-process (the default) calls `aimos.cli.app.main(argv)` in the
# test's own process, with the command's environment, working folder, umask, stdin, stdout and
# stderr swapped in and put back afterwards: the same code path as the console script (main's exit
# code, its error reports, its command log) against the same real brain and keystore, without a
# Python start-up and import per call. A real subprocess runs when:
# - AIMOS_TESTS_REAL_PROCESS=1 is set for the whole run (every call, as the suite ran before);
# - the test is marked `real_process` (tests/e2e is: the installed entry point end to end);
# - the call passes file descriptors (`--passphrase-fd`), or sets or unsets a variable that only
#   takes effect when a process starts (START_ONLY: the keyring backend and its D-Bus session,
#   the dynamic loader and libfaketime's clock, Python's own, the locale);
# - the caller asks (``process=True``).
REAL_PROCESS_ENV = "AIMOS_TESTS_REAL_PROCESS"
START_ONLY = (
    "PYTHON",  # PYTHONPATH, PYTHONIOENCODING, PYTHONWARNINGS, PYTHON_KEYRING_BACKEND, ...
    "DBUS_",
    "GNOME_KEYRING",
    "KEYRING",
    "LD_",
    "FAKETIME",
    "LANG",
    "LC_",
    "TZ",
)
real_process_test = False  # set for each test by tests/conftest.py from its `real_process` marker


def _starts_a_process(env: dict[str, str] | None, unset: Iterable[str]) -> bool:
    names = [*(env or {}), *unset]
    return any(name.startswith(START_ONLY) for name in names)


def run_aimos(
    *args: str,
    input: str | bytes | None = None,
    env: dict[str, str] | None = None,
    unset: Iterable[str] = (),
    pass_fds: Iterable[int] = (),
    timeout: float = 60,
    cwd: str | os.PathLike[str] | None = None,
    process: bool = False,
) -> Result:
    """Run `aimos ARGS` (stdin is empty unless ``input`` is given): in-process, or as a real
    `python -m aimos` subprocess (see above for when)."""
    unset = tuple(unset)
    pass_fds = tuple(pass_fds)
    if (
        process
        or real_process_test
        or pass_fds
        or os.environ.get(REAL_PROCESS_ENV) == "1"
        or _starts_a_process(env, unset)
    ):
        return run_aimos_process(
            *args, input=input, env=env, unset=unset, pass_fds=pass_fds, timeout=timeout, cwd=cwd
        )
    return run_aimos_in_process(*args, input=input, env=env, unset=unset, cwd=cwd)


def run_aimos_process(
    *args: str,
    input: str | bytes | None = None,
    env: dict[str, str] | None = None,
    unset: Iterable[str] = (),
    pass_fds: Iterable[int] = (),
    timeout: float = 60,
    cwd: str | os.PathLike[str] | None = None,
) -> Result:
    """Run `python -m aimos ARGS` as a real subprocess (stdin is empty unless ``input`` is given)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    for name in unset:
        full_env.pop(name, None)
    text_mode = not isinstance(input, bytes)
    proc = subprocess.run(
        [sys.executable, "-m", "aimos", *args],
        input=input,
        stdin=subprocess.DEVNULL if input is None else None,
        capture_output=True,
        text=text_mode,
        env=full_env,
        timeout=timeout,
        check=False,
        pass_fds=tuple(pass_fds),
        cwd=cwd,
    )
    out = proc.stdout if text_mode else proc.stdout.decode("utf-8", "replace")
    err = proc.stderr if text_mode else proc.stderr.decode("utf-8", "replace")
    return Result(tuple(args), proc.returncode, out, err)


# A small Python that runs a command and reports its peak resident memory on its last stderr line:
# the command is forked from it, not from the test process, so none of the test's memory is counted
# (a child's peak RSS includes what the process it was forked from held when it started).
PEAK_RSS_LINE = "peak RSS KiB: "
_MEASURE = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:]).returncode\n"
    f"print({PEAK_RSS_LINE!r} + str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss), file=sys.stderr)\n"
    "sys.exit(code if code >= 0 else 128 - code)\n"
)


def run_aimos_peak_rss(*args: str, timeout: float = 60) -> tuple[Result, int]:
    """`python -m aimos ARGS` as a real subprocess (stdin empty, this environment), and its peak
    resident memory in KiB."""
    proc = subprocess.run(
        [sys.executable, "-c", _MEASURE, sys.executable, "-m", "aimos", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=timeout,
        check=False,
    )
    err, _, last = proc.stderr.rstrip("\n").rpartition("\n")
    assert last.startswith(PEAK_RSS_LINE), proc.stderr
    return Result(tuple(args), proc.returncode, proc.stdout, err + "\n" if err else ""), int(
        last.removeprefix(PEAK_RSS_LINE)
    )


# A fresh interpreter's warning filters (no -W, no PYTHONWARNINGS): what a subprocess starts with.
_PROCESS_WARNING_FILTERS: tuple[tuple[Literal["default", "ignore"], type[Warning], str | None], ...] = (
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, None),
    ("ignore", PendingDeprecationWarning, None),
    ("ignore", ImportWarning, None),
    ("ignore", ResourceWarning, None),
)


def _stream(data: bytes = b"") -> io.TextIOWrapper:
    """A standard stream as a piped child has it: UTF-8, surrogateescape (the C.UTF-8 locale), not
    a terminal, no file descriptor."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="surrogateescape", write_through=True)


def _as_text(data: bytes, text_mode: bool) -> str:
    """What `subprocess.run` would hand back: in text mode decoded with universal newlines."""
    if not text_mode:
        return data.decode("utf-8", "replace")
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def run_aimos_in_process(
    *args: str,
    input: str | bytes | None = None,
    env: dict[str, str] | None = None,
    unset: Iterable[str] = (),
    cwd: str | os.PathLike[str] | None = None,
) -> Result:
    """`aimos ARGS` through `aimos.cli.app.main` in this process, as a subprocess would see it:
    the environment (``env`` over this one, less ``unset``), ``cwd``, stdin from ``input`` (empty
    otherwise), stdout and stderr captured, exit code from its SystemExit. Everything swapped is put
    back, whatever happens."""
    import warnings

    from aimos.cli.app import main

    text_mode = not isinstance(input, bytes)
    stdin_bytes = b"" if input is None else input if isinstance(input, bytes) else input.encode("utf-8")
    stdin, stdout, stderr = _stream(stdin_bytes), _stream(), _stream()
    saved_env = dict(os.environ)
    saved_streams = (sys.stdin, sys.stdout, sys.stderr)
    saved_cwd = os.getcwd()
    saved_umask = os.umask(0o022)
    os.umask(saved_umask)
    code: int
    try:
        os.environ.update(env or {})
        for name in unset:
            os.environ.pop(name, None)
        if cwd is not None:
            os.chdir(cwd)
        sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
        with warnings.catch_warnings():
            warnings.resetwarnings()
            for action, category, module in reversed(_PROCESS_WARNING_FILTERS):
                warnings.filterwarnings(action, category=category, module=module or "")
            try:
                main(list(args))
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        # what the command left open (a connection held by its error's traceback, a lock file's
        # descriptor) is closed now, as a process's exit would close it
        gc.collect()
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.chdir(saved_cwd)
        os.umask(saved_umask)
        os.environ.clear()
        os.environ.update(saved_env)
    for stream in (stdout, stderr):
        stream.flush()
    out = _as_text(stdout.buffer.getvalue(), text_mode)  # type: ignore[attr-defined]
    err = _as_text(stderr.buffer.getvalue(), text_mode)  # type: ignore[attr-defined]
    return Result(tuple(args), code, out, err)


def run_on_a_terminal(*args: str) -> tuple[subprocess.CompletedProcess[bytes], str]:
    """`python -m aimos ARGS` with stderr on a real pseudo-terminal (stdout a pipe): the process
    and all it drew on the terminal. Keep what it draws small: the terminal is read after it ends."""
    import pty

    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "aimos", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=follower,
            env=dict(os.environ),
            timeout=120,
            check=False,
        )
        os.close(follower)
        follower = -1
        drawn = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal's other end is closed: all of it read
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    return proc, drawn.decode("utf-8", "replace")


def run_aimos_with_passphrase_fd(passphrase: str, *args: str) -> Result:
    """`aimos ARGS --passphrase-fd N` with the passphrase written to a pipe, and none in the
    environment (AIMOS_PASSPHRASE_FILE unset)."""
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, (passphrase + "\n").encode())
        os.close(write_end)
        write_end = -1
        return run_aimos(
            *args, "--passphrase-fd", str(read_end), pass_fds=(read_end,), unset=(PASSPHRASE_ENV,)
        )
    finally:
        os.close(read_end)
        if write_end != -1:
            os.close(write_end)


def hint_of(result: Result) -> str:
    lines = [line for line in result.err.splitlines() if line.startswith("hint:")]
    return "\n".join(lines)


def assert_refused(result: Result, code: int, *hint_words: str) -> None:
    """SPEC section 15: the exit code, `error:` and a `hint:` naming the fix, no traceback, no data."""
    assert result.code == code, result.describe()
    assert "Traceback" not in result.both, result.describe()
    assert "error:" in result.err, result.describe()
    hint = hint_of(result)
    assert hint, f"no 'hint:' line on stderr\n{result.describe()}"
    for word in hint_words:
        assert word.lower() in hint.lower(), f"hint does not mention {word!r}\n{result.describe()}"
    assert result.out == "", f"a refused command printed data on stdout\n{result.describe()}"


# --- looking at the brain from outside, with the real sqlite3 shell ---------------------------
def sqlite(brain: Path, sql: str, *options: str) -> subprocess.CompletedProcess[str]:
    """Run ``sql`` with the sqlite3 shell. It waits up to 10 s for a lock, as aimos's own
    connections do: a housekeeper or sync may be committing while a test looks."""
    return subprocess.run(
        [SQLITE3, "-cmd", ".timeout 10000", *options, str(brain), sql],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def sqlite_value(brain: Path, sql: str) -> str:
    proc = sqlite(brain, sql)
    assert proc.returncode == 0, f"sqlite3 {sql!r} failed: {proc.stderr}"
    return proc.stdout.strip()


def indexed_terms(brain: Path) -> set[str]:
    """Every term both search indexes hold, read through FTS5's vocabulary tables (apsw: the
    sqlite3 shell here predates contentless_delete)."""
    import apsw

    conn = apsw.Connection(f"file:{brain}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    try:
        terms = {str(r[0]) for r in conn.execute("SELECT term FROM memory_fts_vocab")}
        conn.execute("CREATE VIRTUAL TABLE temp.ctx_vocab USING fts5vocab(main, memory_context_fts, row)")
        terms |= {str(r[0]) for r in conn.execute("SELECT term FROM temp.ctx_vocab")}
    finally:
        conn.close()
    return terms


def table_counts(brain: Path, tables: Iterable[str] = SNAPSHOT_TABLES) -> dict[str, int]:
    sql = " UNION ALL ".join(f"SELECT '{t}', COUNT(*) FROM {t}" for t in tables)
    proc = sqlite(brain, sql + ";", "-separator", "|")
    assert proc.returncode == 0, f"sqlite3 count failed: {proc.stderr}"
    counts = {}
    for line in proc.stdout.splitlines():
        name, n = line.split("|")
        counts[name] = int(n)
    return counts


def brain_id(home: Path) -> str:
    return sqlite_value(home / BRAIN, "SELECT value FROM brain_meta WHERE key = 'brain_id'")


def keystore_dir(home: Path) -> Path:
    return home / "state" / "keys" / brain_id(home)


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def listing(directory: Path) -> list[str]:
    if not directory.exists():
        return []
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


@dataclass
class Snapshot:
    counts: dict[str, int]
    brain_files: list[str]
    brain_sha256: str
    keys: list[str] = field(default_factory=list)


def snapshot(home: Path) -> Snapshot:
    """Row counts of the retained tables, the brain's file set, its bytes and the key files (the
    state folder, less the newest full verification's outcome, which `aimos verify` keeps there)."""
    from aimos.verify.brain.outcome import FAILED_FILE, PASSED_FILE

    brain = home / BRAIN
    files = sorted(p.name for p in home.iterdir() if p.name.startswith(BRAIN))
    digest = sha256_file(brain)
    state = [name for name in listing(home / "state") if name not in (FAILED_FILE, PASSED_FILE)]
    return Snapshot(table_counts(brain), files, digest, state)


def assert_unchanged(home: Path, before: Snapshot) -> None:
    after = snapshot(home)
    assert after.counts == before.counts, f"row counts changed: {before.counts} -> {after.counts}"
    assert after.brain_files == before.brain_files, (
        f"brain files: {before.brain_files} -> {after.brain_files}"
    )
    assert after.brain_sha256 == before.brain_sha256, "the brain file's bytes changed"
    assert after.keys == before.keys, f"keystore files changed: {before.keys} -> {after.keys}"


def parse_json(result: Result) -> Any:
    import json

    result.ok()
    try:
        return json.loads(result.out)
    except ValueError as exc:  # pragma: no cover - the assertion message is the point
        raise AssertionError(f"--json output is not JSON ({exc})\n{result.describe()}") from None


# --- the OS keychain (Secret Service), probed without aimos ---------------------------------------
KEYCHAIN_HELP = (
    "the keychain tests need a real Secret Service: run them with "
    "`dbus-run-session -- bash scripts/test-in-keyring-session.sh tests/...`"
)


def keychain_problem() -> str | None:
    """None when a real OS keychain stores, reads and deletes an item from this process."""
    try:
        import keyring

        backend = keyring.get_keyring()
        module = type(backend).__module__
        if module.startswith(("keyring.backends.fail", "keyring.backends.null", "keyrings.alt")):
            return f"keyring has no OS backend here ({module}.{type(backend).__name__})"
        service, name = "aimos:test-probe", f"probe-{os.getpid()}"
        keyring.set_password(service, name, "ok")
        value = keyring.get_password(service, name)
        keyring.delete_password(service, name)
    except Exception as exc:  # any backend failure means: no keychain
        return f"{type(exc).__name__}: {exc}"
    return None if value == "ok" else "the keychain returned another value than it stored"


def require_keychain() -> Any:
    """The `keyring` module once a real OS keychain answered; otherwise FAIL (never skip) saying how
    to run the keychain tests."""
    import pytest

    problem = keychain_problem()
    if problem is not None:
        pytest.fail(f"no OS keychain reachable ({problem}); {KEYCHAIN_HELP}", pytrace=False)
    import keyring

    return keyring


def edit_outside(home: Path, table: str, sql: str) -> None:
    """Edit the brain outside aimos, as someone with the file could: drop ``table``'s BEFORE
    UPDATE / DELETE guard triggers and run ``sql`` with the sqlite3 shell."""
    db = home / BRAIN
    names = sqlite(
        db,
        f"SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = '{table}'"
        " AND (sql LIKE '%BEFORE UPDATE%' OR sql LIKE '%BEFORE DELETE%')",
    ).stdout.split()
    assert names, f"no guard triggers on {table}?"
    done = sqlite(db, " ".join(f"DROP TRIGGER {n};" for n in names) + f" {sql}")
    assert done.returncode == 0, done.stderr


# --- a moved clock ------------------------------------------------------------------------------
def clock_moved(days: float) -> dict[str, str]:
    """The environment that runs an `aimos` subprocess (or an MCP server) with its wall clock
    ``days`` ahead of the real one, through libfaketime (Debian's `faketime`, which .ci/run
    installs); monotonic clocks stay real. aimos itself reads only the system clock."""
    import glob

    import pytest

    found = sorted(glob.glob("/usr/lib/*/faketime/libfaketimeMT.so.1"))
    if not found:
        pytest.fail("libfaketime is missing: `apt-get install faketime` (.ci/run installs it)", pytrace=False)
    return {
        "LD_PRELOAD": found[0],
        "FAKETIME": f"+{round(days * 86_400)}",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
    }


def unpack_brain_fixture(fixture: Path, home: Path) -> Path:
    """A brain fixture (tests/fixtures/brain-vN: brain.sqlite3.gz and its public config files)
    unpacked into ``home`` (AIMOS_HOME), with aimos's file modes; returns the brain's path."""
    import gzip
    import shutil

    (home / "config").mkdir(mode=0o700, parents=True, exist_ok=True)
    for path in (fixture / "config").iterdir():
        shutil.copyfile(path, home / "config" / path.name)
        (home / "config" / path.name).chmod(0o600)
    brain = home / BRAIN
    with gzip.open(fixture / "brain.sqlite3.gz", "rb") as src, brain.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    brain.chmod(0o600)
    return brain
