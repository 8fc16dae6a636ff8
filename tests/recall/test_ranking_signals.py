"""The lexical channel's ranking signals beyond BM25 (aimos.recall.candidates.LexicalChannel), each
through the real pipeline on a real brain: a question asking when prefers the memory that says when;
a memory whose lead (its key, a turn's speaker) holds the query's words is about them; the
contextual index counts only its best hits, so a turn's neighbours do not crowd out memories that
match themselves; a turn that asks is answered by the next turn of its conversation (never one the
caller may not see). And what they must not do: no signal makes a memory that does not match the
query a result, and a stamp at the head of every memory is neither a lead nor a "when"."""

from __future__ import annotations

import time
from typing import Any

from aimos.actions.bodies import build_recall_body, build_save_body
from aimos.identity.requests import sign_request
from aimos.memory.save import save
from aimos.recall.pipeline import recall
from aimos.recall.text import asks, asks_when, says_when, unstamped
from aimos.vocabulary import PATH_RECALL, PATH_SAVE


def _save(brain: Any, value: str, **fields: Any) -> str:
    now = int(time.time())
    body = build_save_body(company_id="personal", value=value, **fields)
    return save(brain.conn, brain.housekeeper, sign_request(brain.agent, body, PATH_SAVE, now), now).memory_id


def _recall(brain: Any, query: str, limit: int = 10) -> list[str]:
    now = int(time.time())
    body = build_recall_body(query=query, limit=limit)
    got = recall(brain.conn, brain.housekeeper, sign_request(brain.agent, body, PATH_RECALL, now), now)
    return [r["memory_id"] for r in got.results]


def test_asks_when_and_says_when() -> None:
    assert asks_when("When did Dana service the boiler?")
    assert asks_when("what year did we move to Leeds")
    assert asks_when("In which month is the renewal?")
    assert asks_when("what time does the train leave")
    assert not asks_when("Where is the spare key?")
    assert not asks_when("Whenever you like, tell me the code")
    assert says_when("Dana serviced it last Tuesday")
    assert says_when("We moved in 2019")
    assert says_when("two weeks ago")
    assert not says_when("The boiler is in the cellar")
    assert not says_when("You may call Dana")  # "may" is mostly the verb
    # a stamp at the head is when the memory was said, not what it says
    assert not says_when("[1:56 pm on 8 May, 2023] Dana: the boiler is in the cellar")
    assert unstamped("[8 May 2023] Dana: hi") == "Dana: hi"
    assert asks("[8 May 2023] Sam: what colour is it? [image: a shed]")
    assert asks("Is it green?")
    assert not asks("It is green. Why? Because Dana likes it.")
    assert not asks("[was it green?] It is")
    assert unstamped("Dana [8 May 2023] hi") == "Dana [8 May 2023] hi"


def test_a_question_asking_when_prefers_the_memory_that_says_when(brain: Any) -> None:
    says = _save(brain, "[10 June 2023] Sam: we went camping at the lake two weekends ago")
    plain = _save(brain, "[10 June 2023] Sam: camping at the lake is our favourite thing")
    assert _recall(brain, "When did Sam go camping at the lake?")[:2] == [says, plain]
    # the same words without asking when: the other memory (it matches as well) is not pushed down
    assert set(_recall(brain, "Sam camping at the lake")[:2]) == {says, plain}


def test_a_memory_led_by_the_query_words_is_about_them(brain: Any) -> None:
    """Dana's own turn about what she loves, against a shorter one of Priya's that names Dana
    and love more often (BM25 alone ranks Priya's first)."""
    about = _save(
        brain, "Dana: my favourite thing is gardening, I love the roses and the quiet spring mornings"
    )
    mentions = _save(brain, "Priya: I told Dana I love it and Dana agreed")
    assert _recall(brain, "What does Dana love?")[:2] == [about, mentions]
    keyed = _save(brain, "serviced every October by Northside Heating, the boiler is old", key="boiler")
    _save(brain, "Dana says: the boiler, the boiler, the boiler needs a look")
    assert _recall(brain, "boiler")[:1] == [keyed]


def test_only_the_contextual_index_best_hits_count(brain: Any) -> None:
    """Five conversations, one turn of each naming the boiler: the contextual index finds that turn
    and its neighbours (fifteen), the memories' own index the five turns. With a context depth of
    five, at most five memories come from context alone; unbounded, every neighbour does."""
    from aimos.recall.candidates import LexicalChannel, Scope
    from aimos.vocabulary import DEFAULT_GRANT_CLEARANCE, DEFAULT_GRANT_DATA_CLASS

    matching = set()
    for c in range(5):
        for i, text in enumerate(("morning", f"the boiler made noise number {c}", "oh no")):
            saved = _save(brain, f"Alex: {text} ({c}.{i})", memory_type="dialog_turn", source=f"chat-{c}")
            if i == 1:
                matching.add(saved)
    rowid = {str(m): int(r) for r, m in brain.conn.execute("SELECT rowid, memory_id FROM memories")}
    scope = Scope("personal", DEFAULT_GRANT_CLEARANCE, DEFAULT_GRANT_DATA_CLASS)
    deep = LexicalChannel(context_depth=50).search(brain.conn, ["boiler"], scope, 50)
    shallow = LexicalChannel(context_depth=5).search(brain.conn, ["boiler"], scope, 50)
    assert len(deep) == 15
    assert {rowid[m] for m in matching} <= {r for r, _ in shallow}
    assert len(shallow) <= 10


