"""Unit tests of the epistemic classifier kernel (PROTOCOL-NOTES 9): normalize, the leading
question and its fingerprint, reference-like memories, peer relations, the score and its labels.
Every rule is checked at its edges with hand-made texts; expected values come from the notes, not
from the kernel."""

from __future__ import annotations

import hashlib
import itertools
from typing import Any

import pytest

from aimos.epistemic.classifier import (
    CLUSTER_PLAIN,
    CLUSTER_STRONG,
    INTERACTION_TYPES,
    INTERROGATIVES,
    JACCARD_SUPPORT,
    LIKELY_AT,
    PER_CONTRADICTION,
    PER_SUPPORT,
    REFERENCE_KEY_SEGMENTS,
    REFERENCE_SOURCE_PREFIXES,
    REFERENCE_TYPES,
    SOURCE_CONCENTRATION,
    STRONG_SHAPE,
    SUSPECT_AT,
    Classification,
    MemoryView,
    classify,
    is_reference_like,
    label_for,
    leading_question,
    normalize,
    peer_relation,
    words,
)
from aimos.vocabulary import ADVERSE, DETECTOR_VERSION, JUDGMENTS, LABELS, POISON
from aimos.vocabulary import CLASSIFICATION_SCHEMA as SCHEMA

RULE_INTERROGATIVES = (
    "who what when where why how which whose whom is are was were do does did can could should would "
    "will has have had"
).split()
RULE_REFERENCE_TYPES = {
    "research",
    "book_extract",
    "bibliographic_reference",
    "declarative",
    "framework",
    "architecture",
}
RULE_INTERACTION_TYPES = {"session_exchange", "session", "directive", "heartbeat", "after_action_review"}
RULE_KEY_SEGMENTS = {"reference", "research", "corpus", "document", "paper", "book"}
RULE_SOURCE_PREFIXES = ("benchmark:", "import:", "web:", "corpus:", "paper:", "book:", "research:")

CONT = "The answer is here."  # a continuation of 19 characters, no numbers


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- constants ------------------------------------------------------------------------------------
def test_identity_constants() -> None:
    assert DETECTOR_VERSION == "aimos-memory-epistemic-v1"
    assert SCHEMA == "aimos.memory-epistemic-classification/v1"
    assert LABELS == (
        "unverified",
        "supported",
        "disputed",
        "poison_suspect",
        "poison_likely",
        "poison_confirmed",
        "poison_refuted",
    )
    assert set(ADVERSE) <= set(LABELS)
    assert set(POISON) <= set(ADVERSE)
    assert "poison_refuted" not in ADVERSE
    assert "supported" not in ADVERSE


def test_weights_and_thresholds() -> None:
    assert (STRONG_SHAPE, CLUSTER_STRONG, CLUSTER_PLAIN) == (450, 250, 700)
    assert (SOURCE_CONCENTRATION, PER_CONTRADICTION, PER_SUPPORT) == (100, 200, -250)
    assert (LIKELY_AT, SUSPECT_AT) == (750, 500)
    assert JACCARD_SUPPORT == 0.55


def test_word_lists_match_the_notes() -> None:
    assert list(INTERROGATIVES) == RULE_INTERROGATIVES
    assert set(REFERENCE_TYPES) == RULE_REFERENCE_TYPES
    assert set(INTERACTION_TYPES) == RULE_INTERACTION_TYPES
    assert set(REFERENCE_KEY_SEGMENTS) == RULE_KEY_SEGMENTS
    assert set(REFERENCE_SOURCE_PREFIXES) == set(RULE_SOURCE_PREFIXES)


def test_judgments() -> None:
    assert JUDGMENTS == {
        "confirm": ("poison_confirmed", 1000),
        "refute": ("poison_refuted", 1000),
        "support": ("supported", 800),
        "dispute": ("disputed", 800),
    }
    assert all(label in LABELS for label, _ in JUDGMENTS.values())


