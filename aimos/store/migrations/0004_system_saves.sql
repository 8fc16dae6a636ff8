-- aimos brain schema, migration 4: the housekeeper's system-scope saves (the guide memories).
--
-- `aimos install` saves aimos's guide texts through the real signed save path as the
-- housekeeper (PROTOCOL-NOTES 13). Until now a save's signer had to be an agent epoch; this
-- replaces the SAVE node's insert trigger so the housekeeper's epoch may sign one too, and binds
-- the two together: scope `system` is written by the housekeeper alone, and the housekeeper
-- writes nothing else. Every other check is unchanged.

DROP TRIGGER memory_provenance_verify_insert;
CREATE TRIGGER memory_provenance_verify_insert BEFORE INSERT ON memory_provenance
WHEN NEW.event_type = 'SAVE'
BEGIN
    SELECT RAISE(ABORT, 'aimos: only a SAVE genesis node signed in request form 3 for POST /aimos/save')
        WHERE NEW.is_genesis IS NOT 1
           OR NEW.signature_form IS NOT 3 OR NEW.signed_method IS NOT 'POST'
           OR NEW.signed_path IS NOT '/aimos/save';
    SELECT RAISE(ABORT, 'aimos: the system scope is the housekeeper''s alone, and the housekeeper saves only there')
        WHERE (json_extract(NEW.body_json, '$.scope') = 'system') IS NOT (NEW.signer_agent_id = 'housekeeper');
    SELECT RAISE(ABORT, 'aimos: provenance body is not canonical JSON')
        WHERE aimos_is_canonical(NEW.body_json) IS NOT 1;
    SELECT RAISE(ABORT, 'aimos: provenance content hash does not match its body')
        WHERE NEW.content_hash IS NOT aimos_sha256_hex(NEW.body_json)
           OR json_extract(NEW.body_json, '$.company_id') IS NOT NEW.company_id;
    SELECT RAISE(ABORT, 'aimos: a save needs its request nonce recorded for the same body')
        WHERE NOT EXISTS (
            SELECT 1 FROM request_nonces n
            WHERE n.agent_id = NEW.signer_agent_id AND n.nonce = NEW.nonce
              AND n.valid_from = NEW.signer_valid_from AND n.ts_signed = NEW.ts_signed
              AND n.signed_path = NEW.signed_path AND n.request_hash = NEW.content_hash);
    SELECT RAISE(ABORT, 'aimos: the signer is not an agent epoch valid and unrevoked at signing time')
        WHERE NOT EXISTS (
            SELECT 1 FROM identity_epochs e
            WHERE e.agent_id = NEW.signer_agent_id AND e.valid_from = NEW.signer_valid_from
              AND e.cert_fingerprint = NEW.cert_fingerprint AND e.role IN ('agent', 'housekeeper')
              AND NEW.ts_signed BETWEEN e.valid_from AND e.valid_until)
           OR EXISTS (
            SELECT 1 FROM agent_revocations r
            WHERE r.agent_id = NEW.signer_agent_id AND r.agent_valid_from = NEW.signer_valid_from
              AND r.revoked_at <= NEW.ts_signed);
    SELECT RAISE(ABORT, 'aimos: the signer''s grant does not allow this save')
        WHERE NOT EXISTS (
            SELECT 1 FROM (
                SELECT * FROM recall_grants g
                WHERE g.subject_agent_id = NEW.signer_agent_id
                  AND g.subject_valid_from = NEW.signer_valid_from
                ORDER BY g.rowid DESC LIMIT 1) g
            WHERE g.allowed = 1 AND g.write_allowed = 1 AND g.company_id = NEW.company_id
              AND json_extract(NEW.body_json, '$.clearance_level') <= g.clearance_ceiling
              AND (CASE json_extract(NEW.body_json, '$.data_class')
                     WHEN 'public' THEN 0 WHEN 'internal' THEN 1
                     WHEN 'confidential' THEN 2 WHEN 'restricted' THEN 3 END)
                  <= (CASE g.data_class_ceiling
                     WHEN 'public' THEN 0 WHEN 'internal' THEN 1
                     WHEN 'confidential' THEN 2 WHEN 'restricted' THEN 3 END));
    SELECT RAISE(ABORT, 'aimos: provenance mutation hash does not recompute')
        WHERE NEW.mutation_hash IS NOT aimos_provenance_mutation(
            NEW.content_hash, NEW.prev_mutation_hash, NEW.nonce, NEW.ts_signed);
    SELECT RAISE(ABORT, 'aimos: provenance signature does not verify under its signer epoch')
        WHERE aimos_ed25519_verify(
            (SELECT public_key_b64u FROM identity_epochs
             WHERE agent_id = NEW.signer_agent_id AND valid_from = NEW.signer_valid_from),
            aimos_request_message(NEW.body_json, NEW.signed_method, NEW.signed_path,
                                  NEW.nonce, NEW.ts_signed),
            NEW.signature_b64u) IS NOT 1;
END;
