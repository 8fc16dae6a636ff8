"""Property: over random brains and random queries, a recall never returns a memory that does not match
the query (relevance below the floor, or zero): it returns fewer than its limit, or abstains, and its
signed decision names every candidate it left out as not_relevant. The real pipeline on a real brain
(signed saves and recalls), with words drawn so that some are in most memories (the IDF that FTS5
clamps to a millionth) and some in few."""

from __future__ import annotations

import time
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aimos.actions.bodies import build_recall_body, build_save_body
from aimos.identity.requests import sign_request
from aimos.memory.save import save
from aimos.recall.pipeline import recall
from aimos.recall.policy import NOT_RELEVANT, RELEVANCE_FLOOR
from aimos.recall.receipts import receipt_document
from aimos.vocabulary import PATH_RECALL, PATH_SAVE

COMMON = ["the", "is", "where", "key", "house"]  # in most memories
RARE = ["flowerpot", "heron", "invoice", "tyre", "dentist", "falcon", "oat", "ferry", "boiler", "mortgage"]
UNKNOWN = ["zebra", "quasar"]  # in no memory

words = st.sampled_from(COMMON + RARE)
memory_text = st.lists(words, min_size=3, max_size=12).map(lambda ws: " ".join(["the", "key", *ws]))
query_text = st.lists(st.sampled_from(COMMON + RARE + UNKNOWN), min_size=1, max_size=5).map(" ".join)


def test_the_floor_means_something() -> None:
    # a memory sharing only words found in most of the brain scores about 1e-6 of the best match
    assert 1e-3 <= RELEVANCE_FLOOR <= 0.05


def _save(brain: Any, text: str) -> None:
    now = int(time.time())
    body = build_save_body(company_id="personal", value=text)
    save(brain.conn, brain.housekeeper, sign_request(brain.agent, body, PATH_SAVE, now), now)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    memories=st.lists(memory_text, min_size=1, max_size=6, unique=True),
    query=query_text,
    limit=st.integers(1, 12),
)
def test_no_recall_returns_a_memory_that_does_not_match(
    brain: Any, memories: list[str], query: str, limit: int
) -> None:
    seen = {r[0] for r in brain.conn.execute("SELECT value FROM memories")}
    for text in memories:
        if text not in seen:  # the same text twice is an occurrence, not a memory
            _save(brain, text)
    now = int(time.time())
    got = recall(
        brain.conn,
        brain.housekeeper,
        sign_request(brain.agent, build_recall_body(query=query, limit=limit), PATH_RECALL, now),
        now,
    )
    assert len(got.results) <= limit
    for r in got.results:
        assert r["relevance"] > 0 and r["relevance"] >= RELEVANCE_FLOOR, (query, r)
    assert got.abstained == (not got.results)
    decision = receipt_document(brain.conn, got.receipt["receipt_id"])["decision"]
    for c in decision["candidates"]:
        if c["relevance"] < RELEVANCE_FLOOR:
            assert c["decision"] == NOT_RELEVANT, (query, c)
        else:
            assert c["decision"] != NOT_RELEVANT, (query, c)
    if all(w in UNKNOWN for w in query.split()):
        assert got.abstained and got.results == [], query


def test_a_flood_that_matches_every_query_word_cannot_push_a_real_match_under_the_floor(brain: Any) -> None:
    """A hostile agent saves passages holding every word of a likely question, many times over, to
    make the person's own memory look irrelevant beside them (the floor is relative to the best
    match). BM25 saturates a word's weight, so the memory holding a rare word of the question stays
    well above the floor and is returned (here, trusted: the flood is ranked, not withheld)."""
    mine = "the invoice for the boiler service is in the blue folder"
    _save(brain, mine)
    for i in range(20):
        _save(brain, f"boiler invoice folder boiler invoice folder boiler invoice folder number {i}")
    now = int(time.time())
    got = recall(
        brain.conn,
        brain.housekeeper,
        sign_request(
            brain.agent, build_recall_body(query="boiler invoice folder", limit=30), PATH_RECALL, now
        ),
        now,
    )
    found = {r["value"]: r["relevance"] for r in got.results}
    assert mine in found, sorted(found.values())
    assert found[mine] >= 10 * RELEVANCE_FLOOR, found[mine]
