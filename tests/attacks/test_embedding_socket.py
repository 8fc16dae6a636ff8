"""The housekeeper's embedding socket (aimos/meaning/serve.py) against a hostile local client, and
its client against a socket that is not what it should be.

A server with the real model answers on the home's socket; each attack is made with a raw Unix
socket: garbage, a huge declared length, an empty or non-UTF-8 question, a slow client that sends
a byte at a time, a crowd of idle connections, a client that leaves mid-request. Each is refused or
cut, and the server still answers a good question afterwards with the very vector the model gives.
The client (``ask``) takes nothing from a socket that is not its user's private one, nor an answer
that is not the pinned model's finite vector: it returns None and the recall loads the model."""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from aimos.meaning import model, serve
from aimos.meaning.serve import LENGTH, MAX_CONNECTIONS, MAX_TEXT_BYTES, REFUSED, EmbeddingServer

pytestmark = pytest.mark.timeout(120)

QUESTION = "which dentist do I see"


@pytest.fixture
def server(aimos_home: Path) -> Iterator[EmbeddingServer]:
    lent = EmbeddingServer(model.load())
    lent.start()
    try:
        yield lent
    finally:
        lent.close()


def connect(path: Path) -> socket.socket:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(10)
    conn.connect(str(path))
    return conn


