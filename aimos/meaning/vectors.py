"""The stored form of a memory's vector and the search over them (pure, numpy, no I/O).

A vector is stored as 4 + D bytes: its scale as a little-endian float32, then D signed bytes, each
component divided by the scale and rounded (the scale is the largest magnitude over 127, so no
component clips). 384 dimensions take 388 bytes. The model's vectors are L2-normalised; the stored
one is normalised again when it is read, so a dot product is a cosine. Layout checked against
tests/vectors/aimos/meaning_vectors.json.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Floats = NDArray[np.float32]

SCALE = struct.Struct("<f")
MAX_DIMS = 4096


def pack(vector: Floats) -> bytes:
    """The stored form of one vector (any real vector; a zero vector packs with scale 0)."""
    import numpy as np

    v = np.asarray(vector, dtype=np.float32).ravel()
    top = float(np.max(np.abs(v))) if v.size else 0.0
    scale = top / 127.0 if top > 0 else 0.0
    q = np.rint(v / scale).astype(np.int8) if scale else np.zeros(v.size, dtype=np.int8)
    return SCALE.pack(scale) + q.tobytes()


def well_formed(blob: object, dims: int) -> bool:
    """Is ``blob`` a stored vector of ``dims`` components with a finite, non-negative scale?"""
    if not isinstance(blob, bytes) or len(blob) != SCALE.size + dims:
        return False
    (scale,) = SCALE.unpack_from(blob)
    return bool(scale == scale and 0.0 <= scale < float("inf"))


def unpack(blob: bytes) -> Floats:
    """The vector a stored form stands for, L2-normalised (a zero vector stays zero)."""
    import numpy as np

    (scale,) = SCALE.unpack_from(blob)
    v = np.frombuffer(blob, dtype=np.int8, offset=SCALE.size).astype(np.float32) * np.float32(scale)
    norm = float(np.linalg.norm(v))
    return v / np.float32(norm) if norm > 0 else v


def cosine(a: Floats, b: Floats) -> float:
    import numpy as np

    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return float(np.dot(a, b) / (na * nb)) if na and nb else 0.0


class Matrix:
    """The stored vectors of a brain as one int8 matrix (row i: ``ids[i]``) with a per-row factor
    (the scale over the row's norm), so a row's dot product with a query times its factor is the
    cosine. Rows are appended as the brain grows, into room that doubles when it runs out (a kept
    matrix that gains one vector per save is not copied whole each time); ``ranked`` ranks them
    against a query."""

    CHUNK = 8192  # rows converted to float32 at a time (a 100,000-row matrix stays int8)

    def __init__(self, dims: int):
        import numpy as np

        self.dims = dims
        self.ids: list[int] = []
        self._room = np.zeros((0, dims), dtype=np.int8)
        self._factor_room = np.zeros(0, dtype=np.float32)

    def __len__(self) -> int:
        return len(self.ids)

    def extend(self, items: Sequence[tuple[int, bytes]]) -> None:
        """Append (id, stored form) rows; a malformed form is left out."""
        import numpy as np

        good = [(i, b) for i, b in items if well_formed(b, self.dims)]
        if not good:
            return
        rows = np.frombuffer(b"".join(b[SCALE.size :] for _, b in good), dtype=np.int8).reshape(-1, self.dims)
        scales = np.array([SCALE.unpack_from(b)[0] for _, b in good], dtype=np.float32)
        norms = np.linalg.norm(rows.astype(np.float32), axis=1) * scales
        factors = np.divide(scales, norms, out=np.zeros_like(scales), where=norms > 0)
        used, wanted = len(self.ids), len(self.ids) + len(good)
        if wanted > len(self._room):
            room = max(wanted, 2 * len(self._room), 64)
            self._room = np.concatenate(
                [self._room[:used], np.zeros((room - used, self.dims), dtype=np.int8)]
            )
            self._factor_room = np.concatenate([self._factor_room[:used], np.zeros(room - used, np.float32)])
        self._room[used:wanted] = rows
        self._factor_room[used:wanted] = factors
        self.ids.extend(i for i, _ in good)

    def scores(self, query: Floats) -> Floats:
        """The cosine of every row with ``query`` (normalised here), in row order."""
        import numpy as np

        q = np.asarray(query, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        used = len(self.ids)
        if not used or not norm:
            return np.zeros(used, dtype=np.float32)
        q = q / np.float32(norm)
        parts = [
            self._room[i : min(i + self.CHUNK, used)].astype(np.float32) @ q
            for i in range(0, used, self.CHUNK)
        ]
        return np.concatenate(parts) * self._factor_room[:used]

    def ranked(self, query: Floats, limit: int) -> tuple[list[tuple[int, float]], float]:
        """The ``limit`` best (id, cosine), best first (ties by id), and the mean cosine of every
        row with the query (0.0 with no row): how near the question the brain's memories are in
        general, which a memory must stand out from (``len(self)`` rows make the mean)."""
        import numpy as np

        if limit < 1 or not len(self.ids):
            return [], 0.0
        s = self.scores(query)
        picked = np.argpartition(-s, limit - 1)[:limit] if limit < len(s) else np.arange(len(s))
        out = [(self.ids[int(i)], float(s[int(i)])) for i in picked]
        return sorted(out, key=lambda kv: (-kv[1], kv[0])), float(s.mean())
