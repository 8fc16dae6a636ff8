"""The model lent to the person's other processes: the running housekeeper keeps the model loaded
and embeds questions for them over a private Unix socket, so a command-line recall
does not pay the model's load (``ask``; the housekeeper runs ``EmbeddingServer``).

The socket is ``embed.sock`` in a folder of the user's runtime folder (0700; the socket 0600:
``socket_path``), and
the server answers only a peer of its own user (SO_PEERCRED where the OS has it). One question
per connection:

    request  4-byte big-endian length N (1..MAX_TEXT_BYTES), then N bytes of UTF-8 text
    answer   one status byte: OK, then a 1-byte length L, the model's name (L ASCII bytes) and
             DIMS little-endian float32; or REFUSED, and the connection closes

A connection lives at most CONNECTION_SECONDS on the server, however slowly its bytes come, and
at most MAX_CONNECTIONS are served at once (one more is closed at once): a client that sends
garbage, a huge length or one byte a second costs the server a thread for two seconds at most,
and never its life. A client asks within ASK_SECONDS and takes nothing but a vector of the pinned
model, finite, of the right size; anything else is ``None`` (the caller loads the model itself).
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from aimos.meaning.model import DIMS, EMBEDDED_CHARS, MODEL_NAME

if TYPE_CHECKING:
    from aimos.meaning.model import Embedder
    from aimos.meaning.vectors import Floats

# the model reads no more than EMBEDDED_CHARS characters of a text: a longer request is refused
MAX_TEXT_BYTES: Final = 4 * EMBEDDED_CHARS
CONNECTION_SECONDS: Final = 2.0  # a connection's whole life on the server
MAX_CONNECTIONS: Final = 4  # served at once; one more is closed unanswered
ASK_SECONDS: Final = 1.0  # a client's whole wait (the question takes ~20 ms; a batch in progress more)
OK: Final = 0
REFUSED: Final = 1
LENGTH = struct.Struct(">I")
PEER = struct.Struct("3i")  # struct ucred: pid, uid, gid
ANSWER_BYTES: Final = 1 + 1 + len(MODEL_NAME) + 4 * DIMS


def socket_path() -> Path:
    """The socket of this brain's housekeeper (paths.embedding_socket_path: where aimos keeps its
    files is decided there, so a purge finds it too)."""
    from aimos.paths import embedding_socket_path

    return embedding_socket_path()


def _uid() -> int:
    """This process's user id (-1 where the OS has none: no socket is trusted there)."""
    geteuid = getattr(os, "geteuid", None)
    return int(geteuid()) if geteuid is not None else -1


def _read_exact(conn: socket.socket, n: int, deadline: float) -> bytes:
    """``n`` bytes from ``conn`` before ``deadline`` (time.monotonic), else TimeoutError or
    ConnectionError (the peer closed first)."""
    got = bytearray()
    while len(got) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the peer is too slow")
        conn.settimeout(left)
        chunk = conn.recv(n - len(got))
        if not chunk:
            raise ConnectionError("the peer closed the connection")
        got += chunk
    return bytes(got)


def request_bytes(text: str) -> bytes:
    """A question's request: the text as far as the model reads it (as Embedder cuts it)."""
    data = text[:EMBEDDED_CHARS].encode("utf-8", "replace")
    return LENGTH.pack(len(data)) + data


def answer_bytes(vector: Floats) -> bytes:
    import numpy as np

    name = MODEL_NAME.encode("ascii")
    return bytes([OK, len(name)]) + name + np.asarray(vector, dtype="<f4").tobytes()


def read_answer(data: bytes) -> Floats | None:
    """The vector an answer carries: the pinned model's, DIMS finite floats; else None."""
    import numpy as np

    name = MODEL_NAME.encode("ascii")
    if len(data) != ANSWER_BYTES or data[0] != OK or data[1] != len(name) or data[2 : 2 + len(name)] != name:
        return None
    vector = np.frombuffer(data, dtype="<f4", offset=2 + len(name)).astype(np.float32)
    # the model's vectors are L2-normalised: no component is past 1 (and a NaN is past nothing)
    if not np.all(np.abs(vector) <= 1.0):
        return None
    return vector


def _private_socket(path: Path) -> bool:
    """``path`` is a socket of this user in a folder only this user can enter."""
    try:
        st, folder = path.lstat(), path.parent.lstat()
    except OSError:
        return False
    uid = _uid()
    return uid >= 0 and (
        stat.S_ISSOCK(st.st_mode)
        and st.st_uid == uid
        and folder.st_uid == uid
        and stat.S_ISDIR(folder.st_mode)
        and not folder.st_mode & 0o077
    )


