-- aimos brain schema, migration 13: a redaction removes the memory's key and source with its text.
--
-- Until now a redaction (migration 8) emptied the memory's value alone: its key and source stayed in
-- the memory row, in its signed save body and in both search indexes, so recalling the words of a
-- redacted memory's key still found it first. A record of schema v2 (aimos/verify/kit/redaction.py)
-- names the fields it removes in "removed": ["key", "source", "value"], or ["source", "value"]
-- when the master keeps the key. Once such a record is in, the memory's source may become '' and,
-- unless kept, its key NULL; its save body becomes the same body with those fields and "value" set
-- to null (json_replace of the stored body: a field the body does not hold stays absent). A v1
-- record (no "removed") still allows the value alone. No other column may change. The seal check
-- and both verifiers hold each row to exactly the row hash the record names, as before.

DROP TRIGGER memories_no_update;
CREATE TRIGGER memories_no_update BEFORE UPDATE ON memories
BEGIN
    SELECT RAISE(ABORT, 'aimos: memories are append-only; save a correction instead')
        WHERE NEW.memory_id IS NOT OLD.memory_id OR NEW.company_id IS NOT OLD.company_id
           OR NEW.scope IS NOT OLD.scope
           OR NEW.memory_type IS NOT OLD.memory_type OR NEW.clearance_level IS NOT OLD.clearance_level
           OR NEW.data_class IS NOT OLD.data_class
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
    SELECT RAISE(ABORT, 'aimos: memories are append-only; only the master''s redaction removes a source')
        WHERE NEW.source IS NOT OLD.source
          AND (NEW.source IS NOT ''
               OR NOT EXISTS (
                SELECT 1 FROM memory_redactions r
                WHERE r.memory_id = NEW.memory_id
                  AND json_extract(r.record_json, '$.removed')
                      IN (json_array('key', 'source', 'value'), json_array('source', 'value'))));
    SELECT RAISE(ABORT, 'aimos: memories are append-only; only the master''s redaction removes a key')
        WHERE NEW.key IS NOT OLD.key
          AND (NEW.key IS NOT NULL
               OR NOT EXISTS (
                SELECT 1 FROM memory_redactions r
                WHERE r.memory_id = NEW.memory_id
                  AND json_extract(r.record_json, '$.removed') = json_array('key', 'source', 'value')));
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
              AND NEW.body_json = CASE json_extract(r.record_json, '$.removed')
                  WHEN json_array('key', 'source', 'value') THEN json_replace(
                      OLD.body_json, '$.value', json('null'), '$.source', json('null'), '$.key', json('null'))
                  WHEN json_array('source', 'value') THEN json_replace(
                      OLD.body_json, '$.value', json('null'), '$.source', json('null'))
                  ELSE json_set(OLD.body_json, '$.value', json('null')) END);
END;
