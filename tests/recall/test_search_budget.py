"""Retrieval on very common terms is bounded (issue 20): past the posting budget the lexical
channel ORs the rarest query terms and finds the memories holding every term in a second probe
(the commonest terms still count in the coverage boost), and a probe expected to match more than
the budget scores the newest part of the brain only, widening to the whole brain when that part
holds too few results in the caller's scope. Against a real brain
(the `brain` fixture: real SQLite, real keys) with a small budget, so a few dozen memories are
"a big brain"."""

from __future__ import annotations

import time
from typing import Any

import pytest

from aimos.actions.bodies import build_recall_body, build_save_body
from aimos.identity.requests import sign_request
from aimos.memory.save import save
from aimos.recall.candidates import LexicalChannel, Scope, plan_search
from aimos.recall.pipeline import recall
from aimos.recall.text import query_terms
from aimos.store.search import Probe, budgeted_probe, within_budget
from aimos.vocabulary import PATH_RECALL, PATH_SAVE

pytestmark = pytest.mark.timeout(120)

EVERYONE = Scope("personal", 10, "confidential")


def put(brain: Any, text: str, **fields: Any) -> str:
    t = int(time.time())
    body = build_save_body(company_id="personal", value=text, **fields)
    result = save(brain.conn, brain.housekeeper, sign_request(brain.agent, body, PATH_SAVE, t), t)
    assert result.status == "saved", result
    return str(result.memory_id)


def rowid_of(brain: Any, memory_id: str) -> int:
    return int(
        brain.conn.execute("SELECT rowid FROM memories WHERE memory_id = ?", (memory_id,)).fetchall()[0][0]
    )


# --- the pure choice ------------------------------------------------------------------------------
def test_within_budget_keeps_the_rarest_terms_in_the_query_order() -> None:
    matches = {"the": 900, "walnut": 3, "garden": 40, "tree": 120}
    terms = ["the", "walnut", "garden", "tree"]
    assert within_budget(terms, matches, None) == terms  # no budget: everything
    assert within_budget(terms, matches, 10_000) == terms  # all of it fits
    assert within_budget(terms, matches, 200) == ["walnut", "garden", "tree"]
    assert within_budget(terms, matches, 50) == ["walnut", "garden"]
    # the rarest term is searched even when it alone is over the budget
    assert within_budget(["the", "tree"], matches, 50) == ["tree"]
    # a tie between equally common terms goes to the one asked first
    assert within_budget(["b", "a"], {"a": 30, "b": 30}, 40) == ["b"]


# --- against a real brain -------------------------------------------------------------------------
@pytest.fixture
def crowded(brain: Any) -> dict[str, Any]:
    """30 memories about the kitchen (a common word), 3 of them naming a rare one."""
    ids = []
    for i in range(30):
        extra = " with the brass walnut clock" if i in (2, 15, 28) else ""
        ids.append(put(brain, f"kitchen shelf note {i}: jars and tins{extra}"))
    return {"brain": brain, "ids": ids, "walnut": [ids[2], ids[15], ids[28]]}


def test_a_common_term_is_left_out_of_the_search_and_counted_in_the_boost(crowded: dict[str, Any]) -> None:
    brain = crowded["brain"]
    terms = query_terms("kitchen walnut")
    assert plan_search(brain.conn, terms, None).probes == [Probe(terms)]
    assert plan_search(brain.conn, terms, 100).probes == [Probe(terms)]  # 33 matches fit in 100
    bounded = plan_search(brain.conn, terms, budget=10)
    # 30 kitchen matches do not fit in 10: walnut alone (3) is OR-ed, and the memories holding
    # both words (3 of 30 x 3 / 30, expected) are found by a second probe, both over everything
    assert bounded.probes == [Probe(["walnut"]), Probe(terms, every=True)]
    assert bounded.counted == terms  # the coverage boost still rewards "kitchen"
    # the bounded channel finds exactly what the unbounded one ranks first
    got = LexicalChannel(posting_budget=10).search(brain.conn, terms, EVERYONE, 10)
    want = LexicalChannel(posting_budget=None).search(brain.conn, terms, EVERYONE, 10)
    walnut_rows = {rowid_of(brain, m) for m in crowded["walnut"]}
    assert {r for r, _ in got} == walnut_rows
    assert {r for r, _ in want[:3]} == walnut_rows


def test_a_lone_common_term_scores_the_newest_part_of_the_brain(crowded: dict[str, Any]) -> None:
    brain = crowded["brain"]
    (probe,) = plan_search(brain.conn, ["kitchen"], budget=10).probes
    total = int(brain.conn.execute("SELECT MAX(rowid) FROM memories").fetchall()[0][0])
    assert probe.terms == ["kitchen"] and not probe.every
    assert 0 < probe.min_rowid <= total
    got = LexicalChannel(posting_budget=10).search(brain.conn, ["kitchen"], EVERYONE, 5)
    assert len(got) == 5
    assert all(rowid >= probe.min_rowid for rowid, _ in got)
    # asked for more than the newest part holds, the channel widens to the whole brain
    everything = LexicalChannel(posting_budget=10).search(brain.conn, ["kitchen"], EVERYONE, 30)
    assert {r for r, _ in everything} == {rowid_of(brain, m) for m in crowded["ids"]}


