-- aimos brain schema, migration 2: the recall indexes and recall receipts.
--
-- The FTS5 tables are derived indexes of the memories table, never a second source of truth:
-- contentless (they hold no text), maintained by the triggers below in the same transaction
-- as the memory row, and rebuilt from the memories table by `aimos index rebuild`.
--   memory_fts          the memory's own key and value (the precise channel)
--   memory_context_fts  for conversation turns (memory_type dialog_turn or message), the turn
--                       with its neighbours of the same source, type and company: two saved
--                       before it and one after (the contextual channel), so a conversation
--                       saved turn by turn is searchable by what was said around each turn.
--                       Other memories are not in it: recall counts their own text instead.

CREATE VIRTUAL TABLE memory_fts USING fts5(
    text, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE memory_context_fts USING fts5(
    text, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2'
);

-- document frequencies of indexed terms, to leave out query terms that nearly every memory has
CREATE VIRTUAL TABLE memory_fts_vocab USING fts5vocab(memory_fts, 'row');

CREATE INDEX memories_source_order ON memories (company_id, source, memory_type);

-- which signed save supersedes a memory (disclosure checks the link table against it)
CREATE INDEX memory_provenance_supersedes ON memory_provenance (json_extract(body_json, '$.supersedes'))
    WHERE json_extract(body_json, '$.supersedes') IS NOT NULL;

CREATE TRIGGER memories_index_insert AFTER INSERT ON memories
BEGIN
    INSERT INTO memory_fts (rowid, text) VALUES (NEW.rowid, COALESCE(NEW.key, '') || ' ' || NEW.value);
    -- a turn's context: the two turns saved before it from the same source, and itself
    INSERT INTO memory_context_fts (rowid, text)
    SELECT NEW.rowid, context FROM (
        SELECT group_concat(t, ' ') AS context FROM (
            SELECT COALESCE(key, '') || ' ' || value AS t FROM memories
            WHERE company_id = NEW.company_id AND source = NEW.source AND memory_type = NEW.memory_type
              AND rowid <= NEW.rowid
            ORDER BY rowid DESC LIMIT 3))
    WHERE NEW.memory_type IN ('dialog_turn', 'message');
    -- the previous turn's context now ends with the new one
    DELETE FROM memory_context_fts
    WHERE NEW.memory_type IN ('dialog_turn', 'message') AND rowid = (
        SELECT rowid FROM memories
        WHERE company_id = NEW.company_id AND source = NEW.source AND memory_type = NEW.memory_type
          AND rowid < NEW.rowid
        ORDER BY rowid DESC LIMIT 1);
    INSERT INTO memory_context_fts (rowid, text)
    SELECT p.rowid, (
        SELECT group_concat(t, ' ') FROM (
            SELECT COALESCE(key, '') || ' ' || value AS t FROM memories
            WHERE company_id = NEW.company_id AND source = NEW.source AND memory_type = NEW.memory_type
              AND rowid <= NEW.rowid
            ORDER BY rowid DESC LIMIT 4))
    FROM (SELECT rowid FROM memories
          WHERE company_id = NEW.company_id AND source = NEW.source AND memory_type = NEW.memory_type
            AND rowid < NEW.rowid
          ORDER BY rowid DESC LIMIT 1) p
    WHERE NEW.memory_type IN ('dialog_turn', 'message');
END;

CREATE TABLE recall_receipts (
    receipt_id            TEXT PRIMARY KEY,
    company_id            TEXT NOT NULL,
    agent_id              TEXT NOT NULL,
    agent_valid_from      INTEGER NOT NULL,
    request_body          TEXT NOT NULL,
    request_hash          TEXT NOT NULL,
    request_nonce         TEXT NOT NULL,
    request_ts            INTEGER NOT NULL,
    request_signature_b64u TEXT NOT NULL,
    command               TEXT NOT NULL,
    command_hash          TEXT NOT NULL,
    grant_mutation_hash   TEXT NOT NULL,
    merkle_root           TEXT NOT NULL,
    result_count          INTEGER NOT NULL,
    evidence              TEXT NOT NULL,
    decision              TEXT NOT NULL,
    decision_sha256       TEXT NOT NULL,
    event_id              TEXT NOT NULL UNIQUE REFERENCES events (event_id),
    created_at            INTEGER NOT NULL,
    FOREIGN KEY (agent_id, agent_valid_from) REFERENCES identity_epochs (agent_id, valid_from)
) STRICT;
CREATE INDEX recall_receipts_created ON recall_receipts (created_at);

CREATE TRIGGER recall_receipts_no_update BEFORE UPDATE ON recall_receipts
BEGIN SELECT RAISE(ABORT, 'aimos: recall_receipts is append-only'); END;
CREATE TRIGGER recall_receipts_no_delete BEFORE DELETE ON recall_receipts
BEGIN SELECT RAISE(ABORT, 'aimos: recall_receipts is append-only'); END;
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
              AND json_extract(e.signed_body, '$.metadata.receipt_id') = NEW.receipt_id
              AND json_extract(e.signed_body, '$.metadata.merkle_root') = NEW.merkle_root
              AND json_extract(e.signed_body, '$.metadata.request_hash') = NEW.request_hash
              AND json_extract(e.signed_body, '$.metadata.command_hash') = NEW.command_hash
              AND json_extract(e.signed_body, '$.metadata.grant_mutation_hash') = NEW.grant_mutation_hash
              AND json_extract(e.signed_body, '$.metadata.result_count') = NEW.result_count
              AND json_extract(e.signed_body, '$.metadata.decision_sha256') = NEW.decision_sha256);
    SELECT RAISE(ABORT, 'aimos: receipt Merkle root or command hash does not recompute')
        WHERE aimos_merkle_root(NEW.evidence) IS NOT NEW.merkle_root
           OR aimos_sha256_hex(NEW.command) IS NOT NEW.command_hash
           OR aimos_is_canonical(NEW.command) IS NOT 1;
END;