def ask(text: str, *, timeout: float = ASK_SECONDS) -> Floats | None:
    """The question's vector from the running housekeeper, or None (no housekeeper, a socket that is
    not this user's private one, no answer in time, anything unexpected). Never raises, says nothing."""
    path = socket_path()
    if not _private_socket(path):
        return None
    deadline = time.monotonic() + timeout
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout)
            conn.connect(str(path))
            conn.sendall(request_bytes(text))
            return read_answer(_read_exact(conn, ANSWER_BYTES, deadline))
    except (OSError, ValueError):  # TimeoutError and ConnectionError are OSErrors
        return None


class EmbeddingServer:
    """Answers questions with ``embedder`` on the socket at ``path`` (socket_path()) from a thread of
    its own, one thread per connection, until ``close``. ``log`` is told what went wrong with a
    connection (one line, no text of the request); ``answered`` counts the questions answered."""

    def __init__(
        self,
        embedder: Embedder,
        path: Path | None = None,
        *,
        log: Callable[[str], None] | None = None,
        after: Callable[[], None] | None = None,
    ) -> None:
        self.embedder = embedder
        self.path = path or socket_path()
        self.answered = 0
        self.refused = 0
        self._log = log or (lambda _text: None)
        self._after = after  # told after each answer (the housekeeper: make the vectors now)
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._stop = threading.Event()
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._open: dict[socket.socket, threading.Thread] = {}  # the connections being served
        self._open_lock = threading.Lock()

    def start(self) -> None:
        """Bind the socket (a stale one left by a killed server is replaced) and serve. OSError when
        it cannot be bound (a path longer than the OS allows, say)."""
        from aimos.paths import ensure_private_dir

        ensure_private_dir(self.path.parent)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(str(self.path))  # in a 0700 folder: no one else reaches it meanwhile
            os.chmod(self.path, 0o600)
            listener.listen(16)
            listener.settimeout(0.5)  # to see close() in time
        except BaseException:
            listener.close()
            raise
        self._listener = listener
        self._thread = threading.Thread(target=self._accept, name="aimos-embed-socket", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop accepting, end the connections still being served (a slow or idle client's wait is
        cut short) and wait for their threads, so a closed server leaves no thread behind."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._open_lock:
            serving = list(self._open.items())
        for conn, worker in serving:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            worker.join(timeout=5)
        if self._listener is not None:
            self._listener.close()
            self._listener = None
            with contextlib.suppress(OSError):
                self.path.unlink()

    def _accept(self) -> None:
        assert self._listener is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError as exc:  # out of descriptors, say: wait, never leave
                self._log(f"embedding socket: accept failed: {type(exc).__name__}")
                self._stop.wait(0.1)
                continue
            if not self._slots.acquire(blocking=False):
                self.refused += 1
                conn.close()  # busy with MAX_CONNECTIONS already: the client loads the model itself
                continue
            try:
                worker = threading.Thread(
                    target=self._serve, args=(conn,), name="aimos-embed-connection", daemon=True
                )
                with self._open_lock:
                    self._open[conn] = worker
                worker.start()
            except BaseException:
                with self._open_lock:
                    self._open.pop(conn, None)
                conn.close()
                self._slots.release()
                self._log("embedding socket: could not start a thread for a connection")

    def _serve(self, conn: socket.socket) -> None:
        try:
            with conn:
                answer = self._answer(conn)
                if answer is None:
                    self.refused += 1
                    with contextlib.suppress(OSError):
                        conn.settimeout(0.1)
                        conn.sendall(bytes([REFUSED]))
                    return
                self.answered += 1  # (counted first: a client may look as soon as it has the answer)
                conn.sendall(answer)
            if self._after is not None:
                self._after()
        except Exception as exc:  # a connection's trouble is its own: the server goes on
            self._log(f"embedding socket: {type(exc).__name__} on a connection")
        finally:
            with self._open_lock:
                self._open.pop(conn, None)
            self._slots.release()

    def _answer(self, conn: socket.socket) -> bytes | None:
        deadline = time.monotonic() + CONNECTION_SECONDS
        if not self._same_user(conn):
            return None
        try:
            (size,) = LENGTH.unpack(_read_exact(conn, LENGTH.size, deadline))
            if not 1 <= size <= MAX_TEXT_BYTES:
                return None
            text = _read_exact(conn, size, deadline).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        if not text.strip():
            return None
        from aimos.errors import ModelUnavailableError

        try:
            vector = self.embedder.query(text)
        except ModelUnavailableError:
            return None
        conn.settimeout(max(0.05, deadline - time.monotonic()))
        return answer_bytes(vector)

    @staticmethod
    def _same_user(conn: socket.socket) -> bool:
        option = getattr(socket, "SO_PEERCRED", None)
        if option is None:  # no peer credentials here: the 0700 folder and 0600 socket stand
            return True
        try:
            _pid, uid, _gid = PEER.unpack(conn.getsockopt(socket.SOL_SOCKET, option, PEER.size))
        except OSError:
            return False
        return bool(uid == os.geteuid())
