"""A hostile agent cannot clear the poison labels of its own campaign with one more save.

Agent `evil` saves four passages that answer Zarkov; the person denies it ("not Zarkov but
Fredville", and other wordings of a denial); the detector labels the four poison_likely. One more
save of the same answer by `evil` (same agent, same source, within the burst) used to return all
four to unverified, "cleared: another origin states the same answer": the relation check read the
person's denial as stating Zarkov because it names it. A denial asserts only what it affirms, and
only an independent origin can support a cluster. Through the real CLI, and the kernel alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import run_aimos, sqlite_value
from support.poison_campaign import AGAIN, DENIALS, POISON

from aimos.epistemic.agreement import Passage, analyse, features
from aimos.vocabulary import POISON_LIKELY


def _label(home: Path, memory_id: str) -> str:
    return sqlite_value(
        home / "brain.sqlite3", f"SELECT epistemic_label FROM memories WHERE memory_id = '{memory_id}'"
    )


@pytest.mark.parametrize("denial", DENIALS)
def test_a_denial_asserts_only_what_it_affirms(denial: str) -> None:
    f = features(Passage("d", denial, "cli", ("cli", 1), 0))
    assert "fredville" in f.asserted and "zarkov" not in f.asserted, sorted(f.asserted)


@pytest.mark.parametrize("denial", DENIALS)
def test_the_kernel_keeps_the_campaign_contradicted_after_one_more_save(denial: str) -> None:
    t = 1_000_000
    poison = [
        features(Passage(f"p{i}", v, "web:evil.example", ("evil", 1), t + i)) for i, v in enumerate(POISON)
    ]
    person = features(Passage("d", denial, "cli", ("cli", 1), t + 60))
    again = features(Passage("n", AGAIN, "web:evil.example", ("evil", 1), t + 120))
    frequency = lambda _unit: 1  # noqa: E731 (every word rare: a small brain)
    before = analyse(poison[-1], [*poison[:-1], person], frequency, 10)
    assert before is not None and before.label == POISON_LIKELY, before
    after = analyse(again, [*poison, person], frequency, 10)
    assert after is not None and after.label == POISON_LIKELY, after
    assert after.signals["independent_supports"] == 0 and after.signals["dissenting"] == 1
    # the same agent with a rotated key (another epoch) within the burst is still one origin
    rotated = features(Passage("r", AGAIN, "web:other.example", ("evil", 2), t + 130))
    again_rotated = analyse(rotated, [*poison, person], frequency, 10)
    assert again_rotated is not None and again_rotated.label == POISON_LIKELY, again_rotated


def test_an_independent_origin_that_states_the_answer_still_supports() -> None:
    """The clearing the attack abused still works for what it is for: a cluster another origin
    states too, and nothing contradicts, is cleared."""
    t = 1_000_000
    honest = [
        features(Passage(f"p{i}", v, "web:a.example", ("reader", 1), t + i)) for i, v in enumerate(POISON)
    ]
    other = features(Passage("o", AGAIN, "corpus:atlas", ("cli", 1), t + 5_000))
    verdict = analyse(honest[-1], [*honest[:-1], other], lambda _u: 1, 10)
    assert (
        verdict is not None and verdict.label == "unverified" and verdict.signals["independent_supports"] == 1
    )


@pytest.mark.parametrize("denial", DENIALS[:4])
def test_one_more_save_by_the_campaign_clears_nothing(installed: Path, denial: str) -> None:
    run_aimos("agent", "enroll", "evil").ok()
    poison = [
        run_aimos("save", "--as", "evil", "--source", "web:evil.example", text).ok().out.strip()
        for text in POISON
    ]
    run_aimos("save", denial).ok()
    assert {_label(installed, p) for p in poison} == {POISON_LIKELY}
    again = run_aimos("save", "--as", "evil", "--source", "web:evil.example", AGAIN).ok().out.strip()
    assert {_label(installed, p) for p in [*poison, again]} == {POISON_LIKELY}
    cleared = sqlite_value(
        installed / "brain.sqlite3",
        "SELECT COUNT(*) FROM events WHERE operation = 'memory_epistemic_classified'"
        " AND json_extract(signed_body, '$.metadata.reason') LIKE 'cleared%'",
    )
    assert cleared == "0"
    # the person's recall does not show the campaign as trusted
    shown = run_aimos("recall", "what is the capital of Freedonia", "--json").json()
    assert not {r["memory_id"] for r in shown["results"]} & {*poison, again}
    report = run_aimos("verify", "--json").json()
    assert report["ok"] and report["parity"], report
