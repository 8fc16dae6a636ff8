-- aimos brain schema, migration 7: authority that matches what people expect.
--
-- 1. A person's judgment that raises a memory's trust needs the master's signature beside the
-- agent's.
--
-- The labels are ordered by the trust recall gives them (vocabulary.TRUST_RANK). A judgment
-- (basis 'explicit') now records the judgment rule it was made under (evidence.authority_rule =
-- 'aimos.judgment-authority/v2'), and when it raises the memory's trust from its current label
-- (the newest classification's, or 'unverified'), its evidence carries the master's signature over
-- the agent's signed label request. aimos_judgment_ok makes the same check as both verifiers
-- (aimos/verify/kit/judgment.py). Judgments recorded before this migration keep verifying under the
-- first rule (refute and support needed the master).

DROP TRIGGER memory_classifications_verify_insert;
CREATE TRIGGER memory_classifications_verify_insert BEFORE INSERT ON memory_classifications
BEGIN
    SELECT RAISE(ABORT, 'aimos: a classification binds the memory''s live content')
        WHERE NOT EXISTS (
            SELECT 1 FROM memories m WHERE m.memory_id = NEW.memory_id
              AND m.company_id = NEW.company_id AND m.live_content_hash = NEW.live_content_hash);
    SELECT RAISE(ABORT, 'aimos: a classification needs the housekeeper''s signed authority event binding it')
        WHERE NOT EXISTS (
            SELECT 1 FROM events e JOIN identity_epochs i
              ON i.agent_id = e.signer_agent_id AND i.valid_from = e.signer_valid_from
            WHERE e.event_id = NEW.authority_event_id AND e.mutation_hash = NEW.authority_mutation_hash
              AND e.operation = 'memory_epistemic_classified' AND e.subject_memory_id = NEW.memory_id
              AND e.company_id = NEW.company_id AND i.role = 'housekeeper'
              AND json_extract(e.signed_body, '$.metadata.label') = NEW.label
              AND json_extract(e.signed_body, '$.metadata.confidence_milli') = NEW.confidence_milli
              AND json_extract(e.signed_body, '$.metadata.basis') = NEW.basis
              AND json_extract(e.signed_body, '$.metadata.live_content_hash') = NEW.live_content_hash
              AND json_extract(e.signed_body, '$.metadata.prev_classification_hash') IS NEW.prev_classification_hash
              AND aimos_ed25519_verify(i.public_key_b64u,
                    aimos_payload_message(e.signed_body, e.nonce, e.ts_signed), e.signature_b64u) = 1);
    SELECT RAISE(ABORT, 'aimos: a classification must chain to the memory''s newest one')
        WHERE NEW.prev_classification_hash IS NOT (
            SELECT classification_hash FROM memory_classifications WHERE memory_id = NEW.memory_id
            ORDER BY rowid DESC LIMIT 1);
    SELECT RAISE(ABORT, 'aimos: the classification hash does not recompute')
        WHERE NEW.classification_hash IS NOT aimos_epistemic_hash(
            NEW.memory_id, NEW.label, NEW.confidence_milli, NEW.live_content_hash,
            NEW.authority_mutation_hash, NEW.prev_classification_hash);
    SELECT RAISE(ABORT, 'aimos: a judgment that raises trust needs the master''s signature')
        WHERE NEW.basis = 'explicit' AND aimos_judgment_ok(
            (SELECT e.signed_body FROM events e WHERE e.event_id = NEW.authority_event_id),
            NEW.memory_id,
            COALESCE((SELECT label FROM memory_classifications WHERE memory_id = NEW.memory_id
                      ORDER BY rowid DESC LIMIT 1), 'unverified'),
            (SELECT public_key_b64u FROM master_identity)) IS NOT 1;
END;

-- 2. One weight-bearing outcome per agent, recall receipt and memory: a further principal outcome
-- about the same disclosure is kept as evidence with no weight authority (a signed no-op; the
-- weight rule aimos.valence-rule/v2, aimos/verify/kit/valence.py). The writer decides it; this
-- refuses a transition the rule would not give, whoever writes.
CREATE TRIGGER outcomes_one_weight_bearing_per_disclosure BEFORE INSERT ON outcomes
WHEN NEW.target_scope = 'principal_state' AND NEW.terminal = 'authorized_transition'
BEGIN
    SELECT RAISE(ABORT, 'aimos: a further outcome about the same disclosure has no weight authority')
        WHERE EXISTS (
            SELECT 1 FROM outcomes o
            WHERE o.memory_id = NEW.memory_id AND o.receipt_id = NEW.receipt_id
              AND o.agent_id = NEW.agent_id AND o.target_scope = 'principal_state');
END;
