"""The protocol's words, defined once: domains, schemas, request paths, roles, labels,
judgments, data classes and clearance ceilings.

Everything that is signed, hashed, stored or compared as a protocol word comes from here. It sits
below every other module (it imports nothing of aimos), so the verifiers, the store and the
writers all read the same word. `tests/architecture/test_vocabulary.py` fails on a protocol
string written anywhere else in `aimos/`; SQL reads these words through the functions
`store.functions` registers or through fragments built from these tuples, and the CHECK lists
the landed migrations spell out are held equal to these tuples by the same test.

Each domain constant is the UTF-8 domain followed by its single 0x00 byte, exactly as hashed
(PROTOCOL-NOTES section 3).
"""

from __future__ import annotations

from typing import Final


def _d(name: str) -> bytes:
    return name.encode("utf-8") + b"\x00"


# --- hash domains (PROTOCOL-NOTES 3) -----------------------------------------------------------

CANONICAL_JSON_PROFILE: Final = "hom-aimos/canonical-json/v1"
CANONICAL_JSON_MAX_DEPTH: Final = 32  # nesting the profile allows (root at depth 0)

PROJECTION_CHAIN: Final = _d("aimos.cwc/v1")
TRANSITION_COMMITMENT: Final = _d("aimos.cognitive-transition/v2")
COGNITIVE_BASELINE: Final = _d("aimos.cognitive-baseline/v1")
CORPUS_PROOF: Final = _d("aimos.cognitive-corpus-proof/v1")
EPISTEMIC_CHAIN: Final = _d("aimos.memory-epistemic/v1")
EVENT_GENESIS: Final = _d("aimos-event-genesis/v1")
EVENT_LINK: Final = _d("AIMOS-EVENT-LINK-v1")
RECALL_AUTHORIZATION: Final = _d("aimos-recall-authorization-v1")
REQUEST_RECEIPT: Final = _d("aimos-request-receipt-v1")
AGENT_REVOCATION: Final = _d("aimos-agent-revocation-v1")
OCCURRENCE_V3: Final = _d("hom.aimos.memory-occurrence/v3")
OCCURRENCE_V3_SIGNATURE: Final = _d("hom.aimos.memory-occurrence-signature/v3")
RECALL_CORPUS: Final = _d("aimos.mutmem-recall-corpus/v1")
V2_OBJECT: Final = _d("hom.aimos.mutmem-portable-object/v2")
V2_BUNDLE: Final = _d("hom.aimos.mutmem-portable-evidence/v2")
V2_MUTATION_BUNDLE: Final = _d("hom.aimos.mutmem-portable-mutation-evidence/v2")
V2_MUTATION_WITNESS: Final = _d("hom.aimos.mutmem-portable-mutation-witness/v1")
# aimos's own: the brain seal chain that accounts for every retained row (existence, freshness)
BRAIN_ROW: Final = _d("aimos.brain-row/v1")
BRAIN_TABLE: Final = _d("aimos.brain-table/v1")
BRAIN_STATE: Final = _d("aimos.brain-state/v1")
BRAIN_SEAL: Final = _d("aimos.brain-seal/v1")
BRAIN_SEAL_LINK: Final = _d("aimos.brain-seal-link/v1")
BRAIN_SEAL_GENESIS: Final = _d("aimos.brain-seal-genesis/v1")
# a row's cells without its rowid (equal on every device that holds the row): what a redaction
# record the master signs once for every device names (seal_row_content_hash)
BRAIN_ROW_CONTENT: Final = _d("aimos.brain-row-content/v1")
# aimos's own: the master's signed redaction of one memory's text (what the master signs; the
# record's own schema, v1, v2 or v3, says which of the memory's fields it removed)
MEMORY_REDACTION: Final = _d("aimos.memory-redaction/v1")
# aimos's own: a brain's rows on a sync hub (aimos/hub): the keys a device derives from the brain's
# content key (records sealed for the hub, the hub's keyed name of a row) and from the master (the
# content key wrapped for a device that joins), and a device's chain of records
HUB_RECORD_BOX: Final = _d("aimos.hub-record-box/v1")
HUB_ROW_NAME: Final = _d("aimos.hub-row-name/v1")
HUB_KEY_WRAP: Final = _d("aimos.hub-key-wrap/v1")
HUB_RECORD_LINK: Final = _d("aimos.hub-record-link/v1")
HUB_RECORD_SIGNATURE: Final = _d("aimos.hub-record-signature/v1")  # the pushing device's housekeeper
HUB_DEVICE_NAME: Final = _d("aimos.hub-device-name/v1")  # the hub's keyed name of a device
HUB_RECORD_NONCE: Final = _d("aimos.hub-record-nonce/v1")  # a record box's nonce, from its plaintext
# the content key's generations (a new one at each device revocation): the commitment to a
# generation's key the master signs, the hub's keyed name of a housekeeper key a generation is
# wrapped to, the master's signature of a generation, and what a record box sealed under a
# generation after the first begins with (then the generation, 4 bytes big-endian)
HUB_KEY_CHECK: Final = _d("aimos.hub-key-check/v1")
HUB_KEY_RECIPIENT: Final = _d("aimos.hub-key-recipient/v1")
HUB_KEY_GENERATION_SIGNATURE: Final = _d("aimos.hub-key-generation-signature/v1")
HUB_BOX_GENERATION: Final = _d("aimos.hub-gen/v1")

