"""Portable verifier of cognitive-weight evidence (`hom.aimos.mutmem-cognitive-evidence/v1`).

Pure: a parsed bundle (or its bytes) in, a :class:`CognitiveVerdict` out. It imports only the
crypto layer, the vocabulary, the error types and the verifier kit, reads no database, and trusts
no stored hash: every hash, certificate and signature is recomputed from the bundle's own material
and the master key.

What is checked, in this order (the first failure is the primary reason):

1. the bundle canonicalizes (depth <= 32, safe integers, finite numbers); its hash is
   ``bundle_sha256 = H(canonicalJSON(bundle))``;
2. the envelope: exactly the six top-level fields and the exact ``format`` object;
3. the master identity: ``fingerprint = H(SPKI DER)``, equal to the caller's expected
   fingerprint when one is given (the trust anchor is the caller's, never the bundle's);
4. the memory list (strictly ascending ids, one company, lowercase hex content hash, float4
   display weight consistent with its milli value) and the producer's ``sql_records`` shape;
   a failure in 1-4 is fatal: no records and no proof root;
5. every event stream: identity epoch (certificate under the master, or the housekeeper's
   self-signed genesis certificate), ledger genesis predecessor and links, event-link mutation
   hashes, content hashes and signatures, revocations;
   then coverage: every memory a verified event names (a save, an outcome, a weight transition,
   a label, a receipt's disclosed or withheld memory, a corrected version) is in the bundle, or,
   when the caller says the bundle was exported for one memory, that memory is;
6. every memory, one proof record each: the projection graph (one genesis, no fork, no cycle,
   every row reachable), then each transition in chain order: display columns, integer
   continuity, the REWEIGHT provenance node (content hash, certificate fingerprint, signer epoch
   and revocation, signed-message form, signature, mutation hash, event type, binding to this
   memory and these weights), the projection hash h_i and the signed transition commitment t_i;
   then the genesis anchor (1.000, or a signed retained baseline) and terminal fidelity;
7. parity: the producer's ``sql_records`` must equal the records rebuilt here.

The corpus proof root is computed over the rebuilt records whenever step 4 passed. Reasons come
from the closed vocabulary :data:`REASONS`; the names follow the HOM-AIMOS reference verifier.

Modules: ``reasons`` (the vocabulary and fixed words), ``results`` (record, stream result,
verdict), ``identity`` (master, signer epochs, certificates, revocations), ``events`` (event
proofs and ledger streams), ``provenance`` (REWEIGHT nodes and signed baselines), ``memory`` (one
memory's proof record), ``labels`` (classification chains) and ``bundle`` (steps 1-4, the order
of the rest, and the entry points).
"""

from __future__ import annotations

from aimos.verify.cognitive.bundle import (
    verify_cognitive_bundle,
    verify_cognitive_bytes,
    verify_cognitive_file,
)
from aimos.verify.cognitive.reasons import (
    _BASELINE_EVENT,
    _LEDGER_CERT,
    _LEDGER_PROOF,
    _PROVENANCE,
    ATOMIC_REASONS,
    CERTIFICATION_STATUSES,
    FATAL_REASONS,
    FORMAT,
    IN_DATABASE_REASONS,
    MAX_BUNDLE_BYTES,
    PORTABLE_REASONS,
    REASONS,
    CertificationStatus,
    R,
)
from aimos.verify.cognitive.results import CognitiveRecord, CognitiveVerdict, EventStreamResult
from aimos.verify.kit import (  # re-exported: callers read strict JSON through this module
    DuplicateKeyError,
    NonFiniteError,
    strict_json_loads,
)
from aimos.vocabulary import COGNITIVE_EVIDENCE_SCHEMA as SCHEMA

__all__ = [
    "ATOMIC_REASONS",
    "CERTIFICATION_STATUSES",
    "FATAL_REASONS",
    "FORMAT",
    "IN_DATABASE_REASONS",
    "MAX_BUNDLE_BYTES",
    "PORTABLE_REASONS",
    "REASONS",
    "SCHEMA",
    "_BASELINE_EVENT",
    "_LEDGER_CERT",
    "_LEDGER_PROOF",
    "_PROVENANCE",
    "CertificationStatus",
    "CognitiveRecord",
    "CognitiveVerdict",
    "DuplicateKeyError",
    "EventStreamResult",
    "NonFiniteError",
    "R",
    "strict_json_loads",
    "verify_cognitive_bundle",
    "verify_cognitive_bytes",
    "verify_cognitive_file",
]
