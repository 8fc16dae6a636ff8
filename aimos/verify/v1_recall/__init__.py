"""Portable verifier of MutMem V1 recall evidence and recall corpora.

Schemas: ``hom.aimos.mutmem-recall-evidence/v1`` (one signed recall: trust anchors, the agent's
signed request, the recalled memories, the recall receipt and the housekeeper's signed
``recall_receipt`` event) and ``hom.aimos.mutmem-recall-corpus/v1`` (N such bundles under one
corpus root). Pure: a parsed document (or its bytes) in, a verdict out; no I/O, no store, and no
stored hash is trusted: every hash, certificate and signature is recomputed.

The checks follow the HOM-AIMOS reference verifier (``verifiers/mutmem-python/recall_verifier.py``)
in its order; the first failure is the primary reason, with the reference's reason strings.

Recall evidence:

1. the whole document canonicalizes (depth <= 32, safe integers, finite numbers; the reference
   canonicalizes every document as it parses it): ``canonical_json_*``;
2. the envelope: exactly its seven fields, the exact ``format`` object, non-empty ``bundle_id`` and
   ``company_id``, a ``memories`` list: ``recall_bundle_schema_invalid``;
3. the trust anchors ``{master, certificates}``: the master (or null) is exactly
   ``{public_key_b64u, fingerprint}`` with fingerprint = H(key DER); at most 16 certificate anchors
   ``{certificate_sha256, public_key_b64u}``, hashes distinct lowercase hex:
   ``recall_trust_anchor_schema_invalid``; an unreadable master key ``master_key_invalid``, an
   anchor key that is no Ed25519 SPKI key ``public_key_invalid``;
4. the request ``{body, method, path, nonce, ts_signed, signature, certificate}``
   (``recall_request_schema_invalid``); its certificate (below); the certificate names the body's
   ``agent_id`` (``recall_request_identity_invalid``); POST ``/aimos/recall``, the body's
   ``ts_signed`` and a nonce (``recall_request_context_invalid``); the agent's request signature,
   request form 3 (``recall_request_signature_invalid``); then the body normalized into the recall
   command: known fields only (``recall_unknown_field:<name>``), a query, key or memory id
   (``recall_query_or_identifier_required``), a UUID memory id (``recall_memory_id_invalid``), limit
   1..200, clearance 0..12, max_hops 1..4 (``recall_integer_invalid``);
5. the command's company is the bundle's (``recall_scope_binding_invalid``);
6. a receipt object with an ``evidence`` list, else *indeterminate*
   ``recall_mandatory_evidence_missing``; its fields (``recall_receipt_schema_invalid``); one
   evidence entry per memory (``recall_receipt_evidence_count_mismatch``);
7. memory *i* and evidence entry *i*: exact fields, ordinal *i*, the same memory id, the request's
   source filter (and memory-type filter, when given), the same three lowercase-hex provenance
   hashes: ``recall_receipt_memory_binding_invalid:<i>``;
8. with a ``merkle_schema``: the epistemic-decision profile, its decision hash as the first Merkle
   entry and the evidence after it (``recall_receipt_epistemic_binding_invalid``);
9. the receipt's command hash H(command), outer request hash H(body), RFC 6962 Merkle root and the
   two mutation hashes' form: ``recall_receipt_cryptographic_binding_invalid``;
10. the event receipt: absent or null gives *indeterminate* ``recall_mandatory_evidence_missing``;
    exact fields (``recall_event_receipt_schema_invalid``); its signer certificate (below); an
    object body (``recall_event_body_invalid``); a lowercase-hex predecessor
    (``recall_event_previous_hash_invalid``); content hash, event-link mutation hash and every
    binding of the signed body to the receipt (``recall_event_binding_invalid``); the signature,
    payload form 1 (``recall_event_signature_invalid``).

A certificate (request or event) is read as base64url canonical JSON ``{body, sig}`` with exactly
the eight body fields (``cert_malformed`` / ``cert_schema``); it must chain to an anchor: a
self-issued certificate (issuer = agent_id) to a certificate anchor naming its hash and key, any
other to the master anchor when the issuer is ``aimos-master`` or the master's fingerprint
(``recall_trust_anchor_missing``); the issuer's signature (``cert_sig_invalid``); and the signing
time within its window (``cert_epoch_invalid``).

Corpus: exactly ``{format, intended_n, members, corpus_root}`` (``recall_corpus_schema_invalid``);
the exact format and ``intended_n`` >= 1 members (``recall_corpus_intended_n_invalid``); member *i*
is ``{ordinal: i, bundle_id, bundle_sha256, bundle}`` with a distinct id equal to the bundle's and
bundle_sha256 = H(canonicalJSON(bundle)) (``recall_corpus_member_invalid``); every member bundle is
verified; the corpus root (``recall_corpus_root_mismatch``). The corpus verdict is the first invalid
member's, else the first indeterminate member's, else valid; its reason is that member's reason.

The caller's trust anchor. The reference trusts the anchors the bundle carries. Given
``expected_master_fingerprint``, aimos also requires, after every reference check has passed (so
each reference reason is reported unchanged), that the bundle's master anchor is that fingerprint
and that the request certificate was verified under it: ``recall_trust_anchor_master_mismatch``
(aimos's own reason). The housekeeper's event certificate stays self-issued and anchored by the
bundle itself, as in the reference: a valid verdict proves the agent's request under the caller's
master, and a receipt consistent with it signed by the key the bundle names for the housekeeper.

Where aimos is stricter than the reference Python verifier (none of these occur in well-formed
evidence): base64url must be canonical and unpadded; JSON values are compared as canonical JSON, so
``true`` never equals ``1``; a certificate must also have ``v`` 1, integer times and a non-empty
window (else ``cert_schema``); an anchor key must be an Ed25519 SPKI key; a non-object event
``metadata`` fails the event binding and a non-object member bundle the corpus member check (the
reference fails both with an internal error). A defect of this verifier (an exception no check
expects) gives *indeterminate* ``verifier_internal_error``, as the cognitive verifier does.

Modules: ``shape`` (formats, field sets, the reasons), ``results`` (the verdicts, on the verifier
kit's), ``command`` (a certificate, the recall command, a memory's binding, the epistemic
entries), ``run`` (the checks of one bundle in order) and ``verify`` (the entry points, corpora).
"""

from __future__ import annotations

from aimos.verify.v1_recall.results import CorpusMemberVerdict, RecallCorpusVerdict, RecallEvidenceVerdict
from aimos.verify.v1_recall.shape import INDETERMINATE_REASONS, R
from aimos.verify.v1_recall.verify import (
    document_schema,
    verify_recall_corpus,
    verify_recall_evidence,
    verify_v1_recall_bytes,
    verify_v1_recall_document,
)
from aimos.vocabulary import V1_RECALL_CORPUS_SCHEMA as CORPUS_SCHEMA
from aimos.vocabulary import V1_RECALL_EVIDENCE_SCHEMA as RECALL_SCHEMA

__all__ = [
    "CORPUS_SCHEMA",
    "INDETERMINATE_REASONS",
    "RECALL_SCHEMA",
    "CorpusMemberVerdict",
    "R",
    "RecallCorpusVerdict",
    "RecallEvidenceVerdict",
    "document_schema",
    "verify_recall_corpus",
    "verify_recall_evidence",
    "verify_v1_recall_bytes",
    "verify_v1_recall_document",
]
