"""The portable cognitive-evidence verifier (``aimos.verify.cognitive``).

Three sources of bundles:

* the reference's 18 focused S4 fixtures: verdict, primary reason, corpus proof root and bundle
  hash must equal the manifest, and the rebuilt records must equal the producer's sql_records;
* bundles made here with ``aimos.crypto`` keys (``_Producer``) for what the fixtures do not
  cover: signed baselines, revocations, signing forms 2-4, the housekeeper's self-signed
  certificate, cross-memory replay, bounds and no-ops, SQL parity;
* malformed and mutated input, which must give a closed reason and never raise.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import importlib
import inspect
import json
import pkgutil
import random
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from support.cognitive_producer import _assert_closed, _mutate, _paths

from aimos.errors import NotFoundError
from aimos.verify import cognitive
from aimos.verify.cognitive import (
    FATAL_REASONS,
    IN_DATABASE_REASONS,
    PORTABLE_REASONS,
    REASONS,
    R,
    verify_cognitive_bundle,
    verify_cognitive_bytes,
    verify_cognitive_file,
)

MANIFEST_REL = Path("verifiers") / "mutmem-python" / "fixtures" / "manifest.json"


def _manifest(reference_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((reference_dir / MANIFEST_REL).read_bytes())
    return data


def _fixture(reference_dir: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((reference_dir / MANIFEST_REL.parent / name).read_bytes())
    return data


# --- the reference's S4 fixtures ---------------------------------------------------------------
def test_s4_fixture_matches_manifest(reference_dir: Path, s4_member: dict[str, Any]) -> None:
    member = s4_member
    path = reference_dir / MANIFEST_REL.parent / member["filename"]
    raw = path.read_bytes()
    assert hashlib.sha256(raw).hexdigest() == member["fixture_sha256"]
    verdict = verify_cognitive_file(path)
    _assert_closed(verdict)
    assert verdict.verdict == member["expected_verdict"]
    assert verdict.primary_reason == member["expected_primary_reason"]
    assert verdict.corpus_proof_root == member["expected_proof_root"]
    assert verdict.bundle_sha256 == member["expected_bundle_sha256"]
    # The same verdict from the parsed dict, and with the right trust anchor supplied.
    bundle = json.loads(raw)
    assert verify_cognitive_bundle(bundle) == verdict
    if member["expected_proof_root"] is not None:
        fingerprint = bundle["master_identity"]["fingerprint"]
        assert verify_cognitive_bundle(bundle, expected_master_fingerprint=fingerprint) == verdict
        # The rebuilt records are the producer's own (reproduced, not trusted).
        assert verdict.sql_parity is True
        sql = [
            {
                **{k: v for k, v in r.items() if k != "signatures_verified"},
                "sigs_verified": r["signatures_verified"],
            }
            for r in bundle["sql_records"]
        ]
        assert list(verdict.records) == sql


def test_s4_records_detail(reference_dir: Path) -> None:
    """Chain lengths and signature counts stop at the failing step (S4-CV-011: step 1)."""
    verdict = verify_cognitive_bundle(_fixture(reference_dir, "S4-CV-011.json"))
    (record,) = verdict.records
    assert (record["chain_length"], record["sigs_verified"], record["reason"]) == (1, 1, "continuity_break")
    assert verdict.detail is not None and "chain step 1" in verdict.detail


def test_s4_fixture_with_wrong_expected_master(reference_dir: Path) -> None:
    bundle = _fixture(reference_dir, "S4-CV-005.json")
    verdict = verify_cognitive_bundle(bundle, expected_master_fingerprint="ab" * 32)
    assert (verdict.verdict, verdict.primary_reason) == ("invalid", R.MASTER_FINGERPRINT_MISMATCH)
    assert verdict.corpus_proof_root is None and verdict.records == ()
    # Case and surrounding blanks of a user-typed fingerprint do not matter.
    typed = " " + bundle["master_identity"]["fingerprint"].upper() + "\n"
    assert verify_cognitive_bundle(bundle, expected_master_fingerprint=typed).ok


# --- malformed input: a closed reason, never an exception -------------------------------------
def _deep(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = {"k": value}
    return value


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda b: b.pop("master_identity"), R.BUNDLE_SCHEMA_INVALID),
        (lambda b: b.pop("memories"), R.BUNDLE_SCHEMA_INVALID),
        (lambda b: b["format"].__setitem__("extension", True), R.BUNDLE_SCHEMA_INVALID),
        (lambda b: b["format"].__setitem__("version", 1.5), R.BUNDLE_SCHEMA_INVALID),
        (lambda b: b.__setitem__("memories", {}), R.BUNDLE_SCHEMA_INVALID),
        (lambda b: b.__setitem__("company_id", " "), R.BUNDLE_IDENTITY_INVALID),
        (lambda b: b["master_identity"].pop("public_key_b64u"), R.BUNDLE_IDENTITY_INVALID),
        (
            lambda b: b["master_identity"].__setitem__(
                "fingerprint", b["master_identity"]["fingerprint"].upper()
            ),
            R.BUNDLE_IDENTITY_INVALID,
        ),
        (lambda b: b["master_identity"].__setitem__("public_key_b64u", "AAAA"), R.BUNDLE_IDENTITY_INVALID),
        (
            lambda b: b["memories"][0].__setitem__("content_hash", "0A" * 32),
            R.MEMORY_CONTENT_INVALID,
        ),
        (lambda b: b["memories"][0].__setitem__("content_hash", "07" * 31), R.MEMORY_CONTENT_INVALID),
        (lambda b: b["memories"][0].pop("memory_id"), R.MEMORY_ORDER_INVALID),
        (lambda b: b["memories"][0].__setitem__("company_id", "other"), R.MEMORY_ORDER_INVALID),
        (lambda b: b["memories"].append(copy.deepcopy(b["memories"][0])), R.MEMORY_ORDER_INVALID),
        (lambda b: b["memories"].__setitem__(0, "memory"), R.MEMORY_ORDER_INVALID),
        (lambda b: b["memories"][0].__setitem__("retrieval_weight_milli", 1001), R.MEMORY_WEIGHT_INVALID),
        (
            lambda b: b["memories"][0].__setitem__("retrieval_weight_float4", "7fc00000"),
            R.MEMORY_WEIGHT_INVALID,
        ),
        (lambda b: b["memories"][0].__setitem__("retrieval_weight_milli", True), R.MEMORY_WEIGHT_INVALID),
        (lambda b: b["sql_records"].__setitem__(0, None), R.SQL_RECORD_INVALID),
        (lambda b: b["sql_records"][0].__setitem__("chain_length", -1), R.SQL_COUNT_INVALID),
        (lambda b: b["memories"][0].__setitem__("extra", _deep(40)), R.CANONICAL_DEPTH_LIMIT),
        (lambda b: b["memories"][0].__setitem__("extra", 2**60), R.CANONICAL_UNSAFE_INTEGER),
        (lambda b: b["memories"][0].__setitem__("extra", float("nan")), R.CANONICAL_NON_FINITE),
        (lambda b: b["memories"][0].__setitem__("extra", {1: 2}), R.CANONICAL_KEY_TYPE),
        (lambda b: b["memories"][0].__setitem__("extra", object()), R.CANONICAL_UNSUPPORTED_TYPE),
        (lambda b: b["memories"][0].__setitem__("projections", None), R.PORTABLE_EVIDENCE_MALFORMED),
        (lambda b: b["memories"][0].__setitem__("baseline", []), R.PORTABLE_EVIDENCE_MALFORMED),
        (lambda b: b["sql_records"].clear(), R.SQL_PARITY_MISMATCH),
        (lambda b: b["sql_records"][0].__setitem__("reason", "x"), R.SQL_PARITY_MISMATCH),
        (lambda b: b["sql_records"][0].__setitem__("ok", 1), R.SQL_PARITY_MISMATCH),
    ],
)
def test_malformed_bundle_gives_closed_reason(reference_dir: Path, mutate: Any, reason: str) -> None:
    bundle = _fixture(reference_dir, "S4-CV-001.json")
    mutate(bundle)
    verdict = verify_cognitive_bundle(bundle)
    _assert_closed(verdict)
    assert (verdict.verdict, verdict.primary_reason) == ("invalid", reason), verdict.detail
    if reason in FATAL_REASONS:
        assert verdict.records == () and verdict.corpus_proof_root is None


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", R.BUNDLE_JSON_MALFORMED),
        (b"not json", R.BUNDLE_JSON_MALFORMED),
        (b"\xff\xfe{}", R.BUNDLE_JSON_MALFORMED),
        (b'{"a": 1, "a": 2}', R.JSON_DUPLICATE_KEY),
        (b'{"a": NaN}', R.CANONICAL_NON_FINITE),
        (b'{"a": 1e400}', R.CANONICAL_NON_FINITE),
        (b"[1, 2]", R.BUNDLE_INVALID),
        (b'"text"', R.BUNDLE_INVALID),
        (b"[" * 100_000 + b"]" * 100_000, R.CANONICAL_DEPTH_LIMIT),
        (json.dumps(_deep(40)).encode(), R.CANONICAL_DEPTH_LIMIT),
    ],
)
def test_malformed_bytes(data: bytes, reason: str) -> None:
    verdict = verify_cognitive_bytes(data)
    _assert_closed(verdict)
    assert (verdict.verdict, verdict.primary_reason) == ("invalid", reason)
    assert verdict.records == () and verdict.corpus_proof_root is None


def test_truncated_file(reference_dir: Path, tmp_path: Path) -> None:
    raw = (reference_dir / MANIFEST_REL.parent / "S4-CV-007.json").read_bytes()
    for cut in (1, len(raw) // 3, len(raw) // 2, len(raw) - 2):
        path = tmp_path / f"cut{cut}.json"
        path.write_bytes(raw[:cut])
        verdict = verify_cognitive_file(path)
        assert (verdict.verdict, verdict.primary_reason) == ("invalid", R.BUNDLE_JSON_MALFORMED)
    # Trailing whitespace is still JSON; a trailing character is not.
    (tmp_path / "ws.json").write_bytes(raw + b"\n\n")
    assert verify_cognitive_file(tmp_path / "ws.json").ok
    (tmp_path / "junk.json").write_bytes(raw + b"x")
    assert verify_cognitive_file(tmp_path / "junk.json").primary_reason == R.BUNDLE_JSON_MALFORMED


def test_depth_limit_boundary(reference_dir: Path) -> None:
    """Depth counts from 0 at the root: memories[0].extra sits at depth 3, so 29 more levels
    (a leaf at depth 32) are allowed and 30 are not."""
    for levels, ok in ((29, True), (30, False)):
        bundle = _fixture(reference_dir, "S4-CV-001.json")
        bundle["memories"][0]["extra"] = _deep(levels)
        verdict = verify_cognitive_bundle(bundle)
        assert verdict.primary_reason == (None if ok else R.CANONICAL_DEPTH_LIMIT)


def test_missing_file_raises_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError):
        verify_cognitive_file(tmp_path / "absent.json")


def test_non_dict_input_never_raises() -> None:
    values: list[Any] = [None, 3, "x", [], [{"format": {}}], {1: 2}, {"format": None}]
    for value in values:
        verdict = verify_cognitive_bundle(value)
        _assert_closed(verdict)
        assert verdict.verdict == "invalid"


def test_mutations_never_raise(reference_dir: Path, s4_member: dict[str, Any]) -> None:
    member = s4_member
    bundle = _fixture(reference_dir, member["filename"])
    rng = random.Random(member["vector_id"])
    for _ in range(80):
        verdict = verify_cognitive_bundle(_mutate(bundle, rng))
        assert verdict.verdict != "indeterminate", verdict.detail
        _assert_closed(verdict)


def _changed(value: Any) -> Any:
    """A different value of roughly the same kind."""
    if isinstance(value, str):
        return "ff" + value[2:] if len(value) > 2 and value[:2] != "ff" else "x"
    if isinstance(value, bool):
        return not value
    return "x" if value is None else None


def test_signed_fields_cannot_change(reference_dir: Path) -> None:
    """Every leaf of S4-CV-007's memory that is not purely descriptive is bound by a hash or a
    signature: changing any of them makes the bundle invalid."""
    bundle = _fixture(reference_dir, "S4-CV-007.json")
    # Ids, and the request fields a form-1 signature does not cover.
    descriptive = {
        "projection_id",
        "provenance_id",
        "identity_tier",
        "signed_method",
        "signed_path",
        "signed_claims",
        "memory_originated_at",
    }
    changed = 0
    for path in _paths(bundle["memories"]):
        parent: Any = bundle["memories"]
        for key in path[:-1]:
            parent = parent[key]
        value = parent[path[-1]]
        # A memory's own content hash is bound only through a signed baseline (none here).
        if isinstance(value, dict | list) or path[-1] in descriptive or path == (0, "content_hash"):
            continue
        mutated = copy.deepcopy(bundle)
        target: Any = mutated["memories"]
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = _changed(value)
        verdict = verify_cognitive_bundle(mutated)
        assert verdict.verdict == "invalid", path
        changed += 1
    assert changed > 100


# --- the closed vocabulary -----------------------------------------------------------------------
def test_manifest_reasons_are_in_the_vocabulary(reference_dir: Path) -> None:
    expected = {m["expected_primary_reason"] for m in _manifest(reference_dir)["vectors"]} - {None}
    assert expected <= REASONS
    v1_vocabulary = {
        "projection_display_invalid",
        "continuity_break",
        "cognitive_projection_genesis_invalid",
        "cognitive_projection_fork",
        "cognitive_projection_disconnected",
        "provenance_event_type_invalid",
        "baseline_binding_invalid",
        "provenance_signed_body_content_hash_mismatch",
        "transition_signature_invalid",
        "provenance_signer_revoked_before_evidence",
        "provenance_cert_expired",
        "terminal_weight_mismatch",
        "provenance_signer_certificate_row_mismatch",
        "provenance_signed_body_event_type_mismatch",
        "cognitive_evidence_bundle_schema_invalid",
        "cognitive_evidence_memory_content_invalid",
        "canonical_json_depth_limit",
    }
    assert v1_vocabulary <= PORTABLE_REASONS
    # The in-database verifier's names (PROTOCOL-NOTES section 7) are in the vocabulary too.
    assert {"hash_mismatch", "signature_invalid", "unreachable_rows", "provenance_binding_invalid"} <= REASONS


def test_vocabulary_is_well_formed() -> None:
    atomic = {k: v for k, v in vars(R).items() if k.isupper()}
    assert len(set(atomic.values())) == len(atomic), "two reason names share a value"
    assert FATAL_REASONS <= REASONS
    assert FATAL_REASONS <= PORTABLE_REASONS <= REASONS
    assert REASONS == PORTABLE_REASONS | IN_DATABASE_REASONS
    for reason in REASONS:
        assert reason == reason.strip().lower() and reason.replace("_", "").replace(":", "").isalnum()


def _reason_literal_uses(tree: ast.Module) -> list[str]:
    """String literals of the module that are reasons, outside class R and the status constants."""
    allowed: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "R":
            allowed |= {id(n) for n in ast.walk(node)}
        if isinstance(node, ast.AnnAssign | ast.Assign):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            if names & {"UNATTESTED_INITIAL_WEIGHT", "CertificationStatus", "IN_DATABASE_REASONS"}:
                allowed |= {id(n) for n in ast.walk(node)}
    return [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and n.value in REASONS
        and id(n) not in allowed
    ]


def _cognitive_modules() -> list[ModuleType]:
    """The verifier's modules (it is a package)."""
    names = [info.name for info in pkgutil.iter_modules(cognitive.__path__, f"{cognitive.__name__}.")]
    return [cognitive, *(importlib.import_module(name) for name in sorted(names))]


