"""`aimos verify`, `aimos export --cognitive` and `aimos verify-bundle` through the real CLI."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support.cli import run_aimos

pytestmark = pytest.mark.timeout(300)


def aimos(*args: str, home: Path, passfile: Path) -> subprocess.CompletedProcess[str]:
    env = {
        "AIMOS_HOME": str(home),
        "AIMOS_PASSPHRASE_FILE": str(passfile),
        "PATH": "/usr/bin:/bin",
        "AIMOS_SERVICE": "none",
    }
    done = run_aimos(*args, env=env)  # in-process unless the run asks for real processes
    return subprocess.CompletedProcess(["aimos", *args], done.code, done.out, done.err)


@pytest.fixture
def home(tmp_path: Path) -> tuple[Path, Path]:
    passfile = tmp_path / "pass"
    passfile.write_text("verify cli passphrase\n")
    passfile.chmod(0o600)
    h = tmp_path / "home"
    assert (
        aimos("install", "--yes", "--no-guides", "--keystore", "file", home=h, passfile=passfile).returncode
        == 0
    )
    mid = aimos("save", "the otter sleeps under the boathouse", home=h, passfile=passfile).stdout.strip()
    aimos("save", "canary SECRET-0A1B2C3D in a note", home=h, passfile=passfile)
    assert aimos("recall", "otter boathouse", home=h, passfile=passfile).returncode == 0
    assert aimos("feedback", mid, "--good", home=h, passfile=passfile).returncode == 0
    return h, passfile


def test_verify_export_and_verify_bundle(home: tuple[Path, Path], tmp_path: Path) -> None:
    h, passfile = home
    result = aimos("verify", "--json", home=h, passfile=passfile)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["parity"] is True and report["portable"]["verdict"] == "valid"
    assert report["in_database"]["corpus_proof_root"] == report["portable"]["corpus_proof_root"]
    bundle = tmp_path / "bundle.json"
    assert aimos("export", "--cognitive", str(bundle), home=h, passfile=passfile).returncode == 0
    assert bundle.stat().st_mode & 0o777 == 0o600
    fingerprint = json.loads(bundle.read_text())["master_identity"]["fingerprint"]
    ok = aimos(
        "verify-bundle", str(bundle), "--master-fingerprint", fingerprint, "--json", home=h, passfile=passfile
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    verdict = json.loads(ok.stdout)
    assert (
        verdict["verdict"] == "valid"
        and verdict["corpus_proof_root"] == report["portable"]["corpus_proof_root"]
    )
    statuses = sorted(r["certification_status"] for r in verdict["records"])
    assert statuses == ["certified_chain", "signed_initial_weight"]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"format": {', None),
        ("not json at all", None),
        ("[" * 40 + "]" * 40, "canonical_json_depth_limit"),
    ],
)
def test_verify_bundle_bad_files_are_invalid_with_a_closed_reason(
    home: tuple[Path, Path], tmp_path: Path, content: str, reason: str | None
) -> None:
    h, passfile = home
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    result = aimos("verify-bundle", str(bad), "--json", home=h, passfile=passfile)
    assert result.returncode == 4, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    verdict = json.loads(result.stdout)
    assert verdict["verdict"] == "invalid" and verdict["primary_reason"]
    if reason:
        assert verdict["primary_reason"] == reason


def test_uppercase_hex_and_bad_fingerprint(home: tuple[Path, Path], tmp_path: Path) -> None:
    h, passfile = home
    bundle = tmp_path / "bundle.json"
    assert aimos("export", "--cognitive", str(bundle), home=h, passfile=passfile).returncode == 0
    doc = json.loads(bundle.read_text())
    doc["memories"][0]["content_hash"] = doc["memories"][0]["content_hash"].upper()
    upper = tmp_path / "upper.json"
    upper.write_text(json.dumps(doc))
    result = aimos("verify-bundle", str(upper), "--json", home=h, passfile=passfile)
    assert result.returncode == 4
    assert json.loads(result.stdout)["primary_reason"] == "cognitive_evidence_memory_content_invalid"
    wrong = aimos("verify-bundle", str(bundle), "--master-fingerprint", "ABC", home=h, passfile=passfile)
    assert wrong.returncode == 2 and "64 lowercase hex" in wrong.stderr
    missing = aimos("verify-bundle", str(tmp_path / "nope.json"), home=h, passfile=passfile)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr


def test_bundle_of_one_memory_is_verified_as_one(home: tuple[Path, Path], tmp_path: Path) -> None:
    """`aimos export --cognitive --memory ID` holds that memory alone while its events name the
    others: verify-bundle refuses it as a whole brain (naming a missing memory and --memory in the
    hint) and accepts it as the one memory the caller names; `aimos verify --memory` agrees."""
    h, passfile = home
    whole = tmp_path / "whole.json"
    assert aimos("export", "--cognitive", str(whole), home=h, passfile=passfile).returncode == 0
    held = [m["memory_id"] for m in json.loads(whole.read_text())["memories"]]
    assert len(held) == 2
    mid, other = held
    one = tmp_path / "one.json"
    done = aimos("export", "--cognitive", str(one), "--memory", mid, home=h, passfile=passfile)
    assert done.returncode == 0 and f"verify-bundle {one} --memory {mid}" in done.stderr, done.stderr
    assert [m["memory_id"] for m in json.loads(one.read_text())["memories"]] == [mid]
    as_whole = aimos("verify-bundle", str(one), "--json", home=h, passfile=passfile)
    assert as_whole.returncode == 4, as_whole.stdout + as_whole.stderr
    verdict = json.loads(as_whole.stdout)
    assert verdict["primary_reason"] == "cognitive_evidence_memory_missing"
    assert verdict["detail"].startswith(f"memory {other} is named by event "), verdict["detail"]
    assert "--memory ID" in as_whole.stderr
    as_one = aimos("verify-bundle", str(one), "--memory", mid, "--json", home=h, passfile=passfile)
    assert as_one.returncode == 0, as_one.stdout + as_one.stderr
    assert json.loads(as_one.stdout)["verdict"] == "valid"
    wrong = aimos("verify-bundle", str(one), "--memory", other, "--json", home=h, passfile=passfile)
    assert wrong.returncode == 4 and other in json.loads(wrong.stdout)["detail"]
    empty = aimos("verify-bundle", str(one), "--memory", " ", home=h, passfile=passfile)
    assert empty.returncode == 2 and "--memory" in empty.stderr and "Traceback" not in empty.stderr
    report = aimos("verify", "--memory", mid, "--json", home=h, passfile=passfile)
    assert report.returncode == 0, report.stdout + report.stderr
    assert json.loads(report.stdout)["portable"]["verdict"] == "valid"