# --- normalize ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello World", "hello world"),
        ("HELLO", "hello"),
        # NFKD splits an accented letter into letter + combining mark; the mark is a separator.
        ("héllo", "he llo"),
        ("ÀÉÎ", "a e i"),
        ("Café", "cafe"),  # the trailing mark's separator is trimmed
        ("İ", "i"),  # lowercase gives i + combining dot above
        ("Straße", "straße"),  # ß is a letter and NFKD leaves it alone
        # compatibility decomposition
        ("ﬁne", "fine"),
        ("ﬂow", "flow"),
        ("ＡＢＣ１２３", "abc123"),
        ("x²", "x2"),
        ("½", "1 2"),  # 1, FRACTION SLASH (a symbol, so a separator), 2
        ("１０％", "10%"),  # fullwidth percent becomes % after NFKD and is kept
        # lowercase comes before NFKD: a letter whose compatibility form is a capital stays capital
        ("ℌello", "Hello"),
        # kept symbols
        ("50% off $5 €3 £2", "50% off $5 €3 £2"),
        ("%$€£", "%$€£"),
        ("a%b$c", "a%b$c"),
        # every other symbol is a separator
        ("¥4 #1 @x ^y &z", "4 1 x y z"),
        ("a---b___c", "a b c"),
        ("a+b=c/d", "a b c d"),
        ("it's", "it s"),
        # collapsing and trimming
        ("a \t\n  b", "a b"),
        ("  padded  ", "padded"),
        ("...x...", "x"),
        ("a , . ; b", "a b"),
        # empty
        ("", ""),
        ("   ", ""),
        ("!!! --- ...", ""),
    ],
)
def test_normalize(text: str, expected: str) -> None:
    assert normalize(text) == expected


def test_words() -> None:
    assert words("") == []
    assert words("  ?!  ") == []
    assert words("Hello, World!") == ["hello", "world"]
    assert words("héllo") == ["he", "llo"]
    assert words("what's 10% of $5?") == ["what", "s", "10%", "of", "$5"]


# --- leading question: the boundary ---------------------------------------------------------------
@pytest.mark.parametrize("mark", ["?", "!", "."])
def test_boundary_characters(mark: str) -> None:
    lq = leading_question(f"what is that{mark} {CONT}")
    assert lq is not None
    assert lq.index == 12
    assert lq.question == "what is that"
    assert lq.continuation == CONT


@pytest.mark.parametrize("mark", [";", ":", ",", "…", "？", "！", "。", "-"])
def test_other_punctuation_is_no_boundary(mark: str) -> None:
    assert leading_question(f"what is that{mark} {CONT}") is None


@pytest.mark.parametrize("follower", ["A", "M", "Z", "0", "5", "9", '"', "'", "“", "‘"])
def test_followed_by_accepted(follower: str) -> None:
    lq = leading_question(f"what is that? {follower}he answer is here")
    assert lq is not None
    assert lq.index == 12
    assert lq.continuation == f"{follower}he answer is here"


@pytest.mark.parametrize("follower", ["a", "t", "z", "É", "Ä", "(", "[", "”", "’", "«", "-", "*", "٣"])
def test_followed_by_rejected(follower: str) -> None:
    assert leading_question(f"what is that? {follower}he answer is here") is None


@pytest.mark.parametrize("gap", ["", " ", "   ", "\n", "\t", "\n\n", " \r\n "])
def test_optional_whitespace_after_the_boundary(gap: str) -> None:
    lq = leading_question(f"what is that?{gap}{CONT}")
    assert lq is not None
    assert lq.index == 12
    assert lq.continuation == CONT


def test_end_of_text_is_no_boundary() -> None:
    assert leading_question("what is the answer to this?") is None
    assert leading_question("what is the answer to this?   ") is None


def test_first_qualifying_boundary_wins() -> None:
    lq = leading_question("who wrote it? Bob did. Then more stuff came.")
    assert lq is not None
    assert lq.question == "who wrote it"
    assert lq.continuation == "Bob did. Then more stuff came."


