"""The test harness itself: the in-process CLI runner gives what a real `aimos` process gives and
puts back everything it swaps, and each pytest-xdist worker has a Secret Service of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import (
    Result,
    run_aimos,
    run_aimos_in_process,
    run_aimos_process,
    table_counts,
)


def _same(a: Result, b: Result) -> None:
    assert (a.code, a.out, a.err) == (b.code, b.out, b.err), f"{a.describe()}\n-- against --\n{b.describe()}"


def test_in_process_and_a_real_process_agree(installed: Path, tmp_path: Path) -> None:
    """The same commands, in-process and as `python -m aimos`: the same exit code, stdout and
    stderr, byte for byte (ids and times aside, which each save makes anew)."""
    for args in (
        ("--version",),
        ("--help",),
        ("recall", "--help"),
        ("list", "--json"),
        ("show", "not-an-id"),
        ("save", "--clearance", "banana", "x"),
        ("recall",),
        ("verify", "--bogus-flag"),
    ):
        _same(run_aimos_in_process(*args), run_aimos_process(*args))
    texts = [f"note {n} \x1b[31m with an escape\r\nand a second line \u00e9" for n in (1, 2)]
    a = run_aimos_in_process("save", "-", input=texts[0].encode()).ok()
    b = run_aimos_process("save", "-", input=texts[1].encode()).ok()
    assert a.err == b.err == "" and len(a.out) == len(b.out) == 37, (a.describe(), b.describe())
    # each reads back the other's save, exactly as it was given (bytes in, no newline translation)
    shown_b = run_aimos_in_process("show", b.out.strip(), "--json").json()
    shown_a = run_aimos_process("show", a.out.strip(), "--json").json()
    assert [shown_a["value"], shown_b["value"]] == texts
    assert table_counts(installed / "brain.sqlite3")["memories"] == 2


def test_the_runner_puts_back_what_it_swaps(installed: Path, tmp_path: Path) -> None:
    before = (dict(os.environ), os.getcwd(), sys.stdin, sys.stdout, sys.stderr)
    umask = os.umask(0o022)
    os.umask(umask)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = run_aimos_in_process(
        "save", "-", input="from stdin", env={"AIMOS_TEST_ONLY": "1"}, unset=("HOME",), cwd=elsewhere
    )
    result.ok()
    assert (dict(os.environ), os.getcwd(), sys.stdin, sys.stdout, sys.stderr) == before
    assert os.umask(umask) == umask  # main() sets 077 for its own run only
    # the command ran with its environment, not the test's: an unknown AIMOS_HOME is seen as such
    missing = run_aimos_in_process("list", env={"AIMOS_HOME": str(tmp_path / "none")})
    assert missing.code == 3 and "aimos install" in missing.err, missing.describe()
    assert os.environ["AIMOS_HOME"] == str(installed)


def test_what_only_a_process_can_show_runs_in_one(installed: Path) -> None:
    """A variable read at start-up (here: a keyring backend) sends the call to a real process, where
    it takes effect; in-process it would be ignored, since keyring chose its backend long ago."""
    probe = "import keyring, sys; print(type(keyring.get_keyring()).__module__)"
    chosen = subprocess.run(
        [sys.executable, "-c", probe],
        env={**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert chosen == "keyring.backends.fail"
    result = run_aimos(
        "install", "--yes", "--keystore", "os", "--no-guides",
        env={"AIMOS_HOME": str(installed.parent / "second"), "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"},
    )  # fmt: skip
    assert result.code == 6 and "keychain" in result.err.lower(), result.describe()


def test_each_worker_has_a_secret_service_of_its_own() -> None:
    """Under pytest-xdist (scripts/test-in-keyring-session.sh) a worker's items live on its own
    session bus: an item stored here is not on the run's shared bus. Without workers, the run's
    own bus is the one in use."""
    import keyring

    shared = os.environ.get("AIMOS_TESTS_SHARED_BUS")
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not (worker and os.environ.get("AIMOS_TESTS_WORKER_KEYRING") == "1"):
        assert shared is None, "a bus of its own was started outside a keyring-per-worker run"
        return
    assert shared and shared != os.environ["DBUS_SESSION_BUS_ADDRESS"]
    service, name = "aimos:worker-isolation", f"probe-{worker}-{os.getpid()}"
    keyring.set_password(service, name, "here")
    try:
        probe = f"import json, keyring, sys; print(json.dumps(keyring.get_password({service!r}, {name!r})))"
        on_shared = subprocess.run(
            [sys.executable, "-c", probe],
            env={**os.environ, "DBUS_SESSION_BUS_ADDRESS": shared},
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        assert json.loads(on_shared.stdout) is None, "the worker's item is on the shared bus"
        assert keyring.get_password(service, name) == "here"
    finally:
        keyring.delete_password(service, name)


@pytest.mark.parametrize("code", [0, 2, 3])
def test_exit_codes_come_through(installed: Path, code: int) -> None:
    args = {0: ("list",), 2: ("list", "--no-such-flag"), 3: ("show", "0" * 8)}[code]
    assert run_aimos_in_process(*args).code == run_aimos_process(*args).code == code


TESTS = Path(__file__).resolve().parents[1]
MAX_TEST_MODULE_LINES = 900  # the same cap as aimos's own modules (test_layers.MAX_LINES)
# scripts run by hand (`python tests/...`) that put their own folders on the path, as scripts must
SCRIPTS = {
    "vectors/generate_aimos_vectors.py",
    "vectors/generate_meaning_vectors.py",
    "vectors/v1_recall/generate.py",
}


def test_no_test_module_over_the_size_limit() -> None:
    sizes = {
        p.relative_to(TESTS).as_posix(): len(p.read_text("utf-8").splitlines()) for p in TESTS.rglob("*.py")
    }
    over = sorted(f"{p} ({n})" for p, n in sizes.items() if n > MAX_TEST_MODULE_LINES)
    assert not over, (
        f"over {MAX_TEST_MODULE_LINES} lines: split them (shared parts into tests/support/): {over}"
    )


def test_the_tests_share_helpers_through_the_support_package() -> None:
    """No test module edits sys.path to reach another folder's helpers (tests/ is on pytest's
    pythonpath: `support.<name>`), and a fixture every folder uses is defined once."""
    edits = sorted(
        p.relative_to(TESTS).as_posix()
        for p in TESTS.rglob("*.py")
        if "sys.path.insert(" in p.read_text("utf-8").replace('"sys.path.insert("', "")
        and p.relative_to(TESTS).as_posix() not in SCRIPTS
        and "fixtures" not in p.relative_to(TESTS).parts
        and p.name != "test_brain_v10.py"  # it imports the fixture's own make.py, a script
    )
    assert not edits, f"sys.path edited in {edits}: import shared helpers as support.<name>"
    keystores = sorted(
        p.relative_to(TESTS).as_posix()
        for p in TESTS.rglob("conftest.py")
        if "def keystore(" in p.read_text("utf-8")
    )
    assert keystores == ["conftest.py"], keystores
