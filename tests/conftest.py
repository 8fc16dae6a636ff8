"""Shared fixtures: every test gets its own AIMOS_HOME, so nothing touches a real brain."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# The subprocess helpers (`support.cli`: the real `aimos` in a subprocess, the real sqlite3
# shell) live in tests/support, on pytest's pythonpath for every test folder.
import support.cli as aimos_cli_support
from support.cells import cell_str
from support.cli import PASSPHRASE_ENV, run_aimos

# fixtures several folders use, defined in tests/support
pytest_plugins = ("support.guides",)

PASSPHRASE = "correct horse battery staple"

# `aimos install` starts the housekeeper by default; the suites install many throwaway brains, so
# they run with no service unless a test asks for one (`--service process` beats the variable).
os.environ.setdefault("AIMOS_SERVICE", "none")
REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"

# What aimos reads to find its files (aimos/paths.py): AIMOS_HOME, else the platformdirs user dirs,
# which the XDG variables move (on Linux). Each test starts with all of them under its own temporary
# directory, so no test can reach a real home; a test (or a fixture such as `aimos_home`) that sets
# its own wins, since the autouse fixture below runs before the fixtures a test asks for.
ISOLATED_ENV = ("AIMOS_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")
_SESSION_ROOT = pytest.StashKey[Path]()


def _isolated_env(root: Path) -> dict[str, str]:
    """AIMOS_HOME and the XDG user dirs under ``root`` (not created: aimos makes what it needs)."""
    return {name: str(root / name.lower().replace("_", "-")) for name in ISOLATED_ENV}


# Set by scripts/test-in-keyring-session.sh: each pytest-xdist worker starts a Secret Service of its
# own (a private D-Bus session bus and an unlocked gnome-keyring on it), so a test that locks the
# keychain, or deletes a brain's key from it, does so for its own worker alone.
WORKER_KEYRING_ENV = "AIMOS_TESTS_WORKER_KEYRING"
SHARED_BUS_ENV = "AIMOS_TESTS_SHARED_BUS"  # the run's own session bus, kept for the isolation test
_WORKER_BUS = pytest.StashKey[subprocess.Popen[bytes] | None]()


def _start_worker_keyring(root: Path) -> subprocess.Popen[bytes]:
    """A private session bus (this worker's child; its exit ends gnome-keyring too) and an unlocked
    gnome-keyring registered on it; this process's environment points at them."""
    bus = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert bus.stdout is not None
    address = bus.stdout.readline().decode().strip()
    assert address.startswith("unix:"), f"dbus-daemon printed no address ({address!r})"
    os.environ[SHARED_BUS_ENV] = os.environ.get("DBUS_SESSION_BUS_ADDRESS", "")
    os.environ["DBUS_SESSION_BUS_ADDRESS"] = address
    keyrings = root / "keyring-data"
    keyrings.mkdir(mode=0o700)
    started = subprocess.run(
        ["gnome-keyring-daemon", "--unlock", "--components=secrets"],
        input=b"pass",
        capture_output=True,
        env={**os.environ, "XDG_DATA_HOME": str(keyrings)},
        timeout=60,
        check=True,
    )
    for line in started.stdout.decode().splitlines():
        name, _, value = line.partition("=")
        if name == "GNOME_KEYRING_CONTROL":
            os.environ[name] = value
    return bus


def pytest_configure(config: pytest.Config) -> None:
    """Before any fixture (session-scoped ones included) runs: a session-wide fallback under a
    temporary directory, so even code run outside a test's own isolation never sees a real home;
    and under pytest-xdist with WORKER_KEYRING_ENV set, this worker's own Secret Service."""
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="aimos-tests-"))
    config.stash[_SESSION_ROOT] = root
    config.stash[_WORKER_BUS] = None
    if os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get(WORKER_KEYRING_ENV) == "1":
        config.stash[_WORKER_BUS] = _start_worker_keyring(root)
    os.environ.update(_isolated_env(root))


# The tamper harness's report (tests/attacks/tamper.py REPORTS), made in a pytest-xdist worker, is
# sent back to the controller and printed at the end of the run, as a run without workers prints it.
_WORKER_REPORTS: list[str] = []


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    tamper = sys.modules.get("tamper")
    if workeroutput is not None and tamper is not None:
        workeroutput["tamper_reports"] = list(tamper.REPORTS)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    _WORKER_REPORTS.extend(getattr(node, "workeroutput", {}).get("tamper_reports", []))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for text in _WORKER_REPORTS:
        terminalreporter.write_sep("=", "tamper harness report")
        terminalreporter.write(text)


