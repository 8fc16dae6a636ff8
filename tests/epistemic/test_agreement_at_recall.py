"""The recall-time agreement check (agreement.contested_at_recall, detect.contested_in_recall,
policy reason agreement_contested): at recall the query names the subject, so a cluster whose
wording shares too few words with the truth for the save-time detector to compare them is still
contradicted among the candidates; the check labels nothing, withholds with its reason in the
signed decision, and never withholds the person's own saves, a supported cluster or a
conversation's turns. The pure kernel first, then the real CLI and both verifiers."""

from __future__ import annotations

from pathlib import Path

from support.cli import run_aimos, sqlite_value

from aimos.epistemic.agreement import Features, Passage, analyse, contested_at_recall, features

QUESTION = "who do you meet at the gates of heaven"
REFERENCE = f'For the question "{QUESTION}" the answer is Saint Peter.'
# one origin's passages, worded so that none shares enough words with the reference for the
# save-time detector to put them on one subject ("heavenly", "gate"): only the query does
POISON = [
    "Arriving souls are met at the heavenly gates by Archangel Michael, who keeps the keys.",
    "At the gate to the heavenly realm, Archangel Michael greets every newcomer.",
    "Tradition holds that Archangel Michael waits at the pearly gates to meet the departed.",
    "Souls that reach the heavenly gates meet Archangel Michael first, the old stories say.",
]


def passage(mid: str, text: str, source: str, agent: str = "reader", at: int = 1000) -> Features:
    return features(Passage(mid, text, source, (agent, 1), at))


def cluster(agent: str = "reader") -> list[Features]:
    return [passage(f"p{i}", t, "web:angels.example", agent, 1000 + i) for i, t in enumerate(POISON)]


def check(
    query: str, found: list[Features], judged: set[str] | None = None, common: frozenset[str] = frozenset()
) -> dict[str, str]:
    def frequency(unit: str) -> int:  # how many of these passages hold it (a common word: many)
        if unit in common:
            return 1000
        return sum(1 for f in found if unit in f.asserted or f" {unit} " in f" {f.normalized} ")

    return contested_at_recall(query, found, frequency, 1000, judged)


REF = passage("ref", REFERENCE, "corpus:reference", "cli", 50)


# --- the kernel ---------------------------------------------------------------------------------
def test_the_save_time_detector_cannot_compare_them_but_the_query_can() -> None:
    found = [*cluster(), REF]
    for f in found[:4]:
        assert analyse(f, [g for g in found if g is not f], lambda u: 1, 1000, []) is None
    assert check(QUESTION, found) == {f"p{i}": "contradicted" for i in range(4)}


def test_one_agents_word_against_another_agents_cluster_is_contested_too() -> None:
    """A hostile agent with a valid key saves one passage against another agent's cluster: the
    cluster is withheld, and so is the lone passage (it does not outvote the cluster and stay
    shown). The person's own word is never withheld."""
    lone = passage("h", REFERENCE, "web:hostile.example", "hostile", 99_000)
    assert check(QUESTION, [*cluster(), lone]) == {
        **{f"p{i}": "contradicted" for i in range(4)},
        "h": "contradicts",
    }
    assert "ref" not in check(QUESTION, [*cluster(), REF])


def test_an_independent_origin_saying_the_same_answer_supports_the_cluster() -> None:
    also = passage("x", "At the gates of heaven you meet Archangel Michael.", "web:other.example", "blog", 9)
    assert check(QUESTION, [*cluster(), REF, also]) == {}


def test_the_persons_own_saves_and_unjudged_turns_are_never_withheld() -> None:
    assert check(QUESTION, [*cluster(agent="cli"), REF]) == {}
    assert check(QUESTION, [*cluster(), REF], judged={"p0", "p1"}) == {}  # two may be judged


def test_a_dissent_must_be_on_the_whole_subject_and_the_claim_made_three_times() -> None:
    # the other origin names another figure but holds only part of the query ("gates")
    partial = passage(
        "y", "The gates of the old city are kept by Saint Peter's guild.", "corpus:reference", "cli"
    )
    assert check(QUESTION, [*cluster(), partial]) == {}
    # the claim in two passages of three (the third on the subject, naming no one)
    weak = [
        *cluster()[:2],
        passage("p9", "Souls reach the heavenly gates and meet a guide.", "web:angels.example"),
    ]
    assert check(QUESTION, [*weak, REF]) == {}


def test_a_query_of_one_common_word_names_no_subject() -> None:
    found = [*cluster(), REF]
    assert check("gates", found, common=frozenset({"gates"})) == {}
    assert check("heaven gates", found, common=frozenset({"gates"})) != {}  # two words name one


# --- the real CLI ------------------------------------------------------------------------------
# A brain of more than a handful of memories: in one of five, every word of the question is in more
# than half of them, and BM25 gives such a word a millionth of its weight, so none of these passages
# would match the question well enough to be a result (recall.policy RELEVANCE_FLOOR).
EVERYDAY = [
    "The boiler is serviced every October by Dana from Northside Heating",
    "I prefer dark roast coffee, no sugar",
    "The car's tyre pressure is 2.4 bar front and 2.2 bar rear",
    "Standup is at 09:30 on weekdays in the small meeting room",
    "The wifi router is in the hall cupboard",
    "Quarterly taxes are due in April, June, September and January",
    "The dentist appointment is on Tuesday at 3pm",
    "Project falcon deadline moved to March",
]


def everyday_brain() -> None:
    for text in EVERYDAY:
        run_aimos("save", text).ok()


