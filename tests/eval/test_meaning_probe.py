"""`aimos eval meaning`: the probe's own rules (checked against a real FTS5 index with aimos's
tokenizer), its figures (pure), a malformed probe refused before any brain, and the command run end
to end on a tiny probe, by words alone and with meaning in the same run."""

from __future__ import annotations

import json
from pathlib import Path

import apsw
import pytest

from aimos.eval.meaning import Case, figures, load_probe, outcome, run_meaning
from aimos.recall.text import query_terms
from aimos.store.search import fts_match
from aimos.store.words import TOKENIZE, index_text

pytestmark = pytest.mark.timeout(600)


def _matching(texts: dict[str, str]) -> tuple[apsw.Connection, dict[int, str]]:
    conn = apsw.Connection(":memory:")
    conn.execute(f'CREATE VIRTUAL TABLE t USING fts5(text, tokenize = "{TOKENIZE}")')
    ids = {}
    for i, (key, text) in enumerate(texts.items(), start=1):
        conn.execute("INSERT INTO t (rowid, text) VALUES (?, ?)", (i, index_text(text)))
        ids[i] = key
    return conn, ids


def _found_by_words(conn: apsw.Connection, ids: dict[int, str], question: str) -> set[str]:
    terms = query_terms(question)
    if not terms:
        return set()
    return {ids[int(r)] for (r,) in conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (fts_match(terms),))}


def test_the_shipped_probe_keeps_its_rules() -> None:
    """Searched by the index's own words (stemmed as the brain stems them): no answerable question
    finds its answer, each finds a distractor, and a question nothing answers finds no memory."""
    probe = load_probe()
    conn, ids = _matching(probe.memories)
    answerable = [c for c in probe.cases if c.answers]
    unanswerable = [c for c in probe.cases if not c.answers]
    assert len(answerable) >= 40 and len(unanswerable) >= 20
    for case in answerable:
        found = _found_by_words(conn, ids, case.question)
        assert not found & case.answers, case.question
        assert found - case.answers, case.question  # a distractor shares its words
    for case in unanswerable:
        assert not _found_by_words(conn, ids, case.question), case.question


def test_outcomes_and_figures() -> None:
    a, b, none = Case("a?", frozenset({"x"})), Case("b?", frozenset({"y", "z"})), Case("c?", frozenset())
    assert outcome(["q", "x"], a) == 2 and outcome(["z"], b) == 1 and outcome(["q"], a) is None
    assert outcome([], a) is False  # an answerable question that returned nothing
    assert outcome([], none) is True and outcome(["x"], none) is False
    got = figures([1, 3, None, False, True, False], [a, a, a, a, none, none])
    assert got["answerable"] == 4 and got["unanswerable"] == 2
    assert got["hit@1"] == 0.25 and got["hit@3"] == 0.5 and got["mrr"] == round((1 + 1 / 3) / 4, 4)
    assert got["false_abstention"] == 0.25 and got["abstention"] == 0.5


@pytest.mark.parametrize(
    "data",
    [
        "not json",
        json.dumps({"memories": [], "questions": []}),
        json.dumps(
            {
                "memories": [{"id": "a", "text": "x"}, {"id": "a", "text": "y"}],
                "questions": [{"q": "a", "answers": []}],
            }
        ),
        json.dumps({"memories": [{"id": "a", "text": "x"}], "questions": [{"q": "what", "answers": ["b"]}]}),
        json.dumps({"memories": [{"id": "a", "text": " "}], "questions": [{"q": "what", "answers": []}]}),
    ],
)
def test_a_malformed_probe_is_refused_before_any_brain(aimos_home: Path, tmp_path: Path, data: str) -> None:
    from support.cli import run_aimos

    path = tmp_path / "probe.json"
    path.write_text(data)
    got = run_aimos("eval", "meaning", "--data", str(path))
    assert got.code == 2, got.describe()
    assert "probe" in got.err and "Traceback" not in got.both
    assert not (aimos_home / "purge-receipts").exists()


TINY = {
    "memories": [
        {"id": "dentist", "text": "Dr. Okafor fills my cavities every spring."},
        {"id": "closed", "text": "The dentist's office on Elm Street closed down last year."},
        {"id": "coffee", "text": "I drink coffee every morning."},
        {"id": "hotel", "text": "Breakfast at the hotel was included."},
    ],
    "questions": [
        {"q": "which dentist do I see", "answers": ["dentist"]},
        {"q": "what's my usual hot beverage at breakfast", "answers": ["coffee"]},
        {"q": "which football club do I support", "answers": []},
    ],
}


def test_the_command_runs_both_arms_on_a_tiny_probe(aimos_home: Path, tmp_path: Path) -> None:
    from support.cli import run_aimos

    path = tmp_path / "probe.json"
    path.write_text(json.dumps(TINY))
    got = run_aimos("eval", "meaning", "--data", str(path), "--json")
    assert got.code == 0, got.describe()
    report = json.loads(got.out)
    assert report["memories"] == 4 and report["meaning"]["unavailable"] is None
    words = report["arms"]["aimos_words"]
    assert (words["answerable"], words["unanswerable"]) == (2, 1)
    assert words["hit@1"] == 0.0  # by words, the distractors are what shares the questions' words
    assert words["abstention"] == 1.0  # nothing shares a word with the football question
    assert set(report["arms"]) == {"aimos_words", "aimos", "meaning_alone"}
    assert report["settings"] and all("abstention" in row for row in report["settings"])
    assert report["arms"]["aimos"]["abstention"] == 1.0  # meaning does not answer it with the nearest
    assert report["scratch_brains_purged"]["receipts"] == 1


def test_run_meaning_reports_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # an empty cache of its own
    path = tmp_path / "probe.json"
    path.write_text(json.dumps(TINY))
    report = run_meaning(path, progress=lambda *_: None)
    assert report["meaning"]["made_by_the_model"]["passage"] == 4
    assert report["arms"]["aimos"]["false_abstention"] == 0.0  # words found the distractors at least
