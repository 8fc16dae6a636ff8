"""The fusion of the lexical channel with the meaning channel (aimos.recall.candidates.fuse), pure:
meaning never removes a memory the words found, a memory found by meaning alone needs the abstention
thresholds, a question nothing answers returns nothing, and with no weight the words' order stands."""

from __future__ import annotations

from apsw import Connection
from hypothesis import given, settings
from hypothesis import strategies as st

from aimos.recall.candidates import Fusion, LexicalChannel, MeaningChannel, combine, fuse, meaning_share

ROWIDS = st.integers(min_value=1, max_value=60)
lexical_hits = st.dictionaries(ROWIDS, st.floats(min_value=0.01, max_value=50.0), max_size=12).map(
    lambda d: sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))
)
cosines = st.dictionaries(ROWIDS, st.floats(min_value=0.5, max_value=0.99), max_size=20).map(
    lambda d: sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))
)
means = st.floats(min_value=0.5, max_value=0.9)
fusions = st.builds(
    Fusion,
    weight=st.floats(min_value=0.0, max_value=4.0),
    floor=st.floats(min_value=0.6, max_value=0.8),
    full=st.floats(min_value=0.81, max_value=0.95),
    margin=st.floats(min_value=0.0, max_value=0.2),
    alone=st.floats(min_value=0.7, max_value=0.95),
    lift=st.floats(min_value=0.0, max_value=0.2),
)


@settings(max_examples=300, deadline=None)
@given(lexical_hits, cosines, means, fusions)
def test_meaning_never_removes_a_lexical_hit(
    lexical: list[tuple[int, float]], near: list[tuple[int, float]], mean: float, f: Fusion
) -> None:
    fused = [r for r, _ in fuse(lexical, near, mean, f)]
    assert {r for r, _ in lexical} <= set(fused)
    assert len(fused) == len(set(fused))


@settings(max_examples=300, deadline=None)
@given(lexical_hits, cosines, means, fusions)
def test_a_meaning_only_hit_needs_the_thresholds(
    lexical: list[tuple[int, float]], near: list[tuple[int, float]], mean: float, f: Fusion
) -> None:
    """A memory the words did not find is added only with a share (above the floor, within the
    margin of the best cosine); when the words found nothing, only past the abstention thresholds."""
    words = {r for r, _ in lexical}
    cosine = dict(near)
    for rowid, _ in fuse(lexical, near, mean, f):
        if rowid not in words:
            assert meaning_share(cosine[rowid], near[0][1], f.floor, f.full, f.margin) > 0
            if not lexical:
                assert cosine[rowid] >= f.alone and cosine[rowid] - mean >= f.lift


@settings(max_examples=300, deadline=None)
@given(cosines, means, fusions)
def test_a_question_nothing_answers_returns_nothing(
    near: list[tuple[int, float]], mean: float, f: Fusion
) -> None:
    """No memory shares a word with it and none is near enough: empty, not the nearest vector."""
    below = [(r, min(c, f.alone - 1e-6)) for r, c in near]
    assert fuse([], below, mean, f) == []
    channel = MeaningChannel(_NoQuery())
    channel.mean = mean
    assert combine([[], below], [LexicalChannel(), channel], fusion=f) == []  # as open_candidates fuses
    too_common = [(r, c) for r, c in near if c - 0.95 < f.lift]  # none stands out from a mean of 0.95
    assert fuse([], too_common, 0.95, f) == []


@settings(max_examples=200, deadline=None)
@given(lexical_hits, cosines, means)
def test_with_no_weight_the_words_order_stands(
    lexical: list[tuple[int, float]], near: list[tuple[int, float]], mean: float
) -> None:
    f = Fusion(weight=0.0)
    assert [r for r, _ in fuse(lexical, near, mean, f)] == [r for r, _ in lexical]


def test_a_near_memory_lifts_a_word_hit_above_one_that_is_not_near() -> None:
    """Two memories the words found alike: the one the question means comes first."""
    lexical = [(1, 3.0), (2, 3.0)]
    near = [(2, 0.9), (1, 0.70)]
    assert next(r for r, _ in fuse(lexical, near, 0.72)) == 2


class _NoQuery:
    def nearest(self, conn: Connection, limit: int) -> tuple[list[tuple[int, float]], float, int]:
        raise AssertionError("a pure fusion searches nothing")


def test_recall_abstains_where_the_first_guess_returned_the_nearest_memory() -> None:
    """The meaning probe's questions that nothing answers have their nearest memory at cosines of
    0.78-0.84, 0.04-0.09 above the brain's mean: recall's thresholds return nothing for them, where
    the first guesses (0.80 and 0.06) returned the nearest memory."""
    from aimos.eval.folds import FIRST_GUESS

    nearest = [(7, 0.839), (3, 0.83)]  # "what is my shoe size" -> a memory about a knee
    mean = 0.753
    assert fuse([], nearest, mean) == []
    guess = dict(FIRST_GUESS)
    first = Fusion(
        weight=guess["weight"],
        floor=guess["floor"],
        full=guess["full"],
        margin=guess["margin"],
        alone=guess["alone"],
        lift=guess["lift"],
    )
    assert next(r for r, _ in fuse([], nearest, mean, first)) == 7
    assert fuse([(5, 2.0)], nearest, mean)[0][0] == 5  # a word hit stays first; the near one follows
