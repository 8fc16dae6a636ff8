-- aimos brain schema, migration 14: a recall's signed events are stored deflated.
--
-- A recall signs two `recall_receipt` events (the native receipt's and its V2-shaped child): their
-- bodies carry the evidence, hashes and occurrences of the recall, about 19 KB of a recall's 28 KB
-- at limit 10, in canonical JSON that deflates to about two fifths. From now on the writer stores
-- a recall_receipt event's body once, deflated, in signed_body_deflated, beside an empty
-- signed_body; every other event stays text. Nothing that is hashed or signed changes: the
-- content hash and the signature are over the body's bytes, every reader reads them back through
-- aimos_event_body (aimos/store/cells.py event_body, the same function in Python), and the seals
-- hash the body the row stands for (aimos/store/seals.py STORED_FORMS), so every seal made before
-- this migration still verifies and the rows written before it are left as they are.
--
-- The events insert trigger now checks the body the row stands for (canonical, hashed, its fields
-- the columns', signed) and binds its stored form: a recall_receipt event deflated beside an
-- empty text, any other event as text. A body stored in any other shape reads as NULL and is
-- refused. The receipt's insert trigger reads its event's fields through the same function. An
-- aimos from before this migration still running (a server started before an upgrade) cannot
-- insert an event: it has no aimos_event_body, so its insert fails rather than store a body the
-- new readers would not find.

ALTER TABLE events ADD COLUMN signed_body_deflated BLOB;

DROP TRIGGER events_verify_insert;
DROP TRIGGER recall_receipts_verify_insert;

CREATE TRIGGER events_verify_insert BEFORE INSERT ON events
BEGIN
    SELECT RAISE(ABORT, 'aimos: a recall_receipt event stores its body deflated, beside an empty text; any other event stores it as text')
        WHERE (NEW.operation = 'recall_receipt')
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

CREATE TRIGGER recall_receipts_verify_insert BEFORE INSERT ON recall_receipts
BEGIN
    SELECT RAISE(ABORT, 'aimos: a receipt needs its recall request nonce and its signed recall_receipt event')
        WHERE NOT EXISTS (
            SELECT 1 FROM request_nonces n
            WHERE n.agent_id = NEW.agent_id AND n.nonce = NEW.request_nonce
              AND n.request_hash = NEW.request_hash AND n.signed_path = '/aimos/recall')
        OR NOT EXISTS (
            SELECT 1 FROM events e
            WHERE e.event_id = NEW.event_id AND e.operation = 'recall_receipt'
              AND json_extract(aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated), '$.metadata.receipt_id') = NEW.receipt_id
              AND json_extract(aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated), '$.metadata.merkle_root') = NEW.merkle_root
              AND json_extract(aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated), '$.metadata.request_hash') = NEW.request_hash
              AND json_extract(aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated), '$.metadata.command_hash') = NEW.command_hash
              AND json_extract(aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated), '$.metadata.grant_mutation_hash') = NEW.grant_mutation_hash
              AND json_extract(aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated), '$.metadata.result_count') = NEW.result_count
              AND json_extract(aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated), '$.metadata.decision_sha256') = NEW.decision_sha256);
    SELECT RAISE(ABORT, 'aimos: receipt Merkle root or command hash does not recompute')
        WHERE aimos_merkle_root(NEW.evidence) IS NOT NEW.merkle_root
           OR aimos_sha256_hex(NEW.command) IS NOT NEW.command_hash
           OR aimos_is_canonical(NEW.command) IS NOT 1;
END;
