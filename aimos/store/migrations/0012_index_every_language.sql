-- aimos brain schema, migration 12: the search indexes read every language.
--
-- Until now the indexes held what FTS5's unicode61 tokenizer made of a memory's text, which fails
-- three kinds of writing (aimos/store/words.py says how, with examples):
--   - scripts written without spaces (Chinese, Japanese, Thai, ...) and Korean: a whole clause was
--     one token, so `東京` did not find `東京タワー`;
--   - marks inside words: unicode61 split `हिन्दी` and `กัน` at their vowel signs, and left Greek,
--     Arabic and Hebrew accents unfolded;
--   - case beyond lowercase: `HAUPTSTRASSE` did not find `Hauptstraße`.
-- Now both indexes hold aimos_index_text(text) (aimos.store.words.index_text: NFKC, those accents
-- folded, casefolded, each no-space run as its bigrams in place and its single characters after
-- the whole text), tokenized with marks as word characters. ASCII text indexes exactly as before.
--
-- The indexes are derived (migration 2): they are dropped, re-created with the new tokenizer and
-- refilled from the memories table here, in this migration's transaction, with the texts the
-- insert trigger below writes and `aimos index rebuild` (aimos.recall.candidates.rebuild_indexes)
-- makes. A turn's context is the next turn, itself and the two before it from the same company,
-- source and type, newest first. Nothing signed, sealed or exported changes.

DROP TRIGGER memories_index_insert;
DROP TABLE memory_fts_vocab;
DROP TABLE memory_fts;
DROP TABLE memory_context_fts;

CREATE VIRTUAL TABLE memory_fts USING fts5(
    text, content = '', contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2 categories ''L* N* Co M*'''
);
CREATE VIRTUAL TABLE memory_context_fts USING fts5(
    text, content = '', contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2 categories ''L* N* Co M*'''
);
CREATE VIRTUAL TABLE memory_fts_vocab USING fts5vocab(memory_fts, 'row');

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

INSERT INTO memory_fts (rowid, text)
SELECT rowid, aimos_index_text(COALESCE(key, '') || ' ' || value) FROM memories;

-- each turn's context in one pass: ordered newest first, the frame is the next turn (1 preceding),
-- the turn itself and the two before it (2 following); group_concat joins a frame in its order
INSERT INTO memory_context_fts (rowid, text)
SELECT rowid, aimos_index_text(context) FROM (
    SELECT rowid, group_concat(t, ' ') OVER (
        PARTITION BY company_id, source, memory_type ORDER BY rowid DESC
        ROWS BETWEEN 1 PRECEDING AND 2 FOLLOWING) AS context
    FROM (SELECT rowid, company_id, source, memory_type, COALESCE(key, '') || ' ' || value AS t
          FROM memories WHERE memory_type IN ('dialog_turn', 'message')));