def test_a_turn_past_the_context_depth_keeps_its_context_score(brain: Any) -> None:
    """The depth bounds only what is found through context alone: a turn that matches itself keeps
    its context score however deep, so in a brain of notes and conversations it is not ranked
    below a note that matches it less well (a note counts its own text as its context)."""
    from aimos.recall.candidates import LexicalChannel, Scope
    from aimos.vocabulary import DEFAULT_GRANT_CLEARANCE, DEFAULT_GRANT_DATA_CLASS

    turns = {
        _save(brain, f"Alex: the boiler broke again ({c})", memory_type="dialog_turn", source=f"chat-{c}")
        for c in range(4)
    }
    note = _save(brain, "Sam: in the cold cellar is the boiler")  # a word longer than each turn
    rowid = {str(m): int(r) for r, m in brain.conn.execute("SELECT rowid, memory_id FROM memories")}
    scope = Scope("personal", DEFAULT_GRANT_CLEARANCE, DEFAULT_GRANT_DATA_CLASS)
    got = [r for r, _ in LexicalChannel(context_depth=2).search(brain.conn, ["boiler"], scope, 10)]
    assert {rowid[t] for t in turns} == set(got[:4]), got
    assert got.index(rowid[note]) == 4


def test_no_signal_makes_a_memory_a_result_when_nothing_matches(brain: Any) -> None:
    """No boost creates relevance: a question asking when, with words no memory holds, finds
    nothing however many memories say when. (The one memory that can be a result without a query
    word is the answer to a conversation turn that asks and matches: see below.)"""
    _save(brain, "[10 June 2023] Sam: we went camping yesterday")
    _save(brain, "Dana: last Tuesday was lovely")
    # nothing holds "Priya" or "kayak": a question asking when finds nothing, whatever says when
    assert _recall(brain, "When did Priya go kayaking?") == []


def test_a_turns_neighbours_do_not_crowd_out_memories_that_match_themselves(brain: Any) -> None:
    """A conversation where one turn names the boiler: its neighbours' contexts hold the word too
    (the contextual index). Notes that name the boiler themselves rank above those neighbours."""
    turns = [
        "Alex: morning!",
        "Alex: the boiler made a noise again",
        "Sam: oh no",
        "Alex: I will call someone",
        "Sam: good idea",
    ]
    ids = [_save(brain, t, memory_type="dialog_turn", source="chat-1") for t in turns]
    notes = [_save(brain, f"note {i}: the boiler pressure was {i}.5 bar") for i in range(3)]
    got = _recall(brain, "boiler", limit=10)
    matching = {ids[1], *notes}
    assert set(got[:4]) == matching, got
    neighbours = [m for m in got if m in {ids[0], ids[2], ids[3]}]
    assert all(got.index(m) > 3 for m in neighbours)


def test_a_turn_that_asks_is_answered_by_the_next_turn(brain: Any) -> None:
    """The answer holds none of the query's words; the question before it holds them all."""
    chat = {"memory_type": "dialog_turn", "source": "chat-shed"}
    _save(brain, "Alex: I finally finished the shed this weekend", **chat)
    question = _save(brain, "Sam: great! what colour did you paint the shed?", **chat)
    answer = _save(brain, "Alex: dark green, two coats [image: a photo of a green shed]", **chat)
    _save(brain, "Sam: sounds lovely", **chat)
    got = _recall(brain, "What colour did Alex paint the shed?")
    assert got[:2] == [answer, question], got
    # a note that asks is no conversation: the note saved after it gains nothing
    _save(brain, "Where did I put the passport for the shed trip?")
    after = _save(brain, "Renew the car insurance in March")
    assert after not in _recall(brain, "passport shed trip")


def test_an_answer_the_caller_may_not_see_is_not_lifted_in(brain: Any) -> None:
    from aimos.recall.candidates import LexicalChannel, Scope
    from aimos.vocabulary import DEFAULT_GRANT_DATA_CLASS

    chat = {"memory_type": "dialog_turn", "source": "chat-safe"}
    _save(brain, "Sam: what is the code of the garden safe?", clearance_level=1, **chat)
    answer = _save(brain, "Alex: four nine one seven", clearance_level=5, **chat)
    rowid = {str(m): int(r) for r, m in brain.conn.execute("SELECT rowid, memory_id FROM memories")}
    terms = ["code", "garden", "safe"]
    low = LexicalChannel().search(brain.conn, terms, Scope("personal", 3, DEFAULT_GRANT_DATA_CLASS), 10)
    high = LexicalChannel().search(brain.conn, terms, Scope("personal", 5, DEFAULT_GRANT_DATA_CLASS), 10)
    assert rowid[answer] not in {r for r, _ in low}
    assert rowid[answer] in {r for r, _ in high}