# --- schemas of signed or exported bodies ------------------------------------------------------

RECALL_AUTHORIZATION_SCHEMA: Final = "hom.aimos.recall-authorization/v1"
AGENT_REVOCATION_SCHEMA: Final = "hom.aimos.agent-revocation/v1"
OCCURRENCE_V3_SCHEMA: Final = "hom.aimos.memory-occurrence/v3"
ONBOARDING_PLAN_SCHEMA: Final = "hom.aimos.first-launch-onboarding-plan/v1"
ONBOARDING_RECEIPT_SCHEMA: Final = "hom.aimos.first-launch-onboarding-receipt/v1"
INITIAL_WEIGHT_SCHEMA: Final = "hom.aimos.cognitive-initial-weight/v1"
COGNITIVE_EVIDENCE_SCHEMA: Final = "hom.aimos.mutmem-cognitive-evidence/v1"
V1_RECALL_CORPUS_SCHEMA: Final = "hom.aimos.mutmem-recall-corpus/v1"
V1_RECALL_EVIDENCE_SCHEMA: Final = "hom.aimos.mutmem-recall-evidence/v1"
V2_RECALL_BUNDLE_SCHEMA: Final = "hom.aimos.mutmem-portable-evidence/v2"
V2_MUTATION_BUNDLE_SCHEMA: Final = "hom.aimos.mutmem-portable-mutation-evidence/v2"
V2_MUTATION_WITNESS_SCHEMA: Final = "hom.aimos.mutmem-portable-mutation-witness/v1"
# aimos's own
GUIDE_MANIFEST_SCHEMA: Final = "aimos.guide-manifest/v1"
CLASSIFICATION_SCHEMA: Final = "aimos.memory-epistemic-classification/v1"
DETECTOR_VERSION: Final = "aimos-memory-epistemic-v1"
AGREEMENT_DETECTOR_VERSION: Final = "aimos-memory-epistemic-v2"  # the agreement-cluster detector
RECALL_RECEIPT_SCHEMA: Final = "aimos.recall-receipt/v1"
RECALL_EVIDENCE_ENTRY_SCHEMA: Final = "aimos.recall-evidence-entry/v1"
# v2: the query-lure rules 4-5; v3: a relevance floor; v4: candidates scored with a context depth,
# a lead boost and a when boost (recall.candidates.LexicalChannel)
RECALL_POLICY_VERSION: Final = "aimos-recall-policy/v4"
RECEIPT_V2_BINDING_SCHEMA: Final = "aimos.recall-receipt-v2-binding/v1"
EFFECTIVE_SCORE_SCHEMA: Final = "aimos.recall-effective-score/v1"
CONTENT_ADMISSION_SCHEMA: Final = "aimos.v2-content-admission/v1"
RETURN_SELECTION_SCHEMA: Final = "aimos.v2-return-selection/v1"
ANCHORS_SCHEMA: Final = "aimos.anchors/v1"
LEDGER_SCHEMA: Final = "aimos-ledger/v1"
RESTORE_SCHEMA: Final = "aimos.brain-restore/v1"
# a sync hub (aimos/hub): a record's plaintext, the master-signed home of the weight and label
# chains (migration 20), a device's records cut at a number and the home handed over (migration
# 22), the master's record of a content key generation, the hub's own schema generation
HUB_RECORD_SCHEMA: Final = "aimos.hub-record/v1"
HUB_HOME_SCHEMA: Final = "aimos.hub-home/v1"
HUB_CUT_SCHEMA: Final = "aimos.hub-cut/v1"
HUB_HANDOVER_SCHEMA: Final = "aimos.hub-handover/v1"
HUB_KEY_GENERATION_SCHEMA: Final = "aimos.hub-key-generation/v1"
HUB_SCHEMA_VERSION: Final = 1
HOUSEKEEPER_STATUS_SCHEMA: Final = "aimos.housekeeper-status/v1"
HOUSEKEEPER_SERVICE_SCHEMA: Final = "aimos.housekeeper-service/v1"
PURGE_INTENT_SCHEMA: Final = "aimos-whole-brain-purge-intent/v1"
PURGE_RECEIPT_SCHEMA: Final = "aimos-whole-brain-purge-receipt/v1"
PURGE_BATCH_SCHEMA: Final = "aimos-multi-target-purge/v1"
PURGE_JOURNAL_SCHEMA: Final = "aimos-purge-journal/v1"
# v3 names the rows it changes by their cells alone (the master signs one record for every device
# of a synced brain; each device adds its own rowids); v2 removes the memory's text and source, and
# its key unless the master kept it; v1 (before it) removed the text alone. Their records stay valid
REDACTION_SCHEMA: Final = "aimos.memory-redaction/v3"
REDACTION_V2_SCHEMA: Final = "aimos.memory-redaction/v2"
REDACTION_V1_SCHEMA: Final = "aimos.memory-redaction/v1"
REDACTIONS_FILE_SCHEMA: Final = "aimos.redactions/v1"
# the record of every backup aimos wrote, kept beside the brain (housekeeper/backup_records.py)
BACKUPS_FILE_SCHEMA: Final = "aimos.backups/v1"