def test_non_qualifying_marks_are_skipped() -> None:
    # "e." and "g." are followed by lowercase letters, so the boundary is the "?".
    lq = leading_question(f"what is e.g. the answer? {CONT}")
    assert lq is not None
    assert lq.index == 23
    assert lq.question == "what is e.g. the answer"
    assert lq.fingerprint == sha("what is e g the answer")


def test_early_qualifying_boundary_is_not_skipped() -> None:
    # The first qualifying mark is at index 3 (< 8): rejected, no later mark is tried.
    assert leading_question("who? Is it him or her? The answer is here.") is None


def test_decimal_point_followed_by_digit_is_a_boundary() -> None:
    # A digit is in the followed-by set, so "3.5" ends the question at "3".
    lq = leading_question("what is 3.5 times two? The answer is 7.")
    assert lq is not None
    assert lq.index == 9
    assert lq.question == "what is 3"
    assert lq.continuation == "5 times two? The answer is 7."


# --- leading question: index, words, continuation -------------------------------------------------
@pytest.mark.parametrize(
    ("question", "accepted"),
    [
        ("who a b", False),  # index 7
        ("who a bc", True),  # index 8
        ("what is " + "a" * 312, True),  # index 320
        ("what is " + "a" * 313, False),  # index 321
    ],
)
def test_index_bounds(question: str, accepted: bool) -> None:
    lq = leading_question(f"{question}? {CONT}")
    assert (lq is not None) is accepted
    if lq is not None:
        assert lq.index == len(question)
        assert lq.question == question


@pytest.mark.parametrize(
    ("question", "accepted"),
    [
        ("what isthat", False),  # 2 words
        ("what is that", True),  # 3 words
        ("what's up", True),  # "what s up": 3 normalized words
        ("what " + " ".join(["w"] * 47), True),  # 48 words
        ("what " + " ".join(["w"] * 48), False),  # 49 words
        ("what —— isthat", False),  # separators are not words: 2
    ],
)
def test_word_count_bounds(question: str, accepted: bool) -> None:
    assert len(question) >= 8
    lq = leading_question(f"{question}? {CONT}")
    assert (lq is not None) is accepted


@pytest.mark.parametrize(
    ("after", "accepted"),
    [
        (" Abcdefghijk", False),  # 11
        (" Abcdefghijkl", True),  # 12
        ("Abcdefghijkl", True),  # 12, no space
        ("   Abcdefghijk   ", False),  # 11 once trimmed
        ("\n Abcdefghijkl \n", True),  # 12 once trimmed
        (" A b c d e f", False),  # 11 with inner spaces
        (" A b c d e f ", False),  # still 11 once trimmed
        (" A b c d e fg", True),  # 12 with inner spaces
    ],
)
def test_continuation_length(after: str, accepted: bool) -> None:
    lq = leading_question(f"what is that?{after}")
    assert (lq is not None) is accepted
    if lq is not None:
        assert lq.continuation == after.strip()


# --- leading question: how the question starts ----------------------------------------------------
@pytest.mark.parametrize("word", RULE_INTERROGATIVES)
def test_each_capitalized_interrogative_starts_a_question(word: str) -> None:
    lq = leading_question(f"{word.capitalize()} the thing here? {CONT}")
    assert lq is not None
    assert lq.question == f"{word.capitalize()} the thing here"


@pytest.mark.parametrize("word", RULE_INTERROGATIVES)
def test_interrogative_needs_a_word_boundary(word: str) -> None:
    assert leading_question(f"{word.capitalize()}x the thing here? {CONT}") is None


