"""Fixtures for the outcome and reweighting tests: `aimos_home`, `brain` and `installed` come from
tests/conftest.py; this folder is put on sys.path for `support.learning`."""

from __future__ import annotations