def pytest_unconfigure(config: pytest.Config) -> None:
    bus = config.stash.get(_WORKER_BUS, None)
    if bus is not None:
        bus.terminate()
        bus.wait(timeout=30)
    root = config.stash.get(_SESSION_ROOT, None)
    if root is not None:
        shutil.rmtree(root, ignore_errors=True)


def _freeze_the_heap() -> None:
    """Collect, then move every object still alive out of the garbage collector's sight: the
    in-process CLI runner collects after every command (closing what a process's exit would close),
    and a full collection over the suite's heap (thousands of test items, each finished test's
    reports) cost more than the command itself. Only objects made since are looked at."""
    import gc

    gc.collect()
    gc.freeze()


def pytest_collection_finish(session: pytest.Session) -> None:
    _freeze_the_heap()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """After each test's own teardown: its garbage collected, what outlives it frozen."""
    _freeze_the_heap()


# Folders whose every test runs the CLI as a real subprocess (the installed entry point end to end;
# the hub's, against the real PostgreSQL they start, tests/support/hub.py).
REAL_PROCESS_FOLDERS = ("e2e", "hub")
# What the fast subset (`-m "not slow"`, docs/development.md, "Running the tests") leaves out: folders and modules
# (paths under tests/) whose tests spend seconds each on real processes, venvs, servers or whole
# evaluations. A single slow test elsewhere takes `@pytest.mark.slow`.
SLOW = (
    "e2e/",
    "packaging/",
    "mcp/",
    "tui/",
    "keys/",
    "attacks/test_tamper_every_cell.py",
    "eval/test_poisonedrag.py",
    "eval/test_perf_profile.py",
    "cli/test_agent_expiry.py",
    "housekeeper/test_daemon.py",
    "hub/test_hub_",  # two devices over a real PostgreSQL, through the real CLI; all but the cluster's own
)


# Tests that share an expensive session fixture run on one pytest-xdist worker, so it is made once:
# the tamper harness (its fixture runs every case the collected tests need), the packaging tests (one
# build of the dists, one venv), the brain-file attacks (their module's used brain), the TUI snapshots
# (they share one fixed home path, which shows on screen, so two workers must not copy into it at
# once). Paths under
# tests/ as in SLOW. Every other test is a unit of its own, given to whichever worker is free.
XDIST_GROUPS = (
    "attacks/test_tamper_every_cell.py",
    "attacks/test_brain_file_attacks.py",
    "packaging/",
    "tui/test_tui_snapshots.py",
)


