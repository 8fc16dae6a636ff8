"""Fixtures for the outcome and reweighting tests: `aimos_home`, `brain` and `installed` come from
tests/conftest.py; this folder is put on sys.path for `learning_support`."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