@pytest.mark.parametrize(
    ("text", "accepted"),
    [
        (f"How many are there? {CONT}", True),
        (f"HOW many are there? {CONT}", True),
        (f"hOw many are there? {CONT}", True),
        (f"How's it going there? {CONT}", True),  # apostrophe is an ASCII non-word character
        (f"Is-it true or not? {CONT}", True),
        (f"Who, what and where? {CONT}", True),
        (f"How_to do this thing? {CONT}", False),  # underscore is a word character
        (f"How2 do this thing? {CONT}", False),  # so is a digit
        (f"Whoever said that thing? {CONT}", False),
        (f"Isn't this the thing? {CONT}", False),  # "Isn" is not "is"
        (f"Howé the thing is here? {CONT}", True),  # "é" is no ASCII word character: a boundary
        (f"Whoʼs the thing here? {CONT}", True),  # nor is a modifier apostrophe
        ("Tell me about x. Foo bar baz qux quux.", False),
        ("Howdy partner what. X marks the spot here.", False),  # 'Howdy' is not 'how'
        ("howdy partner what. X marks the spot here.", True),  # but a lowercase start is enough
        ("tell me about x. Foo bar baz qux quux.", True),
        (f"2 plus 2 is what? {CONT}", False),  # a digit is not a lowercase letter
        (f'"what is that" he asked? {CONT}', False),  # neither is a quote
        (f"¿what is that thing? {CONT}", False),
    ],
)
def test_question_start(text: str, accepted: bool) -> None:
    assert (leading_question(text) is not None) is accepted


def test_interrogative_match_is_ascii_case_insensitive_only() -> None:
    # "İ" (U+0130) is a capital, not a lowercase letter, and "İs" is not "is" in any case-insensitive
    # ASCII sense (its lowercase and casefold are "i̇s", i + combining dot + s). The reference's
    # interrogative words are ASCII, so this opening is neither interrogative nor lowercase.
    assert "İs".lower() != "is"
    assert leading_question(f"İs this the thing? {CONT}") is None


# --- leading question: fingerprint ----------------------------------------------------------------
def test_poisonedrag_shape_without_space() -> None:
    question = "how many episodes are in chicago fire season 4"
    text = question + ".Chicago Fire season 4 has 23 episodes."
    lq = leading_question(text)
    assert lq is not None
    assert lq.index == len(question) == 46
    assert lq.question == question
    assert lq.continuation == "Chicago Fire season 4 has 23 episodes."
    assert lq.fingerprint == sha(question)
    assert lq.fingerprint == "e795764af1655c8de777c4f265400922512e0ab905cdd073b39cca7cc19d9c96"


def test_question_mark_then_period() -> None:
    # "?" is followed by "." (not whitespace/capital/digit/quote), so the boundary is the ".".
    lq = leading_question("what is x y z?.The passage continues here")
    assert lq is not None
    assert lq.index == 14
    assert lq.question == "what is x y z?"
    assert lq.continuation == "The passage continues here"
    assert lq.fingerprint == sha("what is x y z")
    plain = leading_question("what is x y z? The passage continues here")
    assert plain is not None
    assert plain.index == 13
    assert plain.fingerprint == lq.fingerprint


def test_fingerprint_is_of_the_normalized_question() -> None:
    variants = [
        "How many Episodes are in Chicago Fire season 4? Twenty three of them.",
        "how many episodes are in chicago fire season 4. Twenty three of them.",
        "HOW MANY EPISODES ARE IN CHICAGO FIRE SEASON 4!\n'Twenty three of them.'",
        "how   many episodes, are in chicago-fire season 4? 23 episodes in all.",
    ]
    prints = {lq.fingerprint for lq in map(leading_question, variants) if lq is not None}
    assert prints == {sha("how many episodes are in chicago fire season 4")}
    other = leading_question("how many episodes are in chicago fire season 5? Twenty three of them.")
    assert other is not None
    assert other.fingerprint != sha("how many episodes are in chicago fire season 4")


def test_fingerprint_uses_nfkd() -> None:
    lq = leading_question(f"what is the café menu? {CONT}")
    assert lq is not None
    assert lq.fingerprint == sha("what is the cafe menu")


# --- reference-like ---------------------------------------------------------------------------------
@pytest.mark.parametrize("memory_type", sorted(RULE_REFERENCE_TYPES))
def test_reference_types(memory_type: str) -> None:
    assert is_reference_like(memory_type, None, "user") is True
    assert is_reference_like(memory_type, "notes/x", "chat") is True


