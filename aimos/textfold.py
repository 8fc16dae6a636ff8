"""The protocol's text folding (PROTOCOL-NOTES 9 and 10), one home for the classifier's
fingerprint and the recall-time query-lure rules (pure, no I/O)."""

from __future__ import annotations

import unicodedata
from collections.abc import Container

NOTHING_KEPT: frozenset[str] = frozenset()


def fold(text: str, kept: Container[str] = NOTHING_KEPT) -> str:
    """Lowercase, NFKD, every run of characters other than letters, numbers and ``kept`` one
    space, trimmed (NFKD's combining marks are not letters, so they become separators)."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    out: list[str] = []
    gap = False
    for ch in decomposed:
        if unicodedata.category(ch)[0] in ("L", "N") or ch in kept:
            if gap and out:
                out.append(" ")
            out.append(ch)
            gap = False
        else:
            gap = True
    return "".join(out)
