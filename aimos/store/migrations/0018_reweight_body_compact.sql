-- aimos brain schema, migration 18: a REWEIGHT provenance node's signed body is stored compactly.
--
-- An authorized weight transition signs a REWEIGHT node in memory_provenance: about 480 bytes of
-- canonical JSON, a third of the transition's stored bytes. From now on the writer stores that body
-- once, deflated against a preset dictionary of its keys and words (aimos/store/cells.py
-- PROVENANCE_DICTIONARY_V1) and without its memory id, in body_deflated beside an empty body_json:
-- about 130 bytes. The reader (aimos_provenance_body, store/cells.py provenance_body, the same
-- function in Python) puts back the row's own memory_id column, so a node's signed body always
-- names the memory its row does, and moving a node to another memory breaks its content hash and
-- signature. Nothing that is hashed or signed changes: every reader reads the body back through
-- that function and the seals hash the body the row stands for (store/seals.py STORED_FORMS), so
-- every seal made before this migration still verifies; rows written before it keep their text
-- and are read as before. A SAVE node keeps its body as text (its redaction rewrites it).
--
-- The expression indexes over body_json now cover text bodies only (the REWEIGHT nodes a body
-- names, kept as text: json_valid, so a row edited to hold neither form is still a row an attacker
-- can write and verify names; the SAVE nodes a save supersedes): a compact node's body names its row's
-- memory_id, found through memory_provenance_memory. A new
-- trigger binds the stored form (a REWEIGHT node deflated beside an empty text, a SAVE node as
-- text; a body in any other shape reads as NULL and is refused); the REWEIGHT and projection
-- insert triggers read the body through aimos_provenance_body, and body_deflated never changes.
-- An aimos from before this migration still running cannot sign a transition: it stores the body
-- as text, which the trigger refuses.

ALTER TABLE memory_provenance ADD COLUMN body_deflated BLOB;

DROP INDEX memory_provenance_signed_reweight;
DROP INDEX memory_provenance_supersedes;
DROP TRIGGER memory_provenance_no_update;
DROP TRIGGER memory_provenance_reweight_insert;
DROP TRIGGER weight_projections_verify_insert;

CREATE INDEX memory_provenance_signed_reweight
    ON memory_provenance (json_extract(body_json, '$.memory_id'))
    WHERE event_type = 'REWEIGHT' AND json_valid(body_json);

CREATE INDEX memory_provenance_supersedes ON memory_provenance (json_extract(body_json, '$.supersedes'))
    WHERE event_type = 'SAVE' AND json_extract(body_json, '$.supersedes') IS NOT NULL;

CREATE TRIGGER memory_provenance_no_update BEFORE UPDATE ON memory_provenance
BEGIN
    SELECT RAISE(ABORT, 'aimos: memory_provenance is append-only')
        WHERE NEW.provenance_id IS NOT OLD.provenance_id OR NEW.memory_id IS NOT OLD.memory_id
           OR NEW.company_id IS NOT OLD.company_id OR NEW.event_type IS NOT OLD.event_type
           OR NEW.content_hash IS NOT OLD.content_hash
           OR NEW.prev_mutation_hash IS NOT OLD.prev_mutation_hash
           OR NEW.mutation_hash IS NOT OLD.mutation_hash OR NEW.nonce IS NOT OLD.nonce
           OR NEW.ts_signed IS NOT OLD.ts_signed OR NEW.signature_b64u IS NOT OLD.signature_b64u
           OR NEW.signature_form IS NOT OLD.signature_form OR NEW.signed_method IS NOT OLD.signed_method
           OR NEW.signed_path IS NOT OLD.signed_path OR NEW.signer_agent_id IS NOT OLD.signer_agent_id
           OR NEW.signer_valid_from IS NOT OLD.signer_valid_from
           OR NEW.cert_fingerprint IS NOT OLD.cert_fingerprint OR NEW.identity_tier IS NOT OLD.identity_tier
           OR NEW.is_genesis IS NOT OLD.is_genesis OR NEW.backfilled IS NOT OLD.backfilled
           OR NEW.binding_schema_version IS NOT OLD.binding_schema_version
           OR NEW.created_at IS NOT OLD.created_at OR NEW.body_deflated IS NOT OLD.body_deflated
           OR OLD.event_type IS NOT 'SAVE'
           OR NOT EXISTS (
            SELECT 1 FROM memory_redactions r
            WHERE r.memory_id = OLD.memory_id
              AND json_extract(r.record_json, '$.save_provenance_id') = OLD.provenance_id
              AND NEW.body_json = CASE json_extract(r.record_json, '$.removed')
                  WHEN json_array('key', 'source', 'value') THEN json_replace(
                      OLD.body_json, '$.value', json('null'), '$.source', json('null'), '$.key', json('null'))
                  WHEN json_array('source', 'value') THEN json_replace(
                      OLD.body_json, '$.value', json('null'), '$.source', json('null'))
                  ELSE json_set(OLD.body_json, '$.value', json('null')) END);
