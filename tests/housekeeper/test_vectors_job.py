"""Vectors made after the commit (issue 37, item 1) and a model loaded once (item 3): the
housekeeper's vectors job, its model lent on the embedding socket, and a command-line recall that
asks the socket instead of loading the model, or loads it itself when no housekeeper runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cells import cell_int
from support.cli import run_aimos
from support.housekeeper import brain_file, hk, read_only, read_pid_file, wait_for

from aimos.housekeeper.jobs import vectors as vectors_job
from aimos.meaning import model, serve
from aimos.meaning.serve import EmbeddingServer

pytestmark = pytest.mark.timeout(180)

MEMORIES = (
    "Dr. Okafor fills my cavities every spring",
    "I drink coffee every morning before work",
    "the otter sleeps under the boathouse",
    "my sister lives in Lisbon near the river",
    "the car needs new tyres before winter",
)


def vector_rows(home: Path) -> int:
    with read_only(brain_file(home)) as conn:
        return cell_int(conn.execute("SELECT COUNT(*) FROM memory_vectors").fetchall()[0][0])


def save_all(texts: tuple[str, ...] = MEMORIES) -> None:
    for text in texts:
        run_aimos("save", text).ok()


def test_a_cli_save_makes_no_vector(installed: Path) -> None:
    """The signed save path does not wait for the model: the vector comes later."""
    save_all(MEMORIES[:2])
    assert vector_rows(installed) == 0


def test_the_vectors_job_is_bounded_per_run(installed: Path) -> None:
    save_all()
    assert vectors_job.run(per_run=3) == 3
    assert vector_rows(installed) == 3
    assert vectors_job.run(per_run=3) == 2
    assert vectors_job.run(per_run=3) == 0
    assert vector_rows(installed) == len(MEMORIES)


def test_the_vectors_job_does_nothing_without_the_model(
    installed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    save_all(MEMORIES[:2])
    monkeypatch.setenv(model.DISABLE_ENV, "off")
    assert vectors_job.run() == 0
    assert vector_rows(installed) == 0


# --- a command-line recall and the socket ------------------------------------------------------------

# `aimos recall` in a new process, then whether that process loaded the model (a line on stderr)
RECALL_AND_SAY = (
    "import sys\n"
    "from aimos.cli.app import main\n"
    "try:\n"
    "    main(sys.argv[1:])\n"
    "except SystemExit as exc:\n"
    "    code = exc.code\n"
    "from aimos.meaning import model\n"
    "sys.stderr.write('model loaded here: %s\\n' % (model.loaded() is not None))\n"
    "sys.exit(code)\n"
)


def recall_in_new_process(query: str, **env: str) -> tuple[subprocess.CompletedProcess[str], bool]:
    done = subprocess.run(
        [sys.executable, "-c", RECALL_AND_SAY, "recall", query],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert lines and lines[-1].startswith("model loaded here: "), done.stderr
    return done, lines[-1].endswith("True")


def said_besides(done: subprocess.CompletedProcess[str]) -> list[str]:
    """What the recall wrote to stderr besides its receipt line (and the wrapper's own line)."""
    return [line for line in done.stderr.splitlines()[:-1] if not line.startswith("receipt ")]


@pytest.fixture
def lent(installed: Path) -> Iterator[EmbeddingServer]:
    """The model lent on the home's socket by this process (as the housekeeper lends it)."""
    server = EmbeddingServer(model.load())
    server.start()
    try:
        yield server
    finally:
        server.close()


def test_a_cli_recall_asks_the_socket_and_does_not_load_the_model(lent: EmbeddingServer) -> None:
    save_all(MEMORIES[:2])
    assert vectors_job.run() == 2
    done, loaded_here = recall_in_new_process("cavities every spring")
    assert lent.answered == 1 and not loaded_here, done.stderr
    assert "Dr. Okafor" in done.stdout, done.stdout + done.stderr
    assert said_besides(done) == [], done.stderr  # nothing noisy about the socket


def test_prepare_takes_the_sockets_vector_as_the_model_would_make_it(lent: EmbeddingServer) -> None:
    """A process that has not loaded the model asks the socket, and gets the vector it would
    have made itself; it makes no missing vector then (the housekeeper's job does)."""
    from aimos.meaning.index import prepare
    from aimos.store.connection import open_reader

    save_all(MEMORIES[:2])
    model.forget()  # this process has not loaded it (the server keeps its own)
    conn = open_reader()
    try:
        prepared = prepare(conn, "which dentist do I see")
    finally:
        conn.close()
    assert model.loaded() is None and lent.answered == 1
    assert prepared is not None and prepared.model == model.MODEL_NAME and prepared.made == []
    assert (prepared.vector == lent.embedder.query("which dentist do I see")).all()


def test_without_a_socket_the_cli_loads_the_model_quietly(installed: Path) -> None:
    save_all(MEMORIES[:2])
    done, loaded_here = recall_in_new_process("cavities every spring")
    assert loaded_here and "Dr. Okafor" in done.stdout, done.stdout + done.stderr
    assert said_besides(done) == [], done.stderr


def test_words_only_neither_asks_nor_loads(lent: EmbeddingServer) -> None:
    save_all(MEMORIES[:2])
    done, loaded_here = recall_in_new_process("cavities", **{model.DISABLE_ENV: "off"})
    assert lent.answered == 0 and not loaded_here
    assert "Dr. Okafor" in done.stdout, done.stdout


# --- the housekeeper process ------------------------------------------------------------------------


def test_the_running_housekeeper_makes_vectors_and_lends_its_model(installed: Path, reaper: Any) -> None:
    save_all(MEMORIES[:3])
    hk("start").ok()
    pid = read_pid_file(installed)
    reaper.watch(pid)
    path = serve.socket_path()
    wait_for(lambda: path.exists() and vector_rows(installed) == 3, "the socket and three vectors", 90)
    assert path.stat().st_mode & 0o777 == 0o600
    save_all(MEMORIES[3:4])  # a save while it runs: its vector follows on the next run
    done, loaded_here = recall_in_new_process("cavities every spring")
    assert not loaded_here and "Dr. Okafor" in done.stdout, done.stdout + done.stderr
    wait_for(lambda: vector_rows(installed) == 4, "the vector of the memory saved meanwhile", 60)
    report = json.loads(hk("status", "--json").ok().out)
    assert report["ready"] is True, report
    hk("stop").ok()
    assert not path.exists(), "the stopped housekeeper left its socket"
    log = (installed / "logs" / "housekeeper.log").read_text("utf-8")
    assert "lending the embedding model" in log and "Traceback" not in log, log
