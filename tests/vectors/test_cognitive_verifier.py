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
import itertools
import json
import pkgutil
import random
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from aimos import vocabulary
from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json
from aimos.crypto.certs import PERPETUAL_UNTIL, issue_certificate
from aimos.crypto.ed25519 import KeyPair
from aimos.crypto.encoding import b64u_encode, float4_be, iso_ms
from aimos.crypto.messages import payload_message
from aimos.errors import NotFoundError
from aimos.verify import cognitive
from aimos.verify.cognitive import (
    FATAL_REASONS,
    IN_DATABASE_REASONS,
    PORTABLE_REASONS,
    REASONS,
    CognitiveVerdict,
    R,
    verify_cognitive_bundle,
    verify_cognitive_bytes,
    verify_cognitive_file,
)
from aimos.vocabulary import MASTER_ISSUER

MANIFEST_REL = Path("verifiers") / "mutmem-python" / "fixtures" / "manifest.json"


def _manifest(reference_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((reference_dir / MANIFEST_REL).read_bytes())
    return data


def _fixture(reference_dir: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((reference_dir / MANIFEST_REL.parent / name).read_bytes())
    return data


def _assert_closed(verdict: CognitiveVerdict) -> None:
    """Every reason a verdict carries is in the closed vocabulary."""
    assert verdict.verdict in ("valid", "invalid", "indeterminate")
    assert (verdict.primary_reason is None) == (verdict.verdict == "valid")
    if verdict.primary_reason is not None:
        assert verdict.primary_reason in PORTABLE_REASONS, verdict.primary_reason
    for record in verdict.records:
        assert set(record) == {
            "memory_id",
            "certification_status",
            "ok",
            "chain_length",
            "sigs_verified",
            "reason",
        }
        assert record["certification_status"] in cognitive.CERTIFICATION_STATUSES
        assert (record["reason"] is None) == record["ok"]
        assert record["reason"] is None or record["reason"] in PORTABLE_REASONS, record["reason"]
    for stream in verdict.event_streams:
        assert stream.reason is None or stream.reason in PORTABLE_REASONS, stream.reason


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


# --- mutation fuzzing: no exception, no internal error, only closed reasons ---------------------
_REPLACEMENTS: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1,
    99,
    3001,
    1.5,
    2**53 - 1,
    -(2**53) + 1,
    1e308,
    "",
    "X",
    "AB" * 32,
    "ab" * 32,
    "ab" * 64,
    [],
    {},
    [1],
    {"a": 1},
]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += _paths(item, (*prefix, index))
    return out


def _mutate(bundle: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    out = copy.deepcopy(bundle)
    path = rng.choice(_paths(out))
    parent: Any = out
    for key in path[:-1]:
        parent = parent[key]
    if isinstance(parent, dict) and rng.random() < 0.2:
        del parent[path[-1]]
    else:
        parent[path[-1]] = copy.deepcopy(rng.choice(_REPLACEMENTS))
    return out


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


# --- bundles produced here -------------------------------------------------------------------------
T0 = 1_786_447_260
COMPANY = "acme"
MEM_A = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
MEM_B = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"


def _key(label: str) -> KeyPair:
    return KeyPair(hashlib.sha256(label.encode()).digest())


def _f4(milli: int) -> str:
    return float4_be(milli / 1000).hex()


class _Producer:
    """Makes cognitive bundles the way the reference exporter lays them out."""

    def __init__(self) -> None:
        self.master = _key("master")
        self.housekeeper = _key("housekeeper")
        self.memories: list[dict[str, Any]] = []
        self.streams: list[dict[str, Any]] = []
        self.expected: list[dict[str, Any]] = []
        self._ts = T0 + 60

    def tick(self) -> int:
        self._ts += 1
        return self._ts

    def identity(
        self,
        key: KeyPair | None = None,
        *,
        agent_id: str = "housekeeper",
        valid_from: int = T0,
        valid_until: int = PERPETUAL_UNTIL,
        issuer: str = MASTER_ISSUER,
        revoked_at: int | None = None,
    ) -> dict[str, Any]:
        key = key or self.housekeeper
        signer = key if issuer == agent_id else self.master
        cert = issue_certificate(
            signer,
            agent_id=agent_id,
            pubkey=key.public_b64u,
            device_fp="test-device",
            valid_from=valid_from,
            valid_until=valid_until,
            issued_at=valid_from,
            issuer=issuer,
        )
        identity: dict[str, Any] = {
            "agent_id": agent_id,
            "pubkey_b64u": key.public_b64u,
            "certificate_b64u": cert.text,
            "device_fingerprint": "test-device",
            "valid_from": valid_from,
            "valid_until": valid_until,
            "revocation": None,
        }
        if revoked_at is not None:
            identity["revocation"] = self.revocation(identity, revoked_at)
        return identity

    def revocation(self, identity: dict[str, Any], revoked_at: int) -> dict[str, Any]:
        cert = identity["certificate_b64u"]
        target = hashlib.sha256(cert.encode()).hexdigest()
        prior = commitments.revocation_prior_identity_hash(identity["agent_id"], identity["valid_from"], cert)
        body = {
            "schema": vocabulary.AGENT_REVOCATION_SCHEMA,
            "event_type": "REVOKE_AGENT_IDENTITY",
            "agent_id": identity["agent_id"],
            "agent_valid_from": iso_ms(identity["valid_from"]),
            "target_cert_hash": target,
            "prior_identity_hash": prior.hex(),
            "master_fingerprint": self.master.fingerprint,
            "revoked_at": iso_ms(revoked_at),
        }
        signature = self.master.sign(payload_message(body, "revocation-nonce", revoked_at))
        content = commitments.sha256(canonical_json(body))
        return {
            "agent_id": identity["agent_id"],
            "agent_valid_from": identity["valid_from"],
            "master_fingerprint": self.master.fingerprint,
            "target_cert_hash": target,
            "prior_identity_hash": prior.hex(),
            "signed_body": body,
            "content_hash": content.hex(),
            "mutation_hash": commitments.agent_revocation_mutation_hash(prior, content, signature).hex(),
            "ts_signed": revoked_at,
            "nonce": "revocation-nonce",
            "signature": signature.hex(),
        }

    def chain(
        self,
        memory_id: str,
        weights: list[int],
        *,
        identity: dict[str, Any] | None = None,
        key: KeyPair | None = None,
        body_memory_id: str | None = None,
        form: dict[str, Any] | None = None,
        body_extra: dict[str, Any] | None = None,
    ) -> list[dict[str, Any]]:
        identity = identity or self.identity()
        key = key or self.housekeeper
        rows: list[dict[str, Any]] = []
        prev_h: bytes | None = None
        prev_mut: bytes | None = None
        for i, (old, new) in enumerate(itertools.pairwise(weights)):
            ts = self.tick()
            nonce = f"nonce-{memory_id[:4]}-{i}"
            body = {
                "event_type": "REWEIGHT",
                "company_id": COMPANY,
                "memory_id": body_memory_id or memory_id,
                "old_weight": old / 1000,
                "new_weight": new / 1000,
                "judge_valence": 0.5,
                "governor_flag": "TEST",
                "reason": "outcome_evidence",
                "ts_signed": ts,
                **(body_extra or {}),
            }
            prov: dict[str, Any] = {
                "provenance_id": f"00000000-0000-4000-8000-{i:012d}",
                "body": body,
                "previous_mutation_hash": prev_mut.hex() if prev_mut else None,
                "signed_at": ts,
                "nonce": nonce,
                "event_type": "REWEIGHT",
                "binding_schema_version": 2,
                "signer_agent_id": identity["agent_id"],
                "signer_valid_from": identity["valid_from"],
                "certificate_fingerprint": hashlib.sha256(identity["certificate_b64u"].encode()).hexdigest(),
                "identity_tier": "T1",
                "signature_form": 1,
                "request_signature_form": 1,
                "signed_method": None,
                "signed_path": None,
                "signed_claims": None,
                "is_genesis": prev_mut is None,
                "backfilled": False,
                "memory_originated_at": None,
                "identity": identity,
            }
            prov.update(form or {})
            message = self._message(prov, body, nonce, ts)
            content = commitments.provenance_content_hash(body)
            originated = prov["memory_originated_at"] if prov["signature_form"] == 2 else None
            mutation = commitments.provenance_mutation_hash(content, prev_mut, nonce, ts, originated)
            prov.update(
                content_hash=content.hex(), mutation_hash=mutation.hex(), signature=key.sign(message).hex()
            )
            h = commitments.projection_hash(memory_id, old, new, mutation, prev_h)
            try:
                t = commitments.transition_commitment(COMPANY, memory_id, old, new, mutation)
            except Exception:  # out-of-range or no-op rows are made on purpose; t is then junk
                t = hashlib.sha256(b"junk").digest()
            rows.append(
                {
                    "projection_id": f"00000001-0000-4000-8000-{i:012d}",
                    "company_id": COMPANY,
                    "memory_id": memory_id,
                    "old_weight_milli": old,
                    "new_weight_milli": new,
                    "old_weight_float4": _f4(old),
                    "new_weight_float4": _f4(new),
                    "provenance_mutation_hash": mutation.hex(),
                    "previous_projection_hash": prev_h.hex() if prev_h else None,
                    "projection_hash": h.hex(),
                    "transition_hash": t.hex(),
                    "transition_signature": key.sign(t).hex(),
                    "provenance": prov,
                }
            )
            prev_h, prev_mut = h, mutation
        return rows

    @staticmethod
    def _message(prov: dict[str, Any], body: dict[str, Any], nonce: str, ts: int) -> bytes:
        parts = [canonical_json(body)]
        if prov["signature_form"] == 2:
            return b"\n".join(
                [*parts, nonce.encode(), str(ts).encode(), str(prov["memory_originated_at"]).encode()]
            )
        if prov["request_signature_form"] in (3, 4):
            parts += [prov["signed_method"].upper().encode(), prov["signed_path"].split("?")[0].encode()]
            if prov["request_signature_form"] == 4:
                claims = prov["signed_claims"]
                parts.append(
                    canonical_json(
                        {"prev_chain_hash": claims["prev_chain_hash"], "device_fp": claims.get("device_fp")}
                    )
                )
        return b"\n".join([*parts, nonce.encode(), str(ts).encode()])

    def event(
        self,
        stream: dict[str, Any],
        *,
        operation: str,
        key: str | None,
        metadata: dict[str, Any],
        subject_memory_id: str | None = None,
    ) -> dict[str, Any]:
        identity = stream["identity"]
        events = stream["events"]
        if events:
            prev = bytes.fromhex(events[-1]["mutation_hash"])
        else:
            prev = commitments.event_genesis_predecessor(
                COMPANY, identity["agent_id"], identity["valid_from"]
            )
        ts = self.tick()
        cert_fp = hashlib.sha256(identity["certificate_b64u"].encode()).hexdigest()
        event_id = f"eeeeeeee-0000-4000-8000-{len(self.streams):06d}{len(events):06d}"
        body = {
            "event_id": event_id,
            "company_id": COMPANY,
            "subject_agent_id": identity["agent_id"],
            "signer_agent_id": identity["agent_id"],
            "signer_valid_from": iso_ms(identity["valid_from"]),
            "cert_fingerprint": cert_fp,
            "identity_tier": "T1",
            "authority_kind": "system",
            "operation": operation,
            "key": key,
            "metadata": metadata,
            "parent_event_id": None,
            "ledger_seq": len(events) + 1,
            "prev_mutation_hash": prev.hex(),
            "ts_signed": ts,
            **({"subject_memory_id": subject_memory_id} if subject_memory_id else {}),
        }
        content = commitments.provenance_content_hash(body)
        nonce = f"event-{event_id}"
        event = {
            "event_id": event_id,
            "company_id": COMPANY,
            "subject_agent_id": identity["agent_id"],
            "signer_agent_id": identity["agent_id"],
            "signer_valid_from": identity["valid_from"],
            "certificate_fingerprint": cert_fp,
            "identity_tier": "T1",
            "authority_kind": "system",
            "operation": operation,
            "key": key,
            "metadata": metadata,
            "parent_event_id": None,
            "ledger_sequence": len(events) + 1,
            "previous_mutation_hash": prev.hex(),
            "content_hash": content.hex(),
            "mutation_hash": commitments.event_link_hash(prev, content, nonce, ts).hex(),
            "signed_at": ts,
            "nonce": nonce,
            "signature": self.housekeeper.sign(payload_message(body, nonce, ts)).hex(),
            "proof_required": True,
            "ledger_version": 1,
            "signed_body": body,
        }
        events.append(event)
        return event

    def stream(self, identity: dict[str, Any] | None = None) -> dict[str, Any]:
        identity = identity or self.identity()
        stream = {
            "signer_agent_id": identity["agent_id"],
            "signer_valid_from": identity["valid_from"],
            "identity": identity,
            "events": [],
        }
        self.streams.append(stream)
        return stream

    def baseline(self, memory_id: str, content_hash: str, milli: int) -> dict[str, Any]:
        identity = self.identity()
        stream = self.streams[0] if self.streams else self.stream(identity)
        observed_at = self._ts + 1
        metadata = {
            "schema": "hom.aimos.cognitive-initial-weight/v1",
            "observed_weight_float4": _f4(milli),
            "weight_milli": milli,
            "observed_ts": observed_at,
            "memory_content_hash": content_hash,
            "historical_origin_claimed": False,
            "canonical_memory_mutation": False,
        }
        event = self.event(
            stream, operation="cognitive_initial_weight_attested", key=memory_id, metadata=metadata
        )
        cert_fp = hashlib.sha256(identity["certificate_b64u"].encode()).digest()
        h = commitments.cognitive_baseline_hash(
            COMPANY,
            memory_id,
            event["event_id"],
            bytes.fromhex(event["mutation_hash"]),
            bytes.fromhex(content_hash),
            milli / 1000,
            milli,
            observed_at,
            identity["valid_from"],
            cert_fp,
        )
        return {
            "baseline_id": "cccccccc-0000-4000-8000-000000000001",
            "company_id": COMPANY,
            "memory_id": memory_id,
            "event_id": event["event_id"],
            "event_mutation_hash": event["mutation_hash"],
            "live_content_hash": content_hash,
            "observed_weight_milli": milli,
            "observed_weight_float4": _f4(milli),
            "observed_at": observed_at,
            "attestation_reason": "retained_nondefault_weight_baseline",
            "historical_origin_claimed": False,
            "signer_agent_id": "housekeeper",
            "signer_valid_from": identity["valid_from"],
            "certificate_fingerprint": cert_fp.hex(),
            "baseline_hash": h.hex(),
            "signature": self.housekeeper.sign(h).hex(),
            "identity": identity,
        }

    def memory(
        self,
        memory_id: str,
        weight: int,
        projections: list[dict[str, Any]],
        baseline: dict[str, Any] | None = None,
        *,
        content_hash: str = "07" * 32,
        expect: tuple[str, bool, int, int, str | None],
    ) -> None:
        self.memories.append(
            {
                "memory_id": memory_id,
                "company_id": COMPANY,
                "content_hash": content_hash,
                "retrieval_weight_milli": weight,
                "retrieval_weight_float4": _f4(weight),
                "baseline": baseline,
                "projections": projections,
            }
        )
        status, ok, length, sigs, reason = expect
        self.expected.append(
            {
                "memory_id": memory_id,
                "certification_status": status,
                "ok": ok,
                "chain_length": length,
                "signatures_verified": sigs,
                "reason": reason,
            }
        )

    def bundle(self) -> dict[str, Any]:
        return {
            "format": dict(cognitive.FORMAT),
            "company_id": COMPANY,
            "master_identity": {
                "public_key_b64u": self.master.public_b64u,
                "fingerprint": self.master.fingerprint,
            },
            "event_streams": self.streams,
            "memories": sorted(self.memories, key=lambda m: m["memory_id"]),
            "sql_records": sorted(self.expected, key=lambda r: r["memory_id"]),
        }


def _check(bundle: dict[str, Any], reason: str | None) -> CognitiveVerdict:
    """Verify through the bytes path; the records must equal the bundle's expected records."""
    verdict = verify_cognitive_bytes(json.dumps(bundle).encode())
    _assert_closed(verdict)
    assert verdict.primary_reason == reason, verdict.detail
    assert verdict.sql_parity is True, verdict.records
    root = commitments.corpus_proof_root(
        {**r, "sigs_verified": r["signatures_verified"]} for r in bundle["sql_records"]
    ).hex()
    assert verdict.corpus_proof_root == root
    return verdict


CERTIFIED = "certified_chain"


def test_produced_certified_chain_and_default() -> None:
    p = _Producer()
    p.memory(MEM_A, 900, p.chain(MEM_A, [1000, 1300, 900]), expect=(CERTIFIED, True, 2, 2, None))
    p.memory(MEM_B, 1000, [], expect=("default_empty_chain", True, 0, 0, None))
    assert _check(p.bundle(), None).ok


def test_produced_bounds_and_noop() -> None:
    for weights in ([1000, 99], [1000, 3001], [1000, 1000], [1000, 1300, 1300]):
        p = _Producer()
        rows = p.chain(MEM_A, weights)
        failing = next(i for i, (o, n) in enumerate(itertools.pairwise(weights)) if n in (99, 3001, o))
        p.memory(
            MEM_A,
            weights[-1],
            rows,
            expect=(CERTIFIED, False, failing, failing, "projection_display_invalid"),
        )
        _check(p.bundle(), "projection_display_invalid")


def test_produced_display_column_not_float4() -> None:
    p = _Producer()
    rows = p.chain(MEM_A, [1000, 1300])
    rows[0]["new_weight_float4"] = float4_be(1.3000001).hex()
    p.memory(MEM_A, 1300, rows, expect=(CERTIFIED, False, 0, 0, "projection_display_invalid"))
    _check(p.bundle(), "projection_display_invalid")


def test_produced_unattested_and_default_anchor() -> None:
    p = _Producer()
    p.memory(MEM_A, 1200, [], expect=("unattested_initial_weight", False, 0, 0, "unattested_initial_weight"))
    _check(p.bundle(), "unattested_initial_weight")
    p = _Producer()
    p.memory(
        MEM_A,
        1500,
        p.chain(MEM_A, [1200, 1500]),
        expect=(CERTIFIED, False, 1, 1, "default_chain_anchor_invalid"),
    )
    _check(p.bundle(), "default_chain_anchor_invalid")


def test_produced_signed_baseline() -> None:
    p = _Producer()
    baseline = p.baseline(MEM_A, "07" * 32, 1200)
    p.memory(MEM_A, 1200, [], baseline, expect=("signed_initial_weight", True, 0, 0, None))
    baseline_b = p.baseline(MEM_B, "07" * 32, 1300)
    p.memory(MEM_B, 1500, p.chain(MEM_B, [1300, 1500]), baseline_b, expect=(CERTIFIED, True, 1, 1, None))
    bundle = p.bundle()
    assert _check(bundle, None).ok

    def variant(edit: Any, reason: str, status: str = "signed_initial_weight", n: int = 0) -> None:
        b = copy.deepcopy(bundle)
        edit(b)
        b["sql_records"][0].update(
            ok=False, reason=reason, certification_status=status, chain_length=n, signatures_verified=n
        )
        _check(b, reason)

    mem_a = 0  # memories are sorted: MEM_A first
    variant(
        lambda b: b["memories"][mem_a]["baseline"].__setitem__("signature", "00" * 64),
        "baseline_signature_invalid",
    )
    variant(
        lambda b: b["memories"][mem_a]["baseline"].__setitem__("baseline_hash", "00" * 32),
        "baseline_hash_invalid",
    )
    variant(
        lambda b: b["memories"][mem_a]["baseline"].__setitem__("attestation_reason", "x"),
        "baseline_binding_invalid",
    )
    variant(
        lambda b: b["memories"][mem_a]["baseline"].__setitem__("historical_origin_claimed", True),
        "baseline_binding_invalid",
    )
    variant(
        lambda b: b["memories"][mem_a]["baseline"].__setitem__("event_id", "nope"), "baseline_event_missing"
    )
    variant(
        lambda b: b["memories"][mem_a].update(retrieval_weight_milli=1300, retrieval_weight_float4=_f4(1300)),
        "baseline_terminal_weight_mismatch",
    )

    # The baseline's event must come from a verified stream.
    b = copy.deepcopy(bundle)
    b["event_streams"][0]["events"][0]["signature"] = "00" * 64
    b["sql_records"][0].update(ok=False, reason="baseline_event_epoch_invalid")
    b["sql_records"][1].update(ok=False, reason="baseline_chain_anchor_invalid")
    verdict = verify_cognitive_bundle(b)
    assert verdict.primary_reason == "event_ledger_proof_invalid:sig_invalid"
    assert [r["reason"] for r in verdict.records] == [
        "baseline_event_epoch_invalid",
        "baseline_chain_anchor_invalid",
    ]
    assert verdict.sql_parity is True

    # A chain whose genesis is not the attested weight.
    b = copy.deepcopy(bundle)
    b["memories"][1]["baseline"] = copy.deepcopy(b["memories"][0]["baseline"])
    b["sql_records"][1].update(ok=False, reason="baseline_chain_anchor_invalid")
    verdict = verify_cognitive_bundle(b)
    assert verdict.primary_reason == "baseline_chain_anchor_invalid"


def test_produced_event_stream_failures() -> None:
    p = _Producer()
    stream = p.stream()
    for _ in range(3):
        p.event(stream, operation="test_op", key=None, metadata={"n": 1})
    p.memory(MEM_A, 1000, [], expect=("default_empty_chain", True, 0, 0, None))
    bundle = p.bundle()
    assert _check(bundle, None).ok
    cases: list[tuple[Any, str]] = [
        (lambda e: e[1].__setitem__("signature", "00" * 64), "event_ledger_proof_invalid:sig_invalid"),
        (lambda e: e[1].__setitem__("previous_mutation_hash", "00" * 32), "event_ledger_chain_link_invalid"),
        (lambda e: e[1].__setitem__("ledger_sequence", 3), "event_ledger_chain_link_invalid"),
        (lambda e: e.pop(0), "event_ledger_chain_link_invalid"),
        (
            lambda e: e[2]["metadata"].__setitem__("n", 2),
            "event_ledger_proof_invalid:event_proof_hash_mismatch",
        ),
        (
            lambda e: e[2].__setitem__("mutation_hash", "00" * 32),
            "event_ledger_proof_invalid:event_proof_hash_mismatch",
        ),
        (lambda e: e[2].__setitem__("ledger_version", 2), "event_ledger_proof_invalid:event_proof_version"),
        (lambda e: e[2].__setitem__("signature", "zz"), "event_ledger_proof_invalid:event_proof_malformed"),
        (
            lambda e: e[0].__setitem__("company_id", "other"),
            "cognitive_evidence_event_identity_epoch_invalid",
        ),
        (
            lambda e: e[0].__setitem__("signer_valid_from", T0 + 1),
            "cognitive_evidence_event_identity_epoch_invalid",
        ),
        (lambda e: e[0].__setitem__("signed_at", T0 - 1), "cognitive_evidence_event_identity_epoch_invalid"),
        (lambda e: e[0].__setitem__("signed_at", "late"), "cognitive_evidence_event_invalid"),
        (lambda e: e[0].__setitem__("certificate_fingerprint", "00" * 32), "event_ledger_identity_mismatch"),
    ]
    for edit, reason in cases:
        b = copy.deepcopy(bundle)
        edit(b["event_streams"][0]["events"])
        verdict = _check(b, reason)
        assert verdict.corpus_proof_root is not None and not verdict.event_streams[0].valid
    b = copy.deepcopy(bundle)
    b["event_streams"][0]["signer_valid_from"] = T0 + 1
    _check(b, "cognitive_evidence_event_identity_mismatch")
    b = copy.deepcopy(bundle)
    b["event_streams"].append(copy.deepcopy(b["event_streams"][0]))
    _check(b, "cognitive_evidence_event_duplicate")


MEM_C = "cccccccc-cccc-4ccc-8ccc-cccccccccccc"
DEFAULT_RECORD = ("default_empty_chain", True, 0, 0, None)


@pytest.mark.parametrize(
    ("metadata", "subject", "field"),
    [
        ({"memory_id": MEM_C}, None, "metadata.memory_id"),
        ({}, MEM_C, "subject_memory_id"),
        ({"memory_id": MEM_A, "supersedes": MEM_C}, MEM_A, "metadata.supersedes"),
        ({"evidence": [{"memory_id": MEM_A}, {"memory_id": MEM_C}]}, None, "metadata.evidence[1].memory_id"),
        ({"withheld_memory_ids": [MEM_C]}, None, "metadata.withheld_memory_ids[0]"),
    ],
    ids=["about", "subject", "supersedes", "disclosed", "withheld"],
)
def test_produced_memory_named_by_an_event_is_in_the_bundle(
    metadata: dict[str, Any], subject: str | None, field: str
) -> None:
    """A whole-brain bundle holds every memory its signed events name: one removed while its
    events stay is named (the memory, the event and the field); a bundle the caller says is of
    one memory holds that one."""
    p = _Producer()
    stream = p.stream()
    p.event(
        stream, operation="memory_saved", key=None, metadata={"memory_id": MEM_A}, subject_memory_id=MEM_A
    )
    named = p.event(stream, operation="test_op", key=None, metadata=metadata, subject_memory_id=subject)
    p.memory(MEM_A, 1000, [], expect=DEFAULT_RECORD)
    p.memory(MEM_C, 1000, [], expect=DEFAULT_RECORD)
    whole = p.bundle()
    assert _check(whole, None).ok
    lacking = copy.deepcopy(whole)
    for name in ("memories", "sql_records"):  # the strongest edit: the producer's records agree
        lacking[name] = [m for m in lacking[name] if m["memory_id"] != MEM_C]
    verdict = _check(lacking, R.MEMORY_MISSING)
    assert verdict.detail is not None
    assert f"memory {MEM_C} is named by event {named['event_id']}" in verdict.detail, verdict.detail
    assert f"its {field})" in verdict.detail, verdict.detail
    assert [r["memory_id"] for r in verdict.records] == [MEM_A]
    # exported for one memory: the caller's word, not the bundle's
    one = copy.deepcopy(lacking)
    assert verify_cognitive_bundle(one, memory_id=MEM_A).ok
    other = verify_cognitive_bundle(one, memory_id=MEM_C)
    assert other.primary_reason == R.MEMORY_MISSING and MEM_C in (other.detail or "")


def test_produced_bundle_without_memories_but_their_events() -> None:
    """Every memory removed, the producer's records with them, the events kept: refused, each
    memory counted, the first named."""
    p = _Producer()
    stream = p.stream()
    for mid in (MEM_A, MEM_B, MEM_C):
        p.event(
            stream, operation="memory_saved", key=None, metadata={"memory_id": mid}, subject_memory_id=mid
        )
        p.memory(mid, 1000, [], expect=DEFAULT_RECORD)
    bundle = p.bundle()
    assert _check(bundle, None).ok
    bundle["memories"], bundle["sql_records"] = [], []
    verdict = _check(bundle, R.MEMORY_MISSING)
    assert verdict.records == () and verdict.detail is not None
    assert verdict.detail.startswith(f"memory {MEM_A} is named by event "), verdict.detail
    assert "2 more missing memories" in verdict.detail, verdict.detail
    # an event in a stream that fails is not taken at its word (its stream's reason comes first)
    bundle["event_streams"][0]["events"][1]["signature"] = "00" * 64
    verdict = verify_cognitive_bundle(bundle)
    assert verdict.primary_reason == "event_ledger_proof_invalid:sig_invalid"


def test_produced_housekeeper_self_signed_genesis_certificate() -> None:
    p = _Producer()
    identity = p.identity(issuer="housekeeper")
    p.memory(
        MEM_A, 1300, p.chain(MEM_A, [1000, 1300], identity=identity), expect=(CERTIFIED, True, 1, 1, None)
    )
    assert _check(p.bundle(), None).ok
    # Only the housekeeper may certify itself.
    p = _Producer()
    agent = _key("agent")
    identity = p.identity(agent, agent_id="agent-x", issuer="agent-x")
    p.event(p.stream(identity), operation="test_op", key=None, metadata={})
    p.memory(MEM_A, 1000, [], expect=("default_empty_chain", True, 0, 0, None))
    _check(p.bundle(), "cognitive_evidence_event_identity_epoch_invalid")


def test_produced_revocation() -> None:
    # Revoked after the evidence: still valid.
    p = _Producer()
    identity = p.identity(revoked_at=T0 + 10_000)
    p.memory(
        MEM_A, 1300, p.chain(MEM_A, [1000, 1300], identity=identity), expect=(CERTIFIED, True, 1, 1, None)
    )
    assert _check(p.bundle(), None).ok
    # Revoked at or before signing.
    p = _Producer()
    identity = p.identity(revoked_at=T0 + 61)
    p.memory(
        MEM_A,
        1300,
        p.chain(MEM_A, [1000, 1300], identity=identity),
        expect=(CERTIFIED, False, 0, 0, "provenance_signer_revoked_before_evidence"),
    )
    bundle = p.bundle()
    _check(bundle, "provenance_signer_revoked_before_evidence")
    # A revocation that does not verify is itself a failure.
    for field, value, reason in (
        ("signature", "00" * 64, "provenance_revocation_hash_mismatch"),  # the hash covers it
        ("nonce", "another-nonce", "provenance_revocation_signature_invalid"),
        ("content_hash", "00" * 32, "provenance_revocation_hash_mismatch"),
        ("master_fingerprint", "00" * 32, "provenance_revocation_master_mismatch"),
        ("signed_body", {}, "provenance_revocation_body_invalid"),
        ("nonce", "", "provenance_revocation_proof_malformed"),
    ):
        b = copy.deepcopy(bundle)
        b["memories"][0]["projections"][0]["provenance"]["identity"]["revocation"][field] = value
        b["sql_records"][0]["reason"] = reason
        _check(b, reason)


def test_produced_certificate_window_and_key_substitution() -> None:
    p = _Producer()
    identity = p.identity(valid_until=T0 + 30)
    p.memory(
        MEM_A,
        1300,
        p.chain(MEM_A, [1000, 1300], identity=identity),
        expect=(CERTIFIED, False, 0, 0, "provenance_cert_expired"),
    )
    _check(p.bundle(), "provenance_cert_expired")
    p = _Producer()
    identity = p.identity(valid_from=T0 + 100)
    p.memory(
        MEM_A,
        1300,
        p.chain(MEM_A, [1000, 1300], identity=identity),
        expect=(CERTIFIED, False, 0, 0, "provenance_cert_not_yet_valid"),
    )
    _check(p.bundle(), "provenance_cert_not_yet_valid")
    # A substituted key: signed with another key whose pubkey is put in the identity row.
    p = _Producer()
    identity = p.identity()
    other = _key("other")
    identity["pubkey_b64u"] = other.public_b64u
    p.memory(
        MEM_A,
        1300,
        p.chain(MEM_A, [1000, 1300], identity=identity, key=other),
        expect=(CERTIFIED, False, 0, 0, "provenance_signer_certificate_row_mismatch"),
    )
    _check(p.bundle(), "provenance_signer_certificate_row_mismatch")
    # A certificate from an untrusted master.
    p = _Producer()
    rogue = _Producer()
    rogue.master = _key("rogue-master")
    identity = rogue.identity()
    p.memory(
        MEM_A,
        1300,
        p.chain(MEM_A, [1000, 1300], identity=identity),
        expect=(CERTIFIED, False, 0, 0, "provenance_cert_sig_invalid"),
    )
    _check(p.bundle(), "provenance_cert_sig_invalid")


def test_produced_provenance_binding() -> None:
    # Cross-memory replay: a correctly signed REWEIGHT of memory B used for memory A.
    p = _Producer()
    p.memory(
        MEM_A,
        1300,
        p.chain(MEM_A, [1000, 1300], body_memory_id=MEM_B),
        expect=(CERTIFIED, False, 0, 0, "provenance_event_type_invalid"),
    )
    _check(p.bundle(), "provenance_event_type_invalid")
    # Provenance that is not a REWEIGHT.
    p = _Producer()
    p.memory(
        MEM_A,
        1300,
        p.chain(MEM_A, [1000, 1300], form={"event_type": "EDIT"}),
        expect=(CERTIFIED, False, 0, 0, "provenance_signed_body_event_type_mismatch"),
    )
    _check(p.bundle(), "provenance_signed_body_event_type_mismatch")
    # Another signer than the housekeeper, with a valid certificate: not weight authority.
    p = _Producer()
    agent = _key("agent")
    identity = p.identity(agent, agent_id="agent-x")
    p.memory(
        MEM_A,
        1300,
        p.chain(MEM_A, [1000, 1300], identity=identity, key=agent),
        expect=(CERTIFIED, False, 0, 0, "provenance_event_type_invalid"),
    )
    _check(p.bundle(), "provenance_event_type_invalid")
    # Body weights that are not the projection's.
    p = _Producer()
    rows = p.chain(MEM_A, [1000, 1300, 1400])
    rows[1]["provenance"]["binding_schema_version"] = 1
    p.memory(MEM_A, 1400, rows, expect=(CERTIFIED, False, 1, 1, "provenance_event_type_invalid"))
    _check(p.bundle(), "provenance_event_type_invalid")


@pytest.mark.parametrize(
    ("form", "reason"),
    [
        ({"signature_form": 2, "memory_originated_at": T0 - 5}, None),
        ({"request_signature_form": 3, "signed_method": "post", "signed_path": "/aimos/x?q=1"}, None),
        (
            {
                "identity_tier": "T2",
                "request_signature_form": 4,
                "signed_method": "POST",
                "signed_path": "/aimos/x",
                "signed_claims": {"prev_chain_hash": b64u_encode(bytes(32)), "device_fp": None},
            },
            None,
        ),
        (
            {
                "identity_tier": "T3",
                "request_signature_form": 4,
                "signed_method": "POST",
                "signed_path": "/aimos/x",
                "signed_claims": {"prev_chain_hash": b64u_encode(bytes(32)), "device_fp": "test-device"},
            },
            None,
        ),
        ({"identity_tier": "T2"}, "provenance_elevated_provenance_requires_form4"),
        (
            {
                "identity_tier": "T3",
                "request_signature_form": 4,
                "signed_method": "POST",
                "signed_path": "/aimos/x",
                "signed_claims": {"prev_chain_hash": b64u_encode(bytes(32)), "device_fp": "other-device"},
            },
            "provenance_signed_device_claim_mismatch",
        ),
        (
            {
                "request_signature_form": 4,
                "signed_method": "POST",
                "signed_path": "/aimos/x",
                "signed_claims": {"prev_chain_hash": b64u_encode(bytes(31))},
            },
            "provenance_signed_chain_claim_invalid",
        ),
    ],
)
def test_produced_signature_forms(form: dict[str, Any], reason: str | None) -> None:
    p = _Producer()
    if reason is None:
        expect: tuple[str, bool, int, int, str | None] = (CERTIFIED, True, 1, 1, None)
        rows = p.chain(MEM_A, [1000, 1300], form=form)
    else:
        expect = (CERTIFIED, False, 0, 0, reason)
        try:
            rows = p.chain(MEM_A, [1000, 1300], form=form)
        except (KeyError, TypeError):  # the producer cannot even form the message
            form = {**form, "request_signature_form": 1}
            rows = p.chain(MEM_A, [1000, 1300], form=form)
    p.memory(MEM_A, 1300, rows, expect=expect)
    _check(p.bundle(), reason)


def test_produced_signature_form_is_bound() -> None:
    """A form-2 signature does not verify as form 1 (the form is not malleable)."""
    p = _Producer()
    rows = p.chain(MEM_A, [1000, 1300], form={"signature_form": 2, "memory_originated_at": T0})
    rows[0]["provenance"]["signature_form"] = 1
    p.memory(MEM_A, 1300, rows, expect=(CERTIFIED, False, 0, 0, "provenance_sig_invalid"))
    _check(p.bundle(), "provenance_sig_invalid")


def test_produced_provenance_tampering() -> None:
    cases: list[tuple[str, Any, str]] = [
        ("mutation_hash", "00" * 32, "provenance_mutation_hash_mismatch"),
        ("signature", "00" * 64, "provenance_sig_invalid"),
        ("certificate_fingerprint", "00" * 32, "provenance_signer_certificate_fingerprint_mismatch"),
        ("is_genesis", False, "provenance_genesis_shape_invalid"),
        ("body", None, "provenance_signed_body_missing"),
        ("nonce", "", "provenance_malformed_input"),
        ("signer_valid_from", T0 + 1, "provenance_signer_certificate_row_mismatch"),
    ]
    for field, value, reason in cases:
        p = _Producer()
        rows = p.chain(MEM_A, [1000, 1300])
        rows[0]["provenance"][field] = value
        p.memory(MEM_A, 1300, rows, expect=(CERTIFIED, False, 0, 0, reason))
        _check(p.bundle(), reason)
    # The projection's sigma must be its provenance node's mutation hash.
    p = _Producer()
    rows = p.chain(MEM_A, [1000, 1300, 1400])
    rows[1]["provenance_mutation_hash"] = rows[0]["provenance_mutation_hash"]
    p.memory(MEM_A, 1400, rows, expect=(CERTIFIED, False, 1, 1, "provenance_event_type_invalid"))
    _check(p.bundle(), "provenance_event_type_invalid")


def test_produced_projection_hashes() -> None:
    p = _Producer()
    rows = p.chain(MEM_A, [1000, 1300, 1400])
    rows[1]["transition_hash"] = "00" * 32
    p.memory(MEM_A, 1400, rows, expect=(CERTIFIED, False, 1, 1, "transition_signature_invalid"))
    _check(p.bundle(), "transition_signature_invalid")
    # A projection hash that links correctly but does not recompute.
    p = _Producer()
    rows = p.chain(MEM_A, [1000, 1300])
    rows[0]["projection_hash"] = "ab" * 32
    p.memory(MEM_A, 1300, rows, expect=(CERTIFIED, False, 0, 0, "projection_hash_invalid"))
    _check(p.bundle(), "projection_hash_invalid")
    # Rows in any order are walked in chain order.
    p = _Producer()
    rows = p.chain(MEM_A, [1000, 1300, 900, 1100])
    p.memory(MEM_A, 1100, list(reversed(rows)), expect=(CERTIFIED, True, 3, 3, None))
    assert _check(p.bundle(), None).ok
    # Uppercase hex inside a projection is malformed evidence for that memory only.
    p = _Producer()
    rows = p.chain(MEM_A, [1000, 1300])
    rows[0]["transition_signature"] = rows[0]["transition_signature"].upper()
    p.memory(MEM_A, 1300, rows, expect=(CERTIFIED, False, 0, 0, "portable_evidence_malformed"))
    p.memory(MEM_B, 1000, [], expect=("default_empty_chain", True, 0, 0, None))
    verdict = _check(p.bundle(), "portable_evidence_malformed")
    assert verdict.records[1]["ok"]


def test_verdict_serializes() -> None:
    p = _Producer()
    p.memory(MEM_A, 1300, p.chain(MEM_A, [1000, 1300]), expect=(CERTIFIED, True, 1, 1, None))
    verdict = _check(p.bundle(), None)
    doc = verdict.as_dict()
    assert json.loads(json.dumps(doc)) == doc
    # The records themselves are JSON-ready dicts (the CLI prints them as they are).
    assert json.loads(json.dumps(verdict.records)) == doc["records"]
    assert doc["records"][0]["sigs_verified"] == 1 and doc["verdict"] == "valid"


def test_produced_extreme_values_are_invalid_not_errors() -> None:
    # A signed body whose weight overflows when scaled.
    p = _Producer()
    rows = p.chain(MEM_A, [1000, 1300], body_extra={"old_weight": 1e308})
    p.memory(MEM_A, 1300, rows, expect=(CERTIFIED, False, 0, 0, "provenance_event_type_invalid"))
    _check(p.bundle(), "provenance_event_type_invalid")
    # A self-signed housekeeper epoch (no master needed) whose times no ISO-8601 string can name.
    p = _Producer()
    start = 2**53 - 10
    identity = p.identity(valid_from=start, valid_until=2**53 - 1, issuer="housekeeper")
    event = {
        "signed_at": start + 1,
        "company_id": COMPANY,
        "signer_agent_id": "housekeeper",
        "signer_valid_from": start,
    }
    stream = {
        "signer_agent_id": "housekeeper",
        "signer_valid_from": start,
        "identity": identity,
        "events": [event],
    }
    p.streams.append(stream)
    verdict = _check(p.bundle(), "cognitive_evidence_identity_epoch_invalid")
    assert verdict.corpus_proof_root is not None


def _rich_bundle() -> dict[str, Any]:
    """Every kind of evidence at once: baseline + chain, revoked-later signer, form 2 and form 4
    nodes, a default memory and an event stream."""
    p = _Producer()
    baseline = p.baseline(MEM_A, "07" * 32, 1300)
    revoked_later = p.identity(revoked_at=T0 + 10_000)
    rows = p.chain(MEM_A, [1300, 1500], identity=revoked_later)
    p.memory(MEM_A, 1500, rows, baseline, expect=(CERTIFIED, True, 1, 1, None))
    form4 = {
        "identity_tier": "T3",
        "request_signature_form": 4,
        "signed_method": "POST",
        "signed_path": "/aimos/x",
        "signed_claims": {"prev_chain_hash": b64u_encode(bytes(32)), "device_fp": "test-device"},
    }
    p.memory(
        MEM_B, 1100, p.chain(MEM_B, [1000, 1200, 1100], form=form4), expect=(CERTIFIED, True, 2, 2, None)
    )
    mem_c = "cccccccc-cccc-4ccc-8ccc-cccccccccccc"
    rows = p.chain(mem_c, [1000, 900], form={"signature_form": 2, "memory_originated_at": T0 - 1})
    p.memory(mem_c, 900, rows, expect=(CERTIFIED, True, 1, 1, None))
    p.memory(
        "dddddddd-dddd-4ddd-8ddd-dddddddddddd", 1000, [], expect=("default_empty_chain", True, 0, 0, None)
    )
    return p.bundle()


def test_rich_bundle_valid_and_fuzzed() -> None:
    bundle = _rich_bundle()
    assert _check(bundle, None).ok
    rng = random.Random("rich")
    outcomes = set()
    for _ in range(400):
        verdict = verify_cognitive_bundle(_mutate(bundle, rng))
        assert verdict.verdict != "indeterminate", verdict.detail
        _assert_closed(verdict)
        outcomes.add(verdict.primary_reason)
    assert len(outcomes) > 15  # the mutations reach many different checks
