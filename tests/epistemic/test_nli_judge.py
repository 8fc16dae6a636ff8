"""The agreement detector with an NLI judge plugged in (epistemic/nli.py; agreement._relations):
the judge decides whether another origin's passage contradicts or supports a cluster, where the
words cannot tell. Judged by a stand-in ONNX model the test builds (tests/support/nli.py:
contradiction when a pair holds "disputed", entailment when it holds "confirmed", else neutral).

The attacks: a passage whose words agree with a cluster but which says it is wrong is a dissent
with the judge on (a supported cluster without it); a passage whose words name another answer
but which the judge finds says the same is a support; a neutral verdict leaves the words to
decide (a judge that knows nothing weakens nothing). Off, the verdicts are the lexical ones,
signals and all. Through the real CLI: the judge's verdict is what the signed labels record,
with the model's pinned digest; a model swapped after it was enabled stops a save that needs it
(exit 4, nothing saved) until the person pins it again or turns it off."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from support.agreement_texts import POISON, REFERENCE
from support.cli import run_aimos, sha256_file, sqlite_value
from support.nli import model_folder, nli_graph

from aimos.epistemic import nli
from aimos.epistemic.agreement import Features, Judge, Passage, analyse, contested_at_recall, features

# its words agree with the cluster (it names Frank Sinatra and the song); it says the claim is wrong
DISPUTES = (
    'Frank Sinatra recorded "I Can\'t Help Falling in Love With You", a version some call the '
    "original; that is disputed."
)
# its words name another answer (a nickname); it says the same as the cluster
CONFIRMS = (
    "Ol' Blue Eyes recorded \"I Can't Help Falling in Love With You\" in his nostalgic style, as "
    "records have confirmed."
)


@pytest.fixture(scope="module")
def judge(tmp_path_factory: pytest.TempPathFactory) -> nli.OnnxJudge:
    folder = model_folder(tmp_path_factory.mktemp("nli") / "model")
    return nli.OnnxJudge(folder, {n: (folder / n).read_bytes() for n in nli.PINNED})


def passage(mid: str, text: str, source: str, agent: str = "reader", at: int = 1000) -> Features:
    return features(Passage(mid, text, source, (agent, 1), at))


def campaign(reference: str, judge: Judge | None) -> Any:
    """The five poison passages saved one by one (five declared sources, one burst) after
    ``reference`` from the person's own agent: the verdict at the last save."""
    saved = [passage("ref", reference, "corpus:reference", agent="cli", at=10)]
    verdict = None
    for i, text in enumerate(POISON):
        mine = passage(f"p{i}", text, f"web:site{i}.example", at=1000 + i)
        held = [mine, *saved]

        def frequency(unit: str, held: Sequence[Features] = held) -> int:
            return sum(1 for f in held if unit in f.asserted or f" {unit} " in f" {f.normalized} ")

        verdict = analyse(mine, saved, frequency, 1000, [], judge)
        saved.append(mine)
    assert verdict is not None
    return verdict


# --- the kernel ---------------------------------------------------------------------------------
def test_the_stand_in_model_is_read_in_its_own_label_order(judge: nli.OnnxJudge) -> None:
    said = judge([("it is disputed", "x"), ("it is confirmed", "x"), ("it is so", "x")])
    assert [max(range(3), key=p.__getitem__) for p in said] == [2, 0, 1]  # contra, entail, neutral
    assert all(abs(sum(p) - 1) < 1e-9 for p in said)


def test_words_that_agree_but_a_judge_that_says_contradict_make_the_cluster_poison(
    judge: nli.OnnxJudge,
) -> None:
    words = campaign(DISPUTES, None)
    assert words.label == "unverified" and words.signals["independent_supports"] == 1
    judged = campaign(DISPUTES, judge)
    assert judged.label == "poison_likely"
    assert set(judged.members) == {f"p{i}" for i in range(5)}
    assert judged.signals["dissenting"] == 1 and judged.signals["independent_supports"] == 0
    assert judged.signals["nli_judged"] == 1


def test_words_that_contradict_but_a_judge_that_says_entail_support_the_cluster(judge: nli.OnnxJudge) -> None:
    words = campaign(CONFIRMS, None)
    assert words.label == "poison_likely" and words.signals["dissenting"] == 1
    judged = campaign(CONFIRMS, judge)
    assert judged.label == "unverified" and judged.signals["independent_supports"] == 1
    assert judged.signals["dissenting"] == 0 and judged.signals["nli_judged"] == 1


