"""The signed nodes a memory's weight rests on: a REWEIGHT provenance node (forms 1-4 of its signed
message, the signer epoch, the mutation hash, the binding to one transition of one memory) and a
signed retained baseline (a non-default initial weight the housekeeper attested).

Each answers None or a reason; the memory check composes it (``provenance_<reason>``,
``baseline_event_<reason>``) into the memory's record."""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from typing import Any

from aimos.crypto import commitments
from aimos.crypto.canonical import canonical_json
from aimos.crypto.ed25519 import verify
from aimos.crypto.encoding import float4_be
from aimos.errors import AimosError
from aimos.verify.cognitive.events import IndexedEvent, event_proof
from aimos.verify.cognitive.identity import Identity, Master, identity_epoch
from aimos.verify.cognitive.reasons import _BASELINE_EVENT, BASELINE_EVENT_SKEW, R
from aimos.verify.kit import b64u, finite_number, hex_bytes, is_int, js_round, same
from aimos.vocabulary import BASELINE_ATTESTATION_REASON as BASELINE_ATTESTATION
from aimos.vocabulary import HOUSEKEEPER as HOUSEKEEPER
from aimos.vocabulary import INITIAL_WEIGHT_ATTESTED_OPERATION, REWEIGHT_EVENT
from aimos.vocabulary import INITIAL_WEIGHT_SCHEMA as BASELINE_METADATA_SCHEMA


def _provenance_message(prov: Mapping[str, Any], body: Mapping[str, Any], identity: Identity) -> bytes | str:
    """The signed bytes of a provenance node (forms 1-4), or the reason they cannot be formed."""
    nonce, signed_at = prov.get("nonce"), prov.get("signed_at")
    signature_form = prov.get("signature_form", 1)
    request_form = prov.get("request_signature_form", 1)
    if not isinstance(nonce, str) or not nonce or not is_int(signed_at, 1):
        return R.MALFORMED_INPUT
    if not is_int(signature_form, 1) or not is_int(request_form, 1):
        return R.MALFORMED_INPUT
    tier = prov.get("identity_tier")
    claims = prov.get("signed_claims")
    if tier in ("T2", "T3") and request_form != 4:
        return R.ELEVATED_REQUIRES_FORM4
    if request_form == 4:
        previous_claim = claims.get("prev_chain_hash") if isinstance(claims, dict) else None
        claim = b64u(previous_claim)
        if claim is None or len(claim) != 32:
            return R.SIGNED_CHAIN_CLAIM_INVALID
        if (
            tier == "T3"
            and isinstance(claims, dict)
            and claims.get("device_fp") != identity.device_fingerprint
        ):
            return R.SIGNED_DEVICE_CLAIM_MISMATCH
    canonical = canonical_json(body)
    tail = [nonce.encode("utf-8"), str(signed_at).encode()]
    if signature_form == 2:  # provenance form 2: payload \n memory_originated_at
        originated = prov.get("memory_originated_at")
        if not is_int(originated):
            return R.MALFORMED_INPUT
        return b"\n".join([canonical, *tail, str(originated).encode()])
    if request_form in (3, 4):
        method, path = prov.get("signed_method"), prov.get("signed_path")
        method = method.upper() if isinstance(method, str) else ""
        path = path.split("?", 1)[0] if isinstance(path, str) else ""
        if not method or not path:
            return R.MALFORMED_INPUT
        parts = [canonical, method.encode("utf-8"), path.encode("utf-8")]
        if request_form == 4:
            assert isinstance(claims, dict)
            device = claims.get("device_fp")
            if device is not None and (not isinstance(device, str) or not device):
                return R.MALFORMED_INPUT
            parts.append(canonical_json({"prev_chain_hash": claims["prev_chain_hash"], "device_fp": device}))
        return b"\n".join([*parts, *tail])
    return b"\n".join([canonical, *tail])


