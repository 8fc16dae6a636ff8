"""`aimos eval secrets`: no false positive on the LoCoMo turns and questions, the guides and the
PoisonedRAG texts; every realistic secret shape caught; the report never shows a text."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import run_aimos

from aimos.eval.secret_corpus import shapes

pytestmark = pytest.mark.timeout(300)


def test_no_false_positive_and_every_shape_caught(aimos_home: Path) -> None:
    report = run_aimos("eval", "secrets", "--json", timeout=300).json()
    assert report["false_positives"] == 0, report["false_positive_places"]
    groups = report["ordinary"]
    assert groups["locomo turns"]["texts"] > 4000 and groups["guides"]["texts"] == 8
    assert groups["locomo questions"]["texts"] > 1000 and groups["poisonedrag passages"]["texts"] > 0
    assert report["missed"] == [] and report["shapes_caught"] == report["shapes_total"] == len(shapes())


def test_the_printed_report_names_kinds_never_texts(aimos_home: Path) -> None:
    result = run_aimos("eval", "secrets", timeout=300).ok()
    assert "false positives: 0 / " in result.out
    assert f"secret shapes caught: {len(shapes())} / {len(shapes())}" in result.out
    for shape in shapes():
        for word in shape.text.split():
            if len(word) >= 7 and any(c.isdigit() for c in word):
                assert word not in result.both, shape.kind
