"""The door to detect-secrets' plugins (secret_shapes._LIBRARY_MAY_MATCH): a word is handed to
them only when it holds a piece that every match of one of their patterns holds, so a text
without one never imports the library. Nothing the plugins would find is missed: each of their
patterns, each word of the secret corpora they match, and the patterns themselves pinned so a new
detect-secrets release is looked at before it is trusted."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aimos.eval.secret_corpus import ORDINARY, shapes
from aimos.memory import secret_shapes
from aimos.memory.gates import find_secret

ROOT = Path(__file__).resolve().parents[3]
# sha256 of the used plugins' patterns (kind, pattern, flags per line): when detect-secrets
# changes one, read the new patterns, keep _LIBRARY_MAY_MATCH a piece of each, then update this
PATTERNS_DIGEST = "7a714a7c6a8773c44e103db01ba44b89cecfbfb7b2e3fd5c0ba0af094ec7b7e3"


def _patterns() -> list[tuple[str, re.Pattern[str]]]:
    return [(kind, pattern) for kind, plugin in secret_shapes._library() for pattern in plugin.denylist]


def test_the_plugins_patterns_are_the_ones_the_door_was_made_for() -> None:
    text = "\n".join(f"{kind}\t{p.pattern}\t{p.flags}" for kind, p in _patterns())
    assert hashlib.sha256(text.encode()).hexdigest() == PATTERNS_DIGEST


@pytest.mark.parametrize("index", range(40))
def test_every_match_of_every_pattern_opens_the_door(index: int) -> None:
    patterns = _patterns()
    if index >= len(patterns):
        assert len(patterns) <= 40
        return
    kind, pattern = patterns[index]

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.from_regex(pattern, fullmatch=True))
    def opens(match: str) -> None:
        assert secret_shapes._LIBRARY_MAY_MATCH().search(match), (kind, pattern.pattern, match)

    opens()


def _words(text: str) -> list[str]:
    return [m.group(0) for m in secret_shapes._LONG_WORD().finditer(text)]


def test_every_corpus_word_a_plugin_matches_opens_the_door() -> None:
    texts = [s.text for s in shapes()] + list(ORDINARY)
    patterns = _patterns()
    matched = 0
    for word in (w for t in texts for w in _words(t)):
        if any(p.search(word) for _, p in patterns):
            matched += 1
            assert secret_shapes._LIBRARY_MAY_MATCH().search(word), word
    assert matched >= 10, matched  # the corpus does hold what the plugins find


def test_the_plugins_still_find_through_the_door() -> None:
    """A token of each of a few plugins, in a sentence: the library's own findings come through,
    and the whole gate refuses the text."""
    tokens = {
        "SendGrid": "SG." + "a1B2c3D4e5F6g7H8i9J0kL" + "." + "m" * 20 + "N0pQ1rS2tU3vW4xY5zA6bC7",
        "AWS": "AKIA" + "Q2W3E4R5T6Y7U8I9O0P1",
        "Stripe": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    }
    for name, token in tokens.items():
        text = f"the key is {token} for mail"
        kinds = [f.kind for f in secret_shapes.library_findings(text)]
        assert any(name in k and "(detect-secrets)" in k for k in kinds), (name, kinds)
        assert find_secret(text) is not None


def test_a_path_in_an_error_does_not_load_the_library(tmp_path: Path) -> None:
    """`aimos save x` with no brain says where it looked (a long path): the error is screened for
    a secret without importing detect-secrets."""
    code = (
        "import sys\nfrom aimos.cli.app import main\ntry:\n    main(['save', 'x'])\nexcept SystemExit:\n    pass\n"
        "print('detect_secrets' in sys.modules)"
    )
    home = tmp_path / "a-home-with-a-rather-long-name-for-its-brain"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "AIMOS_HOME": str(home)},
        timeout=60,
        check=True,
    )
    assert str(home) in done.stderr  # the error named the long path
    assert done.stdout.strip() == "False"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=0x2FF), min_size=20, max_size=80))
def test_a_closed_door_means_no_plugin_matches(word: str) -> None:
    if not secret_shapes._LIBRARY_MAY_MATCH().search(word):
        assert not any(p.search(word) for _, p in _patterns()), word