def reply(conn: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    got = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := conn.recv(65536):
            got += chunk
    return got


def assert_still_serving(lent: EmbeddingServer) -> None:
    vector = serve.ask(QUESTION, timeout=10)
    assert vector is not None, "the server no longer answers"
    assert np.array_equal(vector, model.load().query(QUESTION))


def test_a_question_gets_the_models_own_vector(server: EmbeddingServer) -> None:
    assert_still_serving(server)
    assert server.answered == 1
    folder = server.path.parent
    assert (server.path.stat().st_mode & 0o777, folder.stat().st_mode & 0o777) == (0o600, 0o700)


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"\xff\xff\xff\xff" + b"A" * 64,  # a length of 4 GiB
        LENGTH.pack(MAX_TEXT_BYTES + 1) + b"A" * 64,
        LENGTH.pack(0),
        LENGTH.pack(4) + b"\xff\xfe\xfd\xfc",  # not UTF-8
        LENGTH.pack(3) + b"   ",  # nothing to embed
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
    ],
    ids=["4GiB", "over-max", "empty", "not-utf8", "blank", "http"],
)
def test_a_bad_request_is_refused_and_the_server_goes_on(
    server: EmbeddingServer, request_bytes: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused as soon as it is read, not when the connection's time is up: with a minute's time
    (the client waits 10 s) the refusal still comes, and the client's side is kept open."""
    monkeypatch.setattr(serve, "CONNECTION_SECONDS", 60.0)
    with connect(server.path) as conn:
        with contextlib.suppress(OSError):  # the server may close before it has read it all
            conn.sendall(request_bytes)
        got = reply(conn)
    assert got == bytes([REFUSED]), got[:20]
    assert server.answered == 0 and server.refused == 1
    assert_still_serving(server)


def test_a_client_that_leaves_mid_request_costs_nothing(server: EmbeddingServer) -> None:
    for cut in (1, 3, LENGTH.size + 2):
        with connect(server.path) as conn:
            conn.sendall(serve.request_bytes(QUESTION)[:cut])
    assert_still_serving(server)


def test_a_slow_client_is_cut_off(server: EmbeddingServer) -> None:
    """One byte every 0.2 s of a 100-byte question: the server closes the connection long before
    the last byte (it gives a connection CONNECTION_SECONDS in all, not per byte)."""
    sent = 0
    with connect(server.path) as conn:
        conn.sendall(LENGTH.pack(100))
        try:
            for _ in range(100):
                conn.sendall(b"a")
                sent += 1
                time.sleep(0.2)
                conn.setblocking(False)
                try:
                    if conn.recv(16) in (b"", bytes([REFUSED])):
                        break
                except BlockingIOError:
                    pass
                finally:
                    conn.setblocking(True)
        except OSError:
            pass  # the server closed: a send fails
    assert sent < 100, "the server waited for every byte of a slow client"
    assert server.answered == 0
    assert_still_serving(server)


def test_a_crowd_of_idle_connections_neither_blocks_nor_kills_the_server(server: EmbeddingServer) -> None:
    """More idle connections than the server serves at once: the ones past the limit are closed at
    once, a question meanwhile is not answered (the recall loads the model itself), and once the
    idle ones are cut the server answers again."""
    idle = [connect(server.path) for _ in range(MAX_CONNECTIONS)]
    try:
        time.sleep(0.3)  # every one accepted and holding its slot
        extra = connect(server.path)
        with extra:
            assert reply(extra) == b"", "a connection past the limit was served"
        assert serve.ask(QUESTION, timeout=0.5) is None
    finally:
        for conn in idle:
            conn.close()
    deadline = time.monotonic() + 10
    while serve.ask(QUESTION, timeout=1) is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert_still_serving(server)
    assert server.refused >= 2


def test_many_hostile_clients_at_once_leave_it_serving(server: EmbeddingServer) -> None:
    attacks = [
        b"\x00\x00\x40\x00" + os.urandom(512),
        os.urandom(16),
        LENGTH.pack(5) + b"\xc0\xc1\xf5\xf6\xf7",
    ]

    def attack(data: bytes) -> None:
        with contextlib.suppress(OSError), connect(server.path) as conn:
            conn.sendall(data)
            reply(conn)

    threads = [threading.Thread(target=attack, args=(attacks[i % 3],)) for i in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert server.answered == 0
    assert_still_serving(server)


def test_a_stale_socket_left_by_a_killed_server_is_replaced(aimos_home: Path) -> None:
    path = serve.socket_path()
    path.parent.mkdir(parents=True, mode=0o700)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # the file stays, nobody listens
    assert serve.ask(QUESTION) is None
    lent = EmbeddingServer(model.load())
    lent.start()
    try:
        assert_still_serving(lent)
    finally:
        lent.close()
    assert not path.exists(), "a closed server leaves its socket behind"


# --- the client against what is not its private socket ---------------------------------------------


def test_the_client_refuses_a_socket_in_a_folder_others_can_enter(server: EmbeddingServer) -> None:
    server.path.parent.chmod(0o755)
    try:
        assert serve.ask(QUESTION) is None
        assert server.answered == 0
    finally:
        server.path.parent.chmod(0o700)


def test_the_client_refuses_a_file_in_the_sockets_place(aimos_home: Path) -> None:
    path = serve.socket_path()
    path.parent.mkdir(parents=True, mode=0o700)
    path.write_bytes(b"not a socket")
    assert serve.ask(QUESTION) is None


def fake_server(path: Path, answer: bytes) -> Iterator[None]:
    """A socket at ``path`` that reads one request and sends ``answer``."""
    path.parent.mkdir(parents=True, mode=0o700, exist_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(4)

    def answer_once() -> None:
        with contextlib.suppress(OSError):
            conn, _ = listener.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(answer)

    thread = threading.Thread(target=answer_once, daemon=True)
    thread.start()
    try:
        yield
    finally:
        listener.close()
        thread.join(timeout=5)
        path.unlink(missing_ok=True)


NAME = model.MODEL_NAME.encode()
GOOD_FLOATS = np.full(model.DIMS, 0.05, dtype="<f4").tobytes()


@pytest.mark.parametrize(
    "answer",
    [
        bytes([0, len(NAME)]) + b"x" * len(NAME) + GOOD_FLOATS,  # another model
        bytes([0, len(NAME)]) + NAME + np.full(model.DIMS, np.nan, dtype="<f4").tobytes(),
        bytes([0, len(NAME)]) + NAME + np.full(model.DIMS, 3e38, dtype="<f4").tobytes(),  # overflows
        bytes([0, len(NAME)]) + NAME + GOOD_FLOATS[:-4],  # short
        bytes([REFUSED]),
        b"",
    ],
    ids=["other-model", "nan", "overflow", "short", "refused", "nothing"],
)
def test_the_client_takes_no_answer_but_the_pinned_models_vector(aimos_home: Path, answer: bytes) -> None:
    with contextlib.contextmanager(fake_server)(serve.socket_path(), answer):
        assert serve.ask(QUESTION, timeout=2) is None


def test_a_silent_socket_costs_the_client_its_timeout_only(aimos_home: Path) -> None:
    path = serve.socket_path()
    path.parent.mkdir(parents=True, mode=0o700)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)  # never accepts, never answers
    try:
        assert serve.ask(QUESTION, timeout=0.3) is None
    finally:
        listener.close()


def test_the_request_is_cut_where_the_model_stops_reading() -> None:
    long = "ä" * (model.EMBEDDED_CHARS + 500)
    data = serve.request_bytes(long)
    (size,) = struct.unpack(">I", data[:4])
    assert size == len(data) - 4 <= MAX_TEXT_BYTES
    assert data[4:].decode() == long[: model.EMBEDDED_CHARS]


def test_a_closed_server_leaves_no_thread_behind(aimos_home: Path) -> None:
    """Closing the server (the housekeeper stopping) ends the connections it still serves, an idle
    client's included, and waits for their threads: none is left waiting out its client."""
    lent = EmbeddingServer(model.load())
    lent.start()
    idle = [connect(lent.path) for _ in range(2)]
    try:
        deadline = time.monotonic() + 10
        while _ours() < 3 and time.monotonic() < deadline:  # the accept loop and both connections
            time.sleep(0.02)
        assert _ours() == 3, [t.name for t in threading.enumerate()]
        lent.close()
        assert _ours() == 0, [t.name for t in threading.enumerate()]
        for conn in idle:
            assert reply(conn) in (b"", bytes([REFUSED])), "an idle client's connection was not ended"
    finally:
        for conn in idle:
            conn.close()
        lent.close()


def _ours() -> int:
    return sum(t.name.startswith("aimos-embed") and t.is_alive() for t in threading.enumerate())
