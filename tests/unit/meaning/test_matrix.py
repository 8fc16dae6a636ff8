"""The kept matrix (meaning/vectors.Matrix): rows appended one at a time rank exactly as rows
appended at once, malformed forms are left out, and the mean is over the rows it holds."""

from __future__ import annotations

import numpy as np

from aimos.meaning.vectors import Matrix, pack


def _forms(n: int, dims: int = 8) -> list[tuple[int, bytes]]:
    rng = np.random.default_rng(7)
    return [(i + 1, pack(rng.standard_normal(dims).astype(np.float32))) for i in range(n)]


def test_rows_appended_one_by_one_rank_as_rows_appended_at_once() -> None:
    forms = _forms(300)
    whole, grown = Matrix(8), Matrix(8)
    whole.extend(forms)
    for item in forms:  # past the first room of 64 rows, the room doubles several times
        grown.extend([item])
    query = np.ones(8, dtype=np.float32)
    assert len(grown) == len(whole) == 300
    assert np.array_equal(grown.scores(query), whole.scores(query))
    assert grown.ranked(query, 10) == whole.ranked(query, 10)


def test_a_malformed_form_is_left_out_and_the_mean_is_over_the_rows_held() -> None:
    m = Matrix(8)
    m.extend(
        [(1, pack(np.eye(8, dtype=np.float32)[0])), (2, b"short"), (3, pack(-np.eye(8, dtype=np.float32)[0]))]
    )
    near, mean = m.ranked(np.eye(8, dtype=np.float32)[0], 5)
    assert m.ids == [1, 3]
    assert [i for i, _ in near] == [1, 3] and abs(near[0][1] - 1) < 1e-3 and abs(mean) < 1e-3
    assert Matrix(8).ranked(np.ones(8, dtype=np.float32), 5) == ([], 0.0)
