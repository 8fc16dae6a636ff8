"""Cognitive bundles made with aimos.crypto keys the way the reference exporter lays them out
(`_Producer`), and the closed-verdict checks the cognitive verifier's tests share."""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import random
from typing import Any

from aimos import vocabulary
from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json
from aimos.crypto.certs import PERPETUAL_UNTIL, issue_certificate
from aimos.crypto.ed25519 import KeyPair
from aimos.crypto.encoding import float4_be, iso_ms
from aimos.crypto.messages import payload_message
from aimos.verify import cognitive
from aimos.verify.cognitive import (
    PORTABLE_REASONS,
    CognitiveVerdict,
    verify_cognitive_bytes,
)
from aimos.vocabulary import MASTER_ISSUER


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
