-- aimos brain schema, migration 5: signed epistemic labels (SPEC 7, PROTOCOL-NOTES 3 and 9).
--
-- A label change is a housekeeper-signed `memory_epistemic_classified` event plus a
-- classification row chained per memory: g_j = H("aimos.memory-epistemic/v1" 00 || uuid16(memory)
-- || be32(len label) || label || be64(confidence) || live content hash || authority event mutation
-- hash || g_{j-1} or 32 zero bytes). The insert trigger checks the event (operation, signer, its
-- signature, what it binds), the live-content binding, the predecessor and g_j. The memory's
-- `epistemic_label` is a projection: it may only become the newest row's label. Content, weight
-- and retention never change. Memories with no row are `unverified` (the implicit genesis).

CREATE TABLE memory_classifications (
    classification_id        TEXT PRIMARY KEY,
    memory_id                TEXT NOT NULL REFERENCES memories (memory_id),
    company_id               TEXT NOT NULL,
    label                    TEXT NOT NULL CHECK (label IN ('unverified', 'supported', 'disputed',
                               'poison_suspect', 'poison_likely', 'poison_confirmed', 'poison_refuted')),
    confidence_milli         INTEGER NOT NULL CHECK (confidence_milli BETWEEN 0 AND 1000),
    basis                    TEXT NOT NULL CHECK (basis IN ('classifier', 'explicit')),
    live_content_hash        TEXT NOT NULL,
    authority_event_id       TEXT NOT NULL UNIQUE REFERENCES events (event_id),
    authority_mutation_hash  TEXT NOT NULL,
    prev_classification_hash TEXT,
    classification_hash      TEXT NOT NULL UNIQUE,
    created_at               INTEGER NOT NULL
) STRICT;
CREATE INDEX memory_classifications_memory ON memory_classifications (memory_id);

-- The classifier's cluster index: each fingerprinted memory's leading-question fingerprint.
-- Derived from the memory's own text (the signed classification records the signals it used).
CREATE TABLE epistemic_fingerprints (
    memory_id    TEXT PRIMARY KEY REFERENCES memories (memory_id),
    company_id   TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    created_at   INTEGER NOT NULL
) STRICT;
CREATE INDEX epistemic_fingerprints_cluster ON epistemic_fingerprints (company_id, fingerprint);

CREATE TRIGGER memory_classifications_no_update BEFORE UPDATE ON memory_classifications
BEGIN SELECT RAISE(ABORT, 'aimos: classifications are append-only'); END;
CREATE TRIGGER memory_classifications_no_delete BEFORE DELETE ON memory_classifications
BEGIN SELECT RAISE(ABORT, 'aimos: classifications are append-only'); END;
CREATE TRIGGER epistemic_fingerprints_no_update BEFORE UPDATE ON epistemic_fingerprints
BEGIN SELECT RAISE(ABORT, 'aimos: fingerprints are append-only'); END;
CREATE TRIGGER epistemic_fingerprints_no_delete BEFORE DELETE ON epistemic_fingerprints
BEGIN SELECT RAISE(ABORT, 'aimos: fingerprints are append-only'); END;

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
END;

CREATE TRIGGER epistemic_fingerprints_verify_insert BEFORE INSERT ON epistemic_fingerprints
BEGIN
    SELECT RAISE(ABORT, 'aimos: a fingerprint belongs to a memory of the same company')
        WHERE NOT EXISTS (
            SELECT 1 FROM memories m WHERE m.memory_id = NEW.memory_id AND m.company_id = NEW.company_id);
END;

-- The live label joins the live weight as the only projections a memory row may change.
DROP TRIGGER memories_no_update;
CREATE TRIGGER memories_no_update BEFORE UPDATE ON memories
BEGIN
    SELECT RAISE(ABORT, 'aimos: memories are append-only; save a correction instead')
        WHERE NEW.memory_id IS NOT OLD.memory_id OR NEW.company_id IS NOT OLD.company_id
           OR NEW.key IS NOT OLD.key OR NEW.value IS NOT OLD.value OR NEW.scope IS NOT OLD.scope
           OR NEW.memory_type IS NOT OLD.memory_type OR NEW.clearance_level IS NOT OLD.clearance_level
           OR NEW.data_class IS NOT OLD.data_class OR NEW.source IS NOT OLD.source
           OR NEW.author_agent_id IS NOT OLD.author_agent_id
           OR NEW.author_valid_from IS NOT OLD.author_valid_from OR NEW.created_at IS NOT OLD.created_at
           OR NEW.live_content_hash IS NOT OLD.live_content_hash
           OR NEW.save_provenance_id IS NOT OLD.save_provenance_id
           OR NEW.save_mutation_hash IS NOT OLD.save_mutation_hash
           OR NEW.quarantine IS NOT OLD.quarantine;
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