# --- the ledger's operations and the provenance event types --------------------------------------
# Every event's `operation` and every provenance row's `event_type` is one of these words, written
# here once (tests/architecture/test_vocabulary.py fails on one spelled anywhere else, SQL included).
# the housekeeper's events
MEMORY_SAVED_OPERATION: Final = "memory_saved"
OCCURRENCE_RECORDED_OPERATION: Final = "memory_occurrence_recorded"  # the same content saved again
CANARY_QUARANTINED_OPERATION: Final = "canary_write_retained_quarantine"
INITIAL_WEIGHT_ATTESTED_OPERATION: Final = "cognitive_initial_weight_attested"
EPISTEMIC_CLASSIFIED_OPERATION: Final = "memory_epistemic_classified"
RECALL_RECEIPT_OPERATION: Final = "recall_receipt"
RECALL_DISCLOSURE_FAILED_OPERATION: Final = "recall_disclosure_failed"
MUTATION_OUTCOME_OPERATION: Final = "mutation_outcome_evidence_v2"
WEIGHT_UNCHANGED_OPERATION: Final = "cognitive_weight_unchanged"
WEIGHT_ADJUSTED_OPERATION: Final = "cognitive_weight_adjusted"
OBSERVATION_RETAINED_OPERATION: Final = "mutation_occurrence_observation_retained"
MEMORY_REDACTED_OPERATION: Final = "memory_redacted"  # its metadata names no text
MASTER_PASSPHRASE_CHANGED_OPERATION: Final = "master_passphrase_changed"  # noqa: S105 (an event word)
KEYSTORE_MOVED_OPERATION: Final = "keystore_moved"
CORPUS_ROOT_OPERATION: Final = "corpus_proof_root_attested"  # the nightly job's signed attestation
# onboarding (aimos install) and a device joining a synced brain
ONBOARDING_STARTED_OPERATION: Final = "first_launch_onboarding_started"
BRAIN_INSTALLED_OPERATION: Final = "brain_installed"
GUIDE_CORPUS_INGESTED_OPERATION: Final = "guide_corpus_ingested"
ONBOARDING_TERMINAL_OPERATION: Final = "first_launch_onboarding_terminal"
DEVICE_JOINED_OPERATION: Final = "device_joined"
# the provenance rows' event types, and the master-signed revocation's (EVENT_TYPES, at the end)
SAVE_REASSERT_EVENT: Final = "SAVE_REASSERT"
REWEIGHT_EVENT: Final = "REWEIGHT"
VALENCE_EVENT: Final = "VALENCE"
REVOKE_AGENT_IDENTITY_EVENT: Final = "REVOKE_AGENT_IDENTITY"

# --- signed requests ---------------------------------------------------------------------------

