"""Generate aimos's own crypto vectors: commitments the reference files do not carry.

The HOM-AIMOS vector files exercise most of the kernel, but not: the live-row content hash, the
event genesis predecessor, the epistemic chain, the cognitive baseline, the revocation hashes, the
housekeeper system-principal hash, the optional branches of some commitments (provenance form 2,
request claims, occurrence v3 with every flag 0), RFC 6962 roots and audit paths for small trees,
and canonical JSON edge cases; nor aimos's own signed records (the master's redactions, v1 to v3
with the seal row content hashes a v3 record names) and the hub's byte layouts (the master-signed
home, cut and handover rows, a record's plaintext and what its device's housekeeper signs, the
hub's keyed names, a content key generation's record). This script computes them from fixed
inputs with the code that writes them into ``aimos/aimos-vectors.json`` beside it. (The hub's
box, the ciphertext layout, is not pinned here.)

    python tests/vectors/generate_aimos_vectors.py          # rewrite the committed file
    python tests/vectors/generate_aimos_vectors.py --check  # exit 1 if it has drifted

``test_aimos_vectors.py`` fails when ``build()`` and the committed file differ (as python-tuf
does for its generated metadata), and recomputes several entries by hand with hashlib.

Keys are deterministic *test* keys: seed = SHA-256("aimos-test-vectors/v1:" + label). They are
public fixture material and sign nothing but these vectors.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from aimos import vocabulary
from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json
from aimos.crypto.certs import issue_certificate
from aimos.crypto.ed25519 import KeyPair
from aimos.crypto.encoding import b64u_encode, iso_ms
from aimos.crypto.merkle import inclusion_path, leaf_hash, merkle_root
from aimos.crypto.messages import payload_message
from aimos.errors import CanonicalJSONError
from aimos.hub import box, generations, records
from aimos.identity import devices
from aimos.memory import redaction
from aimos.store.seals import TableShape
from aimos.verify.kit.redaction import REDACTED_TABLES, REMOVED_FORMS, localized

SCHEMA = "aimos.crypto-vectors/v1"
OUTPUT = Path(__file__).resolve().parent / "aimos" / "aimos-vectors.json"
KEY_SEED_PREFIX = "aimos-test-vectors/v1:"

COMPANY = "personal"
T0 = 1786387794  # 2026-08-10T18:49:54Z
MEMORY_ID = "5a1e0c3d-8f2b-4c6a-9e71-0d4b3a2c1f00"
EVENT_ID = "7b2f1d4e-6a3c-4e8b-a1d0-9c8b7a6f5e41"
OCCURRENCE_EVENT_ID = "0c9d8e7f-1a2b-4c3d-8e5f-60718293a4b5"
NONCE = b64u_encode(bytes(range(16)))  # AAECAwQFBgcICQoLDA0ODw
BRAIN_ID = "0b7c2d1e-3f4a-4b5c-8d6e-7f8091a2b3c4"
DEVICE_A, DEVICE_B, DEVICE_C = "aimos-test-device-a", "aimos-test-device-b", "aimos-test-device-c"
HOME_ID = "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f"
PREV_HOME_ID = "9e8d7c6b-5a49-4837-a625-14f3e2d1c0b9"
CUT_ID = "6f5e4d3c-2b1a-4098-b7c6-d5e4f3a2b1c0"
TEST_KEYS = ("master", "agent", "housekeeper")


def vector_seed(label: str) -> bytes:
    """32 bytes of test key material: SHA-256(KEY_SEED_PREFIX + label)."""
    return hashlib.sha256((KEY_SEED_PREFIX + label).encode("utf-8")).digest()


def vector_key(label: str) -> KeyPair:
    return KeyPair(vector_seed(label))


def _fixed_hash(label: str) -> bytes:
    """A stand-in 32-byte hash for an input this vector does not derive (documented by label)."""
    return hashlib.sha256(label.encode("utf-8")).digest()


def nested_lists(depth: int, innermost: Any) -> Any:
    value = innermost
    for _ in range(depth):
        value = [value]
    return value


# --- canonical JSON ------------------------------------------------------------------------
CANONICAL_CASES: list[tuple[str, Any]] = [
    ("integral_float", 1.0),
    ("exponent_at_1e21", 1e21),
    ("plain_below_1e21", 1e20),
    ("float_beyond_2_53_plain", 123456789012345680000.0),
    ("exponent_below_1e-6", 1e-7),
    ("plain_at_1e-6", 1e-6),
    ("negative_zero", -0.0),
    ("shortest_round_trip", 0.1 + 0.2),
    ("min_subnormal", 5e-324),
    ("max_double", 1.7976931348623157e308),
    ("max_safe_integer", 2**53 - 1),
    ("min_safe_integer", -(2**53 - 1)),
    ("literals", [True, False, None]),
    ("empty_containers", {"a": [], "b": {}}),
    (
        "key_order_utf16_code_units",
        {"\U0001f600": 1, "\ue000": 2, "\uffff": 3, "a": 4, "B": 5, "": 6, "aa": 7, "\u00e9": 8},
    ),
    ("key_order_nested", {"b": {"d": [3, {"z": 1, "y": 2}], "c": None}, "a": True}),
    ("string_escapes", '\b\t\n\f\r"\\\x00\x01\x1f\x7f'),
    ("string_raw_non_ascii", "/\u00e9\u2028\u2029\U0001f600"),
]
CANONICAL_DEPTH_CASES: list[tuple[str, int, Any]] = [
    ("scalar_at_depth_32", 32, 0),
    ("empty_list_at_depth_32", 32, []),
]
CANONICAL_REFUSALS: list[tuple[str, Any]] = [
    ("unsafe_integer", 2**53),
    ("unsafe_negative_integer", -(2**53)),
    ("lone_surrogate", "\ud800"),
]
CANONICAL_DEPTH_REFUSALS: list[tuple[str, int, Any]] = [
    ("scalar_at_depth_33", 33, 0),
    ("empty_list_at_depth_33", 33, []),
]


def _canonical_entry(name: str, value: Any) -> dict[str, Any]:
    data = canonical_json(value)
    return {
        "name": name,
        "input": value,
        "canonical": data.decode("utf-8"),
        "canonical_utf8_hex": data.hex(),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def _refusal_reason(value: Any) -> str:
    try:
        canonical_json(value)
    except CanonicalJSONError as exc:
        assert exc.reason is not None
        return exc.reason
    raise AssertionError("expected canonical_json to refuse the value")


def build_canonical() -> dict[str, Any]:
    accepted = [_canonical_entry(name, value) for name, value in CANONICAL_CASES]
    for name, depth, innermost in CANONICAL_DEPTH_CASES:
        entry = _canonical_entry(name, nested_lists(depth, innermost))
        del entry["input"]
        entry["nested_lists"] = {"lists": depth, "innermost": innermost}
        accepted.append(entry)
    refused: list[dict[str, Any]] = [
        {"name": name, "input": value, "reason": _refusal_reason(value)} for name, value in CANONICAL_REFUSALS
    ]
    refused += [
        {
            "name": name,
            "nested_lists": {"lists": depth, "innermost": innermost},
            "reason": _refusal_reason(nested_lists(depth, innermost)),
        }
        for name, depth, innermost in CANONICAL_DEPTH_REFUSALS
    ]
    return {"accepted": accepted, "refused": refused}


# --- commitments ---------------------------------------------------------------------------
LIVE_ROWS: list[tuple[str, dict[str, Any]]] = [
    (
        "all_strings",
        {
            "key": "coffee",
            "value": "Ana takes her coffee black.",
            "scope": "personal",
            "memory_type": "preference",
            "clearance_level": "3",
            "data_class": "internal",
            "source": "cli",
        },
    ),
    (
        "null_integer_and_missing",
        {
            "key": "café ☕",
            "value": "multi-byte \U0001f600 text",
            "scope": "personal",
            "memory_type": "fact",
            "clearance_level": 10,
            "data_class": None,
        },
    ),
]


def build_live_content_hash() -> list[dict[str, Any]]:
    out = []
    for name, row in LIVE_ROWS:
        projected = {f: ("" if row.get(f) is None else str(row.get(f))) for f in commitments.LIVE_ROW_FIELDS}
        out.append(
            {
                "name": name,
                "row": row,
                "canonical_projection": canonical_json(projected).decode("utf-8"),
                "hash": commitments.live_content_hash(row).hex(),
            }
        )
    return out


def build_event_genesis() -> list[dict[str, Any]]:
    cases = [(COMPANY, "housekeeper", T0), (COMPANY, "cli", T0 + 86_400), ("hom", "codex", 0)]
    return [
        {
            "company": company,
            "signer_agent_id": signer,
            "signer_valid_from": valid_from,
            "signer_valid_from_iso": iso_ms(valid_from),
            "hash": commitments.event_genesis_predecessor(company, signer, valid_from).hex(),
        }
        for company, signer, valid_from in cases
    ]


def build_epistemic() -> list[dict[str, Any]]:
    live = commitments.live_content_hash(LIVE_ROWS[0][1])
    steps = [
        ("unverified", 500, _fixed_hash("aimos-vector:authority-event-1")),
        ("suspected_poisoning", 1000, _fixed_hash("aimos-vector:authority-event-2")),
        ("verified", 0, _fixed_hash("aimos-vector:authority-event-3")),
    ]
    out: list[dict[str, Any]] = []
    prev: bytes | None = None
    for label, confidence, authority in steps:
        h = commitments.epistemic_classification_hash(MEMORY_ID, label, confidence, live, authority, prev)
        out.append(
            {
                "memory_id": MEMORY_ID,
                "label": label,
                "confidence_milli": confidence,
                "live_content_hash": live.hex(),
                "authority_event_mutation_hash": authority.hex(),
                "prev": None if prev is None else prev.hex(),
                "hash": h.hex(),
            }
        )
        prev = h
    return out


def build_baseline() -> list[dict[str, Any]]:
    live = commitments.live_content_hash(LIVE_ROWS[0][1])
    event_mutation = _fixed_hash("aimos-vector:baseline-event")
    cert_fp = _fixed_hash("aimos-vector:housekeeper-certificate")
    out = []
    for weight, milli in ((1.0, 1000), (1.2, 1200), (0.1, 100)):
        inputs: dict[str, Any] = {
            "company": COMPANY,
            "memory_id": MEMORY_ID,
            "event_id": EVENT_ID,
            "event_mutation_hash": event_mutation.hex(),
            "live_content_hash": live.hex(),
            "observed_weight": weight,
            "weight_milli": milli,
            "observed_ts": T0 + 60,
            "signer_valid_from": T0,
            "cert_fingerprint": cert_fp.hex(),
        }
        h = commitments.cognitive_baseline_hash(
            COMPANY, MEMORY_ID, EVENT_ID, event_mutation, live, weight, milli, T0 + 60, T0, cert_fp
        )
        out.append({**inputs, "hash": h.hex()})
    return out


def build_revocation() -> dict[str, Any]:
    master = vector_key("master")
    agent = vector_key("agent")
    cert = issue_certificate(
        master,
        agent_id="codex",
        pubkey=agent.public_b64u,
        device_fp="aimos-test-device",
        valid_from=T0,
        valid_until=T0 + 30 * 86_400,
        issued_at=T0,
    )
    prior = commitments.revocation_prior_identity_hash("codex", T0, cert.text)
    revoked_at = T0 + 3_600
    # An illustrative body: the hashes below do not depend on which fields it carries.
    body = {
        "schema": vocabulary.AGENT_REVOCATION_SCHEMA,
        "event_type": "REVOKE_AGENT_IDENTITY",
        "company_id": COMPANY,
        "agent_id": "codex",
        "agent_valid_from": iso_ms(T0),
        "target_cert_hash": hashlib.sha256(cert.text.encode("ascii")).hexdigest(),
        "revoked_at": revoked_at,
        "ts_signed": revoked_at,
    }
    content = commitments.provenance_content_hash(body)
    signature = master.sign(payload_message(body, NONCE, revoked_at))
    return {
        "master_public_key_b64u": master.public_b64u,
        "master_fingerprint": master.fingerprint,
        "agent_id": "codex",
        "agent_valid_from": T0,
        "certificate": cert.text,
        "prior_identity_hash": prior.hex(),
        "body": body,
        "content_hash": content.hex(),
        "nonce": NONCE,
        "ts_signed": revoked_at,
        "signature_hex": signature.hex(),
        "mutation_hash": commitments.agent_revocation_mutation_hash(prior, content, signature).hex(),
    }


def build_system_principal() -> list[dict[str, Any]]:
    return [
        {
            "company_id": company,
            "valid_from": valid_from,
            "hash": commitments.housekeeper_system_principal_hash(company, valid_from).hex(),
        }
        for company, valid_from in ((COMPANY, T0), ("hom", 1786387794), ("hom", 0))
    ]


def build_provenance() -> list[dict[str, Any]]:
    """Genesis (no prev), chained, and form 2 (originated_at appended)."""
    body = {"event_type": "SAVE", "company_id": COMPANY, "memory_id": MEMORY_ID, "ts_signed": T0}
    content = commitments.provenance_content_hash(body)
    genesis = commitments.provenance_mutation_hash(content, None, NONCE, T0)
    chained = commitments.provenance_mutation_hash(content, genesis, NONCE, T0 + 1)
    form2 = commitments.provenance_mutation_hash(content, genesis, NONCE, T0 + 2, T0 - 86_400)
    common = {"body": body, "content_hash": content.hex(), "nonce": NONCE}
    return [
        {
            **common,
            "name": "genesis",
            "prev": None,
            "ts": T0,
            "originated_at": None,
            "mutation_hash": genesis.hex(),
        },
        {
            **common,
            "name": "chained",
            "prev": genesis.hex(),
            "ts": T0 + 1,
            "originated_at": None,
            "mutation_hash": chained.hex(),
        },
        {
            **common,
            "name": "form2_originated_at",
            "prev": genesis.hex(),
            "ts": T0 + 2,
            "originated_at": T0 - 86_400,
            "mutation_hash": form2.hex(),
        },
    ]


def build_request_receipt() -> dict[str, Any]:
    """The branches the P2 vector does not take: no prev, and signed claims present."""
    agent = vector_key("agent")
    request_body = {"query": "coffee", "limit": 3}
    claims = {"prev_chain_hash": "AAAA", "device_fp": "aimos-test-device"}
    request_hash = hashlib.sha256(canonical_json(request_body)).digest()
    claims_hash = hashlib.sha256(canonical_json(claims)).digest()
    signature = agent.sign(b"aimos-vector:request-signature")
    h = commitments.request_receipt_mutation_hash(
        None, request_hash, claims_hash, signature, "POST", "/aimos/recall", NONCE, T0
    )
    return {
        "prev": None,
        "request_body": request_body,
        "request_hash": request_hash.hex(),
        "signed_claims": claims,
        "claims_hash": claims_hash.hex(),
        "signature_hex": signature.hex(),
        "method": "POST",
        "path": "/aimos/recall",
        "nonce": NONCE,
        "ts": T0,
        "mutation_hash": h.hex(),
    }


def build_occurrence() -> dict[str, Any]:
    """Occurrence v3 with every optional part absent (flags 0, empty method and path)."""
    fields: dict[str, Any] = {
        "company_id": COMPANY,
        "occurrence_event_id": OCCURRENCE_EVENT_ID,
        "memory_id": MEMORY_ID,
        "event_type": "INTERNAL_REWEIGHT",
        "live_hash": commitments.live_content_hash(LIVE_ROWS[0][1]).hex(),
        "predecessor": None,
        "agent_id": "housekeeper",
        "signer_valid_from_ms": T0 * 1000,
        "cert_fingerprint": _fixed_hash("aimos-vector:housekeeper-certificate").hex(),
        "identity_tier": "T1",
        "sig_form_version": 3,
        "nonce_hex": bytes(range(32)).hex(),
        "ts_signed": T0 + 5,
        "signed_method": "",
        "signed_path": "",
        "request_body_hash": _fixed_hash("aimos-vector:internal-request").hex(),
        "request_receipt_mutation_hash": None,
        "authorization_event_id": None,
    }
    commitment = commitments.occurrence_v3_commitment(
        company_id=fields["company_id"],
        occurrence_event_id=fields["occurrence_event_id"],
        memory_id=fields["memory_id"],
        event_type=fields["event_type"],
        live_hash=bytes.fromhex(fields["live_hash"]),
        predecessor=None,
        agent_id=fields["agent_id"],
        signer_valid_from_ms=fields["signer_valid_from_ms"],
        cert_fingerprint=bytes.fromhex(fields["cert_fingerprint"]),
        identity_tier=fields["identity_tier"],
        sig_form_version=3,
        nonce=bytes.fromhex(fields["nonce_hex"]),
        ts_signed=fields["ts_signed"],
        signed_method="",
        signed_path="",
        request_body_hash=bytes.fromhex(fields["request_body_hash"]),
        request_receipt_mutation_hash=None,
        authorization_event_id=None,
    )
    return {**fields, "commitment": commitment.hex()}


def merkle_entries(n: int) -> list[dict[str, Any]]:
    return [{"index": k, "value": f"entry-{k}"} for k in range(n)]


def build_merkle() -> list[dict[str, Any]]:
    out = []
    for n in range(10):
        entries = merkle_entries(n)
        out.append(
            {
                "n": n,
                "entries": entries,
                "leaf_hashes": [leaf_hash(e).hex() for e in entries],
                "root": merkle_root(entries).hex(),
                "inclusion_paths": [[p.hex() for p in inclusion_path(entries, i)] for i in range(n)],
            }
        )
    return out


def build_installer_documents() -> dict[str, Any]:
    """The guide corpus root (RFC 6962 over {path, sha256, bytes} in path order) and the hashes of
    an onboarding plan and receipt (SHA-256 of canonical JSON, the receipt without its own hash)."""
    files = [
        {"path": f"guide-{k}.md", "sha256": hashlib.sha256(f"guide {k}".encode()).hexdigest(), "bytes": 7}
        for k in (2, 0, 1)
    ]
    plan = {
        "schema": vocabulary.ONBOARDING_PLAN_SCHEMA,
        "brain": {"name": "personal", "company_id": "personal"},
        "agent": {"agent_id": "cli", "clearance": 10, "data_class": "confidential", "write_allowed": True},
        "guides": {"count": 3, "corpus_root": commitments.guide_corpus_root(files).hex()},
    }
    receipt = {
        "schema": vocabulary.ONBOARDING_RECEIPT_SCHEMA,
        "status": "SUCCESS",
        "plan_sha256": commitments.document_sha256(plan).hex(),
        "master_fingerprint": vector_key("master").fingerprint,
    }
    return {
        "guide_corpus": {"files": files, "corpus_root": commitments.guide_corpus_root(files).hex()},
        "onboarding_plan": {"plan": plan, "plan_sha256": commitments.document_sha256(plan).hex()},
        "onboarding_receipt": {
            "receipt": receipt,
            "receipt_sha256": commitments.document_sha256(receipt, without="receipt_sha256").hex(),
        },
    }


def build_redaction(schema: str, removed: list[str] | None = None) -> dict[str, Any]:
    """The master's redaction record of one memory (aimos.memory-redaction/v1: the text removed;
    v2: the fields ``removed`` too): its canonical text, the message the master signs (domain +
    text), its id (SHA-256 of the text)."""
    from aimos.verify.kit.redaction import record_id, record_message

    master = vector_key("master")
    record = {
        **({} if removed is None else {"removed": removed}),
        "schema": schema,
        "brain_id": BRAIN_ID,
        "company_id": COMPANY,
        "memory_id": MEMORY_ID,
        "live_content_hash": commitments.live_content_hash(LIVE_ROWS[0][1]).hex(),
        "save_provenance_id": EVENT_ID,
        "save_content_hash": _fixed_hash("aimos-vector:save-content").hex(),
        "save_mutation_hash": _fixed_hash("aimos-vector:save-mutation").hex(),
        "redacted_body_sha256": _fixed_hash("aimos-vector:redacted-body").hex(),
        "rows": [
            {
                "table": table,
                "rowid": rowid,
                "before": _fixed_hash(f"aimos-vector:{table}-before").hex(),
                "after": _fixed_hash(f"aimos-vector:{table}-after").hex(),
            }
            for table, rowid in (("memories", 12), ("memory_provenance", 40))
        ],
        "reason": "it held a password (é, 東京)",
        "redacted_at": T0 + 7_200,
        "master_fingerprint": master.fingerprint,
    }
    text = canonical_json(record).decode("utf-8")
    return {
        "record": record,
        "record_text": text,
        "message_hex": record_message(text).hex(),
        "redaction_id": record_id(text),
        "master_public_key_b64u": master.public_b64u,
        "signature_b64u": b64u_encode(master.sign(record_message(text))),
    }


# The two rows a redaction changes, in an illustrative shape (the real tables have more columns:
# the hashes depend on the columns, not on which ones), as TableShape.select reads them: the rowid,
# then each cell, TEXT as its UTF-8 bytes.
REDACTION_SHAPES = {
    "memories": TableShape(
        "memories",
        (
            ("memory_id", True),
            ("company_id", True),
            ("key", True),
            ("value", True),
            ("source", True),
            ("clearance_level", False),
            ("created_at", False),
        ),
    ),
    "memory_provenance": TableShape(
        "memory_provenance",
        (
            ("provenance_id", True),
            ("memory_id", True),
            ("body_json", True),
            ("content_hash", True),
            ("ts_signed", False),
            ("body_deflated", False),
        ),
    ),
}


def build_redaction_v3() -> dict[str, Any]:
    """A v3 record (aimos.memory-redaction/v3), built as the writer builds it
    (memory/redaction.py: changed_cells, row_change, portable_body): the rows' content hashes
    (seal_row_content_hash) before and after, the portable part the master signs (its canonical
    text, the message, the signature, its id) and the record one device stores (its rows added)."""
    from aimos.verify.kit.redaction import record_id, record_message  # what memory/redaction.py uses

    master = vector_key("master")
    live = LIVE_ROWS[0][1]
    save_body = {
        "event_type": "SAVE",
        "company_id": COMPANY,
        "memory_id": MEMORY_ID,
        "key": live["key"],
        "value": live["value"],
        "source": live["source"],
        "ts_signed": T0,
    }
    save = {
        "body_json": canonical_json(save_body).decode("utf-8"),
        "content_hash": commitments.provenance_content_hash(save_body).hex(),
        "mutation_hash": _fixed_hash("aimos-vector:save-mutation").hex(),
    }
    memory = {
        "memory_id": MEMORY_ID,
        "company_id": COMPANY,
        "live_content_hash": commitments.live_content_hash(live).hex(),
        "save_provenance_id": EVENT_ID,
        "save_mutation_hash": save["mutation_hash"],
    }
    cells: dict[str, list[Any]] = {
        "memories": [MEMORY_ID, COMPANY, live["key"], live["value"], live["source"], 3, T0],
        "memory_provenance": [EVENT_ID, MEMORY_ID, save["body_json"], save["content_hash"], T0, None],
    }
    rowids = {"memories": 12, "memory_provenance": 40}
    removed = REMOVED_FORMS[0]
    changed, body_text = redaction.changed_cells(save["body_json"], removed)
    swaps, contents = [], []
    for table in REDACTED_TABLES:
        row = (rowids[table], *(c.encode("utf-8") if isinstance(c, str) else c for c in cells[table]))
        swap, content = redaction.row_change(REDACTION_SHAPES[table], row, changed[table])
        swaps.append(swap)
        contents.append(content)
    portable = redaction.portable_body(
        memory,
        save,
        removed,
        contents,
        body_text,
        brain_id=BRAIN_ID,
        reason="it held a password (é, 東京)",
        now=T0 + 7_200,
        master_fingerprint=master.fingerprint,
    )
    text = canonical_json(portable).decode("utf-8")
    message = record_message(text)
    return {
        "shapes": {t: [list(c) for c in shape.columns] for t, shape in REDACTION_SHAPES.items()},
        "rows_before": {t: {"rowid": rowids[t], "cells": cells[t]} for t in REDACTED_TABLES},
        "save_body": save_body,
        "redacted_body_text": body_text,
        "portable": portable,
        "portable_text": text,
        "message_hex": message.hex(),
        "redaction_id": record_id(text),
        "master_public_key_b64u": master.public_b64u,
        "signature_b64u": b64u_encode(master.sign(message)),
        "stored_record_text": localized(portable, swaps),
    }


def _signed_row(signer: str, body: dict[str, Any]) -> dict[str, Any]:
    """A signed hub row (identity/devices.py: sign_row, payload message form) under the fixed nonce."""
    key = vector_key(signer)
    ts = int(body["ts_signed"])
    text, signature = devices.sign_row(key, body, NONCE, ts)
    return {
        "signer": signer,
        "signer_public_key_b64u": key.public_b64u,
        "body": body,
        "canonical": text,
        "nonce": NONCE,
        "ts_signed": ts,
        "message_hex": payload_message(body, NONCE, ts).hex(),
        "signature_b64u": signature,
    }


def build_hub_rows() -> dict[str, Any]:
    """The master-signed hub rows (aimos.hub-home/v1, aimos.hub-cut/v1, aimos.hub-handover/v1)
    and the handover the old home's housekeeper signs, their bodies built by identity/devices.py."""
    fp = vector_key("master").fingerprint
    return {
        "home": _signed_row(
            "master", devices.home_body(BRAIN_ID, HOME_ID, DEVICE_B, PREV_HOME_ID, fp, T0 + 600)
        ),
        "cut": _signed_row(
            "master", devices.cut_body(BRAIN_ID, CUT_ID, DEVICE_A, 41, "home_moved", fp, T0 + 660)
        ),
        "handover_master": _signed_row(
            "master", devices.handover_body(BRAIN_ID, HOME_ID, DEVICE_A, T0 + 660, master_fingerprint=fp)
        ),
        "handover_housekeeper": _signed_row(
            "housekeeper", devices.handover_body(BRAIN_ID, HOME_ID, DEVICE_A, T0 + 720, signer_valid_from=T0)
        ),
    }