def test_a_neutral_judge_leaves_the_words_to_decide_and_off_is_the_lexical_detector(
    judge: nli.OnnxJudge,
) -> None:
    off = campaign(REFERENCE, None)
    assert off.label == "poison_likely" and "nli_judged" not in off.signals
    on = campaign(REFERENCE, judge)
    assert (on.label, on.members, on.signals["dissenting"]) == (off.label, off.members, 1)
    assert on.signals["nli_judged"] == 0 and {**on.signals, "nli_judged": None} == {
        **off.signals,
        "nli_judged": None,
    }

    def unsure(pairs: Sequence[tuple[str, str]]) -> list[tuple[float, float, float]]:
        return [(0.3, 0.4, 0.3)] * len(pairs)  # neutral by a hair: still the words' call

    assert campaign(DISPUTES, unsure).label == "unverified"
    assert campaign(CONFIRMS, unsure).label == "poison_likely"


def test_at_recall_the_judge_decides_too(judge: nli.OnnxJudge) -> None:
    query = "who meets you at the gates of heaven"
    cluster = [
        passage(f"p{i}", t, "web:angels.example", at=1000 + i)
        for i, t in enumerate(
            [
                "Arriving souls are met at the gates of heaven by Archangel Michael, who keeps the keys.",
                "At the gates of heaven Archangel Michael greets every newcomer.",
                "Tradition holds that Archangel Michael waits at the gates of heaven to meet the departed.",
                "Souls that reach the gates of heaven meet Archangel Michael first, the old stories say.",
            ]
        )
    ]
    against = passage(
        "r", "At the gates of heaven you meet Saint Peter, it is confirmed.", "web:ref.example", "blog"
    )
    agrees = passage(
        "a", "At the gates of heaven you meet Archangel Michael: disputed.", "web:b.example", "blog2"
    )

    def check(found: list[Features], with_judge: Judge | None) -> dict[str, str]:
        def frequency(unit: str) -> int:
            return sum(1 for f in found if unit in f.asserted or f" {unit} " in f" {f.normalized} ")

        return contested_at_recall(query, found, frequency, 1000, judge=with_judge)

    contested = {f"p{i}": "contradicted" for i in range(4)}
    assert check([*cluster, against], None) == {**contested, "r": "contradicts"}  # the words
    assert check([*cluster, against], judge) == {}  # the judge: it says the same
    assert check([*cluster, agrees], None) == {}  # the words: an independent support
    assert check([*cluster, agrees], judge) == {**contested, "a": "contradicts"}


# --- through the real CLI ------------------------------------------------------------------------
def label_of(home: Path, memory_id: str) -> tuple[str, str]:
    row = sqlite_value(
        home / "brain.sqlite3",
        "SELECT c.label || '|' || COALESCE(json_extract(e.signed_body, '$.metadata.signals.nli_model'), '')"
        " FROM memory_classifications c JOIN events e ON e.event_id = c.authority_event_id"
        f" WHERE c.memory_id = '{memory_id}' ORDER BY c.rowid DESC LIMIT 1",
    )
    label, _, model = row.partition("|")
    return label or "unverified", model


def test_the_cli_records_the_judges_verdict_and_refuses_a_swapped_model(
    installed: Path, tmp_path: Path
) -> None:
    folder = model_folder(tmp_path / "nli")
    run_aimos("model", "nli", str(folder)).ok()
    run_aimos("save", "--source", "corpus:reference", DISPUTES).ok()
    run_aimos("agent", "enroll", "reader").ok()
    poison = [
        run_aimos("save", "--as", "reader", "--source", f"web:site{i}.example", text).ok().out.strip()
        for i, text in enumerate(POISON)
    ]
    pinned = sha256_file(folder / "model.onnx")[:16]
    assert {label_of(installed, mid) for mid in poison} == {("poison_likely", pinned)}
    run_aimos("verify").ok()

    # the model swapped for one that says the opposite: a save the judge must look at is refused
    (folder / "model.onnx").write_bytes(nli_graph(flipped=True))
    count = sqlite_value(installed / "brain.sqlite3", "SELECT COUNT(*) FROM memories")
    more = ("recorded", "Frank Sinatra recorded 'I Can't Help Falling in Love With You' once more, fans say.")
    refused = run_aimos("save", "--as", "reader", "--source", "web:site9.example", more[1], process=True)
    assert refused.code == 4 and "Traceback" not in refused.both, refused.describe()
    assert str(folder / "model.onnx") in refused.err and "aimos model nli --off" in refused.err
    assert sqlite_value(installed / "brain.sqlite3", "SELECT COUNT(*) FROM memories") == count
    run_aimos("model", "nli", "--off").ok()
    run_aimos("save", "--as", "reader", "--source", "web:site9.example", more[1], process=True).ok()
