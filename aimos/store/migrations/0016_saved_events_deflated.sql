-- aimos brain schema, migration 16: a save's signed event is stored deflated against a dictionary.
--
-- A save's `memory_saved` event body is about a kilobyte of canonical JSON, half of a memory's
-- stored bytes with its row; its keys and constant words are a third of it, which plain deflate
-- keeps (a stream that short has little to refer back to). From now on the writer stores a
-- memory_saved body once, deflated against a fixed preset dictionary of those keys and words
-- (aimos/store/cells.py EVENT_DICTIONARY_V1, named in the stream's header), in
-- signed_body_deflated beside an empty signed_body: about 370 bytes. Nothing that is hashed or
-- signed changes: the content hash and the signature are over the body's bytes, every reader
-- reads them back through aimos_event_body (store/cells.py event_body, the same function in
-- Python), and the seals hash the body the row stands for (store/seals.py STORED_FORMS), so every
-- seal made before this migration still verifies and the rows written before it (bodies as text)
-- are left as they are and read as before.
--
-- The events insert trigger binds the stored form: a memory_saved event deflated beside an empty
-- text, like a recall's (a body stored in any other shape reads as NULL and is refused). The two
-- triggers that read a save's event (a memory's insert, a correction's carried judgment) read its
-- fields through aimos_event_body. An aimos from before this migration still running cannot save:
-- it stores the body as text, which the trigger refuses.

DROP TRIGGER events_verify_insert;
DROP TRIGGER memories_verify_insert;
DROP TRIGGER memory_classifications_carried_judgment;

CREATE TRIGGER events_verify_insert BEFORE INSERT ON events
BEGIN
    SELECT RAISE(ABORT, 'aimos: a recall_receipt or memory_saved event stores its body deflated, beside an empty text; any other event stores it as text')
        WHERE (NEW.operation IN ('recall_receipt', 'memory_saved'))
              IS NOT (NEW.signed_body_deflated IS NOT NULL AND NEW.signed_body IS '');
    SELECT RAISE(ABORT, 'aimos: event body is not canonical JSON')
        WHERE aimos_is_canonical(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated)) IS NOT 1;
    SELECT RAISE(ABORT, 'aimos: event content hash does not match its body')
        WHERE NEW.content_hash IS NOT aimos_sha256_hex(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated));
    SELECT RAISE(ABORT, 'aimos: event fields differ from its signed body')
        WHERE json_extract(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated), '$.event_id') IS NOT NEW.event_id
           OR json_extract(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated), '$.company_id') IS NOT NEW.company_id
           OR json_extract(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated), '$.operation') IS NOT NEW.operation
           OR json_extract(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated), '$.signer_agent_id') IS NOT NEW.signer_agent_id
           OR aimos_iso_seconds(json_extract(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated), '$.signer_valid_from'))
                IS NOT NEW.signer_valid_from
           OR json_extract(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated), '$.subject_memory_id') IS NOT NEW.subject_memory_id
           OR json_extract(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated), '$.ledger_seq') IS NOT NEW.ledger_seq
           OR json_extract(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated), '$.prev_mutation_hash') IS NOT NEW.prev_mutation_hash
           OR json_extract(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated), '$.ts_signed') IS NOT NEW.ts_signed;
    SELECT RAISE(ABORT, 'aimos: events are signed by the housekeeper, inside its valid and unrevoked epoch')
        WHERE NOT EXISTS (
            SELECT 1 FROM identity_epochs e
            WHERE e.agent_id = NEW.signer_agent_id AND e.valid_from = NEW.signer_valid_from
              AND e.role = 'housekeeper'
              AND NEW.ts_signed BETWEEN e.valid_from AND e.valid_until)
           OR EXISTS (
            SELECT 1 FROM agent_revocations r
            WHERE r.agent_id = NEW.signer_agent_id AND r.agent_valid_from = NEW.signer_valid_from
              AND r.revoked_at <= NEW.ts_signed);
    SELECT RAISE(ABORT, 'aimos: event ledger_seq does not follow its chain')
        WHERE NEW.ledger_seq IS NOT (
            SELECT COALESCE(MAX(ledger_seq), 0) + 1 FROM events
            WHERE signer_agent_id = NEW.signer_agent_id AND signer_valid_from = NEW.signer_valid_from);
    SELECT RAISE(ABORT, 'aimos: event predecessor is not the head of its chain')
        WHERE NEW.prev_mutation_hash IS NOT COALESCE(
            (SELECT mutation_hash FROM events
             WHERE signer_agent_id = NEW.signer_agent_id AND signer_valid_from = NEW.signer_valid_from
             ORDER BY ledger_seq DESC LIMIT 1),
            aimos_event_genesis((SELECT value FROM brain_meta WHERE key = 'company_id'),
                                NEW.signer_agent_id, NEW.signer_valid_from));
    SELECT RAISE(ABORT, 'aimos: event mutation hash does not recompute')
        WHERE NEW.mutation_hash IS NOT
            aimos_event_link(NEW.prev_mutation_hash, NEW.content_hash, NEW.nonce, NEW.ts_signed);
    SELECT RAISE(ABORT, 'aimos: event signature does not verify under its signer epoch')
        WHERE aimos_ed25519_verify(
            (SELECT public_key_b64u FROM identity_epochs
             WHERE agent_id = NEW.signer_agent_id AND valid_from = NEW.signer_valid_from),
            aimos_payload_message(aimos_event_body(NEW.operation, NEW.signed_body, NEW.signed_body_deflated), NEW.nonce, NEW.ts_signed),
            NEW.signature_b64u) IS NOT 1;