def verify_provenance(prov: Mapping[str, Any], identity: Identity, master: Master) -> str | None:  # noqa: C901 (the verifier's checks in the reference's order)
    """The node's own proof; returns None or an atomic provenance reason."""
    body = prov.get("body")
    if not isinstance(body, dict):
        return R.SIGNED_BODY_MISSING
    content = commitments.provenance_content_hash(body)
    stored_content = hex_bytes(prov.get("content_hash"), 32)
    if stored_content is None:
        return R.MALFORMED_INPUT
    if stored_content != content:
        return R.SIGNED_BODY_CONTENT_HASH_MISMATCH
    if prov.get("certificate_fingerprint") != identity.certificate_fingerprint:
        return R.SIGNER_CERTIFICATE_FINGERPRINT_MISMATCH
    signed_at = prov.get("signed_at")
    if not is_int(signed_at, 1):
        return R.MALFORMED_INPUT
    epoch = identity_epoch(identity, master, signed_at)
    if (
        epoch is not None
        or prov.get("signer_agent_id") != identity.agent_id
        or not same(prov.get("signer_valid_from"), identity.valid_from)
    ):
        if epoch == R.IDENTITY_REVOKED_BEFORE_SIGNATURE:
            return R.SIGNER_REVOKED_BEFORE_EVIDENCE
        if epoch is None or epoch == R.IDENTITY_EPOCH_MISMATCH:
            return R.SIGNER_CERTIFICATE_ROW_MISMATCH  # e.g. a substituted key or certificate
        return epoch
    previous_value = prov.get("previous_mutation_hash")
    if not same(prov.get("is_genesis"), previous_value is None):
        return R.GENESIS_SHAPE_INVALID
    message = _provenance_message(prov, body, identity)
    if isinstance(message, str):
        return message
    signature = hex_bytes(prov.get("signature"), 64)
    if signature is None:
        return R.MALFORMED_INPUT
    if not verify(identity.pubkey, message, signature):
        return R.SIG_INVALID
    previous = None if previous_value is None else hex_bytes(previous_value, 32)
    if previous_value is not None and previous is None:
        return R.MALFORMED_INPUT
    originated = prov.get("memory_originated_at") if prov.get("signature_form") == 2 else None
    expected = commitments.provenance_mutation_hash(content, previous, prov["nonce"], signed_at, originated)
    if hex_bytes(prov.get("mutation_hash"), 32) != expected:
        return R.MUTATION_HASH_MISMATCH
    if prov.get("event_type") != REWEIGHT_EVENT or body.get("event_type") != REWEIGHT_EVENT:
        return R.SIGNED_BODY_EVENT_TYPE_MISMATCH
    return None


def _weight_matches(value: object, milli: int) -> bool:
    number = finite_number(value)
    scaled = math.nan if number is None else number * 1000
    return math.isfinite(scaled) and js_round(scaled) == milli


def provenance_bound(
    projection: Mapping[str, Any], prov: Mapping[str, Any], memory: Mapping[str, Any], memory_id: str
) -> bool:
    """The node authorizes exactly this transition of this memory (no cross-memory replay)."""
    body = prov.get("body")
    assert isinstance(body, dict)
    return (
        prov.get("event_type") == REWEIGHT_EVENT
        and same(prov.get("binding_schema_version"), 2)
        and prov.get("signer_agent_id") == HOUSEKEEPER
        and prov.get("backfilled") is False
        and body.get("event_type") == REWEIGHT_EVENT
        and body.get("company_id") == memory.get("company_id")
        and body.get("memory_id") == memory_id
        and _weight_matches(body.get("old_weight"), projection["old_weight_milli"])
        and _weight_matches(body.get("new_weight"), projection["new_weight_milli"])
        and projection.get("company_id") == memory.get("company_id")
        and projection.get("memory_id") == memory_id
        and projection.get("provenance_mutation_hash") == prov.get("mutation_hash")
    )