@pytest.mark.parametrize("memory_type", ["note", "fact", "episodic", "preference", "", "research_note"])
def test_other_types_alone_are_not_reference(memory_type: str) -> None:
    assert is_reference_like(memory_type, None, "user") is False
    assert is_reference_like(memory_type, "notes/general", "chat") is False


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("corpus/doc1", True),
        ("my-paper-notes", True),
        ("reference", True),
        ("research_2024", True),
        ("document.txt", True),
        ("shelf:book:42", True),
        ("a/b/c/paper", True),
        ("papers/x", False),  # "papers" is not the segment "paper"
        ("bookshelf", False),
        ("ebook", False),
        ("references", False),
        ("documents/x", False),
        ("notes/general", False),
        ("", False),
        (None, False),
    ],
)
def test_reference_key_segments(key: str | None, expected: bool) -> None:
    assert is_reference_like("note", key, "user") is expected


@pytest.mark.parametrize("prefix", RULE_SOURCE_PREFIXES)
def test_reference_source_prefixes(prefix: str) -> None:
    assert is_reference_like("note", None, f"{prefix}something") is True
    assert is_reference_like("note", None, prefix) is True


@pytest.mark.parametrize("source", ["web", "webinar:x", "xweb:x", "papers:x", "user", "chat:web:x", ""])
def test_other_sources_are_not_reference(source: str) -> None:
    assert is_reference_like("note", None, source) is False


@pytest.mark.parametrize("memory_type", sorted(RULE_INTERACTION_TYPES))
def test_interaction_types_are_never_reference(memory_type: str) -> None:
    assert is_reference_like(memory_type, "corpus/doc1", "web:example.org") is False
    assert is_reference_like(memory_type, "paper", "research:x") is False


# --- peer relation ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("mine", "theirs", "relation"),
    [
        # both hold numbers: one shared value is support, none is contradiction
        ("The show aired 23 episodes.", "Exactly 23 were broadcast.", "support"),
        ("Aired 23 episodes in 2015.", "Aired in 2016, 23 episodes.", "support"),
        ("The show aired 23 episodes.", "The show aired 24 episodes.", "contradiction"),
        ("It had 19.", "Completely different words, 20.", "contradiction"),
        # numbers on one side only: token Jaccard decides
        ("The answer is 42 exactly", "The answer is exactly", "support"),  # 4/5
        ("The answer is 42", "Nobody knows at all", "indeterminate"),
        # no numbers: token Jaccard, after normalization
        ("Hello, World!", "hello world", "support"),
        ("a b c d e f g h i j k l m n o p q r s t", "a b c d e f g h i j k", "support"),  # 11/20
        ("a b c d e f g h i j k l", "a b c d e f", "indeterminate"),  # 6/12
        ("alpha beta gamma", "delta epsilon zeta", "indeterminate"),
        ("", "", "indeterminate"),
        ("!!!", "...", "indeterminate"),
    ],
)
def test_peer_relation(mine: str, theirs: str, relation: str) -> None:
    assert peer_relation(mine, theirs) == relation
    assert peer_relation(theirs, mine) == relation


@pytest.mark.parametrize(
    ("shared", "only_mine", "only_theirs", "relation"),
    [
        (11, 9, 0, "support"),  # 0.55 exactly
        (11, 5, 4, "support"),  # 0.55 exactly, split differently
        (6, 5, 0, "indeterminate"),  # 0.5454...
        (61, 50, 0, "indeterminate"),  # 0.5495...
        (56, 44, 0, "support"),  # 0.56
        (1, 1, 0, "indeterminate"),  # 0.5
        (1, 0, 0, "support"),  # 1.0
    ],
)
def test_jaccard_threshold(shared: int, only_mine: int, only_theirs: int, relation: str) -> None:
    common = [f"s{i}" for i in range(shared)]
    mine = " ".join(common + [f"m{i}" for i in range(only_mine)])
    theirs = " ".join(common + [f"t{i}" for i in range(only_theirs)])
    # the tokens carry digits, so fold them into letters: Jaccard must decide, not numbers
    table = str.maketrans("0123456789", "abcdefghij")
    mine, theirs = mine.translate(table), theirs.translate(table)
    assert peer_relation(mine, theirs) == relation


