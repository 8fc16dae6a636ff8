"""`aimos verify-bundle` on MutMem V2 bundles (the reference's P2 vectors), through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import run_aimos

P2 = (
    Path(__file__).resolve().parents[3]
    / "shared/reference/hom-aimos/verifiers/mutmem-conformance/v2/p2-crypto-vectors.json"
)


def vectors() -> dict[str, Any]:
    found: dict[str, Any] = json.loads(P2.read_text("utf-8"))
    return found


def write(tmp_path: Path, name: str, value: Any) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(value))
    return str(path)


@pytest.mark.parametrize("index", range(8))
def test_recall_vectors_through_the_cli(aimos_home: Path, tmp_path: Path, index: int) -> None:
    v = vectors()["recall"]["vectors"][index]
    result = run_aimos(
        "verify-bundle",
        write(tmp_path, "b.json", v["bundle"]),
        "--master-fingerprint",
        v["expected_master_fingerprint"],
        "--json",
    )
    assert result.code == (0 if v["expected"] == "valid" else 4), result.describe()
    verdict = json.loads(result.out)
    assert verdict["verdict"] == v["expected"] and verdict["reason"] == (v["reason"] or None)
    assert "Traceback" not in result.both


@pytest.mark.parametrize("index", range(10))
def test_mutation_vectors_through_the_cli(aimos_home: Path, tmp_path: Path, index: int) -> None:
    v = vectors()["mutation"]["vectors"][index]
    result = run_aimos(
        "verify-bundle",
        write(tmp_path, "m.json", v["bundle"]),
        "--witness",
        write(tmp_path, "w.json", v["witness"]),
        "--trust-context",
        write(tmp_path, "t.json", v["trust_context"]),
        "--master-fingerprint",
        v["expected_master_fingerprint"],
        "--json",
    )
    assert result.code == (0 if v["expected"] == "valid" else 4), result.describe()
    assert json.loads(result.out)["reason"] == (v["reason"] or None)


def test_bad_input(aimos_home: Path, tmp_path: Path) -> None:
    v = vectors()["recall"]["vectors"][0]
    bundle = write(tmp_path, "b.json", v["bundle"])
    missing = run_aimos("verify-bundle", bundle)
    assert missing.code == 2 and "--master-fingerprint" in missing.err
    short = run_aimos("verify-bundle", bundle, "--master-fingerprint", "abc")
    assert short.code == 2
    wrong = run_aimos("verify-bundle", bundle, "--master-fingerprint", "0" * 64, "--json")
    assert wrong.code == 4 and json.loads(wrong.out)["reason"] == "EXPECTED_TRUST_ANCHOR_REQUIRED"
    not_json = tmp_path / "x.json"
    not_json.write_text("{nope")
    garbage = run_aimos("verify-bundle", str(not_json), "--master-fingerprint", "0" * 64)
    assert garbage.code == 4 and "Traceback" not in garbage.both
    no_witness = run_aimos(
        "verify-bundle",
        write(tmp_path, "m.json", vectors()["mutation"]["vectors"][0]["bundle"]),
        "--master-fingerprint",
        "0" * 64,
        "--json",
    )
    assert (
        no_witness.code == 4
        and json.loads(no_witness.out)["reason"] == "MUTATION_CRYPTOGRAPHIC_WITNESS_REQUIRED"
    )


def test_help_says_what_valid_proves_and_what_it_does_not() -> None:
    text = " ".join(run_aimos("verify-bundle", "--help").ok().out.split())
    assert "A valid verdict proves" in text and "It does not prove" in text
