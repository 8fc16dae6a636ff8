"""What recall by meaning costs, for `aimos eval perf`: the vectors of a large synthetic brain, their
bytes on disk, and a running housekeeper lending its model to cold command-line recalls.

Embedding 100,000 synthetic memories with the model would take most of an hour on two cores, and
the cost of the search does not depend on what the vectors say, only on how many there are and on
how many memories pass the channel's thresholds (each is then read and verified). So the vectors
of a perf brain are synthetic (``SyntheticMeaning``), stored through store/vectors.write under the
real model's name, and shaped like the model's: every vector shares one direction, which puts
unrelated texts near the model's 0.75 cosine, and adds the sum of random vectors of its words, so
a question made of a memory's words lands near it (and near memories that share those words), as
a paraphrase lands near its memory with the model.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aimos.vocabulary import HOUSEKEEPER

if TYPE_CHECKING:
    from aimos.meaning.vectors import Floats
    from aimos.store.connection import Connection

SHARED = 0.75  # the cosine the model puts unrelated texts at (0.70-0.80)
SEED = 37
SYNTHETIC_NOTE = (
    "the memories' vectors are synthetic (a shared direction plus random vectors of their words, under "
    "the real model's name): the search's cost depends on their number, not on what they say"
)


class SyntheticMeaning:
    """Deterministic stand-ins for the model's vectors of texts (see the module's note)."""

    def __init__(self, dims: int, seed: int = SEED) -> None:
        import numpy as np

        self.dims = dims
        self._rng = np.random.default_rng(seed)
        common = self._rng.standard_normal(dims)
        self._common = common / np.linalg.norm(common)
        self._words: dict[str, Floats] = {}

    def _word(self, word: str) -> Floats:
        import numpy as np

        found = self._words.get(word)
        if found is None:
            v = self._rng.standard_normal(self.dims)
            found = self._words[word] = (v / np.linalg.norm(v)).astype(np.float32)
        return found

    def vector(self, text: str) -> Floats:
        import numpy as np

        bag = np.zeros(self.dims, dtype=np.float32)
        for word in text.lower().split():
            if word.isalpha():
                bag += self._word(word)
        norm = float(np.linalg.norm(bag))
        v = SHARED**0.5 * self._common + ((1 - SHARED) ** 0.5 * bag / norm if norm else 0.0)
        out: Floats = (v / np.linalg.norm(v)).astype(np.float32)
        return out


def store_synthetic(conn: Connection, meaning: SyntheticMeaning, batch: int = 5000) -> int:
    """Give every memory of the brain a synthetic vector (under the model's name); how many."""
    from aimos.meaning.model import MODEL_NAME
    from aimos.meaning.vectors import pack
    from aimos.store import vectors
    from aimos.store.connection import write_transaction

    made = 0
    while waiting := vectors.pending(conn, MODEL_NAME, batch):
        with write_transaction(conn):
            vectors.write(conn, MODEL_NAME, [(r, pack(meaning.vector(t))) for r, t in waiting])
        made += len(waiting)
    return made


def synthetic_vectors(conn: Connection) -> tuple[SyntheticMeaning, dict[str, Any]]:
    """Every memory of the brain given a synthetic vector: the source of them (for the questions'
    vectors), and how long writing them and reading them into a matrix took, their bytes on disk
    and the note saying so."""
    from aimos.meaning.index import matrix
    from aimos.meaning.model import DIMS, MODEL_NAME

    synthetic = SyntheticMeaning(DIMS)
    started = time.perf_counter()
    store_synthetic(conn, synthetic)
    written = time.perf_counter()
    matrix(conn, MODEL_NAME, DIMS)  # read into the process's matrix once, as a first recall does
    return synthetic, {
        "vectors_seconds": round(written - started, 1),
        "matrix_read_seconds": round(time.perf_counter() - written, 3),
        "disk": vector_bytes(conn),
        "note": SYNTHETIC_NOTE,
    }


def vector_bytes(conn: Connection) -> dict[str, Any]:
    """The vectors' bytes in the brain file (SQLite's dbstat: the pages of memory_vectors and of
    any index of it), per vector row, and the stored vector's own bytes."""
    from aimos.meaning.model import DIMS, MODEL_NAME
    from aimos.store.queries import eval as queries

    rows, pages, payload = queries.vector_bytes(conn)
    return {
        "rows": rows,
        "bytes_on_disk": pages,
        "per_row_on_disk": round(pages / rows, 1) if rows else None,
        "per_row_payload": round(payload / rows, 1) if rows else None,
        "vector_bytes": 4 + DIMS,
        "model_name_bytes": len(MODEL_NAME),
    }


@contextlib.contextmanager
def housekeeper_lending(home: Path, env: dict[str, str], wait: float = 120.0) -> Iterator[bool]:
    """`aimos housekeeper run` on the scratch home at ``home`` for the block, once it lends its
    model on the socket and has no vector left to make (True), or not at all (False: no model here,
    or it did not come up in ``wait`` seconds). Stopped with SIGTERM at the end."""
    from aimos.meaning.model import MODEL_NAME
    from aimos.meaning.serve import socket_path
    from aimos.paths import using_home
    from aimos.store import vectors
    from aimos.store.connection import open_reader

    log = (home / "housekeeper-perf.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-c", "from aimos.cli.app import main; main()", HOUSEKEEPER, "run"],
        env=env,
        stdout=log,
        stderr=log,
    )
    with using_home(home):
        socket = socket_path()
    ready = False
    try:
        deadline = time.monotonic() + wait
        while process.poll() is None and time.monotonic() < deadline:
            if socket.exists():
                with using_home(home):
                    conn = open_reader()
                    try:
                        ready = not vectors.pending(conn, MODEL_NAME, 1)
                    finally:
                        conn.close()
                if ready:
                    break
            time.sleep(0.2)
        yield ready
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
