"""The V1 recall-evidence / recall-corpus verifier on aimos's own fixtures (``v1_recall/``).

* drift: ``v1_recall/generate.py`` rebuilds every committed file byte for byte;
* every fixture gets exactly its expected verdict and primary reason, under the fixture master
  fingerprint (aimos) and with no fingerprint (the reference's own behaviour, trusting the bundle's
  anchors); every check of the verifier has a fixture;
* the valid fixtures' roots, hashes and signatures are recomputed by hand (hashlib, struct, PyNaCl),
  so the fixtures are not merely consistent with the crypto layer the verifier shares;
* hostile input: strict parsing, the depth limit without a RecursionError, and no exception (nor an
  internal-error verdict) whatever a field of a valid bundle is replaced with.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import importlib.util
import json
import struct
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from nacl.signing import VerifyKey

from aimos.verify import v1_recall
from aimos.verify.v1_recall import (
    R,
    RecallCorpusVerdict,
    RecallEvidenceVerdict,
    verify_recall_corpus,
    verify_recall_evidence,
    verify_v1_recall_bytes,
)

HERE = Path(__file__).resolve().parent / "v1_recall"


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_v1_recall", HERE / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being defined
    spec.loader.exec_module(module)
    return module


generator = _load_generator()
MANIFEST: dict[str, Any] = json.loads((HERE / "manifest.json").read_bytes())
FINGERPRINT: str = MANIFEST["master_fingerprint"]
ENTRIES: list[dict[str, Any]] = MANIFEST["fixtures"]


def load(name: str) -> Any:
    return json.loads((HERE / name).read_bytes())


# --- drift --------------------------------------------------------------------------------------
def test_generator_reproduces_every_committed_file() -> None:
    built = generator.build()
    committed = {p.name for p in HERE.glob("*.json")}
    assert committed == set(built), "files added or removed: run tests/vectors/v1_recall/generate.py"
    drifted = [name for name, data in built.items() if (HERE / name).read_bytes() != data]
    assert not drifted, f"regenerate (tests/vectors/v1_recall/generate.py) if intended: {drifted}"


def test_manifest_hashes_are_the_files() -> None:
    for entry in ENTRIES:
        assert hashlib.sha256((HERE / entry["file"]).read_bytes()).hexdigest() == entry["sha256"], entry[
            "file"
        ]


# --- every fixture ------------------------------------------------------------------------------
@pytest.mark.parametrize("entry", ENTRIES, ids=[e["file"] for e in ENTRIES])
def test_fixture_verdict_and_reason(entry: dict[str, Any]) -> None:
    data = (HERE / entry["file"]).read_bytes()
    pinned = verify_v1_recall_bytes(data, expected_master_fingerprint=FINGERPRINT)
    assert (pinned.verdict, pinned.primary_reason) == (
        entry["expected_verdict"],
        entry["expected_primary_reason"],
    ), pinned.detail
    unpinned = verify_v1_recall_bytes(data)
    assert (unpinned.verdict, unpinned.primary_reason) == (
        entry["reference_verdict"],
        entry["reference_primary_reason"],
    ), unpinned.detail
    expected_type = RecallCorpusVerdict if entry["kind"] == "corpus" else RecallEvidenceVerdict
    assert isinstance(pinned, expected_type)
    # the dict entry points agree with the bytes entry point
    document = json.loads(data)
    direct = (verify_recall_corpus if entry["kind"] == "corpus" else verify_recall_evidence)(
        document, expected_master_fingerprint=FINGERPRINT
    )
    assert direct == pinned


def test_the_fixtures_cover_both_kinds_and_all_verdicts() -> None:
    seen = {(e["kind"], e["expected_verdict"]) for e in ENTRIES}
    for kind in ("recall", "corpus"):
        for verdict in ("valid", "invalid", "indeterminate"):
            assert (kind, verdict) in seen
    valid_recall = [e for e in ENTRIES if e["kind"] == "recall" and e["expected_verdict"] == "valid"]
    assert any(len(load(e["file"])["memories"]) > 1 for e in valid_recall)


def test_every_reason_of_the_vocabulary_has_a_fixture() -> None:
    vocabulary = {v for k, v in vars(R).items() if k.isupper()}
    used = {str(e["expected_primary_reason"]).split(":")[0] for e in ENTRIES}
    used |= {str(e["reference_primary_reason"]).split(":")[0] for e in ENTRIES}
    # no well-formed input reaches these: a non-canonical document the depth limit does not cover
    # (other canonical-JSON failures are caught by strict parsing) and a defect of the verifier
    unreachable = {R.CANONICAL_INVALID, R.VERIFIER_INTERNAL_ERROR}
    assert vocabulary - unreachable <= used, sorted(vocabulary - unreachable - used)


def test_memory_binding_reasons_name_the_memory() -> None:
    suffixes = {
        e["expected_primary_reason"]
        for e in ENTRIES
        if str(e["expected_primary_reason"]).startswith(R.MEMORY_BINDING_INVALID)
    }
    assert suffixes == {f"{R.MEMORY_BINDING_INVALID}:0", f"{R.MEMORY_BINDING_INVALID}:1"}


def test_valid_verdict_reports_the_recomputed_hashes() -> None:
    bundle = load("valid-two-memories.json")
    verdict = verify_recall_evidence(bundle, expected_master_fingerprint=FINGERPRINT.upper())
    assert verdict.ok and verdict.signatures_verified == 4
    receipt = bundle["recall_receipt"]
    assert verdict.merkle_root == receipt["merkle_root"]
    assert verdict.command_hash == receipt["command_hash"]
    assert verdict.outer_request_hash == receipt["outer_request_hash"]
    assert (verdict.memories, verdict.recall_leaves) == (2, 2)
    assert verify_recall_evidence(load("valid-epistemic.json")).recall_leaves == 3
    wrong = verify_recall_evidence(bundle, expected_master_fingerprint="0" * 64)
    assert (wrong.verdict, wrong.primary_reason) == ("invalid", R.MASTER_MISMATCH)


def test_corpus_verdict_lists_its_members() -> None:
    verdict = verify_recall_corpus(load("corpus-invalid-beats-indeterminate.json"))
    assert [(m.ordinal, m.verdict, m.primary_reason) for m in verdict.members] == [
        (0, "indeterminate", R.MANDATORY_EVIDENCE_MISSING),
        (1, "invalid", R.REQUEST_SIGNATURE_INVALID),
    ]
    assert (verdict.intended_n, verdict.observed_n) == (2, 2)
    as_json = verdict.as_dict()
    assert as_json["schema"] == v1_recall.CORPUS_SCHEMA and len(as_json["members"]) == 2


# --- recomputed by hand -------------------------------------------------------------------------
def sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def plain_canonical(value: Any) -> bytes:
    """Canonical JSON for these fixtures (ASCII keys, and floats that print alike in JS and Python)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def rfc6962_root(entries: list[Any]) -> bytes:
    leaves = [sha(b"\x00" + plain_canonical(e)) for e in entries]
    if not leaves:
        return sha(b"")

    def tree(nodes: list[bytes]) -> bytes:
        if len(nodes) == 1:
            return nodes[0]
        split = 1
        while split * 2 < len(nodes):
            split *= 2
        return sha(b"\x01" + tree(nodes[:split]) + tree(nodes[split:]))

    return tree(leaves)


