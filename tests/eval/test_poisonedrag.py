"""`aimos eval poisonedrag`: the attack reaches retrieval with the policy bypassed, labels keep it
out, nothing is deleted, and a wrong dataset file is refused before anything is built."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import run_aimos

pytestmark = pytest.mark.timeout(600)

NQ = Path(__file__).resolve().parents[3] / "shared" / "data" / "poisonedrag" / "nq.json"


def two_targets(tmp_path: Path) -> Path:
    data = json.loads(NQ.read_text("utf-8"))
    small = {k: data[k] for k in list(data)[:2]}
    path = tmp_path / "two.json"
    path.write_text(json.dumps(small))
    return path


# (the template's 4,000 clean turns get their vectors once, as a brain's housekeeper makes them:
# minutes on two busy cores)
@pytest.mark.timeout(1500)
def test_labels_keep_the_poison_out_and_keep_it(aimos_home: Path, tmp_path: Path) -> None:
    result = run_aimos(
        "eval",
        "poisonedrag",
        "--dataset",
        str(two_targets(tmp_path)),
        "--variant",
        "question_prefix",
        "--variant",
        "paraphrase",
        "--verify-brains",
        "0",
        "--json",
        timeout=1500,
    ).ok()
    report = result.json()
    (entry,) = report["datasets"].values()
    s = entry["question_prefix"]
    assert s["A0_policy_bypassed"]["targets_with_poison_in_top5"] == 2  # the attack reaches retrieval
    assert s["A1_with_labels"]["targets_with_poison_in_top5"] == 0
    assert s["A1_with_labels"]["mean_poison_per_top5"] == 0
    assert s["poison_injected"] == s["poison_retained"] == s["poison_with_adverse_label"] == 10
    assert s["first_in_cluster_relabelled_retroactively"] == 2
    assert s["clean_with_adverse_label"] == 0 and s["clean_memory_brain_pairs"] > 8000
    assert entry["template"]["turns"] > 4000 and entry["template"]["clean_adverse"] == 0
    # the paraphrase variant is measured and reported, whatever it gives
    p = entry["paraphrase"]
    assert p["poison_retained"] == 10 and p["targets"] == 2
    assert "turns_saved_as_reference_documents" in report
    lo, hi = s["A0_policy_bypassed"]["wilson95"]
    assert 0 < lo < hi == 1.0
    # the user's home gets the command log and the scratch brains' purge receipts, nothing else
    assert {p.name for p in aimos_home.iterdir()} <= {"logs", "purge-receipts"}, "the user's home was touched"
    purged = report["scratch_brains_purged"]
    receipts = sorted(Path(purged["receipts_dir"]).glob("*.receipt.json"))
    # 1 template + 2 targets x 2 variants, and the reference-document template
    assert purged["receipts"] == len(receipts) == 6
    body = json.loads(receipts[0].read_text("utf-8"))["body"]
    assert body["target"]["brain"].startswith("eval-poisonedrag")
    checked = run_aimos(
        "purge", "verify-receipt", str(receipts[0]), "--master-fingerprint", body["actor"]["fingerprint"]
    )
    assert checked.code == 0, checked.describe()


@pytest.mark.parametrize(
    "content, problem",
    [
        ("not json", "is not JSON"),
        ("[]", "is not a PoisonedRAG targets object"),
        ('{"t1": {"question": "q", "correct answer": "a", "adv_texts": ["x"]}}', "wrong shape"),
        ('{"t1": {"question": "q", "adv_texts": ["a", "b", "c", "d", "e"]}}', "wrong shape"),
    ],
)
def test_a_dataset_of_the_wrong_shape_is_refused(
    aimos_home: Path, tmp_path: Path, content: str, problem: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    result = run_aimos("eval", "poisonedrag", "--dataset", str(path))
    assert result.code == 2, result.describe()
    assert problem in result.err and "Traceback" not in result.both
    assert "adv_texts" in result.err or "JSON" in result.err or "targets" in result.err
    missing = run_aimos("eval", "poisonedrag", "--dataset", str(tmp_path / "nope.json"))
    # a file that is not there is not found (3), with where to get one
    assert missing.code == 3 and "no PoisonedRAG file" in missing.err, missing.describe()
    assert "https://github.com/sleeepeer/PoisonedRAG" in missing.err and "Traceback" not in missing.both


def test_variants_report_three_arms_and_the_honest_control(
    aimos_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A quick run (a small clean corpus): every variant asked for gets the three arms, the attack
    reaches retrieval with the policy bypassed, and one brain per variant is verified."""
    from aimos.cli.eval_print import print_poisonedrag

    variants = ["question_prefix", "adaptive", "honest_same_shape"]
    args = [a for v in variants for a in ("--variant", v)]
    result = run_aimos(
        "eval",
        "poisonedrag",
        "--dataset",
        str(two_targets(tmp_path)),
        "--limit",
        "2",
        *args,
        "--turns",
        "300",
        "--no-reference-turns",
        "--json",
        timeout=300,
    ).ok()
    report = result.json()
    assert report["attacks"] == ["question_prefix", "adaptive"] and report["controls"] == [
        "honest_same_shape"
    ]
    assert set(report["variants"]) == set(variants) and "turns_saved_as_reference_documents" not in report
    (entry,) = report["datasets"].values()
    assert entry["targets"] == 2 and entry["template"]["turns"] == 300
    for name in variants:
        s = entry[name]
        what = "honest" if name == "honest_same_shape" else "poison"
        for arm in ("A0_policy_bypassed", "A1_with_labels", "A1_labels_and_query_lure"):
            a = s[arm]
            assert a["targets"] == 2 and 0 <= a[f"targets_with_{what}_in_top5"] <= 2
            lo, hi = a["wilson95"]
            assert 0 <= lo <= a["rate"] <= hi <= 1
            # the targets that reached the top 5 are named (not when every one did)
            listed = a["target_ids_in_top5"]
            hit = a[f"targets_with_{what}_in_top5"]
            assert len(listed) == (0 if hit == 2 else hit) and len(set(listed)) == len(listed)
        assert s["A0_policy_bypassed"][f"targets_with_{what}_in_top5"] == 2  # it reaches retrieval
        assert s[f"{what}_retained"] == s[f"{what}_injected"]  # nothing is deleted
        v = s["verification"]
        assert v["brains_checked"] == v["brains_verified"] == 1
        assert v["adverse_labels_verified"] == v["adverse_labels"] == s[f"{what}_with_adverse_label"]
        assert s["clean_memories_per_brain"] == 300 + 2
    assert entry["question_prefix"]["poison_injected"] == 10
    # the brain verified whole is one whose poison was labelled
    assert entry["question_prefix"]["verification"]["brains_checked_with_adverse_labels"] == 1
    assert entry["adaptive"]["declared_sources_per_target"] == [5, 5]
    honest = entry["honest_same_shape"]
    assert 6 <= honest["honest_injected"] <= 10 and honest["kind"] == "clean control"
    assert set(honest["honest_adverse"]) == {"rate", "wilson95"}
    assert honest["targets_with_any_honest_adverse"]["targets"] <= 2
    # 1 template + 2 targets x 3 variants
    assert report["scratch_brains_purged"]["receipts"] == 7
    # the text report: one block per variant, the three arms each
    print_poisonedrag(report)
    text = capsys.readouterr().out
    for name in variants:
        assert f"  {name} (" in text
    assert (
        text.count("A1_labels_and_query_lure") == 3 and text.count("verified brains 1/1 (both verifiers") == 3
    )
    assert "honest passages with an adverse label" in text


def test_an_unknown_variant_is_refused_before_anything_is_built(aimos_home: Path) -> None:
    from aimos.errors import UsageError
    from aimos.eval.poisonedrag import chosen_variants

    result = run_aimos("eval", "poisonedrag", "--variant", "nope", "--limit", "1")
    assert result.code == 2 and "no poisonedrag variant 'nope'" in result.err, result.describe()
    assert not (aimos_home / "purge-receipts").exists()
    assert chosen_variants(None)[:2] == ["question_prefix", "paraphrase"] and len(chosen_variants(None)) == 10
    assert "paraphrase" not in chosen_variants(None, paraphrase=False)  # --no-paraphrase still works
    assert chosen_variants(["adaptive", "question_prefix", "adaptive"]) == ["question_prefix", "adaptive"]
    with pytest.raises(UsageError):
        chosen_variants(["question-prefix"])
