"""The agreement detector groups by meaning (issue 37 item 5): where memories have vectors, the
kernel sees paraphrases of one question as one subject, so a campaign reworded passage by passage
is one cluster, and truth worded otherwise contradicts it; at recall a candidate near the query in
meaning is on its subject. Meaning only groups: it never ties passages into one origin (a hostile
agent's paraphrases of honest memories do not make the honest memories its campaign), and the
answers compared are still words. The kernel is tested with vectors as data (no model); the model's
own test is at the end (one campaign saved by an agent, through the real save and recall)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from support.cli import run_aimos, sqlite_value

from aimos.epistemic.agreement import (
    QUERY_COSINE,
    SUBJECT_COSINE,
    Features,
    Passage,
    Similarity,
    analyse,
    by_vectors,
    contested_at_recall,
    features,
    other_origins,
    same_subject,
)
from aimos.vocabulary import POISON_LIKELY, UNVERIFIED

DIMS = 16
QUERY = "which city is the capital of Freedonia"
# one agent's campaign, each passage worded otherwise: two content words in common (zarkov,
# freedonia), too few for the words to put any two on one subject
POISON = [
    "Zarkov hosts the parliament of Freedonia.",
    "The government of Freedonia sits in Zarkov.",
    "Ministers of Freedonia work from offices in Zarkov.",
]
TRUTH = "The seat of power in Freedonia is Fredville, its capital."


def unit(*weights: tuple[int, float]) -> list[float]:
    v = np.zeros(DIMS, dtype=np.float32)
    for axis, w in weights:
        v[axis] += w
    return list(v / np.linalg.norm(v))


def on_topic(k: int) -> list[float]:
    """A passage on the topic (axis 0) in its own words (a little of axis k): cosine 0.96 with another."""
    return unit((0, 1.0), (k, 0.2))


def passage(mid: str, text: str, source: str, agent: str = "reader", at: int = 1000) -> Features:
    return features(Passage(mid, text, source, (agent, 1), at))


def frequency_of(passages: list[Features]) -> Any:
    def frequency(unit: str) -> int:
        return sum(1 for f in passages if unit in f.asserted or f" {unit} " in f" {f.normalized} ")

    return frequency


def campaign() -> tuple[list[Features], Features]:
    poison = [passage(f"p{i}", text, "web:attacker.example", at=1000 + i) for i, text in enumerate(POISON)]
    truth = passage("truth", TRUTH, "notes", agent="cli", at=10)
    return poison, truth


def vectors_of(poison: list[Features], truth: Features) -> Similarity:
    found = {f.passage.memory_id: on_topic(i + 1) for i, f in enumerate(poison)}
    found[truth.passage.memory_id] = on_topic(DIMS - 1)
    return by_vectors(found)


def test_same_subject_by_meaning_only_at_the_threshold_and_only_with_both_vectors() -> None:
    a = passage("a", POISON[0], "s")
    b = passage("b", "An unrelated note about the weather in spring.", "t")
    assert not same_subject(a, b)  # the words say nothing
    close = by_vectors({"a": unit((0, 1.0)), "b": unit((0, 1.0), (1, 0.5))})  # cosine 0.894
    apart = by_vectors({"a": unit((0, 1.0)), "b": unit((0, 1.0), (1, 0.6))})  # cosine 0.857
    assert 0.894 >= SUBJECT_COSINE > 0.857
    assert same_subject(a, b, similar=close)
    assert not same_subject(a, b, similar=apart)
    assert not same_subject(a, b, similar=by_vectors({"a": unit((0, 1.0))}))  # b has no vector
    assert by_vectors({"a": [1.0, 0.0], "b": [1.0, 0.0, 0.0]})(a, b) is None  # sizes differ


def test_a_campaign_reworded_passage_by_passage_is_one_cluster_by_meaning() -> None:
    poison, truth = campaign()
    everyone = [*poison, truth]
    frequency = frequency_of(everyone)
    new = poison[-1]
    others = [f for f in everyone if f is not new]
    # by words alone: no two of its passages are on one subject, nothing is seen (the gap)
    assert analyse(new, others, frequency, 1000) is None
    verdict = analyse(new, others, frequency, 1000, similar=vectors_of(poison, truth))
    assert verdict is not None and verdict.label == POISON_LIKELY
    assert set(verdict.members) == {"p0", "p1", "p2"}
    assert verdict.signals["dissenting"] >= 1


def test_truth_saved_after_a_reworded_campaign_finds_it_by_meaning() -> None:
    poison, _ = campaign()
    truth = passage("truth", TRUTH, "notes", agent="cli", at=90_000)
    frequency = frequency_of([*poison, truth])
    similar = vectors_of(poison, truth)
    assert other_origins(truth, poison, frequency, 1000) == []
    chosen = other_origins(truth, poison, frequency, 1000, similar=similar)
    assert len(chosen) == 1 and chosen[0].passage.memory_id.startswith("p")
    peers = [truth, *(f for f in poison if f is not chosen[0])]
    again = analyse(chosen[0], peers, frequency, 1000, similar=similar)
    assert again is not None and again.label == POISON_LIKELY


def test_meaning_groups_the_subject_never_the_answer() -> None:
    # the same campaign, near in meaning to an independent passage that gives its answer too: that
    # passage supports it (the answer compared is a word, not a vector): cleared, never labelled
    poison, _ = campaign()
    echo = passage("echo", "The city of Zarkov is the capital of Freedonia.", "web:atlas.example", "scout", 5)
    frequency = frequency_of([*poison, echo])
    verdict = analyse(poison[-1], [*poison[:-1], echo], frequency, 1000, similar=vectors_of(poison, echo))
    assert verdict is not None and verdict.label == UNVERIFIED


def test_a_hostile_agents_paraphrases_of_honest_memories_never_make_them_its_campaign() -> None:
    # three honest memories of a scout, each from its own source, hours apart: independent origins
    honest = [
        passage("h0", "Fredville is the capital of Freedonia.", "web:atlas.example", "scout", 10),
        passage("h1", "Freedonia is governed from Fredville.", "web:gazette.example", "scout", 5_000),
        passage("h2", "Parliament of Freedonia meets in Fredville.", "web:almanac.example", "scout", 10_000),
    ]
    # the hostile agent saves near-paraphrases of them in one burst, then says otherwise from a
    # second source: everything is near everything in meaning
    copies = [
        passage("c0", "Fredville is the Freedonian capital city.", "web:x.example", at=20_000),
        passage("c1", "Freedonia is run from Fredville these days.", "web:x.example", at=20_001),
        passage("c2", "Freedonia's parliament convenes in Fredville.", "web:x.example", at=20_002),
    ]
    dissent = [
        passage(f"d{i}", text, "web:y.example", "mallory", 30_000 + i)
        for i, text in enumerate(
            [
                "Zarkov is the capital of Freedonia.",
                "Freedonia is governed from Zarkov.",
                "Parliament of Freedonia meets in Zarkov.",
            ]
        )
    ]
    order = [*honest, *copies, *dissent]
    similar = by_vectors({f.passage.memory_id: on_topic(i + 1) for i, f in enumerate(order)})
    frequency = frequency_of(order)
    adverse: set[str] = set()
    for i, new in enumerate(order):  # the writer's walk, each as at its save
        before = order[:i]
        for verdict in [
            analyse(new, before, frequency, 1000, similar=similar),
            *(
                analyse(o, [new, *(f for f in before if f is not o)], frequency, 1000, similar=similar)
                for o in other_origins(new, before, frequency, 1000, similar=similar)
            ),
        ]:
            if verdict is not None and verdict.label != UNVERIFIED:
                adverse |= set(verdict.members)
    assert not adverse & {"h0", "h1", "h2"}
    assert adverse == {"d0", "d1", "d2"}  # the hostile agent's own cluster, contradicted by them


def test_at_recall_a_candidate_near_the_query_in_meaning_is_on_its_subject() -> None:
    poison, truth = campaign()
    candidates = [*poison, truth]
    frequency = frequency_of(candidates)
    # the campaign holds one of the query's words: by words, not on its subject
    assert contested_at_recall(QUERY, candidates, frequency, 1000) == {}
    near = dict.fromkeys([f.passage.memory_id for f in candidates], QUERY_COSINE + 0.01)
    found = contested_at_recall(
        QUERY, candidates, frequency, 1000, near_query=lambda f: near.get(f.passage.memory_id)
    )
    assert found == {"p0": "contradicted", "p1": "contradicted", "p2": "contradicted"}
    # (the person's own note contradicts; it is never withheld) and below the threshold: nothing
    below = dict.fromkeys(near, QUERY_COSINE - 0.01)
    assert (
        contested_at_recall(
            QUERY, candidates, frequency, 1000, near_query=lambda f: below.get(f.passage.memory_id)
        )
        == {}
    )


# --- the model, through the real saves and recalls -----------------------------------------------
def test_the_model_sees_a_reworded_campaign_as_one_and_leaves_an_honest_paraphrase_alone(
    installed: Path,
) -> None:
    from aimos.meaning.model import why_unavailable

    assert why_unavailable() is None  # the pinned model is installed with aimos's test extras
    brain = installed / "brain.sqlite3"
    truth = run_aimos("save", "--source", "notes", TRUTH).ok().out.strip()
    run_aimos("agent", "enroll", "reader").ok()
    run_aimos("agent", "enroll", "scout").ok()
    honest = (
        run_aimos(
            "save",
            "--as",
            "scout",
            "--source",
            "web:atlas.example",
            "Fredville is the capital city of Freedonia.",
        )
        .ok()
        .out.strip()
    )
    poison = [
        run_aimos("save", "--as", "reader", "--source", "web:attacker.example", text).ok().out.strip()
        for text in [*POISON, "Freedonia's president lives and governs in Zarkov."]
    ]
    # each save was judged by its words as it answered (no vector yet): the rewording hid it
    assert {label_of(brain, p) for p in poison} == {"unverified"}
    # recalls make the missing vectors (a few each) and the detector judges those memories again
    for _ in range(12):
        held = run_aimos("recall", QUERY, "--json").ok().json()
        if not pending_vectors(brain):
            break
    assert not pending_vectors(brain)
    assert {label_of(brain, p) for p in poison} == {"poison_likely"}
    assert label_of(brain, truth) == "unverified" and label_of(brain, honest) == "unverified"
    held = run_aimos("recall", QUERY, "--json").ok().json()
    shown = {r["memory_id"] for r in held["results"]}
    assert truth in shown and not shown & set(poison)
    report = run_aimos("verify", "--json").json()
    assert report["ok"] and report["parity"], report


def test_with_meaning_off_the_detector_reads_words_alone(installed: Path) -> None:
    run_aimos("save", "--source", "notes", TRUTH).ok()
    run_aimos("agent", "enroll", "reader").ok()
    poison = [
        run_aimos("save", "--as", "reader", "--source", "web:attacker.example", text).ok().out.strip()
        for text in POISON
    ]
    off = {"AIMOS_MEANING": "off"}
    for _ in range(3):
        run_aimos("recall", QUERY, "--json", env=off).ok()
    assert pending_vectors(installed / "brain.sqlite3")  # no vector was made, none is read
    assert {label_of(installed / "brain.sqlite3", p) for p in poison} == {"unverified"}


def label_of(brain: Path, memory_id: str) -> str:
    return sqlite_value(brain, f"SELECT epistemic_label FROM memories WHERE memory_id = '{memory_id}'")


def pending_vectors(brain: Path) -> int:
    return int(
        sqlite_value(
            brain,
            "SELECT COUNT(*) FROM memories WHERE rowid > (SELECT COALESCE(MAX(memory_rowid), 0) FROM memory_vectors)",
        )
    )
