"""A count in words, as a person reads it: "1 memory", "2 memories", "1 of 5 jobs has run".

The one home of the grammar every front end (the CLI, the TUI, MCP's text) and every message a
person reads (a verifier's detail, a doctor's line) uses for a count: no noun with an "(s)" on
it, no "1 results". Pure, no I/O; a common module, so any layer may use it.
"""

from __future__ import annotations

_VOWELS = frozenset("aeiou")


def plural_of(noun: str) -> str:
    """The regular English plural of ``noun`` (its last word): memory -> memories, key -> keys,
    match -> matches, chain -> chains."""
    if noun.endswith("y") and len(noun) > 1 and noun[-2] not in _VOWELS:
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def plural(count: int, noun: str, nouns: str | None = None, *, grouped: bool = False) -> str:
    """``count`` and the noun that agrees with it: ``plural(1, "memory")`` is "1 memory",
    ``plural(3, "memory")`` "3 memories", ``plural(0, "memory")`` "0 memories". ``nouns``: an
    irregular plural; ``grouped``: the count with thousands separators (1,000)."""
    shown = f"{count:,}" if grouped else str(count)
    return f"{shown} {noun if count == 1 else nouns or plural_of(noun)}"


def agree(count: int, one: str, many: str) -> str:
    """The word (a verb, a pronoun) that agrees with ``count``: ``agree(1, "has", "have")`` is
    "has", for "1 of 5 jobs has run"."""
    return one if count == 1 else many
