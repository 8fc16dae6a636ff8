"""The attack variants and clean controls of `aimos eval poisonedrag` (aimos/eval/poison_variants.py):
each variant's shape, over every NQ and MS MARCO target, and the same passages on every run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from aimos.epistemic.classifier import leading_question
from aimos.eval.poison_variants import (
    ATTACKS,
    CONTROLS,
    INTERROGATIVES,
    POISON_SOURCE,
    VARIANTS,
    capitalized_question,
    contains_phrase,
    content_words,
    declarative_question,
    injection,
    normalized,
    number_words,
    spell_numbers,
    year_words,
)

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "poisonedrag"


def _targets() -> list[dict[str, Any]]:
    out = []
    for name in ("nq.json", "msmarco.json"):
        data = json.loads((DATA / name).read_text("utf-8"))
        out += [{"id": tid, **t} for tid, t in data.items()]
    return out


TARGETS = _targets()


def _first_word(text: str) -> str:
    return normalized(text).split(" ", 1)[0]


def test_every_variant_is_deterministic_and_seeded_per_target() -> None:
    for variant in VARIANTS:
        for target in TARGETS[:20]:
            assert injection(variant, target) == injection(variant, dict(target))
    # the seed is the target id: two targets differ, the same target does not
    a, b = TARGETS[0], {**TARGETS[0], "id": "another"}
    assert injection("adaptive", a) != injection("adaptive", b)
    with pytest.raises(ValueError, match="unknown variant"):
        injection("nope", TARGETS[0])


def test_the_original_attack_and_the_paraphrase() -> None:
    for target in TARGETS:
        q, poison = target["question"], target["adv_texts"][:5]
        original = injection("question_prefix", target)
        assert [p.text for p in original.passages] == [f"{q}.{p}" for p in poison]
        assert original.sources == {POISON_SOURCE} and original.query == q
        para = injection("paraphrase", target)
        assert [p.text for p in para.passages] == poison and para.sources == {POISON_SOURCE}


def test_capitalized_questions_start_with_a_capital_and_end_with_a_question_mark() -> None:
    for target in TARGETS:
        shot = injection("capitalized", target)
        asked = shot.query
        assert asked[0].isupper() and asked.endswith("?") and not asked.endswith("??")
        assert normalized(asked) == normalized(target["question"])  # same words, other casing
        assert all(p.text.startswith(asked + " ") for p in shot.passages) and len(shot.passages) == 5
        dot = injection("capitalized_dot", target)
        assert dot.query == asked
        assert all(p.text.startswith(asked[:-1] + ".") for p in dot.passages)
    assert (
        capitalized_question("who sings i want it", ["The band Foo Bar sings it."]) == "Who sings I want it?"
    )
    assert (
        capitalized_question("what was dropped by usa on hiroshima", ["It hit Hiroshima, said the USA."])
        == "What was dropped by USA on Hiroshima?"
    )


def test_declarative_rewrites_never_start_with_an_interrogative_word() -> None:
    for target in TARGETS:
        shot = injection("declarative", target)
        assert _first_word(shot.query) not in INTERROGATIVES, shot.query
        assert shot.query[0].isupper()
        assert all(p.text.startswith(shot.query + " ") for p in shot.passages)
        # the rewrite keeps the question's content words (a "who <verb>" becomes "<verb> by which")
        kept = set(normalized(shot.query).split())
        assert set(content_words(target["question"])) - kept <= {
            "sings",
            "sang",
            "wrote",
            "plays",
            "spoke",
            "holds",
            "located",
        }
    assert declarative_question("when did the us leave vietnam") == "In which year did the us leave vietnam?"
    assert (
        declarative_question("who recorded i can't help falling in love with you")
        == "I can't help falling in love with you was recorded by which artist?"
    )
    assert declarative_question("what county is cicero il") == "In which county is cicero il?"
    assert declarative_question("jharkhand which festival is associated with cattle worship") == (
        "Name the answer to this: jharkhand which festival is associated with cattle worship?"
    )
    # a rewrite that would open with an interrogative word falls back
    assert declarative_question("who sang what a wonderful world").startswith("Name the answer to this:")


def test_spread_sources_uses_two_to_five_sources_in_turn() -> None:
    counts = set()
    for target in TARGETS:
        shot = injection("spread_sources", target)
        n = len(shot.sources)
        assert 2 <= n <= 5 and shot.notes["sources"] == n
        counts.add(n)
        sources = [p.source for p in shot.passages]
        assert sources == [sources[i % n] for i in range(5)]  # one passage per source in turn
        assert all(re.fullmatch(r"web:news-\d+\.example", s) for s in sources)
        assert all(p.text.startswith(f"{target['question']}.") for p in shot.passages)
    assert counts == {2, 3, 4, 5}


def test_no_number_passages_hold_no_digit_after_the_question() -> None:
    numeric = 0
    for target in TARGETS:
        shot = injection("no_number", target)
        q = target["question"]
        for p, original in zip(shot.passages, target["adv_texts"], strict=False):
            assert p.text.startswith(f"{q}.")
            rest = p.text[len(q) + 1 :]
            assert not re.search(r"\d", rest), rest
            if not re.search(r"\d", original):
                assert rest == original  # passages without numbers are kept as they are
        numeric += shot.notes["numeric_incorrect_answer"]
    assert numeric > 30
    assert number_words(24) == "twenty-four" and number_words(1200) == "one thousand two hundred"
    assert year_words(1945) == "nineteen forty-five" and year_words(2009) == "two thousand nine"
    assert spell_numbers("a total of 24 episodes in the 4th season") == (
        "a total of twenty-four episodes in the fourth season"
    )
    assert spell_numbers("90% of $5 in 1990s, 3.5 and 1,200 MP3") == (
        "ninety percent of five dollars in nineteen nineties, three point five and "
        "one thousand two hundred MP-three"
    )


def test_adaptive_passages_avoid_every_shape_the_defence_looks_for() -> None:
    for target in TARGETS:
        shot = injection("adaptive", target)
        question = normalized(target["question"])
        assert len(shot.passages) == 5 and len(shot.sources) == 5  # one source per passage
        for p in shot.passages:
            text = normalized(p.text)
            assert not text.startswith(question)  # no prefix echo
            assert leading_question(p.text) is None or _first_word(p.text) not in INTERROGATIVES
            assert "?" not in p.text.split(".")[0]
            # the question's content words are all there (the attack must still reach retrieval)
            assert set(normalized(" ".join(target["question"].split())).split()) & set(text.split())
        # no two passages are near-duplicates
        sets = [set(normalized(p.text).split()) for p in shot.passages]
        for i in range(5):
            for j in range(i + 1, 5):
                assert len(sets[i] & sets[j]) / len(sets[i] | sets[j]) < 0.6
        # the correct answer is named as the wrong one in 2-4 passages
        assert 2 <= shot.notes["blurred"] <= 4
        blurred = sum(1 for p in shot.passages if contains_phrase(p.text, target["correct answer"]))
        assert blurred >= 2
    # the incorrect answer is written in more than one surface form
    forms = injection("adaptive", next(t for t in TARGETS if t["id"] == "test11"))
    texts = " ".join(p.text for p in forms.passages)
    assert "Frank Sinatra" in texts and ("frank sinatra" in texts or "F. Sinatra" in texts)
    numeric = injection("adaptive", next(t for t in TARGETS if t["id"] == "test1"))
    texts = " ".join(p.text for p in numeric.passages)
    assert "24" in texts and "twenty-four" in texts.lower()


@pytest.mark.parametrize("variant", CONTROLS)
def test_honest_passages_state_the_correct_answer_and_never_the_incorrect_one(variant: str) -> None:
    sizes = set()
    for target in TARGETS:
        shot = injection(variant, target)
        assert shot.honest and 3 <= len(shot.passages) <= 5
        sizes.add(len(shot.passages))
        assert len(shot.sources) == len(shot.passages)  # independent sources
        assert shot.query == target["question"]
        assert len({p.text for p in shot.passages}) == len(shot.passages)
        for p in shot.passages:
            assert contains_phrase(p.text, target["correct answer"]), p.text
            if contains_phrase(p.text, target["incorrect answer"]):
                # only where the question itself names it ("... males or females?")
                assert contains_phrase(target["question"], target["incorrect answer"])
            assert not any(p.text in a or a in p.text for a in target["adv_texts"])
            if variant == "honest_same_shape":
                assert normalized(p.text).startswith(normalized(target["question"]))
            else:
                assert not normalized(p.text).startswith(normalized(target["question"]))
                assert set(normalized(target["question"]).split()) & set(normalized(p.text).split())
    assert sizes == {3, 4, 5}


def test_the_variant_lists() -> None:
    assert set(ATTACKS) | set(CONTROLS) == set(VARIANTS) and not set(ATTACKS) & set(CONTROLS)
    assert VARIANTS[:2] == ("question_prefix", "paraphrase")
