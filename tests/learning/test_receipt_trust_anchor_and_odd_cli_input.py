"""Through the real CLI: a receipt verifies only against the right master fingerprint (the trust
anchor) and only as it was issued, and odd input (empty ids, folders for files) is a usage or
not-found error, never a traceback."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support.cli import run_aimos

pytestmark = pytest.mark.timeout(300)


def _cli(home: Path, passfile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "AIMOS_HOME": str(home),
        "AIMOS_PASSPHRASE_FILE": str(passfile),
        "PATH": "/usr/bin:/bin",
        "AIMOS_SERVICE": "none",
    }
    done = run_aimos(*args, env=env)  # in-process unless the run asks for real processes
    return subprocess.CompletedProcess(["aimos", *args], done.code, done.out, done.err)


def test_trust_anchor_and_odd_input_through_the_cli(tmp_path: Path) -> None:
    passfile = tmp_path / "pass"
    passfile.write_text("regression passphrase\n")
    passfile.chmod(0o600)
    home = tmp_path / "home"
    assert _cli(home, passfile, "install", "--yes", "--no-guides", "--keystore", "file").returncode == 0
    _cli(home, passfile, "save", "the lighthouse keeper's log")
    rid = json.loads(_cli(home, passfile, "recall", "lighthouse", "--json").stdout)["receipt"]["receipt_id"]
    assert _cli(home, passfile, "receipt", "verify", rid).returncode == 0
    wrong = _cli(home, passfile, "receipt", "verify", rid, "--master-fingerprint", "0" * 64)
    assert wrong.returncode == 4
    doc = json.loads(_cli(home, passfile, "receipt", "show", rid, "--json").stdout)
    fingerprint = doc["master"]["fingerprint"]
    doc["company_id"] = "someone-else"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc))
    result = _cli(home, passfile, "receipt", "verify", str(edited), "--master-fingerprint", fingerprint)
    assert result.returncode == 4 and "company" in result.stdout
    for args in (
        ("receipt", "verify", ""),
        ("receipt", "verify", str(tmp_path)),
        ("export", "--cognitive", str(tmp_path)),
        ("export", "--cognitive", ""),
        ("verify", "--memory", ""),
        ("feedback", "x", "--good", "--receipt", ""),
    ):
        r = _cli(home, passfile, *args)
        assert r.returncode in (2, 3), (args, r.returncode, r.stderr)
        assert "Traceback" not in r.stdout + r.stderr and "internal error" not in r.stderr, (args, r.stderr)