def build_hub_record() -> dict[str, Any]:
    """One record's plaintext (hub/records.py encode: a bytes cell travels as {"b64": ...}), the
    message its device's housekeeper signs, and the hub's keyed names (hub/box.py) under a fixed
    content key. ``record_link`` hashes a stand-in for a box: the box's own layout is not pinned."""
    content_key = vector_seed("hub-content-key")
    housekeeper = vector_key("housekeeper")
    record = records.Record(
        device=DEVICE_A,
        n=1,
        prev=box.GENESIS_LINK,
        table="memory_provenance",
        row={
            "provenance_id": EVENT_ID,
            "memory_id": MEMORY_ID,
            "body_json": '{"value":"café ☕"}',
            "body_deflated": bytes(range(250, 256)) + b"\x00",
            "ts_signed": T0,
            "prev_mutation_hash": None,
        },
        signer=T0,
        seal=3,
    )
    plaintext = records.encode(record)
    message = records.signed_message(plaintext)
    standin_box = b"aimos-vector:a sealed record"
    return {
        "content_key_hex": content_key.hex(),
        "housekeeper_public_key_b64u": housekeeper.public_b64u,
        "record": json.loads(plaintext),
        "plaintext": plaintext.decode("utf-8"),
        "plaintext_hex": plaintext.hex(),
        "message_hex": message.hex(),
        "signature_hex": housekeeper.sign(message).hex(),
        "key_text": record.key_text(),
        "row_name_hex": box.row_name(content_key, record.table, record.key_text()).hex(),
        "device_name": box.device_name(content_key, DEVICE_A),
        "genesis_link": box.GENESIS_LINK,
        "standin_box_hex": standin_box.hex(),
        "record_link": box.record_link(standin_box),
    }