def _xdist_unit(nodeid: str) -> str:
    """The unit of work a test belongs to: its group's path, else the test itself."""
    where = nodeid.removeprefix("tests/")
    return next((group for group in XDIST_GROUPS if where.startswith(group)), nodeid)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's own `--dist loadgroup` (marks) silently stopped grouping with pytest 9.2
    (pytest-xdist issue 1386); this scheduler groups by XDIST_GROUPS instead. It stands in for
    `--dist load` only (the script's); another mode asked for on the command line is xdist's own."""
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupedScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return _xdist_unit(nodeid)

    return GroupedScheduling(config, log)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    tests = REPO / "tests"
    for item in items:
        where = Path(item.path).relative_to(tests).as_posix()
        if where.split("/", 1)[0] in REAL_PROCESS_FOLDERS:
            item.add_marker(pytest.mark.real_process)
        if where.startswith(SLOW):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def real_process(request: pytest.FixtureRequest) -> Iterator[bool]:
    """`run_aimos` runs a real `python -m aimos` subprocess for tests marked `real_process`, and
    calls the CLI in-process for the rest (tests/support/cli.py says how and when)."""
    marked = request.node.get_closest_marker("real_process") is not None
    aimos_cli_support.real_process_test = marked
    try:
        yield marked
    finally:
        aimos_cli_support.real_process_test = False


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test: AIMOS_HOME and the XDG user dirs point into a fresh temporary directory of its
    own (outside ``tmp_path``, which stays the test's). Returns that AIMOS_HOME."""
    env = _isolated_env(tmp_path_factory.mktemp("isolated"))
    # the user's cache holds only what aimos can make again (the embedding model's files found to be
    # the pinned ones: half a second of hashing): one per worker, not one per test
    env["XDG_CACHE_HOME"] = str(tmp_path_factory.getbasetemp() / "shared-xdg-cache")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return Path(env["AIMOS_HOME"])


@pytest.fixture
def aimos_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    pass_file = tmp_path / "passphrase"
    pass_file.write_text(PASSPHRASE + "\n")
    pass_file.chmod(0o600)
    monkeypatch.setenv("AIMOS_HOME", str(home))
    monkeypatch.setenv("AIMOS_PASSPHRASE_FILE", str(pass_file))
    monkeypatch.delenv("AIMOS_KEYSTORE", raising=False)
    return home


KEYSTORES = [pytest.param("os", marks=pytest.mark.keychain, id="os"), pytest.param("file", id="file")]


@pytest.fixture(params=KEYSTORES)
def keystore(request: pytest.FixtureRequest, aimos_home: Path) -> str:
    """ "os" (the real Secret Service; keychain-marked) or "file" (aimos's own file keystore): a
    test that asks for it runs once with each."""
    return str(request.param)


@dataclass
class InProcessBrain:
    """An installed brain opened in-process: writer connection, keystore, signers."""

    home: Path
    conn: object
    keystore: object
    brain_id: str
    master: object
    agent: object
    housekeeper: object


@pytest.fixture(scope="session")
def in_process_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The AIMOS_HOME of a brain installed once per session (per worker) in-process, as the `brain`
    fixture's brain is: the file keystore, no guides, PASSPHRASE."""
    from aimos.installer.setup import InstallOptions, install

    home = tmp_path_factory.mktemp("in-process-template") / "home"
    home.mkdir(mode=0o700)
    saved = os.environ.get("AIMOS_HOME")
    os.environ["AIMOS_HOME"] = str(home)
    try:
        install(InstallOptions(keystore="file", guides=False), PASSPHRASE, int(time.time()))
    finally:
        if saved is None:
            os.environ.pop("AIMOS_HOME", None)
        else:
            os.environ["AIMOS_HOME"] = saved
    return home


@pytest.fixture
def brain(aimos_home: Path, in_process_template: Path) -> Iterator[InProcessBrain]:
    """A brain installed with the file keystore (a byte-for-byte copy of the session's in-process
    install: brain file, anchors, keystore), opened with the writer's connection."""
    from aimos.identity.epochs import load_signer
    from aimos.identity.keystore import open_keystore
    from aimos.identity.master import unlock_master
    from aimos.store.connection import open_writer, seal_with
    from aimos.vocabulary import HOUSEKEEPER

    shutil.copytree(in_process_template, aimos_home, dirs_exist_ok=True)
    now = int(time.time())
    conn = open_writer()
    ((cell,),) = conn.execute("SELECT value FROM brain_meta WHERE key = 'brain_id'").fetchall()
    found_id = cell_str(cell)
    keystore = open_keystore("file", found_id)
    master = unlock_master(conn, keystore, PASSPHRASE)
    agent = load_signer(conn, keystore, "cli", now)
    housekeeper = load_signer(conn, keystore, HOUSEKEEPER, now)
    seal_with(conn, housekeeper)  # writes in tests are sealed as aimos's own are
    try:
        yield InProcessBrain(aimos_home, conn, keystore, found_id, master, agent, housekeeper)
    finally:
        conn.close()


@pytest.fixture(scope="session")
def brain_template(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A factory: the AIMOS_HOME of a brain installed (once per session) with the file keystore
    and the given passphrase, by a real `aimos install --yes --keystore file`."""
    made: dict[str, Path] = {}

    def template(passphrase: str) -> Path:
        if passphrase not in made:
            root = tmp_path_factory.mktemp("template")
            home = root / "home"
            home.mkdir(mode=0o700)
            pass_file = root / "passphrase"
            pass_file.write_text(passphrase + "\n")
            pass_file.chmod(0o600)
            run_aimos(
                "install",
                "--yes",
                "--no-guides",
                "--keystore",
                "file",
                env={"AIMOS_HOME": str(home), PASSPHRASE_ENV: str(pass_file)},
                unset=("AIMOS_KEYSTORE",),
            ).ok()
            made[passphrase] = home
        return made[passphrase]

    return template


@pytest.fixture
def passphrase(aimos_home: Path) -> str:
    """The master passphrase the `aimos_home` fixture wrote to its 0600 passphrase file."""
    return Path(os.environ[PASSPHRASE_ENV]).read_text("utf-8").rstrip("\r\n")


@pytest.fixture
def installed(aimos_home: Path, passphrase: str, brain_template: Any) -> Path:
    """AIMOS_HOME (already exported) holding an installed brain: a byte-for-byte copy of the
    session's template home (brain file, anchors, file keystore), which keeps the suites fast."""
    shutil.copytree(brain_template(passphrase), aimos_home, dirs_exist_ok=True)
    return aimos_home
