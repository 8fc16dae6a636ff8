"""`aimos verify-bundle` on MutMem V1 recall evidence and corpora (aimos's fixtures), through the
real CLI in a subprocess: exit 0 when valid, 4 when invalid or indeterminate, a clear error (never a
traceback) on files that are not a bundle."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.cli import Result, run_aimos

import aimos

FIXTURES = Path(__file__).resolve().parents[1] / "vectors" / "v1_recall"
MANIFEST: dict[str, Any] = json.loads((FIXTURES / "manifest.json").read_bytes())
FINGERPRINT: str = MANIFEST["master_fingerprint"]
BY_FILE = {e["file"]: e for e in MANIFEST["fixtures"]}


RECALL = "hom.aimos.mutmem-recall-evidence/v1"
DEPTH = "canonical_json_depth_limit"


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


def verify(name: str | Path, *extra: str) -> Result:
    path = name if isinstance(name, Path) else FIXTURES / name
    return run_aimos("verify-bundle", str(path), "--master-fingerprint", FINGERPRINT, *extra)


def test_the_subprocess_runs_this_checkout() -> None:
    """The CLI under test is the code beside these tests (PYTHONPATH reaches the subprocess)."""
    out = subprocess.run(
        [sys.executable, "-c", "import aimos; print(aimos.__file__)"],
        capture_output=True, text=True, check=True, env=dict(os.environ),
    )  # fmt: skip
    assert Path(out.stdout.strip()).resolve() == Path(aimos.__file__).resolve()


@pytest.mark.parametrize(
    "name",
    [
        "valid-two-memories.json",
        "corpus-valid.json",
        "binding-live-hash.json",
        "request-signature.json",
        "event-absent.json",
        "corpus-invalid-member.json",
        "pin-attacker-master.json",
    ],
)
def test_fixture_through_the_cli(aimos_home: Path, name: str) -> None:
    entry = BY_FILE[name]
    result = verify(name, "--json")
    assert "Traceback" not in result.both, result.describe()
    assert result.code == (0 if entry["expected_verdict"] == "valid" else 4), result.describe()
    verdict = json.loads(result.out)
    assert verdict["verdict"] == entry["expected_verdict"]
    assert verdict["primary_reason"] == entry["expected_primary_reason"]
    schema = (
        "hom.aimos.mutmem-recall-corpus/v1"
        if entry["kind"] == "corpus"
        else "hom.aimos.mutmem-recall-evidence/v1"
    )
    assert verdict["schema"] == schema


def test_text_output_names_verdict_and_reason(aimos_home: Path) -> None:
    valid = verify("valid-three-memories.json")
    assert valid.code == 0, valid.describe()
    assert valid.out.splitlines()[-1] == "valid: 3 memories, 3 Merkle leaves, 4 signatures checked"
    mutated = verify("binding-second-memory-type.json")
    assert mutated.code == 4 and "Traceback" not in mutated.both
    assert mutated.out.splitlines()[-1].startswith("invalid: recall_receipt_memory_binding_invalid:1 (")
    assert "error: the bundle is invalid: recall_receipt_memory_binding_invalid:1" in mutated.err
    missing = verify("event-absent.json")
    assert missing.code == 4
    assert missing.out.splitlines()[-1].startswith("indeterminate: recall_mandatory_evidence_missing (")
    assert "nothing is proved either way" in missing.err
    corpus = verify("corpus-invalid-beats-indeterminate.json")
    assert corpus.code == 4
    assert corpus.out.splitlines()[-1].startswith("invalid: recall_request_signature_invalid (")
    assert "AIMOS-V1-CORPUS-001" in corpus.out and "indeterminate" in corpus.out


def test_the_callers_master_decides(aimos_home: Path) -> None:
    wrong = run_aimos(
        "verify-bundle",
        str(FIXTURES / "valid-two-memories.json"),
        "--master-fingerprint",
        "ab" * 32,
        "--json",
    )
    assert wrong.code == 4, wrong.describe()
    assert json.loads(wrong.out)["primary_reason"] == "recall_trust_anchor_master_mismatch"
    no_anchor = run_aimos("verify-bundle", str(FIXTURES / "valid-two-memories.json"))
    assert no_anchor.code == 2 and "--master-fingerprint" in no_anchor.err, no_anchor.describe()
    malformed = run_aimos(
        "verify-bundle", str(FIXTURES / "valid-two-memories.json"), "--master-fingerprint", "abc"
    )
    assert malformed.code == 2 and "Traceback" not in malformed.both


def test_files_that_are_not_bundles(aimos_home: Path, tmp_path: Path) -> None:
    cases: dict[str, tuple[bytes, str]] = {
        "not-json.json": (b"{nope", "bundle_json_malformed"),
        "binary.json": (b"\x00\xff\xfe garbage", "bundle_json_malformed"),
        "deep.json": (b"[" * 200_000 + b"]" * 200_000, DEPTH),
        "deep-recall.json": (json.dumps({"format": {"schema": RECALL}, "x": nested(40)}).encode(), DEPTH),
        "unknown.json": (b'{"format": {"schema": "example/v9"}, "hello": 1}', "unsupported_schema"),
        "recall-shaped.json": (b'{"format": {"schema": "wrong"}, "recall_receipt": {}}', "recall_bundle_schema_invalid"),
        "corpus-shaped.json": (b'{"members": [], "intended_n": 0}', "recall_corpus_schema_invalid"),
    }  # fmt: skip
    for name, (data, reason) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        result = verify(path)
        assert result.code == 4, result.describe()
        assert "Traceback" not in result.both, result.describe()
        assert reason in result.out and reason in result.err, (name, result.describe())
        as_json = verify(path, "--json")
        assert as_json.code == 4 and json.loads(as_json.out)["primary_reason"] == reason, name
    unknown = verify(tmp_path / "unknown.json")
    assert "example/v9" in unknown.err and "hom.aimos.mutmem-recall-evidence/v1" in unknown.err
    missing = verify(tmp_path / "absent.json")
    assert missing.code == 2 and "Traceback" not in missing.both


def test_help_names_v1_recall() -> None:
    text = " ".join(run_aimos("verify-bundle", "--help").ok().out.split())
    assert "V1 recall evidence or corpus" in text