END;

CREATE TRIGGER memory_provenance_reweight_insert BEFORE INSERT ON memory_provenance
WHEN NEW.event_type = 'REWEIGHT'
BEGIN
    SELECT RAISE(ABORT, 'aimos: REWEIGHT node must be signed in payload form, not backfilled, schema 2')
        WHERE NEW.signature_form IS NOT 1 OR NEW.backfilled IS NOT 0
           OR NEW.binding_schema_version IS NOT 2;
    SELECT RAISE(ABORT, 'aimos: REWEIGHT node signer is not the housekeeper, valid and unrevoked')
        WHERE NOT EXISTS (
            SELECT 1 FROM identity_epochs e
            WHERE e.agent_id = NEW.signer_agent_id AND e.valid_from = NEW.signer_valid_from
              AND e.cert_fingerprint = NEW.cert_fingerprint AND e.role = 'housekeeper'
              AND NEW.ts_signed BETWEEN e.valid_from AND e.valid_until)
           OR EXISTS (
            SELECT 1 FROM agent_revocations r
            WHERE r.agent_id = NEW.signer_agent_id AND r.agent_valid_from = NEW.signer_valid_from
              AND r.revoked_at <= NEW.ts_signed);
    SELECT RAISE(ABORT, 'aimos: REWEIGHT body is not canonical or does not bind this memory')
        WHERE aimos_is_canonical(aimos_provenance_body(NEW.event_type, NEW.memory_id, NEW.body_json, NEW.body_deflated)) IS NOT 1
           OR NEW.company_id IS NOT (SELECT company_id FROM memories WHERE memory_id = NEW.memory_id)
           OR NEW.content_hash IS NOT aimos_sha256_hex(aimos_provenance_body(NEW.event_type, NEW.memory_id, NEW.body_json, NEW.body_deflated))
           OR json_extract(aimos_provenance_body(NEW.event_type, NEW.memory_id, NEW.body_json, NEW.body_deflated), '$.event_type') IS NOT 'REWEIGHT'
           OR json_extract(aimos_provenance_body(NEW.event_type, NEW.memory_id, NEW.body_json, NEW.body_deflated), '$.company_id') IS NOT NEW.company_id
           OR json_extract(aimos_provenance_body(NEW.event_type, NEW.memory_id, NEW.body_json, NEW.body_deflated), '$.memory_id') IS NOT NEW.memory_id
           OR json_extract(aimos_provenance_body(NEW.event_type, NEW.memory_id, NEW.body_json, NEW.body_deflated), '$.ts_signed') IS NOT NEW.ts_signed;
    SELECT RAISE(ABORT, 'aimos: REWEIGHT predecessor is not the head of this memory''s REWEIGHT chain')
        WHERE NEW.prev_mutation_hash IS NOT (
            SELECT mutation_hash FROM memory_provenance
            WHERE memory_id = NEW.memory_id AND event_type = 'REWEIGHT'
            ORDER BY rowid DESC LIMIT 1);
    SELECT RAISE(ABORT, 'aimos: REWEIGHT mutation hash does not recompute')
        WHERE NEW.mutation_hash IS NOT aimos_provenance_mutation(
            NEW.content_hash, NEW.prev_mutation_hash, NEW.nonce, NEW.ts_signed);
    SELECT RAISE(ABORT, 'aimos: REWEIGHT signature does not verify under the housekeeper epoch')
        WHERE aimos_ed25519_verify(
            (SELECT public_key_b64u FROM identity_epochs
             WHERE agent_id = NEW.signer_agent_id AND valid_from = NEW.signer_valid_from),
            aimos_payload_message(aimos_provenance_body(NEW.event_type, NEW.memory_id, NEW.body_json, NEW.body_deflated), NEW.nonce, NEW.ts_signed),
            NEW.signature_b64u) IS NOT 1;
END;

