-- aimos-migration: rebuilds-table
-- (the runner applies this migration with foreign keys off and the legacy ALTER TABLE rename, as
-- SQLite's procedure for changing a table's constraints requires, and checks every foreign key
-- before it commits: aimos/store/connection.py)
--
-- aimos brain schema, migration 21: two memories may hold the same content (issue 39).
--
-- A brain synced through a hub is written on several devices: two of them may save the same text
-- while offline, each a memory of its own (its own signed save, author, time and id). Both are
-- retained rows, so every device must be able to hold both; the content hash stays indexed (a
-- save on one device still records an occurrence of a memory already there, the oldest of the
-- twins) but is no longer unique. Every row keeps its rowid, so the seals, the search indexes and
-- every hash stay as they were; the memories' indexes and triggers are made again as they were.

CREATE TABLE memories_twinned (
    memory_id               TEXT PRIMARY KEY,
    company_id              TEXT NOT NULL,
    key                     TEXT,
    value                   TEXT NOT NULL,
    scope                   TEXT NOT NULL,
    memory_type             TEXT NOT NULL,
    clearance_level         INTEGER NOT NULL CHECK (clearance_level BETWEEN 0 AND 12),
    data_class              TEXT NOT NULL
        CHECK (data_class IN ('public', 'internal', 'confidential', 'restricted')),
    source                  TEXT NOT NULL,
    author_agent_id         TEXT NOT NULL,
    author_valid_from       INTEGER NOT NULL,
    created_at              INTEGER NOT NULL,
    live_content_hash       TEXT NOT NULL,
    save_provenance_id      TEXT NOT NULL UNIQUE REFERENCES memory_provenance (provenance_id),
    save_mutation_hash      TEXT NOT NULL UNIQUE,
    quarantine              INTEGER NOT NULL CHECK (quarantine IN (0, 1)),
    retrieval_weight_milli  INTEGER NOT NULL CHECK (retrieval_weight_milli BETWEEN 100 AND 3000),
    epistemic_label         TEXT NOT NULL
) STRICT;

INSERT INTO memories_twinned (rowid, memory_id, company_id, key, value, scope, memory_type, clearance_level, data_class, source, author_agent_id, author_valid_from, created_at, live_content_hash, save_provenance_id, save_mutation_hash, quarantine, retrieval_weight_milli, epistemic_label)
    SELECT rowid, memory_id, company_id, key, value, scope, memory_type, clearance_level, data_class, source, author_agent_id, author_valid_from, created_at, live_content_hash, save_provenance_id, save_mutation_hash, quarantine, retrieval_weight_milli, epistemic_label FROM memories;

DROP TABLE memories;

ALTER TABLE memories_twinned RENAME TO memories;

CREATE INDEX memories_content ON memories (company_id, live_content_hash);

CREATE INDEX memories_created ON memories (company_id, created_at);

CREATE INDEX memories_source_order ON memories (company_id, source, memory_type);

CREATE TRIGGER memories_index_insert AFTER INSERT ON memories
BEGIN
    INSERT INTO memory_fts (rowid, text)
    VALUES (NEW.rowid, aimos_index_text(COALESCE(NEW.key, '') || ' ' || NEW.value));
    -- a turn's context: the two turns saved before it from the same source, and itself
    INSERT INTO memory_context_fts (rowid, text)
    SELECT NEW.rowid, aimos_index_text(context) FROM (
        SELECT group_concat(t, ' ') AS context FROM (
            SELECT COALESCE(key, '') || ' ' || value AS t FROM memories
            WHERE company_id = NEW.company_id AND source = NEW.source AND memory_type = NEW.memory_type
              AND rowid <= NEW.rowid
            ORDER BY rowid DESC LIMIT 3))
    WHERE NEW.memory_type IN ('dialog_turn', 'message');
    -- the previous turn's context now starts with the new one
    DELETE FROM memory_context_fts
    WHERE NEW.memory_type IN ('dialog_turn', 'message') AND rowid = (
        SELECT rowid FROM memories
        WHERE company_id = NEW.company_id AND source = NEW.source AND memory_type = NEW.memory_type
          AND rowid < NEW.rowid
        ORDER BY rowid DESC LIMIT 1);
    INSERT INTO memory_context_fts (rowid, text)
    SELECT p.rowid, aimos_index_text((
        SELECT group_concat(t, ' ') FROM (
            SELECT COALESCE(key, '') || ' ' || value AS t FROM memories
            WHERE company_id = NEW.company_id AND source = NEW.source AND memory_type = NEW.memory_type
              AND rowid <= NEW.rowid
            ORDER BY rowid DESC LIMIT 4)))
    FROM (SELECT rowid FROM memories
          WHERE company_id = NEW.company_id AND source = NEW.source AND memory_type = NEW.memory_type
            AND rowid < NEW.rowid
          ORDER BY rowid DESC LIMIT 1) p
    WHERE NEW.memory_type IN ('dialog_turn', 'message');
END;

CREATE TRIGGER memories_no_delete BEFORE DELETE ON memories
BEGIN SELECT RAISE(ABORT, 'aimos: memories are never deleted; only the purge ceremony removes a brain'); END;

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

CREATE TRIGGER memories_queue_detection AFTER INSERT ON memories
WHEN NEW.scope IS NOT 'system' AND NEW.memory_type NOT IN ('dialog_turn', 'message')
BEGIN
    INSERT INTO detection_queue (memory_id) VALUES (NEW.memory_id);
END;

CREATE TRIGGER memories_seal_aware BEFORE INSERT ON memories
BEGIN SELECT RAISE(ABORT, 'aimos: this aimos predates seals; restart it') WHERE aimos_seal_aware() IS NOT 1; END;

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
