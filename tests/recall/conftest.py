"""Fixtures for the recall tests; `aimos_home`, `brain` and `installed` come from tests/conftest.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture
def master_fingerprint(installed: Path) -> str:
    """The master fingerprint install wrote to anchors.json (outside the brain)."""
    anchors = json.loads(next(installed.rglob("anchors.json")).read_text("utf-8"))
    fingerprints = {b["master_fingerprint"] for b in anchors["brains"].values()}
    assert len(fingerprints) == 1, anchors
    return str(fingerprints.pop())