def build_hub_key_generation() -> dict[str, Any]:
    """The master's record of content key generation 2 (aimos.hub-key-generation/v1, built by
    hub/generations.py generation_row): its canonical text, the message the master signs and the
    signature (the key's wrap under the master, a box, is left out)."""
    master = vector_key("master")
    key = vector_seed("hub-generation-2")
    left_out = [box.device_name(vector_seed("hub-content-key"), DEVICE_C)]
    row = generations.generation_row(master, BRAIN_ID, 2, key, left_out, T0 + 900)
    assert row.signed_body is not None and row.signature is not None
    return {
        "master_public_key_b64u": master.public_b64u,
        "generation": row.generation,
        "key_hex": key.hex(),
        "key_check": box.key_check(key),
        "body": json.loads(row.signed_body),
        "body_text": row.signed_body,
        "message_hex": generations.signed_message(row.signed_body).hex(),
        "signature_hex": row.signature.hex(),
    }


def build() -> dict[str, Any]:
    """Every aimos vector, computed from the fixed inputs above."""
    return {
        "schema": SCHEMA,
        "generator": "tests/vectors/generate_aimos_vectors.py",
        "note": "Generated from fixed inputs; do not edit by hand. Test keys: seed = "
        f"SHA-256('{KEY_SEED_PREFIX}' + label).",
        "test_keys": {
            label: {
                "public_key_b64u": vector_key(label).public_b64u,
                "fingerprint": vector_key(label).fingerprint,
            }
            for label in TEST_KEYS
        },
        "canonical_json": build_canonical(),
        "live_content_hash": build_live_content_hash(),
        "event_genesis_predecessor": build_event_genesis(),
        "epistemic_classification_hash": build_epistemic(),
        "cognitive_baseline_hash": build_baseline(),
        "agent_revocation": build_revocation(),
        "housekeeper_system_principal_hash": build_system_principal(),
        "provenance_mutation_hash": build_provenance(),
        "request_receipt_mutation_hash": build_request_receipt(),
        "occurrence_v3_minimal": build_occurrence(),
        "merkle": build_merkle(),
        "installer": build_installer_documents(),
        "memory_redaction": build_redaction(vocabulary.REDACTION_V1_SCHEMA),
        "memory_redaction_v2": build_redaction(vocabulary.REDACTION_V2_SCHEMA, ["key", "source", "value"]),
        "memory_redaction_v3": build_redaction_v3(),
        "hub_signed_rows": build_hub_rows(),
        "hub_record": build_hub_record(),
        "hub_key_generation": build_hub_key_generation(),
    }


def render(data: dict[str, Any]) -> str:
    """Pretty JSON, sorted keys, ASCII escapes (lone surrogates survive), trailing newline."""
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=True, allow_nan=False) + "\n"


def main(argv: list[str]) -> int:
    text = render(build())
    if "--check" in argv:
        current = OUTPUT.read_text("utf-8") if OUTPUT.is_file() else None
        if current != text:
            print(f"{OUTPUT} is out of date: run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(text, encoding="utf-8", newline="\n")
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