def b64u(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def raw_key(spki_b64u: str) -> VerifyKey:
    der = b64u(spki_b64u)
    assert der[:12] == bytes.fromhex("302a300506032b6570032100") and len(der) == 44
    return VerifyKey(der[12:])


@pytest.mark.parametrize(
    "name", ["valid-one-memory.json", "valid-three-memories.json", "valid-epistemic.json"]
)
def test_valid_bundle_recomputed_by_hand(name: str) -> None:
    bundle = load(name)
    receipt = bundle["recall_receipt"]
    entries = receipt.get("merkle_entries", receipt["evidence"])
    assert rfc6962_root(entries).hex() == receipt["merkle_root"]
    request = bundle["request"]
    assert sha(plain_canonical(request["body"])).hex() == receipt["outer_request_hash"]
    master = bundle["trust_anchors"]["master"]
    assert sha(b64u(master["public_key_b64u"])).hex() == master["fingerprint"] == FINGERPRINT
    # the request certificate under the master, the request signature under the certificate
    cert = json.loads(b64u(request["certificate"]))
    raw_key(master["public_key_b64u"]).verify(plain_canonical(cert["body"]), b64u(cert["sig"]))
    message = b"\n".join(
        [plain_canonical(request["body"]), b"POST", b"/aimos/recall", request["nonce"].encode(),
         str(request["ts_signed"]).encode()]
    )  # fmt: skip
    raw_key(cert["body"]["pubkey"]).verify(message, b64u(request["signature"]))
    # the housekeeper's event: content, event-link mutation hash, signature
    event = receipt["event_receipt"]
    content = sha(plain_canonical(event["signed_body"]))
    assert content.hex() == event["content_hash"]
    link = sha(
        b"AIMOS-EVENT-LINK-v1\x00" + bytes.fromhex(event["prev_mutation_hash"]) + content
        + event["nonce"].encode() + str(event["ts_signed"]).encode()
    )  # fmt: skip
    assert link.hex() == event["mutation_hash"]
    assert sha(event["signer_certificate"].encode()).hex() == event["cert_fingerprint"]
    housekeeper = json.loads(b64u(event["signer_certificate"]))["body"]["pubkey"]
    payload = plain_canonical(event["signed_body"]) + b"\n" + event["nonce"].encode() + b"\n"
    raw_key(housekeeper).verify(payload + str(event["ts_signed"]).encode(), b64u(event["signature"]))


def test_corpus_root_recomputed_by_hand() -> None:
    corpus = load("corpus-valid.json")
    summaries = []
    for ordinal, member in enumerate(corpus["members"]):
        assert member["ordinal"] == ordinal
        assert sha(plain_canonical(member["bundle"])).hex() == member["bundle_sha256"]
        summaries.append({k: member[k] for k in ("ordinal", "bundle_id", "bundle_sha256")})
    root = sha(
        b"aimos.mutmem-recall-corpus/v1\x00"
        + struct.pack(">q", corpus["intended_n"])
        + rfc6962_root(summaries)
    )
    assert root.hex() == corpus["corpus_root"]
    verdict = verify_recall_corpus(corpus)
    assert verdict.corpus_root == root.hex()


# --- hostile input ------------------------------------------------------------------------------
def test_strict_parsing_reasons() -> None:
    cases = {
        b"{nope": "bundle_json_malformed",
        b"\xff\xfe": "bundle_json_malformed",
        b'{"a": 1, "a": 2}': "json_duplicate_key",
        b'{"a": NaN}': "canonical_json_non_finite",
        b"[" * 100_000 + b"]" * 100_000: "canonical_json_depth_limit",
        b'{"a":' + b"[" * 33 + b"]" * 33 + b"}": "canonical_json_depth_limit",
    }
    for data, reason in cases.items():
        verdict = verify_v1_recall_bytes(data)
        assert (verdict.verdict, verdict.primary_reason) == ("invalid", reason), data[:20]


def test_depth_limit_counts_from_the_root() -> None:
    at_limit = load("valid-two-memories.json")
    # request (depth 1) . body (2) . projection (3): n nested lists put the innermost at depth n + 2
    at_limit["request"]["body"]["projection"] = generator.nested_lists(30)
    verdict = verify_recall_evidence(at_limit)
    assert verdict.primary_reason == R.REQUEST_SIGNATURE_INVALID  # canonicalized, then the changed body
    too_deep = load("valid-two-memories.json")
    too_deep["request"]["body"]["projection"] = generator.nested_lists(31)
    assert verify_recall_evidence(too_deep).primary_reason == R.CANONICAL_DEPTH_LIMIT
    very_deep: Any = []
    for _ in range(50_000):
        very_deep = [very_deep]
    assert verify_recall_evidence({"deep": very_deep}).primary_reason == R.CANONICAL_DEPTH_LIMIT
    corpus = load("corpus-valid.json")
    corpus["members"][0]["bundle"]["memories"][0]["source"] = generator.nested_lists(40)
    assert verify_recall_corpus(corpus).primary_reason == R.CANONICAL_DEPTH_LIMIT


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield (*prefix, k)
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield (*prefix, i)
            yield from _paths(v, (*prefix, i))


REPLACEMENTS: list[Any] = [None, True, 0, 1.5, "", "xyz", [], {"": None}]


@pytest.mark.parametrize("name", ["valid-two-memories.json", "valid-epistemic.json", "corpus-valid.json"])
def test_any_field_replaced_gives_a_closed_verdict(name: str) -> None:
    """Replacing any value (or dropping any field) never raises and never hits an internal error;
    the reason is from the vocabulary, and ``valid`` survives only where no check reads the field."""
    original = load(name)
    vocabulary = {v for k, v in vars(R).items() if k.isupper()}
    verify = verify_recall_corpus if name.startswith("corpus") else verify_recall_evidence
    still_valid: set[str] = set()
    # inside a corpus member any change breaks its bundle_sha256; the recall cases cover the bundle
    paths = [p for p in _paths(original) if len(p) <= 3] if name.startswith("corpus") else _paths(original)
    for path in paths:
        for replacement in [*REPLACEMENTS, "__drop__"]:
            document = copy.deepcopy(original)
            parent = document
            for step in path[:-1]:
                parent = parent[step]
            if replacement == "__drop__":
                if not isinstance(parent, dict):
                    continue
                del parent[path[-1]]
            elif json.dumps(parent[path[-1]]) == json.dumps(replacement):
                continue  # not a change
            else:
                parent[path[-1]] = replacement
            verdict = verify(document, expected_master_fingerprint=FINGERPRINT)
            assert verdict.primary_reason != R.VERIFIER_INTERNAL_ERROR, (path, replacement, verdict.detail)
            if verdict.primary_reason is None:
                assert verdict.verdict == "valid"
                still_valid.add(str(path[-1]))
            else:
                assert verdict.primary_reason.split(":")[0] in vocabulary, (path, verdict)
    # the fields no reference check reads (the verifier binds everything else); a recall bundle's
    # bundle_id is bound only by a corpus that holds it
    unread = {"identity_tier", "ledger_seq", "request_receipt_id", "bundle_id"}
    assert still_valid <= unread | {str(i) for i in range(3)}, sorted(still_valid - unread)
