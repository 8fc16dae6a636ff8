"""Embeddings kept across evaluation runs: the model's vectors of the texts an evaluation embeds
(LoCoMo's turns and questions, the meaning probe's memories), so a rerun does not pay the model
again (LoCoMo's 4,124 development turns take two to three minutes on two cores).

The cache is an SQLite file per model under the evaluations' cache folder (`paths.cache_dir()`,
outside any brain), keyed by the model's name (which names its pinned file), the kind of text (e5
embeds a question and a passage with different prefixes) and the text's SHA-256; it holds float32
vectors as the model gave them. It serves evaluations only: a brain's vectors are always made by
the model (meaning/index), never read from here. Editing the file changes an evaluation's figures,
nothing else.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from aimos.store.connection import Connection
from aimos.store.queries.eval import cached_vectors, keep_vectors, make_vector_table

if TYPE_CHECKING:
    from aimos.meaning.model import Embedder
    from aimos.meaning.vectors import Floats

CACHE_FOLDER = "eval-embeddings"


def cache_path(model: str) -> Path:
    """Where the vectors of ``model`` are kept (the folder is made private on first use)."""
    from aimos import paths

    safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in model)
    return paths.cache_dir() / CACHE_FOLDER / f"{safe}.sqlite3"


def eval_embedder() -> tuple[CachedEmbedder | None, str | None]:
    """The model behind an evaluation's own vectors, answered from the cache where it can be, and
    None with the reason when the model does not load here. Call before any scratch home: the cache
    lives in the caller's home."""
    from aimos.errors import ModelUnavailableError
    from aimos.meaning.model import load

    try:
        embedder = load()
    except ModelUnavailableError as exc:
        return None, str(exc)
    return CachedEmbedder(embedder, cache_path(embedder.name)), None


class CachedEmbedder:
    """The model's ``query`` and ``passages``, answered from the cache where it holds the text's
    vector; what the model makes is added. ``made``: how many texts of each kind ('passage',
    'query') the model embedded."""

    def __init__(self, embedder: Embedder, path: Path):
        from aimos.paths import ensure_private_dir

        self.embedder = embedder
        self.name = embedder.name
        self.dims = embedder.dims
        self.made = {"passage": 0, "query": 0}
        for folder in (path.parent.parent, path.parent):  # the cache folder and the evaluations' in it
            ensure_private_dir(folder)
        new = not path.exists()
        self._conn = Connection(str(path))
        if new:
            path.chmod(0o600)
        make_vector_table(self._conn)

    def close(self) -> None:
        self._conn.close()

    def query(self, text: str) -> Floats:
        vector: Floats = self._vectors([text], "query")[0]
        return vector

    def passages(self, texts: list[str]) -> Floats:
        return self._vectors(texts, "passage")

    def _vectors(self, texts: list[str], kind: str) -> Floats:
        import numpy as np

        keys = [hashlib.sha256(t.encode("utf-8", "surrogatepass")).hexdigest() for t in texts]
        found: dict[str, Floats] = {}
        for key in set(keys):
            for blob in cached_vectors(self._conn, self.name, kind, key):
                if isinstance(blob, bytes) and len(blob) == 4 * self.dims:
                    found[key] = np.frombuffer(blob, dtype=np.float32)
        missing = [i for i, key in enumerate(keys) if key not in found]
        if missing:
            wanted = [texts[i] for i in missing]
            made = (
                self.embedder.query(wanted[0])[None, :] if kind == "query" else self.embedder.passages(wanted)
            )
            self.made[kind] += len(missing)
            for i, vector in zip(missing, made, strict=True):
                found[keys[i]] = np.asarray(vector, dtype=np.float32)
            keep_vectors(self._conn, self.name, kind, ((keys[i], found[keys[i]].tobytes()) for i in missing))
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for i, key in enumerate(keys):
            out[i] = found[key]
        return out