def verify_baseline(
    baseline: Mapping[str, Any],
    memory: Mapping[str, Any],
    identity: Identity,
    master: Master,
    events: Mapping[str, IndexedEvent],
) -> str | None:
    observed_float4 = hex_bytes(baseline.get("observed_weight_float4"), 4)
    observed_at = baseline.get("observed_at")
    milli = baseline.get("observed_weight_milli")
    if observed_float4 is None or not is_int(observed_at, 1) or not is_int(milli, 100, 3000):
        return R.BASELINE_BINDING_INVALID
    observed = struct.unpack(">f", observed_float4)[0]
    if not math.isfinite(observed):
        return R.BASELINE_BINDING_INVALID
    epoch = identity_epoch(identity, master, observed_at)
    exact = (
        baseline.get("company_id") == memory.get("company_id")
        and baseline.get("memory_id") == memory.get("memory_id")
        and baseline.get("live_content_hash") == memory.get("content_hash")
        and observed_float4 != float4_be(1.0)
        and js_round(observed * 1000) == milli
        and baseline.get("attestation_reason") == BASELINE_ATTESTATION
        and baseline.get("historical_origin_claimed") is False
        and baseline.get("signer_agent_id") == HOUSEKEEPER == identity.agent_id
        and same(baseline.get("signer_valid_from"), identity.valid_from)
        and baseline.get("certificate_fingerprint") == identity.certificate_fingerprint
        and epoch is None
    )
    if not exact:
        return epoch or R.BASELINE_BINDING_INVALID
    event_id = baseline.get("event_id")
    indexed = events.get(event_id) if isinstance(event_id, str) else None
    if indexed is None or indexed.event.get("mutation_hash") != baseline.get("event_mutation_hash"):
        return R.BASELINE_EVENT_MISSING
    event = indexed.event
    event_at = event.get("signed_at")
    if (
        event.get("company_id") != baseline.get("company_id")
        or event.get("signer_agent_id") != baseline.get("signer_agent_id")
        or not same(event.get("signer_valid_from"), baseline.get("signer_valid_from"))
        or event.get("certificate_fingerprint") != baseline.get("certificate_fingerprint")
        or not indexed.verified
        or not is_int(event_at, 1)
        or abs(event_at - observed_at) > BASELINE_EVENT_SKEW
        or identity_epoch(identity, master, event_at) is not None
    ):
        return R.BASELINE_EVENT_EPOCH_INVALID
    proof = event_proof(event, identity.pubkey)
    if proof is not None:
        return _BASELINE_EVENT[proof]
    metadata = event.get("metadata")
    if (
        not isinstance(metadata, dict)
        or event.get("operation") != INITIAL_WEIGHT_ATTESTED_OPERATION
        or event.get("key") != memory.get("memory_id")
        or metadata.get("schema") != BASELINE_METADATA_SCHEMA
        or metadata.get("observed_weight_float4") != observed_float4.hex()
        or not same(metadata.get("weight_milli"), milli)
        or not same(metadata.get("observed_ts"), observed_at)
        or metadata.get("memory_content_hash") != memory.get("content_hash")
        or metadata.get("historical_origin_claimed") is not False
        or metadata.get("canonical_memory_mutation") is not False
    ):
        return R.BASELINE_EVENT_BINDING_INVALID
    event_mutation = hex_bytes(baseline.get("event_mutation_hash"), 32)
    live = hex_bytes(baseline.get("live_content_hash"), 32)
    cert_fp = hex_bytes(baseline.get("certificate_fingerprint"), 32)
    if event_mutation is None or live is None or cert_fp is None or not isinstance(event_id, str):
        return R.BASELINE_BINDING_INVALID
    try:
        expected = commitments.cognitive_baseline_hash(
            str(baseline.get("company_id")),
            str(baseline.get("memory_id")),
            event_id,
            event_mutation,
            live,
            observed,
            milli,
            observed_at,
            identity.valid_from,
            cert_fp,
        )
    except (AimosError, struct.error):
        return R.BASELINE_BINDING_INVALID
    if hex_bytes(baseline.get("baseline_hash"), 32) != expected:
        return R.BASELINE_HASH_INVALID
    signature = hex_bytes(baseline.get("signature"), 64)
    if signature is None or not verify(identity.pubkey, expected, signature):
        return R.BASELINE_SIGNATURE_INVALID
    return None
