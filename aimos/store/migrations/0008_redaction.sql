-- aimos brain schema, migration 8: redaction of one memory's text by the master.
--
-- The one exception to "nothing is deleted". A master-signed record (aimos/verify/kit/redaction.py)
-- names the memory, its signed identity (live content hash, save content and mutation hashes) and,
-- for the two rows that held the text (the memory and its save provenance node), their seal row
-- hashes before and after. Only then may the memory's value become '' and its save body the same
-- body with "value": null (json_set of the stored body, so the guard needs no registered function;
-- the verifiers hold its hash equal to the record's); no other column of either row may change,
-- and nothing else may be updated or deleted. The record is checked here and by both verifiers and the seal check
-- (aimos_redaction_ok is the kit's check_record). The table is bound by the master's signatures and
-- the rows it swaps, not by the seal chain, so the same record can be applied to a backup of the
-- brain and re-applied after a restore without a new seal.

CREATE TABLE memory_redactions (
    redaction_id    TEXT PRIMARY KEY,
    memory_id       TEXT NOT NULL UNIQUE REFERENCES memories (memory_id),
    company_id      TEXT NOT NULL,
    record_json     TEXT NOT NULL,
    signature_b64u  TEXT NOT NULL,
    created_at      INTEGER NOT NULL
) STRICT;

CREATE TRIGGER memory_redactions_no_delete BEFORE DELETE ON memory_redactions
BEGIN SELECT RAISE(ABORT, 'aimos: a redaction record is never removed'); END;

CREATE TRIGGER memory_redactions_no_update BEFORE UPDATE ON memory_redactions
BEGIN SELECT RAISE(ABORT, 'aimos: memory_redactions is append-only'); END;

CREATE TRIGGER memory_redactions_verify_insert BEFORE INSERT ON memory_redactions
BEGIN
    SELECT RAISE(ABORT, 'aimos: a redaction record must be signed by this brain''s master and bind its columns')
        WHERE aimos_redaction_ok(
            NEW.record_json, NEW.signature_b64u, NEW.memory_id, NEW.company_id, NEW.created_at,
            NEW.redaction_id,
            (SELECT public_key_b64u FROM master_identity), (SELECT fingerprint FROM master_identity)) IS NOT 1;
    SELECT RAISE(ABORT, 'aimos: a redaction record binds the memory''s signed identity')
        WHERE NOT EXISTS (
            SELECT 1 FROM memories m
            WHERE m.memory_id = NEW.memory_id AND m.company_id = NEW.company_id
              AND m.live_content_hash = json_extract(NEW.record_json, '$.live_content_hash')
              AND m.save_mutation_hash = json_extract(NEW.record_json, '$.save_mutation_hash')
              AND m.save_provenance_id = json_extract(NEW.record_json, '$.save_provenance_id')
              AND m.rowid = json_extract(NEW.record_json, '$.rows[0].rowid'))
           OR NOT EXISTS (
            SELECT 1 FROM memory_provenance p
            WHERE p.provenance_id = json_extract(NEW.record_json, '$.save_provenance_id')
              AND p.content_hash = json_extract(NEW.record_json, '$.save_content_hash')
              AND p.mutation_hash = json_extract(NEW.record_json, '$.save_mutation_hash')
              AND p.rowid = json_extract(NEW.record_json, '$.rows[1].rowid'));
END;

DROP TRIGGER memories_no_update;
CREATE TRIGGER memories_no_update BEFORE UPDATE ON memories
BEGIN
    SELECT RAISE(ABORT, 'aimos: memories are append-only; save a correction instead')
        WHERE NEW.memory_id IS NOT OLD.memory_id OR NEW.company_id IS NOT OLD.company_id
           OR NEW.key IS NOT OLD.key OR NEW.scope IS NOT OLD.scope
           OR NEW.memory_type IS NOT OLD.memory_type OR NEW.clearance_level IS NOT OLD.clearance_level
           OR NEW.data_class IS NOT OLD.data_class OR NEW.source IS NOT OLD.source
           OR NEW.author_agent_id IS NOT OLD.author_agent_id
           OR NEW.author_valid_from IS NOT OLD.author_valid_from OR NEW.created_at IS NOT OLD.created_at
           OR NEW.live_content_hash IS NOT OLD.live_content_hash
           OR NEW.save_provenance_id IS NOT OLD.save_provenance_id
           OR NEW.save_mutation_hash IS NOT OLD.save_mutation_hash
           OR NEW.quarantine IS NOT OLD.quarantine;
    SELECT RAISE(ABORT, 'aimos: memories are append-only; only the master''s redaction removes a text')
        WHERE NEW.value IS NOT OLD.value
          AND (NEW.value IS NOT ''
               OR NOT EXISTS (SELECT 1 FROM memory_redactions r WHERE r.memory_id = NEW.memory_id));
    SELECT RAISE(ABORT, 'aimos: the live label may only follow a signed classification')
        WHERE NEW.epistemic_label IS NOT OLD.epistemic_label
          AND NEW.epistemic_label IS NOT (
            SELECT label FROM memory_classifications WHERE memory_id = NEW.memory_id
            ORDER BY rowid DESC LIMIT 1);
    SELECT RAISE(ABORT, 'aimos: the live weight may only follow a signed, authorized transition')
        WHERE NEW.retrieval_weight_milli IS NOT OLD.retrieval_weight_milli
          AND NEW.retrieval_weight_milli IS NOT (
            SELECT new_weight_milli FROM weight_projections WHERE memory_id = NEW.memory_id
            ORDER BY rowid DESC LIMIT 1);
END;

DROP TRIGGER memory_provenance_no_update;
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
           OR NEW.created_at IS NOT OLD.created_at
           OR OLD.event_type IS NOT 'SAVE'
           OR NOT EXISTS (
            SELECT 1 FROM memory_redactions r
            WHERE r.memory_id = OLD.memory_id
              AND json_extract(r.record_json, '$.save_provenance_id') = OLD.provenance_id
              AND NEW.body_json = json_set(OLD.body_json, '$.value', json('null')));
END;