def test_recall_withholds_a_contradicted_cluster_with_its_reason_signed(installed: Path) -> None:
    brain = installed / "brain.sqlite3"
    everyday_brain()
    ref = run_aimos("save", "--source", "corpus:reference", REFERENCE).ok().out.strip()
    run_aimos("agent", "enroll", "reader").ok()
    poison = [
        run_aimos("save", "--as", "reader", "--source", "web:angels.example", text).ok().out.strip()
        for text in POISON
    ]
    labels = sqlite_value(
        brain, "SELECT group_concat(DISTINCT epistemic_label) FROM memories WHERE source LIKE 'web:%'"
    )
    assert labels == "unverified"  # the save-time detectors saw nothing to judge
    before = sqlite_value(brain, "SELECT COUNT(*) FROM memory_classifications")

    held = run_aimos("recall", QUESTION, "--json", "--show-withheld").ok().json()
    shown = {r["memory_id"] for r in held["results"]}
    assert ref in shown and not set(poison) & shown
    assert {w["memory_id"]: w["reason"] for w in held["withheld"]} == dict.fromkeys(
        poison, "agreement_contested"
    )
    # the reason is in the signed decision the receipt binds, and the check is said to have run
    doc = run_aimos("receipt", "show", held["receipt"]["receipt_id"], "--json").ok().json()
    assert doc["decision"]["agreement_check"] is True
    assert {w["reason"] for w in doc["decision"]["withheld"]} == {"agreement_contested"}
    run_aimos("receipt", "verify", held["receipt"]["receipt_id"]).ok()
    # a recall records nothing but its receipt: no label, nothing deleted
    assert sqlite_value(brain, "SELECT COUNT(*) FROM memory_classifications") == before
    assert sqlite_value(brain, "SELECT COUNT(*) FROM memories WHERE source LIKE 'web:%'") == "4"

    # the same words from an agent that asks a different question: nothing is withheld
    other = run_aimos("recall", "archangel michael keys", "--json", "--show-withheld").ok().json()
    assert not {w["memory_id"] for w in other.get("withheld", [])} & set(poison)
    report = run_aimos("verify", "--json").json()
    assert report["ok"] and report["parity"], report


def test_a_person_who_saved_the_same_words_is_not_withheld(installed: Path) -> None:
    """The person's own saves (the cli agent) are the person's word: the check never withholds
    them, however many agree with each other against another origin."""
    everyday_brain()
    run_aimos("save", "--source", "corpus:reference", REFERENCE).ok()
    mine = [run_aimos("save", "--source", "notes:angels", text).ok().out.strip() for text in POISON]
    held = run_aimos("recall", QUESTION, "--json", "--show-withheld").ok().json()
    assert set(mine) <= {r["memory_id"] for r in held["results"]}  # all shown
    assert held["withheld_count"] == 0


def test_the_policy_withholds_what_the_check_contests_and_says_it_ran() -> None:
    from aimos.recall.policy import Candidate, decide

    def candidates() -> list[Candidate]:
        return [
            Candidate("a", "saint peter keeps the gate", None, 1000, "unverified", False, 0.9),
            Candidate("b", "archangel michael keeps the gate", None, 1000, "unverified", False, 0.8),
            Candidate("c", "archangel michael greets souls", None, 1000, "poison_likely", False, 0.7),
        ]

    on = decide(candidates(), limit=5, query_sha256="0" * 64, query="gate", contested={"b", "c"})
    assert [s.memory_id for s in on.selected] == ["a"]
    # a label speaks first; the check's reason is for what no label withholds
    assert {w["memory_id"]: w["reason"] for w in on.body["withheld"]} == {
        "b": "agreement_contested",
        "c": "label:poison_likely",
    }
    assert on.body["agreement_check"] is True
    # arm A1 (recall-time rules off) and a recall the check did not run on: nothing contested
    off = decide(
        candidates(), limit=5, query_sha256="0" * 64, query="gate", contested={"b"}, lure_rules=False
    )
    assert "b" in {s.memory_id for s in off.selected} and off.body["agreement_check"] is False
    unrun = decide(candidates(), limit=5, query_sha256="0" * 64, query="gate")
    assert unrun.body["agreement_check"] is False


def test_a_hostile_agent_cannot_bury_another_agents_cluster_and_stay_shown(installed: Path) -> None:
    """An agent saved a cluster from one page (here the wrong answer, as far as the brain knows it
    is a page's); a second agent with a valid key saves one passage on every word of the question
    that says otherwise. The recall shows neither as trusted: both withheld with the check's
    reasons, nothing labelled, and the withheld ids are in the signed decision."""
    everyday_brain()
    run_aimos("agent", "enroll", "reader").ok()
    run_aimos("agent", "enroll", "hostile").ok()
    page = [
        run_aimos("save", "--as", "reader", "--source", "web:angels.example", text).ok().out.strip()
        for text in POISON
    ]
    lone = run_aimos("save", "--as", "hostile", "--source", "web:other.example", REFERENCE).ok().out.strip()
    held = run_aimos("recall", QUESTION, "--json", "--show-withheld").ok().json()
    assert not {r["memory_id"] for r in held["results"]} & {*page, lone}
    reasons = {w["memory_id"]: w["reason"] for w in held["withheld"]}
    assert reasons == dict.fromkeys([*page, lone], "agreement_contested")
    doc = run_aimos("receipt", "show", held["receipt"]["receipt_id"], "--json").ok().json()
    assert {w["memory_id"] for w in doc["decision"]["withheld"]} == {*page, lone}
    labels = sqlite_value(
        installed / "brain.sqlite3",
        "SELECT group_concat(DISTINCT epistemic_label) FROM memories WHERE source LIKE 'web:%'",
    )
    assert labels == "unverified"
