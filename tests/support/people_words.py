"""What a person reads must not be the protocol's words (issue 38 item 4): the words to look for,
derived from aimos/vocabulary.py and aimos/actions/labels.py, and the finder the CLI, TUI and MCP
tests share (tests/cli/test_people_words.py, tests/tui/test_tui_people_words.py,
tests/mcp/test_mcp_people_words.py). Imported as a plain module (tests/cli is on sys.path)."""

from __future__ import annotations

import re

from aimos import vocabulary
from aimos.actions import labels


def people_words() -> set[str]:
    """Every word of people's vocabulary for labels and judgments (labels.py): the words a person
    types, and the words every front end says a label and a judgment in."""
    phrases = [
        *labels.JUDGMENT_WORDS,
        *labels.JUDGMENT_MEANING.values(),
        *labels.LABEL_WORDS.values(),
        *labels.LABEL_SHORT.values(),
    ]
    return {word for phrase in phrases for word in re.findall(r"[a-z_-]+", phrase.lower())}


# The protocol's label and judgment words that are no word of a person's: poison_confirmed,
# unverified, refute, ... ("supported" and "disputed" are people's words too, and stay).
# With them, the ledger's words for what happened to a memory: its events' operations and what an
# outcome came to (authorized_transition, signed_noop), which `show` and the TUI say in words too.
PROTOCOL_WORDS = sorted(
    {*vocabulary.LABELS, *vocabulary.JUDGMENTS, *labels.EVENT_WORDS, *labels.OUTCOME_RESULT_WORDS}
    - people_words()
)
_FOUND = re.compile(
    "|".join(rf"(?<![\w-]){re.escape(word)}(?![\w-])" for word in PROTOCOL_WORDS), re.IGNORECASE
)
# a count with a noun that does not agree with it ("memory(s)", "point(s)")
_EITHER_NUMBER = re.compile(r"\w\(s\)")


def protocol_words_in(text: str) -> list[str]:
    """Each line of ``text`` that holds a protocol word, with the word."""
    return [
        f"{m.group(0)!r} in {line.strip()!r}" for line in text.splitlines() for m in _FOUND.finditer(line)
    ]


def either_number_in(text: str) -> list[str]:
    """Each line of ``text`` that leaves a noun's number open: "1 memory(s)"."""
    return [line.strip() for line in text.splitlines() if _EITHER_NUMBER.search(line)]