CREATE TRIGGER weight_projections_verify_insert BEFORE INSERT ON weight_projections
BEGIN
    SELECT RAISE(ABORT, 'aimos: transition_scope: the signer is not the housekeeper, active and unrevoked')
        WHERE NOT EXISTS (
            SELECT 1 FROM identity_epochs e
            WHERE e.agent_id = 'housekeeper' AND e.valid_from = NEW.signer_valid_from
              AND e.role = 'housekeeper' AND NEW.created_at BETWEEN e.valid_from AND e.valid_until)
           OR EXISTS (
            SELECT 1 FROM agent_revocations r
            WHERE r.agent_id = 'housekeeper' AND r.agent_valid_from = NEW.signer_valid_from);
    SELECT RAISE(ABORT, 'aimos: transition_company: the transition is not in the memory''s company')
        WHERE NEW.company_id IS NOT (SELECT company_id FROM memories WHERE memory_id = NEW.memory_id);
    SELECT RAISE(ABORT, 'aimos: transition_bounds: weights must be 100..3000 and differ')
        WHERE NEW.old_weight_milli NOT BETWEEN 100 AND 3000
           OR NEW.new_weight_milli NOT BETWEEN 100 AND 3000
           OR NEW.old_weight_milli = NEW.new_weight_milli;
    SELECT RAISE(ABORT, 'aimos: transition_provenance: not the terminal REWEIGHT node binding this company, memory and weights')
        WHERE NOT EXISTS (
            SELECT 1 FROM memory_provenance p
            WHERE p.mutation_hash = NEW.provenance_mutation_hash AND p.event_type = 'REWEIGHT'
              AND p.backfilled = 0 AND p.memory_id = NEW.memory_id AND p.company_id = NEW.company_id
              AND p.signer_agent_id = 'housekeeper' AND p.signer_valid_from = NEW.signer_valid_from
              AND json_extract(aimos_provenance_body(p.event_type, p.memory_id, p.body_json, p.body_deflated), '$.old_weight_milli') = NEW.old_weight_milli
              AND json_extract(aimos_provenance_body(p.event_type, p.memory_id, p.body_json, p.body_deflated), '$.new_weight_milli') = NEW.new_weight_milli
              AND json_extract(aimos_provenance_body(p.event_type, p.memory_id, p.body_json, p.body_deflated), '$.outcome_id') = NEW.outcome_id)
           OR NEW.provenance_mutation_hash IS NOT (
            SELECT mutation_hash FROM memory_provenance
            WHERE memory_id = NEW.memory_id AND event_type = 'REWEIGHT'
            ORDER BY rowid DESC LIMIT 1);
    SELECT RAISE(ABORT, 'aimos: transition_signature: the housekeeper signature over t_i does not verify')
        WHERE NEW.transition_hash IS NOT aimos_transition_hash(
                NEW.company_id, NEW.memory_id, NEW.old_weight_milli, NEW.new_weight_milli,
                NEW.provenance_mutation_hash)
           OR aimos_ed25519_verify(
                (SELECT public_key_b64u FROM identity_epochs
                 WHERE agent_id = 'housekeeper' AND valid_from = NEW.signer_valid_from),
                unhex(NEW.transition_hash), NEW.transition_signature_b64u) IS NOT 1;
    SELECT RAISE(ABORT, 'aimos: transition_predecessor: prev is not the head of this memory''s chain')
        WHERE NEW.prev_projection_hash IS NOT (
            SELECT projection_hash FROM weight_projections WHERE memory_id = NEW.memory_id
            ORDER BY rowid DESC LIMIT 1);
    SELECT RAISE(ABORT, 'aimos: transition_live_weight: the live weight is not the old weight')
        WHERE NEW.old_weight_milli IS NOT (
            SELECT retrieval_weight_milli FROM memories WHERE memory_id = NEW.memory_id);
    SELECT RAISE(ABORT, 'aimos: transition_genesis: a first transition starts at 1000 or at a signed baseline')
        WHERE NEW.prev_projection_hash IS NULL
          AND NEW.old_weight_milli IS NOT COALESCE(
            (SELECT observed_weight_milli FROM weight_baselines WHERE memory_id = NEW.memory_id), 1000);
    SELECT RAISE(ABORT, 'aimos: transition_hash: h_i does not recompute')
        WHERE NEW.projection_hash IS NOT aimos_projection_hash(
            NEW.memory_id, NEW.old_weight_milli, NEW.new_weight_milli, NEW.provenance_mutation_hash,
            NEW.prev_projection_hash);
    SELECT RAISE(ABORT, 'aimos: transition_outcome: the outcome is not principal-state evidence on this memory')
        WHERE NOT EXISTS (
            SELECT 1 FROM outcomes o
            WHERE o.outcome_id = NEW.outcome_id AND o.memory_id = NEW.memory_id
              AND o.target_scope = 'principal_state' AND o.terminal = 'authorized_transition');
END;

-- created last, so it runs first: a body in another form is named as such
CREATE TRIGGER memory_provenance_stored_form BEFORE INSERT ON memory_provenance
BEGIN
    SELECT RAISE(ABORT, 'aimos: a REWEIGHT node stores its body deflated, beside an empty text; a SAVE node stores it as text')
        WHERE (NEW.event_type = 'REWEIGHT') IS NOT (NEW.body_deflated IS NOT NULL AND NEW.body_json IS '');
END;