def test_the_newest_part_out_of_scope_widens_to_the_whole_brain(brain: Any) -> None:
    """An attacker (or just a busy agent) filling the newest part of the brain with matches the
    caller may not see must not hide the older ones it may see."""
    visible = [put(brain, f"garage note {i}: the ladder", clearance_level=1) for i in range(4)]
    for i in range(20):
        put(brain, f"garage note {i}: the ladder, confidential", clearance_level=9)
    (probe,) = plan_search(brain.conn, ["ladder"], budget=6).probes
    assert probe.min_rowid > max(rowid_of(brain, m) for m in visible)  # they are not in the newest part
    low = Scope("personal", 2, "confidential")
    got = LexicalChannel(posting_budget=6).search(brain.conn, ["ladder"], low, 10)
    assert {r for r, _ in got} == {rowid_of(brain, m) for m in visible}


def test_a_signed_recall_through_the_bounded_channel_verifies(crowded: dict[str, Any]) -> None:
    brain = crowded["brain"]
    t = int(time.time())
    req = sign_request(brain.agent, build_recall_body(query="kitchen walnut clock", limit=3), PATH_RECALL, t)
    result = recall(brain.conn, brain.housekeeper, req, t, channels=[LexicalChannel(posting_budget=10)])
    assert {r["memory_id"] for r in result.results} == set(crowded["walnut"])
    assert result.receipt["result_count"] == 3


def test_the_memories_holding_every_common_term_are_found_past_the_budget(brain: Any) -> None:
    """Two words each in many memories, and one memory holding both: the bounded channel ranks
    it first, as the unbounded one does, though neither word alone fits the budget."""
    for i in range(15):
        put(brain, f"river trip {i}: boots and mud")
        put(brain, f"stone wall {i}: moss and ivy")
        put(brain, f"garden bed {i}: tulips and roses")
    both = put(brain, "river stone: boots and mud, and a long tale of the walk to the old mill and back")
    for i in range(15):
        put(brain, f"garden path {i}: gravel and moss")
    terms = query_terms("river stone")
    plan = plan_search(brain.conn, terms, budget=5)
    assert plan.probes[-1].terms == terms and plan.probes[-1].every
    # the long memory holding both words: the rarer word alone ranks it below its short matches
    alone = LexicalChannel(posting_budget=None).search(brain.conn, plan.probes[0].terms, EVERYONE, 5)
    assert rowid_of(brain, both) not in [r for r, _ in alone]
    for budget in (5, None):
        got = LexicalChannel(posting_budget=budget).search(brain.conn, terms, EVERYONE, 5)
        assert got[0][0] == rowid_of(brain, both), budget


# --- the agreement detector's neighbour scan (store.search.budgeted_probe) ----------------------
def test_the_neighbour_scan_takes_the_rarest_words_then_the_newest_matches(crowded: dict[str, Any]) -> None:
    brain = crowded["brain"]
    conn = brain.conn
    # 30 kitchen memories do not fit in 10: walnut (3) does, and kitchen would overflow it
    assert budgeted_probe(conn, ["kitchen", "walnut"], budget=10) == Probe(["walnut"])
    assert budgeted_probe(conn, ["kitchen", "walnut"], budget=None) == Probe(["kitchen", "walnut"])
    assert budgeted_probe(conn, ["kitchen", "walnut"], budget=1000) == Probe(
        ["kitchen", "walnut"]
    )  # all fits
    # kitchen alone: exactly its 10 newest matches are in the part scanned
    probe = budgeted_probe(conn, ["kitchen"], budget=10)
    newest_ten = sorted(rowid_of(brain, m) for m in crowded["ids"])[-10:]
    assert probe.terms == ["kitchen"] and probe.min_rowid == newest_ten[0]
    scanned = conn.execute(
        "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? AND rowid >= ?", ('"kitchen"', probe.min_rowid)
    ).fetchall()
    assert sorted(r for (r,) in scanned) == newest_ten


def test_a_flood_of_alike_memories_cannot_make_a_save_score_them_all(brain: Any) -> None:
    """A hostile agent saving hundreds of near-copies: the detector's neighbour scan for the next
    save still scores at most its budget of them (the newest), and the save goes through."""
    for i in range(60):
        put(brain, f"the harbor lighthouse keeper logs the tide at dawn, entry {i}")
    probe = budgeted_probe(brain.conn, ["harbor", "lighthouse", "keeper", "tide"], budget=25)
    matched = brain.conn.execute(
        "SELECT COUNT(*) FROM memory_fts WHERE memory_fts MATCH ? AND rowid >= ?",
        (" OR ".join(f'"{t}"' for t in probe.terms), probe.min_rowid),
    ).fetchall()[0][0]
    assert probe.min_rowid > 0 and matched == 25
    assert put(brain, "the harbor lighthouse keeper logs the tide at dusk")