# --- classify -----------------------------------------------------------------------------------------
Q = "how many episodes are in chicago fire season 4"
MINE = "The show aired 23 episodes that year."
SUPPORT = "Exactly 23 were broadcast, the network said."
CONTRA = "It had only 19 of them, the network said."
INDET = "Nobody really knows the answer to this."


def view(
    memory_id: str,
    continuation: str,
    source: str,
    memory_type: str = "note",
    key: str | None = None,
    question: str = Q,
) -> MemoryView:
    return MemoryView(memory_id, f"{question}. {continuation}", key, source, memory_type)


def memory(strong: bool) -> MemoryView:
    return view("m0", MINE, "src-mine", "research" if strong else "note")


def peers(same: int = 0, sup: int = 0, con: int = 0, ind: int = 0) -> list[MemoryView]:
    out = [view(f"same{i}", CONTRA, "src-mine") for i in range(same)]
    out += [view(f"sup{i}", SUPPORT, f"src-sup{i}") for i in range(sup)]
    out += [view(f"con{i}", CONTRA, f"src-con{i}") for i in range(con)]
    out += [view(f"ind{i}", INDET, f"src-ind{i}") for i in range(ind)]
    return out


def test_fixture_relations() -> None:
    # the fixtures relate to MINE as their names say
    assert peer_relation(MINE, SUPPORT) == "support"
    assert peer_relation(MINE, CONTRA) == "contradiction"
    assert peer_relation(MINE, INDET) == "indeterminate"


@pytest.mark.parametrize(
    ("strong", "spec", "score", "label", "counts"),
    [
        # (strong, (same, sup, con, ind)), score, label, (size, concentrated, sup, con, ind)
        (True, (0, 0, 0, 0), 450, "unverified", (1, False, 0, 0, 0)),
        (True, (1, 0, 0, 0), 800, "poison_likely", (2, True, 0, 0, 0)),  # 450+250+100
        (True, (2, 0, 0, 0), 800, "poison_likely", (3, True, 0, 0, 0)),
        (True, (0, 0, 0, 1), 700, "poison_suspect", (2, False, 0, 0, 1)),  # 450+250
        (True, (0, 0, 1, 0), 900, "poison_likely", (2, False, 0, 1, 0)),  # +200
        (True, (0, 1, 0, 0), 450, "unverified", (2, False, 1, 0, 0)),  # -250
        (True, (0, 2, 0, 0), 200, "unverified", (3, False, 2, 0, 0)),  # 700-500
        (True, (0, 3, 0, 0), 200, "unverified", (4, False, 3, 0, 0)),  # supports capped at 2
        (True, (0, 0, 2, 0), 1000, "poison_likely", (3, False, 0, 2, 0)),  # 1100 clamped
        (True, (0, 2, 3, 0), 600, "poison_suspect", (6, False, 2, 3, 0)),  # contradictions capped
        (True, (1, 0, 0, 1), 700, "poison_suspect", (3, False, 0, 0, 1)),  # two sources: no +100
        (True, (1, 0, 1, 0), 900, "poison_likely", (3, False, 0, 1, 0)),
        (False, (0, 0, 0, 0), 0, "unverified", (1, False, 0, 0, 0)),
        (False, (1, 0, 0, 0), 800, "poison_likely", (2, True, 0, 0, 0)),  # 700+100
        (False, (0, 0, 0, 1), 700, "poison_suspect", (2, False, 0, 0, 1)),
        (False, (0, 1, 0, 0), 450, "unverified", (2, False, 1, 0, 0)),
        (False, (0, 0, 1, 0), 900, "poison_likely", (2, False, 0, 1, 0)),
        (False, (0, 2, 0, 0), 200, "unverified", (3, False, 2, 0, 0)),
        (False, (0, 3, 1, 0), 400, "unverified", (5, False, 3, 1, 0)),  # 700+200-500
        (False, (0, 0, 3, 0), 1000, "poison_likely", (4, False, 0, 3, 0)),
    ],
)
def test_score_table(
    strong: bool, spec: tuple[int, int, int, int], score: int, label: str, counts: tuple[Any, ...]
) -> None:
    result = classify(memory(strong), peers(*spec))
    size, concentrated, sup, con, ind = counts
    assert isinstance(result, Classification)
    assert (result.label, result.confidence_milli) == (label, score)
    s = result.signals
    assert s["score"] == score
    assert s["leading_question"] is True
    assert s["reference_like"] is strong
    assert s["strong_query_shape"] is strong
    assert s["cluster_size"] == size
    assert s["same_lure_cluster"] is (strong and size >= 2)
    assert s["source_concentration"] is concentrated
    assert (s["supports"], s["contradictions"], s["indeterminate"]) == (sup, con, ind)


