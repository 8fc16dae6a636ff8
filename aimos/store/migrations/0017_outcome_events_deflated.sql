-- aimos brain schema, migration 17: an outcome's signed events are stored deflated against a dictionary.
--
-- An outcome writes two housekeeper events: its evidence (`mutation_outcome_evidence_v2`, about
-- 1.1 KB of canonical JSON) and its terminal one (`cognitive_weight_adjusted`,
-- `cognitive_weight_unchanged` or `mutation_occurrence_observation_retained`, 2.6 to 2.9 KB with
-- the signed valence row it carries): most of an outcome's bytes. From now on the writer stores
-- each of these bodies once, deflated against a second fixed preset dictionary of their keys and
-- words (aimos/store/cells.py EVENT_DICTIONARY_V2, named in the stream's header; a save's event
-- keeps EVENT_DICTIONARY_V1), in signed_body_deflated beside an empty signed_body: about 400 and
-- 760 to 890 bytes. Nothing that is hashed or signed changes: every reader reads the body back
-- through aimos_event_body (store/cells.py event_body, the same function in Python), and the
-- seals hash the body the row stands for, so every seal made before this migration still
-- verifies; rows written before it (bodies as text) are left as they are and read as before.
--
-- The events insert trigger binds the stored form for these operations too (a body stored in any
-- other shape, or against another dictionary, reads as NULL and is refused). The outcomes insert
-- trigger reads the evidence event's fields through aimos_event_body, from the memory's newest
-- evidence event only (the writer appends it just before the row): one body inflated per outcome,
-- however many outcomes the memory has had. An aimos from before this
-- migration still running cannot record an outcome: it stores the body as text, which the trigger
-- refuses.

DROP TRIGGER events_verify_insert;
DROP TRIGGER outcomes_verify_insert;

CREATE TRIGGER events_verify_insert BEFORE INSERT ON events
BEGIN
    SELECT RAISE(ABORT, 'aimos: a recall_receipt, memory_saved or outcome event stores its body deflated, beside an empty text; any other event stores it as text')
        WHERE (NEW.operation IN ('recall_receipt', 'memory_saved', 'mutation_outcome_evidence_v2', 'cognitive_weight_adjusted',
                               'cognitive_weight_unchanged', 'mutation_occurrence_observation_retained'))
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

CREATE TRIGGER outcomes_verify_insert BEFORE INSERT ON outcomes
BEGIN
    SELECT RAISE(ABORT, 'aimos: an outcome needs its verified request (nonce, hash, signature)')
        WHERE NOT EXISTS (
            SELECT 1 FROM request_nonces n
            WHERE n.agent_id = NEW.agent_id AND n.valid_from = NEW.agent_valid_from
              AND n.nonce = NEW.request_nonce AND n.ts_signed = NEW.request_ts
              AND n.signed_path = '/aimos/outcome' AND n.request_hash = NEW.request_hash)
           OR NEW.request_hash IS NOT aimos_sha256_hex(NEW.request_body)
           OR aimos_is_canonical(NEW.request_body) IS NOT 1
           OR aimos_ed25519_verify(
                (SELECT public_key_b64u FROM identity_epochs
                 WHERE agent_id = NEW.agent_id AND valid_from = NEW.agent_valid_from),
                aimos_request_message(NEW.request_body, 'POST', '/aimos/outcome', NEW.request_nonce,
                                      NEW.request_ts),
                NEW.request_signature_b64u) IS NOT 1;
    SELECT RAISE(ABORT, 'aimos: an outcome must name the memory, receipt, sign and scope its request body says')
        WHERE json_extract(NEW.request_body, '$.memory_id') IS NOT NEW.memory_id
           OR json_extract(NEW.request_body, '$.receipt_id') IS NOT NEW.receipt_id
           OR COALESCE(json_extract(NEW.request_body, '$.target_scope'), 'principal_state') IS NOT NEW.target_scope
           OR (CASE json_extract(NEW.request_body, '$.outcome') WHEN 'good' THEN 1 WHEN 'bad' THEN -1 END)
                IS NOT NEW.reward_sign;
    SELECT RAISE(ABORT, 'aimos: an outcome needs the housekeeper''s mutation_outcome_evidence_v2 event')
        WHERE NOT EXISTS (
            SELECT 1 FROM (
                SELECT aimos_event_body(e.operation, e.signed_body, e.signed_body_deflated) AS body FROM events e
                WHERE e.subject_memory_id = NEW.memory_id AND +e.operation = 'mutation_outcome_evidence_v2'
                ORDER BY e.rowid DESC LIMIT 1) n
            WHERE json_extract(n.body, '$.metadata.outcome_id') = NEW.outcome_id
              AND json_extract(n.body, '$.metadata.request_hash') = NEW.request_hash
              AND json_extract(n.body, '$.metadata.target_scope') = NEW.target_scope
              AND json_extract(n.body, '$.metadata.reward_sign') = NEW.reward_sign);
    SELECT RAISE(ABORT, 'aimos: the receipt did not disclose this memory with this content to this agent')
        WHERE NOT EXISTS (
            SELECT 1 FROM recall_receipts r, json_each(r.evidence) e
            WHERE r.receipt_id = NEW.receipt_id AND r.agent_id = NEW.agent_id
              AND json_extract(e.value, '$.memory_id') = NEW.memory_id
              AND json_extract(e.value, '$.live_content_hash') = NEW.live_content_hash);
END;