REQUEST_METHOD: Final = "POST"
REQUEST_SIG_FORM: Final = 3
PATH_SAVE: Final = "/aimos/save"
PATH_RECALL: Final = "/aimos/recall"
PATH_OUTCOME: Final = "/aimos/outcome"
PATH_SHOW: Final = "/aimos/show"  # one memory read by id (MCP show_memory); recorded by its nonce row
PATH_LABEL: Final = "/aimos/label"

# --- recall ---------------------------------------------------------------------------------

RECALL_DEFAULT_LIMIT: Final = 10  # results a recall asks for unless told otherwise
RECALL_MAX_LIMIT: Final = 200

# --- identities --------------------------------------------------------------------------------

HOUSEKEEPER: Final = "housekeeper"
MASTER_ISSUER: Final = "aimos-master"
FLAG_SIGNER: Final = "aimos_flag_signer"
RESERVED_AGENT_IDS: Final = (HOUSEKEEPER, FLAG_SIGNER)
ROLE_AGENT: Final = "agent"
ROLES: Final = (HOUSEKEEPER, ROLE_AGENT)
CLI_AGENT: Final = "cli"  # the person's own agent, the one the aimos command signs with by default
# How long an agent's epoch lives unless the person says otherwise (enrol, install, --add-agent),
# and the longest it may: docs/agents.md says why 90 days.
DEFAULT_VALIDITY_DAYS: Final = 90
MAX_VALIDITY_DAYS: Final = 365
# An agent whose current epoch ends within this many days is warned about (status, agent list,
# the TUI, mcp config, its own commands, MCP results) and is due for `aimos agent rotate --expiring`.
EXPIRY_WARNING_DAYS: Final = 7
# The keystores a brain's secrets live in, and the housekeeper-signed events that record a change
# to them (`aimos passphrase change`, `aimos keystore move`; the master passphrase checked first).
KEYSTORE_KINDS: Final = ("os", "file")

# --- data classes and clearance ----------------------------------------------------------------

PUBLIC: Final = "public"
INTERNAL: Final = "internal"
CONFIDENTIAL: Final = "confidential"
RESTRICTED: Final = "restricted"
DATA_CLASSES: Final = (PUBLIC, INTERNAL, CONFIDENTIAL, RESTRICTED)
CLEARANCE_MIN: Final = 0
CLEARANCE_MAX: Final = 12  # the housekeeper's ceiling, and a memory's highest clearance
AGENT_CLEARANCE_MAX: Final = 10  # the highest ceiling a grant gives an agent
# What a new agent's grant allows unless the person says otherwise ...
DEFAULT_GRANT_CLEARANCE: Final = 10
DEFAULT_GRANT_DATA_CLASS: Final = CONFIDENTIAL
# ... and what a save is marked with unless the saver says otherwise (CLI, TUI and MCP alike).
# the scope of aimos's own guide memories: written by the housekeeper alone, judged by no detector
SYSTEM_SCOPE: Final = "system"
DEFAULT_SAVE_CLEARANCE: Final = 5
DEFAULT_SAVE_DATA_CLASS: Final = INTERNAL

# --- epistemic labels and a person's judgments -------------------------------------------------