def reference_score(strong: bool, same: int, sup: int, con: int, ind: int) -> int:
    """The notes' formula, written independently of the kernel."""
    size = 1 + same + sup + con + ind
    score = 450 if strong else 0
    if size >= 2:
        score += 250 if strong else 700
    if size >= 2 and sup + con + ind == 0:
        score += 100
    score += 200 * min(2, con) - 250 * min(2, sup)
    return max(0, min(1000, score))


def test_score_sweep() -> None:
    seen = set()
    for strong, same, sup, con, ind in itertools.product(
        (True, False), range(3), range(4), range(4), range(2)
    ):
        expected = reference_score(strong, same, sup, con, ind)
        result = classify(memory(strong), peers(same, sup, con, ind))
        assert result.confidence_milli == expected, (strong, same, sup, con, ind)
        assert result.label == label_for(expected)
        seen.add(result.label)
    assert seen == {"unverified", "poison_suspect", "poison_likely"}


def test_full_signals() -> None:
    result = classify(memory(True), peers(con=1))
    assert result.signals == {
        "detector_version": "aimos-memory-epistemic-v1",
        "leading_question": True,
        "fingerprint": sha(Q),
        "reference_like": True,
        "strong_query_shape": True,
        "cluster_size": 2,
        "same_lure_cluster": True,
        "source_concentration": False,
        "supports": 0,
        "contradictions": 1,
        "indeterminate": 0,
        "score": 900,
    }


@pytest.mark.parametrize("memory_type", ["research", "note"])
def test_without_leading_question(memory_type: str) -> None:
    mine = MemoryView("m0", "Chicago Fire season 4 has 23 episodes.", "corpus/x", "web:x", memory_type)
    result = classify(mine, peers(same=2, con=2))
    assert (result.label, result.confidence_milli) == ("unverified", 0)
    s = result.signals
    assert s["detector_version"] == DETECTOR_VERSION
    assert s["leading_question"] is False
    assert s["fingerprint"] is None
    assert s["reference_like"] is True  # the key and the source make it reference-like
    assert s["cluster_size"] == 1
    assert s["score"] == 0


def test_reference_by_key_or_source_is_strong() -> None:
    by_key = view("m0", MINE, "src-mine", "note", key="corpus/doc1")
    by_source = view("m0", MINE, "web:example.org", "note")
    interaction = view("m0", MINE, "web:example.org", "session", key="corpus/doc1")
    assert classify(by_key, []).confidence_milli == 450
    assert classify(by_source, []).confidence_milli == 450
    assert classify(interaction, []).confidence_milli == 0
    assert classify(interaction, []).signals["strong_query_shape"] is False


def test_peers_with_another_fingerprint_are_ignored() -> None:
    others = [
        view("p1", CONTRA, "src-mine", question="how many episodes are in chicago fire season 5"),
        view("p2", CONTRA, "src-other", question="who directed chicago fire season 4"),
        MemoryView("p3", "Chicago Fire season 4 had 19 episodes, it is said.", None, "src-x", "note"),
        MemoryView("p4", f"Tell me about {Q}. {CONTRA}", None, "src-y", "note"),
    ]
    result = classify(memory(True), others)
    assert (result.label, result.confidence_milli) == ("unverified", 450)
    assert result.signals["cluster_size"] == 1
    assert result.signals["contradictions"] == 0


