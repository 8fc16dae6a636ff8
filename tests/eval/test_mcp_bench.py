"""`aimos eval mcp`: an MCP tool call's cost with the server's keys read once and at every call,
measured in one run on a scratch brain (the real server, the real keystore), and its refusals of
bad input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.cli import require_keychain, run_aimos

pytestmark = pytest.mark.timeout(240)


def check(report: dict[str, Any], keystore: str, calls: int) -> None:
    assert report["keystore"] == keystore and report["calls"] == calls
    for mode in ("key_cache", "no_key_cache"):
        for call in ("save", "recall"):
            figures = report[mode][call]
            assert figures["n"] == calls and 0 < figures["median_ms"] <= figures["p95_ms"]
    assert report["ratio_save_no_cache_to_cache"] > 0 and report["ratio_recall_no_cache_to_cache"] > 0


def test_both_modes_measured_on_the_file_keystore(aimos_home: Path) -> None:
    report = run_aimos("eval", "mcp", "--keystore", "file", "--calls", "3", "--json", timeout=200).ok().json()
    check(report, "file", 3)
    shown = run_aimos("eval", "mcp", "--keystore", "file", "--calls", "1", timeout=200).ok().out
    assert "key_cache" in shown and "no_key_cache" in shown and "no cache / cache" in shown


@pytest.mark.keychain
def test_both_modes_measured_on_the_os_keychain(aimos_home: Path) -> None:
    require_keychain()
    check(run_aimos("eval", "mcp", "--calls", "2", "--json", timeout=200).ok().json(), "os", 2)


def test_bad_input_is_refused_before_anything_is_built(aimos_home: Path) -> None:
    for args, words in (
        (("--calls", "0"), "--calls must be between 1 and 10,000"),
        (("--keystore", "vault"), "unknown keystore 'vault'"),
    ):
        result = run_aimos("eval", "mcp", *args)
        assert result.code == 2 and words in result.err, result.describe()
        assert "Traceback" not in result.err
    assert not list(aimos_home.glob("**/brain.sqlite3"))