UNVERIFIED: Final = "unverified"
SUPPORTED: Final = "supported"
DISPUTED: Final = "disputed"
POISON_SUSPECT: Final = "poison_suspect"
POISON_LIKELY: Final = "poison_likely"
POISON_CONFIRMED: Final = "poison_confirmed"
POISON_REFUTED: Final = "poison_refuted"
LABELS: Final = (
    UNVERIFIED,
    SUPPORTED,
    DISPUTED,
    POISON_SUSPECT,
    POISON_LIKELY,
    POISON_CONFIRMED,
    POISON_REFUTED,
)
ADVERSE: Final = frozenset({DISPUTED, POISON_SUSPECT, POISON_LIKELY, POISON_CONFIRMED})
POISON: Final = frozenset({POISON_SUSPECT, POISON_LIKELY, POISON_CONFIRMED})
# The labels the classifier (housekeeper) gives on its own; the others only follow a judgment.
CLASSIFIER_LABELS: Final = frozenset({UNVERIFIED, POISON_SUSPECT, POISON_LIKELY})
# A person's judgment -> (the label it gives, its default confidence in per mille).
JUDGMENTS: Final = {
    "confirm": (POISON_CONFIRMED, 1000),
    "refute": (POISON_REFUTED, 1000),
    "support": (SUPPORTED, 800),
    "dispute": (DISPUTED, 800),
}
# label -> the judgment that gives it
JUDGED: Final = {label: judgment for judgment, (label, _confidence) in JUDGMENTS.items()}
# Under the first judgment rule (judgments recorded before JUDGMENT_AUTHORITY_V2), these two
# judgments, and only they, needed the master's signature beside the agent's.
TRUST_RAISING: Final = frozenset({"refute", "support"})
TRUST_RAISING_LABELS: Final = {JUDGMENTS[j][0]: j for j in sorted(TRUST_RAISING)}
# The labels ordered by the trust recall gives them (PROTOCOL-NOTES section 10: 0.1 withheld,
# 0.25 withheld, 0.4, 0.72 for unverified, 1.0): a higher rank is more trust.
TRUST_RANK: Final = {
    POISON_CONFIRMED: 0,
    POISON_LIKELY: 0,
    POISON_SUSPECT: 1,
    DISPUTED: 2,
    UNVERIFIED: 3,
    SUPPORTED: 4,
    POISON_REFUTED: 4,
}
# The judgment rule every judgment now records in its evidence: a judgment that raises a memory's
# trust from its current label needs the master's signature beside the agent's; one that keeps or
# lowers it needs only the agent's. Judgments without it were recorded under the first rule.
JUDGMENT_AUTHORITY_V2: Final = "aimos.judgment-authority/v2"
# The weight rule every outcome now records (in its terminal event and its REWEIGHT body): one
# weight-bearing outcome per agent, receipt and memory, and each agent's part of the weight bounded
# (aimos/verify/kit/valence.py). Outcomes without it were recorded under MutMem's rule.
VALENCE_RULE_V2: Final = "aimos.valence-rule/v2"


def raises_trust(from_label: str, to_label: str) -> bool:
    """Whether moving a memory from ``from_label`` to ``to_label`` raises the trust recall gives it
    (an unknown label ranks lowest, so a judgment to it never counts as lowering)."""
    return TRUST_RANK.get(to_label, 0) > TRUST_RANK.get(from_label, 0)


# A correction (a save that supersedes a memory) is a new memory, and a new memory starts
# unverified: when the version it corrects was less trusted than that at the moment of the
# correction, the new version carries that label in a housekeeper-signed classification (basis
# classifier, these signals naming the predecessor, its classification hash then and its label, this
# reason), and nothing but a judgment the master signs makes it more trusting (migration 9, both
# verifiers: aimos/verify/kit/inheritance.py).
INHERITED_FROM: Final = "inherited_from"
INHERITED_CLASSIFICATION_HASH: Final = "inherited_classification_hash"
INHERITED_LABEL: Final = "inherited_label"
INHERITED_REASON: Final = "inherited by a correction"


def carried_by_correction(label: str) -> bool:
    """Whether a correction of a memory labelled ``label`` carries the label: it is less trusted
    than unverified, where a new version would start (disputed and the poison labels)."""
    return TRUST_RANK.get(label, 0) < TRUST_RANK[UNVERIFIED]


# --- V2 portable-evidence object schemas (the V2 recall and mutation verifiers, and their writers) -