END;

CREATE TRIGGER memories_verify_insert BEFORE INSERT ON memories
BEGIN
    SELECT RAISE(ABORT, 'aimos: live content hash does not match the row')
        WHERE NEW.live_content_hash IS NOT aimos_live_content_hash(
            NEW.key, NEW.value, NEW.scope, NEW.memory_type, NEW.clearance_level,
            NEW.data_class, NEW.source);
    SELECT RAISE(ABORT, 'aimos: a memory needs its signed save provenance node with the same content')
        WHERE NOT EXISTS (
            SELECT 1 FROM memory_provenance p
            WHERE p.provenance_id = NEW.save_provenance_id
              AND p.mutation_hash = NEW.save_mutation_hash
              AND p.memory_id = NEW.memory_id
              AND p.company_id = NEW.company_id
              AND p.event_type = 'SAVE'
              AND p.is_genesis = 1
              AND p.signer_agent_id = NEW.author_agent_id
              AND p.signer_valid_from = NEW.author_valid_from
              AND aimos_live_content_hash(
                    json_extract(p.body_json, '$.key'), json_extract(p.body_json, '$.value'),
                    json_extract(p.body_json, '$.scope'), json_extract(p.body_json, '$.memory_type'),
                    json_extract(p.body_json, '$.clearance_level'),
                    json_extract(p.body_json, '$.data_class'), json_extract(p.body_json, '$.source'))
                  = NEW.live_content_hash);
    SELECT RAISE(ABORT, 'aimos: a memory needs the housekeeper''s signed memory_saved event')
        WHERE NOT EXISTS (
            SELECT 1 FROM events e
            WHERE e.subject_memory_id = NEW.memory_id AND +e.operation = 'memory_saved'
              AND e.company_id = NEW.company_id
              AND json_extract(aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated), '$.metadata.save_mutation_hash') = NEW.save_mutation_hash
              AND json_extract(aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated), '$.metadata.live_content_hash') = NEW.live_content_hash
              AND json_extract(aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated), '$.metadata.retained_quarantine') = NEW.quarantine);
    SELECT RAISE(ABORT, 'aimos: a new memory starts at weight 1.000 (0.100 in quarantine) and unverified')
        WHERE NEW.retrieval_weight_milli IS NOT (CASE NEW.quarantine WHEN 1 THEN 100 ELSE 1000 END)
           OR NEW.epistemic_label IS NOT 'unverified';
END;

CREATE TRIGGER memory_classifications_carried_judgment BEFORE INSERT ON memory_classifications
WHEN NEW.basis = 'classifier'
BEGIN
    SELECT RAISE(ABORT, 'aimos: a corrected version may not be more trusting than the label it carries, and only a correction carries one')
        FROM (SELECT (SELECT json_extract(aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated), '$.metadata.supersedes') FROM events e
                      WHERE e.subject_memory_id = NEW.memory_id AND +e.operation = 'memory_saved'
                      ORDER BY e.rowid LIMIT 1) AS old_id) s
        WHERE aimos_carried_ok(
            (SELECT signed_body FROM events WHERE event_id = NEW.authority_event_id),
            NEW.label,
            s.old_id,
            (SELECT label FROM memory_classifications WHERE memory_id = s.old_id ORDER BY rowid DESC LIMIT 1),
            (SELECT classification_hash FROM memory_classifications WHERE memory_id = s.old_id
             ORDER BY rowid DESC LIMIT 1),
            (SELECT c.label FROM memory_classifications c JOIN events e ON e.event_id = c.authority_event_id
             WHERE c.memory_id = NEW.memory_id AND c.basis = 'classifier'
               AND json_extract(e.signed_body, '$.metadata.signals.inherited_from') IS NOT NULL
               AND NOT EXISTS (
                 SELECT 1 FROM memory_classifications j JOIN events je ON je.event_id = j.authority_event_id
                 WHERE j.memory_id = NEW.memory_id AND j.rowid > c.rowid AND j.basis = 'explicit'
                   AND json_extract(je.signed_body, '$.metadata.evidence.master_signature_b64u') IS NOT NULL)
             ORDER BY c.rowid DESC LIMIT 1)) IS NOT 1;
END;