def test_reasons_come_from_constants() -> None:
    """No reason is spelled as a literal outside the vocabulary: every ``_Fail`` and record
    reason is an ``R`` constant or a value of a composite table, all of which REASONS holds."""
    for module in _cognitive_modules():
        tree = ast.parse(inspect.getsource(module))
        assert _reason_literal_uses(tree) == [], module.__name__
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("fail", "CheckFailed", "_invalid")
            ):
                first = node.args[0]
                assert not isinstance(first, ast.Constant | ast.JoinedStr), ast.unparse(node)
    composite = (
        set(cognitive._PROVENANCE.values())
        | set(cognitive._LEDGER_CERT.values())
        | set(cognitive._LEDGER_PROOF.values())
        | set(cognitive._BASELINE_EVENT.values())
    )
    atomic = {v for k, v in vars(R).items() if k.isupper()}
    assert atomic | composite == PORTABLE_REASONS and atomic == cognitive.ATOMIC_REASONS


# --- layering ------------------------------------------------------------------------------------
def test_module_loads_no_store() -> None:
    root = Path(__file__).resolve().parents[2]
    code = "import sys, aimos.verify.cognitive; print('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    loaded = set(out.stdout.split())
    for forbidden in ("apsw", "keyring", "aimos.store", "aimos.identity", "aimos.recall", "aimos.memory"):
        assert forbidden not in loaded, forbidden