V2_NATIVE_RECALL_RECEIPT_SCHEMA: Final = "hom-aimos/recall-merkle/v3-epistemic-and-security-closure"
V2_CONTENT_KERNEL_SCHEMA: Final = "hom.aimos.content-state-occurrence-kernel/v1"
V2_SECURITY_CLOSURE_SCHEMA: Final = "hom-aimos/canary-recall-final-closure/v2-epistemic-scope"
OCCURRENCE_LEGACY_SCHEMA: Final = "hom.aimos.memory-occurrence-ref/legacy-v1"
V2_MUTATION_OUTCOME_SCHEMA: Final = "hom.aimos.mutation-outcome-evidence/v2"
# the recall envelope's object kinds -> their schemas (13 singletons, then 5 per result)
V2_OBJECT_SCHEMAS: Final = {
    "trust_anchor": "hom.aimos.mutmem-trust-anchor/v2",
    "actor_identity_epoch": "hom.aimos.mutmem-actor-identity-epoch/v2",
    "actor_revocation_state": "hom.aimos.mutmem-actor-revocation-state/v2",
    "housekeeper_identity_epoch": "hom.aimos.mutmem-housekeeper-identity-epoch/v2",
    "housekeeper_revocation_state": "hom.aimos.mutmem-housekeeper-revocation-state/v2",
    "effective_recall_grant": "hom.aimos.mutmem-effective-recall-grant/v2",
    "request_envelope": "hom.aimos.mutmem-request-envelope/v2",
    "request_receipt": "hom.aimos.mutmem-request-receipt/v2",
    "content_state_projection": "hom.aimos.mutmem-content-state-projection/v2",
    "epistemic_recall_decision": "hom.aimos.mutmem-epistemic-recall-decision/v2",
    "final_security_closure": "hom.aimos.mutmem-final-security-closure/v2",
    "return_projection": "hom-aimos/native-recall-return-projection/v1",
    "native_recall_receipt": "hom.aimos.mutmem-native-recall-receipt/v2",
    "memory_state": "hom.aimos.mutmem-memory-state/v2",
    "provenance_chain": "hom.aimos.mutmem-provenance-chain/v2",
    "occurrence": "hom.aimos.mutmem-occurrence-evidence/v2",
    "epistemic_projection": "hom.aimos.mutmem-epistemic-projection/v2",
    "receipt_evidence": "hom.aimos.mutmem-recall-evidence-entry/v2",
}
# the two recall authorities of a V2 envelope, and the housekeeper's identity tiers
MASTER_SIGNED_RECALL_GRANT: Final = "master_signed_recall_grant"
HOUSEKEEPER_SYSTEM_PRINCIPAL: Final = "housekeeper_system_principal"
HOUSEKEEPER_TIERS: Final = ("T1", "T1_SYSTEM_SELF")
# a V2 mutation outcome's target scopes, terminal kinds and witness proof kinds
TARGET_PRINCIPAL_STATE: Final = "principal_state"
TARGET_OCCURRENCE_OBSERVATION: Final = "occurrence_observation"
TERMINAL_AUTHORIZED_TRANSITION: Final = "authorized_transition"
TERMINAL_SIGNED_NOOP: Final = "signed_noop"
PROOF_REWEIGHT_PROVENANCE: Final = "reweight_provenance"
PROOF_TERMINAL_EVENT_KIND: Final = "terminal_event"


def sql_word(word: str) -> str:
    """A word as an SQL string literal, for SQL text built from this vocabulary."""
    return "'" + word.replace("'", "''") + "'"


def sql_words(words: tuple[str, ...] | frozenset[str]) -> str:
    """Words as an SQL list, e.g. for `x IN (...)`, in a stable order."""
    return ", ".join(sql_word(w) for w in (words if isinstance(words, tuple) else sorted(words)))


# --- Cognitive and V1 recall evidence words ----------------------------------------------------

BASELINE_ATTESTATION_REASON: Final = "retained_nondefault_weight_baseline"
RECALL_MERKLE_EPISTEMIC_SCHEMA: Final = "hom-aimos/recall-merkle/v2-epistemic-decision"
EPISTEMIC_DECISION_ENTRY: Final = "epistemic_decision"
DEFAULT_COMPANY: Final = "hom"  # the company a recall command names when its body names none
BASIS_EXPLICIT: Final = "explicit"  # a classification that follows a person's judgment
BASIS_CLASSIFIER: Final = "classifier"  # the housekeeper's own (the classifier's, or a carried judgment)
# aimos's own optional field of a signed save body: when the memory was first made elsewhere (an
# import of another brain's export), integer Unix seconds (memory/save.py checks it)
ORIGINATED_AT: Final = "originated_at"

# the newest full verify's outcome, kept in the state folder (verify/brain/outcome.py)
VERIFY_FAILED_FILE: Final = "verify-failed.json"
VERIFY_PASSED_FILE: Final = "verify-passed.json"


# --- the groups gathered by name (last in the module, so a word written anywhere above joins) -----

# every `*_OPERATION` word, in the order written (a new operation joins by its name alone)
OPERATIONS: Final[tuple[str, ...]] = tuple(
    value for name, value in dict(globals()).items() if name.endswith("_OPERATION")
)
# every `*_EVENT` word: the provenance rows' event types and the master-signed revocation's
EVENT_TYPES: Final[tuple[str, ...]] = tuple(
    value for name, value in dict(globals()).items() if name.endswith("_EVENT")
)
# every hash domain (a bytes constant), by its name
DOMAINS: Final[dict[str, bytes]] = {
    name: value for name, value in dict(globals()).items() if name.isupper() and isinstance(value, bytes)
}
