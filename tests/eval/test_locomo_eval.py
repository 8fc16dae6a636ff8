"""`aimos eval locomo` on a small LoCoMo-format file: the real signed saves and recalls in scratch
brains, the same-run baseline, and the cross-conversation validation of the channel's settings
(aimos.eval.folds), whose choice on the training conversations is measured on the others."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.locomo import _conversation

from aimos.eval.folds import (
    BEFORE,
    FUSION_NAMES,
    GRID,
    Setting,
    cross_validate,
    default_fusion,
    default_setting,
    splits,
)
from aimos.eval.locomo import run_locomo
from aimos.meaning.model import MODEL_NAME

pytestmark = pytest.mark.timeout(600)


def test_it_reports_the_run_and_the_folds(tmp_path: Path) -> None:
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([_conversation(i) for i in range(4)]))
    report = run_locomo(data, ks=(1, 5), progress=lambda *_: None, folds=True)
    assert report["counts"] == {"conversations": 4, "turns": 16, "questions": 4, "skipped_no_evidence": 4}
    assert report["meaning"]["model"] == MODEL_NAME and report["meaning"]["unavailable"] is None
    # every turn's vector, before the questions (7 texts: the filler turns are alike in every
    # conversation, and the cache keeps a text's vector once); the folds' question vectors (the signed
    # recall embeds its own question)
    assert report["meaning"]["made_by_the_model"] == {"passage": 7, "query": 4}
    for arm in ("aimos", "aimos_words", "bm25"):  # side by side, in the same run
        assert report[arm]["overall"]["any_hit@5"] == 1.0, arm  # each question finds its turn
    lexical = report["folds"]["lexical"]
    assert [(f["train"], f["test"]) for f in lexical["folds"]] == [
        ([0, 1], [2, 3]),
        ([2, 3], [0, 1]),
        ([0, 2], [1, 3]),
        ([1, 3], [0, 2]),
    ]
    for fold in lexical["folds"]:
        assert set(fold["chosen"]) == {
            "context_depth",
            "lead_boost",
            "when_boost",
            "answer_lift",
            "question_damping",
        }
        assert 0.0 <= fold["test_chosen"]["hit@1"] <= 1.0
    assert lexical["all_default"]["any_hit@5"] == 1.0
    fusion = report["folds"]["fusion"]
    assert fusion["default"] == dict(default_fusion()) and fusion["others"] == ["words", "first_guess"]
    assert len(fusion["folds"]) == 4
    for fold in fusion["folds"]:
        assert set(fold["chosen"]) == set(FUSION_NAMES)
        assert {"test_chosen", "test_default", "test_words", "test_first_guess"} <= set(fold)
    assert fusion["all_words"]["any_hit@5"] == 1.0 and fusion["held_out"]["words"]["any_hit@5"] == 1.0


def test_a_rerun_takes_its_vectors_from_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The evaluations' embeddings are kept outside any brain (the user's cache folder, private):
    the second run of the same file makes no vector with the model, and its figures are the same."""
    from aimos import paths

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # an empty cache of its own
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([_conversation(i) for i in range(2)]))
    first = run_locomo(data, ks=(1, 5), progress=lambda *_: None)
    again = run_locomo(data, ks=(1, 5), progress=lambda *_: None)
    assert first["meaning"]["made_by_the_model"] == {"passage": 5, "query": 0}  # 3 filler + 2 topics
    assert again["meaning"]["made_by_the_model"] == {"passage": 0, "query": 0}
    assert again["aimos"] == first["aimos"]
    cache = next((paths.cache_dir() / "eval-embeddings").iterdir())
    assert cache.stat().st_mode & 0o777 == 0o600
    assert cache.parent.stat().st_mode & 0o777 == 0o700 and paths.cache_dir().stat().st_mode & 0o777 == 0o700


def test_splits_cover_every_conversation_once_per_side() -> None:
    for n in (2, 5, 7):
        for train, test in splits(n):
            assert sorted(train + test) == list(range(n)) and not set(train) & set(test)


def test_each_fold_chooses_on_its_training_conversations_and_measures_on_the_others() -> None:
    """Two settings: one best on conversations 0-1, the other on 2-3. A fold trained on 0-1 chooses
    the first and reports its (poor) figures on 2-3, not its training figures."""
    good_early, good_late = GRID[1], GRID[2]
    assert good_early != good_late

    def row(hit: float) -> dict[str, float]:
        return {"hit@1": hit, "mrr": hit, "any_hit@5": hit, "evidence_recall@5": hit}

    scores = []
    for c in range(4):
        early = c < 2
        per = {s: [row(0.0)] for s in [*GRID, default_setting(), BEFORE]}
        per[good_early] = [row(1.0 if early else 0.0)]
        per[good_late] = [row(0.5 if early else 1.0)]
        scores.append(per)
    got = cross_validate(scores, 5)
    first = got["folds"][0]
    assert (first["train"], first["test"]) == ([0, 1], [2, 3])
    assert first["chosen"] == dict(good_early)
    assert first["train_chosen"]["hit@1"] == 1.0 and first["test_chosen"]["hit@1"] == 0.0
    second = got["folds"][1]
    assert second["chosen"] == dict(good_late) and second["test_chosen"]["hit@1"] == 0.5


def test_a_side_with_no_scored_question_is_no_fold() -> None:
    rows = {
        s: [{"hit@1": 1.0, "mrr": 1.0, "any_hit@5": 1.0, "evidence_recall@5": 1.0}]
        for s in [*GRID, default_setting(), BEFORE]
    }
    empty: dict[Setting, list[dict[str, float]]] = {s: [] for s in rows}
    got = cross_validate([rows, empty, rows, empty], 5)  # the odd conversations asked nothing
    assert [(f["train"], f["test"]) for f in got["folds"]] == [([0, 1], [2, 3]), ([2, 3], [0, 1])]


def test_a_missing_data_file_says_where_to_get_it(aimos_home: Path, tmp_path: Path) -> None:
    """As from a pip install, where the default file beside a checkout is absent: exit 3, the
    dataset's source named, nothing else done."""
    from support.cli import run_aimos

    missing = run_aimos("eval", "locomo", "--data", str(tmp_path / "locomo10.json"))
    assert missing.code == 3, missing.describe()
    assert "no LoCoMo file" in missing.err and "https://github.com/snap-research/LoCoMo" in missing.err
    assert "Traceback" not in missing.both
    assert not (aimos_home / "brain.sqlite3").exists()