def test_peers_with_the_same_fingerprint_in_another_form_join() -> None:
    twin = MemoryView("p1", f"How many Episodes are in Chicago Fire, season 4?\n{CONTRA}", None, "s2", "note")
    result = classify(memory(True), [twin])
    assert result.signals["cluster_size"] == 2
    assert result.signals["contradictions"] == 1
    assert result.confidence_milli == 900


def test_the_memory_itself_in_peers_is_ignored() -> None:
    mine = memory(True)
    assert classify(mine, [mine]).confidence_milli == 450
    assert classify(mine, [mine]).signals["cluster_size"] == 1
    # matched by memory_id, whatever the rest says
    same_id = view("m0", CONTRA, "src-other", "research")
    assert classify(mine, [same_id, mine]).signals["cluster_size"] == 1
    assert classify(mine, [mine, *peers(con=1)]).confidence_milli == 900


def test_same_source_peers_count_for_size_not_relation() -> None:
    # a same-source peer that would contradict (and one that would support) is not compared
    result = classify(memory(True), [view("p1", CONTRA, "src-mine"), view("p2", SUPPORT, "src-mine")])
    s = result.signals
    assert (s["supports"], s["contradictions"], s["indeterminate"]) == (0, 0, 0)
    assert s["cluster_size"] == 3
    assert s["source_concentration"] is True
    assert result.confidence_milli == 800


def test_question_numbers_do_not_decide_relations() -> None:
    # The question holds "4"; continuations without numbers are compared by Jaccard.
    mine = view("m0", "Nobody really knows the answer to this one.", "s1", "research")
    peer = view("p1", "Something else entirely different here.", "s2")
    result = classify(mine, [peer])
    assert result.signals["indeterminate"] == 1
    assert result.confidence_milli == 700


@pytest.mark.parametrize(
    ("score", "label"),
    [
        (0, "unverified"),
        (200, "unverified"),
        (499, "unverified"),
        (500, "poison_suspect"),
        (749, "poison_suspect"),
        (750, "poison_likely"),
        (1000, "poison_likely"),
    ],
)
def test_label_for(score: int, label: str) -> None:
    assert label_for(score) == label


# --- determinism ----------------------------------------------------------------------------------
def test_same_input_same_output() -> None:
    mine, cluster = memory(True), peers(same=1, sup=1, con=2, ind=1)
    first = classify(mine, cluster)
    assert classify(mine, cluster) == first
    assert classify(mine, tuple(cluster)) == first
    assert leading_question(mine.value) == leading_question(mine.value)


def test_peer_order_is_irrelevant() -> None:
    mine = memory(True)
    cluster = [*peers(same=1, sup=1, con=2, ind=1), view("x", CONTRA, "s", question="who is it here")]
    results = {
        (r.label, r.confidence_milli, tuple(sorted(r.signals.items())))
        for r in (classify(mine, list(order)) for order in itertools.permutations(cluster))
    }
    assert len(results) == 1
    ((label, score, _),) = results
    assert (label, score) == ("poison_likely", 850)  # 450+250+400-250, no concentration


# --- choices the notes leave open (pinned so a change is deliberate) -------------------------------
def test_open_choices() -> None:
    # leading whitespace before the interrogative/lowercase start is tolerated; the index counts it
    lq = leading_question(f"  what is that? {CONT}")
    assert lq is not None
    assert (lq.index, lq.question) == (14, "  what is that")
    assert lq.fingerprint == sha("what is that")
    # "lowercase letter" is Unicode lowercase, not only a-z
    assert leading_question(f"élan is what? {CONT}") is not None
    # key segments and source prefixes are matched case-insensitively; memory types exactly
    assert is_reference_like("note", "Corpus/Doc1", "user") is True
    assert is_reference_like("note", None, "WEB:example.org") is True
    assert is_reference_like("Research", None, "user") is False
