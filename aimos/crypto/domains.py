"""Every domain-separation string aimos hashes with, defined once (PROTOCOL-NOTES section 3).

Each constant is the UTF-8 domain followed by its single 0x00 byte, exactly as hashed.
"""

from __future__ import annotations


def _d(name: str) -> bytes:
    return name.encode("utf-8") + b"\x00"


CANONICAL_JSON_PROFILE = "hom-aimos/canonical-json/v1"

PROJECTION_CHAIN = _d("aimos.cwc/v1")
TRANSITION_COMMITMENT = _d("aimos.cognitive-transition/v2")
COGNITIVE_BASELINE = _d("aimos.cognitive-baseline/v1")
CORPUS_PROOF = _d("aimos.cognitive-corpus-proof/v1")
EPISTEMIC_CHAIN = _d("aimos.memory-epistemic/v1")
EVENT_GENESIS = _d("aimos-event-genesis/v1")
EVENT_LINK = _d("AIMOS-EVENT-LINK-v1")
RECALL_AUTHORIZATION = _d("aimos-recall-authorization-v1")
REQUEST_RECEIPT = _d("aimos-request-receipt-v1")
AGENT_REVOCATION = _d("aimos-agent-revocation-v1")
OCCURRENCE_V3 = _d("hom.aimos.memory-occurrence/v3")
OCCURRENCE_V3_SIGNATURE = _d("hom.aimos.memory-occurrence-signature/v3")
RECALL_CORPUS = _d("aimos.mutmem-recall-corpus/v1")
V2_OBJECT = _d("hom.aimos.mutmem-portable-object/v2")
V2_BUNDLE = _d("hom.aimos.mutmem-portable-evidence/v2")
V2_MUTATION_BUNDLE = _d("hom.aimos.mutmem-portable-mutation-evidence/v2")
V2_MUTATION_WITNESS = _d("hom.aimos.mutmem-portable-mutation-witness/v1")
# aimos's own: the brain seal chain that accounts for every retained row (existence, freshness)
BRAIN_ROW = _d("aimos.brain-row/v1")
BRAIN_TABLE = _d("aimos.brain-table/v1")
BRAIN_STATE = _d("aimos.brain-state/v1")
BRAIN_SEAL = _d("aimos.brain-seal/v1")
BRAIN_SEAL_LINK = _d("aimos.brain-seal-link/v1")
BRAIN_SEAL_GENESIS = _d("aimos.brain-seal-genesis/v1")

# Schemas of signed bodies aimos produces (reference vocabulary).
RECALL_AUTHORIZATION_SCHEMA = "hom.aimos.recall-authorization/v1"
AGENT_REVOCATION_SCHEMA = "hom.aimos.agent-revocation/v1"
OCCURRENCE_V3_SCHEMA = "hom.aimos.memory-occurrence/v3"
ONBOARDING_PLAN_SCHEMA = "hom.aimos.first-launch-onboarding-plan/v1"
ONBOARDING_RECEIPT_SCHEMA = "hom.aimos.first-launch-onboarding-receipt/v1"
# aimos's own: the guide corpus manifest (its root is an RFC 6962 tree over the file entries)
GUIDE_MANIFEST_SCHEMA = "aimos.guide-manifest/v1"

ALL_DOMAINS: dict[str, bytes] = {
    name: value for name, value in globals().items() if name.isupper() and isinstance(value, bytes)
}
